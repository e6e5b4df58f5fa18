"""Updates of the planning scene as moveit_msgs/CollisionObject and AttachedCollisionObject give them, and how
MoveIt reads their shapes and poses (moveit_core's planning scene): a shape without a pose is at the object's
pose, and an object of one shape whose pose is the identity takes the shape's pose as its own.

Poses are ``Pose`` values, (position, quaternion xyzw) pairs, geometry_msgs/Pose-like objects or 4x4 arrays;
None is the identity.
"""
from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, replace
from enum import IntEnum
from typing import Any

import numpy as np

from ..errors import KinematicsError
from ..geometry.poses import Pose, PoseError, transform_from_any_pose
from .geometry import Box, Cone, Cylinder, GeometryError, Mesh, Placed, Plane, Sphere, coordinate_problem, load_mesh


class SceneError(KinematicsError, ValueError):
    """An update that cannot be applied; the scene is unchanged."""


class Operation(IntEnum):
    """moveit_msgs/CollisionObject operation constants."""

    ADD = 0
    REMOVE = 1
    APPEND = 2
    MOVE = 3


@dataclass(frozen=True)
class CollisionObjectUpdate:
    """moveit_msgs/CollisionObject in plain Python.

    ``meshes`` entries are Mesh values or mesh file paths/URIs (loaded when the update is applied).
    A pose of None is the identity.
    """

    id: str
    operation: Operation = Operation.ADD
    frame_id: str = ""
    pose: Any = None
    primitives: Sequence[Box | Sphere | Cylinder | Cone] = ()
    primitive_poses: Sequence[Any] = ()
    meshes: Sequence[Mesh | str | os.PathLike] = ()
    mesh_poses: Sequence[Any] = ()
    planes: Sequence[Plane] = ()
    plane_poses: Sequence[Any] = ()
    subframe_names: Sequence[str] = ()
    subframe_poses: Sequence[Any] = ()

    @property
    def has_geometry(self) -> bool:
        return bool(len(self.primitives) or len(self.meshes) or len(self.planes))


@dataclass(frozen=True)
class AttachedObjectUpdate:
    """moveit_msgs/AttachedCollisionObject in plain Python: ``object.operation`` ADD attaches, REMOVE detaches."""

    link_name: str
    object: CollisionObjectUpdate
    touch_links: Sequence[str] = ()


def checked_operation(update: CollisionObjectUpdate) -> Operation:
    """The update's operation; SceneError naming the valid ones for any other value."""
    try:
        return Operation(update.operation)
    except ValueError:
        raise SceneError(f"collision object {update.id!r}: unknown operation {update.operation!r}; operations are "
                         f"{ {o.name: o.value for o in Operation} }") from None


def pose_transform(pose: Any, what: str) -> np.ndarray:
    """4x4 transform of a pose of an update (None: the identity); SceneError naming ``what`` if unusable."""
    if pose is None:
        return np.eye(4)
    if isinstance(pose, (tuple, list)) and len(pose) == 2:  # (position, quaternion xyzw)
        pose = Pose(*pose)
    try:
        return bounded(transform_from_any_pose(pose), what)
    except PoseError as error:
        raise SceneError(f"{what}: {error}") from None


def bounded(T: np.ndarray, what: str) -> np.ndarray:
    """``T``, if its position lies within the world's bounds (``MAX_COORDINATE``); SceneError naming it if not."""
    problem = coordinate_problem(T[:3, 3], f"{what}: position")
    if problem is not None:
        raise SceneError(problem)
    return T


_SHAPE_GROUPS = (("primitives", "primitive_poses", (Box, Sphere, Cylinder, Cone)), ("meshes", "mesh_poses", (Mesh,)),
                 ("planes", "plane_poses", (Plane,)))


def with_moveit_shape_poses(update: CollisionObjectUpdate) -> CollisionObjectUpdate:
    """``update`` with MoveIt's defaults for its shape poses: an object of exactly one shape whose pose is the
    identity (or None) takes the shape's pose as its own, the shape then at the object's origin (this places
    the object's subframes; where the shape is does not change). Other updates are returned as they are."""
    shape_count = len(update.primitives) + len(update.meshes) + len(update.planes)
    if shape_count != 1 or not is_identity(update.pose):
        return update
    _, poses_name, _ = next(group for group in _SHAPE_GROUPS if len(getattr(update, group[0])))
    poses = getattr(update, poses_name)
    if len(poses) > 1:
        return update  # refused by shapes_and_subframes
    if len(poses):
        try:
            pose_transform(poses[0], poses_name)
        except SceneError:
            return update  # refused by shapes_and_subframes, naming the shape's pose
    return replace(update, pose=poses[0] if len(poses) else None, **{poses_name: (None,)})


def is_identity(pose: Any) -> bool:
    """Whether ``pose`` is exactly the identity (MoveIt's "empty" pose), or None."""
    if pose is None:
        return True
    try:
        return bool(np.array_equal(pose_transform(pose, "pose"), np.eye(4)))
    except SceneError:
        return False


def shapes_and_subframes(update: CollisionObjectUpdate, context: str) -> tuple[tuple[Placed, ...], dict]:
    """The shapes (a shape without a pose is at the object's pose, as MoveIt) and subframes of ``update``."""
    placed = []
    for name, pose_name, types in _SHAPE_GROUPS:
        shapes, poses = getattr(update, name), getattr(update, pose_name)
        if len(poses) > len(shapes):
            raise SceneError(f"{context}: {len(shapes)} {name} but {len(poses)} {pose_name}; give at most one pose "
                             f"per shape (a shape without a pose is at the object's pose)")
        for k, shape in enumerate(shapes):
            shape = _loaded(shape, f"{context}: {name}[{k}]")
            if not isinstance(shape, types):
                raise SceneError(f"{context}: {name}[{k}] is a {type(shape).__name__}; {name} takes "
                                 f"{[t.__name__ for t in types]}")
            pose = poses[k] if k < len(poses) else None
            placed.append(Placed(shape, pose_transform(pose, f"{context}: {pose_name}[{k}]")))
    names, poses = list(update.subframe_names), list(update.subframe_poses)
    if len(poses) > len(names):
        raise SceneError(f"{context}: {len(names)} subframe_names but {len(poses)} subframe_poses; give a name per "
                         f"pose")
    if not all(isinstance(n, str) for n in names):
        raise SceneError(f"{context}: subframe names must be strings; got {names}")
    # as MoveIt: names without a pose are ignored, and of names given twice the last one counts
    subframes = {n: pose_transform(p, f"{context}: subframe {n!r}") for n, p in zip(names, poses)}
    return tuple(placed), subframes


def _loaded(shape: Any, what: str):
    if isinstance(shape, (str, os.PathLike)):
        try:
            return load_mesh(shape)
        except GeometryError as error:
            raise SceneError(f"{what}: {error}") from None
    return shape
