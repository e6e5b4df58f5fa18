"""time_parameterize (ROS-free, toppra): every configuration keeps its place and gets a time, a velocity and an
acceleration within the limits; at rest at both ends; a link's Cartesian speed limit holds; limits from the
URDF and MoveIt's joint_limits.yaml entries, with the documented defaults."""
import numpy as np
import pytest
from robots import bundled_robot

from kinematics_py import RobotModel
from kinematics_py.planning.time_parameterization import (
    DEFAULT_MAX_ACCELERATION,
    DEFAULT_MAX_VELOCITY,
    JointLimits,
    TimeParameterizationError,
    joint_limits,
    time_parameterize,
)

#: toppra meets its limits up to its numerical tolerance; checked with this relative slack.
LIMIT_SLACK = 1e-3
LIMITS = JointLimits(np.array([1.0, 2.0]), np.array([3.0, 1.5]))


def arc(points: int) -> np.ndarray:
    t = np.linspace(0.0, 1.0, points)
    return np.column_stack([np.sin(2 * t), 0.5 * t ** 2 - t])


def finite_difference_speeds(positions, times):
    return np.abs(np.diff(positions, axis=0)) / np.diff(times)[:, None]


@pytest.mark.parametrize("points", [2, 3, 31])
def test_points_are_timed_within_the_limits_at_rest_at_both_ends(points):
    positions = arc(points)
    timed = time_parameterize(positions, LIMITS)

    assert timed.time_from_start.shape == (points,) and timed.velocities.shape == positions.shape
    assert timed.time_from_start[0] == 0.0 and np.all(np.diff(timed.time_from_start) > 0)
    assert np.allclose(timed.velocities[[0, -1]], 0.0)
    assert np.all(np.abs(timed.velocities) <= LIMITS.max_velocities * (1 + LIMIT_SLACK))
    assert np.all(np.abs(timed.accelerations) <= LIMITS.max_accelerations * (1 + LIMIT_SLACK))
    assert np.all(finite_difference_speeds(positions, timed.time_from_start) <= LIMITS.max_velocities * (1 + 0.01))


def test_near_time_optimal_for_a_straight_joint_move():
    """A rest-to-rest move of 2 rad at 1 rad/s, 1 rad/s^2 takes 3 s at best (accelerate 1 s, cruise, brake)."""
    positions = np.column_stack([np.linspace(0.0, 2.0, 41)])
    timed = time_parameterize(positions, JointLimits(np.array([1.0]), np.array([1.0])))
    assert 3.0 <= timed.time_from_start[-1] < 3.0 * 1.05


def test_scaling_slows_the_path_down():
    fast = time_parameterize(arc(21), LIMITS)
    slow = time_parameterize(arc(21), LIMITS.scaled(0.5, 0.25))
    assert slow.time_from_start[-1] > 1.9 * fast.time_from_start[-1]
    assert np.all(np.abs(slow.velocities) <= 0.5 * LIMITS.max_velocities * (1 + LIMIT_SLACK))


def test_cartesian_speed_limit_holds_between_points():
    positions = arc(31)
    link = np.column_stack([np.linspace(0.0, 0.3, 31), np.zeros(31), np.zeros(31)])
    timed = time_parameterize(positions, LIMITS, link_positions=link, max_link_speed=0.05)
    speeds = np.linalg.norm(np.diff(link, axis=0), axis=1) / np.diff(timed.time_from_start)
    assert speeds.max() <= 0.05 * (1 + 0.01)
    assert timed.time_from_start[-1] >= 0.3 / 0.05


def test_a_path_that_does_not_move_gets_short_increasing_times():
    timed = time_parameterize(np.zeros((3, 2)), LIMITS)
    assert np.all(np.diff(timed.time_from_start) > 0) and not timed.velocities.any()


def test_limits_from_urdf_and_joint_limits_yaml():
    model = RobotModel.from_urdf_string(bundled_robot("ur5.urdf").read_text())
    names = ["shoulder_pan_joint", "elbow_joint"]
    limits = joint_limits(model, names, {"elbow_joint": {"has_acceleration_limits": True, "max_acceleration": 2.5,
                                                         "has_velocity_limits": True, "max_velocity": 0.7}})
    assert limits.max_velocities[0] == model.joints["shoulder_pan_joint"].velocity
    assert limits.max_velocities[1] == 0.7
    assert limits.max_accelerations.tolist() == [DEFAULT_MAX_ACCELERATION, 2.5]
    ignored = joint_limits(model, names, {"elbow_joint": {"has_acceleration_limits": False, "max_acceleration": 9.0}})
    assert ignored.max_accelerations[1] == DEFAULT_MAX_ACCELERATION
    assert DEFAULT_MAX_VELOCITY > 0


@pytest.mark.parametrize("bad", [0.0, -1.0, "fast", float("nan")])
def test_bad_joint_limit_entries_are_refused(bad):
    model = RobotModel.from_urdf_string(bundled_robot("ur5.urdf").read_text())
    with pytest.raises(TimeParameterizationError, match="elbow_joint.max_acceleration"):
        joint_limits(model, ["elbow_joint"], {"elbow_joint": {"max_acceleration": bad}})


def test_a_panda_line_whose_joints_start_with_zero_velocity_is_timed():
    """A joint whose path derivative vanishes at the start (shoulder and elbow of this line) made toppra fail
    with a not-a-knot spline."""
    from kinematics_py import KinematicsPlugin
    from kinematics_py.geometry.poses import transform_from_any_pose
    from kinematics_py.planning.cartesian_path import compute_cartesian_path

    plugin = KinematicsPlugin()
    assert plugin.initialize(bundled_robot("panda.urdf").read_text(), "panda_arm",
                             robot_description_semantic=bundled_robot("panda.srdf").read_text())
    start = [0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785]
    _, (pose,) = plugin.getPositionFK(plugin.getTipFrames(), start)
    goal = transform_from_any_pose(pose)
    goal[1, 3] += 0.3
    path = compute_cartesian_path(plugin, start, [goal], 0.01)
    limits = joint_limits(plugin.robot_model, plugin.getJointNames())
    timed = time_parameterize(path.positions, limits)
    assert path.complete and np.all(np.diff(timed.time_from_start) > 0)
    assert np.all(np.abs(timed.velocities) <= limits.max_velocities * (1 + LIMIT_SLACK))


def test_the_core_imports_without_toppra():
    """toppra imports matplotlib (seconds): only a time parameterization loads it."""
    import subprocess
    import sys

    script = "import sys, kinematics_py; print(sorted({'toppra', 'matplotlib'} & set(sys.modules)))"
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"
