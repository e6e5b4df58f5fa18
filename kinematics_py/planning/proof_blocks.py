"""The compiled proof of a path's blocks on the robot's spheres (``sphere_proof`` says why a state free with its
margins proves the states around it): blocks proven from the path's start, each sized from its neighbour's, down to
parts of a step where the clearance is small.
"""
from __future__ import annotations

import math

import numpy as np

from ..collision.sphere_kernels import SphereChain, SphereTable, chain_collides, place_chain, touching
from ..compiled import compiled_kernel
from ..model.tree_kernels import REVOLUTE

#: ``block_proof``: blocks proven in a row at one size before the next tries twice that size (the bench's 30 Panda
#: plans, states checked a path: 234 halving every block from the whole path; 181 so; 158 with the points between
#: single steps checked once; growing after 2 instead of 3 checked about 4 % more. With parts of steps, states
#: checked in all on the bench's 30 plans of each robot's final paths, 3 -> 5: Panda 3771 -> 3577, Kinova 5031 ->
#: 4619, UR5 11195 -> 8129; 2: Panda 4224; 4, 6, 8: 3692, 3607, 3636).
PROVEN_BEFORE_GROWING = 5


@compiled_kernel(inline="always")
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


@compiled_kernel(inline="always")
def _margined_collides(q, bound, chain, table, work):
    """Whether the group state ``q`` touches with the margins set in ``work.growth`` from ``link_reach`` and in
    ``bound``'s spans, each lowered to the state's own bound (``_tightened``)."""
    place_chain(q, chain, table, work)
    _tightened(bound[2], bound, chain, table, work)
    return touching(table, work, True, work.self_hit, work.world_hit)


@compiled_kernel(inline="always")
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


@compiled_kernel(inline="always")
def _state_at(positions, x, out):
    """out <- the path's state at its (fractional) position ``x`` [steps] (straight along each step)."""
    k = min(int(x), positions.shape[0] - 2)
    for v in range(positions.shape[1]):
        out[v] = positions[k, v] + (x - k) * (positions[k + 1, v] - positions[k, v])


@compiled_kernel(inline="always")
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


@compiled_kernel(inline="always")
def _joint_travel(positions):
    """(points, joints): each joint's motion along the path from its first point."""
    joint_travel = np.zeros(positions.shape)
    for k in range(1, positions.shape[0]):
        for v in range(positions.shape[1]):
            joint_travel[k, v] = joint_travel[k - 1, v] + abs(positions[k, v] - positions[k - 1, v])
    return joint_travel


@compiled_kernel(inline="always")
def _mark_proven(first, last, unit, points, steps):
    """The points in the block ``first`` .. ``last`` (positions in parts ``1 / unit`` of a step) and the steps it ends
    (the block proven after the others of their step: ``block_proof`` goes through a step in order) proven."""
    for m in range((first + unit - 1) // unit, last // unit + 1):
        points[m] = True
    for m in range(first // unit, last // unit):
        steps[m] = True


@compiled_kernel
def block_proof(positions, reach, halvings, bound, chain, table, work, points, steps):
    """Prove blocks of a path free, from its first point to its last: points[k] (and steps[k], the step from point
    k to k + 1) <- True for every point (step) of a block found free. ``reach`` (bodies + self pairs, joints): how
    far each body (and each pair, relative to each other) moves per unit of each joint (``growth_reach``), so that
    over a part of the path it moves at most ``reach`` times its joints' travel there (``motion_bound``). A block of
    the path is free, every state of it included, when the state at its middle is free with each margin
    (``Workspace.growth``) the most it moves from there to either end, or the state's own bound when lower
    (``_tightened``; ``bound``: its tables and scratch, ``proof_bound``). The first block is the whole path; a block
    not proven is tried again at half its size, down to single steps, then to parts of a step (the state at a
    part's middle, between the step's points) down to 2**-halvings of it; a step whose ends touch with the bare
    spheres, or with a part not proven at that size, is left unproven (the proof goes on from its end). After
    PROVEN_BEFORE_GROWING blocks in a row proven at one size the next tries twice that size (a part of a step only
    where the doubled part starts on its own size, so that parts stay halves of the step's). A path's clearance
    changes slowly along it, so each block starts near the size its neighbour needed (halving every block from the
    whole path spent a failed check on each block above a proven one: about as many as the proven ones). Points and
    steps not proven are left as they are. Returns the number of states checked. ``chain``, ``table``: the group's
    frames and the spheres in them (``chain_tables``)."""
    count, dof, checked = positions.shape[0], positions.shape[1], 0
    joint_travel = _joint_travel(positions)
    if count == 1:
        work.growth[:] = 0.0
        points[0] = not chain_collides(positions[0], chain, table, work)
        return 1
    middle, back, ahead = np.empty(dof), np.empty(dof), np.empty(dof)
    unit = 1 << halvings  # positions along the path in parts of a step: 2**-halvings
    total = (count - 1) * unit
    first, size, streak, ends_checked = 0, total, 0, -1
    while first < total:
        k = first // unit
        last = min(first + size, total)
        if first % unit != 0 or size < unit:  # parts of a step stay within it
            last = min(last, (k + 1) * unit)
        centre = 0.5 * (first + last) / unit
        _state_at(positions, centre, middle)
        _set_block_margins(joint_travel, reach, first / unit, centre, last / unit, bound, work, back, ahead)
        checked += 1
        if not _margined_collides(middle, bound, chain, table, work):
            _mark_proven(first, last, unit, points, steps)
            first, streak = last, streak + 1
            if streak >= PROVEN_BEFORE_GROWING and (size >= unit or first % (2 * size) == 0):
                size, streak = min(2 * size, total), 0
            continue
        streak = 0
        if last - first > unit:  # a block of steps: half as many
            size = max(unit, ((last - first) // unit // 2) * unit)
            continue
        failed = last - first <= 1
        if not failed and ends_checked != k:
            ends_checked = k
            free, states = _ends_free(positions, k, chain, table, work, points)
            checked += states
            failed = not free
        if failed:  # step k is not proven: on from its end, a step at a time
            first, size = (k + 1) * unit, unit
        else:
            size = (last - first) // 2
    work.growth[:] = 0.0
    return checked
