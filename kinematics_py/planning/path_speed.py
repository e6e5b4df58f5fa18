"""Timing of a dense path that moves without stopping (ROS-free): the fastest speed profile along it, from rest
to rest, within per-segment speed limits of the tool (translation and rotation) and of the joints, and within
acceleration limits.

The path parameter is the joint-space arc length s. Each segment's limit on ds/dt is the smallest of the tool's
translational speed over its travel per unit s, its rotational speed over its turn per unit s and each joint's
speed over its share of the tangent, and on curves the speed at which the curvature takes half a joint's
acceleration; its acceleration (deceleration) limit likewise, each joint's being what the curvature leaves of its
limit at the segment's highest speed (all of it on a straight segment), so the joints stay within their limits on
curves too. A forward pass within the
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
#: Duration [s] of a step between two equal points (times must increase).
_REPEATED_POINT = 1e-6


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
    signed_curvature = np.zeros_like(positions)  # d2q/ds2 at the points
    signed_curvature[1:-1] = 2.0 * np.diff(tangent, axis=0) / (ds[1:] + ds[:-1])[:, None]
    curvature = np.abs(signed_curvature)
    bending = np.maximum(curvature[:-1], curvature[1:])  # (segments, joints): the larger of its ends'
    speed = np.min(np.column_stack([_ratio(tool.speed, dp), _ratio(tool.rotation_speed, turn),
                                    _ratio(joints.max_velocities, tangent).min(axis=1),
                                    np.sqrt(_ratio(0.5 * joints.max_accelerations, bending).min(axis=1))]), axis=1)
    cap = np.concatenate([speed[:1], np.minimum(speed[:-1], speed[1:]), speed[-1:]])
    cap[[0, -1, *stops]] = 0.0
    # what the curve leaves of each joint's acceleration at the segment's highest speed (at least half of it)
    fastest = np.maximum(cap[:-1], cap[1:]) ** 2
    joint_acc = _ratio(joints.max_accelerations - bending * fastest[:, None], tangent).min(axis=1)
    rotation_acc = _ratio(tool.rotation_acceleration, turn)
    accelerate = np.minimum.reduce([_ratio(tool.acceleration, dp), rotation_acc, joint_acc])
    decelerate = np.minimum.reduce([_ratio(tool.deceleration, dp), rotation_acc, joint_acc])
    rate = np.zeros(len(positions))  # ds/dt at each point
    for k in range(len(ds)):
        rate[k + 1] = min(cap[k + 1], np.sqrt(rate[k] ** 2 + 2.0 * accelerate[k] * ds[k]))
    for k in range(len(ds) - 1, -1, -1):
        rate[k] = min(rate[k], np.sqrt(rate[k + 1] ** 2 + 2.0 * decelerate[k] * ds[k]))
    durations = np.where(ds > _STILL, 2.0 * ds / np.maximum(rate[:-1] + rate[1:], _STILL), _REPEATED_POINT)
    times = np.concatenate([[0.0], np.cumsum(durations)])
    return TimedPath(times, *_derivatives(tangent, signed_curvature, rate, ds))


def _derivatives(tangent: np.ndarray, curvature: np.ndarray, rate: np.ndarray,
                 ds: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(velocities, accelerations) at the points of the profile: dq/ds ds/dt, and dq/ds d2s/dt2 + d2q/ds2 (ds/dt)^2
    (dq/ds the mean of the neighbouring segments' directions, d2s/dt2 the mean of their accelerations)."""
    direction = np.concatenate([tangent[:1], 0.5 * (tangent[:-1] + tangent[1:]), tangent[-1:]])
    along = (rate[1:] ** 2 - rate[:-1] ** 2) / (2.0 * ds)
    path_acceleration = np.concatenate([along[:1], 0.5 * (along[:-1] + along[1:]), along[-1:]])
    velocities = direction * rate[:, None]
    return velocities, direction * path_acceleration[:, None] + curvature * rate[:, None] ** 2
