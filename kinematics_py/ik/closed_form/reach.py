"""How far a closed-form arm can place its wrist point: a proof that a pose is out of reach, whatever the joints.

The first joints of a closed-form family place one point, the wrist point: the wrist centre of a spherical wrist
(moved by joints 1-3), or where axes 5 and 6 meet on an arm with three parallel axes (moved by joints 1-4); the
joints after them only turn about it. Each of these rotations keeps a sphere centred on its own axis, so, from
the innermost joint out, the wrist point stays within a sphere around a point of axis 1 whose radius adds the
distances from the wrist point to a point of the innermost axis, and between the points taken on consecutive
axes (any points of the axes will do; the shorter that path, the tighter the sphere).
A target whose wrist point lies farther from that centre is out of reach (joint limits ignored): no numerical
search can find it.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np
from scipy.optimize import minimize

from .classification import Classification, ClosedFormFamily
from .families import TIP_POSITION_ROW, TIP_ROTATION_ROW, WRIST_POINT_ROW

#: The smoothing [m] of the path's hops in successive minimizations of its length.
SMOOTHING = (1e-2, 1e-3, 1e-4, 1e-5, 1e-6, 1e-8)


class ReachSphere(NamedTuple):
    """Every configuration's wrist point lies within ``radius`` [m] of ``centre`` (a point of axis 1), in the
    frame the family is solved in (the chain's base frame, or its tip frame for a chain solved reversed)."""

    centre: np.ndarray
    radius: float
    #: Distance [m] from the tip to the wrist point (a rotation error of e rad moves the wrist point by <= e times it).
    wrist_offset: float


def reach_sphere(classification: Classification) -> ReachSphere:
    """The sphere the wrist point of ``classification``'s chain stays in, whatever the joint values: centred on
    axis 1, its radius the length of a path from the wrist point at zero through one point on each positioning
    axis, innermost first (any points give a valid sphere; the path is shortened from the nearest points by a
    small convex minimization)."""
    geometry = classification.packed
    positioning = 3 if classification.family == ClosedFormFamily.SPHERICAL_WRIST else 4
    wrist = geometry[WRIST_POINT_ROW]
    axes, points = geometry[positioning - 1::-1], geometry[5 + positioning:5:-1]  # innermost axis first

    def centres(t: np.ndarray) -> np.ndarray:
        return points + axes * t[:, None]

    def path_length(t: np.ndarray, smoothing: float = 0.0) -> float:
        hops = np.diff(np.vstack([wrist, centres(t)]), axis=0)
        return float(np.sqrt(np.einsum("ij,ij->i", hops, hops) + smoothing ** 2).sum())

    def path_gradient(t: np.ndarray, smoothing: float) -> np.ndarray:
        hops = np.diff(np.vstack([wrist, centres(t)]), axis=0)
        directions = hops / np.sqrt(np.einsum("ij,ij->i", hops, hops) + smoothing ** 2)[:, None]
        # Moving point k along its axis lengthens hop k (into it) and shortens hop k + 1 (out of it).
        pull = directions - np.vstack([directions[1:], np.zeros((1, 3))])
        return np.einsum("ij,ij->i", axes, pull)

    t, previous = np.empty(positioning), wrist
    for k in range(positioning):  # from each point, the nearest point of the next axis out
        t[k] = float(axes[k] @ (previous - points[k]))
        previous = centres(t)[k]
    # The shortest path often has a zero-length hop (consecutive axes that meet): a kink. Minimize smoothed
    # lengths, less smoothed each time, and keep whichever path is shortest.
    for smoothing in SMOOTHING:
        shortened = minimize(path_length, t, args=(smoothing,), jac=path_gradient, method="BFGS").x
        if path_length(shortened) < path_length(t):
            t = shortened
    wrist_offset = float(np.linalg.norm(wrist - geometry[TIP_POSITION_ROW]))
    return ReachSphere(centres(t)[-1], path_length(t), wrist_offset)


def wrist_point_distance(classification: Classification, sphere: ReachSphere, T_base_tip: np.ndarray) -> float:
    """The distance [m] from ``sphere.centre`` to the wrist point a target pose ``T_base_tip`` (4, 4) needs (inf for
    a target too far away to compute it: also out of reach)."""
    geometry = classification.packed
    with np.errstate(over="ignore", invalid="ignore"):
        T = np.linalg.inv(T_base_tip) if classification.config[2] == 1 else T_base_tip
        R = T[:3, :3] @ geometry[TIP_ROTATION_ROW:TIP_ROTATION_ROW + 3].T  # target rotation times the tip's at zero^T
        wrist = T[:3, 3] + R @ (geometry[WRIST_POINT_ROW] - geometry[TIP_POSITION_ROW])
        return float(np.linalg.norm(wrist - sphere.centre))


def _nearest_on_axis(direction: np.ndarray, point: np.ndarray, x: np.ndarray) -> np.ndarray:
    """The point of the line through ``point`` along the unit ``direction`` nearest ``x``."""
    return point + direction * float(direction @ (x - point))
