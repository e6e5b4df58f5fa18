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
within the growth of the checked shape) where the checker can (``checker.offsets_exact``: no mesh of more than
``tables.MAX_TREE_TRIANGLES`` triangles in the scene);
elsewhere by their padding, and a link mesh checked as its convex hull is then grown by moving its vertices away
from their centroid (MoveIt's padding), which can offset a face by less than the padding: such a link's growth is
multiplied by the hull's (largest vertex distance / smallest face distance) from that centroid, which makes it a full
offset (3.5 to 18.6 on the Kinova's links, each growth also a new hull to build: about 60 ms a rung there). An
attached object is one more body of its link (``robot_bodies``), grown by an offset of its own: proven only with
exact offsets. Not proven (``None``): meshes checked as triangles, floating or planar joints in the group, a scene's
own link paddings.

``plan`` proves every trajectory it returns with it; a joint segment it cannot prove is searched again with every
link grown (``clearance_check``, ``proof_repair``). bench/motion_planning.py reports it for every planner's
trajectories.
"""
from __future__ import annotations

import math
import weakref
from typing import NamedTuple

import numpy as np

from ..collision.checker import CollisionChecker, offsets_exact
from ..collision.geometry import GeometryError, Mesh, convex_hull
from ..collision.robot_bodies import RobotBody, body_growth, robot_bodies
from ..collision.spheres import SphereModelError, shape_polytope
from ..compiled import compiled_kernel
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


def link_reach(checker: CollisionChecker, joint_names,
               bodies: tuple[RobotBody, ...] | None = None) -> tuple[tuple[str, ...], np.ndarray] | None:
    """(body names, R (bodies, joints)): how far a point of each robot body (default: every one, ``robot_bodies``:
    the links with geometry, then the attached objects) moves per unit of each joint of ``joint_names`` (see the
    module docstring); None when a joint of the group moves a body in a way not bounded so."""
    tree, model = checker.model.tree.table, checker.model
    column = {model.tree.variable_index[name]: j for j, name in enumerate(joint_names)}
    row_of_child = {int(child): k for k, child in enumerate(tree.child_link)}
    bodies = robot_bodies(checker) if bodies is None else bodies
    reach = np.zeros((len(bodies), len(joint_names)))
    for l, body in enumerate(bodies):
        try:
            corners = np.vstack([shape_polytope(placed)[2] for placed in body.shapes])
        except SphereModelError:  # (an attached plane or octree: no bound)
            return None
        distance = float(np.linalg.norm(corners, axis=1).max()) + body_growth(checker, body)
        index = model.link_names.index(body.link)
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
    return (tuple(body.name for body in bodies), reach) if np.isfinite(reach).all() else None


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


@compiled_kernel
def _growth_steps(growth: np.ndarray) -> np.ndarray:
    """Each growth [m] (float array) as the power of sqrt(2) of SMALLEST_GROWTH that covers it (-1: none): halving
    every growth takes 2 from each step that is not -1 (down to 0)."""
    steps = np.empty(growth.shape[0])
    for k in range(growth.shape[0]):
        steps[k] = math.ceil(2 * math.log2(max(growth[k], SMALLEST_GROWTH) / SMALLEST_GROWTH)) if growth[k] > 0 \
            else -1.0
    return steps


def _grown(checker: CollisionChecker, links: tuple[str, ...], steps: np.ndarray, exact: bool) -> CollisionChecker:
    """A checker of the same scene with each link grown by SMALLEST_GROWTH * sqrt(2)**``steps`` [m] (``_growth_steps``;
    -1: not grown): by an exact offset where ``exact`` (``offsets_exact``), else by its padding; kept per checker,
    its configuration, the kind of growth and the steps, MAX_KEPT_GROWN at most (building one's tables takes about
    2 ms; a proof asks for up to MAX_HALVINGS + 1 of them)."""
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
    if checker.mesh_mode == "convex_hull" and not checker.scene.settings.link_padding:
        found = _provable_for_model(check)
        if found is not None and checker.scene.attached_objects:
            found = _with_attached(check, found)
    _LATEST[checker] = (now, found)
    return found


def _with_attached(check: PathCheck, links: _Provable) -> _Provable | None:
    """``links`` (the links' answer) with the scene's attached objects as bodies of their links (``robot_bodies``),
    grown by their own offsets: None where offsets are not exact (a padding does not grow an attached object) or an
    object is named like a link (a growth is set by name)."""
    checker = check.checker
    attached = robot_bodies(checker)[len(links.links):]
    if not links.exact or any(body.name in checker.link_geometry for body in attached):
        return None
    bound = link_reach(checker, check.joint_names, attached)
    if bound is None:
        return None
    return _Provable(links.links + bound[0], np.vstack([links.reach, bound[1]]),
                     np.concatenate([links.factors, np.ones(len(attached))]), True)


def _provable_for_model(check: PathCheck) -> _Provable | None:
    """``_provable``'s answer for the links alone, kept per robot model, group, geometry, paddings and kind of
    growth."""
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
    bound = link_reach(checker, check.joint_names, robot_bodies(checker)[:len(checker.link_geometry)])
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
    growth = 2.0**-halvings * _step_rung(reach, factors, float(check.resolution))
    return PathCheck(_grown(check.checker, links, _growth_steps(growth), exact), check.joint_names, check.base,
                     check.resolution, check.state_validity)


@compiled_kernel
def _step_rung(reach: np.ndarray, factors: np.ndarray, resolution: float) -> np.ndarray:
    """(links,) [m]: each link's growth that proves any step of at most ``resolution`` per joint (half the most a
    point of it moves over such a step, ``reach``: R, times ``factors``): the lowest rung of the group's ladder."""
    rung = np.empty(reach.shape[0])
    for link in range(reach.shape[0]):
        total = 0.0
        for joint in range(reach.shape[1]):
            total += reach[link, joint]
        rung[link] = resolution * total / 2 * factors[link]
    return rung


@compiled_kernel
def _on_the_ladder(needed: np.ndarray, rung: np.ndarray) -> np.ndarray:
    """``rung`` times the least power of 2 that covers ``needed`` (links,) [m] on every link: growths from one
    ladder per group, whose grown checkers are built once (``_grown``), whatever the path."""
    ratio = 0.0
    for k in range(rung.shape[0]):
        if rung[k] > 0:
            ratio = max(ratio, needed[k] / rung[k])
    return rung * (2.0 ** math.ceil(math.log2(ratio)) if ratio > 0 else 1.0)


@compiled_kernel
def _halving_steps(positions: np.ndarray, chosen: np.ndarray, reach: np.ndarray, factors: np.ndarray,
                   resolution: float, halvings: int) -> np.ndarray:
    """(halvings + 1, links): each halving's growth steps (``_growth_steps``) in a proof of the ``chosen`` segments of
    ``positions``: first half the most any point of a link moves over one of them (``reach``: R, times ``factors``),
    on the group's ladder (``_on_the_ladder``: rungs of ``_step_rung``), then 2 less each time (down to 0; -1: not
    grown)."""
    links, joints = reach.shape
    needed = np.zeros(links)
    for link in range(links):
        for segment in chosen:
            motion = 0.0
            for joint in range(joints):
                motion += abs(positions[segment + 1, joint] - positions[segment, joint]) * reach[link, joint]
            needed[link] = max(needed[link], motion / 2 * factors[link])
    first = _growth_steps(_on_the_ladder(needed, _step_rung(reach, factors, resolution)))
    steps = np.empty((halvings + 1, links))
    for halving in range(halvings + 1):
        for link in range(links):
            steps[halving, link] = -1.0 if first[link] < 0 else max(first[link] - 2 * halving, 0.0)
    return steps


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
    positions = np.ascontiguousarray(positions, dtype=float)  # (the kernels' one signature, warmed up)
    steps = _halving_steps(positions, chosen, np.ascontiguousarray(reach, dtype=float), factors,
                           float(check.resolution), halvings)
    # Every segment's ends, each once, as full states (rows of ``states``; a midpoint of two full states keeps the
    # other joints' values exactly, and the checkers take full states without a binding's copy). The parts still to
    # prove: rows (their segment, the rows of their two ends), in the path's order. The parts' bookkeeping is compiled
    # (``_halving_steps``, ``_first_parts``, ``_end_rows``, ``_unproven_parts``, ``_halved``): in numpy it took more
    # time than the exact checks of a proof of one step (a Panda cage plan's proof of one step 0.40 -> 0.24 ms).
    points, parts = _first_parts(len(positions), chosen)
    states = check.full_states(positions[points])
    colliding_at = len(positions)  # the first segment found colliding (none yet: past the last)
    for halving in range(halvings + 1):
        grown = _grown(check.checker, links, steps[halving], exact)
        rows = _end_rows(parts, len(states))
        free = np.zeros(len(states), dtype=bool)
        free[rows] = ~grown.check_batch(states[rows])
        parts = _unproven_parts(parts, free, colliding_at)
        found = _first_colliding_segment(check, parts, free, states, colliding_at)
        if found < colliding_at:
            colliding_at = found
            parts = parts[parts[:, 0] < colliding_at]
        if not len(parts):
            return -1 if colliding_at == len(positions) else colliding_at
        parts, states = _halved(parts, states)  # each part's halves: (its start, its middle), (its middle, its end)
    return int(parts[0, 0])


@compiled_kernel
def _first_parts(count: int, chosen: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(points: the ends of the ``chosen`` segments (k,) of a path of ``count`` points, each once, in order; parts
    (k, 3): each segment, the indices in ``points`` of its two ends)."""
    is_end = np.zeros(count, dtype=np.bool_)
    for segment in chosen:
        is_end[segment] = is_end[segment + 1] = True
    row, points, found = np.empty(count, dtype=np.int64), np.empty(count, dtype=np.int64), 0
    for point in range(count):
        row[point] = found
        if is_end[point]:
            points[found] = point
            found += 1
    parts = np.empty((chosen.shape[0], 3), dtype=np.int64)
    for p in range(chosen.shape[0]):
        parts[p, 0], parts[p, 1], parts[p, 2] = chosen[p], row[chosen[p]], row[chosen[p] + 1]
    return points[:found], parts


@compiled_kernel
def _end_rows(parts: np.ndarray, count: int) -> np.ndarray:
    """The rows (of ``count`` states) that are an end of one of ``parts``, each once, in order."""
    is_end = np.zeros(count, dtype=np.bool_)
    for p in range(parts.shape[0]):
        is_end[parts[p, 1]] = is_end[parts[p, 2]] = True
    return np.flatnonzero(is_end)


@compiled_kernel
def _unproven_parts(parts: np.ndarray, free: np.ndarray, before: int) -> np.ndarray:
    """The ``parts`` of segments before ``before`` whose two ends are not both ``free``."""
    kept = np.empty(parts.shape[0], dtype=np.bool_)
    for p in range(parts.shape[0]):
        kept[p] = parts[p, 0] < before and not (free[parts[p, 1]] and free[parts[p, 2]])
    return parts[kept]


@compiled_kernel
def _halved(parts: np.ndarray, states: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(each part's two halves, in order: (its start, its middle), (its middle, its end); ``states`` with the
    parts' middles after them)."""
    count = states.shape[0]
    with_middles = np.empty((count + parts.shape[0], states.shape[1]))
    with_middles[:count] = states
    halves = np.empty((2 * parts.shape[0], 3), dtype=np.int64)
    for p in range(parts.shape[0]):
        middle = count + p
        for j in range(states.shape[1]):
            with_middles[middle, j] = (states[parts[p, 1], j] + states[parts[p, 2], j]) / 2
        halves[2 * p, 0] = halves[2 * p + 1, 0] = parts[p, 0]
        halves[2 * p, 1], halves[2 * p, 2] = parts[p, 1], middle
        halves[2 * p + 1, 1], halves[2 * p + 1, 2] = middle, parts[p, 2]
    return halves, with_middles


def _first_colliding_segment(check: PathCheck, parts: np.ndarray, free: np.ndarray, states: np.ndarray,
                             found: int) -> int:
    """The first segment before ``found`` (the first found so far) with more than CHECKED_BARE_FROM ``parts`` still to
    prove (``first_unproven``'s: segment, rows of ``states`` (full states) of its ends), one of whose states its
    grown links touch (not ``free``) collides bare; ``found`` when there is none."""
    if len(parts) <= CHECKED_BARE_FROM:  # (no segment has more parts)
        return found
    crowded = np.flatnonzero(np.bincount(parts[parts[:, 0] < found, 0]) > CHECKED_BARE_FROM)
    if not len(crowded):
        return found
    in_crowded = parts[np.isin(parts[:, 0], crowded)]
    segment, row = np.repeat(in_crowded[:, 0], 2), in_crowded[:, 1:].ravel()
    touched = ~free[row]
    segment, row = segment[touched], row[touched]
    if not len(row):
        return found
    rows, first = np.unique(row, return_inverse=True)
    colliding = check.checker.check_batch(states[rows])[first]
    return int(segment[colliding].min()) if colliding.any() else found
