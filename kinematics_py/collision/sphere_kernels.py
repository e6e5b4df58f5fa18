"""Compiled (numba) collision checks of a robot approximated by spheres: forward kinematics and sphere tests in one
call, for one state or the states of a straight joint motion (stopping at the first collision).

The robot's spheres contain its collision geometry (``spheres``), so a state these kernels call free is free for the
exact checker too, for the pairs they test (``sphere_world`` decides which). Each body (a link with geometry) has a
bounding sphere, tested first against obstacles and the other bodies; its spheres are placed and tested only when that
one touches. Obstacles are primitives in the planning frame: spheres, boxes, solid cylinders (cones are tested as their
cylinder) and planes (a body collides with a plane's sheet when one of its spheres crosses it, as the exact checker's
plane). Touching counts as a collision. ``Workspace.growth`` is a clearance margin (``sphere_proof``), zero for the
search: its first B entries grow every sphere of a body against the obstacles, entry B + p the gap a self pair p's
spheres must keep (``sphere_proof.growth_reach``: their distance changes only with the joints that move one of them
and not the other).

Speed (about 12 -> 2 us per state for the Panda among boxes): the checks of a state are one inlined loop over arrays
read once from the tables (a numba call that takes these tuples of arrays costs about 0.2 us in reference counts, as
much as a dozen sphere tests), and the links are placed without allocating. A body's spheres are placed only when they
are tested: against an obstacle once its bound touches it; in a self pair, the first body's once the two bounds meet,
the second's once a sphere of the first reaches its bound (the Panda's fifth link and its fingers, 6 and 16 spheres:
their bounds meet in about a fifth of the states along the bench's paths, a sphere of one reaches the other's bound in
fewer). The kernels are compiled with fused multiply-adds (``compiled.FUSED_MULTIPLY_ADD``).

Motions (``chain_motion_collides``): the states at most ``resolution`` apart per joint, the end first, then the middle,
the quarters and so on (a collision is usually found in a few checks); along a pass, each frame's cosine and sine
follow from the state before by angle addition (the bench's Panda problems: RRT-Connect and the shortcut 10 % faster).

A group's chain of frames (``sphere_chain``, ``place_chain``, ``chain_collides``, ``chain_motion_collides``,
``chain_states_free``): the same checks with only the frames the group's joints move placed, each joint's axis turned to
the frame's z axis, the links between them (fixed joints, joints the group does not move) folded into constant offsets
of the frames and the spheres (Panda among boxes: FK 0.94 -> 0.24 us a state, the check 1.49 -> 0.72 us; same answers).
"""
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from ..compiled import FUSED_MULTIPLY_ADD, compiled_kernel
from ..geometry.kernels import compose_into, set_identity
from ..model.joint_steps import straight_steps
from ..model.tree_kernels import FIXED, PRISMATIC, REVOLUTE, TreeTable, joint_motion_into, tree_link_poses

#: Obstacle kinds (``SphereTable.obstacle_kind``): primitives, a world mesh's triangle (its corners in the rows of
#: ``T_obstacle_plan``), and NODE: a row holding only the bounds of the rows after it up to its skip (a world mesh's
#: bounding-box tree, ``sphere_world``).
SPHERE, BOX, CYLINDER, PLANE, TRIANGLE, NODE = 0, 1, 2, 3, 4, 5
#: A pass of a motion's check over more states than this places them by the angle-addition recurrence
#: (``_first_touching_inside``); fewer pay the pass's own sines and cosines.
RECURRENCE_FROM = 2


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
    obstacle_lower: np.ndarray  # (M, 3) axis-aligned bounds in the planning frame [m] (-inf and inf for a plane):
    obstacle_upper: np.ndarray  # (M, 3) a body's bound is tested against them first (a long bar's bounding sphere
    #                             culls little: a cage's state 658 -> 479 ns, a shelf's 475 -> 427)
    world_tested: np.ndarray  # (B, M) bool, which body-obstacle pairs to test
    obstacle_skip: np.ndarray  # (M,) int64, the row after m's subtree: where a bound that misses row m's bounds (or a
    #                            pair not tested there) goes on; m + 1 but for a NODE row (depth-first order)


@compiled_kernel(inline="always", fastmath=FUSED_MULTIPLY_ADD)
def _segment_distance_squared(x, y, z, T, m, i, j):
    """The squared distance from the point to the segment between corners i and j of triangle row m."""
    dx, dy, dz = T[m, j, 0] - T[m, i, 0], T[m, j, 1] - T[m, i, 1], T[m, j, 2] - T[m, i, 2]
    px, py, pz = x - T[m, i, 0], y - T[m, i, 1], z - T[m, i, 2]
    length = dx * dx + dy * dy + dz * dz
    t = min(max((px * dx + py * dy + pz * dz) / length, 0.0), 1.0) if length > 0.0 else 0.0
    ex, ey, ez = px - t * dx, py - t * dy, pz - t * dz
    return ex * ex + ey * ey + ez * ez


#: A triangle whose corners' cross product is at most this share of its two edges' lengths' product (squared) is
#: taken as its edges (``triangle_distance_squared``): a segment or a point, or so thin that its face's normal is
#: round-off.
FLAT_TRIANGLE = 1e-24


@compiled_kernel(fastmath=FUSED_MULTIPLY_ADD)
def triangle_distance_squared(x, y, z, T, m):
    """The squared distance from the point (x, y, z in the planning frame) to triangle row m (its corners a, b, c in
    rows 0-2 of ``T[m]``): to its face where the point's projection falls inside it (on the inner side of each
    edge), else to the nearest of its edges (a flat triangle: FLAT_TRIANGLE)."""
    abx, aby, abz = T[m, 1, 0] - T[m, 0, 0], T[m, 1, 1] - T[m, 0, 1], T[m, 1, 2] - T[m, 0, 2]
    acx, acy, acz = T[m, 2, 0] - T[m, 0, 0], T[m, 2, 1] - T[m, 0, 1], T[m, 2, 2] - T[m, 0, 2]
    nx, ny, nz = aby * acz - abz * acy, abz * acx - abx * acz, abx * acy - aby * acx
    normal = nx * nx + ny * ny + nz * nz
    if normal > FLAT_TRIANGLE * (abx * abx + aby * aby + abz * abz) * (acx * acx + acy * acy + acz * acz):
        inside = True
        for i in range(3):  # the point on the inner side of edge i -> i + 1: (edge x (point - corner i)) . normal
            j = (i + 1) % 3
            ex, ey, ez = T[m, j, 0] - T[m, i, 0], T[m, j, 1] - T[m, i, 1], T[m, j, 2] - T[m, i, 2]
            px, py, pz = x - T[m, i, 0], y - T[m, i, 1], z - T[m, i, 2]
            if (ey * pz - ez * py) * nx + (ez * px - ex * pz) * ny + (ex * py - ey * px) * nz < 0.0:
                inside = False
                break
        if inside:
            height = (x - T[m, 0, 0]) * nx + (y - T[m, 0, 1]) * ny + (z - T[m, 0, 2]) * nz
            return height * height / normal
    return min(_segment_distance_squared(x, y, z, T, m, 0, 1), _segment_distance_squared(x, y, z, T, m, 1, 2),
               _segment_distance_squared(x, y, z, T, m, 2, 0))


@compiled_kernel(inline="always", fastmath=FUSED_MULTIPLY_ADD)
def obstacle_touch(x, y, z, r, kind, T, size, m):
    """True when the sphere (centre x, y, z in the planning frame, radius r) touches obstacle m (not a NODE row).
    A triangle's test is a call of its own (inlined here, it made the primitives' tests slower: the Panda bench's p90
    8-13 % longer; called, 3-7 %)."""
    lx = T[m, 0, 0] * x + T[m, 0, 1] * y + T[m, 0, 2] * z + T[m, 0, 3]
    if kind == PLANE:
        return abs(lx) <= r
    ly = T[m, 1, 0] * x + T[m, 1, 1] * y + T[m, 1, 2] * z + T[m, 1, 3]
    lz = T[m, 2, 0] * x + T[m, 2, 1] * y + T[m, 2, 2] * z + T[m, 2, 3]
    if kind == SPHERE:
        reach = r + size[m, 0]
        return lx * lx + ly * ly + lz * lz <= reach * reach
    if kind == BOX:
        ex, ey, ez = max(abs(lx) - size[m, 0], 0.0), max(abs(ly) - size[m, 1], 0.0), max(abs(lz) - size[m, 2], 0.0)
        return ex * ex + ey * ey + ez * ez <= r * r
    if kind == CYLINDER:
        radial = max(math.sqrt(lx * lx + ly * ly) - size[m, 0], 0.0)
        axial = max(abs(lz) - size[m, 1], 0.0)
        return radial * radial + axial * axial <= r * r
    return triangle_distance_squared(x, y, z, T, m) <= r * r


@compiled_kernel(inline="always", fastmath=FUSED_MULTIPLY_ADD)
def near(p, i, q, j, reach):
    """True when p[i] and q[j] (rows of (n, 3) arrays) are at most ``reach`` apart."""
    dx, dy, dz = p[i, 0] - q[j, 0], p[i, 1] - q[j, 1], p[i, 2] - q[j, 2]
    return dx * dx + dy * dy + dz * dz <= reach * reach


@compiled_kernel(inline="always", fastmath=FUSED_MULTIPLY_ADD)
def place_spheres(T, centers, first, last, out):
    """out[first:last] <- T (4x4) applied to centers[first:last]."""
    for s in range(first, last):
        x, y, z = centers[s, 0], centers[s, 1], centers[s, 2]
        for k in range(3):
            out[s, k] = T[k, 0] * x + T[k, 1] * y + T[k, 2] * z + T[k, 3]


@compiled_kernel(inline="always", fastmath=FUSED_MULTIPLY_ADD)
def spheres_reach_box(spheres, radius, first, last, grow, lower, upper, m):
    """Whether one of the placed spheres[first:last] (radii ``radius`` + ``grow``) reaches into the axis-aligned
    box of row m's bounds (``lower[m]``, ``upper[m]``): where none does, nothing under a NODE row can touch them."""
    for s in range(first, last):
        r = radius[s] + grow
        if lower[m, 0] - r <= spheres[s, 0] <= upper[m, 0] + r and lower[m, 1] - r <= spheres[s, 1] <= \
                upper[m, 1] + r and lower[m, 2] - r <= spheres[s, 2] <= upper[m, 2] + r:
            return True
    return False


@compiled_kernel(inline="always", fastmath=FUSED_MULTIPLY_ADD)
def _compose_rows(poses, a, B, out):
    """poses[out] <- poses[a] @ B (rigid 4x4 transforms; B a 4x4 array)."""
    for i in range(3):
        a0, a1, a2 = poses[a, i, 0], poses[a, i, 1], poses[a, i, 2]
        for j in range(3):
            poses[out, i, j] = a0 * B[0, j] + a1 * B[1, j] + a2 * B[2, j]
        poses[out, i, 3] = a0 * B[0, 3] + a1 * B[1, 3] + a2 * B[2, 3] + poses[a, i, 3]


@compiled_kernel(inline="always", fastmath=FUSED_MULTIPLY_ADD)
def _place_links(q, tree, poses, scratch):
    """poses[link] <- T_root_link of every link (``model.tree_kernels.place_links`` without allocating: ``scratch``
    (2, 4, 4); only rows 0-2 of each pose are written: the last row must be 0 0 0 1 already)."""
    tree = TreeTable(*tree)
    parent, child, motion, T_joint = tree.parent_link, tree.child_link, tree.motion, tree.T_parent_joint
    joint, moved = scratch[0], scratch[1]
    set_identity(poses[0])
    for k in range(parent.shape[0]):
        if motion[k] == FIXED:
            _compose_rows(poses, parent[k], T_joint[k], child[k])
            continue
        joint_motion_into(motion[k], tree.axes[k], q, tree.first_variable[k], tree.multiplier[k], tree.offset[k],
                          moved)
        compose_into(T_joint[k], moved, joint)
        _compose_rows(poses, parent[k], joint, child[k])


@compiled_kernel(inline="always", fastmath=FUSED_MULTIPLY_ADD)
def place_state(q_group, indices, tree, table, work):
    """Place the state's links and body bounds (the group's values ``q_group`` at ``indices`` of ``work.q``); no
    body's spheres placed yet."""
    table = SphereTable(*table)
    for i in range(indices.shape[0]):
        work.q[indices[i]] = q_group[i]
    _place_links(work.q, tree, work.link_poses, work.scratch)
    body_link, placed, poses = table.body_link, work.placed, work.link_poses
    for b in range(body_link.shape[0]):
        place_spheres(poses[body_link[b]], table.body_center, b, b + 1, work.world_bodies)
        placed[b] = False


@compiled_kernel(inline="always", fastmath=FUSED_MULTIPLY_ADD)
def touching(table, work, first, self_hit, world_hit):
    """Whether a pair of the placed state touches (with the margins of ``work.growth``: ``Workspace``): with
    ``first``, True at the first such pair (``self_hit`` and ``world_hit`` left alone); otherwise every such pair
    marked in them (``self_hit[p]`` for ``table.self_pairs[p]``, ``world_hit[b, m]`` for body b and obstacle m)."""
    table = SphereTable(*table)
    centers, radius, body_link, body_first = table.sphere_center, table.sphere_radius, table.body_link, table.body_first
    body_radius, pairs, kinds, T_plan = table.body_radius, table.self_pairs, table.obstacle_kind, table.T_obstacle_plan
    size, lower, upper, tested = table.obstacle_size, table.obstacle_lower, table.obstacle_upper, table.world_tested
    skip = table.obstacle_skip
    poses, spheres, world_bodies, placed, growth = work.link_poses, work.world_spheres, work.world_bodies, \
        work.placed, work.growth
    found = False
    bodies = body_link.shape[0]
    for b in range(bodies):
        bound = body_radius[b] + growth[b]
        x, y, z = world_bodies[b, 0], world_bodies[b, 1], world_bodies[b, 2]
        skipped_to = 0  # (rows before it are under a NODE row missed: a for loop, as fast as without the tree)
        for m in range(kinds.shape[0]):
            if m < skipped_to:
                continue
            if not tested[b, m] or x < lower[m, 0] - bound or x > upper[m, 0] + bound or y < lower[m, 1] - bound or \
                    y > upper[m, 1] + bound or z < lower[m, 2] - bound or z > upper[m, 2] + bound:
                skipped_to = skip[m]
                continue
            if kinds[m] != NODE and not obstacle_touch(x, y, z, bound, kinds[m], T_plan, size, m):
                continue
            if not placed[b]:
                place_spheres(poses[body_link[b]], centers, body_first[b], body_first[b + 1], spheres)
                placed[b] = True
            if kinds[m] == NODE:  # (the body's bound reaches its box: its rows are skipped when no sphere does)
                if not spheres_reach_box(spheres, radius, body_first[b], body_first[b + 1], growth[b], lower, upper,
                                         m):
                    skipped_to = skip[m]
                continue
            for s in range(body_first[b], body_first[b + 1]):
                if obstacle_touch(spheres[s, 0], spheres[s, 1], spheres[s, 2], radius[s] + growth[b], kinds[m],
                                   T_plan, size, m):
                    if first:
                        return True
                    world_hit[b, m] = found = True
                    break
    for p in range(pairs.shape[0]):
        a, b = pairs[p, 0], pairs[p, 1]
        gap = growth[bodies + p]
        if not near(world_bodies, a, world_bodies, b, body_radius[a] + body_radius[b] + gap):
            continue
        if not placed[a]:
            place_spheres(poses[body_link[a]], centers, body_first[a], body_first[a + 1], spheres)
            placed[a] = True
        hit = False
        for s in range(body_first[a], body_first[a + 1]):
            r = radius[s] + gap
            if not near(spheres, s, world_bodies, b, r + body_radius[b]):
                continue
            if not placed[b]:  # (only once a sphere of a reaches b's bound: most often none does)
                place_spheres(poses[body_link[b]], centers, body_first[b], body_first[b + 1], spheres)
                placed[b] = True
            for t in range(body_first[b], body_first[b + 1]):
                if near(spheres, s, spheres, t, r + radius[t]):
                    hit = True
                    break
            if hit:
                break
        if hit:
            if first:
                return True
            self_hit[p] = found = True
    return found


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
    growth: np.ndarray  # (B + P,) [m]: added to every sphere of a body against obstacles, then the gap each self
    #                     pair's spheres keep (0: the spheres as generated)
    scratch: np.ndarray  # (2, 4, 4)


def workspace(base: np.ndarray, link_count: int, table: SphereTable) -> Workspace:
    """Scratch arrays for checks of states that keep ``base``'s values in the joints they do not set."""
    bodies = len(table.body_radius)
    poses = np.zeros((link_count + 3, 4, 4))  # the links' poses, then ``scratch``: identities
    for i in range(4):
        poses[:, i, i] = 1.0
    return Workspace(np.array(base, dtype=float), poses[:link_count + 1], np.empty((len(table.sphere_radius), 3)),
                     np.empty((bodies, 3)), np.zeros(bodies, dtype=bool), np.empty(3),
                     np.zeros(len(table.self_pairs), dtype=bool), np.zeros(table.world_tested.shape, dtype=bool),
                     np.zeros(bodies + len(table.self_pairs)), poses[link_count + 1:])


@compiled_kernel(inline="always", fastmath=FUSED_MULTIPLY_ADD)
def collides(q_group, indices, tree, table, work):
    """``state_collides``, inlined into the kernels that call it (a call with these tuples costs about as much as
    the check)."""
    place_state(q_group, indices, tree, table, work)
    return touching(table, work, True, work.self_hit, work.world_hit)


@compiled_kernel(fastmath=FUSED_MULTIPLY_ADD)
def state_collides(q_group, indices, tree, table, work):
    """True when the spheres of the state (the group's values ``q_group`` at ``indices`` of ``work.q``) touch an
    obstacle or each other (the ``self_pairs``), with the margins of ``work.growth``. ``tree`` and
    ``table`` are the plain tuples of a ``TreeTable`` and a ``SphereTable``."""
    return collides(q_group, indices, tree, table, work)


@compiled_kernel(fastmath=FUSED_MULTIPLY_ADD)
def state_collides_in(q_group, indices, inputs):
    """``state_collides`` with its tree, table and workspace in one object (``kernel_inputs.KernelInputs``: its
    ``frames`` a ``TreeTable``'s arrays)."""
    return collides(q_group, indices, inputs.frames, inputs.table, inputs.work)


@compiled_kernel(fastmath=FUSED_MULTIPLY_ADD)
def colliding_pairs(q_group, indices, tree, table, work, self_hit, world_hit):
    """Mark every pair whose spheres touch in the state: ``self_hit[p]`` for ``table.self_pairs[p]``,
    ``world_hit[b, m]`` for body b and obstacle m (both left as they are elsewhere)."""
    place_state(q_group, indices, tree, table, work)
    touching(table, work, False, self_hit, world_hit)


@compiled_kernel(fastmath=FUSED_MULTIPLY_ADD)
def pairs_touching_in(states, indices, tree, table, work, self_hit, world_hit):
    """``colliding_pairs`` of every group state of ``states`` (n, joints) in one call: each pair touching in one of
    them marked."""
    for k in range(states.shape[0]):
        place_state(states[k], indices, tree, table, work)
        touching(table, work, False, self_hit, world_hit)


class SphereChain(NamedTuple):
    """The frames a group's joints move, for ``place_chain``: frame 0 is the root link's; frame f > 0 the child
    link of a joint the group moves, turned so that the joint's axis is its z axis (``sphere_chain``). The links no
    joint of the group moves in between are constant offsets, folded into the frames and the spheres."""

    parent: np.ndarray  # (F,) int64, frame f's parent frame (frame 0: -1)
    constant: np.ndarray  # (F, 3, 4) frame f at zero joint value, in its parent frame
    motion: np.ndarray  # (F,) int64, REVOLUTE (about z) or PRISMATIC (along z); FIXED for frame 0
    variable: np.ndarray  # (F,) int64, the group value (index into the group's vector) that moves frame f
    multiplier: np.ndarray  # (F,) the joint's value is multiplier * q_group[variable] + offset (mimic joints)
    offset: np.ndarray  # (F,)


def _inverse(T: np.ndarray) -> np.ndarray:
    inverse = np.eye(4)
    inverse[:3, :3] = T[:3, :3].T
    inverse[:3, 3] = -T[:3, :3].T @ T[:3, 3]
    return inverse


def _z_to(axis: np.ndarray) -> np.ndarray:
    """A rotation (4x4) that takes the z axis to the unit ``axis``."""
    z = np.asarray(axis, dtype=float) / np.linalg.norm(axis)
    helper = np.array([1.0, 0.0, 0.0]) if abs(z[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    x = np.cross(helper, z)
    x /= np.linalg.norm(x)
    turn = np.eye(4)
    turn[:3, 0], turn[:3, 1], turn[:3, 2] = x, np.cross(z, x), z
    return turn


def sphere_chain(tree: tuple, indices: np.ndarray, base: np.ndarray,
                 table: SphereTable) -> tuple[SphereChain, SphereTable] | None:
    """(chain, table) of the group whose values sit at ``indices`` of the full state ``base`` (the other joints keep
    their values there: constant offsets), or None when a joint the group moves is neither revolute nor prismatic.
    ``table`` is returned with its spheres and body bounds in the chain's frames (``body_link``: a body's frame),
    for ``place_chain``."""
    tree = TreeTable(*tree)
    group = {int(v): g for g, v in enumerate(indices)}
    q = np.array(base, dtype=float)
    poses = np.tile(np.eye(4), (len(tree.parent_link) + 1, 1, 1))
    tree_link_poses(q, tuple(tree), poses)
    link_frame = {0: 0}
    frames = [np.eye(4)]  # each frame's pose in this state
    parent, constant, motion, variable, multiplier, offset = [-1], [np.eye(4)[:3]], [FIXED], [0], [1.0], [0.0]
    for k in range(len(tree.parent_link)):
        up, child = int(tree.parent_link[k]), int(tree.child_link[k])
        g = group.get(int(tree.first_variable[k]), -1)
        if tree.motion[k] == FIXED or g < 0:
            link_frame[child] = link_frame[up]
            continue
        if tree.motion[k] not in (REVOLUTE, PRISMATIC):
            return None
        turn = _z_to(tree.axes[k][0])
        pf = link_frame[up]
        joint = poses[up] @ tree.T_parent_joint[k] @ turn  # the turned joint frame at zero value
        link_frame[child] = len(frames)
        frames.append(poses[child] @ turn)
        parent.append(pf)
        constant.append((_inverse(frames[pf]) @ joint)[:3])
        motion.append(int(tree.motion[k]))
        variable.append(g)
        multiplier.append(float(tree.multiplier[k]))
        offset.append(float(tree.offset[k]))
    chain = SphereChain(np.array(parent, dtype=np.int64), np.ascontiguousarray(constant),
                        np.array(motion, dtype=np.int64), np.array(variable, dtype=np.int64),
                        np.array(multiplier), np.array(offset))
    body_frame = np.array([link_frame[int(link)] for link in table.body_link], dtype=np.int64)
    centers, body_centers = np.empty_like(table.sphere_center), np.empty_like(table.body_center)
    for b, link in enumerate(table.body_link):
        offset_b = _inverse(frames[body_frame[b]]) @ poses[int(link)]
        rows = slice(table.body_first[b], table.body_first[b + 1])
        centers[rows] = table.sphere_center[rows] @ offset_b[:3, :3].T + offset_b[:3, 3]
        body_centers[b] = offset_b[:3, :3] @ table.body_center[b] + offset_b[:3, 3]
    return chain, table._replace(sphere_center=centers, body_center=body_centers, body_link=body_frame)


@compiled_kernel(inline="always", fastmath=FUSED_MULTIPLY_ADD)
def _place_frame(f, c, s, value, chain, poses):
    """poses[f] <- frame f of a chain (``sphere_chain``) placed from its parent's pose, its joint at ``value`` (c, s:
    the value's cosine and sine for a revolute joint; 1, 0 for a prismatic one)."""
    parent, constant = chain.parent, chain.constant
    p = parent[f]
    revolute = chain.motion[f] == REVOLUTE
    for i in range(3):
        a0, a1, a2 = poses[p, i, 0], poses[p, i, 1], poses[p, i, 2]
        x = a0 * constant[f, 0, 0] + a1 * constant[f, 1, 0] + a2 * constant[f, 2, 0]
        y = a0 * constant[f, 0, 1] + a1 * constant[f, 1, 1] + a2 * constant[f, 2, 1]
        z = a0 * constant[f, 0, 2] + a1 * constant[f, 1, 2] + a2 * constant[f, 2, 2]
        t = a0 * constant[f, 0, 3] + a1 * constant[f, 1, 3] + a2 * constant[f, 2, 3] + poses[p, i, 3]
        poses[f, i, 0] = c * x + s * y
        poses[f, i, 1] = c * y - s * x
        poses[f, i, 2] = z
        poses[f, i, 3] = t if revolute else t + z * value


@compiled_kernel(inline="always", fastmath=FUSED_MULTIPLY_ADD)
def _place_bodies(table, work):
    """Each body's bounding sphere placed on its frame's pose (work.world_bodies), its spheres not yet placed."""
    body_link, placed = table.body_link, work.placed
    for b in range(body_link.shape[0]):
        place_spheres(work.link_poses[body_link[b]], table.body_center, b, b + 1, work.world_bodies)
        placed[b] = False


@compiled_kernel(inline="always", fastmath=FUSED_MULTIPLY_ADD)
def place_chain(q_group, chain, table, work):
    """``place_state`` for a chain's frames (``sphere_chain``: ``table`` in its frames): work.link_poses[f] <- frame
    f's pose, rows 0-2 (row 0 is the root's, left as it is: the identity)."""
    chain, table = SphereChain(*chain), SphereTable(*table)
    for f in range(1, chain.parent.shape[0]):
        value = chain.multiplier[f] * q_group[chain.variable[f]] + chain.offset[f]
        c, s = (math.cos(value), math.sin(value)) if chain.motion[f] == REVOLUTE else (1.0, 0.0)
        _place_frame(f, c, s, value, chain, work.link_poses)
    _place_bodies(table, work)


@compiled_kernel(inline="always", fastmath=FUSED_MULTIPLY_ADD)
def chain_collides(q_group, chain, table, work):
    """``collides`` for a chain's frames (``sphere_chain``), with the margins of ``work.growth``."""
    place_chain(q_group, chain, table, work)
    return touching(table, work, True, work.self_hit, work.world_hit)


@compiled_kernel(fastmath=FUSED_MULTIPLY_ADD)
def motion_scratch(frames):
    """Scratch of the motion checks (``first_touching_step``) on a chain of ``frames`` frames."""
    return np.empty((frames, 6))


@compiled_kernel(fastmath=FUSED_MULTIPLY_ADD)
def first_touching_step(q_from, q_to, resolution, chain, table, work, scratch):
    """The first state of the straight motion from ``q_from`` (not checked) to ``q_to`` found touching, as k of its
    steps (its state k / steps of the way; 0: none touches), on a chain's frames (``sphere_chain``: ``table`` in its
    frames), its states at most ``resolution`` apart per joint (``model.joint_steps``), ``q_to`` first,
    then coarse to fine. ``scratch``: ``motion_scratch`` for the chain."""
    steps = straight_steps(q_from, q_to, resolution)
    if chain_collides(q_to, chain, table, work):
        return steps
    return _first_touching_inside(q_from, q_to, steps, chain, table, work, scratch)


@compiled_kernel(inline="always", fastmath=FUSED_MULTIPLY_ADD)
def _first_touching_inside(q_from, q_to, steps, chain, table, work, trig):
    """``first_touching_step`` for the states strictly between the ends (k = 1 .. steps - 1), coarse to fine: the
    odd multiples of each stride (every multiple of the first), the stride halved after each pass. Within a pass of
    more than RECURRENCE_FROM states, each revolute frame's cosine and sine advance by the angle-addition formulas
    (two of libm's sines and cosines a frame for the pass, not two a state: they were a fifth of a state's check).
    ``trig``: ``motion_scratch``, per frame its value at q_from, its change over the motion, the current state's
    cosine and sine, those of the pass's step."""
    chain_t, table_t = SphereChain(*chain), SphereTable(*table)
    frames = chain_t.parent.shape[0]
    for f in range(1, frames):
        trig[f, 0] = chain_t.multiplier[f] * q_from[chain_t.variable[f]] + chain_t.offset[f]
        trig[f, 1] = chain_t.multiplier[f] * (q_to[chain_t.variable[f]] - q_from[chain_t.variable[f]])
    stride = 1
    while 2 * stride < steps:
        stride *= 2
    while stride >= 1:
        jump = stride if 2 * stride >= steps else 2 * stride
        recurring = (steps - stride + jump - 1) // jump > RECURRENCE_FROM
        if recurring:
            for f in range(1, frames):
                trig[f, 4], trig[f, 5] = math.cos(trig[f, 1] * jump / steps), math.sin(trig[f, 1] * jump / steps)
        k = stride
        while k < steps:
            for f in range(1, frames):
                value = trig[f, 0] + trig[f, 1] * k / steps
                if chain_t.motion[f] != REVOLUTE:
                    _place_frame(f, 1.0, 0.0, value, chain_t, work.link_poses)
                    continue
                if recurring and k > stride:  # (the pass's first state from libm)
                    c, s = trig[f, 2], trig[f, 3]
                    trig[f, 2], trig[f, 3] = c * trig[f, 4] - s * trig[f, 5], s * trig[f, 4] + c * trig[f, 5]
                else:
                    trig[f, 2], trig[f, 3] = math.cos(value), math.sin(value)
                _place_frame(f, trig[f, 2], trig[f, 3], value, chain_t, work.link_poses)
            _place_bodies(table_t, work)
            if touching(table, work, True, work.self_hit, work.world_hit):
                return k
            k += jump
        stride //= 2
    return 0


@compiled_kernel(fastmath=FUSED_MULTIPLY_ADD)
def touching_segments(waypoints, resolution, chain, table, work, scratch, touching):
    """touching[s] <- whether a state of the straight motion from waypoint s (not checked) to s + 1 touches
    (``first_touching_step``), for every segment of ``waypoints`` in one call."""
    for s in range(waypoints.shape[0] - 1):
        touching[s] = first_touching_step(waypoints[s], waypoints[s + 1], resolution, chain, table, work, scratch) > 0


@compiled_kernel(fastmath=FUSED_MULTIPLY_ADD)
def chain_motion_collides(q_from, q_to, resolution, chain, table, work, scratch):
    """True when a state of the straight motion from ``q_from`` (not checked) to ``q_to`` collides
    (``first_touching_step``)."""
    return first_touching_step(q_from, q_to, resolution, chain, table, work, scratch) > 0


@compiled_kernel(fastmath=FUSED_MULTIPLY_ADD)
def first_touching_step_in(q_from, q_to, resolution, inputs):
    """``first_touching_step`` with the chain, its table and a workspace in one object
    (``sphere_proof.kernel_bundle``)."""
    chain = inputs.frames
    return first_touching_step(q_from, q_to, resolution, chain, inputs.table, inputs.work,
                               motion_scratch(chain[0].shape[0]))


@compiled_kernel(fastmath=FUSED_MULTIPLY_ADD)
def chain_inside_collides(q_from, q_to, resolution, chain, table, work, scratch):
    """``chain_motion_collides`` for a motion between two states known free (as two waypoints of a path): neither
    end checked."""
    return _first_touching_inside(q_from, q_to, straight_steps(q_from, q_to, resolution), chain, table, work,
                                  scratch) > 0


@compiled_kernel(fastmath=FUSED_MULTIPLY_ADD)
def chain_states_free(positions, growth, chain, table, work, free):
    """free[k] <- the group state ``positions[k]`` is free for the spheres with the margins ``growth[k]``
    (``sphere_proof.grown_free`` on a chain's frames: ``sphere_chain``'s ``chain`` and ``table``)."""
    for k in range(positions.shape[0]):
        for b in range(growth.shape[1]):
            work.growth[b] = growth[k, b]
        free[k] = not chain_collides(positions[k], chain, table, work)
    work.growth[:] = 0.0
