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

from ...errors import ErrorCode, RequestError, UnknownLinkError, Verdict
from ...geometry.transforms import invert_transform
from ...ik.budget import Budget
from ...ik.plugin import KinematicsPlugin
from ...model.attached_links import NotAttachedError
from ...robot_setup import RobotSetup
from ..frames import ModelFrames
from ..messages.constraints import request_constraints
from ..messages.conversions import robot_state_msg, seconds_from_duration, transform_from_pose_msg
from ..messages.robot_state import LinkPoses
from ..transport.search_scheduler import Admission
from .request_collisions import request_checker
from .request_context import RequestContext, answer_with_error_code


def compute_ik(request: GetPositionIK.Request, response: GetPositionIK.Response, context: RequestContext):
    return answer_with_error_code(_scheduled_ik, request.ik_request, response, context)


def _scheduled_ik(ik, response: GetPositionIK.Response, context: RequestContext):
    """``_solve_ik`` once the scheduler gives the request a slot, within its deadline."""
    plugin = group_plugin(context.setup, ik.group_name)
    timeout = _ik_timeout(ik.timeout, context.state.settings.max_ik_timeout)
    budget = plugin.getDefaultTimeout() if timeout is None else timeout
    scheduler = context.tools.scheduler
    # a collision-aware search's failure is explained by follow-up searches: its answers take longer to build
    kind = "avoid_collisions" if ik.avoid_collisions else ""
    with scheduler.ticket(context.sent + budget, transit=context.transit, kind=kind, client=context.client) as ticket:
        admission = scheduler.admit(ticket)
        if admission == Admission.EXPIRED or ticket.remaining() <= 0:
            return ErrorCode.TIMED_OUT, (f"the timeout ({budget * 1e3:.3g} ms, counted from when the request was sent) "
                                         f"ran out before its search could start ({ticket.ahead} other IK "
                                         f"request(s) in the node when it arrived)")
        if admission == Admission.CANCELLED:
            return ErrorCode.PREEMPTED, ticket.cancel_reason
        # ends the search at the ticket's stop time: the deadline less the time its answer takes to build
        answer = _solve_ik(ik, response, context, plugin, timeout=budget,
                           budget=Budget(lambda: scheduler.checkpoint(ticket), ticket.stop_at))
        if ticket.cancelled and isinstance(answer, tuple):
            return ErrorCode.PREEMPTED, f"{ticket.cancel_reason}: {answer[1]}"
        return answer


def _solve_ik(ik, response: GetPositionIK.Response, context: RequestContext, plugin: KinematicsPlugin, *,
              timeout: float, budget: Budget):
    """Search for ``timeout`` [s] at most (``budget``, the scheduler's, ends it sooner, at the deadline)."""
    setup = context.setup
    values = context.joint_values(ik.robot_state)
    poses = LinkPoses(setup.model, values)
    frames = context.frames
    targets = _ik_targets(setup, frames, ik, plugin, poses)
    constraints = request_constraints(setup, frames, ik.constraints, poses)
    checker, note = request_checker(context, ik.avoid_collisions, ik.robot_state, values)

    joint_names = plugin.getJointNames()
    seed = [values[name] for name in joint_names]
    for bound in constraints.joint_bounds:
        if bound.joint in joint_names and not bound.continuous:
            index = joint_names.index(bound.joint)
            seed[index] = min(max(seed[index], bound.lower), bound.upper)
    callback = None
    if constraints:
        def callback(_pose, solution):
            state = setup.model.resolve_joint_values({**values, **dict(zip(joint_names, solution))})
            reason = constraints.violation(state, setup.model)
            return Verdict(ErrorCode.SUCCESS) if reason is None else \
                Verdict(ErrorCode.GOAL_CONSTRAINTS_VIOLATED, reason)

    result = plugin.searchPositionIK(targets, seed, timeout, solution_callback=callback, context_state=values,
                                     avoid_collisions=checker is not None, collision_checker=checker, budget=budget)
    if not result.success:
        return result.error_code, result.message + note
    solved = setup.model.resolve_joint_values({**values, **dict(zip(joint_names, result.solution))})
    response.solution = robot_state_msg(setup.joint_names, solved)
    return result.message + note


def group_plugin(setup: RobotSetup, group: str) -> KinematicsPlugin:
    plugin = setup.groups.get(group)
    if plugin is None:
        reason = setup.unavailable.get(group)
        detail = f"group {group!r} is not served: {reason}" if reason else f"unknown group {group!r}"
        raise RequestError(ErrorCode.INVALID_GROUP_NAME, f"{detail}; served groups are {sorted(setup.groups)}")
    return plugin


def _ik_timeout(duration, max_ik_timeout: float) -> float | None:
    """The request's timeout [s] (None: the group's default); FAILURE when negative or above the cap."""
    seconds = seconds_from_duration(duration)
    if seconds < 0:
        raise RequestError(ErrorCode.FAILURE, f"timeout must be >= 0 s; got {seconds:g} s")
    if seconds > max_ik_timeout:
        raise RequestError(ErrorCode.FAILURE, f"timeout {seconds:g} s exceeds max_ik_timeout ({max_ik_timeout:g} s)")
    return None if seconds == 0 else seconds


def _ik_targets(setup: RobotSetup, frames: ModelFrames, ik, plugin: KinematicsPlugin,
                poses: LinkPoses) -> list[np.ndarray]:
    """``T_base_tip`` targets in the plugin's tip order, from the request's poses and IK links."""
    if ik.pose_stamped_vector:
        if len(ik.ik_link_names) != len(ik.pose_stamped_vector):
            raise RequestError(ErrorCode.INVALID_LINK_NAME,
                               f"{len(ik.pose_stamped_vector)} poses in pose_stamped_vector but "
                               f"{len(ik.ik_link_names)} ik_link_names: give one link per pose")
        pairs = list(zip(ik.pose_stamped_vector, ik.ik_link_names))
    else:
        pairs = [(ik.pose_stamped, ik.ik_link_name)]
    tips = plugin.getTipFrames()
    by_tip: dict[str, np.ndarray] = {}
    for pose_stamped, link in pairs:
        if not link:
            if len(tips) != 1:
                raise RequestError(ErrorCode.INVALID_LINK_NAME, f"group {plugin.getGroupName()!r} has tips "
                                   f"{tips}: name the IK link of every pose")
            link = tips[0]
        tip = attached_tip(setup, plugin, link)
        if tip in by_tip:
            raise RequestError(ErrorCode.INVALID_LINK_NAME, f"two poses target tip {tip!r} (link {link!r})")
        T_model_link = frames.T_model_frame(pose_stamped.header.frame_id, poses) @ \
            transform_from_pose_msg(pose_stamped.pose, f"pose for link {link!r}")
        by_tip[tip] = T_model_link if link == tip else T_model_link @ invert_transform(poses[link]) @ poses[tip]
    missing = [tip for tip in tips if tip not in by_tip]
    if missing:
        raise RequestError(ErrorCode.INVALID_LINK_NAME, f"no pose for tip(s) {missing} of group "
                           f"{plugin.getGroupName()!r}: give one pose per tip {tips}")
    base = plugin.getBaseFrame()
    T_base_model = np.eye(4) if base == setup.model_frame else invert_transform(poses[base])
    return [T_base_model @ by_tip[tip] for tip in tips]


def attached_tip(setup: RobotSetup, plugin: KinematicsPlugin, link: str) -> str:
    """The tip ``link`` is the tip of, or rigidly attached to (no group joint between them)."""
    try:
        return plugin.attached_tip(link)
    except UnknownLinkError:
        raise RequestError(ErrorCode.INVALID_LINK_NAME, f"unknown IK link {link!r}; group {plugin.getGroupName()!r} "
                           f"solves for tips {plugin.getTipFrames()} and links rigidly attached to them") from None
    except NotAttachedError as error:
        raise RequestError(ErrorCode.INVALID_LINK_NAME, f"IK {error}") from None
