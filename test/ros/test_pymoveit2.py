"""pymoveit2 (the Python MoveIt client, from PyPI: requirements/test.txt) works unchanged against kinematics_node.

examples/with_pymoveit2.py, the script docs/moveit.md shows, runs in its own process against the node in
another, over DDS: compute_fk, compute_ik, add_collision_box / sphere / cylinder / mesh (a pose and no
primitive_poses, as pymoveit2 sends them), attach and detach, allow_collisions, clear_all_collision_objects and
a Cartesian plan; after each call it reports what the node's get_planning_scene or check_state_validity shows.
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

from kinematics_py.model.robot_model import RobotModel
from kinematics_py.robots import bundled_robot_path

EXAMPLE = REPO / "examples" / "with_pymoveit2.py"
MODEL = RobotModel.from_urdf_string(bundled_robot_path("ur5").read_text())
JOINTS = ("shoulder_pan_joint", "shoulder_lift_joint", "elbow_joint", "wrist_1_joint", "wrist_2_joint",
          "wrist_3_joint")
START = dict(zip(JOINTS, (0.3, -1.2, 1.5, -1.9, -1.57, 0.0)))  # as in the example
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
