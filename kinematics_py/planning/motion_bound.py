"""The states between a path's checked points, proven free: a bound on how far any point of a link moves over a
straight joint motion, used as a clearance margin.

Over a straight motion by ``dq``, a point of link l moves along a path no longer than
``delta_l = sum_j |dq_j| R[l, j]``: for a revolute joint j, ``R[l, j]`` bounds the point's distance from joint j's
origin (the link's farthest shape corner from its own frame plus the joint offsets between them: the same whatever
the joint values); for a prismatic joint, 1. Half-way through the motion every point is within ``delta_l / 2`` of where
it was at one of the two ends, so when each link, grown by ``delta_l / 2``, is free at both ends, every state between
them is free (two links together need ``(delta_a + delta_b) / 2``: each is grown by its half).

``first_unproven`` grows every link by the largest half-motion of any segment of the path and checks every point
with the exact checker; a segment whose ends are not both free is halved, its middle added, and checked again with
half the growth, up to MAX_HALVINGS times. Links are grown exactly (``CollisionChecker.set_offset``: every point
within the growth of the checked shape) where the checker can (``checker.offsets_exact``: no world mesh or octree);
elsewhere by their padding, and a link mesh checked as its convex hull is then grown by moving its vertices away
from their centroid (MoveIt's padding), which can offset a face by less than the padding: such a link's growth is
multiplied by the hull's (largest vertex distance / smallest face distance) from that centroid, which makes it a full
offset (3.5 to 18.6 on the Kinova's links, each growth also a new hull to build: about 60 ms a rung there). Not
proven (``None``): meshes checked as triangles, attached objects, floating or planar joints in the group, a scene's
own link paddings.

``plan`` proves every trajectory it returns with it; a joint segment it cannot prove is searched again with every
link grown (``clearance_check``, ``proof_repair``). bench/motion_planning.py reports it for every planner's
trajectories.
"""
from __future__ import annotations

import weakref
from collections import Counter
from typing import NamedTuple

import numpy as np

from ..collision.checker import CollisionChecker, offsets_exact
from ..collision.geometry import GeometryError, Mesh, convex_hull
from ..collision.spheres import shape_polytope
from ..model.tree_kernels import FIXED, PRISMATIC, REVOLUTE
from .path_check import PathCheck

#: Times a segment is halved before it counts as not proven (its growth then 1/16384 of the first).
MAX_HALVINGS = 14
#: Parts of one segment still to prove above which the states they touch at are checked bare (a segment whose
#: states collide, between two free points, kept 1049 parts in one halving on a Panda's cage plan: 0.5 s).
CHECKED_BARE_FROM = 16
#: Growths are rounded up to SMALLEST_GROWTH [m] times a power of sqrt(2), so that few distinct paddings (each its
#: own collision geometry, kept with the shapes) are ever built.
SMALLEST_GROWTH = 1e-6

#: Bounds kept per robot model (see ``_provable``), at most this many per model.
MAX_KEPT_BOUNDS = 16
#: Grown checkers kept per checker (``_grown``).
MAX_KEPT_GROWN = 64
_GROWN: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_BOUNDS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_LATEST: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # per checker: (versions and group, answer)


def link_reach(checker: CollisionChecker, joint_names) -> tuple[tuple[str, ...], np.ndarray] | None:
    """(links with geometry, R (links, joints)): how far a point of each link moves per unit of each joint of
    ``joint_names`` (see the module docstring); None when a joint of the group moves a link in a way not bounded so."""
    tree, model = checker.model.tree.table, checker.model
    column = {model.tree.variable_index[name]: j for j, name in enumerate(joint_names)}
    row_of_child = {int(child): k for k, child in enumerate(tree.child_link)}
    links = tuple(checker.link_geometry)
    reach = np.zeros((len(links), len(joint_names)))
    for l, link in enumerate(links):
        corners = np.vstack([shape_polytope(placed)[2] for placed in checker.link_geometry[link]])
        distance = float(np.linalg.norm(corners, axis=1).max()) + checker.padding(link) + checker.offset(link)
        index = model.link_names.index(link)
        while index in row_of_child:
            k = row_of_child[index]
            variable, motion, multiplier = int(tree.first_variable[k]), tree.motion[k], abs(tree.multiplier[k])
            j = column.get(variable, -1)
            if motion == REVOLUTE and j >= 0:
                reach[l, j] += distance * multiplier
            elif motion == PRISMATIC:
                reach[l, j] += multiplier if j >= 0 else 0.0
                distance += multiplier * max(abs(model.tree.lower[variable]), abs(model.tree.upper[variable]))
            elif motion not in (FIXED, REVOLUTE):  # floating or planar: the link's frame moves without a bound here
                if j >= 0:
                    return None
                distance = np.inf
            distance += float(np.linalg.norm(tree.T_parent_joint[k][:3, 3]))
            index = int(tree.parent_link[k])
    return (links, reach) if np.isfinite(reach).all() else None


def _growth_factor(checker: CollisionChecker, link: str) -> float:
    """What a link's padding is multiplied by for a full offset of its shapes (1 without meshes)."""
    factor = 1.0
    for placed in checker.link_geometry[link]:
        if isinstance(placed.shape, Mesh):
            try:
                hull = convex_hull(placed.shape)
            except GeometryError:
                return np.inf
            centre = hull.vertices.mean(axis=0)
            a, b, c = (hull.vertices[hull.triangles[:, k]] for k in range(3))
            normals = np.cross(b - a, c - a)
            normals /= np.maximum(np.linalg.norm(normals, axis=1, keepdims=True), 1e-300)
            inner = float(np.abs(np.einsum("ij,ij->i", normals, a - centre)).min())
            outer = float(np.linalg.norm(hull.vertices - centre, axis=1).max())
            factor = max(factor, outer / inner if inner > 0 else np.inf)
    return factor


def _grown(checker: CollisionChecker, links: tuple[str, ...], growth: np.ndarray, exact: bool) -> CollisionChecker:
    """A checker of the same scene with each link grown by at least ``growth`` [m] (rounded up to a power of
    sqrt(2) of SMALLEST_GROWTH): by an exact offset where ``exact`` (``offsets_exact``), else by its padding; kept
    per checker, its configuration, the kind of growth and the rounded growths, MAX_KEPT_GROWN at most (building
    one's tables takes about 2 ms; a proof asks for up to MAX_HALVINGS + 1 of them)."""
    growth = np.asarray(growth, dtype=float)
    steps = np.where(growth > 0, np.ceil(2 * np.log2(np.maximum(growth, SMALLEST_GROWTH) / SMALLEST_GROWTH)), -1)
    key = (links, steps.tobytes(), checker.config_version, exact)
    kept = _GROWN.setdefault(checker, {})
    grown = kept.get(key)
    if grown is None:
        if len(kept) >= MAX_KEPT_GROWN:
            kept.clear()
        grown = checker.for_scene(checker.scene)
        for link, step in zip(links, steps):
            if step < 0:
                continue
            extra = SMALLEST_GROWTH * 2 ** (step / 2)
            if exact:
                grown.set_offset(extra, [link])
            else:
                grown.set_padding(checker.padding(link) + extra, [link])
        kept[key] = grown
    return grown


class _Provable(NamedTuple):
    """What ``first_unproven`` proves a group's motions with (``_provable``)."""

    links: tuple[str, ...]  # the links with geometry
    reach: np.ndarray  # (links, joints) ``link_reach``'s R
    factors: np.ndarray  # (links,) what a growth is multiplied by for a full offset (1 where offsets are exact)
    exact: bool  # whether the links are grown by exact offsets (``offsets_exact``), else by their padding


def _provable(check: PathCheck) -> _Provable | None:
    """What ``check``'s group's motions are proven with, or None when they cannot be proven here (see the module
    docstring); kept per robot model, group, geometry, paddings and kind of growth (the convex hulls take 0.15 s
    for the Panda's meshes), and per checker for its scene's and configuration's versions (a proof asks often)."""
    checker = check.checker
    now = (checker.scene.version, checker.config_version, check.joint_names)
    latest = _LATEST.get(checker)
    if latest is not None and latest[0] == now:
        return latest[1]
    found = None
    if checker.mesh_mode == "convex_hull" and not checker.scene.attached_objects and \
            not checker.scene.settings.link_padding:
        found = _provable_for_model(check)
    _LATEST[checker] = (now, found)
    return found


def _provable_for_model(check: PathCheck) -> _Provable | None:
    """``_provable``'s answer, kept per robot model, group, geometry, paddings and kind of growth."""
    checker = check.checker
    growths = tuple((link, checker.padding(link), checker.scale(link), checker.offset(link))
                    for link in checker.link_geometry)
    exact = offsets_exact(checker)
    key = (check.joint_names, growths, exact)
    geometry = tuple(checker.link_geometry.values())
    kept = _BOUNDS.setdefault(checker.model, {})
    if key in kept and len(kept[key][0]) == len(geometry) and all(a is b for a, b in zip(kept[key][0], geometry)):
        return kept[key][1]
    if len(kept) >= MAX_KEPT_BOUNDS:
        kept.clear()
    bound = link_reach(checker, check.joint_names)
    factors = None if bound is None else np.array([_growth_factor(checker, link) for link in bound[0]])
    if factors is not None and exact:  # an exact offset needs no factor (a flat mesh, checked as triangles, cannot)
        factors = np.where(np.isfinite(factors), 1.0, np.inf)
    kept[key] = (geometry, None if factors is None or not np.isfinite(factors).all() else
                 _Provable(*bound, factors, exact))
    return kept[key][1]


def provable(check: PathCheck) -> bool:
    """Whether ``first_unproven`` can prove ``check``'s motions (see the module docstring)."""
    return _provable(check) is not None


def clearance_check(check: PathCheck, halvings: int) -> PathCheck | None:
    """``check`` with each link grown by 2**-halvings of the growth that proves any step of at most
    ``check.resolution`` per joint (at that resolution); None when its motions cannot be proven here."""
    provable_here = _provable(check)
    if provable_here is None:
        return None
    links, reach, factors, exact = provable_here
    growth = 2.0**-halvings * check.resolution * reach.sum(axis=1) / 2 * factors
    return PathCheck(_grown(check.checker, links, growth, exact), check.joint_names, check.base, check.resolution,
                     check.state_validity)


def _on_the_ladder(needed: np.ndarray, rung: np.ndarray) -> np.ndarray:
    """``rung`` times the least power of 2 that covers ``needed`` (links,) [m] on every link: growths from one
    ladder per group, whose grown checkers are built once (``_grown``), whatever the path."""
    ratio = np.divide(needed, rung, out=np.zeros_like(needed), where=rung > 0)
    return rung * 2.0 ** (int(np.ceil(np.log2(ratio.max()))) if ratio.max() > 0 else 0)


def first_unproven(check: PathCheck, positions: np.ndarray, only: np.ndarray | None = None,
                   reach: np.ndarray | None = None, halvings: int = MAX_HALVINGS) -> int | None:
    """Index k of a point of ``positions`` (a path's points, each free) whose segment to point k + 1 holds states
    not proven free, -1 when every state between the points is proven free; None when it cannot be proven here (see
    the module docstring). ``only`` (segments,) bool: the segments to prove (default: all); ``reach``: R to use
    instead of ``link_reach``'s (a checker of some pairs alone: ``sphere_pairs.relative_reach``); ``halvings``: of a
    segment before it counts as not proven. A segment with more than CHECKED_BARE_FROM parts still to prove has the
    states its grown links touch at checked bare: one that collides cannot be proven (its parts would double at each
    halving, up to 2**halvings), nor need the segments after it be (the first such index is the answer)."""
    if len(positions) < 2:
        return -1
    provable_here = _provable(check)
    if provable_here is None:
        return None
    links, own_reach, factors, exact = provable_here
    reach = own_reach if reach is None else reach
    chosen = np.arange(len(positions) - 1) if only is None else np.flatnonzero(only)
    if not len(chosen):
        return -1
    growth = np.abs(positions[chosen + 1] - positions[chosen]) @ reach.T / 2  # (segments, links): half a motion
    first_growth = _on_the_ladder(growth.max(axis=0) * factors, check.resolution * reach.sum(axis=1) / 2 * factors)
    points = sorted({k + end for k in chosen for end in (0, 1)})
    rows = {point: row for row, point in enumerate(points)}
    # Every segment's ends, each once, as full states (segments: (k, rows of them); a midpoint of two full states
    # keeps the other joints' values exactly, and the checkers take full states without a binding's copy).
    states = list(check.full_states(positions[points]))
    segments = [(k, rows[k], rows[k + 1]) for k in chosen]
    colliding_at = len(positions)  # the first segment found colliding (none yet: past the last)
    for halving in range(halvings + 1):
        grown = _grown(check.checker, links, first_growth / 2**halving, exact)
        ends = sorted({row for _, a, b in segments for row in (a, b)})
        colliding = grown.check_batch(np.array([states[row] for row in ends]))
        free = dict(zip(ends, ~colliding))
        unproven = [(k, a, b) for k, a, b in segments if not (free[a] and free[b])]
        colliding_at = _first_colliding_segment(check, unproven, free, states, colliding_at)
        unproven = [segment for segment in unproven if segment[0] < colliding_at]
        if not unproven:
            return -1 if colliding_at == len(positions) else colliding_at
        segments = []
        for k, a, b in unproven:
            states.append((states[a] + states[b]) / 2)
            segments += [(k, a, len(states) - 1), (k, len(states) - 1, b)]
    return segments[0][0]


def _first_colliding_segment(check: PathCheck, unproven: list[tuple[int, int, int]], free: dict[int, bool],
                             states: list[np.ndarray], found: int) -> int:
    """The first segment k before ``found`` (the first found so far) of ``unproven`` (parts (k, row, row) of
    ``states``, full states) with more than CHECKED_BARE_FROM parts, whose states its grown links touch (not
    ``free``) collide bare; ``found`` when there is none."""
    if len(unproven) <= CHECKED_BARE_FROM:  # (no segment has more parts)
        return found
    parts = Counter(k for k, _, _ in unproven if k < found)
    crowded = {k for k, count in parts.items() if count > CHECKED_BARE_FROM}
    touched = sorted({(k, row) for k, a, b in unproven if k in crowded for row in (a, b) if not free[row]})
    if not touched:
        return found
    colliding = check.checker.check_batch(np.array([states[row] for _, row in touched]))
    return min((k for (k, _), hit in zip(touched, colliding) if hit), default=found)
