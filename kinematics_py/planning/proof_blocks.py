"""The compiled proof of a path's blocks on the robot's spheres (``sphere_proof`` says why a state free with its
margins proves the states around it): blocks proven from the path's start, each sized from its neighbour's, down to
parts of a step where the clearance is small.
"""
from __future__ import annotations

import math

import numpy as np

from ..collision.sphere_clearance import margin_scale
from ..collision.sphere_kernels import SphereChain, SphereTable, chain_collides, place_chain
from ..compiled import FUSED_MULTIPLY_ADD, compiled_kernel
from ..model.tree_kernels import REVOLUTE

#: ``block_proof``: the next block is SIZE_SHARE of the size the last one's middle state would have proven (its size
#: times the factor its margins could have been scaled by, ``sphere_clearance.margin_scale``), extrapolated along the
#: path from the block before (the clearance changes slowly along a path, and a block's margins grow a little faster
#: than its size), BLOCK_GROWTH times the last at most; a block not proven is tried again at 1 / FAILED_SHRINK of its
#: size at least (its factor is not sought below FAILED_FLOOR: a state whose bare spheres touch has none). Replayed on
#: the proofs of the bench's 30 Panda plans: SIZE_SHARE 0.8 / 0.9 / 0.95 / 1.0 checked 2612 / 2469 / 2420 / 2438
#: states; BLOCK_GROWTH 1.25 / 1.5 / 2 / 3: 2510 / 2469 / 2469 / 2469, 1.5 the fastest (a lower cap culls more);
#: no extrapolation: 2788; halved on a failure and doubled after five in a row proven (before): 3577; each block the
#: largest proven from its start (found by bisection): 1861.
SIZE_SHARE = 0.95
BLOCK_GROWTH = 1.5
FAILED_SHRINK = 8
FAILED_FLOOR = 0.25
#: The extrapolation's slope [parts of size provable per part along the path] is kept within these: a state's
#: clearance changes by at most its margin's rate along the path, so the size provable (twice the clearance over that
#: rate) by at most 2 either way; above 1 the size extrapolated would grow too fast to trust (at 2 / SIZE_SHARE,
#: without bound).
SLOPE_LOWEST, SLOPE_HIGHEST = -2.0, 1.0
#: The factor is not sought above this (a higher cap culls less): a block proven at the cap is followed by one at least
#: a part larger (SIZE_SHARE of the cap is BLOCK_GROWTH, whose 1.5 parts after a block of one would be cut to one
#: part, and every block after it one part: a UR5 path proven in parts of 1/256 of a step after its one narrow step,
#: 102,024 states checked where 221 do).
SCALE_CAP = BLOCK_GROWTH / SIZE_SHARE


@compiled_kernel(inline="always", fastmath=FUSED_MULTIPLY_ADD)
def _tightened(spans, bound, chain, table, work):
    """Lower each margin of ``work.growth`` (``link_reach``'s bound, the same in every state) to this state's own
    bound, the state placed (``place_chain``): over motions of at most ``spans[v]`` of each group value v from here, a
    point of body b moves at most the sum over the frames f above it of ``span_f * (its distance from f's axis)``;
    that distance is at most the body's bounding sphere's distance from the axis here plus its radius plus how far
    the frames below f can move it (their spans times ``frame_reach``), and at most ``frame_reach[b, f]``. A self
    pair's gap sums the frames that move one of its bodies and not the other: those below the lowest frame above
    both (``bound``: (frame_reach, lowest_common (bodies, bodies), spans, below (bodies, frames) scratch))."""
    frame_reach, lowest_common, below = bound[0], bound[1], bound[3]
    chain, table = SphereChain(*chain), SphereTable(*table)
    parent, motion, variable, multiplier = chain.parent, chain.motion, chain.variable, chain.multiplier
    poses, centers, growth, radius = work.link_poses, work.world_bodies, work.growth, table.body_radius
    bodies = radius.shape[0]
    for b in range(bodies):
        total, moved, f = 0.0, 0.0, table.body_link[b]
        while f > 0:
            below[b, f] = total  # what the frames below f add
            span = abs(multiplier[f]) * spans[variable[f]]
            if span > 0.0 and motion[f] == REVOLUTE:
                dx, dy, dz = centers[b, 0] - poses[f, 0, 3], centers[b, 1] - poses[f, 1, 3], \
                    centers[b, 2] - poses[f, 2, 3]
                along = dx * poses[f, 0, 2] + dy * poses[f, 1, 2] + dz * poses[f, 2, 2]
                axis_distance = math.sqrt(max(dx * dx + dy * dy + dz * dz - along * along, 0.0))
                total += span * min(frame_reach[b, f], axis_distance + radius[b] + moved)
                moved += span * frame_reach[b, f]
            elif span > 0.0:  # prismatic: every point moves by the span
                total += span
                moved += span
            f = parent[f]
        below[b, 0] = total
        growth[b] = min(growth[b], total)
    pairs = table.self_pairs
    for p in range(pairs.shape[0]):
        a, c = pairs[p, 0], pairs[p, 1]
        common = lowest_common[a, c]
        growth[bodies + p] = min(growth[bodies + p], below[a, common] + below[c, common])


@compiled_kernel(inline="always", fastmath=FUSED_MULTIPLY_ADD)
def _margined_scale(q, bound, chain, table, work):
    """``margin_scale`` of the group state ``q`` with the margins set in ``work.growth`` from ``link_reach`` and in
    ``bound``'s spans, each lowered to the state's own bound (``_tightened``): the state is free with them when it is
    above 1."""
    place_chain(q, chain, table, work)
    _tightened(bound[2], bound, chain, table, work)
    return margin_scale(table, work, SCALE_CAP, FAILED_FLOOR)


@compiled_kernel(inline="always", fastmath=FUSED_MULTIPLY_ADD)
def _next_size(provable, slope, offset, span):
    """The next block's size [parts of a step], its start ``offset`` parts from the middle of the last block (``span``
    parts), which would have proven a block of ``provable`` parts there, a size changing by ``slope`` per part along
    the path: SIZE_SHARE of the size provable at the next block's middle so extrapolated, BLOCK_GROWTH times the last
    at most, one part at least."""
    size = SIZE_SHARE * (provable + slope * offset) / (1.0 - SIZE_SHARE * slope / 2.0)
    return max(1, int(min(size, BLOCK_GROWTH * span)))


@compiled_kernel(inline="always", fastmath=FUSED_MULTIPLY_ADD)
def _set_block_margins(joint_travel, reach, first, middle, last, bound, work, back, ahead):
    """The margins of the state at ``middle`` of the block ``first`` .. ``last`` (positions along the path [steps],
    fractional within a step): the most each body moves from there to either end (each group value's span, in
    ``bound``, the larger of its two travels; ``back``, ``ahead``: scratch for them); the self pairs' left to their
    own bound in the state (infinity here, lowered by ``_tightened``: on the bench's 30 Panda plans
    ``growth_reach``'s margins for them proved the same states and cost a third of setting the margins)."""
    spans, bodies, dof = bound[2], work.world_bodies.shape[0], joint_travel.shape[1]
    _state_at(joint_travel, first, back)  # each joint's travel from the path's start, at the three positions
    _state_at(joint_travel, middle, spans)
    _state_at(joint_travel, last, ahead)
    for v in range(dof):
        back[v], ahead[v] = spans[v] - back[v], ahead[v] - spans[v]
        spans[v] = max(back[v], ahead[v])
    for m in range(bodies):
        to_first, to_last = 0.0, 0.0
        for v in range(dof):
            to_first += reach[m, v] * back[v]
            to_last += reach[m, v] * ahead[v]
        work.growth[m] = max(to_first, to_last)
    work.growth[bodies:reach.shape[0]] = np.inf


@compiled_kernel(inline="always", fastmath=FUSED_MULTIPLY_ADD)
def _state_at(positions, x, out):
    """out <- the path's state at its (fractional) position ``x`` [steps] (straight along each step)."""
    k = min(int(x), positions.shape[0] - 2)
    for v in range(positions.shape[1]):
        out[v] = positions[k, v] + (x - k) * (positions[k + 1, v] - positions[k, v])


@compiled_kernel(inline="always", fastmath=FUSED_MULTIPLY_ADD)
def _ends_free(positions, k, chain, table, work, points):
    """Whether both ends of step k are free with the bare spheres (each not known free checked: ``points``); returns
    (that, states checked)."""
    checked = 0
    work.growth[:] = 0.0
    for end in (k, k + 1):
        if not points[end]:
            checked += 1
            points[end] = not chain_collides(positions[end], chain, table, work)
    return points[k] and points[k + 1], checked


@compiled_kernel(inline="always", fastmath=FUSED_MULTIPLY_ADD)
def _joint_travel(positions):
    """(points, joints): each joint's motion along the path from its first point."""
    joint_travel = np.zeros(positions.shape)
    for k in range(1, positions.shape[0]):
        for v in range(positions.shape[1]):
            joint_travel[k, v] = joint_travel[k - 1, v] + abs(positions[k, v] - positions[k - 1, v])
    return joint_travel


@compiled_kernel(inline="always", fastmath=FUSED_MULTIPLY_ADD)
def _mark_proven(first, last, unit, points, steps):
    """The points in the block ``first`` .. ``last`` (positions in parts ``1 / unit`` of a step) and the steps it ends
    (the block proven after the others of their step: ``block_proof`` goes through a step in order) proven."""
    for m in range((first + unit - 1) // unit, last // unit + 1):
        points[m] = True
    for m in range(first // unit, last // unit):
        steps[m] = True


@compiled_kernel(fastmath=FUSED_MULTIPLY_ADD)
def block_proof(positions, reach, halvings, bound, chain, table, work, points, steps):
    """Prove blocks of a path free, from its first point to its last: points[k] (and steps[k], the step from point
    k to k + 1) <- True for every point (step) of a block found free. ``reach`` (bodies + self pairs, joints): how
    far each body (and each pair, relative to each other) moves per unit of each joint (``growth_reach``), so that
    over a part of the path it moves at most ``reach`` times its joints' travel there (``motion_bound``). A block of
    the path is free, every state of it included, when the state at its middle is free with each margin
    (``Workspace.growth``) the most it moves from there to either end, or the state's own bound when lower
    (``_tightened``; ``bound``: its tables and scratch, ``proof_bound``). The first block is the whole path; each next
    one is sized from the clearance the last one's middle state had (``_next_size``): after a block proven, the next
    starts at its end; a block not proven is tried again smaller, down to parts of 2**-halvings of a step (a part's
    middle lies between the step's points); a step whose ends touch with the bare spheres, or with a part not proven
    at that size, is left unproven (the proof goes on from its end, a step at a time). Blocks need not start or end
    at a step's points: the blocks since the last step left unproven are proven one after the other, so a step is
    marked proven once a block ends past it. Points and steps not proven are left as they are. Returns the number of
    states checked. ``chain``, ``table``: the group's frames and the spheres in them (``chain_tables``)."""
    count, dof, checked = positions.shape[0], positions.shape[1], 0
    joint_travel = _joint_travel(positions)
    if count == 1:
        work.growth[:] = 0.0
        points[0] = not chain_collides(positions[0], chain, table, work)
        return 1
    middle, back, ahead = np.empty(dof), np.empty(dof), np.empty(dof)
    unit = 1 << halvings  # positions along the path in parts of a step: 2**-halvings
    total = (count - 1) * unit
    first, size, ends_checked = 0, total, -1
    known_centre, known_provable = -1.0, 0.0  # the last block whose factor was found (neither capped nor cut short)
    while first < total:
        k = first // unit
        last = min(first + size, total)
        span, centre = last - first, 0.5 * (first + last)
        _state_at(positions, centre / unit, middle)
        _set_block_margins(joint_travel, reach, first / unit, centre / unit, last / unit, bound, work, back, ahead)
        checked += 1
        scale = _margined_scale(middle, bound, chain, table, work)
        provable, slope = span * scale, 0.0
        if FAILED_FLOOR < scale < SCALE_CAP:
            if known_centre >= 0.0 and known_centre != centre:
                slope = (provable - known_provable) / (centre - known_centre)
                slope = min(max(slope, SLOPE_LOWEST), SLOPE_HIGHEST)
            known_centre, known_provable = centre, provable
        else:
            known_centre = -1.0
        if scale > 1.0:
            _mark_proven(first, last, unit, points, steps)
            size = _next_size(provable, slope, last - centre, span)
            first, size = last, (max(size, span + 1) if scale >= SCALE_CAP else size)
            continue
        size = min(max(_next_size(provable, slope, first - centre, span), span // FAILED_SHRINK), max(1, span - 1))
        if span > unit:
            continue
        failed = span <= 1
        if not failed and ends_checked != k:
            ends_checked = k
            free, states = _ends_free(positions, k, chain, table, work, points)
            checked += states
            failed = not free
        if failed:  # step k is not proven: on from its end, a step at a time
            first, size, known_centre = (k + 1) * unit, unit, -1.0
    work.growth[:] = 0.0
    return checked
