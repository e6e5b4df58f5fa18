"""moveit_msgs/Constraints of a request as a value that says whether a robot state satisfies them.

Joint, position and orientation constraints with MoveIt's kinematic constraint semantics (continuous joints
compare the shortest angle; position regions are boxes, spheres or cylinders; orientation errors per axis
as XYZ Euler angles or a rotation vector). Unusable constraints raise RequestError(INVALID_GOAL_CONSTRAINTS).
"""
from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np
from moveit_msgs.msg import Constraints, OrientationConstraint
from shape_msgs.msg import SolidPrimitive

from ..errors import ErrorCode, KinematicsError, RequestError
from ..geometry.transforms import invert_transform, rotation_log
from ..model.robot_model import RobotModel
from ..robot_setup import RobotSetup
from .conversions import PoseLike, normalized_frame_id, transform_from_pose_msg
from .frames import ModelFrames

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
        T_root_frame = frame_pose(self, poses)
        for shape_type, dimensions, T_frame_shape in self.shapes:
            T_shape_root = invert_transform(T_root_frame @ T_frame_shape)
            if _inside(shape_type, dimensions, T_shape_root[:3, :3] @ point_in_root + T_shape_root[:3, 3]):
                return None
        return (f"position constraint on {self.link!r}: point {np.round(point_in_root, 4).tolist()} (model frame) "
                f"is outside the constraint region")

    def distance(self, poses: Mapping[str, np.ndarray]) -> float:
        """Distance [m] of the point from the centre of the region's first shape, as MoveIt reports it."""
        return float(np.linalg.norm(self._point(poses) - self.centre(poses)))

    def centre(self, poses: Mapping[str, np.ndarray]) -> np.ndarray:
        """The centre of the region's first shape in the model frame (a goal's target point)."""
        return (frame_pose(self, poses) @ self.shapes[0][2])[:3, 3]

    def _point(self, poses: Mapping[str, np.ndarray]) -> np.ndarray:
        return poses[self.link][:3, :3] @ self.offset + poses[self.link][:3, 3]



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

    def desired_rotation(self, poses: Mapping[str, np.ndarray]) -> np.ndarray:
        """R_root_desired: the orientation the link is held to, in the model frame."""
        return frame_pose(self, poses)[:3, :3] @ self.R_frame_desired

    def _error(self, poses: Mapping[str, np.ndarray]) -> np.ndarray:
        R_desired_link = self.desired_rotation(poses).T @ poses[self.link][:3, :3]
        if self.parameterization == OrientationConstraint.ROTATION_VECTOR:
            return np.abs(rotation_log(R_desired_link))
        return np.array([_absolute_angle(a) for a in xyz_euler_angles(R_desired_link)])


def frame_pose(constraint: PositionRegion | OrientationBound, poses: Mapping[str, np.ndarray]) -> np.ndarray:
    """T_root_frame of a constraint's frame: fixed, or the robot link's pose in ``poses``."""
    return poses[constraint.frame] if constraint.T_root_frame is None else constraint.T_root_frame


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


def request_constraints(setup: RobotSetup, frames: ModelFrames, msg: Constraints,
                        link_poses: Mapping[str, np.ndarray]) -> RequestConstraints:
    """A request's constraints on ``setup``'s robot: robot-link frames are placed per candidate state, other
    frames now, by ``frames`` at ``link_poses`` (the request's state)."""
    return constraints_from_msg(msg, setup.model, lambda frame: None if frame in setup.model.link_names
                                else frames.T_model_frame(frame, link_poses))


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
    frame = normalized_frame_id(constraint.header.frame_id)
    return PositionRegion(link, offset, frame or model.root_link, resolve_frame(frame), tuple(shapes))


def _orientation_bound(constraint, model: RobotModel, resolve_frame: FrameResolver) -> OrientationBound:
    link = _checked_link(constraint.link_name, model, "orientation constraint")
    # as MoveIt's OrientationConstraint: the tolerances' magnitudes count, and an unknown parameterization is
    # read as XYZ Euler angles
    tolerances = np.abs([constraint.absolute_x_axis_tolerance, constraint.absolute_y_axis_tolerance,
                         constraint.absolute_z_axis_tolerance])
    _finite(tolerances, f"orientation constraint on {link!r}: tolerances")
    parameterization = constraint.parameterization
    if parameterization not in (OrientationConstraint.XYZ_EULER_ANGLES, OrientationConstraint.ROTATION_VECTOR):
        parameterization = OrientationConstraint.XYZ_EULER_ANGLES
    q = constraint.orientation
    R_frame_desired = transform_from_pose_msg(PoseLike((0.0, 0.0, 0.0), (q.x, q.y, q.z, q.w)),
                                              "constraint orientation")[:3, :3]
    frame = normalized_frame_id(constraint.header.frame_id)
    return OrientationBound(link, frame or model.root_link, resolve_frame(frame), R_frame_desired, tolerances,
                            parameterization)
