"""A collision checker's robot and scene as spheres and primitives for the compiled checks (``sphere_kernels``).

The robot's bodies (``robot_bodies``: its links, then the objects attached to them) become their generated spheres
(``spheres``, fitted finer for the links ``sphere_refinement`` picks; a link's grown by its padding and offset, an
attached object's by its offset), the world
objects' boxes, spheres, cylinders, cones (as their cylinder) and planes become obstacles, a world mesh its
triangles (the checker tests a world mesh's triangles, not its inside) and an octree its voxels as boxes
(``Octree.boxes``: runs of voxels merged), each under a tree of bounding boxes (NODE rows: a body's bound that
misses one skips every row under it: ``bounds_tree``). Every
pair the checker tests is tested here, and more: the self pairs are the body pairs the checker never disables
(adjacent links, the SRDF's disabled pairs and ``allow_collision`` pairs are left out, and an attached object's
pairs with its link and touch links; a scene's allowed collision matrix is not read, so its allowed pairs are
tested, which is only stricter). So a state these checks call free is free for the checker. A scene they cannot
represent (world meshes and octrees of more than MAX_WORLD_LEAVES triangles and boxes, an attached plane or octree,
scaled links) has no table: ``sphere_table`` says why instead.
"""
from __future__ import annotations

import weakref
from collections.abc import Callable, Sequence

import numpy as np

from ..thread_scratch import thread_scratch
from .bounds_tree import bounds_tree
from .checker import CollisionChecker
from .geometry import Box, Cone, Cylinder, Mesh, Plane, Sphere
from .kernel_inputs import inputs_of
from .octree import Octree
from .robot_bodies import RobotBody, body_growth, pair_tested, robot_bodies
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
from .sphere_refinement import falsely_touching_links
from .spheres import LinkSpheres, SphereModelError, link_spheres, robot_spheres

#: World meshes' triangles and octrees' boxes a table holds at most; a scene with more takes the exact checks (a
#: tree takes about 3 us a leaf to build; the checks near a dense mesh cost more: docs/benchmarks.md).
MAX_WORLD_LEAVES = 20_000
_tables: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_TREE_ROWS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # Mesh or Octree -> (pose's bytes, its rows)
_ATTACHED_SPHERES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # attached SceneObject -> its spheres
_FINE_LINKS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # RobotModel -> {key: links fitted finer}
#: Fine-link decisions kept per robot model (``_links_spheres``).
MAX_KEPT_FITS = 8


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


def rows_tested(links: list[str], owners, tested: Callable[[frozenset], bool]) -> np.ndarray:
    """(links, rows) bool, C-contiguous (the kernels' one signature): ``tested(frozenset((link, owner)))`` for each
    link and the owner of each obstacle row (``owners``, as ``obstacle_owners``), asked once per link and object."""
    object_ids, owner_of_row = np.unique(np.array(owners, dtype=object), return_inverse=True) if len(owners) else \
        ([], np.zeros(0, dtype=np.int64))
    per_object = np.array([[tested(frozenset((link, owner))) for owner in object_ids] for link in links],
                          dtype=bool).reshape(len(links), len(object_ids))
    return np.ascontiguousarray(per_object[:, owner_of_row])  # (indexed along rows: Fortran order)


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
    bodies = robot_bodies(checker)
    scaled = [link for link in checker.link_geometry if checker.scale(link) != 1.0]
    if scaled:
        return f"links {scaled} are scaled", (), ()
    obstacles = _obstacles(scene.world_objects)
    if isinstance(obstacles, str):
        return obstacles, (), ()
    (kinds, T_obstacle_plan, sizes, lowers, uppers, subtrees), solids, owners = obstacles
    try:
        spheres = [*_links_spheres(checker, bodies), *(_attached_spheres(body) for body in bodies if body.attached)]
    except SphereModelError as error:
        return f"an attached object has no spheres: {error}", (), ()
    disabled = checker.disabled_pairs
    return SphereTable(*_robot_rows(checker, bodies, spheres), kinds, T_obstacle_plan, sizes, lowers, uppers,
                       rows_tested([body.name for body in bodies], owners, lambda pair: pair not in disabled),
                       np.arange(len(kinds), dtype=np.int64) + subtrees), tuple(owners), tuple(solids)


def _robot_rows(checker: CollisionChecker, bodies: Sequence[RobotBody], spheres: Sequence[LinkSpheres]) -> tuple:
    """A ``SphereTable``'s first seven fields (the spheres, bodies and self pairs) for ``bodies`` and their
    ``spheres``."""
    link_index = {name: i for i, name in enumerate(checker.model.link_names)}
    sphere_center = np.vstack([each.centers for each in spheres])
    sphere_radius = np.concatenate([each.radii + body_growth(checker, body) for each, body in zip(spheres, bodies)])
    body_first = np.concatenate([[0], np.cumsum([len(each.radii) for each in spheres])]).astype(np.int64)
    body_center = np.array([sphere_center[a:b].mean(axis=0) for a, b in zip(body_first[:-1], body_first[1:])])
    body_radius = np.array([(np.linalg.norm(sphere_center[a:b] - body_center[k], axis=1) + sphere_radius[a:b]).max()
                            for k, (a, b) in enumerate(zip(body_first[:-1], body_first[1:]))])
    self_pairs = [(a, b) for a in range(len(bodies)) for b in range(a + 1, len(bodies))
                  if pair_tested(bodies[a], bodies[b], checker.disabled_pairs)]
    return (sphere_center, sphere_radius, np.array([link_index[body.link] for body in bodies], dtype=np.int64),
            body_first, body_center, body_radius, np.array(self_pairs, dtype=np.int64).reshape(-1, 2))


def _robot_only_table(checker: CollisionChecker, links: Sequence[RobotBody],
                      spheres: Sequence[LinkSpheres]) -> SphereTable:
    """A table of ``links`` with their ``spheres`` and no obstacles."""
    kinds, T_obstacle_plan, sizes, lowers, uppers, skips = _NO_ROWS
    return SphereTable(*_robot_rows(checker, links, spheres), kinds, T_obstacle_plan, sizes, lowers, uppers,
                       np.zeros((len(links), 0), dtype=bool), skips)


def _links_spheres(checker: CollisionChecker, bodies: Sequence[RobotBody]) -> list[LinkSpheres]:
    """The spheres of the links among ``bodies`` (``robot_spheres``), fitted finer for the links
    ``sphere_refinement`` picks (decided once per robot model, link shapes, disabled pairs and paddings)."""
    links = [body for body in bodies if body.attached is None]
    key = (tuple((body.link, body.shapes) for body in links), frozenset(checker.disabled_pairs),
           tuple(body_growth(checker, body) for body in links))
    kept = _FINE_LINKS.setdefault(checker.model, {})
    fine = kept.get(key)
    if fine is None:
        plain = robot_spheres(checker.link_geometry)
        robot = _robot_only_table(checker, links, [plain[body.link] for body in links])
        if len(kept) >= MAX_KEPT_FITS:
            kept.clear()
        fine = kept[key] = falsely_touching_links(checker, robot, [body.link for body in links])
    spheres = robot_spheres(checker.link_geometry, fine)
    return [spheres[body.link] for body in links]


def _attached_spheres(body: RobotBody) -> LinkSpheres:
    """Spheres containing an attached object's shapes in its link's frame, kept per attachment (a new attachment
    is a new object)."""
    kept = _ATTACHED_SPHERES.get(body.attached.object)
    if kept is None:
        kept = _ATTACHED_SPHERES[body.attached.object] = link_spheres(body.shapes)
    return kept


#: An empty block of obstacle rows: kinds, T_obstacle_plan, sizes, lower and upper bounds, subtree rows.
_NO_ROWS = (np.zeros(0, dtype=np.int64), np.zeros((0, 3, 4)), np.zeros((0, 3)), np.zeros((0, 3)), np.zeros((0, 3)),
            np.zeros(0, dtype=np.int64))


def _obstacles(world) -> tuple[tuple[np.ndarray, ...], list[bool], list[str]] | str:
    """((kinds, T_obstacle_plan, sizes, lower bounds, upper bounds, rows of each row's subtree (itself included)),
    whether each is a whole solid, owner ids) of the world's shapes' obstacle rows, or why one of them cannot be
    an obstacle."""
    leaves = sum(_leaf_count(placed.shape) for item in world.values() for placed in item.shapes)
    if leaves > MAX_WORLD_LEAVES:
        return f"world meshes' triangles and octrees' boxes number {leaves} (more than MAX_WORLD_LEAVES = " \
               f"{MAX_WORLD_LEAVES})"
    blocks, solids, owners = [_NO_ROWS], [], []
    for object_id, item in world.items():
        for placed in item.shapes:
            T_plan_shape = item.T_parent_object @ placed.T_frame_shape
            if isinstance(placed.shape, (Mesh, Octree)):
                block = _posed_tree_rows(placed.shape, T_plan_shape)
                solids += list(block[0] == BOX)
            else:
                row = _obstacle(placed.shape, T_plan_shape)
                if row is None:
                    return f"world object {object_id!r} holds a {type(placed.shape).__name__}"
                block = (*(np.asarray(column)[None] for column in row), np.ones(1, dtype=np.int64))
                solids.append(isinstance(placed.shape, (Box, Sphere, Cylinder)))
            blocks.append(block)
            owners += [object_id] * len(block[0])
    return tuple(np.concatenate(column) for column in zip(*blocks)), solids, owners


def _leaf_count(shape) -> int:
    """The rows under a shape's tree (``_posed_tree_rows``) that are not NODE rows: 0 for a primitive."""
    if isinstance(shape, Mesh):
        return len(shape.triangles)
    if isinstance(shape, Octree):
        return len(shape.boxes[0])
    return 0


def _posed_tree_rows(shape: Mesh | Octree, T_plan_shape: np.ndarray) -> tuple[np.ndarray, ...]:
    """``_tree_rows`` of a world mesh's triangles or an octree's boxes (``Octree.boxes``) posed by
    ``T_plan_shape``, kept per shape and pose (a scene's other objects change more often than a fixture's mesh)."""
    key = T_plan_shape.tobytes()
    kept = _TREE_ROWS.get(shape)
    if kept is None or kept[0] != key:
        if isinstance(shape, Mesh):
            corners = shape.vertices[shape.triangles] @ T_plan_shape[:3, :3].T + T_plan_shape[:3, 3]
            count = len(corners)
            leaves = (np.full(count, TRIANGLE), np.concatenate([corners, np.zeros((count, 3, 1))], axis=2),
                      np.zeros((count, 3)), corners.min(axis=1), corners.max(axis=1))
        else:
            low, high = shape.boxes
            half = (high - low) / 2
            T_box_plan, lower, upper = _box_rows(T_plan_shape, (low + high) / 2, half)
            leaves = (np.full(len(half), BOX), T_box_plan, half, lower, upper)
        kept = _TREE_ROWS[shape] = (key, _tree_rows(*leaves))
    return kept[1]


def _tree_rows(kinds: np.ndarray, T_obstacle_plan: np.ndarray, sizes: np.ndarray, lowers: np.ndarray,
               uppers: np.ndarray) -> tuple[np.ndarray, ...]:
    """(kinds, T_obstacle_plan, sizes, lowers, uppers, rows of each row's subtree) of leaf rows (a mesh's
    triangles, an octree's boxes) under the NODE rows of their ``bounds_tree``."""
    leaf, lower, upper, subtree = bounds_tree(lowers, uppers)
    is_node = leaf < 0
    kinds_out = np.where(is_node, NODE, kinds[leaf]).astype(np.int64)
    T_out = np.where(is_node[:, None, None], 0.0, T_obstacle_plan[leaf])
    sizes_out = np.where(is_node[:, None], 0.0, sizes[leaf])
    return kinds_out, T_out, sizes_out, lower, upper, subtree


def _box_rows(T_plan_shape: np.ndarray, centres: np.ndarray, halves: np.ndarray) -> tuple[np.ndarray, ...]:
    """(T_box_plan (n, 3, 4), lower and upper axis-aligned bounds (n, 3) each) in the planning frame of n boxes
    with these centres and half extents ((n, 3) each) in the frame of a shape posed by ``T_plan_shape``."""
    R, t = T_plan_shape[:3, :3], T_plan_shape[:3, 3]
    placed = centres @ R.T + t
    reach = halves @ np.abs(R).T
    T_box_plan = np.concatenate([np.broadcast_to(R.T, (len(placed), 3, 3)), (-placed @ R)[:, :, None]], axis=2)
    return T_box_plan, placed - reach, placed + reach


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
        half = np.asarray(shape.size, dtype=float) / 2
        (T_box_plan,), (lower,), (upper,) = _box_rows(T_plan_shape, np.zeros((1, 3)), half[None])
        return BOX, T_box_plan, half, lower, upper
    if isinstance(shape, (Cylinder, Cone)):  # (a cone as its cylinder)
        size = np.array([shape.radius, shape.length / 2, 0.0])
        axis = R[:, 2]
        reach = shape.radius * np.sqrt(np.maximum(1.0 - axis**2, 0.0)) + shape.length / 2 * np.abs(axis)
        return CYLINDER, T_shape_plan, size, t - reach, t + reach
    return None
