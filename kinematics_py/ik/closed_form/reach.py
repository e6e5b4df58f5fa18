"""How far a closed-form arm can place its wrist point: a proof that a pose is out of reach, whatever the joints.

The first joints of a closed-form family place one point, the wrist point: the wrist centre of a spherical wrist
(moved by joints 1-3), or where axes 5 and 6 meet on an arm with three parallel axes (moved by joints 1-4); the
joints after them only turn about it. Each of these rotations keeps a sphere centred on its own axis, so, from
the innermost joint out, the wrist point stays within a sphere around a point of axis 1 whose radius adds the
distances between the centres taken on consecutive axes (any points of the axes will do; the nearer, the tighter).
A target whose wrist point lies farther from that centre is out of reach (joint limits ignored): no numerical
search can find it.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np
from scipy.optimize import minimize

from .classification import Classification, ClosedFormFamily
from .families import TIP_POSITION_ROW, TIP_ROTATION_ROW, WRIST_POINT_ROW


class ReachSphere(NamedTuple):
    """Every configuration's wrist point lies within ``radius`` [m] of ``centre`` (a point of axis 1), in the
    frame the family is solved in (the chain's base frame, or its tip frame for a chain solved reversed)."""

    centre: np.ndarray
    radius: float
    #: Distance [m] from the tip to the wrist point (a rotation error of e rad moves the wrist point by <= e times it).
    wrist_offset: float


def reach_sphere(classification: Classification) -> ReachSphere:
    """The sphere the wrist point of ``classification``'s chain stays in, whatever the joint values: centred on
    axis 1, its radius the circle's about the last positioning axis plus the path through one point on each axis
    before it (any points give a valid sphere; the path is shortened from the nearest points by a small convex
    minimization)."""
    geometry = classification.packed
    last = (3 if classification.family == ClosedFormFamily.SPHERICAL_WRIST else 4) - 1
    wrist = geometry[WRIST_POINT_ROW]
    circle_centre = _nearest_on_axis(geometry[last], geometry[6 + last], wrist)
    axes, points = geometry[last - 1::-1], geometry[5 + last:5:-1]  # the axes before the last one, inner first

    def centres(t: np.ndarray) -> np.ndarray:
        return points + axes * t[:, None]

    def path_length(t: np.ndarray) -> float:
        path = np.vstack([circle_centre, centres(t)])
        return float(np.linalg.norm(np.diff(path, axis=0), axis=1).sum())

    t, previous = np.empty(last), circle_centre
    for k in range(last):  # from each centre, the nearest point of the next axis out
        t[k] = float(axes[k] @ (previous - points[k]))
        previous = centres(t)[k]
    shortened = minimize(path_length, t, method="Nelder-Mead", options={"xatol": 1e-12, "fatol": 1e-14})
    if path_length(shortened.x) < path_length(t):
        t = shortened.x
    radius = float(np.linalg.norm(wrist - circle_centre)) + path_length(t)
    wrist_offset = float(np.linalg.norm(wrist - geometry[TIP_POSITION_ROW]))
    return ReachSphere(centres(t)[-1], radius, wrist_offset)


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
