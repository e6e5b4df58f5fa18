"""plan (ROS-free): collision-free motions to one of several goals. Trajectories are collision-free at every
point by an independent check (pinocchio's own kinematics and the exact meshes), their points at most the checking
resolution apart, within the limits and timed within the scaled velocity and acceleration limits; goals are
chosen as asked (shortest path, list order); pose goals, touch approaches and retractions follow straight lines;
every failure says why with MoveIt's code."""
import math

import coal
import numpy as np
import pytest
from reference import PinocchioCollisions
from robots import example_robot_data_dir, example_robot_urdf

from kinematics_py import ErrorCode, KinematicsPlugin, RobotModel, SemanticModel
from kinematics_py.collision.checker import CollisionChecker
from kinematics_py.collision.geometry import Box
from kinematics_py.geometry.poses import transform_from_any_pose
from kinematics_py.geometry.transforms import make_transform
from kinematics_py.ik.budget import Budget
from kinematics_py.planning.goals import JointGoal, PoseGoal
from kinematics_py.planning.motion import Approach, PlanningError, plan
from kinematics_py.planning.ompl_search import PLANNER_IDS, PlannerError
from kinematics_py.planning.path_check import FINE_RESOLUTION, PathCheck
from kinematics_py.planning.time_parameterization import JointLimits

PANDA_SRDF = "panda_description/srdf/panda.srdf"
READY = np.array([0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785])
#: A table and a wall standing on it between the two sides of the robot (centre, size) [m].
BOXES = {"table": ((0.6, 0.0, 0.0), (0.8, 1.6, 0.04)), "wall": ((0.5, 0.0, 0.32), (0.04, 1.2, 0.6))}
#: Either side of the wall, both collision-free; the straight joint motion between them hits the wall.
LEFT = np.array([1.2, 0.6, 0.0, -1.6, 0.0, 2.2, 0.785])
RIGHT = np.array([-1.2, 0.6, 0.0, -1.6, 0.0, 2.2, 0.785])
IN_WALL = np.array([0.0, 0.6, 0.0, -1.6, 0.0, 2.2, 0.785])
TIME = 2.0


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
    result = plan(plugin, checker, LEFT, [JointGoal(RIGHT)], planning_time=TIME, limits=limits,
                  velocity_scaling=0.5, acceleration_scaling=0.5)
    _assert_valid_trajectory(arm, result, limits, 0.5)
    assert len(result.waypoints) > 2 and result.goal_index == 0
    np.testing.assert_allclose(result.positions[0], LEFT)
    np.testing.assert_allclose(result.positions[-1], RIGHT)


def test_blend_radii_are_at_most_half_the_neighbouring_segments_and_their_blends_are_free(arm):
    from kinematics_py.planning.blending import blend_curve

    plugin, checker, _ = arm
    result = plan(plugin, checker, LEFT, [JointGoal(RIGHT)], planning_time=TIME)
    points = [w.positions for w in result.waypoints]
    assert result.waypoints[0].blend_radius == result.waypoints[-1].blend_radius == 0.0
    for i in range(1, len(points) - 1):
        radius = result.waypoints[i].blend_radius
        incoming, outgoing = points[i] - points[i - 1], points[i + 1] - points[i]
        assert 0.0 <= radius <= 0.5 * min(np.linalg.norm(incoming), np.linalg.norm(outgoing)) + 1e-12
        if radius > 0:
            before = points[i] - radius * incoming / np.linalg.norm(incoming)
            after = points[i] + radius * outgoing / np.linalg.norm(outgoing)
            assert not _colliding_points(arm, blend_curve(before, points[i], after, FINE_RESOLUTION))


def test_a_free_straight_motion_is_the_path(arm):
    plugin, checker, _ = arm
    goal = LEFT + np.array([0.2, 0.0, 0.0, 0.1, 0.0, 0.0, 0.0])
    result = plan(plugin, checker, LEFT, [JointGoal(goal)], planning_time=TIME)
    _assert_valid_trajectory(arm, result)
    assert [w.motion for w in result.waypoints] == ["joint", "joint"]


def test_several_goals_with_one_reachable_reach_that_one(arm):
    plugin, checker, _ = arm
    outside = RIGHT.copy()
    outside[3] = 0.5  # panda_joint4 is limited to [-3.07, -0.07]
    result = plan(plugin, checker, LEFT, [JointGoal(IN_WALL), JointGoal(outside), JointGoal(RIGHT)],
                  planning_time=TIME, diagnose=True)
    _assert_valid_trajectory(arm, result)
    assert result.goal_index == 2
    start, in_wall, out_of_limits, reached = result.diagnosis
    assert start.valid and reached.valid
    assert any("wall" in pair for pair in in_wall.collisions)
    assert out_of_limits.limit_violations and "panda_joint4" in out_of_limits.limit_violations[0]


def test_shortest_path_takes_the_nearer_goal_and_list_order_the_first(arm):
    plugin, checker, _ = arm
    near = LEFT + np.array([0.0, 0.0, 0.0, 0.0, 0.3, 0.0, 0.0])
    shortest = plan(plugin, checker, LEFT, [JointGoal(RIGHT), JointGoal(near)], planning_time=TIME)
    first = plan(plugin, checker, LEFT, [JointGoal(RIGHT), JointGoal(near)], planning_time=TIME,
                 prioritization="list_order")
    assert (shortest.goal_index, first.goal_index) == (1, 0), (shortest.message, first.message)
    _assert_valid_trajectory(arm, first)


def test_pose_goal_ends_at_the_pose(arm):
    plugin, checker, _ = arm
    _ok, (pose,) = plugin.getPositionFK(plugin.getTipFrames(), RIGHT.tolist())
    result = plan(plugin, checker, LEFT, [PoseGoal(pose)], planning_time=TIME)
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
    touch = plan(plugin, checker, LEFT, [PoseGoal(pose)], motion="touch", approach=Approach(0.1),
                 planning_time=TIME)
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

    back = plan(plugin, checker, touch.positions[-1], [JointGoal(LEFT)], retract=touch.retraction,
                planning_time=TIME)
    _assert_valid_trajectory(arm, back)
    motions = [w.motion for w in back.waypoints]
    retraction = back.waypoints[:motions.index("joint", 1)]
    tips = _tip_positions(plugin, [w.positions for w in retraction])
    np.testing.assert_allclose(tips[-1], T_touch[:3, 3] - 0.1 * T_touch[:3, 2], atol=1e-4)


def test_path_constraint_holds_at_every_point(arm):
    plugin, checker, _ = arm

    def elbow_kept(q):  # panda_joint4 stays within [-2.0, -1.2]
        return None if -2.0 <= q[3] <= -1.2 else f"panda_joint4 = {q[3]:.3f} outside [-2.0, -1.2]"
    result = plan(plugin, checker, LEFT, [JointGoal(RIGHT)], planning_time=TIME, path_validity=elbow_kept)
    _assert_valid_trajectory(arm, result)
    assert np.all((result.positions[:, 3] >= -2.0) & (result.positions[:, 3] <= -1.2))


@pytest.mark.parametrize("start, code, failure, words", [
    (IN_WALL, ErrorCode.START_STATE_IN_COLLISION, "blocked_start", "wall"),
    (np.where(np.arange(7) == 3, 0.5, LEFT), ErrorCode.START_STATE_INVALID, "blocked_start", "panda_joint4"),
])
def test_a_blocked_start_says_why(arm, start, code, failure, words):
    plugin, checker, _ = arm
    result = plan(plugin, checker, start, [JointGoal(RIGHT)], planning_time=TIME)
    assert (result.success, result.error_code, result.failure) == (False, code, failure), result.message
    assert words in result.message


def test_every_goal_blocked_or_outside_the_limits_says_why(arm):
    plugin, checker, _ = arm
    blocked = plan(plugin, checker, LEFT, [JointGoal(IN_WALL)], planning_time=TIME)
    assert (blocked.error_code, blocked.failure) == (ErrorCode.GOAL_IN_COLLISION, "blocked_goals")
    assert "wall" in blocked.message
    outside = plan(plugin, checker, LEFT, [JointGoal(np.where(np.arange(7) == 3, 0.5, RIGHT))], planning_time=TIME)
    assert (outside.error_code, outside.failure) == (ErrorCode.GOAL_STATE_INVALID, "goals_outside_limits")
    assert "panda_joint4" in outside.message
    far = plan(plugin, checker, LEFT, [PoseGoal(make_transform(None, (3.0, 0.0, 0.5)))], planning_time=TIME)
    assert (far.error_code, far.failure) == (ErrorCode.NO_IK_SOLUTION, "no_goal_solution"), far.message


def test_a_free_goal_that_no_path_reaches_is_a_timeout_with_the_planning_time(arm):
    plugin, checker, _ = arm

    def barrier(q):  # panda_joint1 cannot cross zero: LEFT and RIGHT are in two separate regions
        return None if abs(q[0]) > 0.3 else "panda_joint1 in the barrier"
    result = plan(plugin, checker, LEFT, [JointGoal(RIGHT)], planning_time=0.3, path_validity=barrier,
                  diagnose=True)
    assert (result.error_code, result.failure) == (ErrorCode.TIMED_OUT, "blocked_path"), result.message
    assert "0.3 s" in result.message
    assert all(report.valid for report in result.diagnosis)


def test_a_stop_request_ends_planning_with_preempted(arm):
    plugin, checker, _ = arm
    result = plan(plugin, checker, LEFT, [JointGoal(RIGHT)], planning_time=30.0, budget=Budget(lambda: True))
    assert (result.error_code, result.failure) == (ErrorCode.PREEMPTED, "stopped"), result.message


@pytest.mark.parametrize("planner_id", PLANNER_IDS)
def test_every_named_planner_plans_around_the_wall(arm, planner_id):
    plugin, checker, _ = arm
    result = plan(plugin, checker, LEFT, [JointGoal(RIGHT)], planner_id=planner_id, planning_time=5.0)
    _assert_valid_trajectory(arm, result)


@pytest.mark.parametrize("arguments, words", [
    ({"planner_id": "CHOMP"}, "RRTConnect"),
    ({"prioritization": "nearest"}, "shortest_path"),
    ({"motion": "jump"}, "touch"),
    ({"motion": "touch"}, "approach"),
    ({"planning_time": 0.0}, "planning_time"),
    ({"planning_time": math.nan}, "planning_time"),
    ({"retract": Approach(-0.1)}, "retract distance"),
])
def test_malformed_requests_raise_naming_the_valid_choices(arm, arguments, words):
    plugin, checker, _ = arm
    with pytest.raises((PlanningError, PlannerError), match=words):
        plan(plugin, checker, LEFT, [JointGoal(RIGHT)], **arguments)


@pytest.mark.parametrize("start, goals, words", [
    (LEFT[:6], [JointGoal(RIGHT)], "start needs"),
    (LEFT, [], "at least one goal"),
    (LEFT, [JointGoal(RIGHT[:3])], "joint goal needs"),
    (LEFT, [JointGoal([math.nan] * 7)], "joint goal needs"),
    (LEFT, [PoseGoal((1.0, 2.0))], "goal 0"),
])
def test_malformed_starts_and_goals_raise(arm, start, goals, words):
    plugin, checker, _ = arm
    with pytest.raises(PlanningError, match=words):
        plan(plugin, checker, start, goals)
