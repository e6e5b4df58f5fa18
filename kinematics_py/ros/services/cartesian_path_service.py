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
from collections.abc import Mapping

import numpy as np
from builtin_interfaces.msg import Duration
from moveit_msgs.msg import MoveItErrorCodes, RobotTrajectory
from moveit_msgs.srv import GetCartesianPath
from rcl_interfaces.msg import ParameterDescriptor
from rclpy.node import Node
from trajectory_msgs.msg import JointTrajectoryPoint

from ...collision.validity import CollisionValidity
from ...errors import ErrorCode, RequestError, Verdict
from ...geometry.transforms import invert_transform
from ...ik.budget import Budget
from ...planning.cartesian_path import CartesianPathError, JumpThresholds, compute_cartesian_path
from ...planning.time_parameterization import (
    TimeParameterizationError,
    joint_limits,
    time_parameterize,
    warm_up_time_parameterization,
)
from ..messages.constraints import request_constraints
from ..messages.conversions import robot_state_msg, transform_from_pose_msg
from ..messages.robot_state import LinkPoses
from ..topics.display import DisplayPublishers
from ..transport.search_scheduler import Admission
from .ik_service import attached_tip, group_plugin
from .request_collisions import request_checker
from .request_context import RequestContext, answer_with_error_code

#: A Cartesian path has no timeout: its place among the IK searches is that of a request with this one [s].
UNTIMED_SEARCH_S = 3600.0

#: MoveIt's joint_limits.yaml namespace: ``robot_description_planning.joint_limits.<joint>.<key>``.
JOINT_LIMITS_NAMESPACE = "robot_description_planning.joint_limits"
JOINT_LIMIT_KEYS = ("has_velocity_limits", "max_velocity", "has_acceleration_limits", "max_acceleration")


class CartesianPathService:
    """The compute_cartesian_path handler of ``node``: declares the joint limit parameters given to the node
    and publishes every planned path."""

    def __init__(self, node: Node, display: DisplayPublishers):
        self._node, self._display = node, display
        # toppra (with matplotlib) takes a second or more to import, and its first use as long again: in the
        # background, not in the first request.
        threading.Thread(target=warm_up_time_parameterization, name="load_toppra", daemon=True).start()
        prefix = JOINT_LIMITS_NAMESPACE + "."
        for name, parameter in node._parameter_overrides.items():  # rclpy keeps undeclared overrides only here
            if name.startswith(prefix) and not node.has_parameter(name):
                node.declare_parameter(name, parameter.value, ParameterDescriptor(
                    description="MoveIt joint_limits.yaml entry, used to time Cartesian paths",
                    dynamic_typing=True))

    def compute_cartesian_path(self, request: GetCartesianPath.Request, response: GetCartesianPath.Response,
                               context: RequestContext) -> GetCartesianPath.Response:
        answer_with_error_code(self._plan, request, response, context)
        if response.error_code.val == MoveItErrorCodes.SUCCESS and response.solution.joint_trajectory.points:
            self._display.planned_path(context.setup.model.name, response.solution, response.start_state)
        return response

    def joint_limit_overrides(self) -> dict[str, dict[str, object]]:
        """joint -> {key: value} of the ``robot_description_planning.joint_limits`` parameters."""
        overrides: dict[str, dict[str, object]] = {}
        for name, parameter in self._node.get_parameters_by_prefix(JOINT_LIMITS_NAMESPACE).items():
            joint, _, key = name.rpartition(".")
            if joint and key in JOINT_LIMIT_KEYS:
                overrides.setdefault(joint, {})[key] = parameter.value
        return overrides

    def _plan(self, request: GetCartesianPath.Request, response: GetCartesianPath.Response,
              context: RequestContext):
        setup = context.setup
        plugin = group_plugin(setup, request.group_name)
        values = context.joint_values(request.start_state)
        poses = LinkPoses(setup.model, values)
        names = plugin.getJointNames()
        link = request.link_name or plugin.getTipFrames()[0]
        tip = attached_tip(setup, plugin, link)
        base = plugin.getBaseFrame()
        T_base_model = np.eye(4) if base == setup.model_frame else invert_transform(poses[base])
        T_base_frame = T_base_model @ context.frames.T_model_frame(request.header.frame_id, poses)
        waypoints = [T_base_frame @ transform_from_pose_msg(pose, f"waypoints[{index}]")
                     for index, pose in enumerate(request.waypoints)]
        thresholds = JumpThresholds(*(_threshold(value, what) for value, what in (
            (request.jump_threshold, "jump_threshold"), (request.revolute_jump_threshold, "revolute_jump_threshold"),
            (request.prismatic_jump_threshold, "prismatic_jump_threshold"))))
        velocity_scaling = scaling_factor(request.max_velocity_scaling_factor, "max_velocity_scaling_factor")
        acceleration_scaling = scaling_factor(request.max_acceleration_scaling_factor,
                                              "max_acceleration_scaling_factor")
        if not math.isfinite(request.max_cartesian_speed):
            raise RequestError(ErrorCode.FAILURE, f"max_cartesian_speed must be finite (0: no limit); got "
                                                  f"{request.max_cartesian_speed!r}")
        speed_link = request.cartesian_speed_limited_link or link
        if request.max_cartesian_speed > 0 and speed_link not in setup.model.link_names:
            raise RequestError(ErrorCode.INVALID_LINK_NAME, f"unknown cartesian_speed_limited_link {speed_link!r}")
        validity, note = _validity(context, request, values, names, poses)
        T_tip_link = invert_transform(poses[tip]) @ poses[link]
        scheduler = context.tools.scheduler
        try:
            with scheduler.ticket(context.sent + UNTIMED_SEARCH_S, client=context.client) as ticket:
                if scheduler.admit(ticket) != Admission.GRANTED:
                    raise RequestError(ErrorCode.PREEMPTED, ticket.cancel_reason)
                path = compute_cartesian_path(plugin, [values[name] for name in names], waypoints,
                                              request.max_step, T_tip_link=T_tip_link, jump_thresholds=thresholds,
                                              validity=validity, budget=Budget(lambda: scheduler.checkpoint(ticket)))
                if ticket.cancelled:
                    raise RequestError(ErrorCode.PREEMPTED, ticket.cancel_reason)
            limits = joint_limits(setup.model, names, self.joint_limit_overrides())
            link_positions = None
            if request.max_cartesian_speed > 0:
                link_positions = np.array([setup.model.link_poses({**values, **dict(zip(names, q))})[speed_link][:3, 3]
                                           for q in path.positions])
            timed = time_parameterize(path.positions, limits.scaled(velocity_scaling, acceleration_scaling),
                                      link_positions=link_positions, max_link_speed=max(request.max_cartesian_speed,
                                                                                        0.0))
        except (CartesianPathError, TimeParameterizationError) as error:
            raise RequestError(ErrorCode.FAILURE, str(error)) from None
        response.start_state = robot_state_msg(setup.joint_names, values)
        response.solution = trajectory_msg(setup.model_frame, names, path.positions, timed, context.stamp())
        response.fraction = float(path.fraction)
        if path.stop_reason:
            return f"fraction {path.fraction:.4f}: {path.stop_reason}{note}"
        return (f"complete: {len(path.positions)} points (start included), {timed.time_from_start[-1]:.3f} s "
                f"within the joint limits scaled by {velocity_scaling:g} (velocity) and {acceleration_scaling:g} "
                f"(acceleration){note}")


def _validity(context: RequestContext, request: GetCartesianPath.Request, values: Mapping[str, object],
              names: list[str], poses: LinkPoses):
    """(validity(q) of the request: collisions (avoid_collisions) and path_constraints, None without either; the
    note for the answer when collisions cannot be checked)."""
    setup = context.setup
    checker, note = request_checker(context, request.avoid_collisions, request.start_state, values)
    constraints = request_constraints(setup, context.frames, request.path_constraints, poses)
    collisions = CollisionValidity(checker, names, values) if checker is not None else None
    if collisions is None and not constraints:
        return None, note

    def validity(q: np.ndarray) -> Verdict:
        if collisions is not None:
            verdict = collisions(q)
            if verdict.error_code != ErrorCode.SUCCESS:
                return verdict
        if constraints:
            state = setup.model.resolve_joint_values({**values, **dict(zip(names, q.tolist()))})
            reason = constraints.violation(state, setup.model)
            if reason is not None:
                return Verdict(ErrorCode.GOAL_VIOLATES_PATH_CONSTRAINTS, f"path constraint violated: {reason}")
        return Verdict(ErrorCode.SUCCESS)
    return validity, note


def _threshold(value: float, what: str) -> float:
    """A jump threshold (<= 0 disables it, as in MoveIt); FAILURE when not a number."""
    if not math.isfinite(value):
        raise RequestError(ErrorCode.FAILURE, f"{what} must be finite (0 disables it); got {value!r}")
    return max(value, 0.0)


def scaling_factor(value: float, what: str) -> float:
    """A scaling factor in (0, 1]; 0 means 1 (not set, as in MoveIt); FAILURE outside [0, 1]."""
    if not (math.isfinite(value) and 0.0 <= value <= 1.0):
        raise RequestError(ErrorCode.FAILURE, f"{what} must be within [0, 1] (0: 1.0); got {value!r}")
    return value or 1.0


def trajectory_msg(frame: str, names: list[str], positions: np.ndarray, timed, stamp) -> RobotTrajectory:
    trajectory = RobotTrajectory()
    joint_trajectory = trajectory.joint_trajectory
    joint_trajectory.header.frame_id, joint_trajectory.header.stamp = frame, stamp
    joint_trajectory.joint_names = list(names)
    for q, t, velocity, acceleration in zip(positions, timed.time_from_start, timed.velocities, timed.accelerations):
        seconds = math.floor(t)
        joint_trajectory.points.append(JointTrajectoryPoint(
            positions=q.tolist(), velocities=velocity.tolist(), accelerations=acceleration.tolist(),
            time_from_start=Duration(sec=int(seconds), nanosec=min(int(round((t - seconds) * 1e9)), 999_999_999))))
    return trajectory
