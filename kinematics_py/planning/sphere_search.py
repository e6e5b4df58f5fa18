"""The fast path of a plan's search: RRT-Connect and shortcutting in compiled code, on the robot's spheres.

Both trees (the start's, and one rooted at every goal) grow inside one compiled call per round of iterations, every
motion checked at the search's resolution by ``collision.sphere_lanes`` (FK and spheres compiled in, eight states of a
motion at a time in vector instructions, stopping at the first pass that touches; ``collision.sphere_kernels``' scalar
check where the scene holds world meshes or octomaps; only the frames the group moves are placed: ``sphere_chain``,
kept per group, base state and scene: ``sphere_proof.chain_tables``). The path found is shortened in compiled code: each
waypoint joined straight to the farthest later one it reaches, then partial shortcuts between random points of two
segments.

The spheres contain the exact geometry, so the path is free for the exact checker at the search's resolution too. Pairs
no joint of the group moves are left out (``sphere_proof.moving_table``: the start is free, so they are), so are self
pairs whose spheres are too coarse (``sphere_pairs``: touching in many states where the exact geometry never does).
Pairs the spheres find touching at the start or a goal (free for the exact checker: ``plan`` checked them) are relaxed,
so that a start or goal near an obstacle still gets the fast path: a self pair is searched with its spheres shrunk by
the smallest of SELF_SHRINKS that parts them there (a pair of links whose spheres bulge beyond flat ends), a pair that
does not part so, and a body-obstacle pair, left out (``_relaxed``); the path found is then checked at the
search's resolution (``sphere_proof.first_invalid``: states the full spheres call free, the others with the exact
checker); when it refuses a segment, the search is made again with every pair between escape states (``_escaped``: a
state near each touching end where no spheres touch), else the segment is searched again between its ends by OMPL's
search (OMPL's search takes the whole problem over when a waypoint collides or no detour is found). The path is never
returned unchecked: ``motion.plan`` checks it at the fine resolution with the exact checker as it checks OMPL's paths,
and searches again any segment that fails. Where the spheres cannot help (a scene they cannot represent, path
constraints, no path within the time), ``sphere_search`` answers None and the plan takes OMPL's search, as before.
"""
from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np

from ..collision.kernel_inputs import kept_inputs
from ..collision.sphere_kernels import SphereTable, chain_collides, motion_scratch
from ..collision.sphere_lanes import lanes_scratch, motion_collides
from ..collision.sphere_world import through_nodes
from ..compiled import FUSED_MULTIPLY_ADD, compiled_kernel
from ..thread_scratch import thread_scratch
from .ompl_search import DEFAULT_PLANNER, SearchResult, search_path
from .path_check import PathCheck, segment_states
from .sphere_proof import (
    ProofTable,
    chain_tables,
    first_invalid,
    growth_reach,
    kernel_bundle,
    kernel_tuples,
    moving_table,
    spheres_free_segments,
    touching_pairs,
)

#: Longest motion the trees grow by in one step, as a share of the joint space's diagonal (OMPL's default range), and
#: at most MAX_STEP [rad]: a UR5's joints turn 2 pi either way, its share 6.2 rad (the Panda's 2.6, the Kinova's 2.8,
#: left as they are). The UR5 on 75 bench problems: median plan 2.9 -> 2.0 ms, p90 14.9 -> 7.9 ms, median trajectory
#: 9.0 -> 7.9 s (at 2.6: 2.0, 11.7 ms, 8.0 s; half the Panda's and the Kinova's shares made their p90 1.6 and 1.3
#: times longer).
RANGE_SHARE = 0.2
MAX_STEP = 3.0
#: Iterations per compiled call (the deadline and the stop hook are read between calls), nodes per tree.
ROUND_ITERATIONS = 256
TREE_CAPACITY = 8192
#: Partial shortcut tries after the first greedy pass; a try that would shorten the path by less than MIN_GAIN_SHARE of
#: its length after that pass is not checked (the bench's 30 Panda problems, 8 seeds each: 0.01 -> 0.03, states the
#: shortcut checks 246 -> 198 (median), path length 6.98 -> 7.11 rad, trajectory duration the same (mean 7.13 s: fewer
#: corners to stop at)).
SHORTCUT_TRIES = 16
MIN_GAIN_SHARE = 0.03
TRAPPED, ADVANCED, REACHED = 0, 1, 2
#: Gaps [m] tried (smallest first) to part a self pair whose spheres touch at the start or a goal where the exact
#: geometry does not (the spheres of a short cylinder bulge 20-35 mm beyond its flat ends): the search keeps the pair
#: shrunk by the first that parts it rather than leaving it out (``_relaxed``).
SELF_SHRINKS = (0.005, 0.01, 0.02, 0.04)
#: Offsets [rad or m, per joint] an escape state is drawn within (the smallest first, ESCAPE_TRIES draws each): a state
#: near a start or goal whose spheres touch, where none touch and the straight motion to it is free (``_escaped``).
ESCAPE_REACH = (0.05, 0.1, 0.2, 0.4)
ESCAPE_TRIES = 8
#: Share of a search's time the sphere search may take before OMPL's search takes the rest.
FAST_SHARE = 0.5
#: The sphere search's time at most [s]: a path it finds takes a few milliseconds; where the spheres are too coarse
#: for the problem (a UR5's wrist links, whose spheres touch in most states) OMPL starts after this, not after half
#: the budget (bench/motion_planning.py --robot ur5 --problems 8: p90 409 -> 118 ms, the Panda's unchanged).
FAST_LIMIT_S = 0.05


@compiled_kernel(fastmath=FUSED_MULTIPLY_ADD)
def _extend(nodes, parents, count, target, step, resolution, chain, table, work, scratch, lanes):
    """(status, count): grow the tree (``count`` nodes) from its node nearest ``target`` by at most ``step`` towards
    it, when that motion is free."""
    dof = target.shape[0]
    nearest, best = 0, np.inf
    for n in range(count):
        d = 0.0
        for i in range(dof):
            d += (nodes[n, i] - target[i]) ** 2
        if d < best:
            nearest, best = n, d
    distance = np.sqrt(best)
    reached = distance <= step
    scale = 1.0 if reached else step / distance
    for i in range(dof):
        nodes[count, i] = nodes[nearest, i] + (target[i] - nodes[nearest, i]) * scale
    if motion_collides(nodes[nearest], nodes[count], resolution, chain, table, work, scratch, lanes, True):
        return TRAPPED, count
    parents[count] = nearest
    return (REACHED if reached else ADVANCED), count + 1


@compiled_kernel(fastmath=FUSED_MULTIPLY_ADD)
def _joined_path(nodes, parents, end_0, end_1, path):
    """Number of waypoints written to ``path``: tree 0's root to its node ``end_0``, then tree 1's node ``end_1``
    (the same configuration, left out) to its root."""
    count, n = 0, end_0
    while n >= 0:
        count += 1
        n = parents[0, n]
    n = end_0
    for k in range(count - 1, -1, -1):
        path[k] = nodes[0, n]
        n = parents[0, n]
    n = parents[1, end_1]
    while n >= 0:
        path[count] = nodes[1, n]
        count += 1
        n = parents[1, n]
    return count


@compiled_kernel(fastmath=FUSED_MULTIPLY_ADD)
def rrt_connect(nodes, parents, counts, lower, upper, step, resolution, first, iterations, inputs, path):
    """Run RRT-Connect's iterations ``first`` .. ``first + iterations - 1`` on the trees ``nodes[0]`` (rooted at the
    start) and ``nodes[1]`` (rooted at every goal: parent -1), ``counts`` nodes each. Returns the number of
    waypoints written to ``path`` (start to goal), 0 when no path yet, -1 when a tree is full. Motions are checked
    by ``sphere_lanes.motion_collides`` (``inputs``: the chain, its table and a workspace,
    ``kernel_inputs.kept_inputs``)."""
    chain, table, work = inputs.frames, inputs.table, inputs.work
    dof = lower.shape[0]
    sample = np.empty(dof)
    scratch, lanes = motion_scratch(chain[0].shape[0]), lanes_scratch(chain, table)
    capacity = nodes.shape[1]
    for iteration in range(first, first + iterations):
        a = iteration % 2
        b = 1 - a
        if counts[a] >= capacity - 1 or counts[b] >= capacity - 1:
            return -1
        for i in range(dof):
            sample[i] = lower[i] + np.random.random() * (upper[i] - lower[i])
        status, counts[a] = _extend(nodes[a], parents[a], counts[a], sample, step, resolution, chain, table, work,
                                    scratch, lanes)
        if status == TRAPPED:
            continue
        added = nodes[a, counts[a] - 1]
        status = ADVANCED
        while status == ADVANCED and counts[b] < capacity - 1:
            status, counts[b] = _extend(nodes[b], parents[b], counts[b], added, step, resolution, chain, table,
                                        work, scratch, lanes)
        if status == REACHED:
            end_a, end_b = counts[a] - 1, counts[b] - 1
            return _joined_path(nodes, parents, end_a if a == 0 else end_b, end_b if a == 0 else end_a, path)
    return 0


@compiled_kernel(fastmath=FUSED_MULTIPLY_ADD)
def _farthest_reach(path, count, resolution, chain, table, work, scratch, lanes):
    """Keep the waypoints each waypoint reaches straight farthest along ``path`` (in place); returns their number.
    (The waypoints are free: only the states between two are checked.)"""
    kept, i = 1, 0
    while i < count - 1:
        j = count - 1
        while j > i + 1 and motion_collides(path[i], path[j], resolution, chain, table, work, scratch, lanes, False):
            j -= 1
        path[kept] = path[j]
        kept += 1
        i = j
    return kept


@compiled_kernel(inline="always", fastmath=FUSED_MULTIPLY_ADD)
def _distance(a, b):
    """The Euclidean distance of two joint vectors (without allocating)."""
    total = 0.0
    for i in range(a.shape[0]):
        total += (a[i] - b[i]) ** 2
    return np.sqrt(total)


@compiled_kernel(fastmath=FUSED_MULTIPLY_ADD)
def shortcut(path, count, tries, resolution, inputs):
    """Shorten the first ``count`` waypoints of ``path`` in place (every segment stays free at ``resolution``);
    returns their number: each waypoint joined to the farthest later one it reaches straight, then ``tries`` partial
    shortcuts (a random point of one segment joined to a random point of a later one: the new motion and the first
    point are checked, the parts of the two segments it keeps were), then the first pass again when one of them
    shortened the path. ``path`` has room for ``tries`` more waypoints. Motions checked as ``rrt_connect``'s."""
    chain, table, work = inputs.frames, inputs.table, inputs.work
    dof = path.shape[1]
    scratch, lanes, p, r = motion_scratch(chain[0].shape[0]), lanes_scratch(chain, table), np.empty(dof), np.empty(dof)
    count = _farthest_reach(path, count, resolution, chain, table, work, scratch, lanes)
    length = 0.0
    for k in range(count - 1):
        length += _distance(path[k + 1], path[k])
    min_gain = MIN_GAIN_SHARE * length
    shortened = False
    for _ in range(tries):
        if count <= 2:
            break
        i = np.random.randint(0, count - 2)
        j = np.random.randint(i + 1, count - 1)
        a, b = np.random.random(), np.random.random()
        for k in range(dof):
            p[k] = path[i, k] + a * (path[i + 1, k] - path[i, k])
            r[k] = path[j, k] + b * (path[j + 1, k] - path[j, k])
        along = _distance(path[i + 1], p) + _distance(r, path[j])
        for k in range(i + 1, j):
            along += _distance(path[k + 1], path[k])
        if along - _distance(r, p) < min_gain or \
                motion_collides(p, r, resolution, chain, table, work, scratch, lanes, True) or \
                chain_collides(p, chain, table, work):  # (p, between two checked states, becomes a waypoint)
            continue
        tail = path[j + 1:count].copy()
        path[i + 1] = p
        path[i + 2] = r
        path[i + 3:i + 3 + tail.shape[0]] = tail
        count = i + 3 + tail.shape[0]
        shortened = True
    if not shortened:  # the first pass's path: the pass again would keep it as it is
        return count
    return _farthest_reach(path, count, resolution, chain, table, work, scratch, lanes)


@compiled_kernel(fastmath=FUSED_MULTIPLY_ADD)
def planted_trees(nodes, parents, counts, start, goals, lower, upper, seed, inputs):
    """Root the trees of ``rrt_connect`` (``nodes[0]`` at ``start``, ``nodes[1]`` at every row of ``goals``; their
    ``counts``), seed the compiled code's random numbers (numba keeps its own generator per thread) and return (the
    trees' step: RANGE_SHARE of the joint space's diagonal, MAX_STEP at most, whether the spheres of the start or of a
    goal touch), in one call (the Python around it was a tenth of a median Panda search's time)."""
    dof = start.shape[0]
    diagonal = 0.0
    for i in range(dof):
        nodes[0, 0, i] = start[i]
        diagonal += (upper[i] - lower[i]) ** 2
    parents[0, 0] = -1
    for g in range(goals.shape[0]):
        nodes[1, g] = goals[g]
        parents[1, g] = -1
    counts[0], counts[1] = 1, goals.shape[0]
    np.random.seed(seed)
    touches = chain_collides(start, inputs.frames, inputs.table, inputs.work)
    for g in range(goals.shape[0]):
        touches = touches or chain_collides(goals[g], inputs.frames, inputs.table, inputs.work)
    return min(RANGE_SHARE * np.sqrt(diagonal), MAX_STEP), touches


def _relaxed(check: PathCheck, table: SphereTable, states: np.ndarray,
             work) -> tuple[SphereTable, SphereTable | None]:
    """(``table`` for a search between ``states`` (the start and goals), whose spheres may touch where the exact
    geometry does not: each self pair whose spheres touch in one of them shrunk (a negative gap in ``work.growth``,
    the smallest of SELF_SHRINKS that parts them there, less than the pair's smallest sphere), or left out when
    none does; each body-obstacle pair that touches left out; ``table`` itself when none touches), (the pairs so
    shrunk or left out, with their full spheres; None when none touches). The search's path is then checked for
    those pairs by the exact checker (``_exact_segments``)."""
    self_hit, world_hit = touching_pairs(check, table, states, work)
    if not (self_hit.any() or world_hit.any()):
        return table, None
    bodies, pairs = len(table.body_radius), table.self_pairs
    body_smallest = np.minimum.reduceat(table.sphere_radius, table.body_first[:-1])
    smallest = np.minimum(body_smallest[pairs[:, 0]], body_smallest[pairs[:, 1]])
    gaps, touching = np.zeros(len(pairs)), self_hit
    for shrink in SELF_SHRINKS:
        trying = touching & (shrink < smallest)
        if not trying.any():
            break
        gaps[trying] = -shrink
        work.growth[bodies:bodies + len(gaps)] = gaps
        touching = touching & touching_pairs(check, table, states, work)[0]
    kept = ~touching
    work.growth[:] = 0.0
    work.growth[bodies:bodies + kept.sum()] = gaps[kept]
    return (_with_pairs(table, kept, table.world_tested & ~world_hit),
            _with_pairs(table, self_hit, table.world_tested & world_hit))


def _with_pairs(table: SphereTable, self_pairs: np.ndarray, world_tested: np.ndarray) -> SphereTable:
    """``table`` with the self pairs ``self_pairs`` (P,) bool marks and the body and obstacle pairs ``world_tested``,
    the same object for the same pairs (kept per thread): what is kept per table (its chain's arrays, its kernel
    inputs: ``sphere_proof.chain_tables``, ``kernel_bundle``) is then found again by the next search whose start or
    goals touch the same pairs, not built again. Each NODE row of a world mesh's tree is tested where a row under it
    is (``sphere_world.through_nodes``): the kernels skip what is under a NODE row a body is not tested against."""
    world_tested = through_nodes(table, world_tested)
    return thread_scratch(f"{__name__}.with_pairs", (id(table), self_pairs.tobytes(), world_tested.tobytes()),
                          lambda: (table, table._replace(self_pairs=table.self_pairs[self_pairs],
                                                         world_tested=world_tested)))[1]


def _left_out(moving: ProofTable, left: SphereTable) -> ProofTable:
    """``moving`` with the pairs ``left`` holds alone (those the search relaxed), kept per thread as ``_with_pairs``'
    tables are."""
    return thread_scratch(f"{__name__}.left_out", (id(moving), id(left)), lambda: (moving, left, moving._replace(
        table=left, growth_reach=growth_reach(moving.reach, left.self_pairs))))[2]


def sphere_search(check: PathCheck, start: np.ndarray, goals: np.ndarray, bounds: tuple[np.ndarray, np.ndarray],
                  time_limit: float, should_stop: Callable[[], bool] | None = None,
                  seed: int = 0) -> np.ndarray | None:
    """Waypoints (start to one of the ``goals``' rows) of a path free at ``check``'s resolution (for the spheres;
    for the exact checker too when the spheres left pairs out), found within ``time_limit`` [s]; None when none was
    found, or the spheres cannot be used (see the module docstring). The start and goals are free states."""
    moving = moving_table(check)
    if moving is None or len(goals) > TREE_CAPACITY // 2:
        return None
    table = moving.table
    inputs, relaxed, left = kernel_bundle(check, table), table, None  # (its workspace kept for the thread, no margins)
    lower, upper = (np.array(b, dtype=float) for b in bounds)  # (writable: the kernels' one signature, warmed up)
    nodes, parents, counts, path = thread_scratch(__name__, len(start), lambda: (
        np.empty((2, TREE_CAPACITY, len(start))), np.empty((2, TREE_CAPACITY), dtype=np.int64),
        np.empty(2, dtype=np.int64), np.empty((2 * TREE_CAPACITY + SHORTCUT_TRIES, len(start)))))
    start, goals = np.ascontiguousarray(start, dtype=float), np.ascontiguousarray(goals, dtype=float)
    step, touches = planted_trees(nodes, parents, counts, start, goals, lower, upper, seed, inputs)
    if touches:
        work = kernel_tuples(check, table)[2]
        relaxed, left = _relaxed(check, table, np.vstack([start, goals]), work)
        inputs = kept_inputs(*chain_tables(check, relaxed), work)  # (the shrunk pairs' margins set in ``work``)
    deadline, first, found = time.perf_counter() + time_limit, 0, 0
    while found == 0 and time.perf_counter() < deadline and not (should_stop and should_stop()):
        found = rrt_connect(nodes, parents, counts, lower, upper, step, check.resolution, first, ROUND_ITERATIONS,
                            inputs, path)
        first += ROUND_ITERATIONS
    if found <= 0:
        return None
    count = shortcut(path, found, SHORTCUT_TRIES, check.resolution, inputs)
    waypoints = path[:count].copy()
    if moving.coarse is not None:
        return _exact_segments(check, waypoints, bounds, deadline, should_stop)
    if left is not None:  # (the search tested the other pairs at this resolution)
        return _exact_segments(check, waypoints, bounds, deadline, should_stop, _left_out(moving, left))
    return waypoints


def _exact_segments(check: PathCheck, waypoints: np.ndarray, bounds: tuple[np.ndarray, np.ndarray], deadline: float,
                    should_stop: Callable[[], bool] | None, found: ProofTable | None = None) -> np.ndarray | None:
    """``waypoints`` (found with pairs left out) with every segment the exact checker refuses at ``check``'s
    resolution searched again between its ends by OMPL's search; None when a waypoint collides or a detour is not
    found before ``deadline``. ``found``: the spheres that decide first (``first_invalid``: the pairs the search
    relaxed; default all of them). A segment is expected free here (the search found it so for the other pairs):
    its states are checked as ``first_invalid`` checks a path's, not as ``segment_free`` checks a motion likely to
    collide (witness points through the motion first)."""
    kept, free = [waypoints[0]], spheres_free_segments(check, waypoints, found)
    escape = found is not None  # (a relaxed search's path: searched again from escape states first, once)
    for q_from, q_to, spheres_free in zip(waypoints[:-1], waypoints[1:], free):
        if not spheres_free and first_invalid(check, segment_states(q_from, q_to, check.resolution), found) >= 0:
            if escape:
                escape, escaped = False, _escaped(check, waypoints[0], waypoints[-1], bounds, deadline, should_stop)
                if escaped is not None:
                    return escaped
            remaining = deadline - time.perf_counter()
            if remaining <= 0 or not check.state_free(q_to):
                return None
            detour = search_path(check, q_from, q_to[None, :], bounds, DEFAULT_PLANNER, remaining, should_stop)
            if detour.waypoints is None:
                return None
            kept += list(detour.waypoints[1:-1])
        kept.append(q_to)
    return np.array(kept)


def _escaped(check: PathCheck, start: np.ndarray, goal: np.ndarray, bounds: tuple[np.ndarray, np.ndarray],
             deadline: float, should_stop: Callable[[], bool] | None) -> np.ndarray | None:
    """Waypoints from ``start`` to ``goal`` searched with every pair between escape states (each of the two whose
    spheres touch replaced by a state near it where none touch, the straight motion to it free for the exact
    checker), within half the time left; None when an escape or a path is not found. For a relaxed search whose path
    the exact checker refuses: its pairs passed through each other away from the ends (the UR5's forearm and wrist 2:
    two of its 30 bench problems, 9.8 -> 4.4 and 6.0 -> 2.0 ms, against OMPL's detour)."""
    table, rng = moving_table(check).table, np.random.default_rng(0)
    ends = []
    for q in (start, goal):
        ends.append(q if not _touching_in(check, table, q) else _escape_state(check, table, q, bounds, rng))
        if ends[-1] is None:
            return None
    path = sphere_search(check, ends[0], ends[1][None], bounds, (deadline - time.perf_counter()) / 2, should_stop)
    if path is None:
        return None
    return np.vstack([start[None]] * (ends[0] is not start) + [path] + [goal[None]] * (ends[1] is not goal))


def _escape_state(check: PathCheck, table: SphereTable, q: np.ndarray, bounds: tuple[np.ndarray, np.ndarray],
                  rng: np.random.Generator) -> np.ndarray | None:
    """A state near ``q`` (drawn within each of ESCAPE_REACH per joint in turn, ESCAPE_TRIES each, inside
    ``bounds``) where no pair of ``table``'s spheres touches and the straight motion from ``q`` is free for the exact
    checker; None when none of the draws is."""
    lower, upper = (np.asarray(b, dtype=float) for b in bounds)
    for reach in ESCAPE_REACH:
        for state in np.clip(q + rng.uniform(-reach, reach, (ESCAPE_TRIES, len(q))), lower, upper):
            if not _touching_in(check, table, state) and \
                    first_invalid(check, segment_states(q, state, check.resolution)) < 0:
                return state
    return None


def _touching_in(check: PathCheck, table: SphereTable, q: np.ndarray) -> bool:
    """Whether a pair of ``table``'s spheres touches in the group state ``q``."""
    self_hit, world_hit = touching_pairs(check, table, q[None])
    return bool(self_hit.any() or world_hit.any())


def fast_or_ompl_search(check: PathCheck, start: np.ndarray, goals: np.ndarray,
                        bounds: tuple[np.ndarray, np.ndarray], planner_id: str, time_limit: float,
                        should_stop: Callable[[], bool] | None = None, seed: int = 0) -> SearchResult:
    """``ompl_search.search_path``'s answer, by ``sphere_search`` first for the default planner (RRT-Connect,
    within FAST_SHARE of the time and FAST_LIMIT_S at most), by OMPL's search when that finds nothing (in the rest
    of the time)."""
    began = time.perf_counter()
    if planner_id == DEFAULT_PLANNER:
        fast_time = min(FAST_SHARE * time_limit, FAST_LIMIT_S)
        waypoints = sphere_search(check, start, goals, bounds, fast_time, should_stop, seed)
        if waypoints is not None:
            return SearchResult(waypoints, "sphere search")
    return search_path(check, start, goals, bounds, planner_id, time_limit - (time.perf_counter() - began),
                       should_stop)
