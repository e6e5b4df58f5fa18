"""moveit_msgs/PlanningScene <-> the planning scene: a received scene as a ``PlanningSceneMessage`` (SceneError
names what is malformed), and the node's scene as a PlanningScene message with the requested components.

A received scene's frames are resolved as collision objects' are (``conversions.SceneFrameResolver``); fixed
frame transforms must be given in the model frame. Sent scenes are in the model frame, with ``is_diff`` false.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np
from geometry_msgs.msg import Point, TransformStamped
from moveit_msgs.msg import (
    AllowedCollisionEntry,
    AllowedCollisionMatrix,
    AttachedCollisionObject,
    CollisionObject,
    LinkPadding,
    LinkScale,
    ObjectColor,
    PlanningScene,
    PlanningSceneComponents,
)
from octomap_msgs.msg import OctomapWithPose
from shape_msgs.msg import Mesh as MeshMsg
from shape_msgs.msg import MeshTriangle, SolidPrimitive
from shape_msgs.msg import Plane as PlaneMsg
from std_msgs.msg import ColorRGBA

from ...collision.allowed_collisions import AllowedCollisionMatrix as CollisionMatrix
from ...collision.allowed_collisions import CollisionMatrixError
from ...collision.geometry import Box, Cone, Cylinder, GeometryError, Mesh, Plane, Sphere
from ...collision.octomap_format import OctomapFormatError
from ...collision.octree import OCTOMAP_ID, Octree
from ...collision.scene import PlanningScene as Scene
from ...collision.scene import SceneError, SceneObject
from ...collision.scene_message import OctomapUpdate, PlanningSceneMessage, in_part
from ...geometry.poses import PoseError, transform_from_any_pose
from ...model.robot_model import RobotModel
from .conversions import (
    SceneFrameResolver,
    attached_object_update,
    collision_object_update,
    joint_values_from_joint_state,
    normalized_frame_id,
    pose_msg_from_transform,
    robot_state_msg,
    transform_from_transform_msg,
    transform_msg_from_transform,
)

ALL_COMPONENTS = 1023  # every PlanningSceneComponents bit


# ---------------------------------------------------------------------------------------------- received scenes
def planning_scene_message(msg: PlanningScene, model: RobotModel, resolve_frame: SceneFrameResolver,
                           is_model_frame: Callable[[str], bool],
                           max_mesh_triangles: int | None = None) -> PlanningSceneMessage:
    """The plain-Python form of a received scene; SceneError names the first malformed part. Of ``robot_state``
the single-DOF joints of ``model`` place its links for this scene's frames. An object of more than
``max_mesh_triangles`` mesh triangles is a malformed part."""
    full = not msg.is_diff
    state = msg.robot_state
    state_given = bool(state.joint_state.name or state.multi_dof_joint_state.joint_names or
                       state.attached_collision_objects)
    world = msg.world
    resolve_frame = _with_own_frames(msg, resolve_frame)
    return PlanningSceneMessage(
        is_diff=msg.is_diff, name=msg.name,
        # joints of other descriptions (move_group's robot may have more) are skipped, as on joint_states
        joint_values=joint_values_from_joint_state(state.joint_state, model, strict=False),
        attached_objects=[in_part(f"robot_state.attached_collision_objects[{k}]", attached_object_update, item,
                                  resolve_frame, max_mesh_triangles)
                          for k, item in enumerate(state.attached_collision_objects)],
        replace_attached=not state.is_diff and (full or state_given),
        fixed_frames=_fixed_frames(msg.fixed_frame_transforms, is_model_frame) if msg.fixed_frame_transforms or full
        else None,
        allowed_collisions=_collision_matrix(msg.allowed_collision_matrix),
        link_padding={item.link_name: item.padding for item in msg.link_padding},
        link_scale={item.link_name: item.scale for item in msg.link_scale},
        object_colors={item.id: (item.color.r, item.color.g, item.color.b, item.color.a) for item in msg.object_colors},
        collision_objects=[in_part(f"world.collision_objects[{k}]", collision_object_update, item, resolve_frame,
                                   max_mesh_triangles) for k, item in enumerate(world.collision_objects)],
        octomap=_octomap(world.octomap, resolve_frame) if world.octomap.octomap.id or full else None,
    )


def _with_own_frames(msg: PlanningScene, resolve_frame: SceneFrameResolver) -> SceneFrameResolver:
    """``resolve_frame``, except for the frames the message defines itself (its fixed frames and objects, with
    their subframes): those are left to the scene it is applied to."""
    defined = {normalized_frame_id(item.child_frame_id) for item in msg.fixed_frame_transforms}
    defined |= {item.id for item in msg.world.collision_objects}
    defined |= {item.object.id for item in msg.robot_state.attached_collision_objects}

    def resolve(frame_id: str):
        name = normalized_frame_id(frame_id)
        return (name, None) if name and name.partition("/")[0] in defined else resolve_frame(frame_id)
    return resolve


def _fixed_frames(transforms: list[TransformStamped], is_model_frame) -> dict[str, np.ndarray]:
    frames = {}
    for k, item in enumerate(transforms):
        what = f"fixed_frame_transforms[{k}] ({item.child_frame_id!r})"
        if item.header.frame_id and not is_model_frame(item.header.frame_id):
            raise SceneError(f"{what}: must be given in the model frame; got header.frame_id "
                             f"{item.header.frame_id!r}")
        if not item.child_frame_id:
            raise SceneError(f"{what}: child_frame_id is empty")
        try:
            frames[normalized_frame_id(item.child_frame_id)] = transform_from_transform_msg(item.transform)
        except ValueError as error:
            raise SceneError(f"{what}: {error}") from None
    return frames


def _collision_matrix(msg: AllowedCollisionMatrix) -> CollisionMatrix | None:
    if not msg.entry_names and not msg.default_entry_names:
        return None
    try:
        return CollisionMatrix.from_matrix(msg.entry_names, [list(entry.enabled) for entry in msg.entry_values],
                                           msg.default_entry_names, list(msg.default_entry_values))
    except CollisionMatrixError as error:
        raise SceneError(str(error)) from None


def _octomap(msg: OctomapWithPose, resolve_frame: SceneFrameResolver) -> OctomapUpdate:
    octomap = msg.octomap
    if len(octomap.data) == 0:
        return OctomapUpdate(None)
    try:
        octree = Octree.from_stream(np.asarray(octomap.data, dtype=np.int8).tobytes(), octomap.binary,
                                    octomap.resolution, octomap.id)
    except (OctomapFormatError, GeometryError) as error:
        raise SceneError(f"world.octomap: {error}") from None
    frame, T_frame_given = in_part("world.octomap", resolve_frame, msg.header.frame_id)
    if T_frame_given is None:
        return OctomapUpdate(octree, frame, msg.origin)
    try:
        return OctomapUpdate(octree, frame, T_frame_given @ transform_from_any_pose(msg.origin))
    except PoseError as error:
        raise SceneError(f"world.octomap: origin: {error}") from None


# ---------------------------------------------------------------------------------------------- sent scenes
def planning_scene_msg(scene: Scene, components: int, robot_disabled: Mapping[frozenset[str], str],
                       robot_links: list[str], joint_names: list[str], joint_values: Mapping[str, object]
                       ) -> PlanningScene:
    """The scene as moveit_msgs/PlanningScene with the PlanningSceneComponents bits of ``components`` (0: all);
    the ACM's robot part from ``robot_disabled`` over ``robot_links`` (links with geometry)."""
    wanted = components or ALL_COMPONENTS
    settings, frame = scene.settings, scene.planning_frame
    msg = PlanningScene(is_diff=False)
    if wanted & PlanningSceneComponents.SCENE_SETTINGS:
        msg.name, msg.robot_model_name = settings.name, scene.robot_model.name
    if wanted & PlanningSceneComponents.ROBOT_STATE:
        msg.robot_state = robot_state_msg(joint_names, joint_values)
    if wanted & PlanningSceneComponents.ROBOT_STATE_ATTACHED_OBJECTS:
        msg.robot_state.attached_collision_objects = [
            AttachedCollisionObject(link_name=item.link, object=_object_msg(item.object, item.link, True),
                                    touch_links=sorted(item.touch_links))
            for item in scene.attached_objects.values()]
    if wanted & PlanningSceneComponents.TRANSFORMS:
        msg.fixed_frame_transforms = [_transform_stamped(frame, frame, np.eye(4))] + [
            _transform_stamped(frame, name, T) for name, T in settings.fixed_frames.items()]
    if wanted & PlanningSceneComponents.ALLOWED_COLLISION_MATRIX:
        names, rows, default_names, default_values = settings.allowed_collisions.as_matrix(robot_disabled,
                                                                                           robot_links)
        msg.allowed_collision_matrix = AllowedCollisionMatrix(
            entry_names=names, entry_values=[AllowedCollisionEntry(enabled=row) for row in rows],
            default_entry_names=default_names, default_entry_values=default_values)
    if wanted & PlanningSceneComponents.LINK_PADDING_AND_SCALING:
        msg.link_padding = [LinkPadding(link_name=link, padding=settings.link_padding.get(link, 0.0))
                            for link in robot_links]
        msg.link_scale = [LinkScale(link_name=link, scale=settings.link_scale.get(link, 1.0)) for link in robot_links]
    if wanted & PlanningSceneComponents.OBJECT_COLORS:
        msg.object_colors = [ObjectColor(id=key, color=ColorRGBA(r=r, g=g, b=b, a=a))
                             for key, (r, g, b, a) in settings.object_colors.items()]
    world = [item for key, item in scene.world_objects.items() if key != OCTOMAP_ID]
    geometry = bool(wanted & PlanningSceneComponents.WORLD_OBJECT_GEOMETRY)
    if geometry or wanted & PlanningSceneComponents.WORLD_OBJECT_NAMES:
        msg.world.collision_objects = [_object_msg(item, frame, geometry) for item in world]
    octomap = scene.world_objects.get(OCTOMAP_ID)
    if wanted & PlanningSceneComponents.OCTOMAP and octomap is not None:
        msg.world.octomap = _octomap_msg(octomap, frame)
    return msg


def _transform_stamped(parent: str, child: str, T: np.ndarray) -> TransformStamped:
    item = TransformStamped(child_frame_id=child, transform=transform_msg_from_transform(T))
    item.header.frame_id = parent
    return item


def _object_msg(item: SceneObject, frame_id: str, geometry: bool) -> CollisionObject:
    """An ADD of the object, posed in ``frame_id`` (its parent: the planning frame or its link)."""
    msg = CollisionObject(id=item.id, pose=pose_msg_from_transform(item.T_parent_object))
    msg.header.frame_id = frame_id
    msg.operation = CollisionObject.ADD
    if not geometry:
        return msg
    for placed in item.shapes:
        shape, pose = placed.shape, pose_msg_from_transform(placed.T_frame_shape)
        if isinstance(shape, Octree):  # point-cloud voxels, one box each
            for center in shape.centers:
                T = placed.T_frame_shape.copy()
                T[:3, 3] = T[:3, :3] @ center + T[:3, 3]
                msg.primitives.append(SolidPrimitive(type=SolidPrimitive.BOX, dimensions=[shape.resolution] * 3))
                msg.primitive_poses.append(pose_msg_from_transform(T))
        elif isinstance(shape, Mesh):
            msg.meshes.append(MeshMsg(triangles=[MeshTriangle(vertex_indices=[int(i) for i in t])
                                                 for t in shape.triangles],
                                      vertices=[_point(v) for v in shape.vertices]))
            msg.mesh_poses.append(pose)
        elif isinstance(shape, Plane):
            msg.planes.append(PlaneMsg(coef=list(shape.coefficients)))
            msg.plane_poses.append(pose)
        else:
            msg.primitives.append(_primitive(shape))
            msg.primitive_poses.append(pose)
    msg.subframe_names = list(item.subframes)
    msg.subframe_poses = [pose_msg_from_transform(T) for T in item.subframes.values()]
    return msg


def _primitive(shape: Box | Sphere | Cylinder | Cone) -> SolidPrimitive:
    if isinstance(shape, Box):
        return SolidPrimitive(type=SolidPrimitive.BOX, dimensions=list(shape.size))
    if isinstance(shape, Sphere):
        return SolidPrimitive(type=SolidPrimitive.SPHERE, dimensions=[shape.radius])
    kind = SolidPrimitive.CYLINDER if isinstance(shape, Cylinder) else SolidPrimitive.CONE
    return SolidPrimitive(type=kind, dimensions=[shape.length, shape.radius])


def _point(vertex) -> Point:
    return Point(x=float(vertex[0]), y=float(vertex[1]), z=float(vertex[2]))


def _octomap_msg(item: SceneObject, frame_id: str) -> OctomapWithPose:
    (placed,) = item.shapes
    octree = placed.shape
    msg = OctomapWithPose(origin=pose_msg_from_transform(item.T_parent_object @ placed.T_frame_shape))
    msg.header.frame_id = msg.octomap.header.frame_id = frame_id
    msg.octomap.binary, msg.octomap.id, msg.octomap.resolution = True, "OcTree", octree.resolution
    msg.octomap.data = np.frombuffer(octree.binary_stream(), dtype=np.int8).tolist()
    return msg
