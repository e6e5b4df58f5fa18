"""Pilz's pipeline, ``pilz_industrial_motion_planner``: a MotionPlanRequest with planner_id PTP, LIN or CIRC as one
industrial motion (``planning.industrial``), as Pilz reads it; plan_kinematic_path (``motion_plan_service``) and
plan_sequence_path (``sequence_service``) both read their requests here.

As Pilz: one goal constraint set, either joint constraints (a joint goal; the group's other joints from the start)
or a position and an orientation constraint of one link (a pose goal: the region's first primitive pose, less the
target point offset, in the given orientation). That link is the tool frame: the tip, a link rigidly attached to it,
or MoveIt's runtime tool frame, an attached object ``object_id`` or its subframe ``object_id/subframe``. A CIRC's
auxiliary point is its path constraints' first position constraint, the constraints named ``interim`` or
``center``. The scaling factors scale the joint limits (the URDF's and joint_limits.yaml's) and the Cartesian
limits (the node's ``robot_description_planning.cartesian_limits`` parameters, as pilz_cartesian_limits.yaml
gives them; none: Pilz's documented values).
"""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from geometry_msgs.msg import Point, Pose
from moveit_msgs.msg import PlannerInterfaceDescription

from ...collision.checker import CollisionChecker
from ...errors import ErrorCode, RequestError
from ...ik.budget import Budget
from ...planning.cartesian_limits import CartesianLimits, CartesianLimitsError, cartesian_limits_from_mapping
from ...planning.goals import JointGoal, PoseGoal
from ...planning.industrial import PLANNER_IDS, Circ, Free, IndustrialOptions, Lin, Motion, Ptp
from ...planning.motion import MotionPlan
from ...planning.ompl_search import PlannerError
from ...planning.options import PlanningError, PlanOptions
from ...planning.time_parameterization import joint_limits
from ...planning.tool_paths import CIRC_AUXILIARIES
from ...state_check import StateCheck
from ..messages.conversions import transform_from_pose_msg
from ..messages.trajectories import scaling_factor
from .group_request import GroupRequest
from .request_context import scheduled

PIPELINE_ID = "pilz_industrial_motion_planner"
PLANNER_INTERFACE = "kinematics_py/Pilz"
#: Planning time when a request gives none [s] (MoveIt's default allowed_planning_time).
DEFAULT_PLANNING_TIME_S = 5.0


def planner_interface() -> PlannerInterfaceDescription:
    return PlannerInterfaceDescription(name=PLANNER_INTERFACE, pipeline_id=PIPELINE_ID, planner_ids=list(PLANNER_IDS))


@dataclass(frozen=True)
class IndustrialRequest:
    """One request's motion, the options it is planned with (its tool frame among them) and its path check."""

    motion: Motion
    options: IndustrialOptions
    path_check: StateCheck | None


def industrial_request(group: GroupRequest, request, what: str = "", free_pipeline: str = "") -> IndustrialRequest:
    """The MotionPlanRequest ``request`` of ``group`` as an industrial motion; RequestError with Pilz's codes. With
    ``free_pipeline`` (a sequence's items), a request of that pipeline is the project's collision-avoiding motion
    (``Free``, its planner_id one of OMPL's)."""
    free = bool(free_pipeline) and request.pipeline_id == free_pipeline
    planner = request.planner_id
    if planner not in PLANNER_IDS and not free:
        raise RequestError(ErrorCode.PLANNING_FAILED, f"{what}planner_id {planner!r} is not one of pipeline "
                                                      f"{PIPELINE_ID!r}'s planners {list(PLANNER_IDS)}")
    if len(request.goal_constraints) != 1:
        raise RequestError(ErrorCode.INVALID_GOAL_CONSTRAINTS, f"{what}{planner} needs exactly one goal constraint "
                                                               f"set; got {len(request.goal_constraints)}")
    goal, T_tip_tool = _goal(group, request.goal_constraints[0], f"{what}goal_constraints[0]")
    motion = _motion(group, request, goal, free, what)
    scalings = (scaling_factor(request.max_velocity_scaling_factor, "max_velocity_scaling_factor"),
                scaling_factor(request.max_acceleration_scaling_factor, "max_acceleration_scaling_factor"))
    context = group.context
    limits = joint_limits(group.setup.model, group.joint_names, context.tools.joint_limit_overrides())
    options = IndustrialOptions(limits, _cartesian_limits(context.tools.cartesian_limits()), *scalings,
                                tcp=T_tip_tool)
    path_check = None if planner == "CIRC" else group.state_check(request.path_constraints) or None
    return IndustrialRequest(motion, options, path_check)


def _motion(group: GroupRequest, request, goal, free: bool, what: str) -> Motion:
    if free:
        try:
            options = PlanOptions(planner_id=request.planner_id, planning_time=request.allowed_planning_time or
                                  DEFAULT_PLANNING_TIME_S)
        except (PlanningError, PlannerError) as error:
            raise RequestError(ErrorCode.PLANNING_FAILED, f"{what}{error}") from None
        return Free(goal, options)
    if request.planner_id == "PTP":
        return Ptp(goal)
    if request.planner_id == "LIN":
        return Lin(goal)
    kind, auxiliary = _auxiliary(group, request.path_constraints, what)
    return Circ(goal, auxiliary, kind)


def _cartesian_limits(values) -> CartesianLimits:
    try:
        return cartesian_limits_from_mapping({"cartesian_limits": values}) if values else CartesianLimits()
    except CartesianLimitsError as error:
        raise RequestError(ErrorCode.FAILURE, f"robot_description_planning.{error}") from None


def _goal(group: GroupRequest, constraints, what: str) -> tuple[JointGoal | PoseGoal, np.ndarray | None]:
    """(the goal, T_tip_tool of a pose goal's tool frame (None: a joint goal))."""
    if constraints.joint_constraints and not (constraints.position_constraints or
                                              constraints.orientation_constraints):
        targets = {c.joint_name: c.position for c in constraints.joint_constraints}
        outside = sorted(set(targets) - set(group.joint_names))
        if outside:
            raise RequestError(ErrorCode.INVALID_GOAL_CONSTRAINTS, f"{what}: joints {outside} are not in group "
                               f"{group.plugin.getGroupName()!r} (its joints are {list(group.joint_names)})")
        return JointGoal([targets.get(name, group.values[name]) for name in group.joint_names], what), None
    if len(constraints.position_constraints) != 1 or len(constraints.orientation_constraints) != 1:
        raise RequestError(ErrorCode.INVALID_GOAL_CONSTRAINTS, f"{what}: a Cartesian goal is one position and one "
                           f"orientation constraint of one link (or joint constraints alone)")
    position, orientation = constraints.position_constraints[0], constraints.orientation_constraints[0]
    if position.link_name != orientation.link_name:
        raise RequestError(ErrorCode.INVALID_GOAL_CONSTRAINTS, f"{what}: the position constraint's link "
                           f"{position.link_name!r} is not the orientation constraint's {orientation.link_name!r}")
    link = position.link_name or group.plugin.getTipFrames()[0]
    _tip, T_tip_tool = group.T_tip_frame(link, ErrorCode.INVALID_GOAL_CONSTRAINTS, f"{what}: link")
    R_base_tool = (group.T_base_frame(orientation.header.frame_id) @ _pose_of(
        orientation.orientation, None, what))[:3, :3]
    T_base_tool = np.eye(4)
    T_base_tool[:3, :3] = R_base_tool
    offset = position.target_point_offset
    T_base_tool[:3, 3] = _region_point(group, position, what) - R_base_tool @ [offset.x, offset.y, offset.z]
    return PoseGoal(T_base_tool, "", None, what), T_tip_tool


def _pose_of(orientation, position, what: str) -> np.ndarray:
    """(4, 4) of a geometry_msgs orientation (and position)."""
    return transform_from_pose_msg(Pose(position=position or Point(), orientation=orientation), what)


def _region_point(group: GroupRequest, position, what: str) -> np.ndarray:
    """(3,) the centre of a position constraint's region (its first primitive pose) in the group's base frame."""
    poses = position.constraint_region.primitive_poses
    if not poses:
        raise RequestError(ErrorCode.INVALID_GOAL_CONSTRAINTS, f"{what}: the position constraint's region has no "
                                                               f"primitive pose to go to")
    return (group.T_base_frame(position.header.frame_id) @ transform_from_pose_msg(poses[0], what))[:3, 3]


def _auxiliary(group: GroupRequest, path_constraints, what: str) -> tuple[str, np.ndarray]:
    """(kind, (3,) point in the base frame) of a CIRC's auxiliary point."""
    if path_constraints.name not in CIRC_AUXILIARIES or not path_constraints.position_constraints:
        raise RequestError(ErrorCode.INVALID_MOTION_PLAN, (
            f"{what}CIRC needs its auxiliary point as path_constraints named one of {list(CIRC_AUXILIARIES)} "
            f"holding a position constraint; got name {path_constraints.name!r} with "
            f"{len(path_constraints.position_constraints)} position constraint(s)"))
    return path_constraints.name, _region_point(group, path_constraints.position_constraints[0],
                                                f"{what}path_constraints")


def planned(group: GroupRequest, allowed_planning_time: float,
            plan: Callable[[CollisionChecker, Budget], MotionPlan]) -> tuple[MotionPlan, str]:
    """(``plan(checker, budget)`` run in a search slot of the node by the request's deadline, the note for the
    answer); COLLISION_CHECKING_UNAVAILABLE without a collision checker: these motions are always checked."""
    seconds = allowed_planning_time if allowed_planning_time > 0 else DEFAULT_PLANNING_TIME_S
    if not math.isfinite(seconds):
        raise RequestError(ErrorCode.FAILURE, f"allowed_planning_time must be finite; got {seconds!r}")
    checker, note = group.checker(True)
    if checker is None:
        raise RequestError(ErrorCode.COLLISION_CHECKING_UNAVAILABLE,
                           f"industrial motions cannot be planned without collision checking{note}")
    with scheduled(group.context, group.context.sent + seconds) as slot:
        return plan(checker, slot.budget), note
