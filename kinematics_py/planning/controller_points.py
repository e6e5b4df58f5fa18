"""The points of a timed trajectory a controller needs to follow it exactly (ROS-free): what a plan answers with.

A plan's trajectory holds a point every ``resolution`` per joint, each checked, and every state between two of them
proven free (``motion_bound``). Along a straight joint move timed as one trapezoid (``time_straight_line``) the
points of one phase (accelerating, cruising, braking) share their acceleration, and positions and velocities are
one quadratic in time: a controller interpolating between the phase's ends (cubic from positions and velocities,
quintic with the accelerations too) moves exactly as through every point, on the same straight segment.
``needed_points`` keeps the points a controller needs to follow the trajectory so: both ends, every point whose
acceleration differs from one of its neighbours', and, where the quadratic of the last kept point or the straight
segment between the kept points around them misses the dropped points (within SAME_VALUE), more: the first step of
a move whose ramp is shorter than a step (the path's first point is at rest with no acceleration), the turning point
of a move back along the same line with the same acceleration. Every dropped point lies on the straight segment
between the kept points around it, so every state between the answer's points is a state between the checked ones,
proven free: at most six points per straight move. Points timed by toppra (linear moves, blended paths) all differ
in acceleration and are all kept. Compiled: a plan's answer is built on every plan (1,124 points in 0.3 ms as
numpy arrays, 32 us here).
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..compiled import compiled_kernel
from .motion import MotionPlan
from .time_parameterization import TimedPath

#: How far [joint units, joint units/s, relative to 1 + the value] a dropped point may be from where the kept points
#: around it put it (rounding of the timing's arithmetic).
SAME_VALUE = 1e-9


def sparse_plan(plan: MotionPlan) -> MotionPlan:
    """``plan`` with only the trajectory points a controller needs to follow it exactly (``needed_points``): what an
    answer sends (a few points per straight move instead of one every resolution)."""
    if plan.controller_points_only or plan.timing is None:
        return plan
    positions, timing = sparse_trajectory(plan.positions, plan.timing)
    return replace(plan, positions=positions, timing=timing, controller_points_only=True)


def sparse_trajectory(positions: np.ndarray, timed: TimedPath) -> tuple[np.ndarray, TimedPath]:
    """The points of ``positions`` timed by ``timed`` that a controller needs (``needed_points``), with their timing."""
    kept = needed_points(positions, timed)
    return positions[kept], TimedPath(timed.time_from_start[kept], timed.velocities[kept], timed.accelerations[kept])


def needed_points(positions: np.ndarray, timed: TimedPath) -> np.ndarray:
    """Indices, increasing, of the points of a timed path a controller needs to follow it exactly (see the module
    docstring): the ends, the points where the acceleration changes, and any point not reproduced by its kept
    neighbours."""
    count = len(positions)
    if count <= 2:
        return np.arange(count)
    keep = np.zeros(count, dtype=bool)
    _keep_needed(*(np.ascontiguousarray(values, dtype=float) for values in (
        positions, timed.time_from_start, timed.velocities, timed.accelerations)), keep)
    return np.flatnonzero(keep)


@compiled_kernel
def _keep_needed(positions, times, velocities, accelerations, keep):
    """keep[k] <- True for the ends, the points whose acceleration differs from a neighbour's, then the points not
    reproduced by the kept ones around them, until every dropped point is."""
    count, dof = positions.shape
    keep[0] = keep[count - 1] = True
    for k in range(1, count - 1):
        for d in range(dof):
            if accelerations[k, d] != accelerations[k - 1, d] or accelerations[k, d] != accelerations[k + 1, d]:
                keep[k] = True
                break
    while _not_reproduced(positions, times, velocities, accelerations, keep):
        pass


@compiled_kernel
def _not_reproduced(positions, times, velocities, accelerations, keep):
    """Keep, in each run of dropped points between two kept ones i and j, at most one point more; whether one was.
    Each dropped point k, and j, must be where the quadratic from i puts it (positions and velocities): else the
    last point before the first that is not is kept (the first itself when it follows i: the step between them is
    the timed path's own). Each dropped point must lie on the straight segment from i to j: else the one farthest off
    is kept (the first of equally far ones; a move that turns back on its line with the same acceleration: its
    turning point)."""
    count, dof = positions.shape
    missed = np.zeros(count, dtype=np.bool_)
    i = 0
    while i < count - 1:
        j = i + 1
        while not keep[j]:
            j += 1
        if j > i + 1:
            first_late = -1
            for k in range(i + 1, j + 1):
                dt = times[k] - times[i]
                for d in range(dof):
                    q = positions[i, d] + velocities[i, d] * dt + accelerations[i, d] * dt * dt / 2
                    v = velocities[i, d] + accelerations[i, d] * dt
                    if abs(q - positions[k, d]) > SAME_VALUE * (1 + abs(positions[k, d])) or \
                            abs(v - velocities[k, d]) > SAME_VALUE * (1 + abs(velocities[k, d])):
                        first_late = k
                        break
                if first_late >= 0:
                    break
            if first_late >= 0:
                missed[first_late - 1 if first_late - 1 > i else first_late] = True
            else:
                farthest, farthest_off = -1, 0.0
                length2 = 0.0
                for d in range(dof):
                    length2 += (positions[j, d] - positions[i, d]) ** 2
                for k in range(i + 1, j):
                    along = 0.0
                    if length2 > 0:
                        for d in range(dof):
                            along += (positions[k, d] - positions[i, d]) * (positions[j, d] - positions[i, d])
                        along /= length2
                    off = max(along - 1, -along)
                    for d in range(dof):
                        aside = positions[k, d] - positions[i, d] - along * (positions[j, d] - positions[i, d])
                        off = max(off, abs(aside))
                    if off > SAME_VALUE and (farthest < 0 or off > farthest_off):
                        farthest, farthest_off = k, off
                if farthest >= 0:
                    missed[farthest] = True
        i = j
    changed = False
    for k in range(count):
        if missed[k] and not keep[k]:
            keep[k] = True
            changed = True
    return changed
