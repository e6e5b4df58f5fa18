"""Collision checking of robot states: self-collision, world objects and attached objects, with contacts.

How a check runs: one compiled kernel places every shape for the joint values (forward kinematics over
the whole tree) and culls shape pairs whose bounding boxes do not overlap (world-aligned boxes, then
oriented ones by a separating-axis test); the remaining pairs go to coal (hpp-fcl's successor) for the
exact test, and for contacts when asked. Pairs that can never count are left out once, when the checker
(re)builds its tables: adjacent links, the SRDF's disabled pairs, pairs allowed with ``allow_collision``,
an attached object and its link or touch links, and world objects among themselves.

Joint values: a mapping joint -> value, or a vector in ``variable_names`` order (every single-DOF joint
that mimics no other). Mimic joints follow their master; floating and planar joints stay at zero.
Lengths in [m]; positions and normals in the planning frame (the robot's root link).
"""
from __future__ import annotations

import copy
import functools
import math
import threading
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import IntEnum

import numpy as np

from ..compiled import compiled_kernel
from ..errors import ErrorCode, KinematicsError, Verdict
from ..model.robot_model import RobotModel
from ..model.srdf import SemanticModel
from ..model.urdf import SINGLE_DOF_JOINT_TYPES
from .geometry import (
    GeometryError,
    Mesh,
    Placed,
    Plane,
    Shape,
    convex_hull,
    local_bounds,
    robot_collision_geometry,
    scaled_and_padded,
)
from .scene import PlanningScene

#: How robot link meshes are checked: their convex hull (fast GJK/EPA, conservative) or their triangles (a BVH).
MESH_MODES = ("convex_hull", "mesh")
#: Configurations placed per kernel call in batch checks (bounds the (N, pairs, 3, 4) transform buffer).
BATCH_CHUNK = 1024


class BodyType(IntEnum):
    """moveit_msgs/ContactInformation body types."""

    ROBOT_LINK = 0
    WORLD_OBJECT = 1
    ROBOT_ATTACHED = 2


@dataclass(frozen=True, eq=False)
class Contact:
    """One contact: ``normal`` (unit) points from body_1 into body_2; ``depth`` [m] is the penetration."""

    body_1: str
    type_1: BodyType
    body_2: str
    type_2: BodyType
    position: np.ndarray
    normal: np.ndarray
    depth: float


@dataclass(frozen=True)
class CollisionReport:
    """Outcome of one check: the colliding body pairs, and their contacts when they were asked for."""

    in_collision: bool
    pairs: tuple[tuple[str, str], ...] = ()
    contacts: tuple[Contact, ...] = ()

    def describe(self) -> str:
        return ", ".join(f"{a} - {b}" for a, b in self.pairs) if self.pairs else "no collision"


class CoalBackend:
    """Narrow phase with coal. ``T_a_b`` (3x4 or 4x4) is body b's shape pose in body a's shape frame."""

    name = "coal"

    def __init__(self):
        import coal

        self._coal = coal
        self._identity = coal.Transform3s()
        self._request = coal.CollisionRequest()

    def geometry(self, shape: Shape, as_convex: bool):
        coal = self._coal
        if isinstance(shape, Mesh):
            points = coal.StdVec_Vec3s()
            points.extend(list(np.asarray(shape.vertices, dtype=float)))
            if as_convex:
                triangles = coal.StdVec_Triangle()
                triangles.extend([coal.Triangle(int(a), int(b), int(c)) for a, b, c in shape.triangles])
                return coal.Convex(points, triangles)
            model = coal.BVHModelOBBRSS()
            model.beginModel(len(shape.triangles), len(shape.vertices))
            model.addVertices(np.asarray(shape.vertices, dtype=float))
            model.addTriangles(np.asarray(shape.triangles, dtype=np.int64))
            model.endModel()
            return model
        if isinstance(shape, Plane):
            a, b, c, d = shape.coefficients
            return coal.Plane(np.array([a, b, c]), -d)
        kind = type(shape).__name__
        if kind == "Box":
            return coal.Box(*shape.size)
        if kind == "Sphere":
            return coal.Sphere(shape.radius)
        return getattr(coal, kind)(shape.radius, shape.length)  # Cylinder, Cone

    def collide(self, geometry_a, geometry_b, T_a_b: np.ndarray) -> bool:
        result = self._coal.CollisionResult()
        return self._coal.collide(geometry_a, self._identity, geometry_b,
                                  self._coal.Transform3s(T_a_b[:3, :3], T_a_b[:3, 3]), self._request, result) > 0

    def contacts(self, geometry_a, geometry_b, T_a_b: np.ndarray, max_contacts: int):
        """[(position, normal from a to b, depth)] in a's frame; empty when apart."""
        coal = self._coal
        request = coal.CollisionRequest(coal.CollisionRequestFlag.CONTACT, max_contacts)
        result = coal.CollisionResult()
        coal.collide(geometry_a, self._identity, geometry_b, coal.Transform3s(T_a_b[:3, :3], T_a_b[:3, 3]),
                     request, result)
        return [(np.array(c.pos), np.array(c.normal), max(0.0, -float(c.penetration_depth)))
                for c in result.getContacts()]


@dataclass(frozen=True, eq=False)
class _Tables:
    """Everything one scene/configuration version needs: shapes, their bodies, and the pairs to test."""

    body_names: tuple[str, ...]
    body_types: np.ndarray  # (B,) BodyType
    body_links: np.ndarray  # (B,) link index a body moves with, -1 for world objects
    shape_body: np.ndarray  # (S,)
    shape_link: np.ndarray  # (S,) link index, -1 for world-fixed shapes
    T_parent_shape: np.ndarray  # (S, 4, 4) in the link frame, or the planning frame when world-fixed
    centers: np.ndarray  # (S, 3) local bounding-box centre
    halves: np.ndarray  # (S, 3) local half extents; -1 for unbounded shapes (planes)
    geometries: tuple
    pairs: np.ndarray  # (P, 2) shape indices, the tested pairs
    pair_involves_world: np.ndarray  # (P,)

    @functools.cached_property
    def masks(self) -> dict[tuple[bool, bool], np.ndarray]:
        """(self_collisions, world) -> which pairs to test."""
        return {(s, w): np.where(self.pair_involves_world, w, s) for s in (False, True) for w in (False, True)}


class CollisionChecker:
    """Collision checks for one robot, its semantic model (disabled pairs) and a planning scene.

    ``geometry`` overrides the URDF's collision shapes (link -> ``Placed`` shapes); meshes in the URDF are
    resolved against ``base_dir`` and ``package_paths`` (see ``collision_geometry``). ``padding`` [m] and
    ``scale`` apply to every link, as MoveIt's robot padding and scale; change them per link with
    ``set_padding`` / ``set_scale``. ``mesh_mode`` says how the robot's link meshes are checked (see
    MESH_MODES); meshes of world and attached objects are always checked as triangles, so a bin stays
    hollow (as in MoveIt). Thread-safe: checks may run concurrently with scene updates.
    """

    def __init__(self, model: RobotModel, semantic: SemanticModel | None = None, scene: PlanningScene | None = None,
                 *, geometry: Mapping[str, Sequence[Placed]] | None = None, base_dir=None, package_paths=None,
                 mesh_mode: str = "convex_hull", padding: float = 0.0, scale: float = 1.0, backend=None):
        if mesh_mode not in MESH_MODES:
            raise GeometryError(f"mesh_mode must be one of {list(MESH_MODES)}; got {mesh_mode!r}")
        self.model = model
        self.scene = scene if scene is not None else PlanningScene(model)
        if self.scene.robot_model is not model:
            raise KinematicsError("the planning scene belongs to another RobotModel instance")
        self.mesh_mode = mesh_mode
        self.backend = backend or CoalBackend()
        if geometry is None:
            if not model.urdf_xml:
                raise GeometryError("the robot model carries no URDF text to read <collision> elements from; "
                                    "pass geometry= explicitly")
            geometry = robot_collision_geometry(model.urdf_xml, base_dir=base_dir, package_paths=package_paths)
        for link in geometry:
            model.check_link(link)
        self.link_geometry: dict[str, tuple[Placed, ...]] = {k: tuple(v) for k, v in geometry.items() if v}
        self._lock = threading.Lock()
        self._padding = {link: float(padding) for link in self.link_geometry}
        self._scale = {link: float(scale) for link in self.link_geometry}
        self._check_growth(padding, scale)
        self._geometry_cache: dict = {}
        self._config_version = 0
        self._tables: tuple[tuple[int, int], _Tables] | None = None
        self._link_index = {name: i for i, name in enumerate(model.link_names)}
        self._build_kinematics()
        #: Link pairs never checked, with the reason ("adjacent", the SRDF's reason, "allowed").
        self.disabled_pairs: dict[frozenset[str], str] = {pair: "adjacent" for pair in adjacent_link_pairs(
            model, self.link_geometry)}
        if semantic is not None:
            for pair in semantic.disabled_collisions:
                self.disabled_pairs.setdefault(pair, semantic.disabled_collision_reasons.get(pair) or "srdf")

    def for_scene(self, scene: PlanningScene) -> CollisionChecker:
        """A checker of the same robot, geometry, allowed pairs, padding and scale for another scene (e.g.
        ``scene.copy()`` with a request's attached objects); shares the built geometry, so it is cheap."""
        if scene.robot_model is not self.model:
            raise KinematicsError("the planning scene belongs to another RobotModel instance")
        other = copy.copy(self)
        other.scene, other._tables = scene, None
        other.disabled_pairs, other._padding, other._scale = dict(self.disabled_pairs), dict(self._padding), \
            dict(self._scale)
        return other

    # ------------------------------------------------------------------ configuration
    @property
    def variable_names(self) -> tuple[str, ...]:
        return self._variables

    def allow_collision(self, body_1: str, body_2: str, reason: str = "allowed") -> None:
        """Never check this pair of links / object ids (MoveIt's allowed collision matrix)."""
        with self._lock:
            self.disabled_pairs[frozenset((body_1, body_2))] = reason
            self._config_version += 1

    def disallow_collision(self, body_1: str, body_2: str) -> None:
        with self._lock:
            self.disabled_pairs.pop(frozenset((body_1, body_2)), None)
            self._config_version += 1

    def set_padding(self, padding: float, links: Iterable[str] | None = None) -> None:
        """Padding [m] added on every side of these links' shapes (all links with geometry when None)."""
        self._set_growth(self._padding, padding, links, "padding")

    def set_scale(self, scale: float, links: Iterable[str] | None = None) -> None:
        """Scale factor of these links' shapes about their own origins (mesh: about the vertex centroid)."""
        self._set_growth(self._scale, scale, links, "scale")

    def padding(self, link: str) -> float:
        return self._padding.get(link, 0.0)

    def scale(self, link: str) -> float:
        return self._scale.get(link, 1.0)

    def _set_growth(self, table: dict, value: float, links, what: str) -> None:
        self._check_growth(value if what == "padding" else 0.0, value if what == "scale" else 1.0)
        links = list(self.link_geometry) if links is None else list(links)
        for link in links:
            if link not in self.link_geometry:
                self.model.check_link(link)
                raise GeometryError(f"link {link!r} has no collision geometry; links with geometry are "
                                    f"{sorted(self.link_geometry)}")
        with self._lock:
            table.update({link: float(value) for link in links})
            self._config_version += 1

    @staticmethod
    def _check_growth(padding: float, scale: float) -> None:
        if not (math.isfinite(padding) and padding >= 0.0):
            raise GeometryError(f"padding must be finite and >= 0 [m]; got {padding!r}")
        if not (math.isfinite(scale) and scale > 0.0):
            raise GeometryError(f"scale must be finite and > 0; got {scale!r}")

    # ------------------------------------------------------------------ joint values
    def state_vector(self, joint_positions: Mapping[str, float] | Sequence[float] | np.ndarray | None = None,
                     base: np.ndarray | None = None) -> np.ndarray:
        """A vector in ``variable_names`` order: a full vector as is, or a mapping over ``base`` (default:
        every joint at zero clamped into its limits). Unknown joints raise UnknownJointError."""
        if joint_positions is not None and not isinstance(joint_positions, Mapping):
            q = np.asarray(joint_positions, dtype=float)
            if q.shape != (len(self._variables),):
                raise KinematicsError(f"a joint vector needs {len(self._variables)} values for "
                                      f"{list(self._variables)}; got shape {q.shape}")
            return q
        q = (self._default if base is None else base).copy()
        for name, value in (joint_positions or {}).items():
            if name in self._variable_index:
                q[self._variable_index[name]] = float(value)
            else:
                self.model.check_joint(name)  # raises for unknown joints; mimic/multi-DOF values are ignored
        return q

    def binding(self, joint_names: Sequence[str], base_state=None) -> tuple[np.ndarray, np.ndarray]:
        """(base vector, indices of ``joint_names`` in it) to embed a group's joint vector in a full state."""
        base = self.state_vector(base_state)
        indices = []
        for name in joint_names:
            if name not in self._variable_index:
                self.model.check_joint(name)
                raise KinematicsError(f"joint {name!r} mimics another joint or is not single-DOF: it cannot be "
                                      f"set directly")
            indices.append(self._variable_index[name])
        return base, np.array(indices, dtype=np.int64)

    def links_moved_by(self, joint_names: Iterable[str]) -> frozenset[str]:
        """Links whose pose depends on any of these joints (MoveIt's 'updated links' of a group)."""
        moving, names = set(), set(joint_names)
        for joint in self.model.description.joints:
            if joint.name in names or joint.parent in moving or (joint.mimic and joint.mimic.joint in names):
                moving.add(joint.child)
        return frozenset(moving)

    # ------------------------------------------------------------------ checks
    def is_colliding(self, state, *, self_collisions: bool = True, world: bool = True) -> bool:
        """True when the state collides (fast: stops at the first colliding pair)."""
        tables = self._current_tables()
        q = self.state_vector(state).reshape(1, -1)
        transforms, candidates = self._place(tables, q)
        mask = self._pair_mask(tables, self_collisions, world, None)
        return any(self._collide(tables, p, transforms[0, p]) for p in np.flatnonzero(candidates[0] & mask))

    def check(self, state, *, contacts: bool = False, max_contacts: int = 64, max_contacts_per_pair: int = 1,
              self_collisions: bool = True, world: bool = True, links: Iterable[str] | None = None) -> CollisionReport:
        """Every colliding body pair of a state, and up to ``max_contacts`` contacts when ``contacts``.

        ``links`` limits the check to pairs with at least one of these links (or an object attached to one),
        as MoveIt limits a check to a group.
        """
        tables = self._current_tables()
        q = self.state_vector(state).reshape(1, -1)
        transforms, candidates = self._place(tables, q)
        mask = self._pair_mask(tables, self_collisions, world, links)
        pairs, found = [], []
        for p in np.flatnonzero(candidates[0] & mask):
            a, b = tables.pairs[p]
            if contacts and len(found) < max_contacts:
                hits = self.backend.contacts(tables.geometries[a], tables.geometries[b], transforms[0, p],
                                             max_contacts_per_pair)
                if not hits:
                    continue
                found += self._contacts(tables, q, a, b, hits)[:max_contacts - len(found)]
            elif not self._collide(tables, p, transforms[0, p]):
                continue
            pair = (tables.body_names[tables.shape_body[a]], tables.body_names[tables.shape_body[b]])
            if pair not in pairs:
                pairs.append(pair)
        return CollisionReport(bool(pairs), tuple(pairs), tuple(found))

    def check_batch(self, states: np.ndarray, *, joint_names: Sequence[str] | None = None, base_state=None,
                    self_collisions: bool = True, world: bool = True) -> np.ndarray:
        """(N,) bool: which of N states collide. ``states`` is (N, len(variable_names)), or (N, len(joint_names))
        embedded in ``base_state``. One compiled call places and culls all of them."""
        Q = self._full_states(states, joint_names, base_state)
        tables = self._current_tables()
        mask = self._pair_mask(tables, self_collisions, world, None)
        colliding = np.zeros(len(Q), dtype=bool)
        for start in range(0, len(Q), BATCH_CHUNK):
            transforms, candidates = self._place(tables, Q[start:start + BATCH_CHUNK])
            for k, p in np.argwhere(candidates & mask):
                if not colliding[start + k] and self._collide(tables, p, transforms[k, p]):
                    colliding[start + k] = True
        return colliding

    def link_pair_collisions(self, states: np.ndarray) -> tuple[list[tuple[str, str]], np.ndarray]:
        """Self-collision of every pair of links with geometry, disabled or not, for N states:
        (link pairs, (N, pairs) bool). For proposing disabled pairs (``collision_matrix``)."""
        Q = self._full_states(states, None, None)
        tables = self._robot_tables()
        body_pairs = [tuple(sorted((tables.body_names[tables.shape_body[a]], tables.body_names[tables.shape_body[b]])))
                      for a, b in tables.pairs]
        column_of = {pair: k for k, pair in enumerate(dict.fromkeys(body_pairs))}
        column = np.array([column_of[pair] for pair in body_pairs], dtype=np.int64)
        hits = np.zeros((len(Q), len(column_of)), dtype=bool)
        for start in range(0, len(Q), BATCH_CHUNK):
            transforms, candidates = self._place(tables, Q[start:start + BATCH_CHUNK])
            for k, p in np.argwhere(candidates):
                if not hits[start + k, column[p]] and self._collide(tables, p, transforms[k, p]):
                    hits[start + k, column[p]] = True
        return list(column_of), hits

    def validity(self, joint_names: Sequence[str], base_state=None) -> CollisionValidity:
        """An IK validity check for a group's joint vector (see ``CollisionValidity``)."""
        return CollisionValidity(self, joint_names, base_state)

    # ------------------------------------------------------------------ internals
    def _full_states(self, states, joint_names, base_state) -> np.ndarray:
        Q = np.asarray(states, dtype=float)
        if joint_names is None:
            if base_state is not None:
                raise KinematicsError("base_state needs joint_names: it fills the joints the states do not set")
            joint_names = self._variables
        if Q.ndim != 2 or Q.shape[1] != len(joint_names):
            raise KinematicsError(f"states must have shape (N, {len(joint_names)}) for joints {list(joint_names)}; "
                                  f"got {Q.shape}")
        if tuple(joint_names) == self._variables:
            return np.ascontiguousarray(Q)
        base, indices = self.binding(joint_names, base_state)
        full = np.tile(base, (len(Q), 1))
        full[:, indices] = Q
        return full

    def _collide(self, tables: _Tables, p: int, T_a_b: np.ndarray) -> bool:
        a, b = tables.pairs[p]
        return self.backend.collide(tables.geometries[a], tables.geometries[b], T_a_b)

    def _contacts(self, tables: _Tables, q: np.ndarray, a: int, b: int, hits) -> list[Contact]:
        T_plan_a = _shape_pose(self, tables, q[0], a)
        body_a, body_b = tables.shape_body[a], tables.shape_body[b]
        return [Contact(tables.body_names[body_a], BodyType(tables.body_types[body_a]), tables.body_names[body_b],
                        BodyType(tables.body_types[body_b]), T_plan_a[:3, :3] @ position + T_plan_a[:3, 3],
                        T_plan_a[:3, :3] @ normal, depth) for position, normal, depth in hits]

    def _pair_mask(self, tables: _Tables, self_collisions: bool, world: bool, links) -> np.ndarray:
        if links is None:
            return tables.masks[(self_collisions, world)]
        mask = np.where(tables.pair_involves_world, world, self_collisions)
        if links is not None:
            indices = set()
            for link in links:
                self.model.check_link(link)
                indices.add(self._link_index[link])
            moving = np.isin(tables.body_links, list(indices))
            body = tables.shape_body[tables.pairs]
            mask &= moving[body[:, 0]] | moving[body[:, 1]]
        return mask

    def _place(self, tables: _Tables, Q: np.ndarray):
        count, pairs = len(Q), len(tables.pairs)
        transforms = np.empty((count, pairs, 3, 4))
        candidates = np.zeros((count, pairs), dtype=np.bool_)
        place_and_cull(np.ascontiguousarray(Q), *self._kinematics, tables.shape_link, tables.T_parent_shape,
                       tables.centers, tables.halves, tables.pairs, transforms, candidates)
        return transforms, candidates

    def _build_kinematics(self) -> None:
        model = self.model
        self._variables = tuple(name for name in model.independent_joint_names
                                if model.joints[name].type in SINGLE_DOF_JOINT_TYPES)
        self._variable_index = {name: i for i, name in enumerate(self._variables)}
        self._default = np.array([model.default_joint_value(name) for name in self._variables], dtype=float)
        rows = []
        for joint in model.description.joints:
            kind, variable, multiplier, offset = 0, -1, 1.0, 0.0
            if joint.type in SINGLE_DOF_JOINT_TYPES:
                kind = 1 if joint.type in ("revolute", "continuous") else 2
                master = joint.mimic.joint if joint.mimic else joint.name
                variable = self._variable_index[master]
                if joint.mimic:
                    multiplier, offset = joint.mimic.multiplier, joint.mimic.offset
            rows.append((self._link_index[joint.parent], self._link_index[joint.child], kind, variable, multiplier,
                         offset, joint.T_parent_joint, joint.axis))
        self._kinematics = (
            np.array([r[0] for r in rows], dtype=np.int64).reshape(-1),
            np.array([r[1] for r in rows], dtype=np.int64).reshape(-1),
            np.array([r[2] for r in rows], dtype=np.int64).reshape(-1),
            np.array([r[3] for r in rows], dtype=np.int64).reshape(-1),
            np.array([r[4] for r in rows], dtype=float).reshape(-1),
            np.array([r[5] for r in rows], dtype=float).reshape(-1),
            np.array([r[6] for r in rows], dtype=float).reshape(-1, 4, 4),
            np.array([r[7] for r in rows], dtype=float).reshape(-1, 3),
            len(model.link_names),
        )

    def _current_tables(self) -> _Tables:
        key = (self.scene.version, self._config_version)
        cached = self._tables
        if cached is not None and cached[0] == key:
            return cached[1]
        with self._lock:
            key = (self.scene.version, self._config_version)  # read before the objects: never newer than them
            world, attached = self.scene.world_objects, self.scene.attached_objects
            tables = self._build_tables(world, attached, robot_only=False)
            self._tables = (key, tables)
            return tables

    def _robot_tables(self) -> _Tables:
        with self._lock:
            return self._build_tables({}, {}, robot_only=True)

    def _build_tables(self, world, attached, *, robot_only: bool) -> _Tables:
        bodies: list[tuple[str, BodyType, int]] = []
        shapes: list[tuple[int, int, np.ndarray]] = []  # body, link, T_parent_shape
        geometries, centers, halves = [], [], []

        def add(body: int, link: int, T_parent_shape: np.ndarray, shape: Shape, scale=1.0, padding=0.0,
                robot_link=False) -> None:
            bounds, geometry = self._geometry(shape, scale, padding, robot_link and self.mesh_mode == "convex_hull")
            shapes.append((body, link, T_parent_shape))
            geometries.append(geometry)
            centers.append(np.zeros(3) if bounds is None else bounds[0])
            halves.append(np.full(3, -1.0) if bounds is None else bounds[1])

        for link, placed in self.link_geometry.items():
            bodies.append((link, BodyType.ROBOT_LINK, self._link_index[link]))
            for item in placed:
                add(len(bodies) - 1, self._link_index[link], item.T_frame_shape, item.shape, self._scale[link],
                    self._padding[link], robot_link=True)
        for object_id, item in attached.items():
            bodies.append((object_id, BodyType.ROBOT_ATTACHED, self._link_index[item.link]))
            for shape in item.object.shapes:
                add(len(bodies) - 1, self._link_index[item.link], item.object.T_parent_object @ shape.T_frame_shape,
                    shape.shape)
        for object_id, item in world.items():
            bodies.append((object_id, BodyType.WORLD_OBJECT, -1))
            for shape in item.shapes:
                add(len(bodies) - 1, -1, item.T_parent_object @ shape.T_frame_shape, shape.shape)
        touch = {object_id: item.touch_links | {item.link} for object_id, item in attached.items()}
        pairs, involves_world = [], []
        for i in range(len(shapes)):
            for j in range(i + 1, len(shapes)):
                (name_a, type_a, _), (name_b, type_b, _) = bodies[shapes[i][0]], bodies[shapes[j][0]]
                if shapes[i][0] == shapes[j][0] or self._skipped(name_a, type_a, name_b, type_b, touch, robot_only):
                    continue
                pairs.append((i, j))
                involves_world.append(BodyType.WORLD_OBJECT in (type_a, type_b))
        return _Tables(
            body_names=tuple(b[0] for b in bodies),
            body_types=np.array([int(b[1]) for b in bodies], dtype=np.int64),
            body_links=np.array([b[2] for b in bodies], dtype=np.int64),
            shape_body=np.array([s[0] for s in shapes], dtype=np.int64),
            shape_link=np.array([s[1] for s in shapes], dtype=np.int64),
            T_parent_shape=np.array([s[2] for s in shapes], dtype=float).reshape(-1, 4, 4),
            centers=np.array(centers, dtype=float).reshape(-1, 3),
            halves=np.array(halves, dtype=float).reshape(-1, 3),
            geometries=tuple(geometries),
            pairs=np.array(pairs, dtype=np.int64).reshape(-1, 2),
            pair_involves_world=np.array(involves_world, dtype=bool),
        )

    def _skipped(self, name_a, type_a, name_b, type_b, touch, robot_only: bool) -> bool:
        if robot_only:
            return False
        if type_a == type_b == BodyType.WORLD_OBJECT:
            return True
        if frozenset((name_a, name_b)) in self.disabled_pairs:
            return True
        for attached_name, attached_type, other_name, other_type in ((name_a, type_a, name_b, type_b),
                                                                     (name_b, type_b, name_a, type_a)):
            if attached_type == BodyType.ROBOT_ATTACHED and other_type == BodyType.ROBOT_LINK:
                return other_name in touch[attached_name]
        return False

    def _geometry(self, shape: Shape, scale: float, padding: float, hull: bool):
        """(local bounds, backend geometry) of a shape grown by scale and padding, built once per (shape, scale,
        padding, hull). With ``hull``, a mesh is checked as the hull of its grown hull (flat meshes as triangles).
        """
        key = (id(shape), scale, padding, hull)
        cached = self._geometry_cache.get(key)
        if cached is None or cached[0] is not shape:
            as_convex = hull and isinstance(shape, Mesh)
            grown = scaled_and_padded(shape, scale, padding)
            if as_convex:
                try:
                    grown = convex_hull(scaled_and_padded(convex_hull(shape), scale, padding))
                except GeometryError:  # a flat mesh: check its triangles
                    as_convex = False
            cached = (shape, local_bounds(grown), self.backend.geometry(grown, as_convex))
            if len(self._geometry_cache) > 4096:
                self._geometry_cache.clear()
            self._geometry_cache[key] = cached
        return cached[1], cached[2]


def _shape_pose(checker: CollisionChecker, tables: _Tables, q: np.ndarray, shape: int) -> np.ndarray:
    """T_plan_shape of one shape for one state (for contact positions; not on the fast path)."""
    link = tables.shape_link[shape]
    if link < 0:
        return tables.T_parent_shape[shape]
    joints = checker._kinematics
    poses = np.zeros((1, joints[-1], 4, 4))
    link_poses(q.reshape(1, -1), *joints[:-1], poses)
    return poses[0, link] @ tables.T_parent_shape[shape]


class CollisionValidity:
    """IK validity check: ``check(q) -> Verdict`` for a group's joint vector ``q`` (in ``joint_names``
    order, the other joints from ``base_state``). A colliding solution gets GOAL_IN_COLLISION with the
    colliding pairs as its reason; the rejections are counted for diagnostics.

    Use it as ``is_valid`` (``validity(q)``) or as a KinematicsPlugin ``solution_callback``
    (``validity.solution_callback``).
    """

    def __init__(self, checker: CollisionChecker, joint_names: Sequence[str], base_state=None):
        self.checker = checker
        self.joint_names = tuple(joint_names)
        self._base, self._indices = checker.binding(joint_names, base_state)
        self.checks = 0
        self.rejections = 0
        #: body pair -> how many rejected solutions it appeared in.
        self.pair_counts: Counter = Counter()
        self.last_rejected: np.ndarray | None = None
        self.last_report: CollisionReport | None = None

    def full_state(self, q: Sequence[float]) -> np.ndarray:
        full = self._base.copy()
        full[self._indices] = q
        return full

    def __call__(self, q: Sequence[float]) -> Verdict:
        full = self.full_state(q)
        self.checks += 1
        if not self.checker.is_colliding(full):
            return Verdict(ErrorCode.SUCCESS)
        report = self.checker.check(full)
        self.rejections += 1
        self.pair_counts.update(report.pairs)
        self.last_rejected, self.last_report = np.array(q, dtype=float), report
        return Verdict(ErrorCode.GOAL_IN_COLLISION, f"in collision: {report.describe()}")

    def solution_callback(self, _pose, solution: Sequence[float]) -> Verdict:
        return self(solution)

    def colliding_pairs(self) -> tuple[tuple[str, str], ...]:
        """Pairs seen in rejected solutions, most frequent first."""
        return tuple(pair for pair, _ in self.pair_counts.most_common())


def adjacent_link_pairs(model: RobotModel, link_geometry: Mapping[str, object]) -> set[frozenset[str]]:
    """Links with geometry joined by a joint, directly or through links without geometry (whose
    neighbours all count as adjacent to each other), as MoveIt Setup Assistant defines adjacency."""
    neighbours: dict[str, set[str]] = {link: set() for link in model.link_names}
    for joint in model.description.joints:
        neighbours[joint.parent].add(joint.child)
        neighbours[joint.child].add(joint.parent)
    changed = True
    while changed:
        changed = False
        for link in model.link_names:
            if link in link_geometry:
                continue
            around = neighbours[link]
            for other in list(around):
                missing = around - neighbours[other] - {other}
                if missing:
                    neighbours[other] |= missing
                    changed = True
    return {frozenset((a, b)) for a in link_geometry for b in neighbours[a] if b in link_geometry and a != b}


# ---------------------------------------------------------------------------------------------- kernels
@compiled_kernel
def _multiply(A, B, out):
    for i in range(3):
        for j in range(4):
            value = A[i, 0] * B[0, j] + A[i, 1] * B[1, j] + A[i, 2] * B[2, j]
            if j == 3:
                value += A[i, 3]
            out[i, j] = value
    out[3, 0] = 0.0
    out[3, 1] = 0.0
    out[3, 2] = 0.0
    out[3, 3] = 1.0


@compiled_kernel
def _joint_motion(kind, axis, value, out):
    for i in range(4):
        for j in range(4):
            out[i, j] = 1.0 if i == j else 0.0
    if kind == 1:
        x, y, z = axis[0], axis[1], axis[2]
        c, s = math.cos(value), math.sin(value)
        v = 1.0 - c
        out[0, 0], out[0, 1], out[0, 2] = c + x * x * v, x * y * v - z * s, x * z * v + y * s
        out[1, 0], out[1, 1], out[1, 2] = y * x * v + z * s, c + y * y * v, y * z * v - x * s
        out[2, 0], out[2, 1], out[2, 2] = z * x * v - y * s, z * y * v + x * s, c + z * z * v
    elif kind == 2:
        out[0, 3], out[1, 3], out[2, 3] = axis[0] * value, axis[1] * value, axis[2] * value


@compiled_kernel
def _tree_poses(q, parent, child, kind, variable, multiplier, offset, T_parent_joint, axis, poses):
    """poses[link] = T_root_link for one joint vector ``q``; links indexed parent-first, root 0."""
    motion = np.empty((4, 4))
    joint_pose = np.empty((4, 4))
    for i in range(4):
        for j in range(4):
            poses[0, i, j] = 1.0 if i == j else 0.0
    for k in range(len(parent)):
        _multiply(poses[parent[k]], T_parent_joint[k], joint_pose)
        if kind[k] == 0:
            poses[child[k]] = joint_pose
        else:
            _joint_motion(kind[k], axis[k], multiplier[k] * q[variable[k]] + offset[k], motion)
            _multiply(joint_pose, motion, poses[child[k]])


@compiled_kernel
def link_poses(Q, parent, child, kind, variable, multiplier, offset, T_parent_joint, axis, out):
    """out[n, link] = T_root_link for every state Q[n]."""
    for n in range(Q.shape[0]):
        _tree_poses(Q[n], parent, child, kind, variable, multiplier, offset, T_parent_joint, axis, out[n])


@compiled_kernel
def _boxes_overlap(T_a_b, center_a, half_a, center_b, half_b):
    """Separating-axis test of two oriented boxes, b posed by T_a_b in a's frame (15 axes)."""
    R = np.empty((3, 3))
    absR = np.empty((3, 3))
    t = np.empty(3)
    for i in range(3):
        value = T_a_b[i, 3] - center_a[i]
        for j in range(3):
            R[i, j] = T_a_b[i, j]
            absR[i, j] = abs(T_a_b[i, j]) + 1e-9
            value += T_a_b[i, j] * center_b[j]
        t[i] = value
    for i in range(3):
        if abs(t[i]) > half_a[i] + half_b[0] * absR[i, 0] + half_b[1] * absR[i, 1] + half_b[2] * absR[i, 2]:
            return False
    for j in range(3):
        if abs(t[0] * R[0, j] + t[1] * R[1, j] + t[2] * R[2, j]) > \
                half_a[0] * absR[0, j] + half_a[1] * absR[1, j] + half_a[2] * absR[2, j] + half_b[j]:
            return False
    for i in range(3):
        i1, i2 = (i + 1) % 3, (i + 2) % 3
        for j in range(3):
            j1, j2 = (j + 1) % 3, (j + 2) % 3
            reach = half_a[i1] * absR[i2, j] + half_a[i2] * absR[i1, j] + half_b[j1] * absR[i, j2] + \
                half_b[j2] * absR[i, j1]
            if abs(t[i2] * R[i1, j] - t[i1] * R[i2, j]) > reach:
                return False
    return True


@compiled_kernel
def place_and_cull(Q, parent, child, kind, variable, multiplier, offset, T_parent_joint, axis, link_count,
                   shape_link, T_parent_shape, centers, halves, pairs, T_a_b, candidates):
    """For every state Q[n]: place every shape and mark in candidates[n] the pairs whose bounding boxes
    overlap (world-aligned boxes first, then oriented ones), or that involve an unbounded shape (a plane);
    give their relative pose T_a_b[n, p] = T_world_a^-1 T_world_b."""
    S, P = len(shape_link), len(pairs)
    poses = np.empty((link_count, 4, 4))
    shape_pose = np.empty((S, 4, 4))
    center = np.empty((S, 3))
    half = np.empty((S, 3))
    for n in range(Q.shape[0]):
        _tree_poses(Q[n], parent, child, kind, variable, multiplier, offset, T_parent_joint, axis, poses)
        for s in range(S):
            if shape_link[s] < 0:
                shape_pose[s] = T_parent_shape[s]
            else:
                _multiply(poses[shape_link[s]], T_parent_shape[s], shape_pose[s])
            for i in range(3):
                c = shape_pose[s, i, 3]
                h = 0.0
                for j in range(3):
                    c += shape_pose[s, i, j] * centers[s, j]
                    h += abs(shape_pose[s, i, j]) * halves[s, j]
                center[s, i] = c
                half[s, i] = h
        for p in range(P):
            a, b = pairs[p, 0], pairs[p, 1]
            bounded = halves[a, 0] >= 0.0 and halves[b, 0] >= 0.0
            overlap = True
            if bounded:
                for i in range(3):
                    if abs(center[a, i] - center[b, i]) > half[a, i] + half[b, i]:
                        overlap = False
                        break
            if overlap:
                # T_a^-1 T_b with T_a^-1 = [R_a^T, -R_a^T t_a]
                for i in range(3):
                    for j in range(4):
                        value = 0.0
                        for m in range(3):
                            value += shape_pose[a, m, i] * (shape_pose[b, m, j] - (shape_pose[a, m, 3] if j == 3
                                                                                    else 0.0))
                        T_a_b[n, p, i, j] = value
                if bounded:
                    overlap = _boxes_overlap(T_a_b[n, p], centers[a], halves[a], centers[b], halves[b])
            candidates[n, p] = overlap
