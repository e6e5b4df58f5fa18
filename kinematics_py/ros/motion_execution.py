"""The node's execution side, wired: the controllers read from the parameters a MoveIt config's
moveit_controllers.yaml (and initial_positions.yaml) gives (``execution.controllers``, MoveIt's names; declared
read-only, as given), their FollowJointTrajectory clients, the simulated controllers when
``simulate_controllers`` is on, and the ``execute_trajectory``, ``move_action`` and ``sequence_move_group`` action
servers.

A node with no controller configured and ``simulate_controllers`` off serves no action: every action server and
client is a waitable each pass of the executor's wait loop looks at, a cost users who never execute need not
pay."""
from __future__ import annotations

from dataclasses import dataclass

from moveit_msgs.action import ExecuteTrajectory, MoveGroup, MoveGroupSequence
from rcl_interfaces.msg import ParameterDescriptor

from ..execution.controllers import ControllerConfig, ControllerConfigError, flatten, is_execution_parameter
from ..robot_setup import SetupError
from .services.execution_service import ExecutionService
from .services.move_group_service import MoveGroupService, Planner
from .services.plan_execution import PlanExecution
from .services.sequence_move_service import ACTION as SEQUENCE_ACTION
from .services.sequence_move_service import SequenceMoveService, SequencePlanner
from .topics.simulated_controllers import SimulatedControllers
from .transport.actions import moveit_error_code, serve_action
from .transport.controller_clients import ControllerClients


@dataclass(frozen=True)
class Planners:
    """The node's planners the actions plan with: its plan_kinematic_path and plan_sequence_path handlers."""

    motion: Planner
    sequence: SequencePlanner


class MotionExecution:
    """What executes motions on a node; ``close`` stops the simulated joints."""

    def __init__(self, node, config: ControllerConfig, store, positions, transforms, planners: Planners,
                 simulate: bool, callback_group):
        source = node.get_fully_qualified_name()
        self.controllers = ControllerClients(node, config, store, positions, callback_group)
        #: The simulated controllers (None unless simulate_controllers).
        self.simulated = SimulatedControllers(node, config, store, positions, callback_group) if simulate else None
        execution = ExecutionService(self.controllers)
        planned = PlanExecution(self.controllers, store, positions, transforms, node.get_logger())
        moves = MoveGroupService(planners.motion, planned)
        sequences = SequenceMoveService(planners.sequence, planned, node.get_logger())
        self._servers = [
            serve_action(node, ExecuteTrajectory, "execute_trajectory", execution.execute_trajectory, callback_group,
                         moveit_error_code(source)),
            serve_action(node, MoveGroup, "move_action", moves.move, callback_group, moveit_error_code(source)),
            serve_action(node, MoveGroupSequence, SEQUENCE_ACTION, sequences.move, callback_group,
                         moveit_error_code(source, within="response"))]
        names = [spec.action_name for spec in config.effective(()) if spec.follows_trajectories]
        node.get_logger().info(f"actions: execute_trajectory, move_action, {SEQUENCE_ACTION}; controllers {names}"
                               + (" (simulated)" if simulate else ""))

    def close(self) -> None:
        if self.simulated is not None:
            self.simulated.close()


def serve_execution(node, node_parameters, store, positions, transforms, planners: Planners,
                    callback_group) -> MotionExecution | None:
    """The node's execution side, or None (logged) when it has no controller and simulates none; SetupError for
    an unusable controller configuration. The configuration's parameters are declared (read-only) either way."""
    given = node_parameters.overrides(is_execution_parameter)
    try:
        config = ControllerConfig.from_parameters(flatten(given))
    except ControllerConfigError as error:
        raise SetupError(f"controller configuration: {error}") from None
    for name, value in sorted(given.items()):
        if not node.has_parameter(name):
            node.declare_parameter(name, value, ParameterDescriptor(
                description="MoveIt controller configuration (read at start-up)", read_only=True,
                dynamic_typing=True), ignore_override=True)
    simulate = node_parameters.value("simulate_controllers")
    if not config.controllers and not simulate:
        node.get_logger().info("execute_trajectory, move_action and sequence_move_group not served: no controller "
                               "configured (moveit_simple_controller_manager.*) and simulate_controllers off")
        return None
    return MotionExecution(node, config, store, positions, transforms, planners, simulate, callback_group)
