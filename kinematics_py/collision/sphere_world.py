"""A collision checker's robot and scene as spheres and primitives for the compiled checks (``sphere_kernels``).

The robot's links become their generated spheres (``spheres``; each grown by the link's padding and offset), the world
objects' boxes, spheres, cylinders, cones (as their cylinder) and planes become obstacles, and a world mesh its
triangles (the checker tests a world mesh's triangles, not its inside), under a tree of bounding boxes (NODE rows:
a body's bound that misses one skips every triangle under it; TRIANGLES_PER_LEAF at most under the lowest). Every
pair the checker tests is tested here, and more: the self pairs are the link pairs the checker never disables
(adjacent links, the SRDF's disabled pairs and ``allow_collision`` pairs are left out; a scene's allowed collision
matrix is not read, so its allowed pairs are tested, which is only stricter). So a state these checks call free is
free for the checker. A scene they cannot represent (attached objects, octrees, world meshes of more than
MAX_WORLD_TRIANGLES triangles, scaled links) has no table: ``sphere_table`` says why instead.
"""
from __future__ import annotations

import weakref

import numpy as np

from ..thread_scratch import thread_scratch
from .checker import CollisionChecker
from .geometry import Box, Cone, Cylinder, Mesh, Plane, Sphere
from .kernel_inputs import inputs_of
from .sphere_kernels import (
    BOX,
    CYLINDER,
    NODE,
    PLANE,
    SPHERE,
    TRIANGLE,
    SphereTable,
    state_collides_in,
    workspace,
)
from .spheres import robot_spheres

#: Triangles of a world mesh under one NODE row of its bounding-box tree at most (``_mesh_rows``).
TRIANGLES_PER_LEAF = 4
#: World meshes' triangles a table holds at most (a tree's rows take about 50 us a triangle to build: 20,480
#: triangles 1.1 s on a busy machine); a scene with more takes the exact checks.
MAX_WORLD_TRIANGLES = 20_000
_tables: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_MESH_ROWS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # Mesh -> (its pose's bytes, ``_mesh_rows``)


def sphere_table(checker: CollisionChecker) -> SphereTable | str:
    """The checker's robot and scene as a ``SphereTable``, or why they cannot be one (kept per scene version)."""
    return _kept(checker)[0]


def free_for_spheres(checker: CollisionChecker, state: np.ndarray) -> bool:
    """Whether the robot's spheres are free in the full ``state`` (every pair the checker tests, and more, is
    tested: the checker finds such a state free too); False where they touch or there is no table (ask the
    checker then). A few microseconds, where the checker takes tens."""
    table = sphere_table(checker)
    if isinstance(table, str):
        return False
    _, indices, inputs = thread_scratch(__name__, (id(table), len(state)), lambda: (
        table, np.arange(len(state), dtype=np.int64), inputs_of(checker.model.tree.table_arrays, tuple(table),
                                                               workspace(state, len(checker.model.link_names), table))))
    return not state_collides_in(np.asarray(state, dtype=float), indices, inputs)


def through_nodes(table: SphereTable, world_tested: np.ndarray) -> np.ndarray:
    """``world_tested`` (B, M) bool for ``table``'s rows with each NODE row tested for a body where a row under it
    is (the kernels skip what is under a NODE row a body is not tested against): what a table whose pairs are
    a subset of another's (a relaxed search's, ``sphere_search``) needs."""
    nodes = np.flatnonzero(table.obstacle_kind == NODE)
    if not len(nodes):
        return world_tested
    tested = world_tested.copy()
    for m in nodes[::-1]:  # (a NODE row's own NODE rows come after it: theirs are set first)
        tested[:, m] = tested[:, m + 1:table.obstacle_skip[m]].any(axis=1)
    return tested


def obstacle_owners(checker: CollisionChecker) -> tuple[str, ...]:
    """The world object each obstacle row of ``sphere_table(checker)`` belongs to (its id), in the table's order."""
    return _kept(checker)[1]


def obstacle_solids(checker: CollisionChecker) -> tuple[bool, ...]:
    """Whether each obstacle row of ``sphere_table(checker)`` is the whole solid the checker tests (a box, sphere or
    cylinder; not a cone's cylinder, a plane, a mesh's triangle or a NODE row), in the table's order."""
    return _kept(checker)[2]


def _kept(checker: CollisionChecker) -> tuple[SphereTable | str, tuple[str, ...], tuple[bool, ...]]:
    key = (checker.scene.version, checker.config_version)
    cached = _tables.get(checker)
    if cached is not None and cached[0] == key:
        return cached[1]
    built = _built(checker)
    _tables[checker] = (key, built)
    return built


def _built(checker: CollisionChecker) -> tuple[SphereTable | str, tuple[str, ...], tuple[bool, ...]]:
    scene = checker.scene
    if scene.attached_objects:
        return "the robot holds attached objects", (), ()
    links = list(checker.link_geometry)
    scaled = [link for link in links if checker.scale(link) != 1.0]
    if scaled:
        return f"links {scaled} are scaled", (), ()
    obstacles = _obstacles(scene.world_objects)
    if isinstance(obstacles, str):
        return obstacles, (), ()
    kinds, T_obstacle_plan, sizes, lowers, uppers, subtrees, solids, owners = obstacles
    spheres = robot_spheres(checker.link_geometry)
    link_index = {name: i for i, name in enumerate(checker.model.link_names)}
    sphere_center = np.vstack([spheres[link].centers for link in links])
    sphere_radius = np.concatenate([spheres[link].radii + checker.padding(link) + checker.offset(link)
                                    for link in links])
    body_first = np.concatenate([[0], np.cumsum([len(spheres[link].radii) for link in links])]).astype(np.int64)
    body_center = np.array([sphere_center[a:b].mean(axis=0) for a, b in zip(body_first[:-1], body_first[1:])])
    body_radius = np.array([(np.linalg.norm(sphere_center[a:b] - body_center[k], axis=1) + sphere_radius[a:b]).max()
                            for k, (a, b) in enumerate(zip(body_first[:-1], body_first[1:]))])
    disabled = checker.disabled_pairs
    self_pairs = [(a, b) for a in range(len(links)) for b in range(a + 1, len(links))
                  if frozenset((links[a], links[b])) not in disabled]
    world_tested = np.array([[frozenset((link, owner)) not in disabled for owner in owners] for link in links],
                            dtype=bool).reshape(len(links), len(owners))
    return SphereTable(sphere_center, sphere_radius, np.array([link_index[link] for link in links], dtype=np.int64),
                       body_first, body_center, body_radius, np.array(self_pairs, dtype=np.int64).reshape(-1, 2),
                       np.array(kinds, dtype=np.int64), np.array(T_obstacle_plan).reshape(-1, 3, 4),
                       np.array(sizes).reshape(-1, 3), np.array(lowers).reshape(-1, 3), np.array(uppers).reshape(-1, 3),
                       world_tested, np.arange(len(kinds), dtype=np.int64) + np.array(subtrees, dtype=np.int64)), \
        tuple(owners), tuple(solids)


def _obstacles(world) -> tuple[list, ...] | str:
    """(kinds, T_obstacle_plan, sizes, lower bounds, upper bounds, rows of each row's subtree (itself included),
    whether each is a whole solid, owner ids) of the world's shapes' obstacle rows, or why one of them cannot be
    an obstacle."""
    triangles = sum(len(placed.shape.triangles) for item in world.values() for placed in item.shapes
                    if isinstance(placed.shape, Mesh))
    if triangles > MAX_WORLD_TRIANGLES:
        return f"world meshes of {triangles} triangles (more than MAX_WORLD_TRIANGLES = {MAX_WORLD_TRIANGLES})"
    rows: list[tuple] = []
    for object_id, item in world.items():
        for placed in item.shapes:
            T_plan_shape = item.T_parent_object @ placed.T_frame_shape
            if isinstance(placed.shape, Mesh):
                rows += [(*row, False, object_id) for row in _posed_mesh_rows(placed.shape, T_plan_shape)]
                continue
            row = _obstacle(placed.shape, T_plan_shape)
            if row is None:
                return f"world object {object_id!r} holds a {type(placed.shape).__name__}"
            rows.append((*row, 1, isinstance(placed.shape, (Box, Sphere, Cylinder)), object_id))
    return tuple(list(column) for column in zip(*rows)) if rows else ([], [], [], [], [], [], [], [])


def _posed_mesh_rows(mesh: Mesh, T_plan_shape: np.ndarray) -> list[tuple]:
    """``_mesh_rows`` of ``mesh`` posed by ``T_plan_shape``, kept per mesh and pose (a scene's other objects change
    more often than a fixture's mesh)."""
    key = T_plan_shape.tobytes()
    kept = _MESH_ROWS.get(mesh)
    if kept is None or kept[0] != key:
        corners = mesh.vertices[mesh.triangles] @ T_plan_shape[:3, :3].T + T_plan_shape[:3, 3]
        kept = _MESH_ROWS[mesh] = (key, _mesh_rows(corners))
    return kept[1]


def _mesh_rows(corners: np.ndarray) -> list[tuple]:
    """(kind, T_obstacle_plan (3x4), size, lower, upper, rows of its subtree) of the triangles ``corners`` (n, 3, 3)
    in the planning frame: a NODE row with their bounds, then the rows of each half (split at the median of their
    centres along the axis they spread most), depth first; TRIANGLES_PER_LEAF or fewer triangles are rows of their
    own (their corners in the rows of T)."""
    rows: list[tuple] = []

    def add(order: np.ndarray) -> None:
        if len(order) <= TRIANGLES_PER_LEAF:
            rows.extend((TRIANGLE, np.hstack([corners[t], np.zeros((3, 1))]), np.zeros(3), corners[t].min(axis=0),
                         corners[t].max(axis=0), 1) for t in order)
            return
        at = len(rows)
        rows.append(None)
        centres = corners[order].mean(axis=1)
        axis = int(np.argmax(centres.max(axis=0) - centres.min(axis=0)))
        ordered = order[np.argsort(centres[:, axis], kind="stable")]
        add(ordered[:len(ordered) // 2])
        add(ordered[len(ordered) // 2:])
        rows[at] = (NODE, np.zeros((3, 4)), np.zeros(3), corners[order].min(axis=(0, 1)),
                    corners[order].max(axis=(0, 1)), len(rows) - at)

    add(np.arange(len(corners)))
    return rows


def _obstacle(shape, T_plan_shape: np.ndarray) -> tuple | None:
    """(kind, T_obstacle_plan (3x4), size, lower and upper axis-aligned bounds in the planning frame) of a
    primitive, None for others."""
    R, t = T_plan_shape[:3, :3], T_plan_shape[:3, 3]
    T_shape_plan = np.hstack([R.T, (-R.T @ t)[:, None]])
    if isinstance(shape, Plane):
        a, b, c, d = shape.coefficients
        normal = R @ np.array([a, b, c])
        return PLANE, np.vstack([np.append(normal, d - normal @ t), np.zeros((2, 4))]), np.zeros(3), \
            np.full(3, -np.inf), np.full(3, np.inf)
    if isinstance(shape, Sphere):
        reach = np.full(3, shape.radius)
        return SPHERE, T_shape_plan, np.array([shape.radius, 0.0, 0.0]), t - reach, t + reach
    if isinstance(shape, Box):
        half = np.asarray(shape.size) / 2
        reach = np.abs(R) @ half
        return BOX, T_shape_plan, half, t - reach, t + reach
    if isinstance(shape, (Cylinder, Cone)):  # (a cone as its cylinder)
        size = np.array([shape.radius, shape.length / 2, 0.0])
        axis = R[:, 2]
        reach = shape.radius * np.sqrt(np.maximum(1.0 - axis**2, 0.0)) + shape.length / 2 * np.abs(axis)
        return CYLINDER, T_shape_plan, size, t - reach, t + reach
    return None
