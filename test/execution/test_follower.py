"""The simulated follower: positions pass through every trajectory point at its time, interpolate between points
(cubic with velocities, linear without), reach a late first point from where the joints were, hold the last point,
and stop where they are; one execution at a time per joint."""
import numpy as np
import pytest

from kinematics_py.errors import ErrorCode, RequestError
from kinematics_py.execution.follower import TrajectoryFollower, remaining_path, sample
from kinematics_py.execution.joint_locks import JointLocks
from kinematics_py.execution.trajectory import trajectory_from_points

JOINTS = ("a", "b")
TIMES = (0.0, 0.5, 2.0)
POSITIONS = [(0.0, 1.0), (0.4, 0.5), (1.0, -1.0)]
VELOCITIES = [(0.0, 0.0), (0.6, -0.5), (0.0, 0.0)]


@pytest.mark.parametrize("velocities", [(), VELOCITIES])
def test_points_are_passed_at_their_times(velocities):
    trajectory = trajectory_from_points(JOINTS, TIMES, POSITIONS, velocities)
    for t, point in zip(TIMES, POSITIONS):
        np.testing.assert_allclose(sample(trajectory, t), point, atol=1e-12)
    np.testing.assert_allclose(sample(trajectory, 5.0), POSITIONS[-1])
    np.testing.assert_allclose(sample(trajectory, -1.0), POSITIONS[0])


def test_linear_without_velocities_and_hermite_slopes_with_them():
    linear = trajectory_from_points(JOINTS, TIMES, POSITIONS)
    np.testing.assert_allclose(sample(linear, 0.25), (0.2, 0.75))
    cubic = trajectory_from_points(JOINTS, TIMES, POSITIONS, VELOCITIES)
    h = 1e-6
    slope = (sample(cubic, 0.5 + h) - sample(cubic, 0.5 - h)) / (2 * h)
    np.testing.assert_allclose(slope, VELOCITIES[1], atol=1e-5)


def test_the_remaining_path_starts_where_the_joints_are_and_keeps_the_later_points():
    trajectory = trajectory_from_points(JOINTS, TIMES, POSITIONS)
    np.testing.assert_allclose(remaining_path(trajectory, 0.25), [(0.2, 0.75), POSITIONS[1], POSITIONS[2]])
    np.testing.assert_allclose(remaining_path(trajectory, 0.5), [POSITIONS[1], POSITIONS[2]])
    np.testing.assert_allclose(remaining_path(trajectory, 9.0), [POSITIONS[2]])


def test_the_follower_follows_holds_and_stops():
    follower = TrajectoryFollower({"a": 0.0, "b": 1.0, "c": 7.0})
    motion = follower.follow(trajectory_from_points(JOINTS, TIMES, POSITIONS), now=10.0)
    assert not follower.finished(motion, 11.0) and follower.finished(motion, 12.0)
    assert follower.positions(10.25) == pytest.approx({"a": 0.2, "b": 0.75, "c": 7.0})
    assert follower.positions(20.0) == pytest.approx({"a": 1.0, "b": -1.0, "c": 7.0})
    again = follower.follow(trajectory_from_points(JOINTS, (0.0, 1.0), [(1.0, -1.0), (2.0, -1.0)]), now=30.0)
    follower.stop(again, 30.5)
    assert follower.finished(again, 30.6)
    assert follower.positions(40.0) == pytest.approx({"a": 1.5, "b": -1.0, "c": 7.0})


def test_a_late_first_point_is_reached_from_where_the_joints_are():
    follower = TrajectoryFollower({"a": 0.0, "b": 0.0})
    follower.follow(trajectory_from_points(JOINTS, (1.0,), [(1.0, 2.0)]), now=0.0)
    assert follower.positions(0.5) == pytest.approx({"a": 0.5, "b": 1.0})


def test_unknown_joints_are_refused():
    with pytest.raises(RequestError, match="'z'"):
        TrajectoryFollower({"a": 0.0}).follow(trajectory_from_points(("z",), (0.0,), [(1.0,)]), now=0.0)


def test_one_execution_at_a_time_per_joint():
    locks = JointLocks()
    with locks.held(("a", "b"), "goal 1"):
        with pytest.raises(RequestError) as raised, locks.held(("b", "c"), "goal 2"):
            pass
        assert raised.value.code == ErrorCode.CONTROL_FAILED and "'b'" in str(raised.value)
        assert "goal 1" in str(raised.value)
        with locks.held(("c",), "goal 3"):
            assert locks.busy() == {"a": "goal 1", "b": "goal 1", "c": "goal 3"}
    assert locks.busy() == {}
    with locks.held(("b",), "goal 4"):
        pass
