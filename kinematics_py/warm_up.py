"""Compile every numba kernel ahead, so the node's first start takes seconds instead of the compile's tens.

    python -m kinematics_py.warm_up

numba compiles a kernel on its first call and caches it on disk (``compiled.py``); the first start after an
install or an edit would pay for all of them. This builds the robot set-up of each bundled robot (UR5 and
Panda) as the node does and runs each kind of request once: FK and Jacobians, IK of every group (single and
batch, with and without collision avoidance), and collision checks with contacts, also against a world
object. ``scripts/setup_venv.sh`` runs it whenever the package's sources change.
"""
from __future__ import annotations

import sys
import time

import numpy as np

from .collision.geometry import Box
from .collision.scene import PlanningScene
from .geometry.poses import Pose
from .robot_setup import SetupInputs, build_robot_setup
from .robots import BUNDLED_ROBOTS, bundled_robot_path

#: IK time budget of each warm-up call [s]: enough to reach every kernel once.
TIMEOUT_S = 0.05


def warm_up_robot(robot: str) -> list[str]:
    """Run every kind of computation once on a bundled robot; returns one line per group for the log."""
    inputs = SetupInputs(urdf=bundled_robot_path(robot).read_text(encoding="utf-8"),
                         srdf=bundled_robot_path(robot, "srdf").read_text(encoding="utf-8"))
    setup = build_robot_setup(inputs)
    model, checker = setup.model, setup.collision.checker
    state = model.resolve_joint_values({})
    model.link_poses(state)
    checkers = []
    if checker is not None:
        scene = PlanningScene(model)
        scene.add_object("warm_up_box", [Box((0.2, 0.2, 0.2))], Pose((0.3, 0.0, 0.3), (0.0, 0.0, 0.0, 1.0)))
        checkers = [checker, checker.for_scene(scene)]
        for each in checkers:
            each.check(state, contacts=True)
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
        lines.append(f"{robot}/{name}: FK {'ok' if ok else 'failed'}, IK "
                     f"{', '.join(result.error_code.name for result in results)}")
    return lines


def main() -> int:
    start = time.perf_counter()
    for robot in BUNDLED_ROBOTS:
        for line in warm_up_robot(robot):
            print(line)
    print(f"numba kernels compiled and cached in {time.perf_counter() - start:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
