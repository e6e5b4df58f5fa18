"""A path's points and the states between them proven free by the robot's spheres, the exact checker asked only where
the spheres prove nothing.

The spheres contain the exact geometry (padding included), so spheres grown by g contain the geometry grown by g.
``motion_bound``'s argument then holds for them: over a straight joint step every point of link l stays within ``delta_l
/ 2`` of where it was at one of the step's ends (``delta_l = sum_j |dq_j| R[l, j]``), so when each body's spheres, grown
by half its motion over the step, are free at both ends of a step, the step is free throughout, its ends included, for
every pair the spheres test (a superset of the exact checker's: ``sphere_world``). Two links of the robot need only keep
a gap of half their relative motion: a joint that moves both moves them as one rigid body (``growth_reach``; a UR5's
forearm and wrist then grow by their wrist joints' motion, not by the shoulder's). Blocks of steps, and parts of a step,
are proven the same way, from the path's start (``proof_blocks``): the state at a block's middle free with the spheres
grown by the most a body travels from there to either end proves the whole block. ``R`` bounds a point's distance from
each joint's origin in every state; each checked state lowers its margins to its own bound
(``proof_blocks._tightened``): a point's distance from each joint's axis there, plus how far the joints below can move
it meanwhile (Panda paths: 32 % fewer states checked, the proof 28 % faster; UR5: 30 % and 21 %). Pairs that no joint of
the group moves apart (a base link and the floor, two links before the first joint, a part in the hand and a link of the
hand: every joint that moves one moves the other) keep their distance on the whole path: they are left out of the
spheres' test and decided once (by the plan's start, or the exact check of the path's first point). The kernels place
only the frames the group's joints move (``chain_tables``). Spheres that touch never fail a path: the points and steps
they do not prove get the exact checks as before (``PathCheck.first_invalid``, ``motion_bound.first_unproven``); self
pairs whose bare spheres touch at a path's points they do not prove (a UR5's forearm and wrist on a detour) are left to
an exact checker of those pairs alone for that path, as the coarse ones are (``checked_path``). Not used (None) where
the spheres cannot stand for the exact geometry: no sphere table (``sphere_world``: world meshes or octrees of too many
leaves, scaled links), a path's own validity check, motions ``link_reach`` does not bound.
"""
from __future__ import annotations

import weakref
from typing import NamedTuple

import numpy as np

from ..collision.checker import CollisionChecker
from ..collision.kernel_inputs import KernelInputs, kept_inputs
from ..collision.sphere_kernels import (
    SphereChain,
    SphereTable,
    Workspace,
    chain_collides,
    chain_states_free,
    first_touching_step_in,
    motion_scratch,
    pairs_touching_in,
    sphere_chain,
    touching_segments,
    workspace,
)
from ..collision.sphere_world import sphere_table
from ..collision.witness_points import first_proven_colliding, proven_colliding
from ..compiled import FUSED_MULTIPLY_ADD, compiled_kernel
from ..model.tree_kernels import PRISMATIC, REVOLUTE
from ..thread_scratch import thread_scratch
from .motion_bound import MAX_HALVINGS, first_unproven, link_reach
from .path_check import PathCheck, bisection_order, segment_states, steps_between
from .proof_blocks import block_proof
from .sphere_pairs import body_names, coarse_pairs, pairs_check, relative_reach, world_pair_names

#: Halvings of a step the spheres do not prove whole (its parts down to 2**-SPHERE_HALVINGS of it, each proven by
#: the state at its middle, ``proof_blocks``) before the exact proof takes it (4 -> 8: the Panda's exact proofs 6 -> 4
#: in 30 plans, the UR5's 23 -> 17; a sphere state costs about 0.7 us, an exact proof milliseconds).
SPHERE_HALVINGS = 8
#: Steps a path's spheres leave unproven before the self pairs touching at its points (at most TOUCHING_SAMPLES of
#: them tested) are left to an exact checker of those pairs alone for the path (``checked_path``).
NARROW_STEPS = 0
TOUCHING_SAMPLES = 64
#: Chains (``chain_tables``) kept per robot model, at most this many per model.
MAX_KEPT_CHAINS = 16
_MOVING: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_CHAINS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_NARROWED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


@compiled_kernel(fastmath=FUSED_MULTIPLY_ADD)
def first_touching(states, inputs):
    """The index of the first of the group ``states`` (n, joints) whose spheres (grown by ``inputs.work.growth``, on
    the chain's frames: ``chain_tables``, ``kernel_bundle``) touch, -1 when none does."""
    chain, table, work = inputs.frames, inputs.table, inputs.work
    for k in range(states.shape[0]):
        if chain_collides(states[k], chain, table, work):
            return k
    return -1


class ProofTable(NamedTuple):
    """The spheres a group's paths are proven with (``moving_table``)."""

    table: SphereTable  # without the pairs no joint of the group moves, nor those too coarse (``sphere_pairs``)
    reach: np.ndarray  # (bodies, joints) ``link_reach``'s R
    growth_reach: np.ndarray  # (bodies + self pairs, joints) the margins' R (``growth_reach``) for ``table``
    dropped: bool  # whether pairs no joint moves were left out (the exact check of a path's first point decides them)
    coarse: CollisionChecker | None  # an exact checker of the coarse pairs alone (None: there are none)
    coarse_reach: np.ndarray | None  # its R (``sphere_pairs.relative_reach``; None: ``link_reach``'s)
    coarse_pairs: tuple = ()  # the names of those pairs (links, or a link and a world object)


def growth_reach(reach: np.ndarray, self_pairs: np.ndarray) -> np.ndarray:
    """R (bodies + self pairs, joints) of the spheres' margins (``Workspace.growth``): a body's row of ``reach``
    (``link_reach``: its travel against the obstacles), then per self pair (a, b) the sum of both rows over the joints
    that move one of them and not the other (a joint that moves both moves them as one rigid body: their distance
    changes only with the others)."""
    a, b = reach[self_pairs[:, 0]], reach[self_pairs[:, 1]]
    return np.vstack([reach, np.where((a > 0) & (b > 0), 0.0, a + b)])


def moving_table(check: PathCheck) -> ProofTable | None:
    """The spheres ``check``'s paths are proven with, or None where the spheres cannot be used (see the module
    docstring); kept per checker, group and sphere table."""
    table = sphere_table(check.checker)
    if isinstance(table, str) or check.state_validity is not None:
        return None
    kept = _MOVING.setdefault(check.checker, {})
    if check.joint_names in kept and kept[check.joint_names][0] is table:
        return kept[check.joint_names][1]
    bound = link_reach(check.checker, check.joint_names)
    found = None
    if bound is not None and len(bound[0]) == len(table.body_link) and chain_tables(check, table) is not None:
        moved_by = bound[1] > 0  # (bodies, joints): the group's joints that move each body
        moving = moved_by.any(axis=1)
        pairs = table.self_pairs
        keep = (moved_by[pairs[:, 0]] != moved_by[pairs[:, 1]]).any(axis=1)  # a joint moves one and not the other
        world = table.world_tested & moving[:, None]
        dropped = not keep.all() or bool((world != table.world_tested).any())
        table_moving = table._replace(self_pairs=pairs[keep], world_tested=world)
        coarse, coarse_world = coarse_pairs(check, table_moving)
        pairs = [body_names(check, table, pair) for pair in table_moving.self_pairs[coarse]] + \
            world_pair_names(check, table, coarse_world)
        proof_table = table_moving._replace(self_pairs=table_moving.self_pairs[~coarse],
                                            world_tested=table_moving.world_tested & ~coarse_world)
        found = ProofTable(proof_table, bound[1], growth_reach(bound[1], proof_table.self_pairs), dropped,
                           pairs_check(check, pairs).checker if pairs else None,
                           relative_reach(check, pairs, bound[1]) if pairs else None, tuple(pairs))
    kept[check.joint_names] = (table, found)
    return found


def usable_table(check: PathCheck) -> ProofTable | None:
    """``moving_table(check)`` where its spheres may decide a path alone: None where the spheres cannot be used or
    the pairs no joint of the group moves are not known free (``PathCheck.fixed_pairs_free``)."""
    found = moving_table(check)
    return None if found is None or (found.dropped and not check.fixed_pairs_free) else found


def _fixed_pairs_collide(check: PathCheck, q: np.ndarray) -> bool:
    """Whether the pairs no joint of the group moves collide (decided by any state of the group: by ``q``, unless
    ``check.fixed_pairs_free`` says they are free)."""
    if check.fixed_pairs_free:
        return False
    return check.first_invalid(q[None]) >= 0


def _coarse_check(check: PathCheck, proof: ProofTable) -> PathCheck | None:
    """``check`` with ``proof``'s exact checker of the coarse pairs alone, None when there are none."""
    return None if proof.coarse is None else PathCheck(proof.coarse, check.joint_names, check.base, check.resolution)


def chain_tables(check: PathCheck, table: SphereTable) -> tuple[tuple, tuple] | None:
    """(chain, ``table``'s arrays in its frames) for the kernels on the group's chain of frames (``sphere_chain``:
    the joints it does not move folded in), or None when a joint the group moves is neither revolute nor prismatic;
    kept per robot model, group, base state and scene's spheres (``table``'s pairs are its own: the others are the
    scene's), and per pairs."""
    entry = _chain_entry(check, table)
    found, by_pairs = entry[0], entry[3]
    if found is None:
        return None
    pairs = by_pairs.get((id(table.self_pairs), id(table.world_tested)))
    if pairs is None or pairs[0] is not table.self_pairs or pairs[1] is not table.world_tested:
        if len(by_pairs) >= MAX_KEPT_CHAINS:
            by_pairs.clear()
        chain, in_frames = found
        pairs = by_pairs[(id(table.self_pairs), id(table.world_tested))] = (
            table.self_pairs, table.world_tested,
            (tuple(chain), tuple(in_frames._replace(self_pairs=table.self_pairs, world_tested=table.world_tested))))
    return pairs[2]


def _chain_entry(check: PathCheck, table: SphereTable) -> tuple:
    """(``sphere_chain``'s answer, its ``frame_reach``, ``lowest_common_frames``, ``chain_tables``' answers by the
    pairs they hold), kept as ``chain_tables`` says."""
    kept = _CHAINS.setdefault(check.checker.model, {})
    key = check.binding_key
    entry = kept.get(key)
    if entry is None or entry[0] is not table.sphere_center:
        if len(kept) >= MAX_KEPT_CHAINS:
            kept.clear()
        found = sphere_chain(check.checker.model.tree.table_arrays, check.indices, check.base, table)
        entry = kept[key] = (table.sphere_center, found) + ((None, None) if found is None else
                                                            (frame_reach(*found), lowest_common_frames(*found))) + ({},)
    return entry[1:]


def frame_reach(chain: SphereChain, table: SphereTable) -> np.ndarray:
    """(bodies, frames): how far a point of each body (its bounding sphere, ``table`` in the chain's frames) can be
    from the origin of each revolute frame above it, whatever the joint values (the frames' offsets between them
    summed); infinite above a prismatic frame (and for a prismatic frame itself), 0 for a frame not above it."""
    reach = np.zeros((len(table.body_radius), len(chain.parent)))
    for b, frame in enumerate(table.body_link):
        distance, f = float(np.linalg.norm(table.body_center[b])) + float(table.body_radius[b]), int(frame)
        while f > 0:
            reach[b, f] = distance if chain.motion[f] == REVOLUTE else np.inf
            offset = float(np.linalg.norm(chain.constant[f][:, 3]))
            distance = np.inf if chain.motion[f] == PRISMATIC else distance + offset
            f = int(chain.parent[f])
    return reach


def lowest_common_frames(chain: SphereChain, table: SphereTable) -> np.ndarray:
    """(bodies, bodies) int64: the lowest frame above (or at) both bodies' frames (``table`` in the chain's
    frames): the joints above it move the two as one rigid body."""
    def above(frame: int) -> list[int]:
        frames = [frame]
        while frames[-1] > 0:
            frames.append(int(chain.parent[frames[-1]]))
        return frames

    chains = [above(int(frame)) for frame in table.body_link]
    return np.array([[next(f for f in a if f in b) for b in chains] for a in chains], dtype=np.int64)


def proof_bound(check: PathCheck, table: SphereTable) -> tuple:
    """``block_proof``'s ``bound`` for ``table``'s spheres: (frame_reach, lowest_common_frames, spans scratch,
    below scratch), the scratch the calling thread's."""
    return _kernel_entry(check, table)[3]


def kernel_tuples(check: PathCheck, table: SphereTable) -> tuple[tuple, tuple, Workspace]:
    """(chain, table arrays, a workspace) of ``check``'s group for ``table``'s spheres (``moving_table`` made sure
    that the group has a chain), no margins set."""
    return _kernel_entry(check, table)[1]


def kernel_bundle(check: PathCheck, table: SphereTable) -> KernelInputs:
    """``kernel_tuples``' chain, table arrays and workspace (no margins set) as one object (``kept_inputs``)."""
    return _kernel_entry(check, table)[2]


def _kernel_entry(check: PathCheck, table: SphereTable) -> tuple:
    """(``table``, ``kernel_tuples``', ``kernel_bundle``'s and ``proof_bound``'s answers), kept per thread, table and
    group and base state (a plan asks for them a few times: one lookup, not one per cache they come from), the
    workspace's margins set to zero."""
    entry = thread_scratch(f"{__name__}.kernel_entry", (id(table), check.binding_key),
                           lambda: _new_kernel_entry(check, table))
    entry[1][2].growth[:] = 0.0
    return entry


def _new_kernel_entry(check: PathCheck, table: SphereTable) -> tuple:
    chain, arrays = chain_tables(check, table)
    work = _workspace(check, table)
    reach, lowest = _chain_entry(check, table)[1:3]
    return (table, (chain, arrays, work), kept_inputs(chain, arrays, work),
            (reach, lowest, np.empty(len(check.joint_names)), np.empty(reach.shape)))


def _workspace(check: PathCheck, table: SphereTable) -> Workspace:
    """A workspace for ``table``'s spheres, no margins set, kept per thread (the kernels given one by
    ``kernel_tuples`` are done with it when they return)."""
    key = (id(table.sphere_center), len(table.self_pairs), table.world_tested.shape, check.binding_key[1])
    kept = thread_scratch(__name__, key, lambda: (table.sphere_center, workspace(
        check.base, len(check.checker.model.link_names), table)))
    kept[1].growth[:] = 0.0
    return kept[1]


def touching_pairs(check: PathCheck, table: SphereTable, states: np.ndarray,
                   work: Workspace | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(self pairs (P,) bool, body and obstacle pairs (B, M) bool): the pairs of ``table`` whose spheres touch in
    one of the group ``states`` (n, joints), with the margins of ``work.growth`` (default: none), in one compiled
    call."""
    self_hit, world_hit = np.zeros(len(table.self_pairs), dtype=bool), np.zeros(table.world_tested.shape, dtype=bool)
    pairs_touching_in(np.ascontiguousarray(states, dtype=float), check.indices, check.checker.model.tree.table_arrays,
                      tuple(table), _workspace(check, table) if work is None else work, self_hit, world_hit)
    return self_hit, world_hit


def spheres_free(check: PathCheck, table: SphereTable, states: np.ndarray, growth: np.ndarray) -> np.ndarray:
    """(n,) bool: which of the group ``states`` (n, joints) are free for ``table``'s spheres with the margins
    ``growth`` (n, bodies + self pairs)."""
    free = np.zeros(len(states), dtype=bool)
    chain_states_free(np.ascontiguousarray(states, dtype=float), np.ascontiguousarray(growth),
                      *kernel_tuples(check, table), free)
    return free


def _block_proven(check: PathCheck, found: ProofTable, positions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(points (k,), steps (k - 1,)) of the path ``positions`` (k, joints) that ``block_proof`` proves free with
    ``found``'s spheres."""
    points, steps = np.zeros(len(positions), dtype=bool), np.zeros(len(positions) - 1, dtype=bool)
    check.states_checked += block_proof(np.ascontiguousarray(positions, dtype=float), found.growth_reach,
                                        SPHERE_HALVINGS, proof_bound(check, found.table),
                                        *kernel_tuples(check, found.table), points, steps)
    return points, steps


def sphere_proof(check: PathCheck, positions: np.ndarray,
                 found: ProofTable | None = None) -> tuple[np.ndarray, np.ndarray] | None:
    """(points (k,) bool: the path's points (k, joints) the spheres prove free for the exact checker, steps (k - 1,)
    bool: the steps they prove free throughout), or None where the spheres cannot be used. A step not proven with
    its points is halved up to SPHERE_HALVINGS times, the growth halved with it (see the module docstring), unless
    the bare spheres touch at one of its ends. ``found``: the spheres to use (default: ``moving_table``'s)."""
    found = found or moving_table(check)
    if found is None:
        return None
    if found.dropped and _fixed_pairs_collide(check, positions[0]):
        return np.zeros(len(positions), dtype=bool), np.zeros(len(positions) - 1, dtype=bool)
    return _block_proven(check, found, positions)


def checked_path(check: PathCheck, positions: np.ndarray, halvings: int = MAX_HALVINGS,
                 proof: tuple[np.ndarray, np.ndarray] | None = None) -> tuple[int, int | None]:
    """(invalid, unproven) of a path's points, as ``check.first_invalid`` (-1: every point valid) and, when they
    are, ``first_unproven`` (a point whose step to the next is not proven free within ``halvings``, -1: all are,
    None: cannot be proven here) answer them, the exact checks made only where the spheres prove nothing (and for
    the coarse pairs). ``proof``: ``sphere_proof``'s answer for the path when it was made already."""
    found = moving_table(check)
    proof = sphere_proof(check, positions, found) if proof is None else proof
    if proof is None:
        invalid = check.first_invalid(positions)
        return invalid, (first_unproven(check, positions, halvings=halvings) if invalid < 0 else -1)
    points, steps = proof
    if found.coarse is None and points.all() and steps.all():
        return -1, -1
    pair_points, pair_steps = points, steps  # what the exact checker of the pairs left out must prove
    narrowed = _narrowed(check, found, positions, points, steps)
    if narrowed is not None:
        wide_points, wide_steps = points, steps
        points, steps = _proven_again(check, narrowed, positions, points, steps)
        pair_points, pair_steps = points, steps
        if found.coarse is None:  # the narrowed pairs alone: what the full spheres proved holds for them too
            pair_points, pair_steps = points & ~wide_points, steps & ~wide_steps
        found = narrowed
    coarse = _coarse_check(check, found)
    for checked, chosen in ((check, ~points), (coarse, pair_points)):
        rows = np.flatnonzero(chosen) if checked is not None else []
        invalid = checked.first_invalid(positions[rows]) if len(rows) else -1
        if invalid >= 0:
            return int(rows[invalid]), -1
    unproven = [first_unproven(checked, positions, chosen, reach, halvings) if chosen.any() else -1
                for checked, chosen, reach in ((check, ~steps, None), (coarse, pair_steps, found.coarse_reach))
                if checked is not None]
    return -1, (None if None in unproven else min((k for k in unproven if k >= 0), default=-1))


def _proven_again(check: PathCheck, found: ProofTable, positions: np.ndarray, points: np.ndarray,
                  steps: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``points`` and ``steps`` (a proof of the path ``positions`` with more pairs than ``found``'s) with the part of
    the path from its first point or step not proven to its last proven again with ``found``'s spheres (what the
    first proof proved holds for fewer pairs; the narrowed pairs' spheres touch near the start on the cage's tail:
    one proof of 17 steps, not of 476)."""
    unproven_steps = np.flatnonzero(~steps)
    doubt = np.concatenate([np.flatnonzero(~points), unproven_steps, unproven_steps + 1])
    first, last = int(doubt.min()), int(doubt.max())
    span = sphere_proof(check, positions[first:last + 1], found)
    points, steps = points.copy(), steps.copy()
    points[first:last + 1] |= span[0]
    steps[first:last] |= span[1]
    return points, steps


def _narrowed(check: PathCheck, found: ProofTable, positions: np.ndarray, points: np.ndarray,
              steps: np.ndarray) -> ProofTable | None:
    """``found`` with the self pairs whose bare spheres touch at the points they do not prove left to the exact
    checker of those pairs alone (with the coarse ones), when more than NARROW_STEPS steps are not proven; None
    when that is not so or cannot be (``relative_reach`` bounds no such checker). Kept per checker, group, table
    and pairs."""
    if (~steps).sum() <= NARROW_STEPS or points.all() or not len(found.table.self_pairs):
        return None
    doubt = np.flatnonzero(~points)
    table = found.table
    hit, _ = touching_pairs(check, table, positions[doubt[np.linspace(0, len(doubt) - 1, min(
        len(doubt), TOUCHING_SAMPLES)).astype(int)]])
    if not hit.any():
        return None
    kept = _NARROWED.setdefault(check.checker, {})
    key = (check.joint_names, tuple(np.flatnonzero(hit)))
    if key not in kept or kept[key][0] is not found:
        pairs = list(found.coarse_pairs) + [body_names(check, table, pair) for pair in table.self_pairs[hit]]
        reach = relative_reach(check, pairs, found.reach)
        kept[key] = (found, None if reach is None else found._replace(
            table=table._replace(self_pairs=table.self_pairs[~hit]),
            growth_reach=growth_reach(found.reach, table.self_pairs[~hit]), coarse=pairs_check(check, pairs).checker,
            coarse_reach=reach, coarse_pairs=tuple(pairs)))
    return kept[key][1]


def first_invalid(check: PathCheck, states: np.ndarray, found: ProofTable | None = None) -> int:
    """``check.first_invalid``: the index of an invalid state among ``states`` (n, joints), -1 when all are valid;
    a state free for the spheres is valid (the coarse pairs checked exactly), the others are checked exactly.
    The spheres are tested coarse to fine (``bisection_order``) and the first state they do not prove is checked
    at once (by the geometry's witness points, ``collision.witness_points``, then exactly), so that a colliding
    motion is found in a few checks. ``found``: the spheres (default ``moving_table``'s; fewer pairs where the
    others are known free in these states: ``sphere_search``'s relaxed pairs)."""
    found = found or moving_table(check)
    if found is None or not len(states) or (found.dropped and _fixed_pairs_collide(check, states[0])):
        return check.first_invalid(states)
    order = bisection_order(len(states))
    touching = first_touching(np.ascontiguousarray(states[order], dtype=float), kernel_bundle(check, found.table))
    free, doubt = np.ones(len(states), dtype=bool), np.empty(0, dtype=np.int64)
    if touching >= 0:
        first = order[touching]
        if proven_colliding(check.checker, check.indices, check.base, states[first], check.binding_key) or \
                check.first_invalid(states[first][None]) >= 0:
            return int(first)
        rest = order[touching + 1:]
        free[first] = False  # valid: checked exactly, every pair, just now
        free[rest] = spheres_free(check, found.table, states[rest], np.zeros((len(rest), len(found.growth_reach))))
        doubt = rest[~free[rest]]
    check.states_checked += int(free.sum())
    for checked, rows in ((_coarse_check(check, found), np.flatnonzero(free)), (check, np.sort(doubt))):
        invalid = checked.first_invalid(states[rows]) if checked is not None and len(rows) else -1
        if invalid >= 0:
            return int(rows[invalid])
    return -1


def spheres_free_segments(check: PathCheck, waypoints: np.ndarray, found: ProofTable | None = None) -> np.ndarray:
    """(segments,) bool: which straight motions between ``waypoints`` (k, joints) the spheres find free at
    ``check``'s resolution (each motion's first state left out), in one compiled call; ``segment_free`` of such a
    segment is True. All False where the spheres do not decide alone (``segment_free`` then decides each). ``found``:
    as ``segment_free``'s."""
    found = found or usable_table(check)
    touching = np.ones(len(waypoints) - 1, dtype=bool)
    if found is None or found.coarse is not None or not len(touching):
        return ~touching
    chain, arrays, work = kernel_tuples(check, found.table)
    waypoints = np.ascontiguousarray(waypoints, dtype=float)
    touching_segments(waypoints, check.resolution, chain, arrays, work, motion_scratch(len(chain[0])), touching)
    free = ~touching
    check.states_checked += sum(steps_between(waypoints[s], waypoints[s + 1], check.resolution)
                                for s in np.flatnonzero(free))
    return free


def segment_free(check: PathCheck, q_from: np.ndarray, q_to: np.ndarray, found: ProofTable | None = None) -> bool:
    """``check.segment_free``: the states from ``q_from`` (not checked) to ``q_to`` at ``check``'s resolution
    valid (``first_invalid``: the spheres first). The spheres' check runs in one compiled call over the motion
    (``first_touching_step``). Where they touch, the first state they found touching refuses the motion when a point
    of the links' geometry lies inside an obstacle there (most often: ``collision.witness_points``), else when the
    exact checker finds it in collision; where it is free, a witness point in another of the motion's states
    (``_first_witnessed``) refuses it, else ``first_invalid`` decides. ``found``: as ``first_invalid``'s (default
    ``usable_table``'s)."""
    found = found or usable_table(check)
    if found is None or found.coarse is not None:
        return first_invalid(check, segment_states(q_from, q_to, check.resolution), found) < 0
    q_from, q_to = (np.ascontiguousarray(q, dtype=float) for q in (q_from, q_to))
    step = first_touching_step_in(q_from, q_to, check.resolution, kernel_bundle(check, found.table))
    steps = steps_between(q_from, q_to, check.resolution)
    if step == 0:
        check.states_checked += steps
        return True
    state = q_from + (q_to - q_from) * step / steps
    if proven_colliding(check.checker, check.indices, check.base, state, check.binding_key) or \
            check.first_invalid(state[None]) >= 0:
        return False
    states, order = segment_states(q_from, q_to, check.resolution), bisection_order(steps)
    if _first_witnessed(check, states, order[order != step - 1]) >= 0:
        return False  # (row step - 1 is ``state``, checked already)
    return first_invalid(check, states, found) < 0


def _first_witnessed(check: PathCheck, states: np.ndarray, order: np.ndarray) -> int:
    """The index of a state among ``states[order]`` that the geometry's witness points prove in collision (the first
    in that order), -1 when none is: a motion whose first state the spheres find touching is free there is most often
    blocked further into the obstacle (on the bench's 30 Panda problems, the 4 such straight motions were all proven
    so; the exact checker's search of the motion's states costs a few times more)."""
    proven = first_proven_colliding(check.checker, check.indices, check.base, states[order], check.binding_key)
    return -1 if proven < 0 else int(order[proven])
