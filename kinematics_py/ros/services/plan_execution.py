"""Plan, then execute, as move_group's plan execution does it for ``move_action`` and Pilz's ``sequence_move_group``
(shared by both action services, which never import each other): ``planning_options.planning_scene_diff`` planned
with and never kept, feedback ``PLANNING``, then ``MONITOR`` while the plan executes through the controllers
(``transport.controller_clients``), then ``IDLE``; nothing sent with ``plan_only``; with ``replan``, a motion the
node stopped because the scene changed on its path planned again from where the arm stopped. To execute, a motion
starts at the current state: a start state in the request is ignored then (move_group ignores it too, with a
warning)."""
from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from moveit_msgs.msg import PlanningScene as PlanningSceneMsg
from moveit_msgs.msg import RobotState

from ...collision.scene_message import apply_planning_scene
from ...errors import ErrorCode, KinematicsError, RequestError
from ..frames import ModelFrames, TransformSource
from ..messages.robot_state import joint_values
from ..messages.scene_conversions import planning_scene_message
from ..serving_state import ServingState, StateStore
from ..transport.actions import feedback, goal_name
from ..transport.controller_clients import ControllerClients

PLANNING, MONITOR, IDLE = "PLANNING", "MONITOR", "IDLE"


@dataclass(frozen=True)
class Planned:
    """One plan's outcome: its code and message, and on SUCCESS the moveit_msgs/RobotTrajectory to execute."""

    code: ErrorCode
    message: str
    trajectory: object = None


#: plan(state) -> Planned: one plan from ``state`` (the current state, its scene with the goal's diff applied); it
#: fills the action's result with what it planned.
PlanAttempt = Callable[[ServingState], Planned]


class PlanExecution:
    """Goals planned, then executed through ``controllers``; the action services' common part."""

    def __init__(self, controllers: ControllerClients, store: StateStore, positions, transforms: TransformSource,
                 logger):
        self._controllers, self._store, self._positions = controllers, store, positions
        self._transforms, self._logger = transforms, logger

    def start_state(self, action: str, robot_state: RobotState, options) -> RobotState:
        """The request's start state, or (logged) an empty diff when the plan is to be executed: a motion to
        execute starts at the current state."""
        if options.plan_only or robot_state == RobotState(is_diff=robot_state.is_diff):
            return robot_state
        self._logger.warning(f"{action}: the request's start state is ignored: a motion to execute starts at the "
                             f"current state")
        return RobotState(is_diff=True)

    def run(self, goal_handle, action_type, action: str, options, plan: PlanAttempt, stop,
            executed: Callable[[object], None] = lambda _trajectory: None) -> tuple[ErrorCode, str]:
        """The goal planned by ``plan`` and, unless ``options.plan_only``, executed (``executed(trajectory)`` once it
        was); move_group's feedback along the way. (code, message) of the outcome."""
        feedback(goal_handle, action_type, PLANNING)
        try:
            code, message = self._replanning(goal_handle, action_type, action, options, plan, stop, executed)
        except RequestError as error:
            code, message = error.code, str(error)
        feedback(goal_handle, action_type, IDLE)
        return code, message

    def _replanning(self, goal_handle, action_type, action: str, options, plan: PlanAttempt, stop,
                    executed) -> tuple[ErrorCode, str]:
        """Plan, then execute unless plan_only; with ``replan``, a motion stopped by a change of the scene is planned
        again from where the arm stopped (``replan_attempts`` plans and executions in all, ``replan_delay`` [s]
        apart), as move_group's plan execution does."""
        attempts = max(1, options.replan_attempts) if options.replan and not options.plan_only else 1
        for attempt in range(attempts):
            if attempt:
                time.sleep(max(0.0, options.replan_delay))
                feedback(goal_handle, action_type, PLANNING)
            code, message = self._attempt(goal_handle, action_type, action, options, plan, stop, executed)
            if code != ErrorCode.MOTION_PLAN_INVALIDATED_BY_ENVIRONMENT_CHANGE or stop():
                break
        return code, message if attempts == 1 else f"{message} (attempt {attempt + 1} of {attempts})"

    def _attempt(self, goal_handle, action_type, action: str, options, plan: PlanAttempt, stop,
                 executed) -> tuple[ErrorCode, str]:
        """One plan (from the current state unless plan_only) and its execution."""
        planned = plan(self._with_scene_diff(options.planning_scene_diff))
        if planned.code != ErrorCode.SUCCESS:
            return planned.code, planned.message
        if options.plan_only:
            return ErrorCode.SUCCESS, f"planned, not executed (plan_only): {planned.message}"
        stopped = stop()
        if stopped:
            return ErrorCode.PREEMPTED, f"stopped before the motion was executed ({stopped})"
        feedback(goal_handle, action_type, MONITOR)
        outcome = self._controllers.execute(planned.trajectory, [], stop, goal_name(action, goal_handle))
        if outcome.code == ErrorCode.SUCCESS:
            executed(planned.trajectory)
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
