"""pymoveit2 (the pinned version, unchanged, in a process of its own) moves the Panda through kinematics_node
with simulate_controllers: the node reads moveit_resources' moveit_controllers.yaml and initial_positions.yaml
unchanged, serves panda_arm_controller/follow_joint_trajectory itself and publishes joint_states.

Properties: move_to_configuration + wait_until_executed ends with joint_states at the goal (1e-3 rad), through
execute_trajectory and through move_action (use_move_group_action=True), each motion starting where the last
ended; cancel_execution mid-motion stops the arm short of the goal, where it stays, and wait_until_executed answers
False.
"""
from __future__ import annotations

import json

import numpy as np
import pytest
import yaml
from node_harness import PROCESSES, REPO, module_processes, serving_node  # noqa: F401 (fixture)

from kinematics_py.robots import bundled_robot_path

PANDA_CONFIG = REPO / "test" / "data" / "moveit_resources" / "panda_moveit_config" / "config"
MOVER = PROCESSES / "pymoveit2_mover.py"
INITIAL = [0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785]  # initial_positions.yaml
GOALS = ([0.6, -0.4, 0.3, -2.0, 0.2, 1.9, 0.4], [-0.5, -0.2, -0.3, -2.3, -0.2, 2.2, 1.0])
AT_GOAL = 1e-3
RUN_TIMEOUT_S = 300.0


def panda_parameters() -> dict:
    return {"robot_description": bundled_robot_path("panda").read_text(),
            "robot_description_semantic": bundled_robot_path("panda", "srdf").read_text(),
            **yaml.safe_load((PANDA_CONFIG / "moveit_controllers.yaml").read_text()),
            **yaml.safe_load((PANDA_CONFIG / "initial_positions.yaml").read_text()),
            "simulate_controllers": True}


@pytest.fixture(scope="module")
def node(module_processes, tmp_path_factory):  # noqa: F811
    with serving_node(module_processes, tmp_path_factory.mktemp("pymoveit2_execution"), panda_parameters(),
                      "simulating_node", tip="panda_link8") as node:
        yield node


def move(processes, node, goal, *options: str) -> dict:
    run = processes.run(MOVER, "--goal", *map(str, goal), *options, "--ros-args", "-r", f"__ns:={node.namespace}",
                        name="pymoveit2_mover", timeout=RUN_TIMEOUT_S)
    assert run.popen.returncode == 0, run.output()
    steps = {}
    for line in run.stdout().splitlines():
        what, _, value = line.partition(": ")
        steps[what] = json.loads(value)
    return steps


def test_the_arm_starts_at_the_initial_positions(module_processes, node):  # noqa: F811
    """The module's first motion: the simulated joints start at initial_positions.yaml's values."""
    steps = move(module_processes, node, GOALS[0])
    np.testing.assert_allclose(steps["start"], INITIAL, atol=1e-12)
    assert steps["executed"] is True, steps
    np.testing.assert_allclose(steps["final"], GOALS[0], atol=AT_GOAL)


@pytest.mark.parametrize("options", [(), ("--move-group-action",)], ids=["execute_trajectory", "move_action"])
def test_move_to_configuration_ends_at_the_goal(module_processes, node, options):  # noqa: F811
    """Each motion starts where the last one ended."""
    last = None
    for goal in (GOALS[1], GOALS[0], INITIAL):
        steps = move(module_processes, node, goal, *options)
        if last is not None:
            np.testing.assert_allclose(steps["start"], last, atol=1e-9)
        assert steps["executed"] is True, steps
        np.testing.assert_allclose(steps["final"], goal, atol=AT_GOAL)
        np.testing.assert_allclose(steps["final again"], steps["final"], atol=1e-9)
        last = steps["final"]


@pytest.mark.parametrize("options", [(), ("--move-group-action",)], ids=["execute_trajectory", "move_action"])
def test_cancel_execution_stops_the_arm_short_of_the_goal(module_processes, node, options):  # noqa: F811
    start_goal = GOALS[0]
    move(module_processes, node, start_goal, *options)
    steps = move(module_processes, node, GOALS[1], "--cancel-after", "0.3", *options)
    assert steps["executed"] is False, steps
    start, final, goal = (np.array(steps["start"]), np.array(steps["final"]), np.array(GOALS[1]))
    assert np.max(np.abs(final - start)) > 0.01, "the arm moved"
    assert np.max(np.abs(final - goal)) > 0.05, "and stopped short of the goal"
    np.testing.assert_allclose(steps["final again"], final, atol=1e-9, err_msg="where it stays")
