"""Timing of a dense path that moves without stopping (ROS-free): the fastest speed profile along it, from rest
to rest, within per-segment speed limits of the tool (translation and rotation) and of the joints, and within
acceleration limits.

The path parameter advances by one per segment. Each segment's speed limit is the smallest of the tool's
translational speed over its length, its rotational speed over its angle and each joint's speed over its change;
its acceleration (deceleration) limit likewise, the joints' split half for the acceleration along the path and half
for the change of direction (so the joints stay within their limits on curves too). A forward pass within the
accelerations and a backward pass within the decelerations give the profile: where the limits are the same along
the path (a LIN at its commanded speed) it is the trapezoid (or triangle) of those limits, and it is slowed only
where a limit is lower.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .time_parameterization import JointLimits, TimedPath

#: Motion below which a segment or a joint does not count in a limit [m, rad].
_STILL = 1e-12


@dataclass(frozen=True)
class ToolLimits:
    """Per-segment tool limits (segments,): translational speed [m/s], acceleration and deceleration (> 0)
    [m/s^2], rotational speed [rad/s] and acceleration [rad/s^2]; ``np.inf`` where a segment has none (a PTP)."""

    speed: np.ndarray
    acceleration: np.ndarray
    deceleration: np.ndarray
    rotation_speed: np.ndarray
    rotation_acceleration: np.ndarray


def _ratio(limit, change: np.ndarray) -> np.ndarray:
    """limit / change where the change is not still, else inf."""
    change = np.abs(change)
    return np.where(change > _STILL, np.asarray(limit, dtype=float) / np.maximum(change, _STILL), np.inf)


def time_along_path(positions: np.ndarray, tool_points: np.ndarray, tool_angles: np.ndarray, joints: JointLimits,
                    tool: ToolLimits, stops: Sequence[int] = ()) -> TimedPath:
    """Time ``positions`` (points, joints), the tool at ``tool_points`` (points, 3) [m] having turned
    ``tool_angles`` (points - 1,) [rad] over each segment, from rest to rest within ``joints`` and ``tool``, at rest
    at the points ``stops`` too (corners the path does not blend)."""
    count = len(positions)
    dq = np.diff(positions, axis=0)
    dp = np.linalg.norm(np.diff(tool_points, axis=0), axis=1)
    curvature = np.zeros_like(positions)
    curvature[1:-1] = positions[2:] - 2 * positions[1:-1] + positions[:-2]
    speed = np.min(np.column_stack([_ratio(tool.speed, dp), _ratio(tool.rotation_speed, tool_angles),
                                    _ratio(joints.max_velocities, dq).min(axis=1)]), axis=1)
    joint_acc = _ratio(0.5 * joints.max_accelerations, dq).min(axis=1)
    accelerate = np.minimum.reduce([_ratio(tool.acceleration, dp), _ratio(tool.rotation_acceleration, tool_angles),
                                    joint_acc])
    decelerate = np.minimum.reduce([_ratio(tool.deceleration, dp), _ratio(tool.rotation_acceleration, tool_angles),
                                    joint_acc])
    bend = np.sqrt(_ratio(0.5 * joints.max_accelerations, curvature).min(axis=1))
    cap = np.minimum(np.concatenate([speed[:1], np.minimum(speed[:-1], speed[1:]), speed[-1:]]), bend)
    cap[list(stops)] = 0.0
    rate = np.zeros(count)  # d(parameter)/dt at each point
    for k in range(count - 2):
        rate[k + 1] = min(cap[k + 1], np.sqrt(rate[k] ** 2 + 2.0 * accelerate[k]))
    for k in range(count - 2, 0, -1):
        rate[k] = min(rate[k], np.sqrt(rate[k + 1] ** 2 + 2.0 * decelerate[k]))
    mean = rate[:-1] + rate[1:]
    durations = 2.0 / np.maximum(mean, _STILL)
    times = np.concatenate([[0.0], np.cumsum(durations)])
    velocities = np.gradient(positions, axis=0) * rate[:, None]
    velocities[[0, -1]] = 0.0
    accelerations = np.gradient(velocities, times, axis=0) if count > 1 else np.zeros_like(positions)
    return TimedPath(times, velocities, accelerations)
