"""Conversions between ROS messages and kinematics_py's core types, and request checks on them.

Poses become 4x4 transforms ``T_frame_link`` (quaternions x, y, z, w as in geometry_msgs); joint states
become {joint name: value} mappings as ``RobotModel`` takes them; moveit_msgs/CollisionObject and
AttachedCollisionObject become the planning scene's updates (SceneError names what is malformed), and
collision contacts become ContactInformation. Request problems raise ``RequestError`` carrying the MoveIt
error code. (moveit_msgs/Constraints: see ``constraints``.)
"""
from __future__ import annotations

import itertools
import math
import operator
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np
from builtin_interfaces.msg import Duration
from geometry_msgs.msg import Pose as PoseMsg
from geometry_msgs.msg import Transform
from moveit_msgs.msg import (
    AttachedCollisionObject,
    CollisionObject,
    ContactInformation,
    MoveItErrorCodes,
    RobotState,
)

from ...collision.checker import Contact
from ...collision.geometry import GeometryError, Mesh, Plane, solid_primitive, triangle_count_problem
from ...collision.scene import AttachedObjectUpdate, CollisionObjectUpdate, SceneError, with_moveit_shape_poses
from ...errors import ErrorCode, RequestError
from ...geometry.poses import PoseError, transform_from_any_pose
from ...geometry.transforms import quaternion_from_rotation
from ...model.robot_model import RobotModel


# ---------------------------------------------------------------------------------------------- frames
def normalized_frame_id(frame_id: str) -> str:
    """A frame id as tf2 stores it: one leading slash removed ("/table" -> "table", a ROS 1 habit)."""
    return frame_id[1:] if frame_id.startswith("/") else frame_id


# ---------------------------------------------------------------------------------------------- poses
def transform_from_pose_msg(pose: PoseMsg, what: str = "pose") -> np.ndarray:
    """``T`` of a geometry_msgs/Pose; RequestError(INVALID_GOAL_CONSTRAINTS) if not finite or no rotation."""
    try:
        return transform_from_any_pose(pose)
    except PoseError as error:
        raise RequestError(ErrorCode.INVALID_GOAL_CONSTRAINTS, f"invalid {what}: {error}") from None


def pose_msg_from_transform(T: np.ndarray) -> PoseMsg:
    pose = PoseMsg()
    pose.position.x, pose.position.y, pose.position.z = (float(v) for v in T[:3, 3])
    q = quaternion_from_rotation(T[:3, :3])
    pose.orientation.x, pose.orientation.y, pose.orientation.z, pose.orientation.w = (float(v) for v in q)
    return pose


def transform_from_transform_msg(transform: Transform) -> np.ndarray:
    """``T`` of a geometry_msgs/Transform; PoseError if it is not finite or its quaternion is zero."""
    t, r = transform.translation, transform.rotation
    return transform_from_any_pose(PoseLike((t.x, t.y, t.z), (r.x, r.y, r.z, r.w)))


def transform_msg_from_transform(T: np.ndarray) -> Transform:
    transform = Transform()
    transform.translation.x, transform.translation.y, transform.translation.z = (float(v) for v in T[:3, 3])
    q = quaternion_from_rotation(T[:3, :3])
    r = transform.rotation
    r.x, r.y, r.z, r.w = (float(v) for v in q)
    return transform


@dataclass(frozen=True)
class PoseLike:
    position: tuple[float, float, float]
    orientation: tuple[float, float, float, float]


def seconds_from_duration(duration: Duration) -> float:
    """builtin_interfaces/Duration in [s], nanoseconds included (move_group drops them)."""
    return duration.sec + duration.nanosec * 1e-9


def error_code_msg(code: ErrorCode, message: str, source: str) -> MoveItErrorCodes:
    return MoveItErrorCodes(val=int(code), message=message, source=source)


# ---------------------------------------------------------------------------------------------- joint states
def joint_values_from_joint_state(joint_state, model: RobotModel, *, strict: bool) -> dict[str, float]:
    """{joint: position} of a sensor_msgs/JointState's single-DOF joints.

    ``strict`` (requests): unknown names, names without a position and non-finite values raise
    RequestError(INVALID_ROBOT_STATE). Otherwise (the /joint_states topic, which often lists joints of
    other descriptions) those entries are skipped.
    """
    names, positions = list(joint_state.name), list(joint_state.position)
    if strict and len(names) != len(positions):
        raise RequestError(ErrorCode.INVALID_ROBOT_STATE,
                           f"joint_state has {len(names)} names but {len(positions)} positions")
    values = {}
    unknown, non_finite = [], []
    single_dof = model.single_dof_joint_names
    for name, position in zip(names, positions):
        if name not in model.joints or name not in single_dof:
            unknown.append(name)
        elif not math.isfinite(position):
            non_finite.append(name)
        else:
            values[name] = float(position)
    if strict and unknown:
        raise RequestError(ErrorCode.INVALID_ROBOT_STATE,
                           f"joint_state names unknown joints {unknown}; the robot's single-DOF joints are "
                           f"{list(single_dof)}")
    if strict and non_finite:
        raise RequestError(ErrorCode.INVALID_ROBOT_STATE, f"joint_state positions are not finite for {non_finite}")
    return values


def joint_values_from_robot_state(state: RobotState, model: RobotModel) -> dict[str, object]:
    """The joint values a moveit_msgs/RobotState gives (strictly checked), floating joints included."""
    values: dict[str, object] = joint_values_from_joint_state(state.joint_state, model, strict=True)
    multi = state.multi_dof_joint_state
    if len(multi.joint_names) != len(multi.transforms):
        raise RequestError(ErrorCode.INVALID_ROBOT_STATE, f"multi_dof_joint_state has {len(multi.joint_names)} "
                           f"names but {len(multi.transforms)} transforms")
    for name, transform in zip(multi.joint_names, multi.transforms):
        joint = model.joints.get(name)
        if joint is None or joint.type != "floating":
            floating = [j for j, spec in model.joints.items() if spec.type == "floating"]
            raise RequestError(ErrorCode.INVALID_ROBOT_STATE,
                               f"multi_dof_joint_state names {name!r}, which is not a floating joint of the robot "
                               f"(floating joints: {floating}; planar joints are not supported here)")
        try:
            T = transform_from_transform_msg(transform)
        except ValueError as error:
            raise RequestError(ErrorCode.INVALID_ROBOT_STATE, f"multi_dof_joint_state {name!r}: {error}") from None
        values[name] = np.concatenate([T[:3, 3], rpy_from_rotation(T[:3, :3])])
    return values


def rpy_from_rotation(R: np.ndarray) -> np.ndarray:
    """URDF roll, pitch, yaw [rad] of a rotation (R = Rz(yaw) Ry(pitch) Rx(roll))."""
    pitch = math.asin(float(np.clip(-R[2, 0], -1.0, 1.0)))
    return np.array([math.atan2(R[2, 1], R[2, 2]), pitch, math.atan2(R[1, 0], R[0, 0])])


def robot_state_msg(joint_names: Sequence[str], values: Mapping[str, object],
                    state: RobotState | None = None) -> RobotState:
    """A full (is_diff = false) RobotState listing ``joint_names`` with their values: ``state``, a RobotState as
    constructed (e.g. the one a new response holds), filled, or a new one."""
    state = RobotState() if state is None else state
    state.joint_state.name = list(joint_names)
    state.joint_state.position = [float(values[name]) for name in joint_names]
    state.is_diff = False
    return state


# ---------------------------------------------------------------------------------------------- planning scene
#: Resolves an object's header.frame_id into (a frame the planning scene knows, T_that_frame_given or None).
SceneFrameResolver = Callable[[str], "tuple[str, np.ndarray | None]"]
_SHAPE_OPERATIONS = (CollisionObject.ADD[0], CollisionObject.APPEND[0])


def operation_of(msg: CollisionObject) -> int:
    """A CollisionObject's operation as an int (rclpy gives ``byte`` fields as bytes)."""
    operation = msg.operation
    return operation[0] if isinstance(operation, (bytes, bytearray)) else int(operation)


def collision_object_update(msg: CollisionObject, resolve_frame: SceneFrameResolver,
                            max_mesh_triangles: int | None = None) -> CollisionObjectUpdate:
    """The planning-scene update of a moveit_msgs/CollisionObject; SceneError says what is malformed, also meshes
    of more than ``max_mesh_triangles`` triangles together (counted before anything is converted).

    As in MoveIt, REMOVE uses only the id, MOVE only the id and the poses; ADD and APPEND read the shapes, with
    MoveIt's defaults for their poses (``with_moveit_shape_poses``; a frame looked up in TF is composed after).
    """
    operation = operation_of(msg)
    if operation == CollisionObject.REMOVE[0]:
        return CollisionObjectUpdate(msg.id, operation)
    context = f"collision object {msg.id!r}"
    frame, T_frame_given = resolve_frame(msg.header.frame_id)
    if operation not in _SHAPE_OPERATIONS:
        update = CollisionObjectUpdate(msg.id, operation, frame, msg.pose, primitive_poses=list(msg.primitive_poses),
                                       mesh_poses=list(msg.mesh_poses), plane_poses=list(msg.plane_poses))
        return _in_frame(update, T_frame_given, context)
    problem = triangle_count_problem(msg.meshes, max_mesh_triangles, context)
    if problem:
        raise SceneError(problem)
    update = CollisionObjectUpdate(
        msg.id, operation, frame, msg.pose,
        primitives=[_scene_shape(lambda p=p: solid_primitive(p.type, p.dimensions), f"{context}: primitives[{k}]")
                    for k, p in enumerate(msg.primitives)],
        primitive_poses=list(msg.primitive_poses),
        meshes=[_scene_shape(lambda m=m: _mesh(m), f"{context}: meshes[{k}]") for k, m in enumerate(msg.meshes)],
        mesh_poses=list(msg.mesh_poses),
        planes=[_scene_shape(lambda p=p: Plane(tuple(p.coef)), f"{context}: planes[{k}]")
                for k, p in enumerate(msg.planes)],
        plane_poses=list(msg.plane_poses),
        subframe_names=list(msg.subframe_names),
        subframe_poses=list(msg.subframe_poses),
    )
    if operation == CollisionObject.ADD[0]:  # (an APPEND's pose is read only if the object is new)
        update = with_moveit_shape_poses(update)
    return _in_frame(update, T_frame_given, context)


def _in_frame(update: CollisionObjectUpdate, T_frame_given: np.ndarray | None, context: str) -> CollisionObjectUpdate:
    """``update`` with its pose composed with ``T_frame_given`` (a frame looked up in TF), when there is one."""
    if T_frame_given is None:
        return update
    pose = np.eye(4) if update.pose is None else _scene_transform(update.pose, f"{context}: pose")
    return replace(update, pose=T_frame_given @ pose)


def attached_object_update(msg: AttachedCollisionObject, resolve_frame: SceneFrameResolver,
                           max_mesh_triangles: int | None = None) -> AttachedObjectUpdate:
    """The planning-scene update of a moveit_msgs/AttachedCollisionObject (an empty object frame is the link's)."""
    return AttachedObjectUpdate(msg.link_name, collision_object_update(msg.object, resolve_frame, max_mesh_triangles),
                                tuple(msg.touch_links))


def _mesh(msg) -> Mesh:
    """A shape_msgs/Mesh as a Mesh: one pass over the message's points and triangles into numpy arrays (no
    per-element Python lists: a 200k-triangle mesh converts in a fraction of a second)."""
    vertices = np.fromiter(itertools.chain.from_iterable(map(_XYZ, msg.vertices)), dtype=float,
                           count=3 * len(msg.vertices)).reshape(-1, 3)
    indices = list(map(_VERTEX_INDICES, msg.triangles))
    triangles = np.concatenate(indices).astype(np.int64) if indices else np.empty(0, dtype=np.int64)
    return Mesh(vertices, triangles.reshape(-1, 3))


_XYZ = operator.attrgetter("x", "y", "z")
_VERTEX_INDICES = operator.attrgetter("vertex_indices")


def _scene_shape(build: Callable, what: str):
    try:
        return build()
    except GeometryError as error:
        raise SceneError(f"{what}: {error}") from None


def _scene_transform(pose: PoseMsg, what: str) -> np.ndarray:
    try:
        return transform_from_any_pose(pose)
    except PoseError as error:
        raise SceneError(f"{what}: {error}") from None


def contact_msg(contact: Contact, frame_id: str, stamp) -> ContactInformation:
    """moveit_msgs/ContactInformation of a contact (position and normal in ``frame_id``, the planning frame)."""
    msg = ContactInformation(depth=float(contact.depth), contact_body_1=contact.body_1,
                             body_type_1=int(contact.type_1), contact_body_2=contact.body_2,
                             body_type_2=int(contact.type_2))
    msg.header.frame_id, msg.header.stamp = frame_id, stamp
    msg.position.x, msg.position.y, msg.position.z = (float(v) for v in contact.position)
    msg.normal.x, msg.normal.y, msg.normal.z = (float(v) for v in contact.normal)
    return msg
