"""Timing of a dense path that moves without stopping (ROS-free): the fastest speed profile along it, from rest
to rest, within per-segment speed limits of the tool (translation and rotation) and of the joints, and within
acceleration limits.

The path parameter is the joint-space arc length s. Each segment's limit on ds/dt is the smallest of the tool's
translational speed over its travel per unit s, its rotational speed over its turn per unit s and each joint's
speed over its share of the tangent; its acceleration (deceleration) limit likewise, the joints' split half for the
acceleration along the path and half for the path's curvature (so the joints stay within their limits on curves
too). A forward pass within the
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
    dq = np.diff(positions, axis=0)
    ds = np.maximum(np.linalg.norm(dq, axis=1), _STILL)  # the path parameter: joint-space arc length
    tangent = dq / ds[:, None]
    dp = np.linalg.norm(np.diff(tool_points, axis=0), axis=1) / ds
    turn = np.asarray(tool_angles) / ds
    curvature = np.zeros_like(positions)
    curvature[1:-1] = 2.0 * np.diff(tangent, axis=0) / (ds[1:] + ds[:-1])[:, None]
    speed = np.min(np.column_stack([_ratio(tool.speed, dp), _ratio(tool.rotation_speed, turn),
                                    _ratio(joints.max_velocities, tangent).min(axis=1)]), axis=1)
    joint_acc = _ratio(0.5 * joints.max_accelerations, tangent).min(axis=1)
    rotation_acc = _ratio(tool.rotation_acceleration, turn)
    accelerate = np.minimum.reduce([_ratio(tool.acceleration, dp), rotation_acc, joint_acc])
    decelerate = np.minimum.reduce([_ratio(tool.deceleration, dp), rotation_acc, joint_acc])
    bend = np.sqrt(_ratio(0.5 * joints.max_accelerations, curvature).min(axis=1))
    cap = np.minimum(np.concatenate([speed[:1], np.minimum(speed[:-1], speed[1:]), speed[-1:]]), bend)
    cap[[0, -1, *stops]] = 0.0
    rate = np.zeros(len(positions))  # ds/dt at each point
    for k in range(len(ds)):
        rate[k + 1] = min(cap[k + 1], np.sqrt(rate[k] ** 2 + 2.0 * accelerate[k] * ds[k]))
    for k in range(len(ds) - 1, -1, -1):
        rate[k] = min(rate[k], np.sqrt(rate[k + 1] ** 2 + 2.0 * decelerate[k] * ds[k]))
    durations = 2.0 * ds / np.maximum(rate[:-1] + rate[1:], _STILL)
    times = np.concatenate([[0.0], np.cumsum(durations)])
    velocities = _central(positions, times)
    velocities[list(stops)] = 0.0
    return TimedPath(times, velocities, _central(velocities, times))


def _central(values: np.ndarray, times: np.ndarray) -> np.ndarray:
    """The derivative at each point over the time between its neighbours (0 at both ends: at rest)."""
    derivative = np.zeros_like(values)
    derivative[1:-1] = (values[2:] - values[:-2]) / (times[2:] - times[:-2])[:, None]
    return derivative
