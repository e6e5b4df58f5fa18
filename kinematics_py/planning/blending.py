"""Blend radii of a path's waypoints (ROS-free): how far from each waypoint a blended motion may leave the
corner and stay collision-free, as Zivid's BlendRadius.

The blended motion around waypoint w with radius r is the quadratic curve from the point r before w (on the
incoming segment) to the point r after it (on the outgoing one), w its control point; it is checked at the path
check's resolution. A radius is never more than half the length of either segment (joint-space distance),
so neighbouring blends never overlap; the ends and linear (Cartesian) moves get 0.
"""
from __future__ import annotations

import math
import time
from collections.abc import Sequence

import numpy as np

from .path_check import PathCheck, steps_between

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
