"""The pair tables of one scene and configuration version: bodies, their shapes, and the shape pairs to test.

Pairs that can never count are left out once, here: shapes of the same body, pairs of disabled bodies
(adjacent links, the SRDF's disabled pairs, pairs allowed with ``allow_collision``), an attached object
and its link or touch links, and world objects among themselves.
"""
from __future__ import annotations

import functools
import weakref
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from ..model.robot_model import RobotModel
from .bounds_tree import headed_tree
from .convex_kernels import BOX, CONE, CYLINDER, POINT, TREE, UNSUPPORTED, VERTICES, ConvexTable
from .geometry import (
    Box,
    Cone,
    Cylinder,
    GeometryError,
    Mesh,
    Placed,
    Shape,
    Sphere,
    convex_hull,
    local_bounds,
    scaled_and_padded,
)
from .kernel_inputs import PlacementInputs, placement_inputs_of
from .kernels import ShapeTable
from .octree import Octree
from .report import BodyType

#: Triangles of a mesh checked as triangles that the compiled kernels test at most (under a tree of their bounds,
#: about 200 bytes a triangle); a larger mesh's pairs are left to the backend.
MAX_TREE_TRIANGLES = 100_000


@dataclass(frozen=True, eq=False)
class PairTables:
    """Everything one scene/configuration version needs: bodies, their shapes, and the pairs to test."""

    body_names: tuple[str, ...]
    body_types: np.ndarray  # (B,) BodyType
    body_links: np.ndarray  # (B,) link index a body moves with, -1 for world objects
    shape_body: np.ndarray  # (S,)
    shapes: ShapeTable
    geometries: tuple  # (S,) backend geometry of every shape
    pair_involves_world: np.ndarray  # (P,)
    #: (P,) a pair left UNDECIDED by the kernels counts as colliding: a shape is grown by an offset, which the
    #: backend cannot apply where either shape is a mesh checked as triangles or an octree, so its answer could miss
    undecided_collides: np.ndarray
    convex: ConvexTable  # every shape as the compiled narrow phase tests it (``convex_kernels``)
    tree_arrays: tuple  # the robot's ``TreeTable`` arrays, that place its links

    @functools.cached_property
    def masks(self) -> dict[tuple[bool, bool], np.ndarray]:
        """(self_collisions, world) -> which pairs to test."""
        return {(s, w): np.where(self.pair_involves_world, w, s) for s in (False, True) for w in (False, True)}

    @functools.cached_property
    def shape_arrays(self) -> tuple[np.ndarray, ...]:
        """``shapes`` as a plain tuple, for kernel calls (see ``ShapeTable``)."""
        return tuple(self.shapes)

    @functools.cached_property
    def placement(self) -> PlacementInputs:
        """The robot's tree, ``shapes`` and ``convex`` as one object for ``kernels.place_and_cull``."""
        return placement_inputs_of(self.tree_arrays, self.shape_arrays, tuple(self.convex))

    @functools.cached_property
    def pair_geometries(self) -> PairGeometries:
        """(backend geometry of shape a, of shape b) of every pair, by pair index."""
        return PairGeometries(self.geometries, self.shapes.pairs)

    def body_pair(self, p: int) -> tuple[str, str]:
        """Names of the two bodies of pair p."""
        a, b = self.shapes.pairs[p]
        return self.body_names[self.shape_body[a]], self.body_names[self.shape_body[b]]


class PairGeometries:
    """``pair_geometries[p]``: (backend geometry of shape a, of shape b) of pair p, looked up when asked (a
    table of every pair would be quadratic in the shapes)."""

    def __init__(self, geometries: tuple, pairs: np.ndarray):
        self._geometries = geometries
        self._pairs = pairs

    def __getitem__(self, p: int) -> tuple[object, object]:
        a, b = self._pairs[p]
        return self._geometries[a], self._geometries[b]

    def __len__(self) -> int:
        return len(self._pairs)


class TableBuilder:
    """Builds ``PairTables`` of a robot's link geometry and a scene's objects; keeps the backend geometry of
    every shape it built (per scale, padding and hull), so rebuilding after a scene change is cheap.

    ``mesh_mode`` "convex_hull" checks a robot link mesh as the hull of its grown hull (a flat mesh as its
    triangles); meshes of world and attached objects are always checked as triangles."""

    def __init__(self, model: RobotModel, link_geometry: Mapping[str, tuple[Placed, ...]], backend, mesh_mode: str):
        self.link_geometry = link_geometry
        self.backend = backend
        self.mesh_mode = mesh_mode
        self._link_index = {name: i for i, name in enumerate(model.link_names)}
        self._tree_arrays = model.tree.table_arrays
        #: shape -> {(scale, padding, hull): (local bounds, backend geometry)}; an entry goes with its shape, so the
        #: geometry of a removed world object (a bounding-volume tree of a large mesh) is freed with the object.
        self._geometry_cache: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

    def build(self, world: Mapping, attached: Mapping, scale: Mapping[str, float], padding: Mapping[str, float],
              disabled_pairs: Mapping[frozenset[str], str], offset: Mapping[str, float] | None = None) -> PairTables:
        """Tables of the robot's links (grown by their ``scale`` and ``padding`` [m], then by their ``offset`` [m]:
        ``CollisionChecker.set_offset``), the attached objects (grown by their own ``offset``, by id) and the world
        objects; pairs in ``disabled_pairs`` are left out."""
        offset = offset or {}
        bodies: list[tuple[str, BodyType, int]] = []
        rows: list[tuple] = []  # body, link, T_parent_shape, bounds, geometry, convex (``_convex_row``)
        grown, growable = [], []  # per row: grown by an offset; one the backend grows exactly

        def add(body: int, link: int, T_parent_shape: np.ndarray, shape: Shape, scale=1.0, padding=0.0,
                robot_link=False, offset=0.0) -> None:
            rows.append((body, link, T_parent_shape,
                         *self._geometry(shape, scale, padding, robot_link and self.mesh_mode == "convex_hull",
                                         offset)))
            grown.append(offset > 0.0)
            growable.append(not isinstance(shape, (Mesh, Octree)) or rows[-1][5][0] == VERTICES)

        for link, placed in self.link_geometry.items():
            bodies.append((link, BodyType.ROBOT_LINK, self._link_index[link]))
            for item in placed:
                add(len(bodies) - 1, self._link_index[link], item.T_frame_shape, item.shape, scale[link],
                    padding[link], robot_link=True, offset=offset.get(link, 0.0))
        for object_id, item in attached.items():
            bodies.append((object_id, BodyType.ROBOT_ATTACHED, self._link_index[item.link]))
            for shape in item.object.shapes:
                add(len(bodies) - 1, self._link_index[item.link], item.object.T_parent_object @ shape.T_frame_shape,
                    shape.shape, offset=offset.get(object_id, 0.0))
        for object_id, item in world.items():
            bodies.append((object_id, BodyType.WORLD_OBJECT, -1))
            for shape in item.shapes:
                add(len(bodies) - 1, -1, item.T_parent_object @ shape.T_frame_shape, shape.shape)
        pairs, involves_world = _pairs(bodies, np.array([row[0] for row in rows], dtype=np.int64), attached,
                                       disabled_pairs)
        grown, growable = np.array(grown, dtype=bool), np.array(growable, dtype=bool)
        first, second = pairs[:, 0], pairs[:, 1]
        shapes = ShapeTable(
            link=np.array([row[1] for row in rows], dtype=np.int64),
            T_parent_shape=np.array([row[2] for row in rows], dtype=float).reshape(-1, 4, 4),
            centers=np.array([np.zeros(3) if row[3] is None else row[3][0] for row in rows],
                             dtype=float).reshape(-1, 3),
            halves=np.array([np.full(3, -1.0) if row[3] is None else row[3][1] for row in rows],
                            dtype=float).reshape(-1, 3),
            pairs=pairs,
        )
        return PairTables(
            body_names=tuple(b[0] for b in bodies),
            body_types=np.array([int(b[1]) for b in bodies], dtype=np.int64),
            body_links=np.array([b[2] for b in bodies], dtype=np.int64),
            shape_body=np.array([row[0] for row in rows], dtype=np.int64),
            shapes=shapes,
            geometries=tuple(row[4] for row in rows),
            pair_involves_world=involves_world,
            undecided_collides=(grown[first] | grown[second]) & ~(growable[first] & growable[second]),
            convex=convex_table([row[5] for row in rows]),
            tree_arrays=self._tree_arrays,
        )

    def _geometry(self, shape: Shape, scale: float, padding: float, hull: bool, offset: float = 0.0):
        """(local bounds, backend geometry, convex row) of a shape grown by scale and padding, then by ``offset`` (the
        backend's exact growth), built once per (shape, scale, padding, hull, offset). With ``hull``, a mesh is
        checked as the hull of its grown hull (flat meshes as triangles)."""
        key = (scale, padding, hull, offset)
        per_shape = self._geometry_cache.get(shape)
        if per_shape is None:
            per_shape = self._geometry_cache.setdefault(shape, {})
        cached = per_shape.get(key)
        if cached is None and offset > 0.0:
            (center, halves), geometry, (kind, size, margin, *hull_rows) = self._geometry(shape, scale, padding, hull)
            # (a tree is grown by its margin in the kernels; the backend cannot grow it, and what the kernels
            # leave undecided against it counts as colliding: ``PairTables.undecided_collides``)
            cached = per_shape[key] = ((center, halves + offset),
                                       geometry if kind == TREE else self.backend.offset(geometry, offset),
                                       (kind, size, margin + offset, *hull_rows))
        if cached is None:
            as_convex = hull and isinstance(shape, Mesh)
            grown = scaled_and_padded(shape, scale, padding)
            if as_convex:
                try:
                    grown = convex_hull(scaled_and_padded(convex_hull(shape), scale, padding))
                except GeometryError:  # a flat mesh: check its triangles
                    as_convex = False
            cached = per_shape[key] = (local_bounds(grown), self.backend.geometry(grown, as_convex),
                                       _convex_row(grown, as_convex))
        return cached


def _convex_row(shape: Shape, as_convex: bool) -> tuple:
    """(kind, size, margin, vertices, neighbours, tree) of a shape as ``convex_kernels`` tests it (``convex_table``):
    a mesh as the hull of its vertices when it is checked as convex (``hull_neighbours`` of its triangles), else as
    its triangles under a tree (``_triangle_tree``), an octree as its boxes under a tree; UNSUPPORTED for planes."""
    if isinstance(shape, Sphere):
        return POINT, (0.0, 0.0, 0.0), float(shape.radius), None, None, None
    if isinstance(shape, Box):
        return BOX, tuple(float(s) / 2 for s in shape.size), 0.0, None, None, None
    if isinstance(shape, (Cylinder, Cone)):
        return (CYLINDER if isinstance(shape, Cylinder) else CONE, (shape.radius, shape.length / 2, 0.0), 0.0, None,
                None, None)
    if isinstance(shape, Mesh) and as_convex:
        vertices = np.asarray(shape.vertices, dtype=float).reshape(-1, 3)
        return VERTICES, (0.0, 0.0, 0.0), 0.0, vertices, hull_neighbours(
            len(vertices), np.asarray(shape.triangles, dtype=np.int64).reshape(-1, 3)), None
    if isinstance(shape, Octree):
        _, lower, upper, skip = headed_tree(*shape.boxes)
        return TREE, (0.0, 0.0, 0.0), 0.0, None, None, (lower, upper, skip, np.full(len(skip), -1, dtype=np.int64))
    if tested_as_tree(shape):
        return (TREE, (0.0, 0.0, 0.0), 0.0, *_triangle_tree(np.asarray(shape.vertices, dtype=float).reshape(-1, 3),
                                                            np.asarray(shape.triangles, dtype=np.int64).reshape(-1, 3)))
    return UNSUPPORTED, (0.0, 0.0, 0.0), 0.0, None, None, None


def tested_as_tree(shape: Shape) -> bool:
    """Whether the kernels test an octree or a mesh checked as its triangles leaf by leaf (``convex_kernels.TREE``),
    growing a shape against it exactly: every octree, a mesh of at most MAX_TREE_TRIANGLES triangles."""
    return isinstance(shape, Octree) or (isinstance(shape, Mesh) and len(shape.triangles) <= MAX_TREE_TRIANGLES)


def _triangle_tree(vertices: np.ndarray, triangles: np.ndarray) -> tuple:
    """(corners (3T, 3), their neighbours (``hull_neighbours``' form), tree (lower, upper, skip, leaf)) of a mesh's
    T triangles: each triangle its own three corners, joined to each other as a hull, under a ``headed_tree`` of
    their bounds whose leaf rows give their first corner's row."""
    corners = vertices[triangles]
    first = 3 * np.arange(len(triangles))
    neighbours = (first[:, None, None] + np.array([[1, 2], [0, 2], [0, 1]])).ravel()
    leaf, lower, upper, skip = headed_tree(corners.min(axis=1), corners.max(axis=1))
    return (corners.reshape(-1, 3), (np.arange(0, len(neighbours) + 1, 2, dtype=np.int64), neighbours.astype(np.int64)),
            (lower, upper, skip, np.where(leaf >= 0, 3 * leaf, -1).astype(np.int64)))


def hull_neighbours(count: int, triangles: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(neighbour_first (count + 1,), neighbours) of a hull's ``count`` vertices: vertex i's neighbours along the
    edges of ``triangles`` (T, 3) are neighbours[neighbour_first[i]:neighbour_first[i + 1]], each once, in order
    (built once per shape: sorting a Kinova's edges took 80 ms a table)."""
    starts = np.concatenate([triangles[:, 0], triangles[:, 1], triangles[:, 2]])
    ends = np.concatenate([triangles[:, 1], triangles[:, 2], triangles[:, 0]])
    keys = np.unique(np.concatenate([starts * count + ends, ends * count + starts]))  # both ways, each once
    first, neighbours = np.divmod(keys, max(count, 1))
    return np.searchsorted(first, np.arange(count + 1)).astype(np.int64), neighbours.astype(np.int64)


def convex_table(rows: list[tuple]) -> ConvexTable:
    """``ConvexTable`` of shapes given as rows (kind, size, margin, vertices, neighbours, tree) (``_convex_row``), in
    order."""
    counts = np.array([0 if row[3] is None else len(row[3]) for row in rows], dtype=np.int64)
    vertex_first = np.cumsum(counts) - counts
    tree_counts = np.array([0 if row[5] is None else len(row[5][2]) for row in rows], dtype=np.int64)
    tree_first = np.cumsum(tree_counts) - tree_counts
    vertices, neighbour_first, neighbours = _joined_hulls([row[3:5] for row in rows if row[3] is not None])
    trees = [(row[5], vertex_first[k]) for k, row in enumerate(rows) if row[5] is not None]
    return ConvexTable(kind=np.array([row[0] for row in rows], dtype=np.int64),
                       size=np.array([row[1] for row in rows], dtype=float).reshape(-1, 3),
                       margin=np.array([row[2] for row in rows], dtype=float),
                       first=np.where(tree_counts > 0, tree_first, vertex_first).astype(np.int64), vertices=vertices,
                       neighbour_first=neighbour_first, neighbours=neighbours,
                       tree_lower=np.concatenate([tree[0] for tree, _ in trees] or [np.zeros((0, 3))]),
                       tree_upper=np.concatenate([tree[1] for tree, _ in trees] or [np.zeros((0, 3))]),
                       tree_skip=np.concatenate([tree[2] for tree, _ in trees] or [np.zeros(0)]).astype(np.int64),
                       tree_leaf=np.concatenate([np.where(tree[3] >= 0, tree[3] + start, -1) for tree, start in trees]
                                                or [np.zeros(0)]).astype(np.int64))


#: Hulls joined by ``_joined_hulls``: (the vertices arrays, in order) -> (those arrays, the joined arrays).
_JOINED: dict[tuple[int, ...], tuple[tuple[np.ndarray, ...], tuple]] = {}
MAX_JOINED = 8


def _joined_hulls(hulls: list[tuple]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(vertices, neighbour_first, neighbours) of the hulls (vertices, (neighbour_first, neighbours)) one after the
    other; kept for the same hulls (the same arrays, in order), as the tables of a checker's grown copies have them
    (joining a Kinova's 9,000 vertices took half of each such table's build)."""
    key = tuple(id(vertices) for vertices, _ in hulls)
    kept = _JOINED.get(key)
    if kept is not None and all(a is b for a, (b, _) in zip(kept[0], hulls)):
        return kept[1]
    counts = [len(vertices) for vertices, _ in hulls]
    edge_counts = [len(neighbours) for _, (_, neighbours) in hulls]
    vertex_first, edge_first = np.cumsum(counts) - counts, np.cumsum(edge_counts) - edge_counts
    joined = (np.ascontiguousarray(np.concatenate([vertices for vertices, _ in hulls]) if hulls else np.zeros((0, 3)),
                                   dtype=float),
              np.concatenate([*(first[:-1] + offset for (_, (first, _)), offset in zip(hulls, edge_first)),
                              [sum(edge_counts)]]).astype(np.int64),
              np.concatenate([neighbours + start for (_, (_, neighbours)), start in zip(hulls, vertex_first)]
                             or [np.zeros(0, dtype=np.int64)]).astype(np.int64))
    if len(_JOINED) >= MAX_JOINED:
        _JOINED.clear()
    _JOINED[key] = (tuple(vertices for vertices, _ in hulls), joined)
    return joined


def _pairs(bodies: list[tuple[str, BodyType, int]], shape_body: np.ndarray, attached: Mapping,
           disabled_pairs: Mapping[frozenset[str], str]) -> tuple[np.ndarray, np.ndarray]:
    """((P, 2) shape index pairs i < j to test, (P,) whether each involves a world object), in row order.

    Bodies come links first, then attached objects, then world objects, each body's shapes in consecutive rows.
    The body pairs to test are marked in an (R, B) table of the R robot bodies (links and attached objects)
    against every body (world objects among themselves never count, so a large world costs no quadratic table),
    then the shape pairs of those body pairs are enumerated with numpy: no Python work per pair."""
    index: dict[str, list[int]] = {}  # name -> its bodies (an object may be named like a link)
    for b, (name, _, _) in enumerate(bodies):
        index.setdefault(name, []).append(b)
    types = np.array([int(body_type) for _, body_type, _ in bodies], dtype=np.int64)
    world = types == BodyType.WORLD_OBJECT
    robot = len(bodies) - int(np.count_nonzero(world))
    tested = np.triu(np.ones((robot, len(bodies)), dtype=bool), k=1)  # (a, b), a < b: each body pair once

    def leave_out(a: int, b: int) -> None:
        if min(a, b) < robot:
            tested[min(a, b), max(a, b)] = False

    for pair in disabled_pairs:
        if len(pair) == 2:
            name_a, name_b = tuple(pair)
            for a in index.get(name_a, ()):
                for b in index.get(name_b, ()):
                    leave_out(a, b)
    for object_id, item in attached.items():  # an attached object and its link or touch links
        body = next(b for b in index[object_id] if types[b] == BodyType.ROBOT_ATTACHED)
        for link in item.touch_links | {item.link}:
            for other in index.get(link, ()):
                if types[other] == BodyType.ROBOT_LINK:
                    leave_out(body, other)
    body_a, body_b = np.nonzero(tested)
    counts = np.bincount(shape_body, minlength=len(bodies))
    first = np.cumsum(counts) - counts
    sizes = counts[body_a] * counts[body_b]
    of_pair = np.repeat(np.arange(len(sizes)), sizes)
    offset = np.arange(int(sizes.sum())) - np.repeat(np.cumsum(sizes) - sizes, sizes)
    i = first[body_a][of_pair] + offset // counts[body_b][of_pair]
    j = first[body_b][of_pair] + offset % counts[body_b][of_pair]
    order = np.lexsort((j, i))
    i, j = i[order], j[order]
    return np.stack([i, j], axis=1).astype(np.int64).reshape(-1, 2), world[shape_body[i]] | world[shape_body[j]]


def adjacent_link_pairs(model: RobotModel, link_geometry: Mapping[str, object]) -> set[frozenset[str]]:
    """Links with geometry joined by a joint, directly or through links without geometry (whose
    neighbours all count as adjacent to each other), as MoveIt Setup Assistant defines adjacency.

    Linear in the links (plus the pairs returned): the links without geometry joined by joints form groups, and
    the links with geometry around one group are adjacent to each other."""
    group_of: dict[str, str] = {}  # link without geometry -> the first (parent-most) link of its group
    if model.root_link not in link_geometry:
        group_of[model.root_link] = model.root_link
    pairs: set[frozenset[str]] = set()
    around: dict[str, set[str]] = {}  # group -> the links with geometry joined to it
    for joint in model.description.joints:  # parent-first: a parent's group is known before its children
        parent, child = joint.parent, joint.child
        if child not in link_geometry:
            group_of[child] = group_of.get(parent, child)
            if parent in link_geometry:
                around.setdefault(child, set()).add(parent)
        elif parent in link_geometry:
            pairs.add(frozenset((parent, child)))
        else:
            around.setdefault(group_of[parent], set()).add(child)
    for links in around.values():
        pairs.update(frozenset((a, b)) for a in links for b in links if a < b)
    return pairs
