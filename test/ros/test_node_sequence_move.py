"""sequence_move_group (moveit_msgs/action/MoveGroupSequence) over DDS, against the bundled UR5 with
simulate_controllers (the node serves the controller and publishes joint_states), as Pilz's MoveGroupSequenceAction
serves it: the sequence planned as plan_sequence_path plans it, then executed through the controllers.

Properties: with plan_only the one blended trajectory comes back and nothing is sent (the joints stay at the
start); a blended 4-item LIN sequence executes and joint_states end at its last point (1e-3 rad), the tool at the
last goal, feedback PLANNING then MONITOR; a refused sequence ends aborted with Pilz's code and reason, nothing sent;
a cancel mid-motion ends the goal canceled (PREEMPTED) and the arm stops short of the sequence's end, where it
stays.
"""
from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pytest
import yaml
from action_msgs.msg import GoalStatus
from moveit_msgs.action import MoveGroupSequence
from moveit_msgs.msg import MotionSequenceItem, MoveItErrorCodes, PlanningSceneComponents
from moveit_msgs.srv import GetPlanningScene
from node_harness import (
    CALL_TIMEOUT_S,
    UR5_GROUP,
    UR5_JOINTS,
    UR5_MODEL,
    NodeUnderTest,
    accepted_goal,
    goal_result,
    module_processes,  # noqa: F401 (fixture)
    serving_node,
    ur5_parameters,
    wait_at_rest,
    wait_for,
)
from rclpy.action import ActionClient

from kinematics_py.ros.demo.client import motion_plan_request, pose_goal

PILZ_LIMITS = yaml.safe_load((Path(__file__).parents[1] / "data" / "pilz" / "pilz_cartesian_limits.yaml").read_text())
START = dict(zip(UR5_JOINTS, (0.3, -1.2, 1.5, -1.9, -1.57, 0.0)))
#: A square's corners relative to the tool's pose where the sequence starts [m], and the blend radii [m].
SQUARE = ((0.12, 0.0, 0.0), (0.12, 0.12, 0.0), (0.0, 0.12, 0.0), (0.0, 0.12, 0.1))
RADII = (0.05, 0.05, 0.03, 0.0)
#: A sequence reachable both from START and from the square's end (the cancel's).
BACK = ((0.0, -0.12, 0.0), (-0.12, -0.12, 0.0), (-0.12, -0.12, -0.1))
BACK_RADII = (0.05, 0.03, 0.0)
#: The sequences' velocity scaling: the executed square's (about 2 s), and the cancelled one's (about 3.5 s).
SCALING, SLOW_SCALING = 0.3, 0.1
AT_GOAL = 1e-3
ON_LINE = 1e-4
RESULT_TIMEOUT_S = 120.0
#: How far the arm must have moved [rad] before the cancel (the motion is under way), and must be from the end.
UNDER_WAY = 0.02


class SequenceNode(NodeUnderTest):
    def __init__(self, process, namespace):
        super().__init__(process, namespace)
        self.sequence_client = ActionClient(self.node, MoveGroupSequence, f"{namespace}/sequence_move_group")
        self.server_before_use(self.sequence_client, "sequence_move_group")
        self.publisher_before_use(f"{namespace}/sequence_move_group/_action/feedback", "the feedback publisher")
        self.scene_client = self.client.client(GetPlanningScene, f"{namespace}/get_planning_scene")
        self.feedback: list[str] = []

    def send(self, goal: MoveGroupSequence.Goal):
        self.feedback = []
        return accepted_goal(self.client, self.sequence_client, goal, self.feedback, CALL_TIMEOUT_S)

    def result(self, handle):
        """(status, MotionSequenceResponse) of a goal once it ended."""
        status, result = goal_result(self.client, handle, RESULT_TIMEOUT_S)
        return status, result.response

    def current(self) -> np.ndarray:
        """The arm's joints as the node has them (get_planning_scene's robot state)."""
        request = GetPlanningScene.Request()
        request.components.components = PlanningSceneComponents.ROBOT_STATE
        state = self.client.call(self.scene_client, request, CALL_TIMEOUT_S).scene.robot_state.joint_state
        values = dict(zip(state.name, state.position))
        return np.array([values.get(joint, np.nan) for joint in UR5_JOINTS])


@pytest.fixture(scope="module")
def node(module_processes, tmp_path_factory):  # noqa: F811 (fixture)
    parameters = ur5_parameters(simulate_controllers=True, initial_positions=START, robot_description_planning={
        **PILZ_LIMITS, "joint_limits": {joint: {"has_acceleration_limits": True, "max_acceleration": 5.0}
                                        for joint in UR5_JOINTS}})
    with serving_node(module_processes, tmp_path_factory.mktemp("sequence_move"), parameters, "sequence_move_node",
                      "tool0", SequenceNode) as serving:
        yield serving


def _tool(positions) -> np.ndarray:
    """T_base_tool0 (points, 4, 4) of each configuration."""
    return np.array([UR5_MODEL.link_poses(dict(zip(UR5_JOINTS, q)))["tool0"] for q in positions])


def _goal(q_start: np.ndarray, corners, radii, plan_only: bool = False,
          scaling: float = SCALING) -> MoveGroupSequence.Goal:
    """A LIN sequence through ``corners`` (relative to the tool's pose at ``q_start``), Pilz's pipeline."""
    T_start = _tool([q_start])[0]
    goal = MoveGroupSequence.Goal()
    goal.planning_options.plan_only = plan_only
    for index, (corner, radius) in enumerate(zip(corners, radii)):
        T_corner = T_start.copy()
        T_corner[:3, 3] += corner
        item = motion_plan_request(UR5_GROUP, [pose_goal("tool0", T_corner, "base_link")],
                                   dict(zip(UR5_JOINTS, q_start)) if index == 0 else {},
                                   planner_id="LIN").motion_plan_request
        item.pipeline_id = "pilz_industrial_motion_planner"
        item.max_velocity_scaling_factor = scaling
        goal.request.items.append(MotionSequenceItem(req=item, blend_radius=radius))
    return goal


def _positions(response) -> np.ndarray:
    (trajectory,) = response.planned_trajectories
    assert list(trajectory.joint_trajectory.joint_names) == list(UR5_JOINTS)
    return np.array([point.positions for point in trajectory.joint_trajectory.points])


def test_plan_only_answers_the_blended_trajectory_and_sends_nothing(node):
    start = node.current()
    status, response = node.result(node.send(_goal(start, SQUARE, RADII, plan_only=True)))
    assert (status, response.error_code.val) == (GoalStatus.STATUS_SUCCEEDED, MoveItErrorCodes.SUCCESS), \
        response.error_code.message
    assert "plan_only" in response.error_code.message
    positions = _positions(response)
    np.testing.assert_allclose(positions[0], start, atol=1e-9)
    np.testing.assert_allclose(_tool(positions[-1:])[0, :3, 3], _tool([start])[0, :3, 3] + SQUARE[-1], atol=ON_LINE)
    assert response.planning_time > 0
    np.testing.assert_allclose(node.current(), start, atol=1e-12, err_msg="nothing was executed")


def test_a_blended_lin_sequence_executes_and_ends_at_its_last_goal(node):
    start = node.current()
    status, response = node.result(node.send(_goal(start, SQUARE, RADII)))
    assert (status, response.error_code.val) == (GoalStatus.STATUS_SUCCEEDED, MoveItErrorCodes.SUCCESS), \
        response.error_code.message
    positions = _positions(response)
    np.testing.assert_allclose(positions[0], start, atol=1e-3)
    wait_for(lambda: np.abs(node.current() - positions[-1]).max() <= AT_GOAL, 10.0, "joint_states at the last goal")
    np.testing.assert_allclose(_tool([node.current()])[0, :3, 3], _tool([start])[0, :3, 3] + SQUARE[-1],
                               atol=ON_LINE + AT_GOAL)
    wait_for(lambda: "MONITOR" in node.feedback or node.client.spin_once(0.05), 10.0, f"MONITOR in {node.feedback}")
    assert node.feedback[:2] == ["PLANNING", "MONITOR"], node.feedback


def test_a_refused_sequence_ends_with_pilz_s_code_and_sends_nothing(node):
    start = node.current()
    status, response = node.result(node.send(_goal(start, SQUARE, (0.05, 0.05, 0.03, 0.02))))
    assert (status, response.error_code.val) == (GoalStatus.STATUS_ABORTED, MoveItErrorCodes.INVALID_MOTION_PLAN)
    assert "last item's blend radius" in response.error_code.message, response.error_code.message
    assert not response.planned_trajectories
    np.testing.assert_allclose(node.current(), start, atol=1e-12, err_msg="nothing was executed")


def test_a_cancel_mid_motion_preempts_and_stops_the_arm(node):
    start = node.current()
    handle = node.send(_goal(start, BACK, BACK_RADII, scaling=SLOW_SCALING))
    wait_for(lambda: np.abs(node.current() - start).max() > UNDER_WAY, 60.0, "the arm under way")
    node.client.spin_until(handle.cancel_goal_async(), CALL_TIMEOUT_S)
    status, response = node.result(handle)
    assert (status, response.error_code.val) == (GoalStatus.STATUS_CANCELED, MoveItErrorCodes.PREEMPTED), \
        response.error_code.message
    end = _positions(response)[-1]
    stopped = wait_at_rest(node.current, 30.0, "the arm at rest")
    assert np.abs(stopped - end).max() > UNDER_WAY, "stopped short of the end"
    time.sleep(0.3)
    np.testing.assert_allclose(node.current(), stopped, atol=1e-9, err_msg="where it stays")
