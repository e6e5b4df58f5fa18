"""pymoveit2 (the pinned version, unchanged, in a process of its own: examples/move_with_pymoveit2.py) moves the
Panda through kinematics_node with simulate_controllers: the node reads moveit_resources' moveit_controllers.yaml
and initial_positions.yaml unchanged, serves panda_arm_controller/follow_joint_trajectory itself and publishes
joint_states.

Properties: move_to_configuration + wait_until_executed ends with joint_states at the goal (1e-3 rad), through
execute_trajectory and through move_action (use_move_group_action=True), each motion starting where the last
ended; cancel_execution mid-motion stops the arm short of the goal, where it stays, and wait_until_executed answers
False; an object added on the path mid-motion stops the arm short of it
(MOTION_PLAN_INVALIDATED_BY_ENVIRONMENT_CHANGE), and move_action with replan goes around it to the goal.
"""
from __future__ import annotations

import json
import time

import numpy as np
import pytest
import yaml
from moveit_msgs.action import ExecuteTrajectory, MoveGroup
from moveit_msgs.msg import CollisionObject, MoveItErrorCodes, PlanningSceneComponents
from moveit_msgs.srv import GetPlanningScene
from node_harness import (
    REPO,
    accepted_goal,
    goal_result,
    module_processes,  # noqa: F401 (fixture)
    serving_node,
    wait_at_rest,
    wait_for,
)
from rclpy.action import ActionClient
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from kinematics_py.collision.checker import CollisionChecker
from kinematics_py.collision.geometry import Box
from kinematics_py.geometry.transforms import make_transform
from kinematics_py.model.robot_model import RobotModel
from kinematics_py.model.srdf import SemanticModel
from kinematics_py.planning.path_check import PathCheck, densify
from kinematics_py.robots import bundled_robot_path
from kinematics_py.ros.demo.client import box_object, joint_goal, motion_plan_request
from kinematics_py.ros.messages.joint_trajectory import duration_msg

PANDA_CONFIG = REPO / "test" / "data" / "moveit_resources" / "panda_moveit_config" / "config"
MOVER = REPO / "examples" / "move_with_pymoveit2.py"
INITIAL = [0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785]  # initial_positions.yaml
GOALS = ([0.6, -0.4, 0.3, -2.0, 0.2, 1.9, 0.4], [-0.5, -0.2, -0.3, -2.3, -0.2, 2.2, 1.0])
AT_GOAL = 1e-3
MODEL = RobotModel.from_urdf_string(bundled_robot_path("panda").read_text())
JOINTS = tuple(f"panda_joint{i}" for i in range(1, 8))
BOX_SIZE = 0.1
SCENE_QOS = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.VOLATILE)
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
    # at a tenth of the joints' speed the motion lasts seconds: the cancel arrives mid-motion however busy the machine
    steps = move(module_processes, node, GOALS[1], "--cancel-after", "0.3", "--max-velocity", "0.1", *options)
    assert steps["executed"] is False, steps
    start, final, goal = (np.array(steps["start"]), np.array(steps["final"]), np.array(GOALS[1]))
    assert np.max(np.abs(final - start)) > 0.01, "the arm moved"
    assert np.max(np.abs(final - goal)) > 0.05, "and stopped short of the goal"
    np.testing.assert_allclose(steps["final again"], final, atol=1e-9, err_msg="where it stays")


def test_an_object_added_on_the_path_stops_the_arm_short_of_it(node):
    """Beyond move_group's default: mid-motion, a box appears where the tool will be at 3/4 of a 4 s motion; the
    goal ends MOTION_PLAN_INVALIDATED_BY_ENVIRONMENT_CHANGE and the arm stands short of the box, clear of it."""
    client = node.client
    executing, objects, start = acting(node, ExecuteTrajectory, "execute_trajectory")
    goal = start.copy()
    goal[0] += 1.2
    box_at = MODEL.link_poses(dict(zip(JOINTS, start + 0.75 * (goal - start))))["panda_hand"][:3, 3]
    checker = panda_checker()
    path = PathCheck(checker, JOINTS)
    assert path.first_invalid(densify(np.array([start, goal]), 0.01)) < 0, "free before the box"
    goal_msg = ExecuteTrajectory.Goal()
    goal_msg.trajectory.joint_trajectory = JointTrajectory(joint_names=list(JOINTS), points=[
        JointTrajectoryPoint(positions=list(q), time_from_start=duration_msg(t))
        for t, q in ((0.0, start), (4.0, goal))])
    handle = accepted_goal(client, executing, goal_msg, [], 30.0)
    time.sleep(0.5)
    objects.publish(box_object("in_the_way", BOX_SIZE, make_transform(None, box_at), "panda_link0"))
    code = goal_result(client, handle, 30.0)[1].error_code
    assert code.val == MoveItErrorCodes.MOTION_PLAN_INVALIDATED_BY_ENVIRONMENT_CHANGE, code.message
    assert "in_the_way" in code.message, code.message
    stopped = wait_at_rest(lambda: current_positions(node), 30.0, "the arm at rest")
    assert 0.05 < stopped[0] - start[0] < 0.75 * 1.2, stopped - start
    checker.scene.add_object("in_the_way", [Box((BOX_SIZE,) * 3)], pose=make_transform(None, box_at))
    assert PathCheck(checker, JOINTS).first_invalid(densify(np.array([start, stopped]), 0.01)) < 0, "short of it"
    objects.publish(CollisionObject(id="in_the_way", operation=CollisionObject.REMOVE))


def acting(node, action_type, action: str):
    """(a client of the node's ``action``, a publisher of its collision_object topic, the arm's joints now), both
    matched."""
    client = node.client
    actions = ActionClient(client.node, action_type, f"{node.namespace}/{action}")
    objects = client.node.create_publisher(CollisionObject, f"{node.namespace}/collision_object", SCENE_QOS)
    assert actions.wait_for_server(timeout_sec=30.0)
    wait_for(lambda: objects.get_subscription_count() > 0 or client.spin_once(0.05), 30.0, "the scene topic")
    return actions, objects, current_positions(node)


def panda_checker() -> CollisionChecker:
    return CollisionChecker(MODEL, SemanticModel.from_srdf_string(bundled_robot_path("panda", "srdf").read_text(),
                                                                  MODEL))


def current_positions(node) -> np.ndarray:
    request = GetPlanningScene.Request()
    request.components.components = PlanningSceneComponents.ROBOT_STATE
    state = node.client.call(node.client.client(GetPlanningScene, f"{node.namespace}/get_planning_scene"), request,
                             30.0).scene.robot_state.joint_state
    values = dict(zip(state.name, state.position))
    return np.array([values[joint] for joint in JOINTS])


def test_move_action_with_replan_goes_around_an_object_added_on_its_path(node):
    """MoveGroup's replan: the motion stopped by a box added on its path is planned again from where the arm
    stopped, around the box, and ends at the goal."""
    client = node.client
    moving, objects, start = acting(node, MoveGroup, "move_action")
    goal = start.copy()
    goal[0] += 2.0 if start[0] < 0.5 else -2.0
    box_at = MODEL.link_poses(dict(zip(JOINTS, start + 0.5 * (goal - start))))["panda_hand"][:3, 3]
    checker = panda_checker()
    checker.scene.add_object("replanned_around", [Box((BOX_SIZE,) * 3)], pose=make_transform(None, box_at))
    check = PathCheck(checker, JOINTS)
    assert check.state_free(goal) and check.first_invalid(densify(np.array([start, goal]), 0.01)) >= 0
    request = motion_plan_request("panda_arm", [joint_goal(dict(zip(JOINTS, goal)))], {}).motion_plan_request
    request.max_velocity_scaling_factor = 0.1
    move_goal = MoveGroup.Goal(request=request)
    move_goal.planning_options.replan, move_goal.planning_options.replan_attempts = True, 3
    move_goal.planning_options.replan_delay = 0.1
    handle = accepted_goal(client, moving, move_goal, [], 30.0)
    wait_for(lambda: np.max(np.abs(current_positions(node) - start)) > 0.02, 60.0, "the arm to move")
    objects.publish(box_object("replanned_around", BOX_SIZE, make_transform(None, box_at), "panda_link0"))
    outcome = goal_result(client, handle, 120.0)[1]
    objects.publish(CollisionObject(id="replanned_around", operation=CollisionObject.REMOVE))
    assert outcome.error_code.val == MoveItErrorCodes.SUCCESS, outcome.error_code.message
    assert "attempt 2 of 3" in outcome.error_code.message, outcome.error_code.message
    np.testing.assert_allclose(current_positions(node), goal, atol=AT_GOAL)
    executed = np.array([p.positions for p in outcome.executed_trajectory.joint_trajectory.points])
    assert check.first_invalid(densify(executed, 0.01)) < 0, "around the box"
