"""The repair of a path whose states between two points are not proven free (``motion_bound``): the joint
segment holding them is searched again with every link's clearance grown, so that the detour's points, free with
that clearance, prove the motions between them.

The clearance is the growth that proves any step of at most the check's resolution per joint, halved while the
detour's ends are not free with it (at most CLEARANCE_HALVINGS times), the detour's motions checked at half the
resolution that clearance proves (``motion_bound.clearance_check``), so that the proof of the trajectory through it
needs at most two halvings more than the clearance's (one, and one for the growths' rounding), within its
MAX_HALVINGS. The detour is searched as ``plan``'s path is (``sphere_search.fast_or_ompl_search``: on the spheres,
grown by the clearance, first). When no detour is found between the segment's ends within half the time left (an
end too close to an obstacle, or no path), the span grows by the neighbouring joint segments, whose inner waypoints
the detour then replaces; linear segments (a straight line of the link) are never searched again, so a span stops
at them.
"""
from __future__ import annotations

import time
from collections.abc import Callable, Sequence

import numpy as np

from .motion_bound import MAX_HALVINGS, clearance_check
from .ompl_search import DEFAULT_PLANNER
from .path_check import PathCheck
from .sphere_search import fast_or_ompl_search

#: Halvings of the grown clearance tried for a detour's ends; fewer than the proof's (it needs up to two more).
CLEARANCE_HALVINGS = MAX_HALVINGS - 2


def nearest_segment(points: np.ndarray, q: np.ndarray) -> int:
    """Index i of the straight segment from ``points[i]`` to ``points[i + 1]`` nearest to ``q`` (joint space)."""
    a, b = points[:-1], points[1:]
    direction = b - a
    length2 = np.maximum(np.einsum("ij,ij->i", direction, direction), 1e-300)
    t = np.clip(np.einsum("ij,ij->i", q - a, direction) / length2, 0.0, 1.0)
    return int(np.argmin(np.linalg.norm(a + t[:, None] * direction - q, axis=1)))


def proven_detour(check: PathCheck, q_from: np.ndarray, q_to: np.ndarray, bounds: tuple[np.ndarray, np.ndarray],
                  deadline: float, should_stop: Callable[[], bool]) -> np.ndarray | None:
    """Waypoints (q_from first, q_to last) of a path whose motions are free with the grown clearance (see the
    module docstring), or None: the ends are not free with any, the motions cannot be proven here, or no path was
    found before ``deadline`` (time.perf_counter() [s])."""
    for halving in range(CLEARANCE_HALVINGS + 1):
        grown = clearance_check(check, halving)
        if grown is None:
            return None
        if grown.state_free(q_from) and grown.state_free(q_to):
            break
    else:
        return None
    remaining = deadline - time.perf_counter()
    if remaining <= 0:
        return None
    found = fast_or_ompl_search(grown, q_from, q_to[None, :], bounds, DEFAULT_PLANNER, remaining, should_stop)
    check.states_checked += grown.states_checked
    return found.waypoints


def repaired_span(check: PathCheck, points: np.ndarray, motions: Sequence[str], segment: int,
                  bounds: tuple[np.ndarray, np.ndarray], deadline: float,
                  should_stop: Callable[[], bool]) -> tuple[int, int, np.ndarray] | None:
    """(first, last, detour): the waypoints ``points[first:last + 1]`` to be replaced by ``detour`` (the same
    ends), the span around joint segment ``segment`` (``motions[i + 1]`` is the motion from point i to i + 1)
    grown until a proven detour is found; None when none is before ``deadline`` or ``segment`` is linear."""
    first, last = segment, segment + 1
    if motions[last] != "joint":
        return None
    while time.perf_counter() < deadline and not should_stop():
        wider_before = first > 0 and motions[first] == "joint"
        wider_after = last + 1 < len(points) and motions[last + 1] == "joint"
        now = time.perf_counter()
        until = (now + deadline) / 2 if wider_before or wider_after else deadline
        detour = proven_detour(check, points[first], points[last], bounds, until, should_stop)
        if detour is not None:
            return first, last, detour
        if not (wider_before or wider_after):
            return None
        first, last = first - wider_before, last + wider_after
    return None
