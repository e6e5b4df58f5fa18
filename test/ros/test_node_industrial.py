"""Industrial motions over DDS, the node in its own process (the bundled UR5, its Cartesian limits the unchanged
pilz_cartesian_limits.yaml of moveit_resources' Panda config given as parameters): plan_kinematic_path's
``pilz_industrial_motion_planner`` pipeline (PTP, LIN, CIRC), plan_sequence_path, and an attached tool's subframe
as the tool frame.

Properties, checked by this process's own FK of every trajectory point: a LIN's tool deviates from its line by
< 0.1 mm and its speed profile is a trapezoid within the scaled limits; PTP's joints start and end together;
CIRC's points lie on the circle; a 4-item LIN sequence with radii 0.05/0.05/0.03/0 never lets the tool's speed fall
below 10 % of the commanded speed between its first start and its last goal, stays on the lines outside the blend
spheres and inside them within; every refusal answers MoveIt's code; IK and LIN put a subframe 10 cm beyond the
flange, not the flange, on the target.
"""
from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pytest
import yaml
from geometry_msgs.msg import Point, Pose
from moveit_msgs.msg import (
    AttachedCollisionObject,
    CollisionObject,
    Constraints,
    MotionSequenceItem,
    MoveItErrorCodes,
    PositionConstraint,
)
from moveit_msgs.srv import GetCartesianPath, GetMotionPlan, GetMotionSequence, QueryPlannerInterfaces
from node_harness import (
    CALL_TIMEOUT_S,
    UR5_GROUP,
    UR5_JOINTS,
    UR5_MODEL,
    NodeUnderTest,
    ik_request,
    module_processes,  # noqa: F401 (fixture)
    serving_node,
    ur5_parameters,
    wait_for,
)
from shape_msgs.msg import SolidPrimitive

from kinematics_py.geometry.transforms import make_transform
from kinematics_py.ros.demo.client import (
    box_object,
    cartesian_path_request,
    joint_goal,
    motion_plan_request,
    pose_goal,
)
from kinematics_py.ros.messages.conversions import pose_msg_from_transform

GROUP, MODEL, JOINTS = UR5_GROUP, UR5_MODEL, UR5_JOINTS
PILZ_LIMITS = yaml.safe_load((Path(__file__).parents[1] / "data" / "pilz" / "pilz_cartesian_limits.yaml").read_text())
MAX_TRANS_VEL = PILZ_LIMITS["cartesian_limits"]["max_trans_vel"]
START = dict(zip(JOINTS, (0.3, -1.2, 1.5, -1.9, -1.57, 0.0)))
#: Joint accelerations given as joint_limits.yaml parameters [rad/s^2] (the URDF has none).
ACCELERATION = 5.0
PIPELINE = "pilz_industrial_motion_planner"
ON_LINE = 1e-4
SQUARE = ((0.12, 0.0, 0.0), (0.12, 0.12, 0.0), (0.0, 0.12, 0.0), (0.0, 0.12, 0.1))
RADII = (0.05, 0.05, 0.03, 0.0)
#: The attached tool's subframe, 10 cm beyond the flange along its z axis.
T_FLANGE_SUBFRAME = make_transform(None, (0.0, 0.0, 0.1))


class IndustrialNode(NodeUnderTest):
    def __init__(self, process, namespace):
        super().__init__(process, namespace)
        self.plan_client = self.client.client(GetMotionPlan, f"{namespace}/plan_kinematic_path")
        self.sequence_client = self.client.client(GetMotionSequence, f"{namespace}/plan_sequence_path")
        self.query_client = self.client.client(QueryPlannerInterfaces, f"{namespace}/query_planner_interface")
        self.objects = self.node.create_publisher(CollisionObject, f"{namespace}/collision_object", 10)
        self.answering_before_use(self.sequence_client, GetMotionSequence.Request())

    def plan(self, request):
        return self.client.call(self.plan_client, request, CALL_TIMEOUT_S).motion_plan_response

    def sequence(self, request):
        return self.client.call(self.sequence_client, request, CALL_TIMEOUT_S).response


@pytest.fixture(scope="module")
def node(module_processes, tmp_path_factory):  # noqa: F811 (fixture)
    parameters = ur5_parameters(robot_description_planning={
        **PILZ_LIMITS, "joint_limits": {joint: {"has_acceleration_limits": True, "max_acceleration": ACCELERATION}
                                        for joint in JOINTS}})
    with serving_node(module_processes, tmp_path_factory.mktemp("industrial"), parameters, "industrial_node",
                      "tool0", IndustrialNode) as serving:
        yield serving


def _tool(positions: np.ndarray, T_tip_tool: np.ndarray | None = None) -> np.ndarray:
    poses = np.array([MODEL.link_poses(dict(zip(JOINTS, q)))["tool0"] for q in positions])
    return poses if T_tip_tool is None else poses @ T_tip_tool


START_POSE = _tool(np.array([list(START.values())]))[0]


def _moved(offset) -> np.ndarray:
    T = START_POSE.copy()
    T[:3, 3] += offset
    return T


def _request(planner: str, goal: Constraints, scaling: float = 1.0, start=START):
    request = motion_plan_request(GROUP, [goal], start, planner_id=planner)
    request.motion_plan_request.pipeline_id = PIPELINE
    request.motion_plan_request.max_velocity_scaling_factor = scaling
    return request


def _trajectory(answer) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(positions, velocities, times) of a RobotTrajectory."""
    points = answer.joint_trajectory.points
    assert list(answer.joint_trajectory.joint_names) == list(JOINTS)
    return (np.array([p.positions for p in points]), np.array([p.velocities for p in points]),
            np.array([p.time_from_start.sec + 1e-9 * p.time_from_start.nanosec for p in points]))


def _tool_speeds(positions: np.ndarray, velocities: np.ndarray) -> np.ndarray:
    """The tool's speed [m/s] at each point: its Jacobian times the joint velocities."""
    chain = MODEL.chain("base_link", "tool0")
    jacobians = chain.jacobian(positions)
    return np.linalg.norm(np.einsum("kij,kj->ki", jacobians[:, :3], velocities), axis=1)


def _distance_to_segment(points: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    t = np.clip((points - a) @ (b - a) / ((b - a) @ (b - a)), 0.0, 1.0)
    return np.linalg.norm(points - (a + t[:, None] * (b - a)), axis=1)


def test_query_planner_interface_lists_the_pilz_pipeline(node):
    answer = node.client.call(node.query_client, QueryPlannerInterfaces.Request(), CALL_TIMEOUT_S)
    pilz = [d for d in answer.planner_interfaces if d.pipeline_id == PIPELINE]
    assert len(pilz) == 1 and list(pilz[0].planner_ids) == ["PTP", "LIN", "CIRC"]


def test_lin_keeps_to_its_line_on_a_trapezoid_within_the_scaled_limits(node):
    T_to = _moved((0.15, 0.1, -0.1))
    answer = node.plan(_request("LIN", pose_goal("tool0", T_to, "base_link"), scaling=0.1))
    assert answer.error_code.val == MoveItErrorCodes.SUCCESS, answer.error_code.message
    positions, velocities, times = _trajectory(answer.trajectory)
    points = _tool(positions)[:, :3, 3]
    assert _distance_to_segment(points, START_POSE[:3, 3], T_to[:3, 3]).max() < ON_LINE
    assert np.linalg.norm(points[-1] - T_to[:3, 3]) < ON_LINE
    speeds = _tool_speeds(positions, velocities)
    top = 0.1 * MAX_TRANS_VEL
    assert speeds.max() <= top * (1 + 1e-6)
    cruise = np.flatnonzero(speeds > 0.99 * top)
    assert cruise.size > 10
    assert np.all(np.diff(speeds[:cruise[0] + 1]) > -1e-9) and np.all(np.diff(speeds[cruise[-1]:]) < 1e-9)
    assert np.all(speeds[cruise[0]:cruise[-1] + 1] > 0.99 * top)
    assert np.all(np.diff(times) > 0)


def test_ptp_joints_start_and_end_together(node):
    goal = dict(zip(JOINTS, (-0.4, -1.0, 1.2, -1.5, -1.2, 0.6)))
    answer = node.plan(_request("PTP", joint_goal(goal), scaling=0.5))
    assert answer.error_code.val == MoveItErrorCodes.SUCCESS, answer.error_code.message
    positions, velocities, _times = _trajectory(answer.trajectory)
    assert np.allclose(positions[-1], list(goal.values()))
    assert np.all(velocities[[0, -1]] == 0)
    moving = np.abs(velocities[1:-1]) > 0
    assert moving.all()  # every joint moves from the first point after the start to the last before the goal
    delta = np.array(list(goal.values())) - np.array(list(START.values()))
    ratios = velocities[1:-1] / delta
    assert np.allclose(ratios, ratios[:, :1], rtol=1e-6)


def test_circ_points_lie_on_the_circle(node):
    centre = START_POSE[:3, 3] + [0.0, 0.1, 0.0]
    goal = pose_goal("tool0", _moved((0.1, 0.1, 0.0)), "base_link")
    request = _request("CIRC", goal)
    interim = PositionConstraint(link_name="tool0")
    interim.header.frame_id = "base_link"
    interim.constraint_region.primitives = [SolidPrimitive(type=SolidPrimitive.SPHERE, dimensions=[1e-3])]
    middle = centre + 0.1 * np.array([np.sin(np.pi / 4), -np.cos(np.pi / 4), 0.0])
    interim.constraint_region.primitive_poses = [Pose(position=Point(x=middle[0], y=middle[1], z=middle[2]))]
    request.motion_plan_request.path_constraints = Constraints(name="interim", position_constraints=[interim])
    answer = node.plan(request)
    assert answer.error_code.val == MoveItErrorCodes.SUCCESS, answer.error_code.message
    points = _tool(_trajectory(answer.trajectory)[0])[:, :3, 3]
    assert np.abs(np.linalg.norm(points - centre, axis=1) - 0.1).max() < ON_LINE
    request.motion_plan_request.path_constraints = Constraints()
    refused = node.plan(request)
    assert refused.error_code.val == MoveItErrorCodes.INVALID_MOTION_PLAN and "interim" in refused.error_code.message


def _sequence(radii, planner="LIN", second_start=None, second_group=GROUP):
    request = GetMotionSequence.Request()
    for index, (corner, radius) in enumerate(zip(SQUARE, radii)):
        item = _request(planner, pose_goal("tool0", _moved(corner), "base_link"), scaling=0.1,
                        start=START if index == 0 else {}).motion_plan_request
        if index == 1 and second_start is not None:
            item.start_state.joint_state.name = list(second_start)
            item.start_state.joint_state.position = list(second_start.values())
        if index == 1:
            item.group_name = second_group
        request.request.items.append(MotionSequenceItem(req=item, blend_radius=radius))
    return request


def test_a_blended_sequence_never_slows_below_a_tenth_and_keeps_to_its_lines(node):
    answer = node.sequence(_sequence(RADII))
    assert answer.error_code.val == MoveItErrorCodes.SUCCESS, answer.error_code.message
    assert len(answer.planned_trajectories) == 1
    positions, velocities, _times = _trajectory(answer.planned_trajectories[0])
    speeds = _tool_speeds(positions, velocities)
    commanded = 0.1 * MAX_TRANS_VEL
    moving = np.flatnonzero(speeds >= 0.1 * commanded)
    assert np.all(speeds[moving[0]:moving[-1] + 1] >= 0.1 * commanded)
    assert speeds.max() <= commanded * (1 + 1e-6)
    corners = [START_POSE[:3, 3]] + [START_POSE[:3, 3] + corner for corner in SQUARE]
    for point in _tool(positions)[:, :3, 3]:
        spheres = [k for k in range(3) if np.linalg.norm(point - corners[k + 1]) < RADII[k]]
        if not spheres:
            assert min(_distance_to_segment(point[None], corners[k], corners[k + 1])[0] for k in range(4)) < ON_LINE
    assert np.linalg.norm(_tool(positions[-1:])[0, :3, 3] - corners[-1]) < ON_LINE


def test_an_ompl_item_is_the_free_motion_blended_after_a_lin(node):
    request = _sequence((0.02, 0.0))
    free = request.request.items[1].req
    goal = dict(zip(JOINTS, (-0.3, -1.3, 1.6, -1.8, -1.57, 0.2)))
    free.pipeline_id, free.planner_id, free.goal_constraints = "ompl", "RRTConnect", [joint_goal(goal)]
    answer = node.sequence(request)
    assert answer.error_code.val == MoveItErrorCodes.SUCCESS, answer.error_code.message
    positions, velocities, times = _trajectory(answer.planned_trajectories[0])
    np.testing.assert_allclose(positions[-1], list(goal.values()), atol=1e-9)
    assert np.all(np.diff(times) > 0) and np.abs(np.diff(positions, axis=0)).max() <= 0.01 + 1e-9
    free.planner_id = "Astar"
    refused = node.sequence(request)
    assert refused.error_code.val == MoveItErrorCodes.PLANNING_FAILED and "RRTConnect" in refused.error_code.message


@pytest.mark.parametrize(("radii", "second_start", "second_group", "code", "reason"), [
    ((0.05, 0.05, 0.03, 0.02), None, GROUP, MoveItErrorCodes.INVALID_MOTION_PLAN, "last item's blend radius"),
    ((0.1, 0.08, 0.0, 0.0), None, GROUP, MoveItErrorCodes.INVALID_MOTION_PLAN, "overlap"),
    (RADII, START, GROUP, MoveItErrorCodes.INVALID_ROBOT_STATE, "only the first item"),
    (RADII, None, "other_group", MoveItErrorCodes.INVALID_MOTION_PLAN, "one group"),
])
def test_sequence_rules_are_refused_with_moveit_codes(node, radii, second_start, second_group, code, reason):
    answer = node.sequence(_sequence(radii, second_start=second_start, second_group=second_group))
    assert answer.error_code.val == code and reason in answer.error_code.message, answer.error_code.message


def test_refusals_name_the_reason(node):
    unknown = node.plan(_request("SPLINE", joint_goal(START)))
    assert unknown.error_code.val == MoveItErrorCodes.PLANNING_FAILED and "'PTP', 'LIN', 'CIRC'" in \
        unknown.error_code.message
    far = node.plan(_request("LIN", pose_goal("tool0", _moved((1.5, 0.0, 0.0)), "base_link")))
    assert far.error_code.val == MoveItErrorCodes.NO_IK_SOLUTION, far.error_code.message


def _with_tool(request_state):
    """``request_state`` (a RobotState) holding a tool attached to tool0 with subframe ``tip`` 10 cm beyond it."""
    tool = AttachedCollisionObject(link_name="tool0")
    tool.object = box_object("tool", 0.02, make_transform(None, (0.0, 0.0, 0.05)), "tool0")
    tool.object.subframe_names = ["tip"]
    tool.object.subframe_poses = [pose_msg_from_transform(make_transform(None, (0.0, 0.0, 0.05)))]
    request_state.attached_collision_objects = [tool]
    request_state.is_diff = True
    return request_state


def test_a_subframe_is_the_tool_frame_of_ik_and_lin(node):
    T_target = _moved((0.05, -0.05, 0.0))
    ik = ik_request(GROUP, T_target, link="tool/tip", frame="base_link", seed=START)
    _with_tool(ik.ik_request.robot_state)
    answer = node.ik(ik)
    assert answer.error_code.val == MoveItErrorCodes.SUCCESS, answer.error_code.message
    solution = dict(zip(answer.solution.joint_state.name, answer.solution.joint_state.position))
    T_subframe = _tool(np.array([[solution[j] for j in JOINTS]]), T_FLANGE_SUBFRAME)[0]
    assert np.linalg.norm(T_subframe[:3, 3] - T_target[:3, 3]) < 1e-6
    T_from = _tool(np.array([list(START.values())]), T_FLANGE_SUBFRAME)[0]
    T_to = T_from.copy()
    T_to[:3, 3] += [0.1, 0.05, 0.0]
    request = _request("LIN", pose_goal("tool/tip", T_to, "base_link"))
    _with_tool(request.motion_plan_request.start_state)
    lin = node.plan(request)
    assert lin.error_code.val == MoveItErrorCodes.SUCCESS, lin.error_code.message
    positions = _trajectory(lin.trajectory)[0]
    tips = _tool(positions, T_FLANGE_SUBFRAME)[:, :3, 3]
    assert _distance_to_segment(tips, T_from[:3, 3], T_to[:3, 3]).max() < ON_LINE
    assert np.linalg.norm(_tool(positions[-1:])[0, :3, 3] - T_to[:3, 3]) > 0.05  # the flange is elsewhere


def test_a_subframe_is_the_link_of_a_cartesian_path(node):
    T_from = _tool(np.array([list(START.values())]), T_FLANGE_SUBFRAME)[0]
    T_to = T_from.copy()
    T_to[:3, 3] += [0.0, 0.1, 0.05]
    request = cartesian_path_request(GROUP, [T_to], 0.005, START, frame="base_link", link="tool/tip")
    _with_tool(request.start_state)
    client = node.client.client(GetCartesianPath, f"{node.namespace}/compute_cartesian_path")
    answer = node.client.call(client, request, CALL_TIMEOUT_S)
    assert answer.error_code.val == MoveItErrorCodes.SUCCESS and answer.fraction == 1.0, answer.error_code.message
    positions = _trajectory(answer.solution)[0]
    tips = _tool(positions, T_FLANGE_SUBFRAME)[:, :3, 3]
    assert _distance_to_segment(tips, T_from[:3, 3], T_to[:3, 3]).max() < ON_LINE
    assert np.linalg.norm(tips[-1] - T_to[:3, 3]) < 1e-6


def test_a_subframe_is_the_link_of_a_plan_goal(node):
    T_from = _tool(np.array([list(START.values())]), T_FLANGE_SUBFRAME)[0]
    T_to = T_from.copy()
    T_to[:3, 3] += [-0.1, 0.1, 0.05]
    request = motion_plan_request(GROUP, [pose_goal("tool/tip", T_to, "base_link", 1e-4, 1e-3)], START)
    _with_tool(request.motion_plan_request.start_state)
    answer = node.plan(request)
    assert answer.error_code.val == MoveItErrorCodes.SUCCESS, answer.error_code.message
    T_reached = _tool(_trajectory(answer.trajectory)[0][-1:], T_FLANGE_SUBFRAME)[0]
    assert np.linalg.norm(T_reached[:3, 3] - T_to[:3, 3]) < 1e-3
    assert np.abs(T_reached[:3, :3] - T_to[:3, :3]).max() < 1e-2


def test_a_lin_through_a_box_is_refused_naming_it(node):
    """Last in this module: the box is removed again before it ends."""
    request = _request("LIN", pose_goal("tool0", _moved((0.0, -0.25, 0.0)), "base_link"))
    box = box_object("crate", 0.05, make_transform(None, tuple(START_POSE[:3, 3] + [0.0, -0.15, 0.0])), "base_link")
    last_published = [-np.inf]

    def refused(obstacle):
        if time.monotonic() - last_published[0] > 1.0:  # again every second: discovery may lose the first
            node.objects.publish(obstacle)
            last_published[0] = time.monotonic()
        answer = node.plan(request)
        return answer if answer.error_code.val != MoveItErrorCodes.SUCCESS else None
    try:
        answer = wait_for(lambda: refused(box), 20.0, "the box to block the line", node.process)
        assert answer.error_code.val == MoveItErrorCodes.INVALID_MOTION_PLAN
        assert "crate" in answer.error_code.message and "LIN is blocked at point" in answer.error_code.message
    finally:
        removal = CollisionObject(id="crate", operation=CollisionObject.REMOVE)
        last_published[0] = -np.inf
        wait_for(lambda: not refused(removal), 20.0, "the box to go", node.process)
