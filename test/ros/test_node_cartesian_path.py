"""compute_cartesian_path over DDS, the node in its own process (the bundled UR5 with its collision geometry).

Properties: a line is followed exactly (every point's tool pose on the line, joints continuous, timed within the
URDF velocity limits and the joint_limits parameters' accelerations, both scaled as requested, at rest at both
ends) and shown on display_planned_path; a path stops before a collision_object box and names it; jump
thresholds and path constraints stop it with the joint or constraint named; waypoints in a TF frame, in the
link's own frame; a link's Cartesian speed limit; MoveIt's error codes for bad requests; IK answers published as
DisplayRobotState.
"""
from __future__ import annotations

import math
import time

import numpy as np
import pytest
from geometry_msgs.msg import Pose, TransformStamped
from moveit_msgs.msg import (
    BoundingVolume,
    CollisionObject,
    DisplayRobotState,
    DisplayTrajectory,
    MoveItErrorCodes,
    PositionConstraint,
)
from moveit_msgs.srv import GetCartesianPath
from node_harness import (
    CALL_TIMEOUT_S,
    NodeUnderTest,
    ik_request,
    module_processes,  # noqa: F401 (fixture)
    serving_node,
    solution_values,
    ur5_parameters,
    wait_for,
)
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from shape_msgs.msg import SolidPrimitive
from tf2_msgs.msg import TFMessage

from kinematics_py.geometry.transforms import invert_transform, make_transform, rotation_about_axis
from kinematics_py.model.robot_model import RobotModel
from kinematics_py.robots import bundled_robot_path
from kinematics_py.ros.demo.client import box_object, cartesian_path_request
from kinematics_py.ros.messages.conversions import transform_msg_from_transform

GROUP = "ur_manipulator"
TIP = "tool0"
MODEL = RobotModel.from_urdf_string(bundled_robot_path("ur5").read_text())
JOINTS = ("shoulder_pan_joint", "shoulder_lift_joint", "elbow_joint", "wrist_1_joint", "wrist_2_joint",
          "wrist_3_joint")
START = dict(zip(JOINTS, (0.0, -1.2, 1.5, -1.9, -1.57, 0.0)))
ELBOW_ACCELERATION = 2.0  # robot_description_planning.joint_limits.elbow_joint.max_acceleration
DEFAULT_ACCELERATION = 1.0  # the documented default of joints without an entry
#: Every point reaches its pose to the solver's thresholds (1e-5); checked looser [m, rad].
POSITION_TOLERANCE = 1e-4
ROTATION_TOLERANCE = 1e-3
#: Largest joint change in a 1 cm step of these lines away from singularities [rad].
CONTINUOUS_STEP = 0.1
LIMIT_SLACK = 1e-3
WAIT_S = 20.0
LATCHED = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL)
SCENE_QOS = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.VOLATILE)


class CartesianNode(NodeUnderTest):
    def __init__(self, process, namespace):
        super().__init__(process, namespace)
        self.cartesian_client = self.client.client(GetCartesianPath, f"{namespace}/compute_cartesian_path")
        self.objects = self.node.create_publisher(CollisionObject, f"{namespace}/collision_object", SCENE_QOS)
        self.tf_static = self.node.create_publisher(TFMessage, "/tf_static", LATCHED)
        self.displayed: list[DisplayTrajectory] = []
        self.ik_answers: list[DisplayRobotState] = []
        self.node.create_subscription(DisplayTrajectory, f"{namespace}/display_planned_path", self.displayed.append,
                                      10)
        self.node.create_subscription(DisplayRobotState, f"{namespace}/ik_answers", self.ik_answers.append, LATCHED)
        self.answering_before_use(self.cartesian_client, GetCartesianPath.Request())

    def cartesian_path(self, request):
        return self.client.call(self.cartesian_client, request, CALL_TIMEOUT_S)

    def spin(self, seconds: float) -> None:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            self.client._executor.spin_once(timeout_sec=0.02)


@pytest.fixture(scope="module")
def node(module_processes, tmp_path_factory):  # noqa: F811 (fixture)
    parameters = ur5_parameters(
        robot_description_planning={"joint_limits": {"elbow_joint": {"has_acceleration_limits": True,
                                                                     "max_acceleration": ELBOW_ACCELERATION}}},
        ik_display_topic="ik_answers")
    with serving_node(module_processes, tmp_path_factory.mktemp("cartesian"), parameters, "cartesian_node", TIP,
                      CartesianNode) as serving:
        yield serving


def tip_pose(values) -> np.ndarray:
    return MODEL.link_poses(dict(values))[TIP]


def shifted(T, offset) -> np.ndarray:
    moved = T.copy()
    moved[:3, 3] += offset
    return moved


def trajectory_arrays(response):
    trajectory = response.solution.joint_trajectory
    assert list(trajectory.joint_names) == list(JOINTS)
    points = trajectory.points
    positions = np.array([p.positions for p in points])
    velocities = np.array([p.velocities for p in points])
    accelerations = np.array([p.accelerations for p in points])
    times = np.array([p.time_from_start.sec + p.time_from_start.nanosec * 1e-9 for p in points])
    return positions, velocities, accelerations, times


def test_line_is_followed_exactly_and_timed_within_the_scaled_limits(node):
    T_start = tip_pose(START)
    T_goal = shifted(T_start, (0.0, 0.3, 0.0))
    request = cartesian_path_request(GROUP, [T_goal], 0.01, START)
    request.max_velocity_scaling_factor, request.max_acceleration_scaling_factor = 0.5, 0.25
    displayed_before = len(node.displayed)
    response = node.cartesian_path(request)

    assert response.error_code.val == MoveItErrorCodes.SUCCESS, response.error_code.message
    assert response.fraction == 1.0 and response.error_code.message.startswith("complete")
    positions, velocities, accelerations, times = trajectory_arrays(response)
    assert len(positions) >= 31
    assert np.allclose(positions[0], list(START.values()))
    along = T_goal[:3, 3] - T_start[:3, 3]
    for q in positions:  # every point on the line, the orientation held
        T = tip_pose(zip(JOINTS, q))
        t = np.dot(T[:3, 3] - T_start[:3, 3], along) / np.dot(along, along)
        assert -1e-6 <= t <= 1 + 1e-6
        assert np.linalg.norm(T_start[:3, 3] + t * along - T[:3, 3]) < POSITION_TOLERANCE
        assert np.allclose(T[:3, :3], T_start[:3, :3], atol=ROTATION_TOLERANCE)
    assert np.linalg.norm(tip_pose(zip(JOINTS, positions[-1]))[:3, 3] - T_goal[:3, 3]) < POSITION_TOLERANCE
    assert np.abs(np.diff(positions, axis=0)).max() < CONTINUOUS_STEP
    max_velocity = 0.5 * np.array([MODEL.joints[name].velocity for name in JOINTS])
    max_acceleration = 0.25 * np.array([ELBOW_ACCELERATION if name == "elbow_joint" else DEFAULT_ACCELERATION
                                        for name in JOINTS])
    assert times[0] == 0.0 and np.all(np.diff(times) > 0)
    assert np.allclose(velocities[[0, -1]], 0.0)
    assert np.all(np.abs(velocities) <= max_velocity * (1 + LIMIT_SLACK))
    assert np.all(np.abs(accelerations) <= max_acceleration * (1 + LIMIT_SLACK))
    assert np.all(np.abs(np.diff(positions, axis=0)) / np.diff(times)[:, None] <= max_velocity * 1.01)

    wait_for(lambda: (node.spin(0.05), len(node.displayed) > displayed_before)[1], WAIT_S,
             "the path on display_planned_path", node.process)
    shown = node.displayed[-1]
    assert shown.model_id == "ur5" and len(shown.trajectory) == 1
    assert len(shown.trajectory[0].joint_trajectory.points) == len(positions)
    assert list(shown.trajectory_start.joint_state.name) == list(MODEL.single_dof_joint_names)


def test_path_stops_before_an_obstacle_and_names_it(node):
    T_start = tip_pose(START)
    T_goal = shifted(T_start, (0.0, 0.3, 0.0))
    wall = box_object("wall", 0.1, make_transform(None, T_start[:3, 3] + (0.0, 0.2, 0.0)), "")
    request = cartesian_path_request(GROUP, [T_goal], 0.01, START)
    last_published = [-math.inf]

    def blocked():
        if time.monotonic() - last_published[0] > 1.0:  # again every second: discovery may lose the first
            node.objects.publish(wall)
            last_published[0] = time.monotonic()
        answer = node.cartesian_path(request)
        return answer if answer.fraction < 1.0 else None
    try:
        response = wait_for(blocked, WAIT_S, "the wall to stop the path", node.process)
        assert response.error_code.val == MoveItErrorCodes.SUCCESS  # a partial path is a success, as in MoveIt
        message = response.error_code.message
        assert "in collision" in message and "wall" in message and "toward waypoint 0" in message
        assert 0.2 < response.fraction < 0.7
        positions, *_ = trajectory_arrays(response)
        assert tip_pose(zip(JOINTS, positions[-1]))[1, 3] < T_start[1, 3] + 0.2 - 0.05  # before the wall

        request.avoid_collisions = False  # through the wall when collisions are not checked
        assert node.cartesian_path(request).fraction == 1.0
    finally:
        node.objects.publish(CollisionObject(id="wall", operation=CollisionObject.REMOVE))


def test_revolute_jump_threshold_stops_at_the_joint_that_jumps(node):
    request = cartesian_path_request(GROUP, [shifted(tip_pose(START), (0.0, 0.3, 0.0))], 0.05, START)
    request.revolute_jump_threshold = 0.005
    response = node.cartesian_path(request)
    assert response.error_code.val == MoveItErrorCodes.SUCCESS
    assert response.fraction == 0.0 and len(response.solution.joint_trajectory.points) == 1
    assert "revolute_jump_threshold 0.005" in response.error_code.message and "joint '" in response.error_code.message

    request.revolute_jump_threshold, request.jump_threshold = 0.5, 10.0  # generous thresholds pass a smooth line
    assert node.cartesian_path(request).fraction == 1.0


def test_relative_jump_threshold_cuts_before_a_jump(node):
    """Next to the wrist singularity (wrist 2 at 0.05 rad), the first step of this line turns the wrist far more
    than the mean step."""
    start = {**START, "wrist_2_joint": 0.05}
    request = cartesian_path_request(GROUP, [shifted(tip_pose(start), (0.0, 0.2, 0.0))], 0.01, start)
    assert node.cartesian_path(request).fraction == 1.0
    request.jump_threshold = 2.0
    response = node.cartesian_path(request)
    assert response.error_code.val == MoveItErrorCodes.SUCCESS and response.fraction == 0.0
    assert "exceeds jump_threshold 2 x the mean step" in response.error_code.message
    assert "joint 'wrist_" in response.error_code.message


def test_path_constraint_ends_the_path_where_it_is_left(node):
    T_start = tip_pose(START)
    request = cartesian_path_request(GROUP, [shifted(T_start, (0.0, 0.3, 0.0))], 0.01, START)
    region = BoundingVolume(primitives=[SolidPrimitive(type=SolidPrimitive.BOX, dimensions=[0.2, 0.3, 0.2])])
    center = Pose()
    center.position.x, center.position.y, center.position.z = T_start[:3, 3] + (0.0, 0.0, 0.0)
    center.orientation.w = 1.0
    region.primitive_poses = [center]  # the line's first half (tool y within +-0.15 of the start)
    request.path_constraints.position_constraints = [PositionConstraint(link_name=TIP, constraint_region=region)]
    response = node.cartesian_path(request)

    assert response.error_code.val == MoveItErrorCodes.SUCCESS
    assert 0.4 < response.fraction < 0.6
    assert "path constraint violated: position constraint on 'tool0'" in response.error_code.message


def test_waypoints_in_a_tf_frame_and_in_the_link_frame(node):
    T_model_work = make_transform(rotation_about_axis(np.array([0.0, 0.0, 1.0]), 0.7), (0.2, -0.1, 0.05))
    stamped = TransformStamped(child_frame_id="work_frame", transform=transform_msg_from_transform(T_model_work))
    stamped.header.frame_id = "base_link"
    T_goal = shifted(tip_pose(START), (0.05, 0.1, -0.05))
    in_work_frame = cartesian_path_request(GROUP, [invert_transform(T_model_work) @ T_goal], 0.01, START,
                                           frame="work_frame")

    def answered():
        node.tf_static.publish(TFMessage(transforms=[stamped]))
        answer = node.cartesian_path(in_work_frame)
        return answer if answer.error_code.val != MoveItErrorCodes.FRAME_TRANSFORM_FAILURE else None
    response = wait_for(answered, WAIT_S, "the node to know work_frame", node.process)
    assert response.fraction == 1.0, response.error_code.message
    positions, *_ = trajectory_arrays(response)
    assert np.linalg.norm(tip_pose(zip(JOINTS, positions[-1]))[:3, 3] - T_goal[:3, 3]) < POSITION_TOLERANCE

    along_tool_z = cartesian_path_request(GROUP, [make_transform(None, (0.0, 0.0, 0.05))], 0.01, START, frame=TIP)
    response = node.cartesian_path(along_tool_z)
    assert response.fraction == 1.0, response.error_code.message
    positions, *_ = trajectory_arrays(response)
    expected = tip_pose(START) @ make_transform(None, (0.0, 0.0, 0.05))
    assert np.linalg.norm(tip_pose(zip(JOINTS, positions[-1]))[:3, 3] - expected[:3, 3]) < POSITION_TOLERANCE

    unknown = cartesian_path_request(GROUP, [T_goal], 0.01, START, frame="no_such_frame")
    assert node.cartesian_path(unknown).error_code.val == MoveItErrorCodes.FRAME_TRANSFORM_FAILURE


@pytest.mark.parametrize("change, code, words", [
    ({"group_name": "no_group"}, MoveItErrorCodes.INVALID_GROUP_NAME, "unknown group 'no_group'"),
    ({"max_step": 0.0}, MoveItErrorCodes.FAILURE, "max_step"),
    ({"link_name": "no_link"}, MoveItErrorCodes.INVALID_LINK_NAME, "no_link"),
    ({"max_velocity_scaling_factor": 2.0}, MoveItErrorCodes.FAILURE, "max_velocity_scaling_factor"),
    ({"jump_threshold": math.nan}, MoveItErrorCodes.FAILURE, "jump_threshold"),
    ({"max_cartesian_speed": math.inf}, MoveItErrorCodes.FAILURE, "max_cartesian_speed"),
    ({"max_cartesian_speed": 0.1, "cartesian_speed_limited_link": "no_link"}, MoveItErrorCodes.INVALID_LINK_NAME,
     "cartesian_speed_limited_link"),
])
def test_bad_requests_get_moveit_error_codes(node, change, code, words):
    request = cartesian_path_request(GROUP, [shifted(tip_pose(START), (0.0, 0.05, 0.0))], 0.01, START)
    for name, value in change.items():
        setattr(request, name, value)
    response = node.cartesian_path(request)
    assert response.error_code.val == code and words in response.error_code.message
    assert response.fraction == 0.0


def test_cartesian_speed_limit_of_a_link(node):
    T_start = tip_pose(START)
    request = cartesian_path_request(GROUP, [shifted(T_start, (0.0, 0.2, 0.0))], 0.01, START)
    request.max_cartesian_speed, request.cartesian_speed_limited_link = 0.05, TIP
    response = node.cartesian_path(request)

    assert response.fraction == 1.0, response.error_code.message
    positions, _, _, times = trajectory_arrays(response)
    tool = np.array([tip_pose(zip(JOINTS, q))[:3, 3] for q in positions])
    speeds = np.linalg.norm(np.diff(tool, axis=0), axis=1) / np.diff(times)
    assert speeds.max() <= 0.05 * 1.01 and times[-1] >= 0.2 / 0.05


def test_waypoint_that_is_not_finite(node):
    request = cartesian_path_request(GROUP, [shifted(tip_pose(START), (0.0, 0.05, 0.0))], 0.01, START)
    request.waypoints[0].position.x = math.nan
    response = node.cartesian_path(request)
    assert response.error_code.val == MoveItErrorCodes.INVALID_GOAL_CONSTRAINTS
    assert "waypoints[0]" in response.error_code.message


def test_ik_answers_are_published_as_display_robot_states(node):
    T_goal = shifted(tip_pose(START), (0.0, 0.05, 0.0))
    response = node.ik(ik_request(GROUP, T_goal, seed=START, timeout=0.5))
    assert response.error_code.val == MoveItErrorCodes.SUCCESS
    expected = solution_values(response)

    def shown():
        node.spin(0.05)
        return any(dict(zip(s.state.joint_state.name, s.state.joint_state.position)) == expected
                   for s in node.ik_answers)
    wait_for(shown, WAIT_S, "the IK answer on ik_answers", node.process)
