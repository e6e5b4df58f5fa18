"""trajectory_msgs/JointTrajectory <-> ``execution.trajectory.JointTrajectory``."""
from __future__ import annotations

import math

from builtin_interfaces.msg import Duration
from trajectory_msgs.msg import JointTrajectory as JointTrajectoryMsg
from trajectory_msgs.msg import JointTrajectoryPoint

from ...execution.trajectory import JointTrajectory, trajectory_from_points
from .conversions import seconds_from_duration


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
    """``trajectory`` as a message (``header`` copied when given)."""
    msg = JointTrajectoryMsg(joint_names=list(trajectory.joint_names))
    if header is not None:
        msg.header = header
    for index, t in enumerate(trajectory.times):
        point = JointTrajectoryPoint(positions=trajectory.positions[index].tolist(), time_from_start=duration_msg(t))
        if trajectory.velocities is not None:
            point.velocities = trajectory.velocities[index].tolist()
        if trajectory.accelerations is not None:
            point.accelerations = trajectory.accelerations[index].tolist()
        msg.points.append(point)
    return msg
