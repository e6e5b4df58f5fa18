"""compute_ik and solve_ik (moveit_msgs/srv/GetPositionIK): a group's joint values reaching one pose per tip.

Poses may be in any frame and for any link rigidly attached to a tip; the seed is the request's robot_state
over joint_states; the request's constraints and (avoid_collisions) the planning scene reject candidates.

The timeout is the request's whole budget, from when the client sent it (``request_transit``; else from when the
node took it): the search waits for a CPU slot of the node's ``SearchScheduler`` (earliest deadline first),
searches for what remains, and ends early enough for its answer to reach the client by the deadline; a request
whose deadline passes while it waits is answered TIMED_OUT at once, and PREEMPTED when the node stops.
"""
from __future__ import annotations

import numpy as np
from moveit_msgs.srv import GetPositionIK

from ...errors import ErrorCode, RequestError
from ...queries.ik import IkQuery, solve_ik_query
from ..messages.conversions import robot_state_msg, seconds_from_duration, transform_from_pose_msg
from .group_request import GroupRequest
from .request_context import RequestContext, answer_with_error_code, scheduled


def compute_ik(request: GetPositionIK.Request, response: GetPositionIK.Response, context: RequestContext):
    return answer_with_error_code(_solve_ik, request.ik_request, response, context)


def _solve_ik(ik, response: GetPositionIK.Response, context: RequestContext):
    """The request as an IkQuery, answered in a search slot of the node within its deadline (the search ends at
    the slot's stop time: the deadline less the time its answer takes to build)."""
    group = GroupRequest.of(context, ik.group_name, ik.robot_state)
    timeout = _ik_timeout(ik.timeout, context.state.settings.max_ik_timeout)
    budget = group.plugin.getDefaultTimeout() if timeout is None else timeout
    T_base_tips = _ik_targets(group, ik)
    check = group.state_check(ik.constraints, collisions=ik.avoid_collisions)
    checker, note = group.checker(ik.avoid_collisions)
    # a collision-aware search's failure is explained by follow-up searches: its answers take longer to build
    with scheduled(context, context.sent + budget, kind="avoid_collisions" if ik.avoid_collisions else "") as slot:
        answer = solve_ik_query(group.plugin, IkQuery(T_base_tips, group.q, check, budget, slot.budget), checker)
        slot.outcome = "" if answer.result.success else answer.result.message
    if not answer.result.success:
        return answer.result.error_code, answer.result.message + note
    response.solution = robot_state_msg(group.setup.joint_names, answer.state)
    return answer.result.message + note


def _ik_timeout(duration, max_ik_timeout: float) -> float | None:
    """The request's timeout [s] (None: the group's default); FAILURE when negative or above the cap."""
    seconds = seconds_from_duration(duration)
    if seconds < 0:
        raise RequestError(ErrorCode.FAILURE, f"timeout must be >= 0 s; got {seconds:g} s")
    if seconds > max_ik_timeout:
        raise RequestError(ErrorCode.FAILURE, f"timeout {seconds:g} s exceeds max_ik_timeout ({max_ik_timeout:g} s)")
    return None if seconds == 0 else seconds


def _ik_targets(group: GroupRequest, ik) -> np.ndarray:
    """(tips, 4, 4) ``T_base_tip`` targets in the plugin's tip order, from the request's poses and IK links."""
    if ik.pose_stamped_vector:
        if len(ik.ik_link_names) != len(ik.pose_stamped_vector):
            raise RequestError(ErrorCode.INVALID_LINK_NAME,
                               f"{len(ik.pose_stamped_vector)} poses in pose_stamped_vector but "
                               f"{len(ik.ik_link_names)} ik_link_names: give one link per pose")
        pairs = list(zip(ik.pose_stamped_vector, ik.ik_link_names))
    else:
        pairs = [(ik.pose_stamped, ik.ik_link_name)]
    plugin = group.plugin
    tips = plugin.getTipFrames()
    T_base_tips = np.empty((len(tips), 4, 4))
    given: set[str] = set()
    for pose_stamped, link in pairs:
        if not link:
            if len(tips) != 1:
                raise RequestError(ErrorCode.INVALID_LINK_NAME, f"group {plugin.getGroupName()!r} has tips "
                                   f"{tips}: name the IK link of every pose")
            link = tips[0]
        tip = group.tip(link)
        if tip in given:
            raise RequestError(ErrorCode.INVALID_LINK_NAME, f"two poses target tip {tip!r} (link {link!r})")
        given.add(tip)
        T_base_link = group.T_base_frame(pose_stamped.header.frame_id) @ \
            transform_from_pose_msg(pose_stamped.pose, f"pose for link {link!r}")
        T_base_tips[tips.index(tip)] = group.tip_target(T_base_link, link, tip)
    missing = [tip for tip in tips if tip not in given]
    if missing:
        raise RequestError(ErrorCode.INVALID_LINK_NAME, f"no pose for tip(s) {missing} of group "
                           f"{plugin.getGroupName()!r}: give one pose per tip {tips}")
    return T_base_tips
