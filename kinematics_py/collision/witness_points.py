"""Points of the robot's real collision geometry that prove a collision without the exact checker.

The spheres (``sphere_kernels``) contain each link's geometry, so spheres that touch an obstacle prove nothing: the
exact checker must look (tens of microseconds a state, most of it placing every link). Points of the geometry itself
prove the converse: when a point of a link's checked solid lies inside an obstacle the checker tests that link
against, the two intersect and the checker finds that state in collision. Such witness points per link: the corners
of a box, the centre and poles of a sphere, the centre and rim points of a cylinder's caps, the hull vertices of a
mesh (at most MAX_MESH_POINTS of them). A mesh is a solid only where the checker tests it as its convex hull
(``mesh_mode`` "convex_hull"; the checked hull of a padded mesh contains the unpadded one); a flat mesh, or a mesh
checked by its triangles, gives no points. Padding and offsets only grow what the checker tests, so the points of the
geometry as the URDF gives it stay inside it. Obstacles are the boxes, spheres and cylinders of the world
(``sphere_world``'s table; cones, planes and a world mesh's triangles are not solids here: ``obstacle_solids``); a
pair counts only when the checker tests it (its allowed collision matrix applied). A point must be INSIDE_DEPTH inside,
so that rounding cannot make a grazing contact a collision.
"""
from __future__ import annotations

import math
import threading
import weakref
from typing import NamedTuple

import numpy as np

from ..compiled import compiled_kernel
from .checker import CollisionChecker, binding_key
from .geometry import Box, Cylinder, GeometryError, Mesh, Sphere, convex_hull
from .kernel_inputs import inputs_of
from .robot_bodies import robot_bodies
from .sphere_kernels import BOX, CYLINDER, SPHERE, SphereTable, obstacle_touch, place_chain, sphere_chain, workspace
from .sphere_world import obstacle_owners, obstacle_solids, rows_tested, sphere_table

#: Hull vertices kept per mesh (evenly through the hull's vertex list).
MAX_MESH_POINTS = 64
#: Rim points per cylinder cap.
RIM_POINTS = 8
#: How deep inside an obstacle [m] a point must be to prove a collision.
INSIDE_DEPTH = 1e-6
#: Groups' chains (one per group and base state) kept per checker, at most.
MAX_KEPT_CHAINS = 16
_kept: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_LOCK = threading.Lock()


class WitnessTable(NamedTuple):
    """Witness points of ``sphere_table(checker)``'s bodies (same order) and the obstacles they prove against."""

    points: np.ndarray  # (W, 3) in each body's link frame [m]
    body_first: np.ndarray  # (B + 1,) int64, body b's points are rows body_first[b] .. body_first[b + 1] - 1
    solid_tested: np.ndarray  # (B, M) bool: obstacle m is a solid the checker tests against body b


def shape_points(shape, mesh_as_hull: bool) -> np.ndarray:
    """(n, 3) points of ``shape``'s solid in its own frame, or (0, 3) where it is not tested as a solid."""
    if isinstance(shape, Box):
        half = np.asarray(shape.size, dtype=float) / 2
        return np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)]) * half
    if isinstance(shape, Sphere):
        return np.vstack([np.zeros(3), shape.radius * np.vstack([np.eye(3), -np.eye(3)])])
    if isinstance(shape, Cylinder):
        angles = 2 * np.pi * np.arange(RIM_POINTS) / RIM_POINTS
        rim = np.column_stack([shape.radius * np.cos(angles), shape.radius * np.sin(angles), np.zeros(RIM_POINTS)])
        caps = [np.vstack([[0.0, 0.0, z], rim + [0.0, 0.0, z]]) for z in (-shape.length / 2, shape.length / 2)]
        return np.vstack([np.zeros((1, 3)), *caps])
    if isinstance(shape, Mesh) and mesh_as_hull:
        try:
            vertices = np.asarray(convex_hull(shape).vertices, dtype=float)
        except GeometryError:  # flat: checked by its triangles
            return np.zeros((0, 3))
        keep = np.linspace(0, len(vertices) - 1, min(len(vertices), MAX_MESH_POINTS)).round().astype(int)
        return vertices[np.unique(keep)]
    return np.zeros((0, 3))


def witness_table(checker: CollisionChecker) -> WitnessTable | None:
    """The checker's witness points and the pairs they prove, or None without a sphere table (kept per scene and
    configuration version)."""
    return _entry(checker)[1]


def proven_colliding(checker: CollisionChecker, indices: np.ndarray, base: np.ndarray, q_group: np.ndarray,
                     key: tuple | None = None) -> bool:
    """Whether a witness point proves the state (``base`` with the group's values ``q_group`` at ``indices``) in
    collision for the checker; False proves nothing (no point inside, or no sphere table). ``key``: as
    ``first_proven_colliding``'s."""
    return first_proven_colliding(checker, indices, base, np.asarray(q_group, dtype=float)[None], key) >= 0


def first_proven_colliding(checker: CollisionChecker, indices: np.ndarray, base: np.ndarray, states: np.ndarray,
                           key: tuple | None = None) -> int:
    """The index of the first of the group ``states`` (n, joints; in their order) that a witness point proves in
    collision (as ``proven_colliding``), -1 when none is, in one compiled call. The group's frames are placed alone
    (``sphere_chain``, kept per group and base state, MAX_KEPT_CHAINS of them at most; ``key``: the group's and base
    state's, ``PathCheck.binding_key``, made here when not given)."""
    _, found, chains = _entry(checker)
    if found is None:
        return -1
    key = key or binding_key(indices, base)
    inputs = chains.get(key)
    if inputs is None:
        if len(chains) >= MAX_KEPT_CHAINS:
            chains.clear()
        table = sphere_table(checker)
        chained = sphere_chain(checker.model.tree.table_arrays, indices, base, table._replace(
            sphere_center=found.points, sphere_radius=np.zeros(len(found.points)), body_first=found.body_first))
        inputs = chains[key] = None if chained is None else (
            inputs_of(tuple(chained[0]), tuple(chained[1]), workspace(base, len(checker.model.link_names), table)),
            chained[1].sphere_center, found.body_first, found.solid_tested)
    if inputs is None:
        return -1
    with _LOCK:  # (the workspace is the group's)
        return witness_first_inside(np.ascontiguousarray(states, dtype=float), *inputs)


def _entry(checker: CollisionChecker) -> tuple:
    """(scene and configuration version, ``witness_table``'s answer, the groups' chains) of the checker."""
    key = (checker.scene.version, checker.config_version)
    cached = _kept.get(checker)
    if cached is None or cached[0] != key:
        cached = _kept[checker] = (key, _built(checker), {})
    return cached


def _built(checker: CollisionChecker) -> WitnessTable | None:
    table = sphere_table(checker)
    if isinstance(table, str):
        return None
    bodies = robot_bodies(checker)  # (the table's bodies, in its order)
    as_hull = checker.mesh_mode == "convex_hull"
    per_body = []
    for body in bodies:  # (an attached mesh is checked as its triangles: no points)
        parts = [shape_points(placed.shape, as_hull and not body.attached) for placed in body.shapes]
        per_body.append(np.vstack([points @ placed.T_frame_shape[:3, :3].T + placed.T_frame_shape[:3, 3]
                                   for points, placed in zip(parts, body.shapes)])
                        if parts else np.zeros((0, 3)))
    tables = checker._current_tables()
    tested = {frozenset(tables.body_pair(p)) for p in np.flatnonzero(tables.pair_involves_world)}
    solid_tested = rows_tested([body.name for body in bodies], obstacle_owners(checker),
                               lambda pair: pair in tested) & np.array(obstacle_solids(checker), dtype=bool)
    first = np.concatenate([[0], np.cumsum([len(points) for points in per_body])]).astype(np.int64)
    return WitnessTable(np.vstack(per_body) if per_body else np.zeros((0, 3)), first, solid_tested)


@compiled_kernel(inline="always")
def _inside(x, y, z, kind, T, size, m):
    """True when the point (x, y, z) in the planning frame is INSIDE_DEPTH inside obstacle m (a box, sphere or
    cylinder)."""
    lx = T[m, 0, 0] * x + T[m, 0, 1] * y + T[m, 0, 2] * z + T[m, 0, 3]
    ly = T[m, 1, 0] * x + T[m, 1, 1] * y + T[m, 1, 2] * z + T[m, 1, 3]
    lz = T[m, 2, 0] * x + T[m, 2, 1] * y + T[m, 2, 2] * z + T[m, 2, 3]
    if kind == BOX:
        return abs(lx) < size[m, 0] - INSIDE_DEPTH and abs(ly) < size[m, 1] - INSIDE_DEPTH and \
            abs(lz) < size[m, 2] - INSIDE_DEPTH
    if kind == SPHERE:
        return math.sqrt(lx * lx + ly * ly + lz * lz) < size[m, 0] - INSIDE_DEPTH
    if kind == CYLINDER:
        return math.sqrt(lx * lx + ly * ly) < size[m, 0] - INSIDE_DEPTH and abs(lz) < size[m, 1] - INSIDE_DEPTH
    return False


@compiled_kernel(inline="always")
def _witness_inside(q_group, chain, table, points, first, solid_tested, work):
    """Whether, with the group at ``q_group``, a witness point of a body (``points`` in its frame of the chain:
    ``sphere_chain`` applied to them, body b's rows ``first[b]`` .. ``first[b + 1] - 1``) lies inside an obstacle
    ``solid_tested`` marks for it; ``table``: the chain's sphere table (its obstacles, body bounds and frames)."""
    place_chain(q_group, chain, table, work)
    table = SphereTable(*table)
    poses, bodies = work.link_poses, work.world_bodies
    kinds, T_plan, size = table.obstacle_kind, table.T_obstacle_plan, table.obstacle_size
    lower, upper, skip = table.obstacle_lower, table.obstacle_upper, table.obstacle_skip
    for b in range(table.body_link.shape[0]):
        T = poses[table.body_link[b]]
        x, y, z, r = bodies[b, 0], bodies[b, 1], bodies[b, 2], table.body_radius[b]
        skipped_to = 0  # (a row not solid skips its subtree: what is under a NODE row is a mesh's, no solid)
        for m in range(kinds.shape[0]):
            if m < skipped_to:
                continue
            skipped_to = skip[m]
            if not solid_tested[b, m] or x < lower[m, 0] - r or x > upper[m, 0] + r or y < lower[m, 1] - r or \
                    y > upper[m, 1] + r or z < lower[m, 2] - r or z > upper[m, 2] + r or \
                    not obstacle_touch(x, y, z, r, kinds[m], T_plan, size, m):
                continue  # (the obstacle's axis-aligned bounds first, as the spheres' check culls)
            for w in range(first[b], first[b + 1]):
                x = T[0, 0] * points[w, 0] + T[0, 1] * points[w, 1] + T[0, 2] * points[w, 2] + T[0, 3]
                y = T[1, 0] * points[w, 0] + T[1, 1] * points[w, 1] + T[1, 2] * points[w, 2] + T[1, 3]
                z = T[2, 0] * points[w, 0] + T[2, 1] * points[w, 1] + T[2, 2] * points[w, 2] + T[2, 3]
                if _inside(x, y, z, kinds[m], T_plan, size, m):
                    return True
    return False


@compiled_kernel
def witness_first_inside(states, inputs, points, first, solid_tested):
    """The index of the first of the group ``states`` (n, joints) in which a witness point lies inside an obstacle
    (``_witness_inside``), -1 when none. ``inputs``: the chain, its table and a workspace
    (``sphere_proof.kernel_bundle``)."""
    chain, table, work = inputs.frames, inputs.table, inputs.work
    for k in range(states.shape[0]):
        if _witness_inside(states[k], chain, table, points, first, solid_tested, work):
            return k
    return -1
