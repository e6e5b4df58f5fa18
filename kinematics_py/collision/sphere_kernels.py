"""Compiled (numba) collision checks of a robot approximated by spheres: forward kinematics and sphere tests in one
call, for one state or the states of a straight joint motion (stopping at the first collision).

The robot's spheres contain its collision geometry (``spheres``), so a state these kernels call free is free for
the exact checker too, for the pairs they test (``sphere_world`` decides which). Each body (a link with geometry)
has a bounding sphere, tested first against obstacles and the other bodies; its spheres are placed and tested only
when that one touches. Obstacles are primitives in the planning frame: spheres, boxes, solid cylinders (cones are
tested as their cylinder) and planes (a body collides with a plane's sheet when one of its spheres crosses it, as
the exact checker's plane). Touching counts as a collision.

Motions (``motion_collides``): the states at most ``resolution`` apart per joint, the end first, then the middle,
the quarters and so on (a collision is usually found in a few checks).
"""
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from ..compiled import compiled_kernel
from ..model.tree_kernels import TreeTable, place_links

#: Obstacle kinds (``SphereTable.obstacle_kind``).
SPHERE, BOX, CYLINDER, PLANE = 0, 1, 2, 3


class SphereTable(NamedTuple):
    """A robot's spheres and a scene's obstacles for the kernels (indices into the model's link list); kernels take
    it as is or as the plain tuple of its arrays."""

    sphere_center: np.ndarray  # (S, 3) in its link's frame [m]
    sphere_radius: np.ndarray  # (S,) [m], padding included
    body_link: np.ndarray  # (B,) int64, the link a body moves with
    body_first: np.ndarray  # (B + 1,) int64, body b's spheres are rows body_first[b] .. body_first[b + 1] - 1
    body_center: np.ndarray  # (B, 3) bounding sphere of a body's spheres, in its link's frame [m]
    body_radius: np.ndarray  # (B,) [m]
    self_pairs: np.ndarray  # (P, 2) int64 body pairs to test
    obstacle_kind: np.ndarray  # (M,) int64, SPHERE ... PLANE
    T_obstacle_plan: np.ndarray  # (M, 3, 4) the planning frame in the obstacle's frame (a plane: its unit normal
    #                              in row 0, columns 0-2, and its offset d in row 0, column 3)
    obstacle_size: np.ndarray  # (M, 3) box half extents; sphere radius; cylinder radius and half length [m]
    obstacle_center: np.ndarray  # (M, 3) bounding sphere in the planning frame [m] (unused for a plane)
    obstacle_radius: np.ndarray  # (M,) [m]; -1 for a plane (unbounded)
    world_tested: np.ndarray  # (B, M) bool, which body-obstacle pairs to test


@compiled_kernel(inline="always")
def _apart(p, q, gap):
    """True when the points p and q (3-vectors) are more than ``gap`` apart."""
    return (p[0] - q[0]) ** 2 + (p[1] - q[1]) ** 2 + (p[2] - q[2]) ** 2 > gap * gap


@compiled_kernel(inline="always")
def _point_in_frame(T, p, out):
    for i in range(3):
        out[i] = T[i, 0] * p[0] + T[i, 1] * p[1] + T[i, 2] * p[2] + T[i, 3]


@compiled_kernel(inline="always")
def _sphere_hits_obstacle(p, r, kind, T, size, local):
    """True when the sphere (centre p in the planning frame, radius r) touches the obstacle."""
    if kind == PLANE:
        return abs(T[0, 0] * p[0] + T[0, 1] * p[1] + T[0, 2] * p[2] + T[0, 3]) <= r
    _point_in_frame(T, p, local)
    if kind == SPHERE:
        return local[0] ** 2 + local[1] ** 2 + local[2] ** 2 <= (r + size[0]) ** 2
    if kind == BOX:
        gap = 0.0
        for i in range(3):
            excess = abs(local[i]) - size[i]
            if excess > 0.0:
                gap += excess * excess
        return gap <= r * r
    radial = max(math.sqrt(local[0] ** 2 + local[1] ** 2) - size[0], 0.0)
    axial = max(abs(local[2]) - size[1], 0.0)
    return radial * radial + axial * axial <= r * r


@compiled_kernel(inline="always")
def _place_bodies(link_poses, table, work):
    """work.world_bodies[b]: every body bound's centre in the planning frame; its spheres not placed yet."""
    for b in range(table.body_link.shape[0]):
        _point_in_frame(link_poses[table.body_link[b]], table.body_center[b], work.world_bodies[b])
        work.placed[b] = False


@compiled_kernel(inline="always")
def _place_body_spheres(table, work, b):
    """work.world_spheres of body b's spheres, placed once per state (only bodies near something are placed)."""
    if work.placed[b]:
        return
    T = work.link_poses[table.body_link[b]]
    for s in range(table.body_first[b], table.body_first[b + 1]):
        _point_in_frame(T, table.sphere_center[s], work.world_spheres[s])
    work.placed[b] = True


@compiled_kernel(inline="always")
def _bodies_collide(table, a, b, work):
    world_spheres, world_bodies = work.world_spheres, work.world_bodies
    if _apart(world_bodies[a], world_bodies[b], table.body_radius[a] + table.body_radius[b]):
        return False
    _place_body_spheres(table, work, a)
    _place_body_spheres(table, work, b)
    for s in range(table.body_first[a], table.body_first[a + 1]):
        if _apart(world_spheres[s], world_bodies[b], table.sphere_radius[s] + table.body_radius[b]):
            continue
        for t in range(table.body_first[b], table.body_first[b + 1]):
            if not _apart(world_spheres[s], world_spheres[t], table.sphere_radius[s] + table.sphere_radius[t]):
                return True
    return False


@compiled_kernel(inline="always")
def _body_hits_obstacle(table, b, m, work):
    kind, T, size = table.obstacle_kind[m], table.T_obstacle_plan[m], table.obstacle_size[m]
    if table.obstacle_radius[m] >= 0.0 and _apart(work.world_bodies[b], table.obstacle_center[m],
                                                  table.body_radius[b] + table.obstacle_radius[m]):
        return False
    if not _sphere_hits_obstacle(work.world_bodies[b], table.body_radius[b], kind, T, size, work.local):
        return False
    _place_body_spheres(table, work, b)
    for s in range(table.body_first[b], table.body_first[b + 1]):
        if _sphere_hits_obstacle(work.world_spheres[s], table.sphere_radius[s], kind, T, size, work.local):
            return True
    return False


@compiled_kernel(inline="always")
def _place_state(q_group, indices, tree, table, work):
    """Place the state's links and body bounds: the group's values ``q_group`` at ``indices`` of ``work.q``."""
    for i in range(indices.shape[0]):
        work.q[indices[i]] = q_group[i]
    place_links(work.q, tree, work.link_poses)
    _place_bodies(work.link_poses, table, work)


class Workspace(NamedTuple):
    """Scratch arrays of one thread's checks (``workspace``)."""

    q: np.ndarray  # (V,) a full state vector
    link_poses: np.ndarray  # (L + 1, 4, 4)
    world_spheres: np.ndarray  # (S, 3)
    world_bodies: np.ndarray  # (B, 3)
    placed: np.ndarray  # (B,) bool, whether a body's world_spheres are placed for the current state
    local: np.ndarray  # (3,)
    self_hit: np.ndarray  # (P,) bool, unused by ``state_collides`` (its ``_touching`` stops at the first pair)
    world_hit: np.ndarray  # (B, M) bool, likewise


def workspace(base: np.ndarray, link_count: int, table: SphereTable) -> Workspace:
    """Scratch arrays for checks of states that keep ``base``'s values in the joints they do not set."""
    return Workspace(np.array(base, dtype=float), np.empty((link_count + 1, 4, 4)),
                     np.empty((len(table.sphere_radius), 3)), np.empty((len(table.body_radius), 3)),
                     np.zeros(len(table.body_radius), dtype=bool), np.empty(3),
                     np.zeros(len(table.self_pairs), dtype=bool), np.zeros(table.world_tested.shape, dtype=bool))


@compiled_kernel(inline="always")
def _touching(table, work, first, self_hit, world_hit):
    """Whether a pair of the placed state touches: with ``first``, True at the first such pair (``self_hit`` and
    ``world_hit`` left alone); otherwise every such pair marked in them (``self_hit[p]`` for ``table.self_pairs[p]``,
    ``world_hit[b, m]`` for body b and obstacle m)."""
    found = False
    for b in range(table.body_link.shape[0]):
        for m in range(table.obstacle_kind.shape[0]):
            if table.world_tested[b, m] and _body_hits_obstacle(table, b, m, work):
                if first:
                    return True
                world_hit[b, m] = found = True
    for p in range(table.self_pairs.shape[0]):
        if _bodies_collide(table, table.self_pairs[p, 0], table.self_pairs[p, 1], work):
            if first:
                return True
            self_hit[p] = found = True
    return found


@compiled_kernel
def state_collides(q_group, indices, tree, table, work):
    """True when the spheres of the state (the group's values ``q_group`` at ``indices`` of ``work.q``) touch an
    obstacle or each other (the ``self_pairs``). ``tree`` and ``table`` are the plain tuples of a ``TreeTable`` and
    a ``SphereTable``."""
    tree, table = TreeTable(*tree), SphereTable(*table)
    _place_state(q_group, indices, tree, table, work)
    return _touching(table, work, True, work.self_hit, work.world_hit)


@compiled_kernel
def colliding_pairs(q_group, indices, tree, table, work, self_hit, world_hit):
    """Mark every pair whose spheres touch in the state: ``self_hit[p]`` for ``table.self_pairs[p]``,
    ``world_hit[b, m]`` for body b and obstacle m (both left as they are elsewhere)."""
    tree, table = TreeTable(*tree), SphereTable(*table)
    _place_state(q_group, indices, tree, table, work)
    _touching(table, work, False, self_hit, world_hit)


@compiled_kernel
def motion_collides(q_from, q_to, resolution, indices, tree, table, work, between):
    """True when a state of the straight motion from ``q_from`` (not checked) to ``q_to`` collides, checked at
    most ``resolution`` apart per joint, ``q_to`` first, then coarse to fine. ``between`` (len(q_from),) is scratch."""
    largest = 0.0
    for i in range(q_from.shape[0]):
        largest = max(largest, abs(q_to[i] - q_from[i]))
    steps = max(1, int(math.ceil(largest / resolution - 1e-9)))
    if state_collides(q_to, indices, tree, table, work):
        return True
    stride = 1
    while 2 * stride < steps:
        stride *= 2
    while stride >= 1:
        k = stride
        while k < steps:
            if (k // stride) % 2 == 1 or 2 * stride >= steps:
                for i in range(q_from.shape[0]):
                    between[i] = q_from[i] + (q_to[i] - q_from[i]) * k / steps
                if state_collides(between, indices, tree, table, work):
                    return True
            k += stride
        stride //= 2
    return False
