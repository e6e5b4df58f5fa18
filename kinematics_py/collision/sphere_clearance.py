"""How far a placed state's margins could grow before its spheres touch (compiled, for ``planning.proof_blocks``).

``sphere_kernels.touching`` answers whether a state's spheres touch with the margins of ``Workspace.growth``;
``margin_scale`` answers by how much every margin could be scaled and still not touch: the largest factor F (at most
``cap``) such that no tested pair touches with each margin times F, from the pairs' clearances (a sphere's distance to
an obstacle, or two spheres' distance, less their radii). F > 1 is the same answer as ``touching``'s False. F <= 0 when
spheres touch with no margin (a pair whose margin is 0 then caps F at 0; others' negative clearance gives a negative
F); a pair whose margin is 0 and whose spheres do not touch does not limit it. A proof that finds a block free
sizes the next block by F (the clearance changes slowly along a path); bodies and pairs are culled as ``touching``
culls them, with the margins at the current F, so a state far from everything costs about what ``touching`` costs.
"""
from __future__ import annotations

import math

from ..compiled import FUSED_MULTIPLY_ADD, compiled_kernel
from .sphere_kernels import (
    BOX,
    CYLINDER,
    NODE,
    PLANE,
    SPHERE,
    SphereTable,
    near,
    obstacle_touch,
    place_spheres,
    spheres_reach_box,
    triangle_distance_squared,
)


@compiled_kernel(inline="always", fastmath=FUSED_MULTIPLY_ADD)
def obstacle_clearance(x, y, z, kind, T, size, m):
    """The distance [m] from the point (x, y, z in the planning frame) to obstacle m (0 inside it; not a NODE row)."""
    lx = T[m, 0, 0] * x + T[m, 0, 1] * y + T[m, 0, 2] * z + T[m, 0, 3]
    if kind == PLANE:
        return abs(lx)
    ly = T[m, 1, 0] * x + T[m, 1, 1] * y + T[m, 1, 2] * z + T[m, 1, 3]
    lz = T[m, 2, 0] * x + T[m, 2, 1] * y + T[m, 2, 2] * z + T[m, 2, 3]
    if kind == SPHERE:
        return max(math.sqrt(lx * lx + ly * ly + lz * lz) - size[m, 0], 0.0)
    if kind == BOX:
        ex, ey, ez = max(abs(lx) - size[m, 0], 0.0), max(abs(ly) - size[m, 1], 0.0), max(abs(lz) - size[m, 2], 0.0)
        return math.sqrt(ex * ex + ey * ey + ez * ez)
    if kind == CYLINDER:
        radial = max(math.sqrt(lx * lx + ly * ly) - size[m, 0], 0.0)
        axial = max(abs(lz) - size[m, 1], 0.0)
        return math.sqrt(radial * radial + axial * axial)
    return math.sqrt(triangle_distance_squared(x, y, z, T, m))  # (a call of its own, as ``obstacle_touch``'s)


@compiled_kernel(inline="always", fastmath=FUSED_MULTIPLY_ADD)
def _lowered(scale, clearance, margin):
    """``scale`` lowered so that a pair ``clearance`` apart (beyond its radii) does not touch with ``margin`` times it
    (0 for a margin of 0 when it touches)."""
    if clearance > margin * scale:
        return scale
    return clearance / margin if margin > 0.0 else 0.0


@compiled_kernel(inline="always", fastmath=FUSED_MULTIPLY_ADD)
def margin_scale(table, work, cap, floor):
    """The largest F <= ``cap`` (see the module docstring) for the placed state (``place_chain``), its margins
    (``work.growth``) finite and not negative; once F <= ``floor`` it returns at once, an upper bound of F then."""
    table = SphereTable(*table)  # (its arrays and the workspace's as locals: numba counts references to each array
    #                               an inlined helper is given, which made this 13 times slower)
    kinds, T_plan, size, tested = table.obstacle_kind, table.T_obstacle_plan, table.obstacle_size, table.world_tested
    lower, upper, pairs, skip = table.obstacle_lower, table.obstacle_upper, table.self_pairs, table.obstacle_skip
    centers, radius, body_link, body_first, body_radius = table.sphere_center, table.sphere_radius, table.body_link, \
        table.body_first, table.body_radius
    growth, placed, poses, spheres, world_bodies = work.growth, work.placed, work.link_poses, work.world_spheres, \
        work.world_bodies
    scale, bodies = cap, body_link.shape[0]
    for b in range(bodies):
        x, y, z = world_bodies[b, 0], world_bodies[b, 1], world_bodies[b, 2]
        skipped_to = 0  # (as ``touching``'s loop)
        for m in range(kinds.shape[0]):
            if m < skipped_to:
                continue
            bound = body_radius[b] + growth[b] * scale
            if not tested[b, m] or x < lower[m, 0] - bound or x > upper[m, 0] + bound or y < lower[m, 1] - bound or \
                    y > upper[m, 1] + bound or z < lower[m, 2] - bound or z > upper[m, 2] + bound:
                skipped_to = skip[m]  # (the bound only shrinks: what it misses here it misses later)
                continue
            if kinds[m] != NODE and not obstacle_touch(x, y, z, bound, kinds[m], T_plan, size, m):
                continue
            if not placed[b]:
                place_spheres(poses[body_link[b]], centers, body_first[b], body_first[b + 1], spheres)
                placed[b] = True
            if kinds[m] == NODE:  # (as ``touching``'s: the spheres' margins only shrink too)
                if not spheres_reach_box(spheres, radius, body_first[b], body_first[b + 1], growth[b] * scale, lower,
                                         upper, m):
                    skipped_to = skip[m]
                continue
            for s in range(body_first[b], body_first[b + 1]):
                x_s, y_s, z_s = spheres[s, 0], spheres[s, 1], spheres[s, 2]
                if obstacle_touch(x_s, y_s, z_s, radius[s] + growth[b] * scale, kinds[m], T_plan, size, m):
                    clearance = obstacle_clearance(x_s, y_s, z_s, kinds[m], T_plan, size, m) - radius[s]
                    scale = _lowered(scale, clearance, growth[b])
            if scale <= floor:
                return scale
    for p in range(pairs.shape[0]):
        a, b = pairs[p, 0], pairs[p, 1]
        gap = growth[bodies + p]
        if not near(world_bodies, a, world_bodies, b, body_radius[a] + body_radius[b] + gap * scale):
            continue
        if not placed[a]:
            place_spheres(poses[body_link[a]], centers, body_first[a], body_first[a + 1], spheres)
            placed[a] = True
        for s in range(body_first[a], body_first[a + 1]):
            if not near(spheres, s, world_bodies, b, radius[s] + body_radius[b] + gap * scale):
                continue
            if not placed[b]:
                place_spheres(poses[body_link[b]], centers, body_first[b], body_first[b + 1], spheres)
                placed[b] = True
            for t in range(body_first[b], body_first[b + 1]):
                if near(spheres, s, spheres, t, radius[s] + radius[t] + gap * scale):
                    dx, dy, dz = spheres[s, 0] - spheres[t, 0], spheres[s, 1] - spheres[t, 1], \
                        spheres[s, 2] - spheres[t, 2]
                    scale = _lowered(scale, math.sqrt(dx * dx + dy * dy + dz * dz) - radius[s] - radius[t], gap)
        if scale <= floor:
            return scale
    return scale
