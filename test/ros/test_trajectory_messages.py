"""Trajectories as messages (``ros.messages.trajectories``, ``ros.messages.joint_trajectory``), without DDS: the
points a plan answers with reproduce its every point, and the messages hold the values they were built from."""
from __future__ import annotations

import numpy as np
import pytest
from builtin_interfaces.msg import Time
from moveit_msgs.srv import GetMotionPlan

from kinematics_py.execution.follower import sample
from kinematics_py.execution.trajectory import JointTrajectory
from kinematics_py.planning.controller_points import needed_points
from kinematics_py.planning.motion import Waypoint, timed_trajectory
from kinematics_py.planning.time_parameterization import JointLimits, TimedPath, time_parameterize
from kinematics_py.ros.messages.conversions import robot_state_msg
from kinematics_py.ros.messages.joint_trajectory import (
    duration_msg,
    joint_trajectory_from_msg,
    joint_trajectory_msg,
)
from kinematics_py.ros.messages.trajectories import plan_trajectory_msg, trajectory_msg

LIMITS = JointLimits(np.array([1.0, 2.0, 1.5]), np.array([2.0, 3.0, 4.0]))
#: Corners of a joint path: moves long enough to cruise, and one too short to (a triangle).
CORNERS = np.array([[0.0, 0.0, 0.0], [1.2, -0.8, 0.5], [1.25, -0.75, 0.52], [-0.4, 0.3, 1.1]])


def _timed(corners: np.ndarray, resolution: float = 0.01) -> tuple[np.ndarray, TimedPath]:
    return timed_trajectory([Waypoint(q, "joint") for q in corners], LIMITS, resolution)


def _quintic(times, positions, velocities, accelerations, t: float) -> np.ndarray:
    """Quintic Hermite interpolation, as joint_trajectory_controller samples points with accelerations."""
    k = min(int(np.searchsorted(times, t, side="right")) - 1, len(times) - 2)
    h = times[k + 1] - times[k]
    s = (t - times[k]) / h
    p0, p1 = positions[k], positions[k + 1]
    v0, v1 = velocities[k] * h, velocities[k + 1] * h
    a0, a1 = accelerations[k] * h * h, accelerations[k + 1] * h * h
    return ((1 - 10 * s**3 + 15 * s**4 - 6 * s**5) * p0 + (s - 6 * s**3 + 8 * s**4 - 3 * s**5) * v0
            + (s**2 / 2 - 3 * s**3 / 2 + 3 * s**4 / 2 - s**5 / 2) * a0 + (10 * s**3 - 15 * s**4 + 6 * s**5) * p1
            + (-4 * s**3 + 7 * s**4 - 3 * s**5) * v1 + (s**3 / 2 - s**4 + s**5 / 2) * a1)


def test_a_plans_answer_keeps_few_points_and_moves_exactly_as_through_every_point():
    positions, timed = _timed(CORNERS)
    kept = needed_points(positions, timed)
    assert kept[0] == 0 and kept[-1] == len(positions) - 1 and np.all(np.diff(kept) > 0)
    assert len(kept) <= 6 * (len(CORNERS) - 1) < len(positions) // 10
    times = timed.time_from_start
    dense = JointTrajectory(("a", "b", "c"), times, positions, timed.velocities)
    sparse = JointTrajectory(("a", "b", "c"), times[kept], positions[kept], timed.velocities[kept])
    for t in np.linspace(0.0, times[-1], 2001):
        np.testing.assert_allclose(sample(sparse, t), sample(dense, t), atol=1e-9)
        np.testing.assert_allclose(
            _quintic(times[kept], positions[kept], timed.velocities[kept], timed.accelerations[kept], t),
            _quintic(times, positions, timed.velocities, timed.accelerations, t), atol=1e-9)


def _assert_dropped_on_segments(positions: np.ndarray, kept: np.ndarray) -> None:
    """Every point between two kept ones lies on the straight segment joining them."""
    for i, j in zip(kept[:-1], kept[1:]):
        segment = positions[j] - positions[i]
        for k in range(i + 1, j):
            along = (positions[k] - positions[i]) @ segment / (segment @ segment)
            assert -1e-9 <= along <= 1 + 1e-9
            np.testing.assert_allclose(positions[k], positions[i] + along * segment, atol=1e-9)


def test_every_dropped_point_lies_on_the_straight_segment_between_the_kept_points_around_it():
    positions, timed = _timed(CORNERS)
    kept = needed_points(positions, timed)
    _assert_dropped_on_segments(positions, kept)


@pytest.mark.parametrize("seed", range(40))
def test_random_joint_paths_keep_at_most_six_points_a_move_and_move_as_through_every_point(seed):
    """Moves that turn back on their line with the same acceleration (their turning point kept), ramps shorter than
    a step (the first step kept), moves of 1 to 7 joints at 0.01 to 3 rad."""
    rng = np.random.default_rng(seed)
    count, dof = rng.integers(2, 7), rng.integers(1, 8)
    corners = rng.uniform(-3, 3, (count, dof)) * rng.choice([0.01, 0.1, 1.0])
    if seed % 4 == 0:
        corners[2::2] = corners[0]  # back and forth on one line
    limits = JointLimits(rng.uniform(0.2, 3, dof), rng.uniform(0.5, 10, dof))
    positions, timed = timed_trajectory([Waypoint(q, "joint") for q in corners], limits, 0.01)
    kept = needed_points(positions, timed)
    assert len(kept) <= 1 + 6 * (count - 1)
    times, names = timed.time_from_start, ("j",) * dof
    dense = JointTrajectory(names, times, positions, timed.velocities)
    sparse = JointTrajectory(names, times[kept], positions[kept], timed.velocities[kept])
    for t in np.linspace(0.0, times[-1], 301):
        np.testing.assert_allclose(sample(sparse, t), sample(dense, t), atol=1e-9)
    _assert_dropped_on_segments(positions, kept)


def test_points_timed_by_toppra_on_a_curved_path_are_all_kept():
    s = np.linspace(0.0, 1.0, 60)
    positions = np.column_stack([np.sin(2 * s), np.cos(3 * s) - 1, s * s])
    timed = time_parameterize(positions, LIMITS)
    assert len(needed_points(positions, timed)) == len(positions)


def test_a_point_off_its_phases_quadratic_is_kept():
    positions, timed = _timed(CORNERS[:2])
    moved = positions.copy()
    moved[len(positions) // 2] += 1e-6  # in the cruise: on no straight segment between its neighbours any more
    assert len(positions) // 2 in needed_points(moved, timed)
    assert len(positions) // 2 not in needed_points(positions, timed)


@pytest.mark.parametrize("count", [0, 1, 2])
def test_trajectories_of_two_points_or_fewer_keep_them_all(count):
    positions, timed = _timed(CORNERS[:2])
    kept = needed_points(positions[:count], TimedPath(*(values[:count] for values in (
        timed.time_from_start, timed.velocities, timed.accelerations))))
    assert kept.tolist() == list(range(count))


def test_a_robot_trajectory_holds_the_values_it_was_built_from():
    positions, timed = _timed(CORNERS[:3], 0.05)
    msg = trajectory_msg("base", ["a", "b", "c"], positions, timed, Time())
    points = msg.joint_trajectory.points
    assert msg.joint_trajectory.header.frame_id == "base" and list(msg.joint_trajectory.joint_names) == ["a", "b", "c"]
    np.testing.assert_array_equal([p.positions for p in points], positions)
    np.testing.assert_array_equal([p.velocities for p in points], timed.velocities)
    np.testing.assert_array_equal([p.accelerations for p in points], timed.accelerations)
    assert [p.time_from_start for p in points] == [duration_msg(t) for t in timed.time_from_start]
    sparse = plan_trajectory_msg("base", ["a", "b", "c"], positions, timed, Time())
    kept = needed_points(positions, timed)
    np.testing.assert_array_equal([p.positions for p in sparse.joint_trajectory.points], positions[kept])
    assert [p.time_from_start for p in sparse.joint_trajectory.points] == [p.time_from_start for p in
                                                                          np.array(points, dtype=object)[kept]]


@pytest.mark.parametrize("derivatives", [False, True])
def test_a_joint_trajectory_message_round_trips(derivatives):
    positions, timed = _timed(CORNERS[:2], 0.1)
    trajectory = JointTrajectory(("a", "b", "c"), timed.time_from_start + 2.5, positions,
                                 timed.velocities if derivatives else None,
                                 timed.accelerations if derivatives else None)
    msg = joint_trajectory_msg(trajectory)
    assert [p.time_from_start for p in msg.points] == [duration_msg(t) for t in trajectory.times]
    back = joint_trajectory_from_msg(msg)
    assert back.joint_names == trajectory.joint_names
    np.testing.assert_allclose(back.times, trajectory.times, atol=1e-9)
    np.testing.assert_array_equal(back.positions, trajectory.positions)
    if derivatives:
        np.testing.assert_array_equal(back.velocities, trajectory.velocities)
        np.testing.assert_array_equal(back.accelerations, trajectory.accelerations)
    else:
        assert back.velocities is None and back.accelerations is None


def test_messages_filled_in_a_response_equal_new_ones():
    """A plan's answer fills the RobotState and RobotTrajectory its new response holds: the same messages."""
    positions, timed = _timed(CORNERS[:3], 0.05)
    response = GetMotionPlan.Response().motion_plan_response
    filled = plan_trajectory_msg("base", ["a", "b", "c"], positions, timed, Time(sec=3), response.trajectory)
    assert filled is response.trajectory
    assert filled == plan_trajectory_msg("base", ["a", "b", "c"], positions, timed, Time(sec=3))
    values = {"a": 0.5, "b": -1.0, "c": 2.0, "d": 7.0}
    state = robot_state_msg(["a", "b", "c"], values, response.trajectory_start)
    assert state is response.trajectory_start and state == robot_state_msg(["a", "b", "c"], values)
