"""Collision checking of robot states: self-collision, world objects and attached objects, with contacts.

How a check runs: one compiled kernel (``kernels.place_and_cull``) places every shape for the joint values
with the model's whole-tree forward kinematics, culls shape pairs whose bounding boxes do not overlap, and
decides the remaining pairs of convex shapes exactly (``convex_kernels``); the pairs it leaves undecided
(triangle meshes, octrees, planes, or within 1e-9 m of touching) go to the narrow phase of the ``backend``
(coal), as do the pairs not decided apart for contacts, when asked. Pairs that can never count are left out
once, when the checker (re)builds its tables (``tables``).

Joint values: a mapping joint -> value, as ``RobotModel`` takes them (floating and planar joints
included), or a state vector in ``variable_names`` order (``RobotModel.state_vector``). Mimic joints
follow their master. Lengths in [m]; positions and normals in the planning frame (the robot's root link).
"""
from __future__ import annotations

import copy
import math
import threading
from collections.abc import Iterable, Mapping, Sequence

import numpy as np

from ..errors import KinematicsError
from ..model.robot_model import RobotModel
from ..model.srdf import SemanticModel
from .backend import CoalBackend
from .convex_kernels import APART, TOUCHING, UNDECIDED
from .geometry import GeometryError, Mesh, Placed, robot_collision_geometry
from .kernels import place_and_cull, place_shapes
from .octree import Octree
from .report import BodyType, CollisionReport, Contact
from .scene import PlanningScene
from .tables import PairTables, TableBuilder, adjacent_link_pairs, tested_as_tree
from .validity import CollisionValidity

#: How robot link meshes are checked: their convex hull (fast GJK/EPA, conservative) or their triangles (a BVH).
MESH_MODES = ("convex_hull", "mesh")
#: Configurations placed per kernel call in batch checks (bounds the (N, pairs, 3, 4) transform buffer).
BATCH_CHUNK = 1024


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
        self._offset: dict[str, float] = {}
        self._check_growth(padding, scale)
        self._config_version = 0
        self._tables: tuple[tuple[int, int], PairTables] | None = None
        self._builder = TableBuilder(model, self.link_geometry, self.backend, mesh_mode)
        self._link_index = {name: i for i, name in enumerate(model.link_names)}
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
        other.disabled_pairs, other._padding, other._scale, other._offset = dict(self.disabled_pairs), \
            dict(self._padding), dict(self._scale), dict(self._offset)
        return other

    # ------------------------------------------------------------------ configuration
    @property
    def variable_names(self) -> tuple[str, ...]:
        """Names of the values of a state vector (``RobotModel.variable_names``)."""
        return self.model.variable_names

    @property
    def config_version(self) -> int:
        """Changes whenever the allowed pairs or the paddings change (with ``scene.version``: what a cache of this
        checker's answers is keyed on)."""
        return self._config_version

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

    def set_offset(self, offset: float, links: Iterable[str] | None = None) -> None:
        """Grow these links' checked shapes (after padding and scale) by ``offset`` [m] exactly: every point within
        ``offset`` of them counts. ``links`` may name attached objects too (their shapes grown alike). Only where
        ``offsets_exact``."""
        self._set_growth(self._offset, offset, links, "offset")

    def offset(self, link: str) -> float:
        return self._offset.get(link, 0.0)

    def padding(self, link: str) -> float:
        """A link's padding [m]: the planning scene's (``PlanningScene.settings``) or the checker's."""
        return self.scene.settings.link_padding.get(link, self._padding.get(link, 0.0))

    def scale(self, link: str) -> float:
        return self.scene.settings.link_scale.get(link, self._scale.get(link, 1.0))

    def _set_growth(self, table: dict, value: float, links, what: str) -> None:
        self._check_growth(0.0 if what == "scale" else value, value if what == "scale" else 1.0, what)
        links = list(self.link_geometry) if links is None else list(links)
        held = self.scene.attached_objects if what == "offset" else {}  # (an offset grows attached objects too)
        for link in links:
            if link not in self.link_geometry and link not in held:
                if not held:
                    self.model.check_link(link)
                raise GeometryError(f"link {link!r} has no collision geometry; links with geometry are "
                                    f"{sorted(self.link_geometry)}" + (f", attached objects {sorted(held)}" if held
                                                                       else ""))
        with self._lock:
            table.update({link: float(value) for link in links})
            self._config_version += 1

    @staticmethod
    def _check_growth(padding: float, scale: float, what: str = "padding") -> None:
        if not (math.isfinite(padding) and padding >= 0.0):
            raise GeometryError(f"{what} must be finite and >= 0 [m]; got {padding!r}")
        if not (math.isfinite(scale) and scale > 0.0):
            raise GeometryError(f"scale must be finite and > 0; got {scale!r}")

    # ------------------------------------------------------------------ joint values
    def state_vector(self, joint_positions: Mapping[str, object] | Sequence[float] | np.ndarray | None = None,
                     base: np.ndarray | None = None) -> np.ndarray:
        """A state vector in ``variable_names`` order: a full vector as is, or a mapping joint -> value (checked
        as ``RobotModel.state_vector`` does) over ``base`` (default: every value at zero clamped into its limits).
        Unknown joints raise UnknownJointError; a mimic joint's value is ignored (it follows its master)."""
        if joint_positions is not None and not isinstance(joint_positions, Mapping):
            q = np.asarray(joint_positions, dtype=float)
            if q.shape != (self.model.tree.size,):
                raise KinematicsError(f"a joint vector needs {self.model.tree.size} values for "
                                      f"{list(self.variable_names)}; got shape {q.shape}")
            return q
        return self.model.state_vector(joint_positions, base)

    def binding(self, joint_names: Sequence[str], base_state=None) -> tuple[np.ndarray, np.ndarray]:
        """(base vector, indices of ``joint_names`` in it) to embed a group's joint vector in a full state.
        ``joint_names`` are variable names: single-DOF joints, or ``<joint>/x`` ... of floating and planar ones."""
        base = self.state_vector(base_state)
        variable_index = self.model.tree.variable_index
        indices = []
        for name in joint_names:
            if name not in variable_index:
                self.model.check_joint(name)
                raise KinematicsError(f"joint {name!r} mimics another joint or is not single-DOF: it cannot be set "
                                      f"directly")
            indices.append(variable_index[name])
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
        transforms, _, verdicts = self._place(tables, q, tables.masks[(self_collisions, world)], True)
        return bool(_colliding_rows(self.backend, tables, transforms, verdicts, True)[0])

    def check(self, state, *, contacts: bool = False, max_contacts: int = 64, max_contacts_per_pair: int = 1,
              self_collisions: bool = True, world: bool = True, links: Iterable[str] | None = None) -> CollisionReport:
        """Every colliding body pair of a state, and up to ``max_contacts`` contacts when ``contacts``.

        ``links`` limits the check to pairs with at least one of these links (or an object attached to one),
        as MoveIt limits a check to a group.
        """
        tables = self._current_tables()
        q = self.state_vector(state)
        transforms, _, verdicts = self._place(tables, q.reshape(1, -1),
                                              self._pair_mask(tables, self_collisions, world, links), False)
        pairs, found, shape_poses = [], [], None
        for p in () if verdicts is None else np.flatnonzero(verdicts[0] != APART):
            if contacts and len(found) < max_contacts:  # from the backend (nothing of a pair decided APART)
                hits = self.backend.contacts(*tables.pair_geometries[p], transforms[0, p], max_contacts_per_pair)
                if not hits:
                    continue
                shape_poses = self._shape_poses(tables, q) if shape_poses is None else shape_poses
                found += _contacts(tables, shape_poses, p, hits)[:max_contacts - len(found)]
            elif not _pair_collides(self.backend, tables, transforms, verdicts, 0, p):
                continue
            pair = tables.body_pair(p)
            if pair not in pairs:
                pairs.append(pair)
        return CollisionReport(bool(pairs), tuple(pairs), tuple(found))

    def check_batch(self, states: np.ndarray, *, joint_names: Sequence[str] | None = None, base_state=None,
                    self_collisions: bool = True, world: bool = True) -> np.ndarray:
        """(N,) bool: which of N states collide. ``states`` is (N, len(variable_names)), or (N, len(joint_names))
        embedded in ``base_state``. One compiled call places and culls all of them."""
        Q = self._full_states(states, joint_names, base_state)
        tables = self._current_tables()
        tested = tables.masks[(self_collisions, world)]
        colliding = np.zeros(len(Q), dtype=bool)
        for start in range(0, len(Q), BATCH_CHUNK):
            transforms, _, verdicts = self._place(tables, Q[start:start + BATCH_CHUNK], tested, True)
            colliding[start:start + BATCH_CHUNK] = _colliding_rows(self.backend, tables, transforms, verdicts, False)
        return colliding

    def link_pair_collisions(self, states: np.ndarray) -> tuple[list[tuple[str, str]], np.ndarray]:
        """Self-collision of every pair of links with geometry, disabled or not, for N states:
        (link pairs, (N, pairs) bool). For proposing disabled pairs (``collision_matrix``)."""
        Q = self._full_states(states, None, None)
        with self._lock:
            tables = self._builder.build({}, {}, self._scale, self._padding, {})
        body_pairs = [tuple(sorted(tables.body_pair(p))) for p in range(len(tables.shapes.pairs))]
        column_of = {pair: k for k, pair in enumerate(dict.fromkeys(body_pairs))}
        column = np.array([column_of[pair] for pair in body_pairs], dtype=np.int64)
        tested = np.ones(len(body_pairs), dtype=bool)
        hits = np.zeros((len(Q), len(column_of)), dtype=bool)
        for start in range(0, len(Q), BATCH_CHUNK):
            transforms, _, verdicts = self._place(tables, Q[start:start + BATCH_CHUNK], tested, False)
            for k, p in np.argwhere(verdicts != APART) if verdicts is not None else ():
                if not hits[start + k, column[p]] and _pair_collides(self.backend, tables, transforms, verdicts, k, p):
                    hits[start + k, column[p]] = True
        return list(column_of), hits

    def shape_poses(self, state) -> list[tuple[str, np.ndarray]]:
        """(body, T_plan_shape) of every shape a check of this state tests: robot links, attached and world
        objects, each placed where the checker places it (the shape's pose in the planning frame)."""
        tables = self._current_tables()
        poses = self._shape_poses(tables, self.state_vector(state))
        return [(tables.body_names[body], T) for body, T in zip(tables.shape_body, poses)]

    def validity(self, joint_names: Sequence[str], base_state=None) -> CollisionValidity:
        """An IK validity check for a group's joint vector (see ``CollisionValidity``)."""
        return CollisionValidity(self, joint_names, base_state)

    # ------------------------------------------------------------------ internals
    def _full_states(self, states, joint_names, base_state) -> np.ndarray:
        Q = np.asarray(states, dtype=float)
        if joint_names is None:
            if base_state is not None:
                raise KinematicsError("base_state needs joint_names: it fills the joints the states do not set")
            joint_names = self.variable_names
        if Q.ndim != 2 or Q.shape[1] != len(joint_names):
            raise KinematicsError(f"states must have shape (N, {len(joint_names)}) for joints {list(joint_names)}; "
                                  f"got {Q.shape}")
        if tuple(joint_names) == self.variable_names:
            return np.ascontiguousarray(Q)
        base, indices = self.binding(joint_names, base_state)
        full = np.tile(base, (len(Q), 1))
        full[:, indices] = Q
        return full

    def _pair_mask(self, tables: PairTables, self_collisions: bool, world: bool, links) -> np.ndarray:
        if links is None:
            return tables.masks[(self_collisions, world)]
        indices = set()
        for link in links:
            self.model.check_link(link)
            indices.add(self._link_index[link])
        moving = np.isin(tables.body_links, list(indices))
        body = tables.shape_body[tables.shapes.pairs]
        return tables.masks[(self_collisions, world)] & (moving[body[:, 0]] | moving[body[:, 1]])

    def _shape_poses(self, tables: PairTables, q: np.ndarray) -> np.ndarray:
        poses = np.empty((len(tables.shapes.link), 4, 4))
        place_shapes(q, self.model.tree.table_arrays, tables.shape_arrays, poses)
        return poses

    def _place(self, tables: PairTables, Q: np.ndarray, tested: np.ndarray,
               stop_at_first: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        """(T_a_b (N, P, 3, 4), candidates (N, P) bool, verdicts (N, P) int8: TOUCHING, APART, or UNDECIDED for the
        backend; None when every pair is apart) of the ``tested`` pairs of N states (``place_and_cull``)."""
        count, pairs = len(Q), len(tested)
        transforms = np.empty((count, pairs, 3, 4))
        candidates = np.empty((count, pairs), dtype=np.bool_)
        verdicts = np.empty((count, pairs), dtype=np.int8)
        found = place_and_cull(Q, tables.placement, tested, stop_at_first, transforms, candidates, verdicts)
        return transforms, candidates, verdicts if found else None

    def _current_tables(self) -> PairTables:
        key = (self.scene.version, self._config_version)
        cached = self._tables
        if cached is not None and cached[0] == key:
            return cached[1]
        with self._lock:
            key = (self.scene.version, self._config_version)  # read before the objects: never newer than them
            world, attached, settings = self.scene.world_objects, self.scene.attached_objects, self.scene.settings
            scale = {**self._scale, **{k: v for k, v in settings.link_scale.items() if k in self._scale}}
            padding = {**self._padding, **{k: v for k, v in settings.link_padding.items() if k in self._padding}}
            disabled = self.disabled_pairs
            if not settings.allowed_collisions.is_empty:
                disabled = settings.allowed_collisions.disabled_pairs(
                    self.disabled_pairs, self.link_geometry, [*self.link_geometry, *attached, *world])
            tables = self._builder.build(world, attached, scale, padding, disabled, self._offset)
            self._tables = (key, tables)
            return tables


def _contacts(tables: PairTables, shape_poses: np.ndarray, p: int, hits) -> list[Contact]:
    """Contacts of pair p from the backend's (position, normal, depth) in shape a's frame."""
    a, b = tables.shapes.pairs[p]
    T_plan_a = shape_poses[a]
    body_a, body_b = tables.shape_body[a], tables.shape_body[b]
    return [Contact(tables.body_names[body_a], BodyType(tables.body_types[body_a]), tables.body_names[body_b],
                    BodyType(tables.body_types[body_b]), T_plan_a[:3, :3] @ position + T_plan_a[:3, 3],
                    T_plan_a[:3, :3] @ normal, depth) for position, normal, depth in hits]


def offsets_exact(checker: CollisionChecker) -> bool:
    """Whether ``checker.set_offset`` is exact: its backend grows shapes exactly, and every world or attached mesh and
    octree is tested by the compiled kernels (``tables.tested_as_tree``: a mesh of at most MAX_TREE_TRIANGLES
    triangles), which grow a shape exactly; the backend cannot test them against a grown shape, so what the kernels
    leave undecided there counts as colliding (``PairTables.undecided_collides``), within 1e-9 m of touching.
    Padding, unlike an offset, moves a mesh's vertices away from their centroid, which can offset a face by less."""
    if not hasattr(checker.backend, "offset"):
        return False
    scene = checker.scene
    objects = [*scene.world_objects.values(), *(item.object for item in scene.attached_objects.values())]
    return all(not isinstance(placed.shape, (Mesh, Octree)) or tested_as_tree(placed.shape) for item in objects
               for placed in item.shapes)


def first_colliding(checker: CollisionChecker, states: np.ndarray, order: Sequence[np.ndarray]) -> int:
    """Which of N full states collides, checked in ``order`` (rounds of indices, e.g. a segment's midpoints first)
    and stopping at the first collision; -1 when none does."""
    tables = checker._current_tables()
    for indices in order:
        transforms, _, verdicts = checker._place(tables, states[indices], tables.masks[(True, True)], True)
        colliding = _colliding_rows(checker.backend, tables, transforms, verdicts, True)
        if colliding.any():
            return int(indices[np.argmax(colliding)])
    return -1


def _colliding_rows(backend, tables: PairTables, transforms: np.ndarray, verdicts: np.ndarray,
                    first_only: bool) -> np.ndarray:
    """(N,) bool: which of N states collide, from their pairs' verdicts (``CollisionChecker._place``; None: all
    apart) and the backend's answers on the UNDECIDED ones; with ``first_only``, the first state that collides
    alone."""
    if verdicts is None:
        return np.zeros(len(transforms), dtype=bool)
    colliding = (verdicts == TOUCHING).any(axis=1)
    end = len(colliding)
    if first_only:  # no state past the first found touching is asked
        first = int(colliding.argmax())
        end = first if colliding[first] else end
    undecided = verdicts[:end] == UNDECIDED
    for k, p in np.argwhere(undecided) if end and undecided.any() else ():
        if not colliding[k] and (tables.undecided_collides[p]
                                 or backend.collide(*tables.pair_geometries[p], transforms[k, p])):
            colliding[k] = True
            if first_only:
                end = k
                break
    if first_only:
        colliding[end + 1:] = False
    return colliding


def _pair_collides(backend, tables: PairTables, transforms: np.ndarray, verdicts: np.ndarray, k: int, p: int) -> bool:
    """Whether pair p of state k collides: its verdict (``CollisionChecker._place``), or the backend's answer when
    UNDECIDED (colliding where it could miss an offset: ``PairTables.undecided_collides``)."""
    if verdicts[k, p] == UNDECIDED:
        return bool(tables.undecided_collides[p]) or backend.collide(*tables.pair_geometries[p], transforms[k, p])
    return verdicts[k, p] == TOUCHING


def binding_key(indices: np.ndarray, base: np.ndarray) -> tuple[bytes, bytes]:
    """The key of what is kept per group (its variables' ``indices``) and base state (``CollisionChecker.binding``'s
    answer)."""
    return indices.tobytes(), np.asarray(base, dtype=float).tobytes()
