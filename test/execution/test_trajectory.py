"""What move_group checks before it sends a trajectory, and its split over the controllers: every bad trajectory
gets INVALID_MOTION_PLAN naming what is wrong, a start away from the current state CONTROL_FAILED naming the joint
and the deviation, a joint no controller covers CONTROL_FAILED; the default controller is chosen first."""
import math

import numpy as np
import pytest

from kinematics_py.errors import ErrorCode, RequestError
from kinematics_py.execution.controllers import ControllerSpec
from kinematics_py.execution.trajectory import (
    LIMIT_MARGIN,
    JointTrajectory,
    check_start,
    check_trajectory,
    split,
    trajectory_from_points,
)
from kinematics_py.model.robot_model import RobotModel
from kinematics_py.robots import bundled_robot_path

PANDA = RobotModel.from_urdf_string(bundled_robot_path("panda").read_text())
ARM = tuple(f"panda_joint{i}" for i in range(1, 8))
READY = (0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785)


def arm_trajectory(times=(0.0, 1.0), positions=None) -> JointTrajectory:
    positions = positions if positions is not None else [READY, [v + 0.1 for v in READY]]
    return trajectory_from_points(ARM, times, positions)


def refusal(call) -> RequestError:
    with pytest.raises(RequestError) as raised:
        call()
    return raised.value


def test_a_good_trajectory_passes():
    check_trajectory(arm_trajectory(), PANDA)
    check_start(arm_trajectory(), dict(zip(ARM, READY)), 0.01)


@pytest.mark.parametrize("trajectory, reason", [
    (lambda: trajectory_from_points(ARM[:6] + ("elbow",), (0.0,), [READY]), "'elbow'"),
    (lambda: arm_trajectory(times=(0.0, 0.0)), "must increase"),
    (lambda: arm_trajectory(times=(1.0, 0.5)), "point 1 is at 0.5 s"),
    (lambda: arm_trajectory(times=(-1.0, 0.5)), ">= 0"),
    (lambda: arm_trajectory(times=(0.0, math.inf)), "finite"),
    (lambda: arm_trajectory(positions=[READY, (math.nan,) + READY[1:]]), "non-finite position of joint 'panda_joint1'"),
    (lambda: arm_trajectory(positions=[READY, (3.0,) + READY[1:]]), "joint 'panda_joint1' at 3"),
])
def test_a_bad_trajectory_is_an_invalid_motion_plan_with_the_reason(trajectory, reason):
    error = refusal(lambda: check_trajectory(trajectory(), PANDA))
    assert error.code == ErrorCode.INVALID_MOTION_PLAN and reason in str(error), str(error)


def test_malformed_points_and_repeated_joints_are_invalid_motion_plans():
    for call, reason in [(lambda: trajectory_from_points(ARM, (0.0,), [READY[:6]]), "6 positions for 7 joints"),
                         (lambda: trajectory_from_points(ARM[:2] + ARM[:1], (0.0,), [(0, 0, 0)]), "twice"),
                         (lambda: trajectory_from_points(ARM, (0.0, 1.0), [READY, READY], [READY, ()]),
                          "0 velocities")]:
        error = refusal(call)
        assert error.code == ErrorCode.INVALID_MOTION_PLAN and reason in str(error), str(error)


def test_limits_hold_to_the_margin():
    upper = PANDA.joints["panda_joint1"].upper
    check_trajectory(arm_trajectory(positions=[READY, (upper + LIMIT_MARGIN / 2,) + READY[1:]]), PANDA)
    assert refusal(lambda: check_trajectory(arm_trajectory(positions=[READY, (upper + 2 * LIMIT_MARGIN,)
                                                                      + READY[1:]]), PANDA))


def test_a_start_away_from_the_current_state_names_the_joint_and_the_deviation():
    current = dict(zip(ARM, READY))
    current["panda_joint4"] += 0.05
    error = refusal(lambda: check_start(arm_trajectory(), current, 0.01))
    assert error.code == ErrorCode.CONTROL_FAILED
    assert "'panda_joint4'" in str(error) and "0.05" in str(error), str(error)
    check_start(arm_trajectory(), current, 0.0)  # 0: not checked
    check_start(arm_trajectory(), current, 0.06)


def test_continuous_joints_deviate_the_short_way_round():
    trajectory = trajectory_from_points(("wheel",), (0.0,), [(math.pi - 0.001,)])
    check_start(trajectory, {"wheel": -math.pi + 0.001}, 0.01, continuous=("wheel",))
    assert refusal(lambda: check_start(trajectory, {"wheel": -math.pi + 0.001}, 0.01)).code == ErrorCode.CONTROL_FAILED


def test_a_joint_without_a_current_position_cannot_start():
    error = refusal(lambda: check_start(arm_trajectory(), dict(zip(ARM[:6], READY)), 0.01))
    assert error.code == ErrorCode.CONTROL_FAILED and "'panda_joint7'" in str(error)


ARM_CONTROLLER = ControllerSpec("arm", "FollowJointTrajectory", "follow_joint_trajectory", False, ARM)
DEFAULT_ARM = ControllerSpec("default_arm", "FollowJointTrajectory", "follow_joint_trajectory", True, ARM)
WRIST = ControllerSpec("wrist", "FollowJointTrajectory", "fjt", False, ARM[5:])
GRIPPER = ControllerSpec("hand", "GripperCommand", "gripper_cmd", True, ("panda_finger_joint1",))


def test_the_default_controller_is_chosen_first():
    (chosen, part), = split(arm_trajectory(), [ARM_CONTROLLER, DEFAULT_ARM, WRIST])
    assert chosen is DEFAULT_ARM and part.joint_names == ARM


def test_a_trajectory_splits_over_the_controllers_covering_its_joints():
    shoulder = ControllerSpec("shoulder", "FollowJointTrajectory", "fjt", False, ARM[:5])
    parts = split(arm_trajectory(), [WRIST, shoulder])
    assert [(c.name, p.joint_names) for c, p in parts] == [("shoulder", ARM[:5]), ("wrist", ARM[5:])]
    full = arm_trajectory()
    np.testing.assert_array_equal(parts[1][1].positions, full.positions[:, 5:])
    np.testing.assert_array_equal(parts[1][1].times, full.times)


def test_requested_controllers_only():
    (chosen, _), = split(arm_trajectory(), [DEFAULT_ARM, ARM_CONTROLLER], requested=["arm"])
    assert chosen is ARM_CONTROLLER
    error = refusal(lambda: split(arm_trajectory(), [DEFAULT_ARM], requested=["elsewhere"]))
    assert error.code == ErrorCode.CONTROL_FAILED and "'elsewhere'" in str(error)


def test_a_joint_no_controller_covers_is_a_control_failure():
    error = refusal(lambda: split(arm_trajectory(), [WRIST, GRIPPER]))
    assert error.code == ErrorCode.CONTROL_FAILED and "'panda_joint1'" in str(error), str(error)
