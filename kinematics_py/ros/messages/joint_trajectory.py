"""trajectory_msgs/JointTrajectory <-> ``execution.trajectory.JointTrajectory``."""
from __future__ import annotations

import math

import numpy as np
from builtin_interfaces.msg import Duration
from trajectory_msgs.msg import JointTrajectory as JointTrajectoryMsg
from trajectory_msgs.msg import JointTrajectoryPoint

from ...execution.trajectory import JointTrajectory, trajectory_from_points
from .conversions import seconds_from_duration
from .trajectories import duration_parts


def joint_trajectory_from_msg(msg: JointTrajectoryMsg) -> JointTrajectory:
    """The message's points (INVALID_MOTION_PLAN for points that do not fit its joint names)."""
    points = msg.points
    return trajectory_from_points(list(msg.joint_names), [seconds_from_duration(p.time_from_start) for p in points],
                                  [list(p.positions) for p in points], [list(p.velocities) for p in points],
                                  [list(p.accelerations) for p in points])


def duration_msg(seconds: float) -> Duration:
    whole = math.floor(seconds)
    return Duration(sec=int(whole), nanosec=min(int(round((seconds - whole) * 1e9)), 999_999_999))


def joint_trajectory_msg(trajectory: JointTrajectory, header=None) -> JointTrajectoryMsg:
    """``trajectory`` as a message (``header`` copied when given; the rows converted to lists at once)."""
    msg = JointTrajectoryMsg(joint_names=list(trajectory.joint_names))
    if header is not None:
        msg.header = header
    count = len(trajectory.times)
    seconds, nanoseconds = duration_parts(trajectory.times)
    velocities, accelerations = ([] if values is None else np.asarray(values, dtype=float).tolist()
                                 for values in (trajectory.velocities, trajectory.accelerations))
    msg.points = [JointTrajectoryPoint(positions=q, velocities=velocities[k] if velocities else [],
                                       accelerations=accelerations[k] if accelerations else [],
                                       time_from_start=Duration(sec=seconds[k], nanosec=nanoseconds[k]))
                  for k, q in zip(range(count), np.asarray(trajectory.positions, dtype=float).tolist())]
    return msg
