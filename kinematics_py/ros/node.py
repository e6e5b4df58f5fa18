"""The ROS 2 node: MoveIt-compatible ``compute_ik``, ``solve_ik``, ``compute_fk`` and ``check_state_validity``.

Wiring only; each part lives in its own module:

- the robot set-up (``kinematics_py.robot_setup``, ROS-free): built from the ``robot_description`` parameter
  or, while it is empty, the ``robot_description`` topic (std_msgs/String, transient local, as
  robot_state_publisher publishes it), rebuilt on every new description; the SRDF likewise
  (``robot_description_semantic``). Without an SRDF, one group ``group_name`` from ``base_frame`` and
  ``tip_frame`` (or ``tip_frames``).
- parameters (``node_parameters``): solver settings per group from
  ``robot_description_kinematics.<group>.<name>`` (MoveIt's kinematics.yaml convention), validated when set
  without side effects: a change is refused, or the set-up it gives is built and served once it is set.
- what requests read (``serving_state``): one immutable value holding the set-up, the planning scene and the
  request settings; every change replaces it by one swap, so a request never mixes two of them.
- services: ``ik_service``, ``fk_service``, ``state_validity_service``, ``cartesian_path_service``, each a handler
  ``(request, response, RequestContext)``; a new service is one module and one line in ``_service_table``.
- display topics (``display``): planned paths on ``display_planned_path``, IK answers on ``ik_display_topic``.
- the seed / current state (``robot_state``): the latest ``joint_states`` overlaid by the request's robot_state.
- frames (``frames``): robot links from the state, anything else from TF.
- collisions: the planning scene kept from the ``collision_object`` and ``attached_collision_object`` topics
  (``scene_topics``), as move_group keeps its world; IK with ``avoid_collisions`` and ``check_state_validity``
  check against it, or against a request-scoped copy holding the request's attached objects
  (``request_collisions``).
- reachability maps (``reachability_markers``): a map file named on ``reachability_map`` is published as RViz
  markers on ``reachability_markers``.

Console script: ``kinematics_node`` (``ros2 run kinematics_py kinematics_node``).
"""
from __future__ import annotations

import os
import sys
import traceback
from collections.abc import Sequence
from types import MappingProxyType

import rclpy
from moveit_msgs.srv import (
    ApplyPlanningScene,
    GetCartesianPath,
    GetPlanningScene,
    GetPositionFK,
    GetPositionIK,
    GetStateValidity,
)
from rcl_interfaces.msg import SetParametersResult
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.executors import ExternalShutdownException, MultiThreadedExecutor
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState
from std_msgs.msg import String

from ..parameters import ParameterError
from ..robot_setup import SetupError
from . import fk_service, ik_service, planning_scene_service, state_validity_service
from .cartesian_path_service import CartesianPathService
from .display import DisplayPublishers
from .frames import create_transform_source
from .node_parameters import (
    DESCRIPTIONS,
    NODE_NAME,
    SETTINGS_PARAMETERS,
    NodeParameters,
    is_setup_input,
    parameters_markdown,
)
from .reachability_markers import ReachabilityMarkers
from .request_context import RequestContext, ServiceTools
from .robot_state import JointPositions
from .scene_topics import SceneTopics
from .serving_state import ServingState, StateStore
from .setup_updates import SetupUpdates

#: Keep every request and answer until delivered: with the default depth of 10, a burst from many clients
#: can overwrite answers that a slow client has not yet acknowledged.
SERVICE_QOS = QoSProfile(history=HistoryPolicy.KEEP_ALL, reliability=ReliabilityPolicy.RELIABLE,
                         durability=DurabilityPolicy.VOLATILE)
DESCRIPTION_QOS = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                             durability=DurabilityPolicy.TRANSIENT_LOCAL)


class KinematicsNode(Node):
    """Serves compute_ik, solve_ik, compute_fk and check_state_validity for the groups of the robot it is given."""

    def __init__(self, **kwargs):
        super().__init__(NODE_NAME, **kwargs)
        self._node_parameters = NodeParameters(self)  # SetupError for an unusable value given at start-up
        self._store = StateStore(ServingState(self._node_parameters.settings()))
        self._positions = JointPositions()
        self._topic_descriptions = MappingProxyType(dict.fromkeys(DESCRIPTIONS, ""))
        self._setups = SetupUpdates(self._store, lambda changes: self._node_parameters.setup_inputs(
            self._topic_descriptions, changes), self.get_logger(), lambda setup: self._node_parameters.declare_groups(
            setup.groups))
        self.add_on_set_parameters_callback(self._on_set_parameters)
        self.add_post_set_parameters_callback(self._after_set_parameters)

        callbacks = ReentrantCallbackGroup()
        transforms = create_transform_source(self, callbacks)
        self._tools = ServiceTools(self.get_logger(), self.get_clock(), transforms, self.get_fully_qualified_name())
        for which in DESCRIPTIONS:
            self.create_subscription(String, which, lambda msg, which=which: self._on_description(which, msg.data),
                                     DESCRIPTION_QOS, callback_group=callbacks)
        self.create_subscription(JointState, "joint_states",
                                 lambda msg: self._positions.update(msg.name, msg.position), 10,
                                 callback_group=callbacks)
        self._scene_topics = SceneTopics(self, self._store, self._positions, transforms, [
            self._node_parameters.value(name) for name in ("planning_scene_topic", "monitored_planning_scene_topic")])
        ReachabilityMarkers(self)  # reachability_map (a map file) -> reachability_markers (RViz)
        services = self._service_table()
        for service_type, name, handler in services:
            self.create_service(service_type, name, self._serving(handler), qos_profile=SERVICE_QOS,
                                callback_group=callbacks)
        self.get_logger().info(f"TF lookups through {transforms.backend}; services: "
                               f"{', '.join(f'{name} ({kind.__name__})' for kind, name, _ in services)}; world "
                               f"from the collision_object, attached_collision_object and planning scene topics")
        self._node_parameters.warn_unused_overrides()
        if self._node_parameters.value("robot_description"):
            self._setups.serve("start-up", wait=None)
        else:
            self.get_logger().info("robot_description parameter empty: waiting for the robot_description topic")

    def _service_table(self) -> list[tuple[type, str, object]]:
        """(type, name, handler) of every service."""
        display = DisplayPublishers(self)
        compute_ik = display.showing_ik_answers(ik_service.compute_ik)
        return [(GetPositionIK, "compute_ik", compute_ik),
                (GetPositionIK, self._node_parameters.value("solve_ik_service_name"), compute_ik),
                (GetPositionFK, "compute_fk", fk_service.compute_fk),
                (GetStateValidity, "check_state_validity", state_validity_service.check_state_validity),
                (GetCartesianPath, "compute_cartesian_path",
                 CartesianPathService(self, display).compute_cartesian_path),
                (ApplyPlanningScene, "apply_planning_scene", self._scene_topics.apply_planning_scene),
                (GetPlanningScene, "get_planning_scene", planning_scene_service.get_planning_scene)]

    def _serving(self, handler):
        """A service callback answering each request from one RequestContext (the state read once)."""
        def callback(request, response):
            return handler(request, response, RequestContext(self._store.current, self._positions.current,
                                                              self._tools))
        return callback

    @property
    def executor_threads(self) -> int:
        return self._node_parameters.value("executor_threads") or max(4, os.cpu_count() or 1)

    # ----------------------------------------------------------------------- parameters
    def _on_set_parameters(self, parameters: list[Parameter]) -> SetParametersResult:
        """Accept or refuse a change, without side effects: a change of the robot set-up's inputs is accepted
        only if the set-up it gives can be built (it is kept, to be served once the change is set)."""
        try:
            reason = self._refusal(parameters)
        except Exception as error:  # never a parameter service without an answer
            self.get_logger().error(f"internal error validating parameters: {error!r}\n{traceback.format_exc()}")
            reason = f"internal error in {NODE_NAME}: {error!r}"
        return SetParametersResult(successful=not reason, reason=reason)

    def _refusal(self, parameters: list[Parameter]) -> str:
        """Why the change is refused ("": it is accepted)."""
        try:
            changes = self._node_parameters.validate(parameters)
        except ParameterError as error:
            return str(error)
        declaring = not all(self.has_parameter(parameter.name) for parameter in parameters)
        if declaring or not any(is_setup_input(name) for name in changes):
            return ""
        return self._setups.refusal(changes)

    def _after_set_parameters(self, parameters: list[Parameter]) -> None:
        names = [parameter.name for parameter in parameters]
        try:
            if any(name in SETTINGS_PARAMETERS for name in names):
                self._store.change(lambda state: state.with_settings(self._node_parameters.settings()))
            if any(is_setup_input(name) for name in names):
                self._refresh(f"parameter(s) {names} set")
        except Exception as error:  # never a parameter service without an answer
            self.get_logger().error(f"internal error applying parameter(s) {names}: {error!r}\n"
                                    f"{traceback.format_exc()}")

    # ----------------------------------------------------------------------- the robot set-up
    def _on_description(self, which: str, text: str) -> None:
        with self._store.lock:
            if self._topic_descriptions[which] == text:
                return
            self._topic_descriptions = MappingProxyType({**self._topic_descriptions, which: text})
        if self._node_parameters.value(which):
            self.get_logger().info(f"{which} topic received; the {which} parameter is set and takes precedence")
            return
        self._refresh(f"new {which} from the topic")

    def _refresh(self, reason: str) -> None:
        """Serve the set-up the current parameters and topics give (``setup_updates``: built in the background,
        waited for at most robot_setup_wait)."""
        self._setups.serve(reason, self._node_parameters.value("robot_setup_wait"))


def main(args: Sequence[str] | None = None) -> int:
    argv = list(sys.argv if args is None else args)
    if "--parameters-markdown" in argv:
        print(parameters_markdown())
        return 0
    rclpy.init(args=argv)
    try:
        node = KinematicsNode()
    except SetupError as error:
        print(f"{NODE_NAME}: {error}", file=sys.stderr)
        rclpy.try_shutdown()
        return 1
    if not rclpy.ok():  # SIGINT / SIGTERM while starting
        node.destroy_node()
        rclpy.try_shutdown()
        return 0
    executor = MultiThreadedExecutor(num_threads=node.executor_threads)
    executor.add_node(node)
    try:
        executor.spin()
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        executor.shutdown()
        node.destroy_node()
        rclpy.try_shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
