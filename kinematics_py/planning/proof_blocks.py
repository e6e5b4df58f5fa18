"""The compiled proof of a path's blocks on the robot's spheres (``sphere_proof`` says why a point free with its
margins proves the steps beside it): blocks proven from the path's start, each sized from its neighbour's, single
steps halved where their points are not free with their margins.
"""
from __future__ import annotations

import math

import numpy as np

from ..collision.sphere_kernels import SphereChain, SphereTable, chain_collides, place_chain, touching
from ..compiled import compiled_kernel
from ..model.tree_kernels import REVOLUTE

#: ``block_proof``: blocks proven in a row at one size before the next tries twice that size (the bench's 30 Panda
#: plans, states checked a path: 234 halving every block from the whole path; 181 so; 158 with the points between
#: single steps checked once; growing after 2 instead of 3 checked about 4 % more).
PROVEN_BEFORE_GROWING = 3


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
def _grow_by_spans(reach, spans, work):
    """``work.growth[b]`` <- each body's ``reach`` (rows of ``growth_reach``) times the group values' ``spans``; each
    self pair's margin <- infinity, left to ``_tightened`` (the pair's own bound in the state, which every margined
    check computes: the margins ``reach`` gave the pairs never lowered it on the bench's 30 Panda plans, which proved
    the same states without them, and cost a third of setting the margins)."""
    bodies = work.world_bodies.shape[0]
    for m in range(bodies):
        total = 0.0
        for v in range(reach.shape[1]):
            total += reach[m, v] * spans[v]
        work.growth[m] = total
    work.growth[bodies:reach.shape[0]] = np.inf


@compiled_kernel(inline="always")
def _set_margins(joint_travel, reach, start, end, share, bound, work):
    """The margins of a motion covering ``share`` of the path from its point ``start`` to ``end``: each group
    value's span (``joint_travel``: its motion summed from the first point), each margin grown by them
    (``_grow_by_spans``)."""
    spans = bound[2]
    for v in range(joint_travel.shape[1]):
        spans[v] = share * (joint_travel[end, v] - joint_travel[start, v])
    _grow_by_spans(reach, spans, work)


@compiled_kernel(inline="always")
def _set_block_margins(joint_travel, reach, i, c, j, bound, work):
    """The margins of the middle point c of the block i .. j: the most each body moves from c to either end (the
    self pairs' as ``_grow_by_spans``)."""
    spans, bodies = bound[2], work.world_bodies.shape[0]
    for v in range(joint_travel.shape[1]):
        spans[v] = max(joint_travel[c, v] - joint_travel[i, v], joint_travel[j, v] - joint_travel[c, v])
    for m in range(bodies):
        back, ahead = 0.0, 0.0
        for v in range(reach.shape[1]):
            back += reach[m, v] * (joint_travel[c, v] - joint_travel[i, v])
            ahead += reach[m, v] * (joint_travel[j, v] - joint_travel[c, v])
        work.growth[m] = max(back, ahead)
    work.growth[bodies:reach.shape[0]] = np.inf  # (the pairs' own bounds: ``_grow_by_spans``)


@compiled_kernel
def _halved_step(positions, joint_travel, reach, i, halvings, bound, chain, table, work, between):
    """Whether step i of the path (its ends free with bare spheres) is proven free by halving it up to ``halvings``
    times: a part of the step (a share f of it) is free throughout when its ends are free with each margin f times
    half the step's travel; a part that is not is halved. An end found free with a margin is free with a smaller
    one, so it is not checked again. Returns (proven, states checked)."""
    dof, checked = positions.shape[1], 0
    # parts to prove: (first, last) shares of the step, their depth, and whether their ends are known free
    first, last = np.empty(2 * halvings + 2), np.empty(2 * halvings + 2)
    depth = np.empty(2 * halvings + 2, dtype=np.int64)
    first_free, last_free = np.empty(2 * halvings + 2, dtype=np.bool_), np.empty(2 * halvings + 2, dtype=np.bool_)
    first[0], last[0], depth[0], first_free[0], last_free[0] = 0.0, 0.5, 1, False, False
    first[1], last[1], depth[1], first_free[1], last_free[1] = 0.5, 1.0, 1, False, False
    top = 2
    while top > 0:
        top -= 1
        a, b, d, free_a, free_b = first[top], last[top], depth[top], first_free[top], last_free[top]
        for end in range(2):
            if (free_a if end == 0 else free_b):
                continue
            share = a if end == 0 else b
            for k in range(dof):
                between[k] = positions[i, k] + share * (positions[i + 1, k] - positions[i, k])
            checked += 1
            _set_margins(joint_travel, reach, i, i + 1, (b - a) / 2, bound, work)
            if _margined_collides(between, bound, chain, table, work):
                break
            if end == 0:
                free_a = True
            else:
                free_b = True
        if free_a and free_b:
            continue
        if d >= halvings:
            return False, checked
        middle = (a + b) / 2
        first[top], last[top], depth[top], first_free[top], last_free[top] = middle, b, d + 1, False, free_b
        first[top + 1], last[top + 1], depth[top + 1], first_free[top + 1], last_free[top + 1] = \
            a, middle, d + 1, free_a, False
        top += 2
    return True, checked


@compiled_kernel(inline="always")
def _set_point_margins(joint_travel, reach, k, bound, work):
    """The margins of point k for the steps on either side of it: each group value's span half the larger of its
    travels over the two steps (``_set_margins``), so that point k free with them serves both steps."""
    spans, last = bound[2], joint_travel.shape[0] - 1
    for v in range(joint_travel.shape[1]):
        before = joint_travel[k, v] - joint_travel[k - 1, v] if k > 0 else 0.0
        after = joint_travel[k + 1, v] - joint_travel[k, v] if k < last else 0.0
        spans[v] = 0.5 * max(before, after)
    _grow_by_spans(reach, spans, work)


@compiled_kernel(inline="always")
def _step_proven(positions, joint_travel, reach, i, start_free, halvings, bound, chain, table, work, points,
                 between):
    """Whether step i of the path is proven free, its ends (points i and i + 1) with it: both ends free with their
    margins (``_set_point_margins``: half the larger travel of the steps beside them; ``start_free``: point i was
    found so by the step before); otherwise its ends checked with the bare spheres (an end so found free is proven:
    ``points``) and, when both are free, the step halved up to ``halvings`` times (``_halved_step``). Returns
    (proven, states checked, whether point i + 1 is free with its margins)."""
    j, checked = i + 1, 0
    if not start_free:
        checked += 1
        _set_point_margins(joint_travel, reach, i, bound, work)
        start_free = not _margined_collides(positions[i], bound, chain, table, work)
    if start_free:
        checked += 1
        _set_point_margins(joint_travel, reach, j, bound, work)
        if not _margined_collides(positions[j], bound, chain, table, work):
            return True, checked, True
    work.growth[:] = 0.0
    for k in (i, j):
        if not points[k]:
            checked += 1
            points[k] = not chain_collides(positions[k], chain, table, work)
    if not (points[i] and points[j]) or halvings == 0:
        return False, checked, False
    proven, states = _halved_step(positions, joint_travel, reach, i, halvings, bound, chain, table, work, between)
    return proven, checked + states, False


@compiled_kernel
def block_proof(positions, reach, halvings, bound, chain, table, work, points, steps):
    """Prove blocks of a path free, from its first point to its last: points[k] (and steps[k], the step from point
    k to k + 1) <- True for every point (step) of a block found free. ``reach`` (bodies + self pairs, joints): how
    far each body (and each pair, relative to each other) moves per unit of each joint (``growth_reach``), so that
    over a part of the path it moves at most ``reach`` times its joints' travel there (``motion_bound``). A block of
    points i .. j is free, every state of its steps included, when its middle point c is free with each margin
    (``Workspace.growth``) the most it moves from there to either end, or the state's own bound when lower
    (``_tightened``; ``bound``: its tables and scratch, ``proof_bound``). The first block is the whole path; a
    block not proven is tried again at half its size, down to single steps (``_step_proven``: a point between two
    of them checked once, with the margins of both); after PROVEN_BEFORE_GROWING blocks (or single steps) in a row
    proven at one size the next tries twice that size. A path's clearance changes slowly along it, so each block
    starts near the size its neighbour needed (halving every block from the whole path spent a failed check on each
    block above a proven one: about as many as the proven ones). Points and steps not proven are left as they are.
    Returns the number of states checked. ``chain``, ``table``: the group's frames and the spheres in them
    (``chain_tables``)."""
    count, dof, checked = positions.shape[0], positions.shape[1], 0
    between = np.empty(dof)
    joint_travel = np.zeros((count, dof))  # each joint's motion from the first point
    for k in range(1, count):
        for v in range(dof):
            joint_travel[k, v] = joint_travel[k - 1, v] + abs(positions[k, v] - positions[k - 1, v])
    if count == 1:
        work.growth[:] = 0.0
        points[0] = not chain_collides(positions[0], chain, table, work)
        return 1
    i, size, streak, start_free = 0, count - 1, 0, False
    while i < count - 1:
        j = min(i + size, count - 1)
        if j - i == 1:
            proven, states, start_free = _step_proven(positions, joint_travel, reach, i, start_free, halvings, bound,
                                                      chain, table, work, points, between)
            if proven:
                points[i] = steps[i] = points[j] = True
            checked += states
            i, streak = j, (streak + 1 if proven else 0)
        else:
            c = (i + j) // 2
            checked += 1
            _set_block_margins(joint_travel, reach, i, c, j, bound, work)
            if _margined_collides(positions[c], bound, chain, table, work):
                size, streak = (j - i) // 2, 0
                continue
            for k in range(i, j):
                points[k] = steps[k] = True
            points[j] = True
            i, streak, start_free = j, streak + 1, False
        if streak >= PROVEN_BEFORE_GROWING:
            size, streak = 2 * size, 0
    work.growth[:] = 0.0
    return checked
