"""A straight motion's states checked on the spheres LANES at a time, in vector instructions: ``motion_collides``, the
answer of ``sphere_kernels.chain_motion_collides`` for the search's motions.

Each lane holds one state of the motion (the states at most ``resolution`` apart per joint, ``model.joint_steps``). The
first pass holds the end and the states ``stride`` steps apart before it (stride: the steps over LANES, rounded up),
spread over the whole motion; each later pass moves every lane one step towards the start, until every state between the
ends has been checked or one touches. A pass places the chain's frames in all lanes at once (each revolute frame's
cosine and sine turned from lane to lane and from pass to pass by angle addition: three of libm's cosines and sines a
frame for the whole motion), then tests each body: its bounding spheres' box over the lanes against an obstacle's
axis-aligned bounds (one test for the pass), then each lane's bound against them, then its spheres; self pairs as
``sphere_kernels.touching`` tests them: bound to bound, then each sphere of one against the other's bound, and each
sphere that reaches it against every sphere of the other (without that cull, the self pairs were three quarters of a
free motion's check). A lane whose state is beyond the start (the last passes of a motion whose steps are not a
multiple of LANES) is masked out.

The lanes' loops become vector instructions only when LLVM knows the arrays apart: the kernels are compiled with
``noalias`` (``compiled.compiled_kernel``), and each row of a frame's pose is placed by a call of its own
(``_place_lanes_row``: its parent's row and its own are two arguments). Obstacle rows of world meshes and octrees
(``sphere_kernels.NODE`` and ``TRIANGLE``) are left to the scalar kernel: ``lanes_scratch`` is empty for such a table
and ``motion_collides`` then calls ``chain_motion_collides``. The same states, the same spheres and margins
(``Workspace.growth``): the same answers (tested against the scalar kernel; the cosines and sines may differ in their
last bits).
"""
from __future__ import annotations

import math

import numpy as np

from ..compiled import FUSED_MULTIPLY_ADD, compiled_kernel
from ..model.joint_steps import straight_steps
from ..model.tree_kernels import PRISMATIC
from .sphere_kernels import (
    BOX,
    CYLINDER,
    NODE,
    SPHERE,
    TRIANGLE,
    SphereChain,
    SphereTable,
    chain_inside_collides,
    chain_motion_collides,
)

#: States checked at once: eight doubles fill one AVX-512 register (two AVX2 registers).
LANES = 8


@compiled_kernel(fastmath=FUSED_MULTIPLY_ADD)
def lanes_scratch(chain, table):
    """Scratch of ``motion_collides`` for a chain's frames (``sphere_kernels.sphere_chain``) and its table: (the
    frames' poses' rows 0-2 (F, 12, LANES), their cosines and sines (F, 2, LANES), joint values (F, LANES), the
    bodies' bound centres (B, 3, LANES), the spheres' centres (S, 3, LANES), which bodies' spheres are placed (B,),
    the active lanes (LANES,), per frame its value at the start, its change, the cosine and sine of one step back
    (F, 4)); every array empty when the table has rows the lanes do not test (a world mesh's or an octree's)."""
    chain, table = SphereChain(*chain), SphereTable(*table)
    frames, bodies, spheres = chain.parent.shape[0], table.body_link.shape[0], table.sphere_radius.shape[0]
    for m in range(table.obstacle_kind.shape[0]):
        if table.obstacle_kind[m] == NODE or table.obstacle_kind[m] == TRIANGLE:
            frames = bodies = spheres = 0
            break
    poses = np.zeros((frames, 12, LANES))
    for l in range(LANES):  # (frame 0, the root's: the identity in every lane)
        if frames:
            poses[0, 0, l] = poses[0, 5, l] = poses[0, 10, l] = 1.0
    return (poses, np.empty((frames, 2, LANES)), np.zeros((frames, LANES)), np.empty((bodies, 3, LANES)),
            np.empty((spheres, 3, LANES)), np.zeros(bodies, dtype=np.bool_), np.empty(LANES, dtype=np.bool_),
            np.empty((frames, 4)))


@compiled_kernel(inline="always", fastmath=FUSED_MULTIPLY_ADD)
def motion_collides(q_from, q_to, resolution, chain, table, work, scratch, lanes, check_end):
    """True when a state of the straight motion from ``q_from`` (not checked) to ``q_to`` (checked when
    ``check_end``) touches: by ``lanes_motion_collides`` when ``lanes`` (``lanes_scratch``) is not empty, else by
    ``sphere_kernels.chain_motion_collides`` (``chain_inside_collides`` without the end); ``scratch``:
    ``sphere_kernels.motion_scratch``."""
    if lanes[0].shape[0] > 0:
        return lanes_motion_collides(q_from, q_to, resolution, chain, table, work.growth, lanes)
    if check_end:
        return chain_motion_collides(q_from, q_to, resolution, chain, table, work, scratch)
    return chain_inside_collides(q_from, q_to, resolution, chain, table, work, scratch)


@compiled_kernel(fastmath=FUSED_MULTIPLY_ADD, noalias=True)
def _place_lanes_row(p0, p1, p2, p3, o0, o1, o2, o3, cosine, sine, value, k0, k1, k2, k3, k4, k5, k6, k7, k8, k9,
                     k10, k11):
    """One row (o0-o3: 4 values in every lane) of a frame's pose (``sphere_kernels._place_frame``'s), from the same
    row of its parent's (p0-p3), its joint's ``cosine`` and ``sine`` in each lane (a revolute joint), or its
    ``value`` (a prismatic one: ``value`` not empty), its constant offset (3, 4) k0-k11 row by row."""
    for l in range(LANES):
        a0, a1, a2 = p0[l], p1[l], p2[l]
        x = a0 * k0 + a1 * k4 + a2 * k8
        y = a0 * k1 + a1 * k5 + a2 * k9
        z = a0 * k2 + a1 * k6 + a2 * k10
        t = a0 * k3 + a1 * k7 + a2 * k11 + p3[l]
        c, s = cosine[l], sine[l]
        o0[l] = c * x + s * y
        o1[l] = c * y - s * x
        o2[l] = z
        o3[l] = t
    if value.shape[0] > 0:
        for l in range(LANES):
            o3[l] += o2[l] * value[l]


@compiled_kernel(inline="always", fastmath=FUSED_MULTIPLY_ADD)
def _place_lanes_frame(parent_rows, rows, cosine, sine, value, constant):
    """rows <- a frame's pose in every lane (rows 0-2, 4 values each), from its parent's ``parent_rows``
    (``_place_lanes_row``)."""
    k = constant
    for i in range(3):
        _place_lanes_row(parent_rows[4 * i], parent_rows[4 * i + 1], parent_rows[4 * i + 2], parent_rows[4 * i + 3],
                         rows[4 * i], rows[4 * i + 1], rows[4 * i + 2], rows[4 * i + 3], cosine, sine, value,
                         k[0, 0], k[0, 1], k[0, 2], k[0, 3], k[1, 0], k[1, 1], k[1, 2], k[1, 3], k[2, 0], k[2, 1],
                         k[2, 2], k[2, 3])


@compiled_kernel(inline="always", fastmath=FUSED_MULTIPLY_ADD)
def _place_lanes_points(rows, centers, first, last, out):
    """out[first:last] <- the points ``centers[first:last]`` (in a frame) placed in every lane by its ``rows``."""
    for s in range(first, last):
        x, y, z = centers[s, 0], centers[s, 1], centers[s, 2]
        for i in range(3):
            for l in range(LANES):
                out[s, i, l] = rows[4 * i, l] * x + rows[4 * i + 1, l] * y + rows[4 * i + 2, l] * z + \
                    rows[4 * i + 3, l]


@compiled_kernel(inline="always", fastmath=FUSED_MULTIPLY_ADD)
def _lanes_near(points, i, others, j, reach, active):
    """Whether point i of ``points`` and point j of ``others`` (n, 3, LANES) are at most ``reach`` apart in an active
    lane."""
    near = False
    for l in range(LANES):
        dx, dy, dz = points[i, 0, l] - others[j, 0, l], points[i, 1, l] - others[j, 1, l], \
            points[i, 2, l] - others[j, 2, l]
        near |= (dx * dx + dy * dy + dz * dz <= reach * reach) & active[l]
    return near


@compiled_kernel(fastmath=FUSED_MULTIPLY_ADD, noalias=True)
def _place_lanes_frames(chain, steps, stride, back, motion, turns, values, poses):
    """The chain's frames' poses in the lanes of pass ``back`` (``lanes_motion_collides``): each revolute joint's
    cosine and sine turned from the pass before (from lane to lane in the first), each prismatic joint's value."""
    chain = SphereChain(*chain)
    for f in range(1, chain.parent.shape[0]):
        prismatic = chain.motion[f] == PRISMATIC
        if prismatic:
            for l in range(LANES):
                values[f, l] = motion[f, 0] + motion[f, 1] * (steps - back - l * stride) / steps
                turns[f, 0, l], turns[f, 1, l] = 1.0, 0.0
        elif back == 0:
            turns[f, 0, 0], turns[f, 1, 0] = math.cos(motion[f, 0] + motion[f, 1]), \
                math.sin(motion[f, 0] + motion[f, 1])
            apart = -motion[f, 1] * stride / steps
            c_apart, s_apart = math.cos(apart), math.sin(apart)
            for l in range(1, LANES):
                c, s = turns[f, 0, l - 1], turns[f, 1, l - 1]
                turns[f, 0, l], turns[f, 1, l] = c * c_apart - s * s_apart, s * c_apart + c * s_apart
        else:
            for l in range(LANES):
                c, s = turns[f, 0, l], turns[f, 1, l]
                turns[f, 0, l], turns[f, 1, l] = c * motion[f, 2] - s * motion[f, 3], \
                    s * motion[f, 2] + c * motion[f, 3]
        _place_lanes_frame(poses[chain.parent[f]], poses[f], turns[f, 0], turns[f, 1],
                           values[f] if prismatic else values[f, :0], chain.constant[f])


@compiled_kernel(fastmath=FUSED_MULTIPLY_ADD, noalias=True)
def lanes_motion_collides(q_from, q_to, resolution, chain, table, growth, lanes):
    """True when a state of the straight motion from ``q_from`` (not checked) to ``q_to`` touches (the module's
    docstring), with the margins ``growth`` (``Workspace.growth``); ``lanes``: ``lanes_scratch`` (not empty)."""
    chain, table = SphereChain(*chain), SphereTable(*table)
    poses, turns, values, bounds, spheres, placed, active, motion = lanes
    centers, radius, body_link, body_first = table.sphere_center, table.sphere_radius, table.body_link, table.body_first
    body_radius, pairs, kinds, T = table.body_radius, table.self_pairs, table.obstacle_kind, table.T_obstacle_plan
    size, lower, upper, tested = table.obstacle_size, table.obstacle_lower, table.obstacle_upper, table.world_tested
    frames, bodies = chain.parent.shape[0], body_link.shape[0]
    steps = straight_steps(q_from, q_to, resolution)
    stride = (steps + LANES - 1) // LANES
    for f in range(1, frames):
        motion[f, 0] = chain.multiplier[f] * q_from[chain.variable[f]] + chain.offset[f]
        motion[f, 1] = chain.multiplier[f] * (q_to[chain.variable[f]] - q_from[chain.variable[f]])
        motion[f, 2], motion[f, 3] = math.cos(motion[f, 1] / steps), -math.sin(motion[f, 1] / steps)
    for back in range(stride):  # (lane l holds state steps - back - l * stride)
        for l in range(LANES):
            active[l] = steps - back - l * stride >= 1
        _place_lanes_frames(chain, steps, stride, back, motion, turns, values, poses)
        for b in range(bodies):
            _place_lanes_points(poses[body_link[b]], table.body_center, b, b + 1, bounds)
            placed[b] = False
        for b in range(bodies):
            bound = body_radius[b] + growth[b]
            low_x, low_y, low_z = np.inf, np.inf, np.inf
            high_x, high_y, high_z = -np.inf, -np.inf, -np.inf
            for l in range(LANES):
                low_x, high_x = min(low_x, bounds[b, 0, l]), max(high_x, bounds[b, 0, l])
                low_y, high_y = min(low_y, bounds[b, 1, l]), max(high_y, bounds[b, 1, l])
                low_z, high_z = min(low_z, bounds[b, 2, l]), max(high_z, bounds[b, 2, l])
            for m in range(kinds.shape[0]):
                if not tested[b, m] or high_x < lower[m, 0] - bound or low_x > upper[m, 0] + bound or \
                        high_y < lower[m, 1] - bound or low_y > upper[m, 1] + bound or \
                        high_z < lower[m, 2] - bound or low_z > upper[m, 2] + bound:
                    continue
                inside = False
                for l in range(LANES):
                    x, y, z = bounds[b, 0, l], bounds[b, 1, l], bounds[b, 2, l]
                    inside |= (x >= lower[m, 0] - bound) & (x <= upper[m, 0] + bound) & \
                        (y >= lower[m, 1] - bound) & (y <= upper[m, 1] + bound) & \
                        (z >= lower[m, 2] - bound) & (z <= upper[m, 2] + bound) & active[l]
                if not inside:
                    continue
                if not placed[b]:
                    _place_lanes_points(poses[body_link[b]], centers, body_first[b], body_first[b + 1], spheres)
                    placed[b] = True
                kind = kinds[m]
                for s in range(body_first[b], body_first[b + 1]):
                    r = radius[s] + growth[b]
                    hit = False
                    for l in range(LANES):  # (``sphere_kernels.obstacle_touch``'s tests, in every lane)
                        x, y, z = spheres[s, 0, l], spheres[s, 1, l], spheres[s, 2, l]
                        lx = T[m, 0, 0] * x + T[m, 0, 1] * y + T[m, 0, 2] * z + T[m, 0, 3]
                        ly = T[m, 1, 0] * x + T[m, 1, 1] * y + T[m, 1, 2] * z + T[m, 1, 3]
                        lz = T[m, 2, 0] * x + T[m, 2, 1] * y + T[m, 2, 2] * z + T[m, 2, 3]
                        if kind == BOX:
                            ex, ey = max(abs(lx) - size[m, 0], 0.0), max(abs(ly) - size[m, 1], 0.0)
                            ez = max(abs(lz) - size[m, 2], 0.0)
                            hit |= (ex * ex + ey * ey + ez * ez <= r * r) & active[l]
                        elif kind == SPHERE:
                            reach = r + size[m, 0]
                            hit |= (lx * lx + ly * ly + lz * lz <= reach * reach) & active[l]
                        elif kind == CYLINDER:
                            radial, axial = max(math.sqrt(lx * lx + ly * ly) - size[m, 0], 0.0), \
                                max(abs(lz) - size[m, 1], 0.0)
                            hit |= (radial * radial + axial * axial <= r * r) & active[l]
                        else:
                            hit |= (abs(lx) <= r) & active[l]
                    if hit:
                        return True
        for p in range(pairs.shape[0]):
            a, b = pairs[p, 0], pairs[p, 1]
            gap = growth[bodies + p]
            reach = body_radius[a] + body_radius[b] + gap
            if not _lanes_near(bounds, a, bounds, b, reach, active):
                continue
            if not placed[a]:
                _place_lanes_points(poses[body_link[a]], centers, body_first[a], body_first[a + 1], spheres)
                placed[a] = True
            for s in range(body_first[a], body_first[a + 1]):
                if not _lanes_near(spheres, s, bounds, b, radius[s] + body_radius[b] + gap, active):
                    continue
                if not placed[b]:  # (only once a sphere of a reaches b's bound)
                    _place_lanes_points(poses[body_link[b]], centers, body_first[b], body_first[b + 1], spheres)
                    placed[b] = True
                for t in range(body_first[b], body_first[b + 1]):
                    if _lanes_near(spheres, s, spheres, t, radius[s] + radius[t] + gap, active):
                        return True
    return False
