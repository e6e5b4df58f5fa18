"""The repair of a path whose states between two points are not proven free (``motion_bound``): the joint
segment holding them is searched again, each motion of the detour accepted only when the trajectory's own proof
proves it (``sphere_proof.checked_path`` on its states at the trajectory's resolution), its states kept at a
clearance from the obstacles so that the proof is short.

The clearance is the growth that proves any step of at most the check's resolution per joint, halved while the
detour's ends are not free with it (at most CLEARANCE_HALVINGS times: the proof halves a step up to MAX_HALVINGS
times). The detour is searched on the spheres grown by that clearance first (``sphere_search``), and by OMPL's
RRT-Connect with the proof as its motion check when a motion of that path is not proven (its path not shortened:
each shortcut would be a new proof, and a motion along an obstacle at a small clearance is a long one). The proof
asks for finer states only where a motion passes close to an obstacle, so a detour from an end close to one costs
a few more checks there, not a fine check of every motion. When no detour is found between the segment's ends within
half the time left (an end too close to an obstacle, or no path), the span grows by the neighbouring joint
segments, whose inner waypoints the detour then replaces; linear segments (a straight line of the link) are never
searched again, so a span stops at them.
"""
from __future__ import annotations

import time
from collections.abc import Callable, Sequence

import numpy as np

from .motion_bound import MAX_HALVINGS, clearance_check
from .ompl_search import DEFAULT_PLANNER, search_path
from .path_check import PathCheck, densify
from .sphere_proof import checked_path, segment_free
from .sphere_search import FAST_LIMIT_S, FAST_SHARE, sphere_search

#: Halvings of the grown clearance tried for a detour's ends, and how many more the proof of a detour's motion may
#: take (a motion whose states keep that clearance is proven in about as many): fewer than a trajectory's proof.
PROOF_HALVINGS_MORE = 2
CLEARANCE_HALVINGS = MAX_HALVINGS - PROOF_HALVINGS_MORE


def nearest_segment(points: np.ndarray, q: np.ndarray) -> int:
    """Index i of the straight segment from ``points[i]`` to ``points[i + 1]`` nearest to ``q`` (joint space)."""
    a, b = points[:-1], points[1:]
    direction = b - a
    length2 = np.maximum(np.einsum("ij,ij->i", direction, direction), 1e-300)
    t = np.clip(np.einsum("ij,ij->i", q - a, direction) / length2, 0.0, 1.0)
    return int(np.argmin(np.linalg.norm(a + t[:, None] * direction - q, axis=1)))


class ProvenMotions:
    """The check a detour is searched with: a state is valid when it is free with the clearance (``grown``), a
    motion when its states at ``grown``'s resolution are and ``check``'s proof proves it within ``halvings`` (its
    points at ``check``'s resolution valid, the states between them proven free), so that the trajectory's proof
    (up to MAX_HALVINGS) proves it too."""

    def __init__(self, check: PathCheck, grown: PathCheck, halvings: int):
        self.check, self.grown, self.halvings = check, grown, halvings

    def state_free(self, q: np.ndarray) -> bool:
        return self.grown.state_free(q)

    def segment_free(self, q_from: np.ndarray, q_to: np.ndarray) -> bool:
        if not segment_free(self.grown, q_from, q_to):
            return False
        invalid, unproven = checked_path(self.check, densify(np.array([q_from, q_to]), self.check.resolution),
                                         self.halvings)
        return bool(invalid < 0 and unproven == -1)

    def path_proven(self, waypoints: np.ndarray) -> bool:
        return all(self.segment_free(a, b) for a, b in zip(waypoints[:-1], waypoints[1:]))


def proven_detour(check: PathCheck, q_from: np.ndarray, q_to: np.ndarray, bounds: tuple[np.ndarray, np.ndarray],
                  deadline: float, should_stop: Callable[[], bool]) -> np.ndarray | None:
    """Waypoints (q_from first, q_to last) of a path whose motions ``check``'s proof proves free (see the module
    docstring), or None: the ends are not free with any clearance, the motions cannot be proven here, or no path
    was found before ``deadline`` (time.perf_counter() [s])."""
    for halving in range(CLEARANCE_HALVINGS + 1):
        grown = clearance_check(check, halving)
        if grown is None:
            return None
        if grown.state_free(q_from) and grown.state_free(q_to):
            break
    else:
        return None
    proven = ProvenMotions(check, grown, halving + PROOF_HALVINGS_MORE)
    remaining = deadline - time.perf_counter()
    if remaining <= 0:
        return None
    try:
        waypoints = sphere_search(grown, q_from, q_to[None, :], bounds, min(FAST_SHARE * remaining, FAST_LIMIT_S),
                                  should_stop)
        if waypoints is not None and proven.path_proven(waypoints):
            return waypoints
        remaining = deadline - time.perf_counter()
        if remaining <= 0:
            return None
        return search_path(proven, q_from, q_to[None, :], bounds, DEFAULT_PLANNER, remaining, should_stop,
                           simplify=False).waypoints
    finally:
        check.states_checked += grown.states_checked


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
