"""move_action (moveit_msgs/action/MoveGroup), as move_group serves it: the request planned by the node's planner
(the plan_kinematic_path handler, given to it), then executed through the controllers unless
``planning_options.plan_only`` (``plan_execution``: the scene diff, the start state, feedback, replanning). The
result holds trajectory_start, planned_trajectory, executed_trajectory and planning_time (of every attempt)."""
from __future__ import annotations

from collections.abc import Callable

from moveit_msgs.action import MoveGroup
from moveit_msgs.srv import GetMotionPlan

from ...errors import ErrorCode
from ..serving_state import ServingState
from .plan_execution import PlanExecution, Planned

#: plan(request, state) -> response: the node's plan_kinematic_path answer from ``state``.
Planner = Callable[[GetMotionPlan.Request, ServingState], GetMotionPlan.Response]


class MoveGroupService:
    """The move_action goals of a node: planned by ``plan``, executed by ``execution``."""

    def __init__(self, plan: Planner, execution: PlanExecution):
        self._plan, self._execution = plan, execution

    def move(self, goal_handle, result: MoveGroup.Result, stop) -> tuple[ErrorCode, str]:
        goal = goal_handle.request
        options, request = goal.planning_options, goal.request
        request.start_state = self._execution.start_state("move_action", request.start_state, options)
        result.planning_time = 0.0

        def attempt(state: ServingState) -> Planned:
            answer = self._plan(GetMotionPlan.Request(motion_plan_request=request), state).motion_plan_response
            result.trajectory_start, result.planned_trajectory = answer.trajectory_start, answer.trajectory
            result.planning_time += answer.planning_time
            return Planned(ErrorCode(answer.error_code.val), answer.error_code.message, answer.trajectory)

        def executed(trajectory) -> None:
            result.executed_trajectory = trajectory

        return self._execution.run(goal_handle, MoveGroup, "move_action", options, attempt, stop, executed)
