"""Compile every numba kernel ahead, so the node's first start takes seconds instead of the compile's tens.

    python -m kinematics_py.warm_up

numba compiles a kernel on its first call, for the types of its arguments, and caches it on disk
(``compiled.py``); the first start after an install or an edit would pay for all of them, and a service's first
request for the kernels it alone reaches. This builds the robot set-up of each bundled robot (UR5 and Panda) as
the node does and runs each kind of computation the node's services run once: FK and Jacobians, IK of every
group (single and batch, with and without collision avoidance), collision checks with contacts (whole robot and
a group's links, against a world object the robot touches, and an octree), a collision-aware Cartesian
path, velocity IK (single and batch), a motion plan with the parts of planning a plan reaches only sometimes
(``planning.kernel_warm_up``), and the closed form of a calibrated arm (``_warm_up_near_ideal``). A kernel first
compiled inside a request costs seconds of its time: test/test_compiled.py checks that this compiles every kernel
that Python code calls.
``scripts/setup_venv.sh`` runs it whenever the package's sources change; test_node_first_calls.py checks that a
node's first calls then compile nothing.
"""
from __future__ import annotations

import sys
import time

import numpy as np

from .collision.geometry import Box
from .collision.octree import Octree
from .collision.scene import PlanningScene
from .geometry.poses import Pose, transform_from_any_pose
from .geometry.transforms import rotation_about_axis
from .ik.closed_form.classification import ChainGeometry, classify_chain, classify_geometry
from .ik.velocity import VelocityIKSolver
from .model.robot_model import joint_motion
from .planning.cartesian_path import compute_cartesian_path
from .planning.kernel_warm_up import warm_up_planning
from .robot_setup import SetupInputs, build_robot_setup
from .robots import BUNDLED_ROBOTS, bundled_robot_path

#: IK time budget of each warm-up call [s]: enough to reach every kernel once.
TIMEOUT_S = 0.05
#: How far the warm-up's calibrated arm turns its axes from its family's ideal: axis i by (i + 1) times this [rad].
CALIBRATION_TURN = 1e-4


def warm_up_robot(robot: str) -> list[str]:
    """Run every kind of computation once on a bundled robot; returns one line per group for the log."""
    inputs = SetupInputs(urdf=bundled_robot_path(robot).read_text(encoding="utf-8"),
                         srdf=bundled_robot_path(robot, "srdf").read_text(encoding="utf-8"))
    setup = build_robot_setup(inputs)
    model, checker = setup.model, setup.collision.checker
    state = model.resolve_joint_values({})
    model.link_poses(state)
    model.tree.link_poses_batch(np.array([model.state_vector(state)] * 2))
    for joint in model.description.joints:  # the description publisher's frames
        if joint.is_movable and joint.type != "fixed":
            joint_motion(joint, state[joint.name])
    rotation_about_axis(np.array([0.0, 0.0, 1.0]), 0.1)
    checkers = []
    if checker is not None:
        checkers = [checker, checker.for_scene(_touching_scene(model, checker, state))]
        for each in checkers:
            each.check(state, contacts=True)
            each.check(state, contacts=True, links=checker.link_geometry)
    rng = np.random.default_rng(0)
    lines = []
    for name, plugin in sorted(setup.groups.items()):
        joints = plugin.getJointNames()
        middle = [(model.joints[j].lower + model.joints[j].upper) / 2 for j in joints]
        ok, poses = plugin.getPositionFK(plugin.getTipFrames(), middle)
        targets = poses if len(poses) > 1 else poses[0]
        results = [plugin.searchPositionIK(targets, list(rng.uniform(-0.1, 0.1, len(joints)) + middle),
                                           timeout=TIMEOUT_S)]
        for each in checkers:
            plugin.setCollisionChecker(each)
            results.append(plugin.searchPositionIK(targets, middle, timeout=TIMEOUT_S, avoid_collisions=True))
        if len(poses) == 1:
            results += plugin.searchPositionIKBatch([poses[0]] * 2, [middle] * 2, max_starts=8)
            target = transform_from_any_pose(poses[0])
            target[2, 3] += 0.02
            for validity in [None] + [each.validity(joints, state) for each in checkers]:
                compute_cartesian_path(plugin, middle, [target], 0.01, validity=validity)
            if checker is not None:
                planned = warm_up_planning(plugin, checker, state, np.array(middle))
                results += [planned] if planned is not None else []
            _warm_up_near_ideal(plugin)
            velocity = VelocityIKSolver(plugin)
            velocity.cart_to_jnt(middle, np.full(6, 0.01))
            velocity.svd_result  # noqa: B018 (compiles the on-demand SVD)
            velocity.condition_number(middle)  # servo's singularity check
            velocity.cart_to_jnt_batch([middle] * 2, np.full((2, 6), 0.01))
        lines.append(f"{robot}/{name}: FK {'ok' if ok else 'failed'}, IK "
                     f"{', '.join(result.error_code.name for result in results)}")
    return lines


def _warm_up_near_ideal(plugin) -> None:
    """The closed form's search for the nearest ideal arm, which a calibrated arm (its axes a little off its
    family's) needs when its plugin starts: the group's chain, when it is of a family, with its axes turned."""
    model, base, tip = plugin.robot_model, plugin.getBaseFrame(), plugin.getTipFrames()[0]
    if classify_chain(model, base, tip) is None:
        return
    ideal = ChainGeometry.of_chain(model.chain(base, tip))
    axes = ideal.axes.copy()
    for i, axis in enumerate(axes):  # turned by different angles: parallel axes are no longer parallel
        axis += (i + 1) * CALIBRATION_TURN * np.cross(axis, [1.0, 0.0, 0.0] if abs(axis[0]) < 0.9 else [0.0, 1.0, 0.0])
        axis /= np.linalg.norm(axis)
    classify_geometry(ChainGeometry(axes, ideal.points.copy(), ideal.T_zero.copy()))


def _touching_scene(model, checker, state) -> PlanningScene:
    """A scene with a box around the last link with collision geometry (contacts are found) and an octree."""
    link = [name for name in model.link_names if name in checker.link_geometry][-1]
    centre = tuple(model.link_poses(state)[link][:3, 3])
    scene = PlanningScene(model)
    scene.add_object("warm_up_box", [Box((0.2, 0.2, 0.2))], Pose(centre, (0.0, 0.0, 0.0, 1.0)))
    voxels = Octree.from_points(np.array([[0.5, 0.5, 0.5], [0.6, 0.5, 0.5]]), 0.05)
    scene.set_octomap(Octree.from_stream(voxels.binary_stream(), True, voxels.resolution))
    return scene


def main() -> int:
    start = time.perf_counter()
    for robot in BUNDLED_ROBOTS:
        for line in warm_up_robot(robot):
            print(line)
    print(f"numba kernels compiled and cached in {time.perf_counter() - start:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
