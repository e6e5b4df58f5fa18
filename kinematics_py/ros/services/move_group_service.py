"""move_action (moveit_msgs/action/MoveGroup), as move_group serves it: the request planned by the node's planner
(the plan_kinematic_path handler, given to it), then executed through the controllers
(``transport.controller_clients``) unless ``planning_options.plan_only``. To execute, a motion starts at the
current state: a start state in the request is ignored then (move_group ignores it too, with a warning);
``planning_options.planning_scene_diff`` is planned with and never kept (move_group plans in a diff of its scene).
The result holds trajectory_start, planned_trajectory, executed_trajectory and planning_time; feedback
``PLANNING``, then ``MONITOR`` while it executes, then ``IDLE``. With ``planning_options.replan``, a motion the
node stopped because the scene changed on its path is planned again from where the arm stopped."""
from __future__ import annotations

import time
from collections.abc import Callable

from moveit_msgs.action import MoveGroup
from moveit_msgs.msg import PlanningScene as PlanningSceneMsg
from moveit_msgs.msg import RobotState
from moveit_msgs.srv import GetMotionPlan

from ...collision.scene_message import apply_planning_scene
from ...errors import ErrorCode, KinematicsError, RequestError
from ..frames import ModelFrames, TransformSource
from ..messages.robot_state import joint_values
from ..messages.scene_conversions import planning_scene_message
from ..serving_state import ServingState, StateStore
from ..transport.actions import feedback, goal_name
from ..transport.controller_clients import ControllerClients

PLANNING, MONITOR, IDLE = "PLANNING", "MONITOR", "IDLE"
#: plan(request, state) -> response: the node's plan_kinematic_path answer from ``state``.
Planner = Callable[[GetMotionPlan.Request, ServingState], GetMotionPlan.Response]


class MoveGroupService:
    """The move_action goals of a node: planned by ``plan``, executed through ``controllers``."""

    def __init__(self, plan: Planner, controllers: ControllerClients, store: StateStore, positions,
                 transforms: TransformSource, logger):
        self._plan, self._controllers = plan, controllers
        self._store, self._positions, self._transforms, self._logger = store, positions, transforms, logger

    def move(self, goal_handle, result: MoveGroup.Result, stop) -> tuple[ErrorCode, str]:
        goal = goal_handle.request
        options = goal.planning_options
        feedback(goal_handle, MoveGroup, PLANNING)
        try:
            code, message = self._plan_and_execute(goal_handle, goal.request, options, result, stop)
        except RequestError as error:
            code, message = error.code, str(error)
        feedback(goal_handle, MoveGroup, IDLE)
        return code, message

    def _plan_and_execute(self, goal_handle, request, options, result: MoveGroup.Result,
                          stop) -> tuple[ErrorCode, str]:
        """Plan, then execute unless plan_only; with ``replan``, a motion stopped by a change of the scene is planned
        again from where the arm stopped (``replan_attempts`` plans and executions in all, ``replan_delay`` [s]
        apart), as move_group's plan execution does."""
        if not options.plan_only and request.start_state != RobotState(is_diff=request.start_state.is_diff):
            self._logger.warning("move_action: the request's start state is ignored: a motion to execute starts at "
                                 "the current state")
            request.start_state = RobotState(is_diff=True)
        attempts = max(1, options.replan_attempts) if options.replan and not options.plan_only else 1
        result.planning_time = 0.0
        for attempt in range(attempts):
            if attempt:
                time.sleep(max(0.0, options.replan_delay))
                feedback(goal_handle, MoveGroup, PLANNING)
            code, message = self._attempt(goal_handle, request, options, result, stop)
            if code != ErrorCode.MOTION_PLAN_INVALIDATED_BY_ENVIRONMENT_CHANGE or stop():
                break
        return code, message if attempts == 1 else f"{message} (attempt {attempt + 1} of {attempts})"

    def _attempt(self, goal_handle, request, options, result: MoveGroup.Result, stop) -> tuple[ErrorCode, str]:
        """One plan (from the current state unless plan_only) and its execution."""
        answer = self._plan(GetMotionPlan.Request(motion_plan_request=request),
                            self._with_scene_diff(options.planning_scene_diff)).motion_plan_response
        result.trajectory_start, result.planned_trajectory = answer.trajectory_start, answer.trajectory
        result.planning_time += answer.planning_time
        if answer.error_code.val != ErrorCode.SUCCESS:
            return ErrorCode(answer.error_code.val), answer.error_code.message
        if options.plan_only:
            return ErrorCode.SUCCESS, f"planned, not executed (plan_only): {answer.error_code.message}"
        stopped = stop()
        if stopped:
            return ErrorCode.PREEMPTED, f"stopped before the motion was executed ({stopped})"
        feedback(goal_handle, MoveGroup, MONITOR)
        outcome = self._controllers.execute(answer.trajectory, [], stop, goal_name("move_action", goal_handle))
        if outcome.code == ErrorCode.SUCCESS:
            result.executed_trajectory = answer.trajectory
        return outcome.code, outcome.message

    def _with_scene_diff(self, diff: PlanningSceneMsg) -> ServingState:
        """The current state, its scene with ``diff`` applied when it holds anything (the robot state in it is
        ignored: the motion starts at the current state)."""
        state = self._store.current
        bare = PlanningSceneMsg()
        bare.robot_state.is_diff = diff.robot_state.is_diff
        bare.is_diff = diff.is_diff
        diff.robot_state = bare.robot_state
        if diff == bare or state.setup is None:
            return state
        scene = state.scene.copy()
        frames = ModelFrames(state.setup, self._transforms)
        try:
            scene.set_robot_state(joint_values(state.setup, self._positions.current))
            apply_planning_scene(scene, planning_scene_message(diff, scene.robot_model, frames.scene_resolver(scene),
                                                               frames.is_model_frame,
                                                               state.settings.max_mesh_triangles))
        except (KinematicsError, ValueError) as error:
            raise RequestError(ErrorCode.FAILURE, f"planning_scene_diff refused: {error}") from None
        return state.with_scene(scene)
