"""moveit_msgs/Constraints of a request as ``model.constraints.RequestConstraints``, the value that says whether a
robot state satisfies them. Unusable constraints raise RequestError(INVALID_GOAL_CONSTRAINTS).
"""
from __future__ import annotations

import math
from collections.abc import Callable, Mapping

import numpy as np
from moveit_msgs.msg import Constraints, OrientationConstraint

from ...errors import ErrorCode, KinematicsError, RequestError
from ...model.constraints import SHAPE_DIMENSIONS, JointBound, OrientationBound, PositionRegion, RequestConstraints
from ...model.robot_model import RobotModel
from ...robot_setup import RobotSetup
from ..frames import ModelFrames
from .conversions import PoseLike, normalized_frame_id, transform_from_pose_msg

#: Frames of constraint regions: a robot link (None: resolved with the candidate state) or T_root_frame.
FrameResolver = Callable[[str], "np.ndarray | None"]


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
        count = SHAPE_DIMENSIONS.get(primitive.type)
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
