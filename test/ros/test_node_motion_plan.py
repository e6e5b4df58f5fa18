"""plan_kinematic_path and query_planner_interface over DDS, the node in its own process (the bundled UR5 with its
collision geometry, a box on collision_object between the start and the goal).

Properties: a plan around the box reaches the joint goal, each trajectory point collision-free at 0.01 rad steps by
this process's own check of the same scene, timed and shown on display_planned_path; several goal constraints with
only one valid reach that one; a pose goal ends at the pose; path constraints hold at every point; a goal no path
reaches is TIMED_OUT once the budget is spent; every failure answers MoveIt's code with the reason;
query_planner_interface names the planners.
"""
from __future__ import annotations

import re
import signal
from pathlib import Path

import numpy as np
import pytest
from conftest import PythonProcesses
from geometry_msgs.msg import Point, Pose
from moveit_msgs.msg import (
    AttachedCollisionObject,
    CollisionObject,
    Constraints,
    DisplayTrajectory,
    JointConstraint,
    MoveItErrorCodes,
    PositionConstraint,
)
from moveit_msgs.srv import GetMotionPlan, QueryPlannerInterfaces
from node_harness import (
    CALL_TIMEOUT_S,
    UR5_GROUP,
    UR5_JOINTS,
    UR5_MODEL,
    NodeUnderTest,
    module_processes,  # noqa: F401 (fixture)
    serving_node,
    state_validity_request,
    ur5_parameters,
    wait_for,
)
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from shape_msgs.msg import SolidPrimitive

from kinematics_py.collision.checker import CollisionChecker
from kinematics_py.collision.geometry import Box
from kinematics_py.geometry.transforms import make_transform
from kinematics_py.model.srdf import SemanticModel
from kinematics_py.planning.motion_bound import first_unproven
from kinematics_py.planning.ompl_search import PLANNER_IDS
from kinematics_py.planning.path_check import PathCheck, densify
from kinematics_py.robots import bundled_robot_path
from kinematics_py.ros.demo.client import box_object, joint_goal, motion_plan_request, pose_goal

GROUP, MODEL, JOINTS = UR5_GROUP, UR5_MODEL, UR5_JOINTS
START = dict(zip(JOINTS, (0.3, -1.2, 1.5, -1.9, -1.57, 0.0)))
GOAL = dict(zip(JOINTS, (-1.5, -1.2, 1.5, -1.9, -1.57, 0.0)))
BOX_SIZE = 0.15
#: The box at the tool halfway between START and GOAL: the straight joint motion hits it.
BOX_CENTRE = MODEL.link_poses({j: (START[j] + GOAL[j]) / 2 for j in JOINTS})["tool0"][:3, 3]
#: GOAL with the tool inside the box.
IN_BOX = {j: (START[j] + GOAL[j]) / 2 for j in JOINTS}
WAIT_S = 20.0
SCENE_QOS = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.VOLATILE)


class PlanningNode(NodeUnderTest):
    def __init__(self, process, namespace):
        super().__init__(process, namespace)
        self.plan_client = self.client.client(GetMotionPlan, f"{namespace}/plan_kinematic_path")
        self.query_client = self.client.client(QueryPlannerInterfaces, f"{namespace}/query_planner_interface")
        self.objects = self.node.create_publisher(CollisionObject, f"{namespace}/collision_object", SCENE_QOS)
        self.displayed: list[DisplayTrajectory] = []
        self.node.create_subscription(DisplayTrajectory, f"{namespace}/display_planned_path", self.displayed.append,
                                      10)
        self.answering_before_use(self.plan_client, GetMotionPlan.Request())

    def plan(self, request):
        return self.client.call(self.plan_client, request, CALL_TIMEOUT_S).motion_plan_response

    def spin_once(self) -> None:
        self.client._executor.spin_once(timeout_sec=0.02)


@pytest.fixture(scope="module")
def node(module_processes, tmp_path_factory):  # noqa: F811 (fixture)
    with serving_node(module_processes, tmp_path_factory.mktemp("planning"), ur5_parameters(), "planning_node",
                      "tool0", PlanningNode) as serving:
        box = box_object("box", BOX_SIZE, make_transform(None, tuple(BOX_CENTRE)), MODEL.root_link)

        def box_taken():
            serving.objects.publish(box)
            serving.spin_once()
            return not serving.state_validity(state_validity_request(IN_BOX, GROUP)).valid
        wait_for(box_taken, WAIT_S, "the node to take the box")
        yield serving


@pytest.fixture(scope="module")
def check():
    checker = CollisionChecker(MODEL, SemanticModel.from_srdf_string(bundled_robot_path("ur5", "srdf").read_text(),
                                                                     MODEL))
    checker.scene.add_object("box", [Box((BOX_SIZE,) * 3)], pose=make_transform(None, tuple(BOX_CENTRE)))
    return PathCheck(checker, JOINTS)


def _positions(answer) -> np.ndarray:
    trajectory = answer.trajectory.joint_trajectory
    assert list(trajectory.joint_names) == list(JOINTS)
    return np.array([point.positions for point in trajectory.points])


def _times(answer) -> np.ndarray:
    return np.array([p.time_from_start.sec + p.time_from_start.nanosec * 1e-9
                     for p in answer.trajectory.joint_trajectory.points])


def test_plan_around_the_box_reaches_the_goal_collision_free_and_is_displayed(node, check):
    assert not check.segment_free(np.array(list(START.values())), np.array(list(GOAL.values())))
    shown = len(node.displayed)
    answer = node.plan(motion_plan_request(GROUP, [joint_goal(GOAL)], START))
    assert answer.error_code.val == MoveItErrorCodes.SUCCESS, answer.error_code.message
    positions = _positions(answer)
    np.testing.assert_allclose(positions[0], list(START.values()), atol=1e-9)
    np.testing.assert_allclose(positions[-1], list(GOAL.values()), atol=1e-9)
    # the points a controller needs (issue 30): per straight joint move from rest to rest, at most the first and
    # last points of its three phases; every state between two of them is on the checked straight segments, free
    # at the checking resolution
    moves = int(re.search(r"(\d+) waypoints", answer.error_code.message).group(1)) - 1
    assert 2 <= len(positions) <= 1 + 6 * moves
    path = densify(positions, 0.01)
    assert check.first_invalid(path) < 0
    assert np.all(np.diff(_times(answer)) > 0)
    assert answer.planning_time > 0 and answer.group_name == GROUP
    assert list(answer.trajectory_start.joint_state.name)
    wait_for(lambda: node.spin_once() or len(node.displayed) > shown, WAIT_S, "the plan on display_planned_path")


def test_a_plan_holding_a_part_is_free_and_proven_between_its_points_with_the_part(node, check):
    """A part attached in the request's start state (a 6 cm cube on tool0) moves with the tool around the box: every
    state of the answer, the part's sweep included, is free and proven so by this process's own checker."""
    request = motion_plan_request(GROUP, [joint_goal(GOAL)], START)
    part = box_object("part", 0.06, make_transform(None, (0.0, 0.0, 0.08)), "tool0")
    request.motion_plan_request.start_state.attached_collision_objects = [
        AttachedCollisionObject(link_name="tool0", object=part)]
    answer = node.plan(request)
    assert answer.error_code.val == MoveItErrorCodes.SUCCESS, answer.error_code.message
    holding = check.checker.for_scene(check.checker.scene.copy())
    holding.scene.attach_object("part", "tool0", shapes=[Box((0.06,) * 3)], pose=make_transform(None, (0, 0, 0.08)))
    held = PathCheck(holding, JOINTS)
    path = densify(_positions(answer), 0.01)
    np.testing.assert_allclose(path[-1], list(GOAL.values()), atol=1e-9)
    assert held.first_invalid(path) < 0
    assert first_unproven(held, path) == -1


def test_a_blended_plan_around_the_box_is_collision_free_and_flows_through_its_corners(node, check):
    """planner_id "RRTConnect;blend": the trajectory flows through the detour's corners (their blend radii are
    free of the box), checked at every point as any plan."""
    request = motion_plan_request(GROUP, [joint_goal(GOAL)], START, planner_id="RRTConnect;blend")
    answer = node.plan(request)
    assert answer.error_code.val == MoveItErrorCodes.SUCCESS, answer.error_code.message
    positions = _positions(answer)
    np.testing.assert_allclose(positions[[0, -1]], [list(START.values()), list(GOAL.values())], atol=1e-9)
    assert np.abs(np.diff(positions, axis=0)).max() <= 0.01 + 1e-9
    assert check.first_invalid(positions) < 0
    assert np.all(np.diff(_times(answer)) > 0)
    velocities = np.array([point.velocities for point in answer.trajectory.joint_trajectory.points])
    stops = np.flatnonzero(np.abs(velocities).max(axis=1) == 0)
    assert stops[0] == 0 and stops[-1] == len(positions) - 1
    assert len(stops) < len(positions) // 10  # at most a few corners without a free blend


def test_several_goals_with_only_one_valid_reach_it(node, check):
    answer = node.plan(motion_plan_request(GROUP, [joint_goal(IN_BOX), joint_goal(GOAL)], START))
    assert answer.error_code.val == MoveItErrorCodes.SUCCESS, answer.error_code.message
    np.testing.assert_allclose(_positions(answer)[-1], list(GOAL.values()), atol=1e-9)
    assert "goal_constraints[1]" in answer.error_code.message


def test_pose_goal_ends_at_the_pose(node, check):
    T_goal = MODEL.link_poses(GOAL)["tool0"]
    answer = node.plan(motion_plan_request(GROUP, [pose_goal("tool0", T_goal, MODEL.root_link)], START))
    assert answer.error_code.val == MoveItErrorCodes.SUCCESS, answer.error_code.message
    positions = _positions(answer)
    reached = MODEL.link_poses(dict(zip(JOINTS, positions[-1])))["tool0"]
    np.testing.assert_allclose(reached[:3, 3], T_goal[:3, 3], atol=1e-3)
    assert check.first_invalid(densify(positions, 0.01)) < 0


def _tool_positions(positions: np.ndarray) -> np.ndarray:
    return np.array([MODEL.link_poses(dict(zip(JOINTS, q)))["tool0"][:3, 3] for q in positions])


def _straight_tool_run(points: np.ndarray, length: float) -> None:
    """``points`` lie on one straight line of ``length`` [m] (within 1 mm)."""
    direction = (points[-1] - points[0]) / np.linalg.norm(points[-1] - points[0])
    offsets = points - points[0]
    assert np.linalg.norm(offsets - np.outer(offsets @ direction, direction), axis=1).max() <= 1e-3
    assert abs(np.linalg.norm(points[-1] - points[0]) - length) <= 1e-3


def test_a_touch_motion_ends_along_the_tool_axis_and_its_retraction_goes_back(node, check):
    """planner_id "RRTConnect;touch=0.05": the last 5 cm reach the pose goal along its tool z axis; from there,
    ";retract=0.05" begins by going back the same way."""
    T_goal = MODEL.link_poses(GOAL)["tool0"]
    request = motion_plan_request(GROUP, [pose_goal("tool0", T_goal, MODEL.root_link)], START)
    request.motion_plan_request.planner_id = "RRTConnect;touch=0.05"
    answer = node.plan(request)
    assert answer.error_code.val == MoveItErrorCodes.SUCCESS, answer.error_code.message
    tool = _tool_positions(_positions(answer))
    np.testing.assert_allclose(tool[-1], T_goal[:3, 3], atol=1e-3)
    approach = tool[np.linalg.norm(tool - tool[-1], axis=1) <= 0.05 + 1e-3]
    _straight_tool_run(approach, 0.05)
    np.testing.assert_allclose((approach[-1] - approach[0]) / 0.05, T_goal[:3, 2], atol=0.05)
    assert check.first_invalid(densify(_positions(answer), 0.01)) < 0
    touched = dict(zip(JOINTS, _positions(answer)[-1]))
    back = motion_plan_request(GROUP, [joint_goal(START)], touched)
    back.motion_plan_request.planner_id = ";retract=0.05"
    answer = node.plan(back)
    assert answer.error_code.val == MoveItErrorCodes.SUCCESS, answer.error_code.message
    tool = _tool_positions(_positions(answer))
    retraction = tool[:np.argmax(np.linalg.norm(tool - tool[0], axis=1) > 0.05 + 1e-3)]
    _straight_tool_run(retraction, 0.05)
    np.testing.assert_allclose((retraction[-1] - retraction[0]) / 0.05, -T_goal[:3, 2], atol=0.05)


def test_path_constraints_hold_at_every_point(node):
    request = motion_plan_request(GROUP, [joint_goal(GOAL)], START)
    request.motion_plan_request.path_constraints = Constraints(joint_constraints=[JointConstraint(
        joint_name="wrist_3_joint", position=0.0, tolerance_above=0.2, tolerance_below=0.2, weight=1.0)])
    answer = node.plan(request)
    assert answer.error_code.val == MoveItErrorCodes.SUCCESS, answer.error_code.message
    assert np.all(np.abs(_positions(answer)[:, 5]) <= 0.2 + 1e-9)


def test_a_goal_no_path_reaches_answers_timed_out_within_the_budget(node):
    """The path constraint keeps the tool inside one of two small spheres, one around the start's tool and one
    around the goal's: both are valid, and no path joins them."""
    region = PositionConstraint(link_name="tool0", weight=1.0)
    region.header.frame_id = MODEL.root_link
    for values in (START, GOAL):
        centre = MODEL.link_poses(values)["tool0"][:3, 3]
        region.constraint_region.primitives.append(SolidPrimitive(type=SolidPrimitive.SPHERE, dimensions=[0.05]))
        region.constraint_region.primitive_poses.append(Pose(position=Point(x=centre[0], y=centre[1], z=centre[2])))
    request = motion_plan_request(GROUP, [joint_goal(GOAL)], START, planning_time=1.0)
    request.motion_plan_request.path_constraints = Constraints(position_constraints=[region])
    answer = node.plan(request)
    assert answer.error_code.val == MoveItErrorCodes.TIMED_OUT, answer.error_code.message
    assert "no collision-free path found within" in answer.error_code.message
    assert 0 < answer.planning_time < CALL_TIMEOUT_S


@pytest.mark.parametrize("change, code, words", [
    (lambda r: setattr(r, "group_name", "legs"), MoveItErrorCodes.INVALID_GROUP_NAME, "ur_manipulator"),
    (lambda r: setattr(r, "goal_constraints", []), MoveItErrorCodes.INVALID_GOAL_CONSTRAINTS, "goal_constraints"),
    (lambda r: setattr(r, "goal_constraints", [Constraints()]), MoveItErrorCodes.INVALID_GOAL_CONSTRAINTS,
     "no constraint"),
    (lambda r: setattr(r, "goal_constraints", [joint_goal(IN_BOX)]), MoveItErrorCodes.GOAL_IN_COLLISION, "box"),
    (lambda r: setattr(r, "goal_constraints", [joint_goal({**GOAL, "elbow_joint": 9.0})]),
     MoveItErrorCodes.GOAL_STATE_INVALID, "elbow_joint"),
    (lambda r: setattr(r.start_state.joint_state, "position", list(IN_BOX.values())),
     MoveItErrorCodes.START_STATE_IN_COLLISION, "box"),
    (lambda r: setattr(r, "planner_id", "CHOMP"), MoveItErrorCodes.PLANNING_FAILED, "RRTConnect"),
    (lambda r: setattr(r, "planner_id", "RRTConnect;touch=far"), MoveItErrorCodes.PLANNING_FAILED,
     "touch=<distance>[,x,y,z]"),
    (lambda r: setattr(r, "planner_id", "RRTConnect;touch=0.05"), MoveItErrorCodes.PLANNING_FAILED,
     "pose goals"),
    (lambda r: setattr(r, "planner_id", ";retract=-1"), MoveItErrorCodes.PLANNING_FAILED, "retract distance"),
    (lambda r: setattr(r, "max_velocity_scaling_factor", 2.0), MoveItErrorCodes.FAILURE,
     "max_velocity_scaling_factor"),
])
def test_failures_answer_moveit_codes_with_the_reason(node, change, code, words):
    request = motion_plan_request(GROUP, [joint_goal(GOAL)], START)
    change(request.motion_plan_request)
    answer = node.plan(request)
    assert answer.error_code.val == code, answer.error_code.message
    assert words in answer.error_code.message
    node.assert_alive()


def test_query_planner_interface_names_the_planners(node):
    response = node.client.call(node.query_client, QueryPlannerInterfaces.Request(), CALL_TIMEOUT_S)
    interface, industrial = response.planner_interfaces  # OMPL's, then Pilz's (test_node_industrial.py)
    assert list(interface.planner_ids) == list(PLANNER_IDS) and interface.pipeline_id == "ompl"
    assert industrial.pipeline_id == "pilz_industrial_motion_planner"


def _planning_pids(process) -> list[int]:
    """The planning processes' ids the node has logged (once it planned in them)."""
    found = re.search(r"plans run in planning processes \[([\d, ]+)\]", process.output())
    return [int(pid) for pid in found.group(1).split(",")] if found else []


def _parent_pid(pid: int) -> int:
    stat = Path(f"/proc/{pid}/stat").read_text()
    return int(stat[stat.rindex(")") + 2:].split()[1])


def test_plans_run_in_a_planning_process_of_the_node_which_ends_with_it(tmp_path_factory):
    """The first plans run on the node's threads while its planning process starts; once it has the robot, plans
    run there (the node logs it), and the process ends with the node."""
    processes = PythonProcesses(tmp_path_factory.mktemp("planning_process_logs"))
    try:
        with serving_node(processes, tmp_path_factory.mktemp("planning_process"), ur5_parameters(),
                          "planning_process_node", "tool0", PlanningNode) as serving:
            def planned_in_a_process():
                answer = serving.plan(motion_plan_request(GROUP, [joint_goal(GOAL)], START))
                assert answer.error_code.val == MoveItErrorCodes.SUCCESS, answer.error_code.message
                np.testing.assert_allclose(_positions(answer)[-1], list(GOAL.values()), atol=1e-9)
                return _planning_pids(serving.process)
            pids = wait_for(planned_in_a_process, WAIT_S * 6, "a plan in a planning process", serving.process,
                            interval=0.5)
            assert all(_parent_pid(pid) == serving.process.popen.pid for pid in pids)
            node_process = serving.process
        node_process.popen.send_signal(signal.SIGINT)
        assert node_process.popen.wait(timeout=WAIT_S * 3) == 0
        wait_for(lambda: not any(Path(f"/proc/{pid}").exists() for pid in pids), WAIT_S,
                 "the planning processes to end with the node")
    finally:
        processes.stop_all()
