"""A whole planning scene message (moveit_msgs/PlanningScene) in plain Python, applied all at once (MoveIt
applies the parts that succeed and reports failure; here a bad part refuses the whole message).

A full scene (``is_diff`` False) replaces the world, the attached objects, the fixed frames, the allowed
collision matrix, the colours and the octomap; an empty matrix keeps only the robot's own rules (adjacent
links, the SRDF's disabled pairs). A diff changes only what it carries: objects are applied in order, a
matrix or an octomap replace the current ones only when given, and fixed frames are set over the others.
Link padding and scale set the links they list, in both. Every part is applied to a copy of the scene,
which replaces the scene only when all of them succeeded: on a SceneError (naming the part) nothing has
changed.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .allowed_collisions import AllowedCollisionMatrix
from .octree import Octree
from .scene import AttachedObjectUpdate, CollisionObjectUpdate, Operation, PlanningScene, SceneError, SceneSettings


@dataclass(frozen=True)
class OctomapUpdate:
    """world.octomap: ``octree`` (None removes the octomap) posed by ``pose`` in ``frame_id``."""

    octree: Octree | None
    frame_id: str = ""
    pose: Any = None


@dataclass(frozen=True)
class PlanningSceneMessage:
    """moveit_msgs/PlanningScene in plain Python; in a diff, None (or empty) means "unchanged".

    ``joint_values`` place the robot's links for this message's frames. ``replace_attached`` (a robot_state
    with ``is_diff`` False) drops the attached objects before ``attached_objects`` are applied (then only ADD).
    ``fixed_frames``: name -> pose in the planning frame.
    """

    is_diff: bool = True
    name: str = ""
    joint_values: Mapping[str, object] = field(default_factory=dict)
    attached_objects: Sequence[AttachedObjectUpdate] = ()
    replace_attached: bool = False
    fixed_frames: Mapping[str, Any] | None = None
    allowed_collisions: AllowedCollisionMatrix | None = None
    link_padding: Mapping[str, float] = field(default_factory=dict)
    link_scale: Mapping[str, float] = field(default_factory=dict)
    object_colors: Mapping[str, tuple[float, float, float, float]] = field(default_factory=dict)
    collision_objects: Sequence[CollisionObjectUpdate] = ()
    octomap: OctomapUpdate | None = None


def apply_planning_scene(scene: PlanningScene, message: PlanningSceneMessage) -> None:
    """Apply ``message`` to ``scene`` completely, or not at all (SceneError naming the part that failed)."""
    staged = scene.copy()
    full = not message.is_diff
    if full:
        staged.clear()
        staged.change_settings(**vars(SceneSettings()))
    settings = staged.settings
    changes: dict[str, Any] = {}
    if message.name or full:
        changes["name"] = message.name
    if full:
        changes["fixed_frames"] = dict(message.fixed_frames or {})
    elif message.fixed_frames is not None:  # as MoveIt: a diff's frames are set over the others
        changes["fixed_frames"] = {**settings.fixed_frames, **message.fixed_frames}
    if message.allowed_collisions is not None and (full or not message.allowed_collisions.is_empty):
        changes["allowed_collisions"] = message.allowed_collisions
    changes["link_padding"] = {**settings.link_padding, **message.link_padding}
    changes["link_scale"] = {**settings.link_scale, **message.link_scale}
    changes["object_colors"] = {**settings.object_colors, **message.object_colors}
    changes = {name: value for name, value in changes.items()  # a diff of the robot state alone changes nothing
               if name == "fixed_frames" or getattr(settings, name) != value}
    if changes:
        staged.change_settings(**changes)
    if message.joint_values:
        staged.set_robot_state(message.joint_values)
    if message.replace_attached:
        staged.drop_attached_objects()
    for index, update in enumerate(message.attached_objects):
        if message.replace_attached and Operation(update.object.operation) != Operation.ADD:
            raise SceneError(f"robot_state.attached_collision_objects[{index}] ({update.object.id!r}): a robot_state "
                             f"with is_diff false can only ADD attached objects")
        in_part(f"robot_state.attached_collision_objects[{index}]", staged.apply_attached, update)
    for index, update in enumerate(message.collision_objects):
        in_part(f"world.collision_objects[{index}]", staged.apply, update)
    if message.octomap is not None or full:
        octomap = message.octomap or OctomapUpdate(None)
        in_part("world.octomap", staged.set_octomap, octomap.octree, octomap.pose, octomap.frame_id)
    scene.adopt(staged)


def in_part(what: str, function, *arguments):
    """``function(*arguments)``, its SceneError prefixed with ``what`` (the part of the message)."""
    try:
        return function(*arguments)
    except SceneError as error:
        raise SceneError(f"{what}: {error}") from None
