"""The world around the robot: collision objects, and objects attached to robot links.

Updates mirror moveit_msgs/CollisionObject and AttachedCollisionObject with plain Python values
(``scene_updates``: shapes from ``collision_geometry``; poses as ``Pose``, (position, quaternion xyzw) pairs,
geometry_msgs/Pose-like objects or 4x4 arrays; None is the identity),
so a node converts a message field by field and calls ``apply`` / ``apply_attached``. Every update is
checked completely before anything changes: on a bad update SceneError names the problem and the
scene is left as it was.

Frames: every pose is given in a frame ``frame_id``: "" or the planning frame (the robot's root link),
a robot link (placed at ``robot_state``), a world or attached object's id, or ``"<object>/<subframe>"``.
Object shapes and subframes are posed relative to the object's ``pose``, as MoveIt does, with MoveIt's
defaults (moveit_core's planning scene): a shape without a pose is at the object's pose, and an object of
one shape whose pose is the identity takes the shape's pose as its own (``with_moveit_shape_poses``).
"""
from __future__ import annotations

import logging
import math
import os
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any

import numpy as np

from ..geometry.transforms import invert_transform
from ..model.robot_model import RobotModel
from .allowed_collisions import AllowedCollisionMatrix
from .geometry import GeometryError, Mesh, Placed, Plane
from .octree import OCTOMAP_ID, Octree
from .scene_updates import (  # noqa: F401  (SceneError, Operation and the updates are this module's API too)
    AttachedObjectUpdate,
    CollisionObjectUpdate,
    Operation,
    SceneError,
    bounded,
    checked_operation,
    is_identity,
    pose_transform,
    shapes_and_subframes,
    with_moveit_shape_poses,
)

_log = logging.getLogger("kinematics_py.collision.scene")


@dataclass(frozen=True, eq=False)
class SceneObject:
    """An object: ``shapes`` and ``subframes`` (T_object_subframe) in its own frame, posed by ``T_parent_object``
    in the planning frame (world objects) or in its link's frame (attached objects)."""

    id: str
    T_parent_object: np.ndarray
    shapes: tuple[Placed, ...]
    subframes: Mapping[str, np.ndarray] = field(default_factory=dict)


@dataclass(frozen=True, eq=False)
class AttachedObject:
    """An object moving with ``link``; it may touch ``touch_links`` (and ``link``) without colliding."""

    object: SceneObject
    link: str
    touch_links: frozenset[str]

    @property
    def id(self) -> str:
        return self.object.id


@dataclass(frozen=True)
class SceneSettings:
    """What a planning scene holds besides its objects (moveit_msgs/PlanningScene's other parts)."""

    name: str = ""
    #: Over the robot's own rules (see ``allowed_collisions``).
    allowed_collisions: AllowedCollisionMatrix = field(default_factory=AllowedCollisionMatrix)
    #: link -> padding [m] / scale, over the collision checker's own values.
    link_padding: Mapping[str, float] = field(default_factory=lambda: MappingProxyType({}))
    link_scale: Mapping[str, float] = field(default_factory=lambda: MappingProxyType({}))
    #: Frames fixed in the planning frame: name -> T_planning_frame_frame (4x4).
    fixed_frames: Mapping[str, np.ndarray] = field(default_factory=lambda: MappingProxyType({}))
    #: object id -> colour (r, g, b, a) in [0, 1], kept for whoever displays the scene.
    object_colors: Mapping[str, tuple[float, float, float, float]] = field(default_factory=lambda: MappingProxyType({}))


class PlanningScene:
    """World and attached objects of one robot, and the scene's ``settings``. Thread-safe; readers get consistent
    snapshots.

    ``world_objects`` and ``attached_objects`` are read-only mappings replaced as a whole on every change,
    and ``version`` grows with every change (the collision checker rebuilds what it caches from it). The world
    object ``OCTOMAP_ID`` holds the octomap (``set_octomap``); removing every world object keeps it.
    """

    def __init__(self, robot_model: RobotModel):
        self.robot_model = robot_model
        self.planning_frame = robot_model.root_link
        self._lock = threading.Lock()
        self._world: Mapping[str, SceneObject] = MappingProxyType({})
        self._attached: Mapping[str, AttachedObject] = MappingProxyType({})
        self._settings = SceneSettings()
        #: Most mesh triangles one world object may hold in all (None: no cap); APPENDs are refused beyond it.
        self.max_object_triangles: int | None = None
        self._robot_state: dict[str, object] = robot_model.resolve_joint_values()
        self._link_poses = robot_model.link_poses(self._robot_state)
        self.version = 0

    # ------------------------------------------------------------------ reading
    @property
    def world_objects(self) -> Mapping[str, SceneObject]:
        return self._world

    @property
    def attached_objects(self) -> Mapping[str, AttachedObject]:
        return self._attached

    @property
    def settings(self) -> SceneSettings:
        return self._settings

    @property
    def robot_state(self) -> dict[str, object]:
        """Joint values used to place robot-link frames (a copy)."""
        return dict(self._robot_state)

    def set_robot_state(self, joint_positions: Mapping[str, object]) -> None:
        """Joint values for robot-link frames (missing joints keep their values); errors name bad joints."""
        with self._lock:
            state = self.robot_model.resolve_joint_values({**self._independent_state(), **joint_positions})
            self._robot_state, self._link_poses = state, self.robot_model.link_poses(state)

    def _independent_state(self) -> dict[str, object]:
        return {name: self._robot_state[name] for name in self.robot_model.independent_joint_names}

    def frame_transform(self, frame_id: str) -> np.ndarray:
        """T_planning_frame (4x4) of a frame (see the module docstring); SceneError lists the known frames."""
        return _frame_transform(frame_id, self._world, self._attached, self._link_poses, self.planning_frame,
                                self.robot_model, self._settings.fixed_frames)

    def known_frames(self) -> list[str]:
        names = list(self.robot_model.link_names) + list(self._settings.fixed_frames)
        for objects in (self._world, {k: a.object for k, a in self._attached.items()}):
            for object_id, scene_object in objects.items():
                names += [object_id] + [f"{object_id}/{sub}" for sub in scene_object.subframes]
        return names

    def copy(self) -> PlanningScene:
        """An independent scene with the same objects and robot state (cheap: objects are immutable), e.g. to
        add a request's attached objects without touching the shared scene."""
        other = PlanningScene.__new__(PlanningScene)
        other.robot_model, other.planning_frame, other._lock = self.robot_model, self.planning_frame, threading.Lock()
        with self._lock:
            other._world, other._attached, other._settings = self._world, self._attached, self._settings
            other._robot_state, other._link_poses, other.version = self._robot_state, self._link_poses, self.version
        other.max_object_triangles = self.max_object_triangles
        return other

    def adopt(self, staged: PlanningScene) -> None:
        """Take every object, setting and the robot state of ``staged`` (a changed ``copy()`` of this scene) in one
        step: how several changes apply all together or not at all. ``version`` grows only if objects or
        settings changed."""
        if staged.robot_model is not self.robot_model:
            raise SceneError("the staged planning scene belongs to another RobotModel instance")
        with self._lock:
            self._robot_state, self._link_poses = staged._robot_state, staged._link_poses
            if staged._world is self._world and staged._attached is self._attached and \
                    staged._settings is self._settings:
                return  # unchanged (every change replaces these values): ``version`` stays
            self._settings = staged._settings
            self._commit(staged._world, staged._attached)

    # ------------------------------------------------------------------ settings
    def change_settings(self, **changes) -> None:
        """Replace some of ``settings`` (SceneSettings' fields); padding, scale and fixed frames are checked first:
        SceneError names a bad value."""
        if "link_padding" in changes:
            changes["link_padding"] = _link_values(changes["link_padding"], "padding", 0.0, self._link_poses)
        if "link_scale" in changes:
            changes["link_scale"] = _link_values(changes["link_scale"], "scale", None, self._link_poses)
        if "fixed_frames" in changes:
            changes["fixed_frames"] = {name: pose_transform(pose, f"fixed frame {name!r}")
                                       for name, pose in changes["fixed_frames"].items()}
        changes = {name: MappingProxyType(dict(value)) if isinstance(value, Mapping) else value
                   for name, value in changes.items()}
        with self._lock:
            self._settings = replace(self._settings, **changes)
            self.version += 1

    def set_octomap(self, octree: Octree | None, pose: Any = None, frame_id: str = "") -> None:
        """Make ``octree`` (posed by ``pose`` in ``frame_id``) the scene's octomap, world object OCTOMAP_ID,
        replacing the previous one; None removes it."""
        with self._lock:
            world = dict(self._world)
            world.pop(OCTOMAP_ID, None)
            if octree is not None:
                world[OCTOMAP_ID] = self._voxel_object(OCTOMAP_ID, octree, pose, frame_id)
            self._commit(world, self._attached)

    def add_point_cloud(self, object_id: str, points, resolution: float, pose: Any = None, frame_id: str = "",
                        clip_box=None) -> None:
        """Add (or replace) world object ``object_id``: the voxels of ``resolution`` [m] holding the points
        ((N, 3) [m], in the frame that ``pose`` places in ``frame_id``), clipped to ``clip_box`` = (lower corner,
        upper corner) in that same frame when given (see ``Octree.from_points``)."""
        _check_object_id(object_id)
        try:
            octree = Octree.from_points(points, resolution, clip_box)
        except GeometryError as error:
            raise SceneError(f"point cloud {object_id!r}: {error}") from None
        with self._lock:
            world = dict(self._world)
            world[object_id] = self._voxel_object(object_id, octree, pose, frame_id)
            self._commit(world, self._attached)

    def _voxel_object(self, object_id: str, octree: Octree, pose: Any, frame_id: str) -> SceneObject:
        T_plan_octree = bounded(self.frame_transform(frame_id) @ pose_transform(pose, f"{object_id}: pose"),
                                 f"{object_id}: pose in the planning frame")
        return SceneObject(object_id, T_plan_octree, (Placed(octree),), MappingProxyType({}))

    # ------------------------------------------------------------------ world objects
    def apply(self, update: CollisionObjectUpdate) -> None:
        """Apply one CollisionObject operation (ADD replaces, APPEND adds shapes, creating the object if
        needed, MOVE re-poses, REMOVE deletes; REMOVE with an empty id removes every world object)."""
        with self._lock:
            operation = checked_operation(update)
            world = dict(self._world)
            if operation == Operation.REMOVE:
                _remove_world(world, update.id)
            else:
                world[update.id] = self._updated_object(world.get(update.id), update, operation)
            self._commit(world, self._attached)

    def _updated_object(self, existing: SceneObject | None, update: CollisionObjectUpdate,
                        operation: Operation) -> SceneObject:
        context = f"collision object {update.id!r}"
        if not update.id:
            raise SceneError(f"a collision object needs a non-empty id ({operation.name})")
        _check_object_id(update.id)
        appending = operation == Operation.APPEND and existing is not None
        if operation != Operation.MOVE and not appending:
            update = with_moveit_shape_poses(update)
        T_plan_pose = self._pose_in_planning_frame(update, context)
        if operation == Operation.MOVE:
            if existing is None:
                raise SceneError(f"cannot move {context}: it does not exist; world objects are {sorted(self._world)}")
            if update.has_geometry:
                _log.warning("%s: MOVE ignores the geometry in the update (as MoveIt does)", context)
            return SceneObject(existing.id, T_plan_pose, _moved_shapes(existing, update, context), existing.subframes)
        shapes, subframes = shapes_and_subframes(update, context)
        if not appending:
            if not shapes:
                raise SceneError(f"{context}: {operation.name} needs at least one primitive, mesh or plane")
            return SceneObject(update.id, T_plan_pose, shapes, MappingProxyType(subframes))
        # APPEND to an object (as MoveIt's world): the new shapes are posed relative to the object's pose, which
        # stays (the update's pose is not used), and the update's subframes replace the object's. (MoveIt would
        # also take a single new shape's pose for the object's when the update's pose is the identity, so that
        # the shape lands at the object's origin; here its pose counts.)
        if not shapes:
            raise SceneError(f"{context}: APPEND needs at least one primitive, mesh or plane")
        triangles = sum(len(p.shape.triangles) for p in existing.shapes + shapes if isinstance(p.shape, Mesh))
        if self.max_object_triangles is not None and triangles > self.max_object_triangles:
            raise SceneError(f"{context}: APPEND would give it {triangles} mesh triangles, more than "
                             f"max_mesh_triangles = {self.max_object_triangles}")
        return SceneObject(existing.id, existing.T_parent_object, existing.shapes + shapes,
                           MappingProxyType(subframes))

    def _pose_in_planning_frame(self, update: CollisionObjectUpdate, context: str) -> np.ndarray:
        T_plan_frame = self.frame_transform(update.frame_id)
        return bounded(T_plan_frame @ pose_transform(update.pose, f"{context}: pose"),
                        f"{context}: pose in the planning frame")

    # ------------------------------------------------------------------ attached objects
    def apply_attached(self, update: AttachedObjectUpdate) -> None:
        """Attach (object.operation ADD) or detach (REMOVE) an object, as MoveIt's AttachedCollisionObject.

        ADD with geometry attaches a new object (posed in ``object.frame_id``; "" means the link's frame) and
        removes a world object of that id; ADD without geometry attaches the world object of that id where it
        is. APPEND adds shapes to an attached object (attaching it if it is not), as MoveIt: with the identity
        as ``object.pose`` the object keeps its pose and the new shapes are posed relative to it; otherwise the
        object takes the new pose. REMOVE puts the object back into the world where it is (or drops it, when a
        world object of that id exists); an empty id detaches every object of ``link_name`` (of every link when
        that is empty too). Touch links need not be robot links (MoveIt keeps any name).
        """
        with self._lock:
            operation = checked_operation(update.object)
            world, attached = dict(self._world), dict(self._attached)
            if operation == Operation.REMOVE:
                _detach(world, attached, update, self._link_poses)
            elif operation in (Operation.ADD, Operation.APPEND):
                self._attach(world, attached, update, operation)
            else:
                raise SceneError(f"attached object {update.object.id!r}: operation {operation.name} is not "
                                 f"supported for attached objects (as in MoveIt; ADD or APPEND attaches, REMOVE "
                                 f"detaches)")
            self._commit(world, attached)

    def _attach(self, world: dict, attached: dict, update: AttachedObjectUpdate, operation: Operation) -> None:
        spec = update.object
        context = f"attached object {spec.id!r}"
        if not spec.id:
            raise SceneError("an attached object needs a non-empty id")
        _check_object_id(spec.id)
        link = update.link_name
        if link not in self._link_poses:
            raise SceneError(f"{context}: unknown link {link!r}; links are {list(self.robot_model.link_names)}")
        touch_links = frozenset(update.touch_links)
        T_link_plan = invert_transform(self._link_poses[link])
        if spec.has_geometry or operation == Operation.APPEND:
            in_link = spec.frame_id in ("", link)
            T_link_frame = np.eye(4) if in_link else T_link_plan @ self.frame_transform(spec.frame_id)
            current = attached.get(spec.id) if operation == Operation.APPEND else None
            shaped = spec if current is not None else with_moveit_shape_poses(spec)
            T_link_object = bounded(T_link_frame @ pose_transform(shaped.pose, f"{context}: pose"),
                                     f"{context}: pose in the frame of link {link!r}")
            shapes, subframes = shapes_and_subframes(shaped, context)
            if not shapes:
                raise SceneError(f"{context}: {operation.name} needs a primitive, mesh or plane, or (ADD) the id of a "
                                 f"world object to attach")
            if current is not None:  # MoveIt: the new shapes first, then the object's; the object's pose unless given
                if is_identity(spec.pose):
                    T_link_object = T_link_plan @ self._link_poses[current.link] @ current.object.T_parent_object
                shapes += current.object.shapes
                subframes = {**current.object.subframes, **subframes}
                touch_links |= current.touch_links
            elif spec.id in world:
                _log.warning("%s: a world object of that id is replaced by the attached object", context)
            scene_object = SceneObject(spec.id, T_link_object, shapes, MappingProxyType(subframes))
        elif spec.id in world:
            existing = world[spec.id]
            scene_object = SceneObject(spec.id, T_link_plan @ existing.T_parent_object, existing.shapes,
                                       existing.subframes)
        elif spec.id in attached:
            current = attached[spec.id]
            T_link_object = T_link_plan @ self._link_poses[current.link] @ current.object.T_parent_object
            scene_object = SceneObject(spec.id, T_link_object, current.object.shapes, current.object.subframes)
        else:
            raise SceneError(f"{context}: no geometry given and no world object of that id to attach; world "
                             f"objects are {sorted(world)}")
        world.pop(spec.id, None)
        attached[spec.id] = AttachedObject(scene_object, link, touch_links)

    # ------------------------------------------------------------------ conveniences
    def add_object(self, object_id: str, shapes: Sequence[Any], pose: Any = None, frame_id: str = "",
                   subframes: Mapping[str, Any] | None = None) -> None:
        """Add (or replace) a world object. ``shapes``: shapes, ``Placed`` values or (shape, pose) pairs."""
        self.apply(_update_from_shapes(object_id, Operation.ADD, shapes, pose, frame_id, subframes))

    def append_to_object(self, object_id: str, shapes: Sequence[Any], pose: Any = None, frame_id: str = "") -> None:
        self.apply(_update_from_shapes(object_id, Operation.APPEND, shapes, pose, frame_id, None))

    def move_object(self, object_id: str, pose: Any, frame_id: str = "") -> None:
        self.apply(CollisionObjectUpdate(object_id, Operation.MOVE, frame_id, pose))

    def remove_object(self, object_id: str) -> None:
        """Remove a world object ("" removes them all)."""
        self.apply(CollisionObjectUpdate(object_id, Operation.REMOVE))

    def attach_object(self, object_id: str, link: str, touch_links: Sequence[str] = (),
                      shapes: Sequence[Any] = (), pose: Any = None, frame_id: str = "") -> None:
        """Attach the world object ``object_id`` (no shapes given) or new shapes posed in the link's frame."""
        update = _update_from_shapes(object_id, Operation.ADD, shapes, pose, frame_id, None)
        self.apply_attached(AttachedObjectUpdate(link, update, tuple(touch_links)))

    def detach_object(self, object_id: str) -> None:
        """Detach an attached object; it stays in the world where it is."""
        self.apply_attached(AttachedObjectUpdate("", CollisionObjectUpdate(object_id, Operation.REMOVE)))

    def clear(self) -> None:
        """Remove every world and attached object (the octomap too)."""
        with self._lock:
            self._commit({}, {})

    def drop_attached_objects(self) -> None:
        """Remove every attached object altogether (they do not go back into the world)."""
        with self._lock:
            self._commit(self._world, {})

    def _commit(self, world: Mapping[str, SceneObject], attached: Mapping[str, AttachedObject]) -> None:
        self._world, self._attached = MappingProxyType(dict(world)), MappingProxyType(dict(attached))
        self.version += 1


def _remove_world(world: dict, object_id: str) -> None:
    """REMOVE: one world object, or every one (the octomap stays) for an empty id."""
    if not object_id:
        octomap = world.get(OCTOMAP_ID)
        world.clear()
        if octomap is not None:  # as MoveIt: removing every collision object keeps the octomap
            world[OCTOMAP_ID] = octomap
    elif object_id in world:
        del world[object_id]
    else:
        raise SceneError(f"cannot remove world object {object_id!r}: it does not exist; world objects are "
                         f"{sorted(world)}")


def _detach(world: dict, attached: dict, update: AttachedObjectUpdate, link_poses: Mapping[str, np.ndarray]) -> None:
    """Attached REMOVE: the objects back into the world where they are (one, or every one of a link or of all)."""
    object_id, link = update.object.id, update.link_name
    if object_id:
        if object_id not in attached:
            raise SceneError(f"cannot detach {object_id!r}: it is not attached; attached objects are "
                             f"{sorted(attached)}")
        if link and attached[object_id].link != link:
            raise SceneError(f"cannot detach {object_id!r} from link {link!r}: it is attached to link "
                             f"{attached[object_id].link!r} (leave link_name empty or name that link)")
        ids = [object_id]
    else:
        ids = [k for k, a in attached.items() if not link or a.link == link]
    for key in ids:
        item = attached.pop(key)
        if key in world:  # as MoveIt: the world object stays, the detached one is dropped
            _log.warning("detached object %r dropped: the world already has an object of that id", key)
            continue
        T_plan_object = link_poses[item.link] @ item.object.T_parent_object
        world[key] = SceneObject(key, T_plan_object, item.object.shapes, item.object.subframes)


def scene_of(robot_model: RobotModel, world: Mapping[str, SceneObject], attached: Mapping[str, AttachedObject],
             settings: SceneSettings) -> PlanningScene:
    """A scene of ``robot_model`` holding these objects and settings as they are: another scene's content on a
    model of the same description (a planning process's copy of the robot, for instance)."""
    scene = PlanningScene(robot_model)
    scene._settings = settings
    scene._commit(world, attached)
    return scene


def carried_to(scene: PlanningScene, robot_model: RobotModel) -> PlanningScene:
    """A scene of ``robot_model`` (a new robot description) with ``scene``'s world objects where they are in the
    planning frame (the octomap and point clouds too) and its settings, less the padding and scale of links the
    new robot lacks and the colours of objects it lacks; attached objects are dropped (their links may be
    gone)."""
    other = PlanningScene(robot_model)
    links = set(robot_model.link_names)
    with scene._lock:
        world, settings = scene._world, scene._settings
    other._world = world
    other._settings = replace(
        settings,
        link_padding=MappingProxyType({k: v for k, v in settings.link_padding.items() if k in links}),
        link_scale=MappingProxyType({k: v for k, v in settings.link_scale.items() if k in links}),
        object_colors=MappingProxyType({k: v for k, v in settings.object_colors.items() if k in world}))
    other.max_object_triangles = scene.max_object_triangles
    return other


# ---------------------------------------------------------------------------------------------- checks
def _check_object_id(object_id: str) -> None:
    if object_id == OCTOMAP_ID:
        raise SceneError(f"the id {OCTOMAP_ID!r} is reserved for the octomap (set_octomap); use another id")


def _link_values(values: Mapping[str, float], what: str, minimum: float | None, links: Mapping) -> dict[str, float]:
    """{link: value} for robot ``links``, finite and >= minimum (> 0 without one); other names are skipped."""
    checked = {}
    for link, value in values.items():
        number = float(value)
        if not math.isfinite(number) or (number < minimum if minimum is not None else number <= 0.0):
            bound = ">= 0 [m]" if minimum is not None else "> 0"
            raise SceneError(f"link {what} of {link!r} must be finite and {bound}; got {value!r}")
        if link in links:
            checked[link] = number
        else:
            _log.warning("link %s of %r ignored: no such link", what, link)
    return checked


def _moved_shapes(existing: SceneObject, update: CollisionObjectUpdate, context: str) -> tuple[Placed, ...]:
    """MOVE: the object's shapes, re-posed by the update's shape poses when it gives any (one per shape, in the
    order primitives, meshes, planes, as MoveIt)."""
    poses = [*update.primitive_poses, *update.mesh_poses, *update.plane_poses]
    if not poses:
        return existing.shapes
    if len(poses) != len(existing.shapes):
        raise SceneError(f"cannot move {context}: {len(poses)} shape poses given for its {len(existing.shapes)} "
                         f"shapes; give one per shape or none")
    return tuple(Placed(p.shape, pose_transform(pose, f"{context}: shape pose {k}"))
                 for k, (p, pose) in enumerate(zip(existing.shapes, poses)))


def _frame_transform(frame_id: str, world, attached, link_poses, planning_frame, model, fixed_frames) -> np.ndarray:
    if frame_id in ("", planning_frame):
        return np.eye(4)
    if frame_id in link_poses:
        return link_poses[frame_id]
    if frame_id in fixed_frames and frame_id not in world and frame_id not in attached:
        return fixed_frames[frame_id]
    object_id, _, subframe = frame_id.partition("/")
    if object_id in world:
        scene_object, T_plan_parent = world[object_id], np.eye(4)
    elif object_id in attached:
        scene_object, T_plan_parent = attached[object_id].object, link_poses[attached[object_id].link]
    else:
        objects = sorted(world) + sorted(attached)
        raise SceneError(f"unknown frame {frame_id!r}: not the planning frame {planning_frame!r}, a robot link "
                         f"(e.g. {list(model.link_names)[:8]}), a fixed frame {sorted(fixed_frames)} or an object "
                         f"{objects}")
    T_plan_object = T_plan_parent @ scene_object.T_parent_object
    if not subframe:
        return T_plan_object
    if subframe not in scene_object.subframes:
        raise SceneError(f"unknown frame {frame_id!r}: object {object_id!r} has subframes "
                         f"{sorted(scene_object.subframes)}")
    return T_plan_object @ scene_object.subframes[subframe]


def _update_from_shapes(object_id, operation, shapes, pose, frame_id, subframes) -> CollisionObjectUpdate:
    groups = {"primitives": [], "primitive_poses": [], "meshes": [], "mesh_poses": [], "planes": [], "plane_poses": []}
    for item in shapes:
        if isinstance(item, Placed):
            shape, shape_pose = item.shape, item.T_frame_shape
        elif isinstance(item, tuple) and len(item) == 2:
            shape, shape_pose = item
        else:
            shape, shape_pose = item, None
        key = "meshes" if isinstance(shape, (Mesh, str, os.PathLike)) else "planes" if isinstance(shape, Plane) \
            else "primitives"
        groups[key].append(shape)
        groups["mesh_poses" if key == "meshes" else key[:-1] + "_poses"].append(shape_pose)
    subframes = dict(subframes or {})
    return CollisionObjectUpdate(object_id, operation, frame_id, pose, subframe_names=tuple(subframes),
                                 subframe_poses=tuple(subframes.values()), **{k: tuple(v) for k, v in groups.items()})
