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
- services: ``ik_service``, ``fk_service``, ``state_validity_service``, each a handler
  ``(request, response, RequestContext)``; a new service is one module and one line in ``_service_table``.
- scheduling (``executor``, ``search_scheduler``): IK requests run on threads of their own and compute in
  ``search_threads`` CPU slots (short searches before long ones, then earliest deadline); every other callback
  runs on a pool IK never occupies.
  SIGINT / SIGTERM cancel the searches, answer what is in flight, and exit 0 (``main``).
- the seed / current state (``robot_state``): the latest ``joint_states`` overlaid by the request's robot_state.
- frames (``frames``): robot links from the state, anything else from TF.
- collisions: the planning scene kept from the ``collision_object`` and ``attached_collision_object`` topics
  (``scene_topics``), as move_group keeps its world; IK with ``avoid_collisions`` and ``check_state_validity``
  check against it, or against a request-scoped copy holding the request's attached objects
  (``request_collisions``).

Console script: ``kinematics_node`` (``ros2 run kinematics_py kinematics_node``).
"""
from __future__ import annotations

import os
import signal
import sys
import threading
import time
import traceback
from collections.abc import Sequence
from types import MappingProxyType

import rclpy
from moveit_msgs.srv import GetPositionFK, GetPositionIK, GetStateValidity
from rcl_interfaces.msg import SetParametersResult
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from rclpy.signals import SignalHandlerOptions
from sensor_msgs.msg import JointState
from std_msgs.msg import String

from ..parameters import ParameterError
from ..robot_setup import LogLine, RobotSetup, SetupError, build_robot_setup
from . import fk_service, ik_service, state_validity_service
from .executor import NodeExecutor, search_entities
from .frames import create_transform_source
from .node_parameters import (
    DESCRIPTIONS,
    NODE_NAME,
    SETTINGS_PARAMETERS,
    NodeParameters,
    is_setup_input,
    parameters_markdown,
    split_kinematics_parameter,
)
from .request_context import RequestContext, ServiceTools
from .robot_state import JointPositions
from .scene_topics import SceneTopics
from .search_scheduler import SearchScheduler
from .serving_state import ServingState, StateStore, carried_over

#: Keep every request and answer until delivered: with the default depth of 10, a burst from many clients
#: can overwrite answers that a slow client has not yet acknowledged.
SERVICE_QOS = QoSProfile(history=HistoryPolicy.KEEP_ALL, reliability=ReliabilityPolicy.RELIABLE,
                         durability=DurabilityPolicy.VOLATILE)
DESCRIPTION_QOS = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                             durability=DurabilityPolicy.TRANSIENT_LOCAL)
#: Time [s] the answers of cancelled IK searches get to be sent when the node stops, and then to leave (DDS
#: sends them from threads of its own, which end with the process).
STOP_GRACE_S = 1.0
DELIVERY_GRACE_S = 0.2


class KinematicsNode(Node):
    """Serves compute_ik, solve_ik, compute_fk and check_state_validity for the groups of the robot it is given."""

    def __init__(self, **kwargs):
        super().__init__(NODE_NAME, **kwargs)
        self._node_parameters = NodeParameters(self)  # SetupError for an unusable value given at start-up
        self._store = StateStore(ServingState(self._node_parameters.settings()))
        self._positions = JointPositions()
        self._topic_descriptions = MappingProxyType(dict.fromkeys(DESCRIPTIONS, ""))
        #: The set-up a validated parameter change gives, served once the change is set (if still current).
        self._validated: RobotSetup | None = None
        self.add_on_set_parameters_callback(self._on_set_parameters)
        self.add_post_set_parameters_callback(self._after_set_parameters)

        callbacks = ReentrantCallbackGroup()
        transforms = create_transform_source(self, callbacks)
        self.search_scheduler = SearchScheduler(self._startup_count("search_threads", _cpu_count()))
        self._tools = ServiceTools(self.get_logger(), self.get_clock(), transforms, self.get_fully_qualified_name(),
                                   self.search_scheduler)
        for which in DESCRIPTIONS:
            self.create_subscription(String, which, lambda msg, which=which: self._on_description(which, msg.data),
                                     DESCRIPTION_QOS, callback_group=callbacks)
        self.create_subscription(JointState, "joint_states",
                                 lambda msg: self._positions.update(msg.name, msg.position), 10,
                                 callback_group=callbacks)
        SceneTopics(self, self._store, self._positions, transforms)
        services = self._service_table()
        search_services = []
        for service_type, name, handler in services:
            service = self.create_service(service_type, name, self._serving(handler), qos_profile=SERVICE_QOS,
                                          callback_group=callbacks)
            if handler is ik_service.compute_ik:
                search_services.append(service)
        #: Whether a ready entity is an IK service (its callbacks run on the IK request threads).
        self.is_search = search_entities(search_services)
        self.get_logger().info(f"TF lookups through {transforms.backend}; services: "
                               f"{', '.join(f'{name} ({kind.__name__})' for kind, name, _ in services)}; world "
                               f"from the collision_object and attached_collision_object topics")
        self._node_parameters.warn_unused_overrides()
        if self._node_parameters.value("robot_description"):
            self._refresh("start-up")
        else:
            self.get_logger().info("robot_description parameter empty: waiting for the robot_description topic")

    def _service_table(self) -> list[tuple[type, str, object]]:
        """(type, name, handler) of every service."""
        return [(GetPositionIK, "compute_ik", ik_service.compute_ik),
                (GetPositionIK, self._node_parameters.value("solve_ik_service_name"), ik_service.compute_ik),
                (GetPositionFK, "compute_fk", fk_service.compute_fk),
                (GetStateValidity, "check_state_validity", state_validity_service.check_state_validity)]

    def _serving(self, handler):
        """A service callback answering each request from one RequestContext (the state read once)."""
        def callback(request, response):
            return handler(request, response, RequestContext(self._store.current, self._positions.current,
                                                              self._tools))
        return callback

    def _startup_count(self, name: str, default: int) -> int:
        return self._node_parameters.value(name) or default

    def create_executor(self) -> NodeExecutor:
        """The executor serving this node: IK requests apart from every other callback."""
        return NodeExecutor(self._startup_count("executor_threads", max(4, _cpu_count())),
                            self._node_parameters.value("max_concurrent_ik_requests"), self.is_search,
                            self.get_logger())

    def stop_searches(self, executor: NodeExecutor) -> None:
        """Cancel every IK search and request, and give their answers time to be sent and to leave."""
        self.search_scheduler.close()
        if executor.search_pool.outstanding:
            executor.search_pool.wait_idle(STOP_GRACE_S)
            time.sleep(DELIVERY_GRACE_S)

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
        try:
            setup = build_robot_setup(self._node_parameters.setup_inputs(self._topic_descriptions, changes),
                                      self._store.current.setup)
        except SetupError as error:
            return str(error)
        for name in changes:
            split = split_kinematics_parameter(name)
            if split and split[0] in setup.unavailable:
                return setup.unavailable[split[0]]
        self._validated = setup
        return ""

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
        """Serve the set-up the current parameters and topics give, unless it is served already. Under the
        store's lock: the inputs read, the set-up built from them and installed form one step."""
        logger = self.get_logger()
        with self._store.lock:
            inputs = self._node_parameters.setup_inputs(self._topic_descriptions)
            validated, self._validated = self._validated, None
            current = self._store.current.setup
            if current is not None and current.inputs == inputs:
                return
            try:
                setup = validated if validated is not None and validated.inputs == inputs else \
                    build_robot_setup(inputs, current)
            except SetupError as error:
                problem = str(error)
                self._store.change(lambda state: state.with_problem(problem))
                logger.error(f"{reason}: {problem}" + ("; keeping the previous robot" if current else ""))
                return
            _print(logger, setup.log)
            before = self._store.current
            note = carried_over(before, self._store.change(lambda state: state.with_setup(setup)))
            if note:
                logger.info(note)
            self._node_parameters.declare_groups(setup.groups)
        served = sorted(setup.groups)
        logger.info(f"{reason}: serving group(s) {served}" if served else f"{reason}: NO group can be served")


def _print(logger, lines: Sequence[LogLine]) -> None:
    """Log each line at its level (rclpy wants one level per call site)."""
    for line in lines:
        if line.level == "error":
            logger.error(line.text)
        elif line.level == "warning":
            logger.warning(line.text)
        else:
            logger.info(line.text)


def _cpu_count() -> int:
    """CPUs this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


class _StopSignals:
    """SIGINT and SIGTERM: while the node starts, they interrupt it (KeyboardInterrupt); once it serves, they set
    ``requested``, and the main thread stops the node (rclpy's own handlers would shut the context down under
    the running callbacks)."""

    def __init__(self):
        self.requested = threading.Event()
        self.serving = False
        for number in (signal.SIGINT, signal.SIGTERM):
            signal.signal(number, self._on_signal)

    def _on_signal(self, number, _frame) -> None:
        self.requested.set()
        if not self.serving:
            raise KeyboardInterrupt


def main(args: Sequence[str] | None = None) -> int:
    """The console script: serve until SIGINT or SIGTERM, then stop within a fraction of a second (exit code 0),
    the IK requests in flight answered PREEMPTED."""
    argv = list(sys.argv if args is None else args)
    if "--parameters-markdown" in argv:
        print(parameters_markdown())
        return 0
    rclpy.init(args=argv, signal_handler_options=SignalHandlerOptions.NO)
    stop = _StopSignals()
    try:
        node = KinematicsNode()
        stop.serving = True
    except SetupError as error:
        print(f"{NODE_NAME}: {error}", file=sys.stderr)
        rclpy.try_shutdown()
        return 1
    except KeyboardInterrupt:  # SIGINT / SIGTERM while starting
        rclpy.try_shutdown()
        return 0
    executor = node.create_executor()
    executor.add_node(node)
    spinner = threading.Thread(target=executor.spin, name="executor", daemon=True)
    if not stop.requested.is_set():
        spinner.start()
        while not stop.requested.wait(0.5) and spinner.is_alive():
            pass
    node.stop_searches(executor)
    executor.stop_spinning()
    if spinner.is_alive():
        spinner.join(STOP_GRACE_S)
    executor.shutdown(timeout_sec=0)
    node.destroy_node()
    rclpy.try_shutdown()
    rclpy.get_default_context().destroy()  # the DDS participant, announced gone
    _exit_now(0)


def _exit_now(code: int) -> None:
    """Exit once ROS is torn down, skipping the interpreter's own teardown of the robot's compiled code and
    collision structures (over a second on a 2-CPU machine, and nothing left to save)."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":
    sys.exit(main())
