"""Blend radii of a path's waypoints (ROS-free): how far from each waypoint a blended motion may leave the
corner and stay collision-free, as Zivid's BlendRadius.

The blended motion around waypoint w is the quadratic curve from a point before w to a point after it, w its
control point; it is checked at the path check's resolution. Between two joint moves the radius r is a joint-space
distance: the curve runs from r before w (on the incoming segment) to r after it (on the outgoing one), r never
more than half the length of either segment (joint-space distance), so neighbouring blends never overlap. Where a
linear (Cartesian) move meets the corner, the radius is in metres of tool travel, as Zivid states it: the curve
replaces the path's points whose tool lies within r of the corner's tool position, on either side, never more than
the half of each neighbouring move nearest the corner (a joint segment's half, a linear run's half). The ends, and
the points inside a run of linear moves, get 0. ``blended_path`` is the path through the waypoints with each of
those curves in place of its corner, as a plan's trajectory flows through them.
"""
from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence

import numpy as np

from .path_check import PathCheck, densify, steps_between
from .path_speed import ToolLimits, time_along_path
from .sphere_proof import first_invalid
from .time_parameterization import JointLimits, TimedPath

#: Radii tried per waypoint, as fractions of the largest one: the first whose blend is free is kept.
TRIED_FRACTIONS = (1.0, 0.5, 0.25, 0.125)


def blend_curve(before: np.ndarray, corner: np.ndarray, after: np.ndarray, resolution: float) -> np.ndarray:
    """States of the quadratic blend from ``before`` to ``after`` around ``corner``, at most ``resolution`` apart
    (the chord over-counts the steps: the curve is shorter than the two legs)."""
    steps = steps_between(before, corner, resolution) + steps_between(corner, after, resolution)
    t = np.linspace(0.0, 1.0, steps + 1)[:, None]
    return (1 - t) ** 2 * before + 2 * (1 - t) * t * corner + t ** 2 * after


#: A path point: (segment k, fraction t) is t of the way from waypoint k - 1 to waypoint k.
PathPoint = tuple[int, float]
#: tool(positions (k, dof)) -> the tool's positions (k, 3) [m], for the radii of corners next to linear moves.
ToolPositions = Callable[[np.ndarray], np.ndarray]


def _is_linear_corner(motions: Sequence[str], i: int) -> bool:
    return "linear" in (motions[i], motions[i + 1])


def _joint_side(points: np.ndarray, segment: int, toward_start: bool, resolution: float) -> list[PathPoint]:
    """The path points of the half of joint segment ``segment`` nearest the corner, from the corner outward."""
    steps = max(2, steps_between(points[segment - 1], points[segment], resolution))
    ts = np.linspace(0.0, 1.0, steps + 1)
    half = ts[ts >= 0.5][::-1][1:] if toward_start else ts[ts <= 0.5][1:]
    return [(segment, float(t)) for t in half]


def _linear_side(motions: Sequence[str], i: int, toward_start: bool) -> list[PathPoint]:
    """The waypoints of the half of the linear run next to corner ``i`` nearest it, from the corner outward (none
    for a run of one move: a blend would take it whole)."""
    if toward_start:
        first = i
        while first > 1 and motions[first - 1] == "linear":
            first -= 1
        run = list(range(i - 1, first - 2, -1))  # waypoints i - 1 .. first - 1
        return [(k + 1, 0.0) for k in run[:len(run) // 2]]
    last = i + 1
    while last + 1 < len(motions) and motions[last + 1] == "linear":
        last += 1
    run = list(range(i + 1, last + 1))
    return [(k, 1.0) for k in run[:len(run) // 2]]


def _point_at(points: np.ndarray, point: PathPoint) -> np.ndarray:
    segment, t = point
    return points[segment - 1] + t * (points[segment] - points[segment - 1])


def _sides(points: np.ndarray, motions: Sequence[str], i: int, resolution: float) -> tuple[list, list]:
    """The candidate blend ends before and after corner ``i`` (``_joint_side`` or ``_linear_side``)."""
    before = (_linear_side(motions, i, True) if motions[i] == "linear" else
              _joint_side(points, i, True, resolution))
    after = (_linear_side(motions, i, False) if motions[i + 1] == "linear" else
             _joint_side(points, i + 1, False, resolution))
    return before, after


def _tool_distances(points: np.ndarray, corner: int, side: list[PathPoint], tool: ToolPositions) -> np.ndarray:
    tips = tool(np.array([points[corner]] + [_point_at(points, point) for point in side]))
    return np.linalg.norm(tips[1:] - tips[0], axis=1)


def blend_ends(points: np.ndarray, motions: Sequence[str], i: int, radius: float, resolution: float,
               tool: ToolPositions | None) -> tuple[PathPoint, PathPoint] | None:
    """(where the blend of radius ``radius`` at corner ``i`` leaves the path, where it joins it again), or None when
    the radius does not fit (a linear corner's sphere holds the whole half of a neighbouring move)."""
    if not _is_linear_corner(motions, i):
        incoming = float(np.linalg.norm(points[i] - points[i - 1]))
        outgoing = float(np.linalg.norm(points[i + 1] - points[i]))
        return (i, 1.0 - radius / incoming), (i + 1, radius / outgoing)
    sides = _sides(points, motions, i, resolution)
    if tool is None or not all(sides):
        return None
    ends = []
    for side in sides:
        inside = np.flatnonzero(_tool_distances(points, i, side, tool) < radius)
        last_inside = int(inside[-1]) if len(inside) else -1
        if last_inside == len(side) - 1:
            return None
        ends.append(side[last_inside + 1])
    return ends[0], ends[1]


def _largest_radius(points: np.ndarray, motions: Sequence[str], i: int, resolution: float,
                    tool: ToolPositions | None) -> float:
    """The largest radius corner ``i`` may have: half of either joint segment [joint-space distance], or, next to
    a linear move, the tool's distance from the corner at the half of either neighbouring move [m] (0: none)."""
    if not _is_linear_corner(motions, i):
        return 0.5 * min(float(np.linalg.norm(points[i] - points[i - 1])),
                         float(np.linalg.norm(points[i + 1] - points[i])))
    sides = _sides(points, motions, i, resolution)
    if tool is None or not all(sides):
        return 0.0
    return min(float(_tool_distances(points, i, side, tool)[-1]) for side in sides)


def blend_radii(check: PathCheck, waypoints: Sequence[np.ndarray], motions: Sequence[str],
                deadline: float = math.inf, tool: ToolPositions | None = None) -> list[float]:
    """The largest collision-free blend radius of each waypoint: a joint-space distance between joint moves, metres
    of tool travel next to a linear move (with ``tool``; without it 0 there). 0 at the ends, inside runs of linear
    moves, and for the waypoints not reached by ``deadline``, a ``time.perf_counter()``."""
    points = np.asarray(waypoints, dtype=float)
    radii = [0.0] * len(points)
    for i in range(1, len(points) - 1):
        if (motions[i] == motions[i + 1] == "linear") or time.perf_counter() > deadline:
            continue
        largest = _largest_radius(points, motions, i, check.resolution, tool)
        for fraction in TRIED_FRACTIONS if largest > 0 else ():
            ends = blend_ends(points, motions, i, fraction * largest, check.resolution, tool)
            if ends is not None and first_invalid(check, blend_curve(
                    _point_at(points, ends[0]), points[i], _point_at(points, ends[1]), check.resolution)) < 0:
                radii[i] = fraction * largest
                break
    return radii


def _dense(points: np.ndarray, cuts: dict[int, set[float]],
           resolution: float) -> tuple[np.ndarray, dict[PathPoint, int]]:
    """(the path through ``points`` at most ``resolution`` apart, through every cut; the index of each cut and
    waypoint in it)."""
    parts, index = [points[:1]], {(1, 0.0): 0}
    count = 1
    for k in range(1, len(points)):
        ts = sorted(cuts.get(k, set()) | {0.0, 1.0})
        for t0, t1 in zip(ts[:-1], ts[1:]):
            piece = densify(np.array([_point_at(points, (k, t0)), _point_at(points, (k, t1))]), resolution)[1:]
            parts.append(piece)
            count += len(piece)
            index[(k, t1)] = count - 1
        index[(k + 1, 0.0)] = count - 1
    return np.concatenate(parts), index


def blended_path(waypoints: Sequence[np.ndarray], motions: Sequence[str], radii: Sequence[float],
                 resolution: float, tool: ToolPositions | None = None) -> tuple[np.ndarray, list[int]]:
    """(positions at most ``resolution`` apart, the indices where the path stops) of the path through
    ``waypoints``: each waypoint with a radius r > 0 replaced by its quadratic blend (``blend_ends``, as
    ``blend_radii`` checked it; ``tool`` for the radii next to linear moves); the path stops at the other interior
    waypoints but those inside a run of linear moves."""
    points = np.asarray(waypoints, dtype=float)
    blends, cuts = [], {}
    for i in range(1, len(points) - 1):
        ends = blend_ends(points, motions, i, radii[i], resolution, tool) if radii[i] > 0 else None
        if ends is not None:
            blends.append((i, *ends))
            for segment, t in ends:
                cuts.setdefault(segment, set()).add(t)
    dense, index = _dense(points, cuts, resolution)
    parts, kept, cursor = [dense[:1]], [0], 0
    for i, before, after in blends:
        a, b = index[before], index[after]
        curve = densify(blend_curve(dense[a], points[i], dense[b], resolution), resolution)[1:]
        parts += [dense[cursor + 1:a + 1], curve]
        kept += list(range(cursor + 1, a + 1)) + [-1] * len(curve)
        cursor = b
    parts.append(dense[cursor + 1:])
    kept += list(range(cursor + 1, len(dense)))
    where = {dense_index: position for position, dense_index in enumerate(kept) if dense_index >= 0}
    stops = [where[index[(i, 1.0)]] for i in range(1, len(points) - 1)
             if index[(i, 1.0)] in where and not (motions[i] == motions[i + 1] == "linear")]
    return np.concatenate(parts), stops


def blended_trajectory(points: Sequence[np.ndarray], motions: Sequence[str], radii: Sequence[float],
                       limits: JointLimits, resolution: float,
                       tool: ToolPositions | None = None) -> tuple[np.ndarray, TimedPath]:
    """(positions, timing) of the path flowing through the waypoints ``points`` within their blend radii
    (``blended_path``; ``tool`` the tip's positions, for the radii [m] next to linear moves), timed as one path
    within the joint limits, at rest only where it stops."""
    positions, stops = blended_path(points, motions, radii, resolution, tool)
    unlimited = np.full(len(positions) - 1, np.inf)
    no_tool_limits = ToolLimits(unlimited, unlimited, unlimited, unlimited, unlimited)
    return positions, time_along_path(positions, np.zeros((len(positions), 3)), np.zeros(len(positions) - 1), limits,
                                      no_tool_limits, stops)
