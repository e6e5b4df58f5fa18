"""execute_trajectory (moveit_msgs/action/ExecuteTrajectory), as move_group serves it: the trajectory forwarded to
the controllers (``transport.controller_clients``), the goal ended with MoveIt's codes (SUCCESS, INVALID_MOTION_PLAN,
CONTROL_FAILED, TIMED_OUT, PREEMPTED) and the reason in ``error_code.message``; feedback ``MONITOR`` while it runs,
then the outcome, then ``IDLE`` (move_group's states)."""
from __future__ import annotations

from moveit_msgs.action import ExecuteTrajectory

from ...errors import ErrorCode
from ..transport.actions import feedback, goal_name
from ..transport.controller_clients import ControllerClients

MONITOR, IDLE = "MONITOR", "IDLE"


class ExecutionService:
    """The execute_trajectory goals of a node, executed through its controller clients."""

    def __init__(self, controllers: ControllerClients):
        self._controllers = controllers

    def execute_trajectory(self, goal_handle, _result: ExecuteTrajectory.Result, stop) -> tuple[ErrorCode, str]:
        goal = goal_handle.request
        feedback(goal_handle, ExecuteTrajectory, MONITOR)
        outcome = self._controllers.execute(goal.trajectory, list(goal.controller_names), stop,
                                            goal_name("execute_trajectory", goal_handle))
        feedback(goal_handle, ExecuteTrajectory, outcome.message)
        feedback(goal_handle, ExecuteTrajectory, IDLE)
        return outcome.code, outcome.message

