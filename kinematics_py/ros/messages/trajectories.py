"""Trajectories as messages: a timed path as moveit_msgs/RobotTrajectory, the points a plan answers with, and the
scaling factors of a request.

A plan's trajectory holds a point every ``resolution`` per joint, each checked, and every state between two of them
proven free (``planning.motion_bound``). Along a straight joint move timed as one trapezoid
(``time_straight_line``) the points of one phase (accelerating, cruising, braking) share their acceleration, and
positions and velocities are one quadratic in time: a controller interpolating between the phase's ends (cubic
from positions and velocities, quintic with the accelerations too) moves exactly as through every point, on the
same straight segment. ``needed_points`` keeps the points a controller needs to follow the trajectory so: both ends,
every point whose acceleration differs from one of its neighbours', and, where the quadratic of the last kept point
or the straight segment between the kept points around them misses the dropped points (within SAME_VALUE), more:
the first step of a move whose ramp is shorter than a step (the path's first point is at rest with no
acceleration), the turning point of a move back along the same line with the same acceleration. Every dropped point
lies on the straight segment between the kept points around it, so every state between the answer's points is a
state between the checked ones, proven free: at most six points per straight move. Points timed by toppra (linear
moves, blended paths) all differ in acceleration and are all kept.
"""
from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from builtin_interfaces.msg import Duration
from moveit_msgs.msg import RobotTrajectory
from trajectory_msgs.msg import JointTrajectoryPoint

from ...errors import ErrorCode, RequestError
from ...planning.time_parameterization import TimedPath

#: How far [joint units, joint units/s, relative to 1 + the value] a dropped point may be from where the kept points
#: around it put it (rounding of the timing's arithmetic).
SAME_VALUE = 1e-9


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
    """A plan's trajectory as ``trajectory_msg``, with the points a controller needs (``needed_points``)."""
    kept = needed_points(positions, timed)
    return trajectory_msg(frame, names, positions[kept], TimedPath(
        timed.time_from_start[kept], timed.velocities[kept], timed.accelerations[kept]), stamp, trajectory)


def duration_parts(seconds: np.ndarray) -> tuple[list[int], list[int]]:
    """(whole seconds, nanoseconds) of each time [s] >= 0, as builtin_interfaces/Duration holds them."""
    seconds = np.asarray(seconds, dtype=float)
    whole = np.floor(seconds)
    nanoseconds = np.minimum(np.round((seconds - whole) * 1e9), 999_999_999)
    return whole.astype(np.int64).tolist(), nanoseconds.astype(np.int64).tolist()


def needed_points(positions: np.ndarray, timed: TimedPath) -> np.ndarray:
    """Indices, increasing, of the points of a timed path a controller needs to follow it exactly (see the module
    docstring): the ends, the points where the acceleration changes, and any point not reproduced by its kept
    neighbours."""
    count = len(positions)
    if count <= 2:
        return np.arange(count)
    accelerations = np.asarray(timed.accelerations, dtype=float)
    middle = accelerations[1:-1]
    same = np.all(middle == accelerations[:-2], axis=1) & np.all(middle == accelerations[2:], axis=1)
    keep = np.concatenate([[True], ~same, [True]])
    while True:
        missed = _not_reproduced(np.asarray(positions, dtype=float), timed, keep)
        if not missed.any():
            return np.flatnonzero(keep)
        keep |= missed


def _not_reproduced(positions: np.ndarray, timed: TimedPath, keep: np.ndarray) -> np.ndarray:
    """Mask of the dropped points to keep after all, at most one per run of dropped points between two kept ones i
    and j. Each dropped point k, and j, must be where the quadratic from i puts it (positions and velocities): else
    the last point before the first that is not is kept (the first itself when it follows i: the step between them
    is the timed path's own). Each dropped point must lie on the straight segment from i to j: else the one farthest
    off is kept (a move that turns back on its line with the same acceleration: its turning point).

    The tested points come in increasing order, so their runs (their i) are contiguous and increasing: a run's first
    point and its farthest one are found along the arrays, without sorting (a plan's answer is built on every plan)."""
    index = np.arange(len(positions))
    previous = np.maximum.accumulate(np.where(keep, index, 0))
    previous = np.concatenate([[0], previous[:-1]])  # the last kept point before each point
    following = np.minimum.accumulate(np.where(keep, index, len(index) - 1)[::-1])[::-1]
    tested = ~keep | np.concatenate([[False], ~keep[:-1]])  # dropped points, and kept ones right after dropped ones
    i, k = previous[tested], index[tested]
    dt = (timed.time_from_start[k] - timed.time_from_start[i])[:, None]
    q_i, q_k = positions[i], positions[k]
    v_i, v_k, a_i = timed.velocities[i], timed.velocities[k], timed.accelerations[i]
    q = q_i + v_i * dt + a_i * dt * dt / 2
    v = v_i + a_i * dt
    late = ((np.abs(q - q_k) > SAME_VALUE * (1 + np.abs(q_k)))
            | (np.abs(v - v_k) > SAME_VALUE * (1 + np.abs(v_k)))).any(axis=1)
    missed = np.zeros(len(positions), dtype=bool)
    skipped = keep[k]  # no segment test: kept points, and the runs whose quadratic misses
    if late.any():
        runs, first_off = _first_of_runs(i[late], k[late])  # the first point of each run that is off
        missed[np.where(first_off - 1 > runs, first_off - 1, first_off)] = True
        in_run = np.zeros(len(positions), dtype=bool)
        in_run[runs] = True
        skipped = skipped | in_run[i]
    segment, offset = positions[following[k]] - q_i, q_k - q_i
    length2 = np.einsum("ij,ij->i", segment, segment)
    along = np.where(length2 > 0, np.einsum("ij,ij->i", offset, segment) / np.where(length2 > 0, length2, 1), 0.0)
    aside = np.abs(offset - along[:, None] * segment).max(axis=1)
    off = np.where(skipped, 0.0, np.maximum(np.maximum(aside, along - 1), -along))
    far = off > SAME_VALUE
    if far.any():  # the farthest point of each run with points off its segment (the first of equally far ones)
        farthest = off[far]
        starts = _run_starts(i[far])
        run = np.cumsum(starts) - 1
        at_max = np.flatnonzero(farthest == np.maximum.reduceat(farthest, np.flatnonzero(starts))[run])
        _, first = _first_of_runs(run[at_max], at_max)
        missed[k[far][first]] = True
    return missed & ~keep


def _run_starts(runs: np.ndarray) -> np.ndarray:
    """Where each run of equal values of ``runs`` (nondecreasing) begins (bool, alongside)."""
    return np.concatenate([[True], runs[1:] != runs[:-1]])


def _first_of_runs(runs: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(each run, the value of its first entry) of ``runs`` nondecreasing, ``values`` alongside."""
    first = _run_starts(runs)
    return runs[first], values[first]
