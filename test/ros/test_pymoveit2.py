"""pymoveit2 (the Python MoveIt client, from PyPI: requirements/test.txt) works unchanged against kinematics_node.

examples/with_pymoveit2.py, the script docs/moveit.md shows, runs in its own process against the node in
another, over DDS: compute_fk, compute_ik, add_collision_box / sphere / cylinder / mesh (a pose and no
primitive_poses, as pymoveit2 sends them), attach and detach, allow_collisions, clear_all_collision_objects and
a Cartesian plan, then plan() to a joint goal and to a pose goal around a box (plan_kinematic_path); after each
call it reports what the node's get_planning_scene or check_state_validity shows, and the planned trajectories,
checked here at 0.01 rad steps against the same box by this process's own collision checker.
"""
from __future__ import annotations

import json

import numpy as np
from node_harness import (
    REPO,
    module_processes,  # noqa: F401 (fixture)
    serving_node,
    ur5_parameters,
)

from kinematics_py.collision.checker import CollisionChecker
from kinematics_py.collision.geometry import Box
from kinematics_py.geometry.transforms import make_transform
from kinematics_py.model.robot_model import RobotModel
from kinematics_py.model.srdf import SemanticModel
from kinematics_py.planning.path_check import PathCheck, densify
from kinematics_py.robots import bundled_robot_path

EXAMPLE = REPO / "examples" / "with_pymoveit2.py"
MODEL = RobotModel.from_urdf_string(bundled_robot_path("ur5").read_text())
JOINTS = ("shoulder_pan_joint", "shoulder_lift_joint", "elbow_joint", "wrist_1_joint", "wrist_2_joint",
          "wrist_3_joint")
START = dict(zip(JOINTS, (0.3, -1.2, 1.5, -1.9, -1.57, 0.0)))  # as in the example
GOAL = (-1.5, -1.2, 1.5, -1.9, -1.57, 0.0)
BOX_SIZE = 0.15
RUN_TIMEOUT_S = 300.0


def reported(output: str) -> dict[str, object]:
    """The example's ``<what>: <JSON>`` lines."""
    steps = {}
    for line in output.splitlines():
        what, _, value = line.partition(": ")
        if value:
            steps[what] = json.loads(value)
    return steps


def test_pymoveit2_example_runs_unchanged_against_the_node(module_processes, tmp_path):  # noqa: F811
    with serving_node(module_processes, tmp_path, ur5_parameters(), "pymoveit2_node") as node:
        run = module_processes.run(EXAMPLE, "--ros-args", "-r", f"__ns:={node.namespace}", name="with_pymoveit2",
                                   timeout=RUN_TIMEOUT_S)
    assert run.popen.returncode == 0, run.output()
    steps = reported(run.stdout())

    tool = MODEL.link_poses(START)["tool0"][:3, 3]
    assert np.allclose(steps["fk tool0"], tool, atol=1e-6), run.output()
    solution = MODEL.link_poses({name: steps["ik"][name] for name in JOINTS})["tool0"][:3, 3]
    assert np.allclose(solution, tool, atol=1e-4), run.output()

    objects = ["ball", "obstacle", "post", "rock", "table"]
    assert steps["world"] == objects, "a box, sphere, cylinder and mesh with a pose and no primitive_poses"
    assert steps["start valid with the obstacle"] is False, "the obstacle (a box around the tool) collides"
    assert steps["attached"] == ["obstacle"]
    assert steps["world after attach"] == ["ball", "post", "rock", "table"]
    assert steps["world after detach"] == objects
    assert steps["start valid with collisions allowed"] is True
    assert steps["world after clear"] == []
    assert steps["cartesian points"] > 1

    checker = CollisionChecker(MODEL, SemanticModel.from_srdf_string(bundled_robot_path("ur5", "srdf").read_text(),
                                                                     MODEL))
    checker.scene.add_object("box", [Box((BOX_SIZE,) * 3)], pose=make_transform(None, steps["box"]))
    check = PathCheck(checker, JOINTS)
    assert not check.segment_free(np.array(list(START.values())), np.array(GOAL)), "the straight motion hits the box"
    joint_plan, pose_plan = np.array(steps["joint goal plan"]), np.array(steps["pose goal plan"])
    assert len(joint_plan) > 2 and len(pose_plan) > 1, run.output()
    np.testing.assert_allclose(joint_plan[0], list(START.values()), atol=1e-9)
    np.testing.assert_allclose(joint_plan[-1], GOAL, atol=1e-3)
    reached = MODEL.link_poses(dict(zip(JOINTS, pose_plan[-1])))["tool0"]
    np.testing.assert_allclose(reached[:3, 3], steps["pose goal"][:3], atol=1e-3)
    for trajectory in (joint_plan, pose_plan):
        assert check.first_invalid(densify(trajectory, 0.01)) < 0
