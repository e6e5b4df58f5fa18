"""The tool's path of an industrial motion (ROS-free): a straight line (LIN) or an arc of a circle (CIRC), as
poses ``T_base_tool`` (points, 4, 4) at most ``step`` [m] apart (and ``ROTATION_STEP_PER_METRE * step`` [rad]),
the orientation interpolated by slerp from the start's to the goal's over the path.

A CIRC's circle is given as Pilz gives it: through an ``interim`` point (the arc from the start through it to
the goal), or about a ``center`` (the shorter arc from the start to the goal; the start and the goal at the same
distance from it).
"""
from __future__ import annotations

import math

import numpy as np

from ..errors import KinematicsError
from .cartesian_path import ROTATION_STEP_PER_METRE, interpolate_poses

#: The auxiliary points of a CIRC, as Pilz names its path constraint.
CIRC_AUXILIARIES = ("interim", "center")
#: Points closer than this [m] are the same point; three points this close to a line span no plane.
SAME_POINT = 1e-6
#: Largest difference [m] between the start's and the goal's distance to a CIRC's center.
RADIUS_TOLERANCE = 1e-3


class ToolPathError(KinematicsError):
    """A tool path that does not exist: a CIRC without a plane, a center not equidistant, an unknown auxiliary."""


def _steps(length: float, angle: float, step: float) -> int:
    return max(1, math.ceil(length / step - 1e-9), math.ceil(angle / (ROTATION_STEP_PER_METRE * step) - 1e-9))


def _rotation_angle(T_from: np.ndarray, T_to: np.ndarray) -> float:
    cosine = (np.trace(T_from[:3, :3].T @ T_to[:3, :3]) - 1.0) / 2.0
    return math.acos(min(1.0, max(-1.0, cosine)))


def line_path(T_from: np.ndarray, T_to: np.ndarray, step: float) -> np.ndarray:
    """(points, 4, 4) from ``T_from`` (included) to ``T_to`` on a straight line, equally spaced."""
    length = float(np.linalg.norm(T_to[:3, 3] - T_from[:3, 3]))
    steps = _steps(length, _rotation_angle(T_from, T_to), step)
    return np.array([T_from, *interpolate_poses(T_from, T_to, steps)])


def circle_through(start: np.ndarray, interim: np.ndarray, goal: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(centre, unit normal) of the circle through three points, the normal turning start -> interim -> goal."""
    a, b = start - goal, interim - goal
    normal = np.cross(start - interim, interim - goal)
    area = float(np.linalg.norm(normal))
    if area < SAME_POINT * max(1e-3, float(np.linalg.norm(a)) * float(np.linalg.norm(b))):
        raise ToolPathError("the start, the interim point and the goal lie on a line: they span no circle")
    axb = np.cross(a, b)
    centre = goal + np.cross(a.dot(a) * b - b.dot(b) * a, axb) / (2.0 * axb.dot(axb))
    return centre, normal / area


def arc_path(T_from: np.ndarray, T_to: np.ndarray, auxiliary: np.ndarray, kind: str, step: float) -> np.ndarray:
    """(points, 4, 4) from ``T_from`` (included) to ``T_to`` on the arc ``kind`` ("interim" or "center")
    ``auxiliary`` (3,) [m, in the same frame] gives, equally spaced along it; ToolPathError when there is none."""
    start, goal, auxiliary = T_from[:3, 3], T_to[:3, 3], np.asarray(auxiliary, dtype=float)
    if kind == "interim":
        centre, normal = circle_through(start, auxiliary, goal)
    elif kind == "center":
        centre = auxiliary
        radii = np.linalg.norm(start - centre), np.linalg.norm(goal - centre)
        if abs(radii[0] - radii[1]) > RADIUS_TOLERANCE:
            raise ToolPathError(f"the start and the goal are {radii[0]:.4g} m and {radii[1]:.4g} m from the "
                                f"center: a circle needs equal distances (within {RADIUS_TOLERANCE} m)")
        normal = np.cross(start - centre, goal - centre)
        if np.linalg.norm(normal) < SAME_POINT * max(radii[0], 1e-3):
            raise ToolPathError("the start, the center and the goal lie on a line: the circle's plane is unknown")
        normal /= np.linalg.norm(normal)
    else:
        raise ToolPathError(f"a CIRC's auxiliary point is one of {list(CIRC_AUXILIARIES)}; got {kind!r}")
    radius = float(np.linalg.norm(start - centre))
    e1 = (start - centre) / radius
    e2 = np.cross(normal, e1)
    to_goal = goal - centre
    sweep = math.atan2(float(to_goal @ e2), float(to_goal @ e1)) % (2 * math.pi)
    steps = _steps(radius * sweep, _rotation_angle(T_from, T_to), step)
    fractions = np.arange(1, steps + 1) / steps
    poses = np.array(interpolate_poses(T_from, T_to, steps))
    angles = fractions * sweep
    poses[:, :3, 3] = centre + radius * (np.cos(angles)[:, None] * e1 + np.sin(angles)[:, None] * e2)
    poses[-1, :3, 3] = goal
    return np.concatenate([T_from[None], poses])
