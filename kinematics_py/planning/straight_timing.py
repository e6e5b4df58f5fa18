"""Straight joint moves timed from rest to rest (ROS-free): the time-optimal trapezoidal (or triangular) profile of
the path length along the move's direction, within the fastest velocity and acceleration every joint allows along it.

``time_straight_line`` times given points on one straight line; ``timed_joint_moves`` densifies a chain of joint
moves (``path_check.densify``'s points) and times each move from rest to rest, in one compiled call (a plan's
trajectory is timed so on every plan: one move took 50 us as numpy arrays).
"""
from __future__ import annotations

import math

import numpy as np

from ..compiled import compiled_kernel
from ..model.joint_steps import straight_steps
from .time_parameterization import MIN_STEP_DURATION, STILL, JointLimits, TimedPath


def time_straight_line(positions: np.ndarray, limits: JointLimits) -> TimedPath:
    """The time-optimal timing, from rest to rest, of ``positions`` (points, joints) on one straight line in joint
    space from the first to the last."""
    positions = np.ascontiguousarray(positions, dtype=float)
    count, dof = positions.shape
    times, velocities, accelerations = np.empty(count), np.empty((count, dof)), np.empty((count, dof))
    _time_line(positions, limits.max_velocities.astype(float), limits.max_accelerations.astype(float), 0.0,
               times, velocities, accelerations)
    return TimedPath(times, velocities, accelerations)


def timed_joint_moves(waypoints: np.ndarray, limits: JointLimits,
                      resolution: float) -> tuple[np.ndarray, TimedPath]:
    """(positions, timing) of the straight joint moves through ``waypoints`` (at least two), each densified to steps
    of at most ``resolution`` per joint and timed from rest to rest, one after the other."""
    positions, times, velocities, accelerations = timed_moves(
        np.ascontiguousarray(waypoints, dtype=float), resolution, limits.max_velocities.astype(float),
        limits.max_accelerations.astype(float))
    return positions, TimedPath(times, velocities, accelerations)


@compiled_kernel
def timed_moves(waypoints, resolution, max_velocities, max_accelerations):
    """(positions, times, velocities, accelerations) of ``timed_joint_moves``."""
    moves, dof = waypoints.shape[0] - 1, waypoints.shape[1]
    steps, count = np.empty(moves, dtype=np.int64), 1
    for m in range(moves):
        steps[m] = straight_steps(waypoints[m], waypoints[m + 1], resolution)
        count += steps[m]
    positions, times = np.empty((count, dof)), np.empty(count)
    velocities, accelerations = np.empty((count, dof)), np.empty((count, dof))
    _time_moves(waypoints, steps, max_velocities, max_accelerations, positions, times, velocities, accelerations)
    return positions, times, velocities, accelerations


@compiled_kernel
def _time_moves(waypoints, steps, max_velocities, max_accelerations, positions, times, velocities, accelerations):
    """Fill the densified moves (``path_check.segment_states``' points after the first waypoint) and their timing."""
    dof = waypoints.shape[1]
    positions[0] = waypoints[0]
    times[0] = 0.0
    velocities[0] = accelerations[0] = 0.0
    junction = np.empty(dof)  # a move's first point is the last of the move before: it keeps that move's values
    first = 0
    for m in range(waypoints.shape[0] - 1):
        for k in range(1, steps[m] + 1):
            fraction = k / steps[m]
            for d in range(dof):
                positions[first + k, d] = waypoints[m, d] + fraction * (waypoints[m + 1, d] - waypoints[m, d])
        last = first + steps[m]
        junction[:] = accelerations[first]
        _time_line(positions[first:last + 1], max_velocities, max_accelerations, times[first],
                   times[first:last + 1], velocities[first:last + 1], accelerations[first:last + 1])
        accelerations[first] = junction
        first = last


@compiled_kernel
def _time_line(positions, max_velocities, max_accelerations, offset, times, velocities, accelerations):
    """times (from ``offset`` [s]), velocities and accelerations of ``positions`` on one straight line from the
    first to the last, timed from rest to rest (``time_straight_line``)."""
    count, dof = positions.shape
    length = 0.0
    for d in range(dof):
        length += (positions[count - 1, d] - positions[0, d]) ** 2
    length = math.sqrt(length)
    if count < 2 or length < STILL:
        for k in range(count):
            times[k] = offset + k * MIN_STEP_DURATION
            for d in range(dof):
                velocities[k, d] = accelerations[k, d] = 0.0
        return
    direction = np.empty(dof)
    speed, acceleration = np.inf, np.inf
    for d in range(dof):
        direction[d] = (positions[count - 1, d] - positions[0, d]) / length
        if direction[d] != 0:
            speed = min(speed, max_velocities[d] / abs(direction[d]))
            acceleration = min(acceleration, max_accelerations[d] / abs(direction[d]))
    ramp = min(speed * speed / acceleration, length) / 2.0  # the distance of each ramp
    peak = math.sqrt(2.0 * acceleration * ramp)  # the top speed (speed when the profile is a trapezoid)
    ramp_time, cruise_time = peak / acceleration, (length - 2.0 * ramp) / peak
    for k in range(count):
        along = 0.0 if k == 0 else length  # the ends exactly: at rest there
        if 0 < k < count - 1:
            along = 0.0
            for d in range(dof):
                along += (positions[k, d] - positions[0, d]) * direction[d]
            along = min(max(along, 0.0), length)
        if along < ramp:
            time = math.sqrt(2.0 * along / acceleration)
            path_speed, path_acceleration = acceleration * time, acceleration
        elif along > length - ramp:
            time = 2.0 * ramp_time + cruise_time - math.sqrt(2.0 * max(length - along, 0.0) / acceleration)
            path_speed, path_acceleration = acceleration * (2.0 * ramp_time + cruise_time - time), -acceleration
        else:
            time = ramp_time + (along - ramp) / peak
            path_speed, path_acceleration = peak, 0.0
        times[k] = offset + time
        for d in range(dof):
            velocities[k, d] = path_speed * direction[d]
            accelerations[k, d] = path_acceleration * direction[d]
