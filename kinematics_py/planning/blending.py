"""Blend radii of a path's waypoints (ROS-free): how far from each waypoint a blended motion may leave the
corner and stay collision-free, as Zivid's BlendRadius.

The blended motion around waypoint w with radius r is the quadratic curve from the point r before w (on the
incoming segment) to the point r after it (on the outgoing one), w its control point; it is checked at the path
check's resolution. A radius is never more than half the length of either segment (joint-space distance),
so neighbouring blends never overlap; the ends and linear (Cartesian) moves get 0. ``blended_path`` is the path
through the waypoints with each of those curves in place of its corner, as a plan's trajectory flows through them.
"""
from __future__ import annotations

import math
import time
from collections.abc import Sequence

import numpy as np

from .path_check import PathCheck, densify, steps_between

#: Radii tried per waypoint, as fractions of the largest one: the first whose blend is free is kept.
TRIED_FRACTIONS = (1.0, 0.5, 0.25, 0.125)


def blend_curve(before: np.ndarray, corner: np.ndarray, after: np.ndarray, resolution: float) -> np.ndarray:
    """States of the quadratic blend from ``before`` to ``after`` around ``corner``, at most ``resolution`` apart
    (the chord over-counts the steps: the curve is shorter than the two legs)."""
    steps = steps_between(before, corner, resolution) + steps_between(corner, after, resolution)
    t = np.linspace(0.0, 1.0, steps + 1)[:, None]
    return (1 - t) ** 2 * before + 2 * (1 - t) * t * corner + t ** 2 * after


def blend_radii(check: PathCheck, waypoints: Sequence[np.ndarray], motions: Sequence[str],
                deadline: float = math.inf) -> list[float]:
    """The largest collision-free blend radius [joint-space distance] of each waypoint (0 at the ends, where a
    linear move starts or ends, and for the waypoints not reached by ``deadline``, a ``time.perf_counter()``)."""
    radii = [0.0] * len(waypoints)
    for i in range(1, len(waypoints) - 1):
        if motions[i] != "joint" or motions[i + 1] != "joint" or time.perf_counter() > deadline:
            continue
        incoming, outgoing = waypoints[i] - waypoints[i - 1], waypoints[i + 1] - waypoints[i]
        lengths = float(np.linalg.norm(incoming)), float(np.linalg.norm(outgoing))
        largest = 0.5 * min(lengths)
        if largest <= 0:
            continue
        for fraction in TRIED_FRACTIONS:
            radius = fraction * largest
            before = waypoints[i] - radius * incoming / lengths[0]
            after = waypoints[i] + radius * outgoing / lengths[1]
            if check.first_invalid(blend_curve(before, waypoints[i], after, check.resolution)) < 0:
                radii[i] = radius
                break
    return radii


def blended_path(waypoints: Sequence[np.ndarray], motions: Sequence[str], radii: Sequence[float],
                 resolution: float) -> tuple[np.ndarray, list[int]]:
    """(positions at most ``resolution`` apart, the indices where the path stops) of the path through
    ``waypoints``: each waypoint with a radius r > 0 replaced by its quadratic blend (from r before it to r after
    it, as ``blend_radii`` checked it); the path stops at the other interior waypoints but those inside a run of
    linear moves."""
    points = np.asarray(waypoints, dtype=float)
    parts, stops, start = [points[:1]], [], points[0]
    for i in range(1, len(points)):
        corner, radius = points[i], radii[i] if i < len(points) - 1 else 0.0
        if radius > 0:
            before = corner - radius * (corner - points[i - 1]) / np.linalg.norm(corner - points[i - 1])
            after = corner + radius * (points[i + 1] - corner) / np.linalg.norm(points[i + 1] - corner)
            if np.abs(before - start).max() > 0:  # neighbouring blends of half a segment each meet: no line between
                parts.append(densify(np.array([start, before]), resolution)[1:])
            parts.append(densify(blend_curve(before, corner, after, resolution), resolution)[1:])
            start = after
            continue
        parts.append(densify(np.array([start, corner]), resolution)[1:])
        start = corner
        if i < len(points) - 1 and not (motions[i] == "linear" and motions[i + 1] == "linear"):
            stops.append(sum(len(part) for part in parts) - 1)
    return np.concatenate(parts), stops
