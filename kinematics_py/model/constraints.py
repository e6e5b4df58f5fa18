"""Kinematic constraints on robot states (ROS-free): joint bounds, position regions and orientation bounds with
MoveIt's kinematic constraint semantics (continuous joints compare the shortest angle; position regions are
boxes, spheres or cylinders; orientation errors per axis as XYZ Euler angles or a rotation vector).

``ros.messages.constraints`` reads them from moveit_msgs/Constraints. The values pickle, so a planning process can
check them on its own copy of the robot model (``state_check.StateCheck``).
"""
from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from ..geometry.transforms import invert_transform, rotation_log
from .robot_model import RobotModel

#: shape_msgs/SolidPrimitive's shape types and cylinder dimension indices.
BOX, SPHERE, CYLINDER = 1, 2, 3
CYLINDER_HEIGHT, CYLINDER_RADIUS = 0, 1
#: moveit_msgs/OrientationConstraint's parameterizations.
XYZ_EULER_ANGLES, ROTATION_VECTOR = 0, 1
#: Dimensions of each shape type a position region may be made of.
SHAPE_DIMENSIONS = {BOX: 3, SPHERE: 1, CYLINDER: 2}


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
        if self.parameterization == ROTATION_VECTOR:
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
    if shape_type == BOX:
        return bool(np.all(np.abs(p) <= np.asarray(dimensions[:3]) / 2))
    if shape_type == SPHERE:
        return float(np.linalg.norm(p)) <= dimensions[0]
    height, radius = dimensions[CYLINDER_HEIGHT], dimensions[CYLINDER_RADIUS]
    return abs(p[2]) <= height / 2 and math.hypot(p[0], p[1]) <= radius



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
