"""sequence_move_group (moveit_msgs/action/MoveGroupSequence), as Pilz's MoveGroupSequenceAction serves it: the
sequence planned by the node's plan_sequence_path handler (given to it: PTP, LIN, CIRC and free items blended into
one trajectory, Pilz's rules refused with its codes), then executed through the controllers unless
``planning_options.plan_only`` (``plan_execution``: the scene diff, the start state, feedback ``PLANNING``,
``MONITOR``, ``IDLE``, replanning, a cancel PREEMPTED). The result's ``response`` holds the error code,
sequence_start, the one planned trajectory and planning_time; an empty sequence succeeds at once, as in Pilz."""
from __future__ import annotations

from collections.abc import Callable

from moveit_msgs.action import MoveGroupSequence
from moveit_msgs.srv import GetMotionSequence

from ...errors import ErrorCode
from ..serving_state import ServingState
from ..transport.actions import feedback
from .plan_execution import IDLE, PlanExecution, Planned

#: plan(request, state) -> response: the node's plan_sequence_path answer from ``state``.
SequencePlanner = Callable[[GetMotionSequence.Request, ServingState], GetMotionSequence.Response]
ACTION = "sequence_move_group"


class SequenceMoveService:
    """The sequence_move_group goals of a node: planned by ``plan``, executed by ``execution``."""

    def __init__(self, plan: SequencePlanner, execution: PlanExecution, logger):
        self._plan, self._execution, self._logger = plan, execution, logger

    def move(self, goal_handle, result: MoveGroupSequence.Result, stop) -> tuple[ErrorCode, str]:
        goal = goal_handle.request
        options, items = goal.planning_options, goal.request.items
        if not items:
            self._logger.warning(f"{ACTION}: an empty sequence: nothing to plan or execute")
            feedback(goal_handle, MoveGroupSequence, IDLE)
            return ErrorCode.SUCCESS, "the sequence holds no item: nothing to plan or execute"
        items[0].req.start_state = self._execution.start_state(ACTION, items[0].req.start_state, options)
        answer = result.response
        answer.planning_time = 0.0

        def attempt(state: ServingState) -> Planned:
            planned = self._plan(GetMotionSequence.Request(request=goal.request), state).response
            answer.sequence_start, answer.planned_trajectories = planned.sequence_start, planned.planned_trajectories
            answer.planning_time += planned.planning_time
            trajectory = planned.planned_trajectories[0] if planned.planned_trajectories else None
            return Planned(ErrorCode(planned.error_code.val), planned.error_code.message, trajectory)

        return self._execution.run(goal_handle, MoveGroupSequence, ACTION, options, attempt, stop)
