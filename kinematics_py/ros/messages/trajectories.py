"""Trajectories as messages: a timed path as moveit_msgs/RobotTrajectory, and the scaling factors of a request."""
from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from builtin_interfaces.msg import Duration
from moveit_msgs.msg import RobotTrajectory
from trajectory_msgs.msg import JointTrajectoryPoint

from ...errors import ErrorCode, RequestError
from ...planning.time_parameterization import TimedPath


def scaling_factor(value: float, what: str) -> float:
    """A scaling factor in (0, 1]; 0 means 1 (not set, as in MoveIt); FAILURE outside [0, 1]."""
    if not (math.isfinite(value) and 0.0 <= value <= 1.0):
        raise RequestError(ErrorCode.FAILURE, f"{what} must be within [0, 1] (0: 1.0); got {value!r}")
    return value or 1.0


def trajectory_msg(frame: str, names: Sequence[str], positions: np.ndarray, timed: TimedPath,
                   stamp) -> RobotTrajectory:
    """``positions`` (points, joints) timed by ``timed`` as a RobotTrajectory of ``names`` in ``frame``."""
    trajectory = RobotTrajectory()
    joint_trajectory = trajectory.joint_trajectory
    joint_trajectory.header.frame_id, joint_trajectory.header.stamp = frame, stamp
    joint_trajectory.joint_names = list(names)
    for q, t, velocity, acceleration in zip(positions, timed.time_from_start, timed.velocities, timed.accelerations):
        seconds = math.floor(t)
        joint_trajectory.points.append(JointTrajectoryPoint(
            positions=q.tolist(), velocities=velocity.tolist(), accelerations=acceleration.tolist(),
            time_from_start=Duration(sec=int(seconds), nanosec=min(int(round((t - seconds) * 1e9)), 999_999_999))))
    return trajectory
