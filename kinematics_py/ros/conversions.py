"""Conversions between ROS messages and kinematics_py's core types, and request checks on them.

Poses become 4x4 transforms ``T_frame_link`` (quaternions x, y, z, w as in geometry_msgs); joint states
become {joint name: value} mappings as ``RobotModel`` takes them; moveit_msgs/Constraints become a
``RequestConstraints`` value that says whether a robot state satisfies them (MoveIt's kinematic
constraint semantics); moveit_msgs/CollisionObject and AttachedCollisionObject become the planning
scene's updates (SceneError names what is malformed), and collision contacts become
ContactInformation. Request problems raise ``RequestError`` carrying the MoveIt error code.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from builtin_interfaces.msg import Duration
from geometry_msgs.msg import Pose as PoseMsg
from geometry_msgs.msg import Transform
from moveit_msgs.msg import (
    AttachedCollisionObject,
    CollisionObject,
    Constraints,
    ContactInformation,
    MoveItErrorCodes,
    OrientationConstraint,
    RobotState,
)
from shape_msgs.msg import SolidPrimitive

from ..collision.checker import Contact
from ..collision.geometry import GeometryError, Mesh, Plane, solid_primitive
from ..collision.scene import AttachedObjectUpdate, CollisionObjectUpdate, SceneError
from ..errors import ErrorCode, KinematicsError, RequestError
from ..geometry.poses import PoseError, transform_from_any_pose
from ..geometry.transforms import invert_transform, quaternion_from_rotation, rotation_log
from ..model.robot_model import RobotModel


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
    """``T`` of a geometry_msgs/Transform; ValueError if it is not finite or its quaternion is zero."""
    t, r = transform.translation, transform.rotation
    try:
        return transform_from_any_pose(PoseLike((t.x, t.y, t.z), (r.x, r.y, r.z, r.w)))
    except PoseError as error:
        raise ValueError(str(error)) from None


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


def robot_state_msg(joint_names: Sequence[str], values: Mapping[str, object]) -> RobotState:
    """A full (is_diff = false) RobotState listing ``joint_names`` with their values."""
    state = RobotState()
    state.joint_state.name = list(joint_names)
    state.joint_state.position = [float(values[name]) for name in joint_names]
    state.is_diff = False
    return state


# ---------------------------------------------------------------------------------------------- constraints
#: Frames of constraint regions: a robot link (None: resolved with the candidate state) or T_root_frame.
FrameResolver = Callable[[str], "np.ndarray | None"]


@dataclass(frozen=True)
class JointBound:
    joint: str
    lower: float
    upper: float
    #: Continuous joints compare the shortest angular distance to the target.
    continuous: bool
    target: float

    def violation(self, value: float) -> str | None:
        if self.continuous:
            difference = math.remainder(value - self.target, 2 * math.pi)
            inside = self.lower - self.target <= difference <= self.upper - self.target
        else:
            inside = self.lower <= value <= self.upper
        if inside:
            return None
        return f"joint {self.joint!r} at {value:.6g} is outside [{self.lower:.6g}, {self.upper:.6g}]"

    def distance(self, value: float) -> float:
        """|value - target| [rad or m] (the shortest angle for continuous joints), as MoveIt reports it."""
        difference = value - self.target
        return abs(math.remainder(difference, 2 * math.pi) if self.continuous else difference)


@dataclass(frozen=True)
class PositionRegion:
    """``link``'s point ``offset`` (in the link frame) must lie inside one of ``shapes`` (in ``frame``)."""

    link: str
    offset: np.ndarray
    frame: str
    T_root_frame: np.ndarray | None
    #: (SolidPrimitive type, dimensions, T_frame_shape) for each shape
    shapes: tuple[tuple[int, tuple[float, ...], np.ndarray], ...]

    def violation(self, poses: Mapping[str, np.ndarray]) -> str | None:
        point_in_root = self._point(poses)
        T_root_frame = self._T_root_frame(poses)
        for shape_type, dimensions, T_frame_shape in self.shapes:
            T_shape_root = invert_transform(T_root_frame @ T_frame_shape)
            if _inside(shape_type, dimensions, T_shape_root[:3, :3] @ point_in_root + T_shape_root[:3, 3]):
                return None
        return (f"position constraint on {self.link!r}: point {np.round(point_in_root, 4).tolist()} (model frame) "
                f"is outside the constraint region")

    def distance(self, poses: Mapping[str, np.ndarray]) -> float:
        """Distance [m] of the point from the centre of the region's first shape, as MoveIt reports it."""
        center = (self._T_root_frame(poses) @ self.shapes[0][2])[:3, 3]
        return float(np.linalg.norm(self._point(poses) - center))

    def _point(self, poses: Mapping[str, np.ndarray]) -> np.ndarray:
        return poses[self.link][:3, :3] @ self.offset + poses[self.link][:3, 3]

    def _T_root_frame(self, poses: Mapping[str, np.ndarray]) -> np.ndarray:
        return poses[self.frame] if self.T_root_frame is None else self.T_root_frame


@dataclass(frozen=True)
class OrientationBound:
    """``link``'s orientation within per-axis tolerances [rad] of ``R_frame_desired``."""

    link: str
    frame: str
    T_root_frame: np.ndarray | None
    R_frame_desired: np.ndarray
    tolerances: np.ndarray
    parameterization: int

    def violation(self, poses: Mapping[str, np.ndarray]) -> str | None:
        error = self._error(poses)
        if np.all(error <= self.tolerances):
            return None
        return (f"orientation constraint on {self.link!r}: error {np.round(error, 4).tolist()} rad exceeds "
                f"tolerances {self.tolerances.tolist()}")

    def distance(self, poses: Mapping[str, np.ndarray]) -> float:
        """Sum of the per-axis errors [rad], as MoveIt reports it."""
        return float(np.sum(self._error(poses)))

    def _error(self, poses: Mapping[str, np.ndarray]) -> np.ndarray:
        T_root_frame = poses[self.frame] if self.T_root_frame is None else self.T_root_frame
        R_desired_link = (T_root_frame[:3, :3] @ self.R_frame_desired).T @ poses[self.link][:3, :3]
        if self.parameterization == OrientationConstraint.ROTATION_VECTOR:
            return np.abs(rotation_log(R_desired_link))
        return np.array([_absolute_angle(a) for a in xyz_euler_angles(R_desired_link)])


def xyz_euler_angles(R: np.ndarray) -> tuple[float, float, float]:
    """Intrinsic x-y-z Euler angles (a, b, c) with R = Rx(a) Ry(b) Rz(c), as MoveIt's XYZ_EULER_ANGLES."""
    b = math.asin(float(np.clip(R[0, 2], -1.0, 1.0)))
    if abs(R[0, 2]) < 1.0 - 1e-12:
        return math.atan2(-R[1, 2], R[2, 2]), b, math.atan2(-R[0, 1], R[0, 0])
    return math.atan2(R[2, 1], R[1, 1]), b, 0.0  # gimbal lock: the x and z rotations share an axis


def _absolute_angle(angle: float) -> float:
    """|angle| wrapped into [0, pi] (MoveIt's normalizeAbsoluteAngle)."""
    wrapped = math.fmod(abs(angle), 2 * math.pi)
    return min(wrapped, 2 * math.pi - wrapped)


def _inside(shape_type: int, dimensions: tuple[float, ...], p: np.ndarray) -> bool:
    if shape_type == SolidPrimitive.BOX:
        return bool(np.all(np.abs(p) <= np.asarray(dimensions[:3]) / 2))
    if shape_type == SolidPrimitive.SPHERE:
        return float(np.linalg.norm(p)) <= dimensions[0]
    height, radius = dimensions[SolidPrimitive.CYLINDER_HEIGHT], dimensions[SolidPrimitive.CYLINDER_RADIUS]
    return abs(p[2]) <= height / 2 and math.hypot(p[0], p[1]) <= radius


_SHAPE_DIMENSIONS = {SolidPrimitive.BOX: 3, SolidPrimitive.SPHERE: 1, SolidPrimitive.CYLINDER: 2}


@dataclass(frozen=True)
class RequestConstraints:
    """The joint, position and orientation constraints of a request, checked against robot states."""

    joint_bounds: tuple[JointBound, ...] = ()
    position_regions: tuple[PositionRegion, ...] = ()
    orientation_bounds: tuple[OrientationBound, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.joint_bounds or self.position_regions or self.orientation_bounds)

    def violation(self, values: Mapping[str, object], model: RobotModel) -> str | None:
        """Why the state ``values`` (every movable joint) violates a constraint, or None if it satisfies all."""
        for bound in self.joint_bounds:
            reason = bound.violation(float(values[bound.joint]))
            if reason:
                return reason
        if self.position_regions or self.orientation_bounds:
            poses = model.link_poses(values)
            for constraint in self.position_regions + self.orientation_bounds:
                reason = constraint.violation(poses)
                if reason:
                    return reason
        return None

    def evaluate(self, values: Mapping[str, object], model: RobotModel) -> list[tuple[str | None, float]]:
        """(violation or None, distance) of every constraint, joint constraints first, then position and
        orientation constraints (MoveIt's order for ConstraintEvalResult)."""
        results = [(bound.violation(float(values[bound.joint])), bound.distance(float(values[bound.joint])))
                   for bound in self.joint_bounds]
        if self.position_regions or self.orientation_bounds:
            poses = model.link_poses(values)
            results += [(constraint.violation(poses), constraint.distance(poses))
                        for constraint in self.position_regions + self.orientation_bounds]
        return results


def constraints_from_msg(msg: Constraints, model: RobotModel, resolve_frame: FrameResolver) -> RequestConstraints:
    """Checked constraints; RequestError(INVALID_GOAL_CONSTRAINTS) for unusable ones.

    ``resolve_frame(frame_id)`` returns None for robot links (their pose depends on the state) or
    ``T_root_frame``; it raises RequestError(FRAME_TRANSFORM_FAILURE) for unknown frames.
    """
    if msg.visibility_constraints:
        raise RequestError(ErrorCode.INVALID_GOAL_CONSTRAINTS, "visibility constraints are not supported")
    return RequestConstraints(
        tuple(_joint_bound(c, model) for c in msg.joint_constraints),
        tuple(_position_region(c, model, resolve_frame) for c in msg.position_constraints),
        tuple(_orientation_bound(c, model, resolve_frame) for c in msg.orientation_constraints),
    )


def _invalid(message: str) -> RequestError:
    return RequestError(ErrorCode.INVALID_GOAL_CONSTRAINTS, message)


def _finite(values, what: str) -> None:
    if not all(math.isfinite(v) for v in values):
        raise _invalid(f"{what} must be finite; got {list(values)}")


def _joint_bound(constraint, model: RobotModel) -> JointBound:
    name = constraint.joint_name
    if name not in model.single_dof_joint_names:
        raise _invalid(f"joint constraint on unknown joint {name!r}; single-DOF joints are "
                       f"{list(model.single_dof_joint_names)}")
    _finite((constraint.position, constraint.tolerance_above, constraint.tolerance_below),
            f"joint constraint on {name!r}: position and tolerances")
    if constraint.tolerance_above < 0 or constraint.tolerance_below < 0:
        raise _invalid(f"joint constraint on {name!r}: tolerances must be >= 0")
    return JointBound(name, constraint.position - constraint.tolerance_below,
                      constraint.position + constraint.tolerance_above,
                      model.joints[name].type == "continuous", constraint.position)


def _checked_link(link: str, model: RobotModel, what: str) -> str:
    try:
        model.check_link(link)
    except KinematicsError as error:
        raise _invalid(f"{what}: {error}") from None
    return link


def _position_region(constraint, model: RobotModel, resolve_frame: FrameResolver) -> PositionRegion:
    link = _checked_link(constraint.link_name, model, "position constraint")
    offset = constraint.target_point_offset
    offset = np.array([offset.x, offset.y, offset.z])
    _finite(offset, f"position constraint on {link!r}: target_point_offset")
    region = constraint.constraint_region
    if region.meshes:
        raise _invalid(f"position constraint on {link!r}: mesh regions are not supported (use primitives)")
    if not region.primitives:
        raise _invalid(f"position constraint on {link!r}: constraint_region has no primitives")
    if len(region.primitive_poses) != len(region.primitives):
        raise _invalid(f"position constraint on {link!r}: {len(region.primitives)} primitives but "
                       f"{len(region.primitive_poses)} primitive_poses")
    shapes = []
    for primitive, pose in zip(region.primitives, region.primitive_poses):
        count = _SHAPE_DIMENSIONS.get(primitive.type)
        if count is None:
            raise _invalid(f"position constraint on {link!r}: primitive type {primitive.type} is not supported "
                           f"(box, sphere, cylinder are)")
        dimensions = tuple(float(v) for v in primitive.dimensions)
        if len(dimensions) < count or not all(math.isfinite(v) and v >= 0 for v in dimensions[:count]):
            raise _invalid(f"position constraint on {link!r}: primitive type {primitive.type} needs {count} "
                           f"finite, non-negative dimensions; got {list(dimensions)}")
        shapes.append((primitive.type, dimensions, transform_from_pose_msg(pose, "constraint region pose")))
    frame = constraint.header.frame_id.lstrip("/")
    return PositionRegion(link, offset, frame or model.root_link, resolve_frame(frame), tuple(shapes))


def _orientation_bound(constraint, model: RobotModel, resolve_frame: FrameResolver) -> OrientationBound:
    link = _checked_link(constraint.link_name, model, "orientation constraint")
    tolerances = np.array([constraint.absolute_x_axis_tolerance, constraint.absolute_y_axis_tolerance,
                           constraint.absolute_z_axis_tolerance])
    _finite(tolerances, f"orientation constraint on {link!r}: tolerances")
    if np.any(tolerances < 0):
        raise _invalid(f"orientation constraint on {link!r}: tolerances must be >= 0")
    if constraint.parameterization not in (OrientationConstraint.XYZ_EULER_ANGLES,
                                           OrientationConstraint.ROTATION_VECTOR):
        raise _invalid(f"orientation constraint on {link!r}: unknown parameterization {constraint.parameterization}")
    q = constraint.orientation
    R_frame_desired = transform_from_pose_msg(PoseLike((0.0, 0.0, 0.0), (q.x, q.y, q.z, q.w)),
                                              "constraint orientation")[:3, :3]
    frame = constraint.header.frame_id.lstrip("/")
    return OrientationBound(link, frame or model.root_link, resolve_frame(frame), R_frame_desired, tolerances,
                            constraint.parameterization)



# ---------------------------------------------------------------------------------------------- planning scene
#: Resolves an object's header.frame_id into (a frame the planning scene knows, T_that_frame_given or None).
SceneFrameResolver = Callable[[str], "tuple[str, np.ndarray | None]"]
_SHAPE_OPERATIONS = (CollisionObject.ADD[0], CollisionObject.APPEND[0])


def operation_of(msg: CollisionObject) -> int:
    """A CollisionObject's operation as an int (rclpy gives ``byte`` fields as bytes)."""
    operation = msg.operation
    return operation[0] if isinstance(operation, (bytes, bytearray)) else int(operation)


def collision_object_update(msg: CollisionObject, resolve_frame: SceneFrameResolver) -> CollisionObjectUpdate:
    """The planning-scene update of a moveit_msgs/CollisionObject; SceneError says what is malformed.

    As in MoveIt, REMOVE uses only the id, MOVE only the id and pose; ADD and APPEND read the shapes.
    """
    operation = operation_of(msg)
    if operation == CollisionObject.REMOVE[0]:
        return CollisionObjectUpdate(msg.id, operation)
    context = f"collision object {msg.id!r}"
    frame, T_frame_given = resolve_frame(msg.header.frame_id)
    pose = msg.pose if T_frame_given is None else T_frame_given @ _scene_transform(msg.pose, f"{context}: pose")
    if operation not in _SHAPE_OPERATIONS:
        return CollisionObjectUpdate(msg.id, operation, frame, pose)
    return CollisionObjectUpdate(
        msg.id, operation, frame, pose,
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


def attached_object_update(msg: AttachedCollisionObject, resolve_frame: SceneFrameResolver) -> AttachedObjectUpdate:
    """The planning-scene update of a moveit_msgs/AttachedCollisionObject (an empty object frame is the link's)."""
    return AttachedObjectUpdate(msg.link_name, collision_object_update(msg.object, resolve_frame),
                                tuple(msg.touch_links))


def _mesh(msg) -> Mesh:
    vertices = [(v.x, v.y, v.z) for v in msg.vertices]
    return Mesh(np.array(vertices, dtype=float).reshape(-1, 3),
                np.array([list(t.vertex_indices) for t in msg.triangles], dtype=np.int64).reshape(-1, 3))


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
