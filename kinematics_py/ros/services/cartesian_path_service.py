"""compute_cartesian_path (moveit_msgs/srv/GetCartesianPath): a link moved along straight lines, with
move_group's semantics, timed within the joint limits, and shown on ``display_planned_path``.

The request, as move_group reads it: ``link_name`` empty means the group's tip; waypoints are in
``header.frame_id`` (empty or the model frame: as given; a robot link, ``link_name`` included: that link's frame
at the start state; else through TF, FRAME_TRANSFORM_FAILURE); ``max_step`` <= 0 is FAILURE; the path starts
at ``start_state`` over the current state. The planner (``kinematics_py.planning.cartesian_path``) ends the path
at the first step whose IK fails, whose joints jump, that collides (``avoid_collisions``) or violates
``path_constraints``; the answer is SUCCESS with ``fraction`` < 1 and ``error_code.message`` saying why.
Velocity limits come from the URDF, acceleration limits from the ``robot_description_planning.joint_limits.
<joint>.*`` parameters (MoveIt's joint_limits.yaml), both scaled by the request's scaling factors.

The path's IK searches take a CPU slot of the node's ``SearchScheduler`` as IK requests do: a request without a
timeout, so after IK requests (whose deadlines come first), lending its slot between compiled calls.
"""
from __future__ import annotations

import math
import threading
from dataclasses import replace

import numpy as np
from moveit_msgs.msg import MoveItErrorCodes
from moveit_msgs.srv import GetCartesianPath

from ...errors import ErrorCode, RequestError
from ...geometry.transforms import invert_transform
from ...planning.cartesian_path import CartesianPathError, JumpThresholds
from ...planning.time_parameterization import TimeParameterizationError, joint_limits, warm_up_time_parameterization
from ...queries.cartesian import CartesianQuery, LinkSpeedLimit, plan_cartesian_query, time_cartesian_path
from ..messages.conversions import robot_state_msg, transform_from_pose_msg
from ..messages.trajectories import scaling_factor, trajectory_msg
from ..topics.display import DisplayPublishers
from .group_request import GroupRequest
from .request_context import RequestContext, answer_with_error_code, scheduled

#: A Cartesian path has no timeout: its place among the IK searches is that of a request with this one [s].
UNTIMED_SEARCH_S = 3600.0


class CartesianPathService:
    """The compute_cartesian_path handler; publishes every planned path."""

    def __init__(self, display: DisplayPublishers):
        self._display = display
        # toppra (with matplotlib) takes a second or more to import, and its first use as long again: in the
        # background, not in the first request.
        threading.Thread(target=warm_up_time_parameterization, name="load_toppra", daemon=True).start()

    def compute_cartesian_path(self, request: GetCartesianPath.Request, response: GetCartesianPath.Response,
                               context: RequestContext) -> GetCartesianPath.Response:
        answer_with_error_code(_plan, request, response, context)
        if response.error_code.val == MoveItErrorCodes.SUCCESS and response.solution.joint_trajectory.points:
            self._display.planned_path(context.setup.model.name, response.solution, response.start_state)
        return response


def _plan(request: GetCartesianPath.Request, response: GetCartesianPath.Response, context: RequestContext):
    group = GroupRequest.of(context, request.group_name, request.start_state)
    try:
        query, scalings, checker, note = _query(group, request)
        with scheduled(context, context.sent + UNTIMED_SEARCH_S) as slot:
            path = plan_cartesian_query(group.plugin, replace(query, budget=slot.budget), checker)
        timed = time_cartesian_path(group.plugin, query, path)
    except (CartesianPathError, TimeParameterizationError) as error:
        raise RequestError(ErrorCode.FAILURE, str(error)) from None
    response.start_state = robot_state_msg(group.setup.joint_names, group.values)
    response.solution = trajectory_msg(group.setup.model_frame, group.joint_names, path.positions, timed,
                                       context.stamp())
    response.fraction = float(path.fraction)
    if path.stop_reason:
        return f"fraction {path.fraction:.4f}: {path.stop_reason}{note}"
    return (f"complete: {len(path.positions)} points (start included), {timed.time_from_start[-1]:.3f} s "
            f"within the joint limits scaled by {scalings[0]:g} (velocity) and {scalings[1]:g} (acceleration){note}")


def _query(group: GroupRequest, request: GetCartesianPath.Request):
    """(the request as a CartesianQuery, its (velocity, acceleration) scalings, the request's collision checker or
    None, the answer's note on collisions)."""
    link = request.link_name or group.plugin.getTipFrames()[0]
    T_link_tip = group.tip_target(np.eye(4), link, group.tip(link))
    T_base_frame = group.T_base_frame(request.header.frame_id)
    waypoints = np.array([T_base_frame @ transform_from_pose_msg(pose, f"waypoints[{index}]")
                          for index, pose in enumerate(request.waypoints)]).reshape(-1, 4, 4)
    thresholds = JumpThresholds(*(_threshold(value, what) for value, what in (
        (request.jump_threshold, "jump_threshold"), (request.revolute_jump_threshold, "revolute_jump_threshold"),
        (request.prismatic_jump_threshold, "prismatic_jump_threshold"))))
    scalings = (scaling_factor(request.max_velocity_scaling_factor, "max_velocity_scaling_factor"),
                scaling_factor(request.max_acceleration_scaling_factor, "max_acceleration_scaling_factor"))
    if not math.isfinite(request.max_cartesian_speed):
        raise RequestError(ErrorCode.FAILURE, f"max_cartesian_speed must be finite (0: no limit); got "
                                              f"{request.max_cartesian_speed!r}")
    speed_limit = None
    if request.max_cartesian_speed > 0:
        speed_link = request.cartesian_speed_limited_link or link
        if speed_link not in group.setup.model.link_names:
            raise RequestError(ErrorCode.INVALID_LINK_NAME, f"unknown cartesian_speed_limited_link {speed_link!r}")
        speed_limit = LinkSpeedLimit(speed_link, request.max_cartesian_speed)
    checker, note = group.checker(request.avoid_collisions)
    check = group.state_check(request.path_constraints, collisions=checker is not None,
                              violation_code=ErrorCode.GOAL_VIOLATES_PATH_CONSTRAINTS,
                              prefix="path constraint violated: ")
    limits = joint_limits(group.setup.model, group.joint_names,
                          group.context.tools.joint_limit_overrides()).scaled(*scalings)
    return CartesianQuery(group.q, waypoints, request.max_step, invert_transform(T_link_tip), check, limits,
                          thresholds, speed_limit), scalings, checker, note


def _threshold(value: float, what: str) -> float:
    """A jump threshold (<= 0 disables it, as in MoveIt); FAILURE when not a number."""
    if not math.isfinite(value):
        raise RequestError(ErrorCode.FAILURE, f"{what} must be finite (0 disables it); got {value!r}")
    return max(value, 0.0)
