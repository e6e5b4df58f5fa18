"""plan_sequence_path (moveit_msgs/srv/GetMotionSequence): Pilz's sequences of PTP, LIN and CIRC items blended
through their corners into one timed trajectory (``planning.sequence``), each item a MotionPlanRequest read as
plan_kinematic_path's Pilz pipeline reads it (``industrial_request``); an item of the ``ompl`` pipeline is the
project's collision-avoiding motion (it goes around obstacles), blended with its neighbours.

Pilz's rules, refused with its codes: one group per sequence (INVALID_MOTION_PLAN), only the first item has a start
state (INVALID_ROBOT_STATE), radii >= 0, the last 0 and neighbouring spheres apart (INVALID_MOTION_PLAN, from the
core). The first item's scaling factors and tool frame hold for the whole sequence (one tool frame: the blend
spheres are about it); an item naming another tool frame is refused. The answer holds one trajectory. The
``sequence_move_group`` action (``sequence_move_service``) plans with this handler, then executes the trajectory.
"""
from __future__ import annotations

import time
from dataclasses import replace

import numpy as np
from moveit_msgs.srv import GetMotionSequence

from ...errors import ErrorCode, RequestError
from ...planning.goals import PoseGoal
from ...planning.sequence import SequenceItem, plan_sequence
from ..messages.conversions import robot_state_msg
from ..messages.trajectories import plan_trajectory_msg
from ..topics.display import DisplayPublishers
from .group_request import GroupRequest
from .industrial_request import IndustrialRequest, industrial_request, planned
from .request_context import RequestContext, answer_with_error_code

#: The pipeline whose items are the project's collision-avoiding motion (plan_kinematic_path's own).
FREE_PIPELINE = "ompl"


class SequenceService:
    """The plan_sequence_path handler of a node; its answers shown on display_planned_path."""

    def __init__(self, display: DisplayPublishers):
        self._display = display

    def plan_sequence_path(self, request: GetMotionSequence.Request, response: GetMotionSequence.Response,
                           context: RequestContext) -> GetMotionSequence.Response:
        answer = response.response
        answer_with_error_code(_plan_sequence, request.request, answer, context)
        if answer.error_code.val == ErrorCode.SUCCESS and answer.planned_trajectories:
            self._display.planned_path(context.setup.model.name, answer.planned_trajectories[0],
                                       answer.sequence_start)
        return response


def _has_state(robot_state) -> bool:
    return bool(robot_state.joint_state.name or robot_state.multi_dof_joint_state.joint_names or
                robot_state.attached_collision_objects)


def _plan_sequence(sequence, response, context: RequestContext):
    began = time.monotonic()
    items = sequence.items
    if not items:
        raise RequestError(ErrorCode.INVALID_MOTION_PLAN, "the sequence holds no item")
    groups = sorted({item.req.group_name for item in items})
    if len(groups) != 1:
        raise RequestError(ErrorCode.INVALID_MOTION_PLAN, f"a sequence moves one group; its items name {groups}")
    for index, item in enumerate(items[1:], start=1):
        if _has_state(item.req.start_state):
            raise RequestError(ErrorCode.INVALID_ROBOT_STATE, f"items[{index}]: only the first item may have a "
                                                              f"start state (the others start where the last ends)")
    first = items[0].req
    group = GroupRequest.of(context, first.group_name, first.start_state)
    requests = _one_tool_frame([industrial_request(group, item.req, f"items[{index}].req: ", FREE_PIPELINE)
                                for index, item in enumerate(items)])
    steps = [SequenceItem(request.motion, item.blend_radius) for request, item in zip(requests, items)]
    result, note = planned(group, first.allowed_planning_time, lambda checker, budget: plan_sequence(
        group.plugin, checker, group.q, steps, requests[0].options, base_state=group.values,
        path_check=requests[0].path_check, budget=budget))
    response.sequence_start = robot_state_msg(group.setup.joint_names, group.values)
    response.planning_time = time.monotonic() - began
    if not result.success:
        return result.error_code, result.message + note
    response.planned_trajectories = [plan_trajectory_msg(group.setup.model_frame, group.joint_names,
                                                         result.positions, result.timing, context.stamp())]
    return result.message + note


def _one_tool_frame(requests: list[IndustrialRequest]) -> list[IndustrialRequest]:
    """The requests with the first item's options (its tool frame: the first pose goal's); INVALID_MOTION_PLAN when
    pose goals name different tool frames."""
    posed = [(index, request.options.tcp) for index, request in enumerate(requests)
             if isinstance(request.motion.goal, PoseGoal)]
    tcp = posed[0][1] if posed else requests[0].options.tcp
    for index, other in posed:
        if not np.allclose(other, tcp):
            raise RequestError(ErrorCode.INVALID_MOTION_PLAN, f"items[{index}] moves another tool frame than "
                                                              f"items[{posed[0][0]}]: a sequence moves one")
    options = replace(requests[0].options, tcp=tcp)
    return [replace(request, options=options) for request in requests]
