"""plan_kinematic_path (moveit_msgs/srv/GetMotionPlan) and query_planner_interface
(moveit_msgs/srv/QueryPlannerInterfaces): collision-free motions with move_group's request semantics, planned by
``kinematics_py.planning.motion`` and shown on ``display_planned_path``.

The MotionPlanRequest, as move_group reads it: ``start_state`` is a diff over the current state;
``goal_constraints`` are alternatives (any one of them reached is success), each a set of joint, position and
orientation constraints with their tolerances (joint constraints alone: that configuration, the group's other
joints from the start; position or orientation constraints: every IK solution of the region's centre in the given
orientation, or the link's start orientation, that satisfies all the set's constraints); ``path_constraints`` hold
at every trajectory point; ``allowed_planning_time`` is the whole budget, counted from when the client sent the
request as IK timeouts are (0: DEFAULT_PLANNING_TIME_S); ``num_planning_attempts`` searches, the shortest
kept; ``planner_id`` one of ``ompl_search.PLANNER_IDS`` (also as "<group>[<id>]" or "<id>kConfigDefault"; empty:
RRTConnect), followed by this node's motion options (``_motion_options``: touch, retract, blend); the scaling
factors scale the joint limits the trajectory is timed within. With ``pipeline_id`` "pilz_industrial_motion_planner"
the planner_id is PTP, LIN or CIRC, read as Pilz reads it (``industrial_request``). ``workspace_parameters`` bound a
mobile base's sampling in move_group; the groups served here have none, so they are not used.
"""
from __future__ import annotations

import math
import time

import numpy as np
from moveit_msgs.msg import PlannerInterfaceDescription
from moveit_msgs.srv import GetMotionPlan, QueryPlannerInterfaces

from ...errors import ErrorCode, RequestError
from ...model.constraints import RequestConstraints
from ...planning.controller_points import sparse_plan
from ...planning.goals import JointGoal, PoseGoal
from ...planning.industrial import plan_motion
from ...planning.motion import MotionPlan
from ...planning.ompl_search import PLANNER_IDS, PlannerError
from ...planning.options import Approach, PlanningError, PlanOptions
from ...planning.processes import PlanJob, PlanningProcessError, run_job
from ...planning.time_parameterization import joint_limits
from ..messages.conversions import robot_state_msg
from ..messages.trajectories import scaling_factor, trajectory_msg
from ..topics.display import DisplayPublishers
from ..transport.search_scheduler import SHUTTING_DOWN
from . import industrial_request
from .group_request import GroupRequest
from .request_context import RequestContext, answer_with_error_code, scheduled

#: Planning time when a request gives none [s] (MoveIt's default allowed_planning_time).
DEFAULT_PLANNING_TIME_S = 5.0
#: The planner interface this node reports on query_planner_interface.
PLANNER_INTERFACE = "kinematics_py/OMPL"
PIPELINE_ID = "ompl"
#: Between a planner_id's planner and its motion options ("RRTConnect;touch=0.05").
MOTION_OPTION_SEPARATOR = ";"


class MotionPlanService:
    """The plan_kinematic_path and query_planner_interface handlers of a node; joint limits from the URDF and
    MoveIt's joint_limits.yaml parameters."""

    def __init__(self, display: DisplayPublishers):
        self._display = display

    def plan_kinematic_path(self, request: GetMotionPlan.Request, response: GetMotionPlan.Response,
                            context: RequestContext) -> GetMotionPlan.Response:
        answer = response.motion_plan_response
        industrial = request.motion_plan_request.pipeline_id == industrial_request.PIPELINE_ID
        answer_with_error_code(_plan_industrial if industrial else _plan, request.motion_plan_request, answer,
                               context)
        if answer.error_code.val == ErrorCode.SUCCESS and answer.trajectory.joint_trajectory.points:
            self._display.planned_path(context.setup.model.name, answer.trajectory, answer.trajectory_start)
        return response

    @staticmethod
    def query_planner_interface(_request: QueryPlannerInterfaces.Request, response: QueryPlannerInterfaces.Response,
                                _context: RequestContext) -> QueryPlannerInterfaces.Response:
        response.planner_interfaces = [PlannerInterfaceDescription(name=PLANNER_INTERFACE, pipeline_id=PIPELINE_ID,
                                                                   planner_ids=list(PLANNER_IDS)),
                                       industrial_request.planner_interface()]
        return response


def _plan(request, response, context: RequestContext):
    began = time.monotonic()
    group = GroupRequest.of(context, request.group_name, request.start_state)
    response.group_name = request.group_name
    budget = request.allowed_planning_time if request.allowed_planning_time > 0 else DEFAULT_PLANNING_TIME_S
    if not math.isfinite(budget):
        raise RequestError(ErrorCode.FAILURE, f"allowed_planning_time must be finite; got {budget!r}")
    goals = _goals(group, request)
    path_check = group.state_check(request.path_constraints)
    checker, note = group.checker(True)
    if checker is None:
        raise RequestError(ErrorCode.COLLISION_CHECKING_UNAVAILABLE,
                           f"motions cannot be planned without collision checking{note}")
    limits = joint_limits(group.setup.model, group.joint_names, context.tools.joint_limit_overrides()).scaled(
        scaling_factor(request.max_velocity_scaling_factor, "max_velocity_scaling_factor"),
        scaling_factor(request.max_acceleration_scaling_factor, "max_acceleration_scaling_factor"))
    try:
        options = PlanOptions(**_motion_options(request.planner_id), attempts=max(1, request.num_planning_attempts),
                              limits=limits)
        job = PlanJob(group.plugin.getGroupName(), group.q.tolist(), goals, group.values, context.sent + budget,
                      path_check if path_check else None, options, controller_points=True)
        result = _planned(job, context, checker)
    except (PlanningError, PlannerError) as error:
        raise RequestError(ErrorCode.PLANNING_FAILED, str(error)) from None
    return _answered(response, group, result, began, note)


def _plan_industrial(request, response, context: RequestContext):
    """A PTP, LIN or CIRC of Pilz's pipeline (``industrial_request``), in a search slot."""
    began = time.monotonic()
    group = GroupRequest.of(context, request.group_name, request.start_state)
    response.group_name = request.group_name
    industrial = industrial_request.industrial_request(group, request)
    result, note = industrial_request.planned(group, request.allowed_planning_time, lambda checker, budget: plan_motion(
        group.plugin, checker, group.q, industrial.motion, industrial.options, base_state=group.values,
        path_check=industrial.path_check, budget=budget))
    return _answered(response, group, result, began, note)


def _answered(response, group: GroupRequest, result: MotionPlan, began: float, note: str):
    """``response`` holding the plan's start, time and trajectory (the points a controller needs:
    ``controller_points.sparse_plan``, picked by the planning process); the plan's code and message. The messages
    are the response's own, filled (a new response's are as constructed): one RobotState and one RobotTrajectory less
    to construct per answer."""
    robot_state_msg(group.setup.joint_names, group.values, response.trajectory_start)
    response.planning_time = time.monotonic() - began
    if not result.success:
        return result.error_code, result.message + note
    answered = sparse_plan(result)
    trajectory_msg(group.setup.model_frame, group.joint_names, answered.positions, answered.timing,
                   group.context.stamp(), response.trajectory)
    return result.message + note


def _planned(job: PlanJob, context: RequestContext, checker) -> MotionPlan:
    """``job`` planned in a planning process once one has the robot built, else on this thread (holding a search
    slot, which the search lends to IK requests that come first): the first plans, while the processes start."""
    processes = context.tools.planning
    if processes is not None:
        processes.start()  # on the first plan: the node's tests and users that never plan start none
    if processes is not None and processes.has_built(context.setup):
        try:
            result = processes.run(job, context.setup, checker)
            context.tools.info_once("planning processes", lambda: f"plans run in planning processes {processes.pids()}")
            return result
        except PlanningProcessError as error:
            if error.closed:
                raise RequestError(ErrorCode.PREEMPTED, SHUTTING_DOWN) from None
            raise RequestError(ErrorCode.TIMED_OUT if error.busy else ErrorCode.FAILURE, str(error)) from None
    with scheduled(context, job.deadline) as slot:
        return run_job(job, context.setup, checker, slot.budget.should_stop)


def _motion_options(planner_id: str) -> dict:
    """plan()'s planner_id and motion options from a request's planner_id: "<planner>" with, optionally,
    ";touch=<distance>[,x,y,z]" (end with a straight approach to the pose goal, along the tool axis or that
    direction in the group's base frame), ";retract=<distance>[,x,y,z]" (start with a straight retraction,
    back along the tool axis or that direction) and ";blend" (flow through the waypoints within their blend
    radii instead of stopping at each)."""
    planner, *options = planner_id.split(MOTION_OPTION_SEPARATOR)
    result: dict = {"planner_id": planner}
    for option in options:
        name, _, value = (part.strip() for part in option.partition("="))
        if name == "blend" and not value:
            result["blend"] = True
            continue
        try:
            numbers = [float(number) for number in value.split(",")]
        except ValueError:
            numbers = []
        if name not in ("touch", "retract") or len(numbers) not in (1, 4):
            raise RequestError(ErrorCode.PLANNING_FAILED, f"planner_id {planner_id!r}: motion option {option!r} "
                               f"is not one of touch=<distance>[,x,y,z], retract=<distance>[,x,y,z] and blend")
        approach = Approach(numbers[0], tuple(numbers[1:]) or None)
        result.update({"motion": "touch", "approach": approach} if name == "touch" else {"retract": approach})
    return result


def _goals(group: GroupRequest, request) -> list:
    """Each of the request's goal constraints as a planning goal, a pose goal with the check of its IK solutions
    by all its set's constraints; INVALID_GOAL_CONSTRAINTS for unusable ones."""
    if not request.goal_constraints:
        raise RequestError(ErrorCode.INVALID_GOAL_CONSTRAINTS, "goal_constraints is empty: nothing to plan to")
    names = group.joint_names
    goals = []
    for index, msg in enumerate(request.goal_constraints):
        what = f"goal_constraints[{index}]"
        check = group.state_check(msg)
        constraints = check.constraints
        if not constraints:
            raise RequestError(ErrorCode.INVALID_GOAL_CONSTRAINTS, f"{what} holds no constraint")
        if not (constraints.position_regions or constraints.orientation_bounds):
            targets = {bound.joint: bound.target for bound in constraints.joint_bounds}
            outside = sorted(set(targets) - set(names))
            if outside:
                raise RequestError(ErrorCode.INVALID_GOAL_CONSTRAINTS, f"{what}: joints {outside} are not in group "
                                   f"{group.plugin.getGroupName()!r} (its joints are {list(names)})")
            goals.append(JointGoal([targets.get(name, group.values[name]) for name in names], what))
            continue
        goals.append(PoseGoal(_target_pose(group, constraints, what), "", check, what))
    return goals


def _target_pose(group: GroupRequest, constraints: RequestConstraints, what: str) -> np.ndarray:
    """(4, 4) T_base_tip of the pose the set's position and orientation constraints centre on (their link moves
    rigidly with the tip: a touch approach moves the tip)."""
    links = {c.link for c in constraints.position_regions + constraints.orientation_bounds}
    if len(links) != 1:
        raise RequestError(ErrorCode.INVALID_GOAL_CONSTRAINTS, f"{what}: position and orientation constraints on "
                           f"several links {sorted(links)}; one link per goal can be planned to")
    (link,) = links
    tip = group.tip(link, ErrorCode.INVALID_GOAL_CONSTRAINTS, f"{what}: link")
    poses = group.poses
    T_model_link = poses[link].copy()
    if constraints.orientation_bounds:
        T_model_link[:3, :3] = constraints.orientation_bounds[0].desired_rotation(poses)
    if constraints.position_regions:
        region = constraints.position_regions[0]
        T_model_link[:3, 3] = region.centre(poses) - T_model_link[:3, :3] @ region.offset
    return group.tip_target(group.T_base_model @ T_model_link, link, tip)
