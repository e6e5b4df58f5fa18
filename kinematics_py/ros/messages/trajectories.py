"""Trajectories as messages: a timed path as moveit_msgs/RobotTrajectory, with the points a plan answers with
(``planning.controller_points``), and the scaling factors of a request.
"""
from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from builtin_interfaces.msg import Duration
from moveit_msgs.msg import RobotTrajectory
from trajectory_msgs.msg import JointTrajectoryPoint

from ...errors import ErrorCode, RequestError
from ...planning.controller_points import sparse_trajectory
from ...planning.time_parameterization import TimedPath


def scaling_factor(value: float, what: str) -> float:
    """A scaling factor in (0, 1]; 0 means 1 (not set, as in MoveIt); FAILURE outside [0, 1]."""
    if not (math.isfinite(value) and 0.0 <= value <= 1.0):
        raise RequestError(ErrorCode.FAILURE, f"{what} must be within [0, 1] (0: 1.0); got {value!r}")
    return value or 1.0


def trajectory_msg(frame: str, names: Sequence[str], positions: np.ndarray, timed: TimedPath,
                   stamp, trajectory: RobotTrajectory | None = None) -> RobotTrajectory:
    """``positions`` (points, joints) timed by ``timed`` as a RobotTrajectory of ``names`` in ``frame`` (every
    point; the rows converted to lists at once, not point by point): ``trajectory``, a RobotTrajectory as
    constructed (e.g. the one a new response holds), filled, or a new one."""
    trajectory = RobotTrajectory() if trajectory is None else trajectory
    joint_trajectory = trajectory.joint_trajectory
    joint_trajectory.header.frame_id, joint_trajectory.header.stamp = frame, stamp
    joint_trajectory.joint_names = list(names)
    seconds, nanoseconds = duration_parts(timed.time_from_start)
    joint_trajectory.points = [
        JointTrajectoryPoint(positions=q, velocities=velocity, accelerations=acceleration,
                             time_from_start=Duration(sec=sec, nanosec=nanosec))
        for q, velocity, acceleration, sec, nanosec in zip(
            np.asarray(positions, dtype=float).tolist(), np.asarray(timed.velocities, dtype=float).tolist(),
            np.asarray(timed.accelerations, dtype=float).tolist(), seconds, nanoseconds)]
    return trajectory


def plan_trajectory_msg(frame: str, names: Sequence[str], positions: np.ndarray, timed: TimedPath,
                        stamp, trajectory: RobotTrajectory | None = None) -> RobotTrajectory:
    """A plan's trajectory as ``trajectory_msg``, with the points a controller needs (``sparse_trajectory``)."""
    return trajectory_msg(frame, names, *sparse_trajectory(positions, timed), stamp, trajectory)


def duration_parts(seconds: np.ndarray) -> tuple[list[int], list[int]]:
    """(whole seconds, nanoseconds) of each time [s] >= 0, as builtin_interfaces/Duration holds them."""
    seconds = np.asarray(seconds, dtype=float)
    whole = np.floor(seconds)
    nanoseconds = np.minimum(np.round((seconds - whole) * 1e9), 999_999_999)
    return whole.astype(np.int64).tolist(), nanoseconds.astype(np.int64).tolist()
