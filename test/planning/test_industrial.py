"""Industrial motions (ROS-free): PTP, LIN and CIRC as Pilz plans them, and blended sequences. Paths are checked
point by point with pinocchio's kinematics (an independent FK): a LIN's tool stays on its line, a CIRC's on its
circle, a sequence's on its lines outside the blend spheres and inside them within; speeds within the scaled
limits; every refusal with MoveIt's code and where and why."""
import math
from pathlib import Path

import numpy as np
import pytest
from reference import PinocchioReference
from robots import example_robot_data_dir, example_robot_urdf

from kinematics_py import ErrorCode, KinematicsPlugin, RobotModel, SemanticModel
from kinematics_py.collision.checker import CollisionChecker
from kinematics_py.collision.geometry import Box
from kinematics_py.geometry.transforms import make_transform
from kinematics_py.planning.cartesian_limits import (
    CartesianLimits,
    CartesianLimitsError,
    cartesian_limits_from_mapping,
    load_cartesian_limits,
)
from kinematics_py.planning.goals import JointGoal, PoseGoal
from kinematics_py.planning.industrial import Circ, Free, IndustrialOptions, Lin, Ptp, plan_motion
from kinematics_py.planning.options import PlanningError
from kinematics_py.planning.path_check import FINE_RESOLUTION, PathCheck
from kinematics_py.planning.sequence import SequenceItem, plan_sequence
from kinematics_py.planning.time_parameterization import JointLimits

PILZ_LIMITS = Path(__file__).parents[1] / "data" / "pilz" / "pilz_cartesian_limits.yaml"
READY = np.array([0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785])
#: moveit_resources' Panda joint_limits.yaml: velocities [rad/s] and accelerations [rad/s^2].
PANDA_LIMITS = JointLimits(np.array([2.175, 2.175, 2.175, 2.175, 2.61, 2.61, 2.61]),
                           np.array([3.75, 1.875, 2.5, 3.125, 3.75, 5.0, 5.0]))
#: Largest distance of a LIN's (CIRC's) tool from its line (circle) at any point [m], as the issue asks.
ON_PATH = 1e-4
#: Relative slack of a speed against its limit (the profile's rounding).
SPEED_SLACK = 1e-6
#: A 4-item LIN sequence: corners relative to the start [m] and their radii [m].
SQUARE = ((0.15, 0.0, 0.0), (0.15, 0.15, 0.0), (0.0, 0.15, 0.0), (0.0, 0.15, 0.12))
RADII = (0.05, 0.05, 0.03, 0.0)
TCP = make_transform(None, (0.0, 0.0, 0.1))


def _panda() -> tuple[str, str, CollisionChecker]:
    """(URDF, SRDF, a collision checker of its own with an empty scene) of example-robot-data's Panda."""
    urdf = example_robot_urdf("panda").read_text()
    srdf = (example_robot_data_dir() / "panda_description/srdf/panda.srdf").read_text()
    model = RobotModel.from_urdf_string(urdf)
    return urdf, srdf, CollisionChecker(model, SemanticModel.from_srdf_string(srdf, model))


@pytest.fixture(scope="module")
def arm():
    urdf, srdf, checker = _panda()
    plugin = KinematicsPlugin()
    assert plugin.initialize(urdf, "arm", "panda_link0", "panda_hand_tcp", robot_description_semantic=srdf)
    return plugin, checker, PinocchioReference(example_robot_urdf("panda"))


def _tool(arm, positions, tcp=None) -> np.ndarray:
    """T_base_tool (points, 4, 4) by pinocchio."""
    plugin, _checker, reference = arm
    names = plugin.getJointNames()
    poses = np.array([reference.chain_pose(dict(zip(names, q)), "panda_link0", "panda_hand_tcp") for q in positions])
    return poses if tcp is None else poses @ tcp


def _start_pose(arm, tcp=None) -> np.ndarray:
    return _tool(arm, READY[None], tcp)[0]


def _moved(T: np.ndarray, offset) -> np.ndarray:
    T = T.copy()
    T[:3, 3] += offset
    return T


def _distance_to_segment(points: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    t = np.clip((points - a) @ (b - a) / ((b - a) @ (b - a)), 0.0, 1.0)
    return np.linalg.norm(points - (a + t[:, None] * (b - a)), axis=1)


def _tool_speeds(arm, plan, tcp=None) -> np.ndarray:
    """The tool's speed [m/s] at each point: its Jacobian times the joint velocities (pinocchio)."""
    plugin, _checker, reference = arm
    names = plugin.getJointNames()
    offset = np.zeros(3) if tcp is None else tcp[:3, 3]
    speeds = []
    for q, qd in zip(plan.positions, plan.timing.velocities):
        values = dict(zip(names, q))
        J = reference.jacobian(values, "panda_link0", "panda_hand_tcp", list(names))
        T = reference.chain_pose(values, "panda_link0", "panda_hand_tcp")
        twist = J @ qd
        speeds.append(np.linalg.norm(twist[:3] + np.cross(twist[3:], T[:3, :3] @ offset)))
    return np.array(speeds)


def test_moveit_resources_pilz_limits_load_unchanged():
    limits = load_cartesian_limits(PILZ_LIMITS.read_text())
    assert limits == CartesianLimits(1.0, 2.25, -5.0, 1.57)
    assert limits.max_rot_acc == pytest.approx(2.25 / 1.0 * 1.57)
    assert cartesian_limits_from_mapping({"robot_description_planning": {"cartesian_limits": {
        "max_trans_vel": 0.5, "max_trans_acc": 1, "max_trans_dec": -2, "max_rot_vel": 1}}}).max_trans_vel == 0.5
    with pytest.raises(CartesianLimitsError, match="max_rot_vel"):
        load_cartesian_limits("cartesian_limits: {max_trans_vel: 1, max_trans_acc: 2, max_trans_dec: -5}")
    with pytest.raises(CartesianLimitsError, match="max_trans_dec must be a finite number < 0"):
        CartesianLimits(max_trans_dec=5.0)


def test_lin_stays_on_its_line_on_a_trapezoid_within_the_scaled_limits(arm):
    plugin, checker, _reference = arm
    T_from = _start_pose(arm)
    T_to = _moved(T_from, (0.25, 0.2, -0.15))
    limits = CartesianLimits(max_trans_vel=0.4, max_trans_acc=0.4)
    options = IndustrialOptions(PANDA_LIMITS, limits, velocity_scaling=0.5, acceleration_scaling=0.5)
    plan = plan_motion(plugin, checker, READY, Lin(PoseGoal(T_to)), options)
    assert plan.success, plan.message
    points = _tool(arm, plan.positions)[:, :3, 3]
    assert _distance_to_segment(points, T_from[:3, 3], T_to[:3, 3]).max() < ON_PATH
    assert np.linalg.norm(points[-1] - T_to[:3, 3]) < ON_PATH
    assert np.abs(np.diff(plan.positions, axis=0)).max() <= options.resolution + 1e-12
    speeds = _tool_speeds(arm, plan)
    top = 0.5 * limits.max_trans_vel
    assert speeds.max() <= top * (1 + SPEED_SLACK) + 1e-9
    cruise = np.flatnonzero(speeds > 0.99 * top)
    assert cruise.size > 10  # it reaches the commanded speed and cruises
    assert np.all(np.diff(speeds[:cruise[0] + 1]) > -1e-9)  # accelerates, then cruises, then decelerates
    assert np.all(speeds[cruise[0]:cruise[-1] + 1] > 0.99 * top)
    assert np.all(np.diff(speeds[cruise[-1]:]) < 1e-9)
    times = plan.timing.time_from_start
    along = np.linalg.norm(points - points[0], axis=1)
    ramp_up = times[cruise[0]]
    assert along[cruise[0]] == pytest.approx(0.5 * top * ramp_up, rel=0.05)  # constant acceleration
    assert top / ramp_up <= 0.5 * limits.max_trans_acc * 1.05
    assert np.all(np.abs(plan.timing.velocities) <= PANDA_LIMITS.max_velocities * 0.5 + 1e-9)


def test_lin_is_slowed_where_the_joints_would_exceed_their_limits(arm):
    plugin, checker, _reference = arm
    T_to = _moved(_start_pose(arm), (0.25, 0.2, -0.15))
    slow = JointLimits(PANDA_LIMITS.max_velocities * 0.05, PANDA_LIMITS.max_accelerations)
    plan = plan_motion(plugin, checker, READY, Lin(PoseGoal(T_to)), IndustrialOptions(slow))
    assert plan.success, plan.message
    assert np.all(np.abs(plan.timing.velocities) <= slow.max_velocities + 1e-9)
    assert _tool_speeds(arm, plan).max() < 0.5 * CartesianLimits().max_trans_vel


def test_ptp_joints_start_and_end_together(arm):
    plugin, checker, _reference = arm
    goal = READY + np.array([0.6, 0.3, -0.4, 0.5, 0.2, -0.3, 0.7])
    options = IndustrialOptions(PANDA_LIMITS, velocity_scaling=0.5)
    plan = plan_motion(plugin, checker, READY, Ptp(JointGoal(goal)), options)
    assert plan.success, plan.message
    velocities = plan.timing.velocities
    assert np.all(velocities[[0, -1]] == 0)
    ratios = velocities[1:-1] / (goal - READY)  # every joint at the same fraction of its move: synchronised
    assert np.allclose(ratios, ratios[:, :1], rtol=1e-9)
    assert np.all(ratios[:, 0] > 0)
    assert np.all(np.abs(velocities) <= PANDA_LIMITS.max_velocities * 0.5 + 1e-9)
    assert np.allclose(plan.positions[-1], goal)


def test_ptp_to_a_pose_and_a_lin_to_a_joint_goal(arm):
    plugin, checker, _reference = arm
    T_to = _moved(_start_pose(arm), (0.1, -0.2, 0.05))
    ptp = plan_motion(plugin, checker, READY, Ptp(PoseGoal(T_to)))
    assert ptp.success, ptp.message
    assert np.linalg.norm(_tool(arm, ptp.positions[-1:])[0, :3, 3] - T_to[:3, 3]) < 1e-6
    lin = plan_motion(plugin, checker, READY, Lin(JointGoal(ptp.positions[-1])))
    assert lin.success, lin.message
    ends = _tool(arm, [lin.positions[-1], ptp.positions[-1]])
    assert np.linalg.norm(ends[0, :3, 3] - ends[1, :3, 3]) < ON_PATH  # the Panda is redundant: the same pose


@pytest.mark.parametrize("kind", ["interim", "center"])
def test_circ_points_lie_on_the_circle(arm, kind):
    plugin, checker, _reference = arm
    T_from = _start_pose(arm)
    centre = T_from[:3, 3] + np.array([0.0, 0.12, 0.0])
    T_to = _moved(T_from, (0.12, 0.12, 0.0))  # a quarter circle of radius 0.12 m about centre
    auxiliary = centre if kind == "center" else centre + 0.12 * np.array([math.sin(0.6), -math.cos(0.6), 0.0])
    plan = plan_motion(plugin, checker, READY, Circ(PoseGoal(T_to), auxiliary, kind))
    assert plan.success, plan.message
    points = _tool(arm, plan.positions)[:, :3, 3]
    assert np.abs(np.linalg.norm(points - centre, axis=1) - 0.12).max() < ON_PATH
    assert np.abs(points[:, 2] - T_from[2, 3]).max() < ON_PATH
    assert _tool_speeds(arm, plan).max() <= CartesianLimits().max_trans_vel * (1 + SPEED_SLACK)


def test_circ_refusals_say_why(arm):
    plugin, checker, _reference = arm
    T_from = _start_pose(arm)
    T_to = _moved(T_from, (0.2, 0.0, 0.0))
    on_line = plan_motion(plugin, checker, READY, Circ(PoseGoal(T_to), T_from[:3, 3] + [0.1, 0, 0], "interim"))
    assert on_line.error_code == ErrorCode.INVALID_MOTION_PLAN and "on a line" in on_line.message
    uneven = plan_motion(plugin, checker, READY, Circ(PoseGoal(T_to), T_from[:3, 3] + [0.05, 0.1, 0], "center"))
    assert uneven.error_code == ErrorCode.INVALID_MOTION_PLAN and "equal distances" in uneven.message
    with pytest.raises(PlanningError, match="'interim', 'center'"):
        Circ(PoseGoal(T_to), (0, 0, 0), "centre")


def test_tcp_puts_the_tool_frame_on_the_line(arm):
    plugin, checker, _reference = arm
    T_from = _start_pose(arm, TCP)
    T_to = _moved(T_from, (0.1, 0.15, 0.05))
    plan = plan_motion(plugin, checker, READY, Lin(PoseGoal(T_to)), IndustrialOptions(tcp=TCP))
    assert plan.success, plan.message
    tool = _tool(arm, plan.positions, TCP)[:, :3, 3]
    assert _distance_to_segment(tool, T_from[:3, 3], T_to[:3, 3]).max() < ON_PATH
    flange = _tool(arm, plan.positions)[:, :3, 3]
    assert np.linalg.norm(flange[-1] - T_to[:3, 3]) > 0.05  # the flange is elsewhere: the tool frame moved


def test_a_blocked_line_is_refused_naming_the_bodies(arm):
    plugin, _checker, _reference = arm
    checker = _panda()[2]
    T_from = _start_pose(arm)
    T_to = _moved(T_from, (0.3, 0.0, 0.0))
    checker.scene.add_object("post", [Box((0.05, 0.3, 0.6))], pose=make_transform(None, T_from[:3, 3] + [0.15, 0, 0]))
    for motion in (Lin(PoseGoal(T_to)), Ptp(PoseGoal(T_to))):
        plan = plan_motion(plugin, checker, READY, motion)
        assert plan.error_code in (ErrorCode.INVALID_MOTION_PLAN, ErrorCode.GOAL_IN_COLLISION), plan.message
        assert "post" in plan.message and "panda_" in plan.message
    unreachable = plan_motion(plugin, _checker, READY, Lin(PoseGoal(_moved(T_from, (1.5, 0.0, 0.0)))))
    assert unreachable.error_code == ErrorCode.NO_IK_SOLUTION and "tool position" in unreachable.message


def test_a_start_in_collision_is_refused_naming_the_bodies(arm):
    plugin, _checker, _reference = arm
    checker = _panda()[2]
    T_from = _start_pose(arm)
    checker.scene.add_object("block", [Box((0.06, 0.06, 0.06))], pose=make_transform(None, T_from[:3, 3]))
    for motion in (Lin(PoseGoal(_moved(T_from, (0.1, 0.0, 0.0)))), Ptp(JointGoal(READY + 0.1))):
        plan = plan_motion(plugin, checker, READY, motion)
        assert plan.error_code == ErrorCode.START_STATE_IN_COLLISION and "block" in plan.message, plan.message


def test_a_free_item_goes_around_what_blocks_the_line_blended_after_a_lin(arm):
    plugin, _checker, _reference = arm
    checker = _panda()[2]
    T_from = _start_pose(arm)
    T_up, T_to = _moved(T_from, (0.0, 0.0, -0.05)), _moved(T_from, (0.3, 0.0, -0.05))
    checker.scene.add_object("cube", [Box((0.05, 0.05, 0.05))], pose=make_transform(None, T_up[:3, 3] + [0.15, 0, 0]))
    blocked = plan_sequence(plugin, checker, READY, [SequenceItem(Lin(PoseGoal(T_up)), 0.02),
                                                     SequenceItem(Lin(PoseGoal(T_to)), 0.0)])
    assert blocked.error_code == ErrorCode.INVALID_MOTION_PLAN and "cube" in blocked.message
    detour = plan_sequence(plugin, checker, READY, [SequenceItem(Lin(PoseGoal(T_up)), 0.02),
                                                    SequenceItem(Free(PoseGoal(T_to)), 0.0)])
    assert detour.success, detour.message
    assert PathCheck(checker, plugin.getJointNames()).first_invalid(detour.positions) < 0
    assert np.abs(np.diff(detour.positions, axis=0)).max() <= FINE_RESOLUTION + 1e-12
    assert np.linalg.norm(_tool(arm, detour.positions[-1:])[0, :3, 3] - T_to[:3, 3]) < 1e-5
    assert np.all(np.diff(detour.timing.time_from_start) > 0)


def _square_items(T_from, radii, motion=Lin):
    return [SequenceItem(motion(PoseGoal(_moved(T_from, corner))), radius) for corner, radius in zip(SQUARE, radii)]


def test_blended_sequence_never_slows_below_a_tenth_and_keeps_to_its_lines(arm):
    plugin, checker, _reference = arm
    T_from = _start_pose(arm)
    options = IndustrialOptions(PANDA_LIMITS, velocity_scaling=0.1)
    blended = plan_sequence(plugin, checker, READY, _square_items(T_from, RADII), options)
    stopping = plan_sequence(plugin, checker, READY, _square_items(T_from, (0, 0, 0, 0)), options)
    assert blended.success and stopping.success, (blended.message, stopping.message)
    commanded = 0.1 * CartesianLimits().max_trans_vel
    for plan, keeps_moving in ((blended, True), (stopping, False)):
        speeds = _tool_speeds(arm, plan)
        moving = np.flatnonzero(speeds >= 0.1 * commanded)
        assert np.all(speeds[moving[0]:moving[-1] + 1] >= 0.1 * commanded) == keeps_moving
        assert speeds.max() <= commanded * (1 + SPEED_SLACK)
    assert blended.timing.time_from_start[-1] < stopping.timing.time_from_start[-1]
    corners = [T_from[:3, 3]] + [T_from[:3, 3] + corner for corner in SQUARE]
    points = _tool(arm, blended.positions)[:, :3, 3]
    for point in points:
        spheres = [k for k in range(3) if np.linalg.norm(point - corners[k + 1]) < RADII[k]]
        if spheres:
            assert np.linalg.norm(point - corners[spheres[0] + 1]) <= RADII[spheres[0]]
        else:
            assert min(_distance_to_segment(point[None], corners[k], corners[k + 1])[0] for k in range(4)) < ON_PATH
    assert [w.blend_radius for w in blended.waypoints] == [0.0, *RADII]
    assert np.abs(np.diff(blended.positions, axis=0)).max() <= options.resolution + 1e-12


def test_sequence_rules_are_refused_with_moveit_codes(arm):
    plugin, checker, _reference = arm
    T_from = _start_pose(arm)
    cases = {(0.05, 0.05, 0.03, 0.02): "last item's blend radius must be 0",
             (0.1, 0.06, 0.0, 0.0): "overlap",
             (-0.01, 0.0, 0.0, 0.0): "finite and >= 0"}
    for radii, reason in cases.items():
        plan = plan_sequence(plugin, checker, READY, _square_items(T_from, radii))
        assert plan.error_code == ErrorCode.INVALID_MOTION_PLAN and reason in plan.message, plan.message
    unreachable = [SequenceItem(Lin(PoseGoal(_moved(T_from, (0.1, 0, 0)))), 0.02),
                   SequenceItem(Lin(PoseGoal(_moved(T_from, (1.5, 0, 0)))), 0.0)]
    plan = plan_sequence(plugin, checker, READY, unreachable)
    assert plan.error_code == ErrorCode.NO_IK_SOLUTION and plan.message.startswith("item 1:")


def test_a_blended_ptp_sequence_flows_through_its_corners(arm):
    plugin, checker, _reference = arm
    T_from = _start_pose(arm)
    plan = plan_sequence(plugin, checker, READY, _square_items(T_from, RADII, Ptp), IndustrialOptions(PANDA_LIMITS))
    assert plan.success, plan.message
    speeds = np.linalg.norm(plan.timing.velocities, axis=1)
    assert np.all(speeds[1:-1] > 0)
    assert np.all(np.abs(plan.timing.velocities) <= PANDA_LIMITS.max_velocities + 1e-9)
