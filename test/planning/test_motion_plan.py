"""plan (ROS-free): collision-free motions to one of several goals. Trajectories are collision-free at every
point by an independent check (pinocchio's own kinematics and the exact meshes), their points at most the checking
resolution apart, within the limits and timed within the scaled velocity and acceleration limits; goals are
chosen as asked (shortest path, list order); pose goals, touch approaches and retractions follow straight lines;
every failure says why with MoveIt's code."""
import math
import time
from dataclasses import replace

import coal
import numpy as np
import pytest
from reference import PinocchioCollisions
from robots import example_robot_data_dir, example_robot_urdf

from kinematics_py import ErrorCode, KinematicsPlugin, RobotModel, SemanticModel
from kinematics_py.collision.checker import CollisionChecker
from kinematics_py.collision.geometry import Box
from kinematics_py.geometry.poses import transform_from_any_pose
from kinematics_py.geometry.transforms import make_transform, rotation_from_rpy
from kinematics_py.ik.budget import Budget
from kinematics_py.model.constraints import SPHERE, JointBound, PositionRegion, RequestConstraints
from kinematics_py.planning.goals import GoalError, JointGoal, PoseGoal
from kinematics_py.planning.motion import plan, timed_trajectory
from kinematics_py.planning.ompl_search import PLANNER_IDS, PlannerError
from kinematics_py.planning.options import Approach, PlanningError, PlanOptions
from kinematics_py.planning.path_check import FINE_RESOLUTION, PathCheck
from kinematics_py.planning.time_parameterization import JointLimits
from kinematics_py.state_check import StateCheck

PANDA_SRDF = "panda_description/srdf/panda.srdf"
READY = np.array([0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785])
#: A table and a wall standing on it between the two sides of the robot (centre, size) [m].
BOXES = {"table": ((0.6, 0.0, 0.0), (0.8, 1.6, 0.04)), "wall": ((0.5, 0.0, 0.32), (0.04, 1.2, 0.6))}
#: Either side of the wall, both collision-free; the straight joint motion between them hits the wall.
LEFT = np.array([1.2, 0.6, 0.0, -1.6, 0.0, 2.2, 0.785])
RIGHT = np.array([-1.2, 0.6, 0.0, -1.6, 0.0, 2.2, 0.785])
IN_WALL = np.array([0.0, 0.6, 0.0, -1.6, 0.0, 2.2, 0.785])
TIME = 2.0
OPTIONS = PlanOptions(planning_time=TIME)


@pytest.fixture(scope="module")
def arm():
    urdf = example_robot_urdf("panda").read_text()
    srdf = (example_robot_data_dir() / PANDA_SRDF).read_text()
    model = RobotModel.from_urdf_string(urdf)
    checker = CollisionChecker(model, SemanticModel.from_srdf_string(srdf, model))
    reference = PinocchioCollisions("panda")
    for name, (centre, size) in BOXES.items():
        checker.scene.add_object(name, [Box(size)], pose=make_transform(None, centre))
        reference.add_world_object(name, coal.Box(*size), make_transform(None, centre))
    plugin = KinematicsPlugin()
    assert plugin.initialize(urdf, "arm", "panda_link0", "panda_hand_tcp", robot_description_semantic=srdf)
    return plugin, checker, reference


def _colliding_points(arm, positions) -> list[int]:
    plugin, _checker, reference = arm
    names = plugin.getJointNames()
    return [k for k, q in enumerate(positions) if reference.colliding_pairs(dict(zip(names, q)))]


def _assert_valid_trajectory(arm, result, limits: JointLimits | None = None, scaling: float = 1.0):
    plugin, checker, _reference = arm
    assert result.success, result.message
    positions, timing = result.positions, result.timing
    assert np.abs(np.diff(positions, axis=0)).max() <= FINE_RESOLUTION + 1e-12
    assert not _colliding_points(arm, positions)
    model = plugin.robot_model
    lower = np.array([model.joints[n].lower for n in plugin.getJointNames()])
    upper = np.array([model.joints[n].upper for n in plugin.getJointNames()])
    assert np.all(positions >= lower - 1e-9) and np.all(positions <= upper + 1e-9)
    assert np.all(np.diff(timing.time_from_start) > 0)
    if limits is not None:
        assert np.all(np.abs(timing.velocities) <= limits.max_velocities * scaling * (1 + 1e-6))
        assert np.all(np.abs(timing.accelerations) <= limits.max_accelerations * scaling * (1 + 1e-6))
    for waypoint in result.waypoints:  # every waypoint is a trajectory point
        assert np.abs(positions - waypoint.positions).max(axis=1).min() < 1e-12


def test_the_scene_makes_a_detour_necessary(arm):
    plugin, checker, _reference = arm
    check = PathCheck(checker, plugin.getJointNames())
    assert check.state_free(LEFT) and check.state_free(RIGHT) and not check.state_free(IN_WALL)
    assert not check.segment_free(LEFT, RIGHT)


def test_plan_around_the_wall_is_collision_free_at_every_point_and_within_the_limits(arm):
    plugin, checker, _ = arm
    limits = JointLimits(np.full(7, 2.0), np.full(7, 4.0))
    options = PlanOptions(planning_time=TIME, limits=limits, velocity_scaling=0.5, acceleration_scaling=0.5)
    result = plan(plugin, checker, LEFT, [JointGoal(RIGHT)], options)
    _assert_valid_trajectory(arm, result, limits, 0.5)
    assert len(result.waypoints) > 2 and result.goal_index == 0
    np.testing.assert_allclose(result.positions[0], LEFT)
    np.testing.assert_allclose(result.positions[-1], RIGHT)


def test_blend_radii_are_at_most_half_the_neighbouring_segments_and_their_blends_are_free(arm):
    from kinematics_py.planning.blending import blend_curve

    plugin, checker, _ = arm
    assert not any(w.blend_radius for w in plan(plugin, checker, LEFT, [JointGoal(RIGHT)], OPTIONS).waypoints)
    result = plan(plugin, checker, LEFT, [JointGoal(RIGHT)], replace(OPTIONS, blend_radii=True))
    points = [w.positions for w in result.waypoints]
    assert any(w.blend_radius > 0 for w in result.waypoints), [w.blend_radius for w in result.waypoints]
    assert result.waypoints[0].blend_radius == result.waypoints[-1].blend_radius == 0.0
    for i in range(1, len(points) - 1):
        radius = result.waypoints[i].blend_radius
        incoming, outgoing = points[i] - points[i - 1], points[i + 1] - points[i]
        assert 0.0 <= radius <= 0.5 * min(np.linalg.norm(incoming), np.linalg.norm(outgoing)) + 1e-12
        if radius > 0:
            before = points[i] - radius * incoming / np.linalg.norm(incoming)
            after = points[i] + radius * outgoing / np.linalg.norm(outgoing)
            assert not _colliding_points(arm, blend_curve(before, points[i], after, FINE_RESOLUTION))


def test_a_blended_plan_flows_through_its_waypoints_within_their_radii(arm):
    plugin, checker, _ = arm
    limits = JointLimits(np.full(7, 2.0), np.full(7, 4.0))
    options = PlanOptions(planning_time=TIME, limits=limits, blend=True)
    result = plan(plugin, checker, LEFT, [JointGoal(RIGHT)], options)
    assert result.success, result.message
    radii = [w.blend_radius for w in result.waypoints]
    assert any(radius > 0 for radius in radii[1:-1]), radii
    positions, timing = result.positions, result.timing
    assert np.abs(np.diff(positions, axis=0)).max() <= FINE_RESOLUTION + 1e-12
    assert not _colliding_points(arm, positions)
    assert np.all(np.abs(timing.velocities) <= limits.max_velocities * (1 + 1e-6))
    assert np.all(np.abs(timing.accelerations) <= limits.max_accelerations * (1 + 1e-6))
    np.testing.assert_allclose(positions[[0, -1]], [LEFT, RIGHT])
    speeds = np.linalg.norm(timing.velocities, axis=1)
    for waypoint in result.waypoints[1:-1]:
        distances = np.abs(positions - waypoint.positions).max(axis=1)
        nearest = int(np.argmin(distances))
        if waypoint.blend_radius > 0:  # it passes the corner within the radius, moving
            assert np.linalg.norm(positions[nearest] - waypoint.positions) <= waypoint.blend_radius
            assert distances[nearest] > 1e-9 and speeds[nearest] > 0
        else:  # it stops there
            assert distances[nearest] < 1e-12 and speeds[nearest] == 0
    _positions, stopping = timed_trajectory(result.waypoints, limits, FINE_RESOLUTION)  # the same path, stopping
    assert timing.time_from_start[-1] < stopping.time_from_start[-1]


def test_blends_of_half_a_segment_meet_without_a_repeated_point():
    from kinematics_py.planning.blending import blended_path

    corners = [np.zeros(2), np.array([1.0, 0.0]), np.array([1.0, 1.0]), np.array([2.0, 1.0])]
    positions, stops = blended_path(corners, ["joint"] * 4, [0.0, 0.5, 0.5, 0.0], FINE_RESOLUTION)
    steps = np.abs(np.diff(positions, axis=0)).max(axis=1)
    assert steps.min() > 0 and steps.max() <= FINE_RESOLUTION + 1e-12 and stops == []
    np.testing.assert_allclose(positions[[0, -1]], [corners[0], corners[-1]])


def test_a_linear_corner_s_blend_replaces_the_points_within_its_radius_of_tool_travel():
    from kinematics_py.planning.blending import blended_path

    def tool(positions):  # a plane arm whose tool is where its two joints say [m]
        return np.column_stack([positions, np.zeros(len(positions))])

    corners = [np.zeros(2), np.array([1.0, 0.0])] + [np.array([1.0, 0.1 * k]) for k in range(1, 11)]
    motions = ["joint", "joint"] + ["linear"] * 10
    radius = 0.3
    positions, stops = blended_path(corners, motions, [0.0, radius] + [0.0] * 10, FINE_RESOLUTION, tool)
    assert stops == []  # not at the corner, nor inside the linear run
    steps = np.abs(np.diff(positions, axis=0)).max(axis=1)
    assert steps.min() > 0 and steps.max() <= FINE_RESOLUTION + 1e-12
    np.testing.assert_allclose(positions[[0, -1]], [corners[0], corners[-1]])
    distances = np.linalg.norm(positions - corners[1], axis=1)
    outside = distances >= radius + FINE_RESOLUTION
    on_path = np.isclose(positions[:, 1], 0.0) | np.isclose(positions[:, 0], 1.0)
    assert np.all(on_path[outside])  # outside the sphere: exactly the moves' path
    assert 0 < distances.min() <= radius  # inside it: the curve, short of the corner
    assert not np.any(on_path[distances < radius - FINE_RESOLUTION])
    unblended, corner_stop = blended_path(corners, motions, [0.0] * 12, FINE_RESOLUTION, tool)
    assert corner_stop == [int(np.argmin(np.linalg.norm(unblended - corners[1], axis=1)))]


def test_a_free_straight_motion_is_the_path(arm):
    plugin, checker, _ = arm
    goal = LEFT + np.array([0.2, 0.0, 0.0, 0.1, 0.0, 0.0, 0.0])
    result = plan(plugin, checker, LEFT, [JointGoal(goal)], OPTIONS)
    _assert_valid_trajectory(arm, result)
    assert [w.motion for w in result.waypoints] == ["joint", "joint"]


def test_several_goals_with_one_reachable_reach_that_one(arm):
    plugin, checker, _ = arm
    outside = RIGHT.copy()
    outside[3] = 0.5  # panda_joint4 is limited to [-3.07, -0.07]
    result = plan(plugin, checker, LEFT, [JointGoal(IN_WALL), JointGoal(outside), JointGoal(RIGHT)],
                  PlanOptions(planning_time=TIME, diagnose=True))
    _assert_valid_trajectory(arm, result)
    assert result.goal_index == 2
    start, in_wall, out_of_limits, reached = result.diagnosis
    assert start.valid and reached.valid
    assert any("wall" in pair for pair in in_wall.collisions)
    assert out_of_limits.limit_violations and "panda_joint4" in out_of_limits.limit_violations[0]


def test_shortest_path_takes_the_nearer_goal_and_list_order_the_first(arm):
    plugin, checker, _ = arm
    near = LEFT + np.array([0.0, 0.0, 0.0, 0.0, 0.3, 0.0, 0.0])
    shortest = plan(plugin, checker, LEFT, [JointGoal(RIGHT), JointGoal(near)], OPTIONS)
    first = plan(plugin, checker, LEFT, [JointGoal(RIGHT), JointGoal(near)],
                 PlanOptions(planning_time=TIME, prioritization="list_order"))
    assert (shortest.goal_index, first.goal_index) == (1, 0), (shortest.message, first.message)
    _assert_valid_trajectory(arm, first)


def test_pose_goal_ends_at_the_pose(arm):
    plugin, checker, _ = arm
    _ok, (pose,) = plugin.getPositionFK(plugin.getTipFrames(), RIGHT.tolist())
    result = plan(plugin, checker, LEFT, [PoseGoal(pose)], OPTIONS)
    _assert_valid_trajectory(arm, result)
    _ok, (reached,) = plugin.getPositionFK(plugin.getTipFrames(), result.positions[-1].tolist())
    np.testing.assert_allclose(transform_from_any_pose(reached), transform_from_any_pose(pose), atol=1e-5)


def _tip_positions(plugin, positions):
    return np.array([transform_from_any_pose(plugin.getPositionFK(plugin.getTipFrames(), q.tolist())[1][0])[:3, 3]
                     for q in positions])


def test_touch_ends_with_a_straight_approach_and_the_next_plan_retracts_the_way_it_came(arm):
    plugin, checker, _ = arm
    _ok, (pose,) = plugin.getPositionFK(plugin.getTipFrames(), RIGHT.tolist())
    T_touch = transform_from_any_pose(pose)
    touch = plan(plugin, checker, LEFT, [PoseGoal(pose)],
                 PlanOptions(motion="touch", approach=Approach(0.1), planning_time=TIME))
    _assert_valid_trajectory(arm, touch)
    linear = [w.positions for w in touch.waypoints if w.motion == "linear"]
    assert linear, touch.waypoints
    tips = _tip_positions(plugin, [touch.waypoints[-len(linear) - 1].positions, *linear])
    np.testing.assert_allclose(tips[-1], T_touch[:3, 3], atol=1e-5)
    np.testing.assert_allclose(tips[0], T_touch[:3, 3] - 0.1 * T_touch[:3, 2], atol=1e-5)
    offsets = tips - tips[0]
    along = offsets @ T_touch[:3, 2]
    np.testing.assert_allclose(offsets, along[:, None] * T_touch[:3, 2], atol=1e-4)  # on the tool axis
    np.testing.assert_allclose(touch.retraction.direction, -T_touch[:3, 2], atol=1e-9)

    back = plan(plugin, checker, touch.positions[-1], [JointGoal(LEFT)],
                PlanOptions(retract=touch.retraction, planning_time=TIME))
    _assert_valid_trajectory(arm, back)
    motions = [w.motion for w in back.waypoints]
    retraction = back.waypoints[:motions.index("joint", 1)]
    tips = _tip_positions(plugin, [w.positions for w in retraction])
    np.testing.assert_allclose(tips[-1], T_touch[:3, 3] - 0.1 * T_touch[:3, 2], atol=1e-4)


def _assert_flows_through_its_linear_corner(arm, result, limits: JointLimits) -> float:
    """A blended plan's corner where its joint and linear parts meet has a radius r > 0 [m of tip travel]; the
    trajectory passes the corner's tip position within r, moving, and keeps to the linear part's line outside the
    sphere; every point collision-free and within the limits. Returns r."""
    plugin = arm[0]
    motions = [w.motion for w in result.waypoints]
    (corner,) = [i for i in range(1, len(motions) - 1) if "linear" in motions[i:i + 2] and "joint" in motions[i:i + 2]]
    radius = result.waypoints[corner].blend_radius
    assert radius > 0, [w.blend_radius for w in result.waypoints]
    positions, timing = result.positions, result.timing
    assert np.abs(np.diff(positions, axis=0)).max() <= FINE_RESOLUTION + 1e-12
    assert not _colliding_points(arm, positions)
    assert np.all(np.abs(timing.velocities) <= limits.max_velocities * (1 + 1e-6))
    assert np.all(np.abs(timing.accelerations) <= limits.max_accelerations * (1 + 1e-6))
    tips = _tip_positions(plugin, positions)
    corner_tip = _tip_positions(plugin, [result.waypoints[corner].positions])[0]
    distances = np.linalg.norm(tips - corner_tip, axis=1)
    nearest = int(np.argmin(distances))
    assert distances[nearest] <= radius and np.linalg.norm(timing.velocities[nearest]) > 0
    linear = [k for k, m in enumerate(motions) if m == "linear"]
    line = _tip_positions(plugin, [result.waypoints[k].positions for k in (linear[0] - 1, linear[-1])])
    axis = (line[1] - line[0]) / np.linalg.norm(line[1] - line[0])
    linear_side = np.arange(len(tips)) > nearest if motions[corner + 1] == "linear" else \
        np.arange(len(tips)) < nearest
    outside = linear_side & (distances > radius)
    assert outside.any()
    offsets = tips[outside] - line[0]
    np.testing.assert_allclose(offsets, (offsets @ axis)[:, None] * axis, atol=1e-4)  # on the line
    return radius


def test_a_blended_touch_and_retraction_flow_through_the_corner_between_joint_and_linear_parts(arm):
    plugin, checker, _ = arm
    limits = JointLimits(np.full(7, 2.0), np.full(7, 4.0))
    _ok, (pose,) = plugin.getPositionFK(plugin.getTipFrames(), RIGHT.tolist())
    touch = plan(plugin, checker, LEFT, [PoseGoal(pose)], PlanOptions(
        motion="touch", approach=Approach(0.1), planning_time=TIME, limits=limits, blend=True))
    assert touch.success, touch.message
    _assert_flows_through_its_linear_corner(arm, touch, limits)
    np.testing.assert_allclose(_tip_positions(plugin, touch.positions[-1:])[0],
                               transform_from_any_pose(pose)[:3, 3], atol=1e-5)

    back = plan(plugin, checker, touch.positions[-1], [JointGoal(LEFT)], PlanOptions(
        retract=touch.retraction, planning_time=TIME, limits=limits, blend=True))
    assert back.success, back.message
    _assert_flows_through_its_linear_corner(arm, back, limits)
    np.testing.assert_allclose(back.positions[[0, -1]], [touch.positions[-1], LEFT], atol=1e-12)


def test_a_tool_frame_goal_puts_the_tool_frame_on_the_pose_and_touches_along_its_axis(arm):
    plugin, checker, _ = arm
    T_tip_tool = make_transform(rotation_from_rpy(0.0, 0.4, 0.0), (0.0, 0.02, 0.1))  # a tilted tool 10 cm out
    _ok, (pose,) = plugin.getPositionFK(plugin.getTipFrames(), RIGHT.tolist())
    T_tool = transform_from_any_pose(pose) @ T_tip_tool
    free = plan(plugin, checker, LEFT, [PoseGoal(T_tool, tcp=T_tip_tool)], OPTIONS)
    _assert_valid_trajectory(arm, free)
    _ok, (reached,) = plugin.getPositionFK(plugin.getTipFrames(), free.positions[-1].tolist())
    np.testing.assert_allclose(transform_from_any_pose(reached) @ T_tip_tool, T_tool, atol=1e-5)
    touch = plan(plugin, checker, LEFT, [PoseGoal(T_tool, tcp=T_tip_tool)],
                 PlanOptions(motion="touch", approach=Approach(0.05), planning_time=TIME))
    _assert_valid_trajectory(arm, touch)
    linear = [w.positions for w in touch.waypoints if w.motion == "linear"]
    tools = np.array([transform_from_any_pose(plugin.getPositionFK(plugin.getTipFrames(), q.tolist())[1][0])
                      @ T_tip_tool for q in [touch.waypoints[-len(linear) - 1].positions, *linear]])[:, :3, 3]
    np.testing.assert_allclose(tools[-1], T_tool[:3, 3], atol=1e-5)
    np.testing.assert_allclose(tools[0], T_tool[:3, 3] - 0.05 * T_tool[:3, 2], atol=1e-5)  # along the tool's axis


def test_path_constraint_holds_at_every_point(arm):
    plugin, checker, _ = arm

    elbow_kept = JointBound("panda_joint4", -2.0, -1.2, False, -1.6)  # panda_joint4 stays within [-2.0, -1.2]
    result = plan(plugin, checker, LEFT, [JointGoal(RIGHT)], OPTIONS,
                  path_check=_path_check(plugin, RequestConstraints(joint_bounds=(elbow_kept,))))
    _assert_valid_trajectory(arm, result)
    assert np.all((result.positions[:, 3] >= -2.0) & (result.positions[:, 3] <= -1.2))


@pytest.mark.parametrize("start, code, failure, words", [
    (IN_WALL, ErrorCode.START_STATE_IN_COLLISION, "blocked_start", "wall"),
    (np.where(np.arange(7) == 3, 0.5, LEFT), ErrorCode.START_STATE_INVALID, "blocked_start", "panda_joint4"),
])
def test_a_blocked_start_says_why(arm, start, code, failure, words):
    plugin, checker, _ = arm
    result = plan(plugin, checker, start, [JointGoal(RIGHT)], OPTIONS)
    assert (result.success, result.error_code, result.failure) == (False, code, failure), result.message
    assert words in result.message


def test_every_goal_blocked_or_outside_the_limits_says_why(arm):
    plugin, checker, _ = arm
    blocked = plan(plugin, checker, LEFT, [JointGoal(IN_WALL)], OPTIONS)
    assert (blocked.error_code, blocked.failure) == (ErrorCode.GOAL_IN_COLLISION, "blocked_goals")
    assert "wall" in blocked.message
    outside = plan(plugin, checker, LEFT, [JointGoal(np.where(np.arange(7) == 3, 0.5, RIGHT))], OPTIONS)
    assert (outside.error_code, outside.failure) == (ErrorCode.GOAL_STATE_INVALID, "goals_outside_limits")
    assert "panda_joint4" in outside.message
    far = plan(plugin, checker, LEFT, [PoseGoal(make_transform(None, (3.0, 0.0, 0.5)))], OPTIONS)
    assert (far.error_code, far.failure) == (ErrorCode.NO_IK_SOLUTION, "no_goal_solution"), far.message


def test_a_free_goal_that_no_path_reaches_is_a_timeout_with_the_planning_time(arm):
    plugin, checker, _ = arm

    # the tip stays within 5 cm of where it is at LEFT or at RIGHT: two separate regions
    spheres = tuple((SPHERE, (0.05,), make_transform(None, _tip_positions(plugin, [q])[0])) for q in (LEFT, RIGHT))
    barrier = PositionRegion(plugin.getTipFrames()[0], np.zeros(3), plugin.robot_model.root_link, np.eye(4), spheres)
    result = plan(plugin, checker, LEFT, [JointGoal(RIGHT)], PlanOptions(planning_time=0.3, diagnose=True),
                  path_check=_path_check(plugin, RequestConstraints(position_regions=(barrier,))))
    assert (result.error_code, result.failure) == (ErrorCode.TIMED_OUT, "blocked_path"), result.message
    assert "0.3 s" in result.message
    assert all(report.valid for report in result.diagnosis)


def test_a_budget_whose_deadline_ends_the_search_is_a_timeout_not_a_stop(arm):
    """A node's scheduler ends its request's plan through the stop hook once the request's deadline passes: that is
    TIMED_OUT, as the plan's own planning time is; a stop before the deadline is PREEMPTED."""
    plugin, checker, _ = arm
    spheres = tuple((SPHERE, (0.05,), make_transform(None, _tip_positions(plugin, [q])[0])) for q in (LEFT, RIGHT))
    barrier = PositionRegion(plugin.getTipFrames()[0], np.zeros(3), plugin.robot_model.root_link, np.eye(4), spheres)
    deadline = time.monotonic() + 0.3
    result = plan(plugin, checker, LEFT, [JointGoal(RIGHT)], PlanOptions(planning_time=30.0),
                  path_check=_path_check(plugin, RequestConstraints(position_regions=(barrier,))),
                  budget=Budget(lambda: time.monotonic() >= deadline, deadline))
    assert (result.error_code, result.failure) == (ErrorCode.TIMED_OUT, "blocked_path"), result.message
    assert "30 s" not in result.message


def test_a_stop_request_ends_planning_with_preempted(arm):
    plugin, checker, _ = arm
    result = plan(plugin, checker, LEFT, [JointGoal(RIGHT)], PlanOptions(planning_time=30.0),
                  budget=Budget(lambda: True))
    assert (result.error_code, result.failure) == (ErrorCode.PREEMPTED, "stopped"), result.message


@pytest.mark.parametrize("planner_id", PLANNER_IDS)
def test_every_named_planner_plans_around_the_wall(arm, planner_id):
    plugin, checker, _ = arm
    result = plan(plugin, checker, LEFT, [JointGoal(RIGHT)], PlanOptions(planner_id=planner_id, planning_time=5.0))
    _assert_valid_trajectory(arm, result)


@pytest.mark.parametrize("arguments, words", [
    ({"planner_id": "CHOMP"}, "RRTConnect"),
    ({"prioritization": "nearest"}, "shortest_path"),
    ({"motion": "jump"}, "touch"),
    ({"motion": "touch"}, "approach"),
    ({"planning_time": 0.0}, "planning_time"),
    ({"planning_time": math.nan}, "planning_time"),
    ({"retract": Approach(-0.1)}, "retract distance"),
    ({"retract": Approach(0.1, (0.0, 0.0, 0.0))}, "non-zero 3-vector"),
    ({"attempts": 0}, "attempts"),
    ({"velocity_scaling": 0.0}, "velocity_scaling"),
    ({"resolution": -0.01}, "resolution"),
    ({"blend": 1}, "blend must be True or False"),
    ({"blend_radii": "yes"}, "blend_radii must be True or False"),
])
def test_malformed_options_raise_naming_the_valid_choices(arguments, words):
    with pytest.raises((PlanningError, PlannerError), match=words):
        PlanOptions(**arguments)


def test_options_keep_the_planners_plain_name():
    assert PlanOptions(planner_id="arm[RRTstarkConfigDefault]").planner_id == "RRTstar"
    assert PlanOptions(planner_id="").planner_id == "RRTConnect"


@pytest.mark.parametrize("start, goals, options, words", [
    (LEFT[:6], [JointGoal(RIGHT)], OPTIONS, "start needs"),
    (LEFT, [], OPTIONS, "at least one goal"),
    (LEFT, [JointGoal(RIGHT[:3])], OPTIONS, "joint goal needs"),
    (LEFT, [JointGoal([math.nan] * 7)], OPTIONS, "joint goal needs"),
    (LEFT, [PoseGoal(np.eye(4), "no_such_link")], OPTIONS, "goal 0: pose goal: .*no_such_link"),
    (LEFT, [PoseGoal(np.eye(4), "panda_link3", name="elbow")], OPTIONS, "goal 0 \\(elbow\\).*neither a tip"),
    (LEFT, [JointGoal(RIGHT)], PlanOptions(motion="touch", approach=Approach(0.1)), "pose goals"),
    (LEFT, [JointGoal(RIGHT)], {"planning_time": 1.0}, "options is a PlanOptions"),
])
def test_malformed_starts_and_goals_raise(arm, start, goals, options, words):
    plugin, checker, _ = arm
    with pytest.raises(PlanningError, match=words):
        plan(plugin, checker, start, goals, options)


@pytest.mark.parametrize("pose", [(1.0, 2.0), ((0.0, 0.0, 0.0), (0.0, 0.0, 0.0, 0.0)), np.full((4, 4), np.nan)])
def test_an_unusable_pose_is_refused_when_the_goal_is_made(pose):
    with pytest.raises(GoalError, match="pose goal 'bad'"):
        PoseGoal(pose, name="bad")


def test_a_pose_goal_holds_its_pose_as_a_read_only_4x4_array(arm):
    plugin, _checker, _ = arm
    _ok, (pose,) = plugin.getPositionFK(plugin.getTipFrames(), RIGHT.tolist())
    T = transform_from_any_pose(pose)
    for given in (pose, T):
        goal = PoseGoal(given)
        assert goal.T_base_link.shape == (4, 4) and goal.T_base_link.dtype == float
        assert not goal.T_base_link.flags.writeable
        np.testing.assert_array_equal(goal.T_base_link, T)
    T[0, 3] += 1.0  # the goal keeps its own copy
    assert PoseGoal(pose).T_base_link[0, 3] == T[0, 3] - 1.0


def test_a_pose_goal_of_a_link_attached_to_the_tip_puts_that_link_there(arm):
    """A finger moves with the hand (its joint is outside the group): its goal pose is reached with the finger
    where the base state holds it."""
    plugin, checker, _ = arm
    model = plugin.robot_model
    base = model.resolve_joint_values({"panda_finger_joint1": 0.03})
    T_goal = model.link_poses({**base, **dict(zip(plugin.getJointNames(), RIGHT))})["panda_leftfinger"]
    result = plan(plugin, checker, LEFT, [PoseGoal(T_goal, "panda_leftfinger")], OPTIONS, base_state=base)
    _assert_valid_trajectory(arm, result)
    reached = model.link_poses({**base, **dict(zip(plugin.getJointNames(), result.positions[-1]))})
    np.testing.assert_allclose(reached["panda_leftfinger"], T_goal, atol=1e-5)


def test_a_pose_goals_check_filters_its_solutions(arm):
    plugin, checker, _ = arm
    names = plugin.getJointNames()
    _ok, (pose,) = plugin.getPositionFK(plugin.getTipFrames(), RIGHT.tolist())
    wrist = JointBound(names[6], 0.0, 1.5, False, 0.785)
    check = StateCheck(names, plugin.robot_model.resolve_joint_values({}), RequestConstraints(joint_bounds=(wrist,)))
    result = plan(plugin, checker, LEFT, [PoseGoal(pose, check=check)], OPTIONS)
    _assert_valid_trajectory(arm, result)
    assert 0.0 <= result.positions[-1][6] <= 1.5
    nowhere = JointBound(names[6], 5.0, 6.0, False, 5.5)
    refused = plan(plugin, checker, LEFT, [PoseGoal(pose, check=StateCheck(
        names, plugin.robot_model.resolve_joint_values({}), RequestConstraints(joint_bounds=(nowhere,))))], OPTIONS)
    assert not refused.success and "panda_joint7" in refused.message, refused.message


def _path_check(plugin, constraints: RequestConstraints) -> StateCheck:
    return StateCheck(plugin.getJointNames(), plugin.robot_model.resolve_joint_values({}), constraints)


def test_the_ik_of_a_pose_goal_gets_a_writable_target(arm, monkeypatch):
    """The goal's pose is read-only; the compiled IK kernels are compiled for writable arrays only (a read-only
    target would cost a compilation in every planning process)."""
    plugin, checker, _ = arm
    targets, all_solutions = [], plugin.all_solutions
    monkeypatch.setattr(plugin, "all_solutions", lambda T, seed: targets.append(T) or all_solutions(T, seed))
    _ok, (pose,) = plugin.getPositionFK(plugin.getTipFrames(), RIGHT.tolist())
    goal = PoseGoal(pose)
    assert plan(plugin, checker, LEFT, [goal], OPTIONS).success
    assert targets and all(T.flags.writeable for T in targets) and not goal.T_base_link.flags.writeable
