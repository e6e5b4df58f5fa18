"""The ROS 2 node: MoveIt-compatible ``compute_ik``, ``solve_ik``, ``compute_fk``, ``check_state_validity``,
``compute_cartesian_path``, ``plan_kinematic_path``, ``plan_sequence_path``, ``query_planner_interface``,
``apply_planning_scene`` and ``get_planning_scene``.

Wiring only; each part lives in its own module:

- the robot set-up (``kinematics_py.robot_setup``, ROS-free): built from the ``robot_description`` parameter
  or, while it is empty, the ``robot_description`` topic (std_msgs/String, transient local, as
  robot_state_publisher publishes it), rebuilt on every new description; the SRDF likewise
  (``robot_description_semantic``). While no robot description has come, ``description_topics`` takes what
  the topics' readers hold every second, asks robot_state_publisher's ``robot_description`` parameter, and says
  every few seconds what the node waits for. Without an SRDF, one group ``group_name`` from ``base_frame`` and
  ``tip_frame`` (or ``tip_frames``).
- parameters (``node_parameters``): solver settings per group from
  ``robot_description_kinematics.<group>.<name>`` (MoveIt's kinematics.yaml convention), validated when set
  without side effects: a change is refused, or the set-up it gives is built and served once it is set.
- what requests read (``serving_state``): one immutable value holding the set-up, the planning scene and the
  request settings; every change replaces it by one swap, so a request never mixes two of them.
- services: ``ik_service``, ``fk_service``, ``state_validity_service``, ``cartesian_path_service``,
  ``motion_plan_service``, ``sequence_service``, each a handler
  ``(request, response, RequestContext)``; a new service is one module and one line in ``_service_table``.
- display topics (``display``): planned paths on ``display_planned_path``, IK answers on ``ik_display_topic``;
  with ``viewer_port``, a page in the browser of the robot, its scene and the last answers (``viewer_feed``).
- scheduling (``executor``, ``search_scheduler``): IK requests run on threads of their own and compute in
  ``search_threads`` CPU slots (short searches before long ones, then earliest deadline); compute_cartesian_path
  and plan_kinematic_path run on those threads too; every other callback runs on a pool IK never occupies.
  SIGINT / SIGTERM cancel the searches, answer what is in flight, and exit 0 (``main``).
- the seed / current state (``robot_state``): the latest ``joint_states`` overlaid by the request's robot_state.
- frames (``frames``): robot links from the state, anything else from TF.
- collisions: the planning scene kept from the ``collision_object``, ``attached_collision_object``,
  ``planning_scene`` and ``monitored_planning_scene`` topics and ``apply_planning_scene`` (``scene_topics``), as
  move_group keeps its world; IK with ``avoid_collisions`` and ``check_state_validity``
  check against it, or against a request-scoped copy holding the request's attached objects
  (``request_collisions``).
- execution (``motion_execution``): ``execute_trajectory``, ``move_action`` and ``sequence_move_group`` through the
  controllers a MoveIt config's moveit_controllers.yaml names, or simulated ones (``simulate_controllers``).
- servoing (``topics.servo``, ``topics.servo_process``): with ``moveit_servo.move_group_name`` given,
  moveit_servo's topics and services and its loop (``servo.ServoCore``) in a process of their own, fed the robot
  set-up and scene when they change; commands out on ``moveit_servo.command_out_topic``.
- reachability maps (``reachability_markers``): a map file named on ``reachability_map`` is published as RViz
  markers on ``reachability_markers``.

Console script: ``kinematics_node`` (``ros2 run kinematics_py kinematics_node``).
"""
from __future__ import annotations

import os
import signal
import sys
import threading
import time
import traceback
from collections.abc import Mapping, Sequence
from types import MappingProxyType

import rclpy
from moveit_msgs.srv import (
    ApplyPlanningScene,
    GetCartesianPath,
    GetMotionPlan,
    GetMotionSequence,
    GetPlanningScene,
    GetPositionFK,
    GetPositionIK,
    GetStateValidity,
    QueryPlannerInterfaces,
)
from rcl_interfaces.msg import SetParametersResult
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.parameter import Parameter
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from rclpy.signals import SignalHandlerOptions
from sensor_msgs.msg import JointState

from ..parameters import ParameterError
from ..planning.processes import PlanningProcesses
from ..robot_setup import SetupError
from .frames import create_transform_source
from .joint_limit_parameters import cartesian_limit_values, declare_joint_limit_parameters, joint_limit_overrides
from .messages.robot_state import JointPositions
from .motion_execution import Planners, serve_execution
from .node_parameters import (
    DESCRIPTIONS,
    NODE_NAME,
    SETTINGS_PARAMETERS,
    NodeParameters,
    is_setup_input,
    parameters_markdown,
)
from .services import fk_service, ik_service, planning_scene_service, state_validity_service
from .services.cartesian_path_service import CartesianPathService
from .services.motion_plan_service import MotionPlanService
from .services.request_context import RequestContext, ServiceTools
from .services.sequence_service import SequenceService
from .serving_state import ServingState, StateStore
from .setup_updates import SetupUpdates
from .topics.description_topics import TOPIC, DescriptionTopics
from .topics.display import DisplayPublishers
from .topics.reachability_markers import ReachabilityMarkers
from .topics.scene_topics import SceneTopics
from .topics.servo import servo_settings
from .topics.servo_process import ServoProcess
from .topics.viewer_feed import ViewerFeed
from .transport.client_presence import ClientPresence
from .transport.executor import NodeExecutor, entities_among
from .transport.lean_node import LeanNode
from .transport.rcl_service_io import ServiceIO, TakenRequest, fk_link_count
from .transport.request_transit import Arrival
from .transport.search_scheduler import SearchScheduler

#: Keep every request and answer until delivered: with the default depth of 10, a burst from many clients
#: can overwrite answers that a slow client has not yet acknowledged.
SERVICE_QOS = QoSProfile(history=HistoryPolicy.KEEP_ALL, reliability=ReliabilityPolicy.RELIABLE,
                         durability=DurabilityPolicy.VOLATILE)
#: Time [s] the answers of cancelled IK searches get to be sent when the node stops, and then to leave (DDS
#: sends them from threads of its own, which end with the process).
STOP_GRACE_S = 1.0
DELIVERY_GRACE_S = 0.2
#: How long [s] a thread may hold the GIL while another waits for it (Python's default: 5 ms). A handler
#: releases the GIL in every numpy and compiled call and waits up to this long to get it back each time, so
#: a short interval keeps short requests short beside busy threads (docs/benchmarks.md, the GIL interval).
GIL_SWITCH_INTERVAL_S = 1e-4
#: How often [s] the clients with requests waiting are looked up in the ROS graph (gone ones' requests dropped).
GONE_CLIENTS_CHECK_S = 0.25
CLIENT_GONE = "its client is gone"


class KinematicsNode(LeanNode):
    """Serves IK, FK, state validity, Cartesian paths and the planning scene for the groups of the robot it is
    given."""

    #: The robot descriptions' QoS is easily got wrong by a publisher: their events are reported.
    EVENT_TOPICS = DESCRIPTIONS
    #: The page in the browser (viewer_port; None when 0).
    viewer_feed: ViewerFeed | None = None

    def __init__(self, **kwargs):
        super().__init__(NODE_NAME, **kwargs)
        self._node_parameters = NodeParameters(self)  # SetupError for an unusable value given at start-up
        self._store = StateStore(ServingState(self._node_parameters.settings()))
        self._positions = JointPositions()
        #: The descriptions received (name -> text), and where each came from (name -> its topic, or
        #: robot_state_publisher's parameter).
        self._topic_descriptions = MappingProxyType(dict.fromkeys(DESCRIPTIONS, ""))
        self._description_sources = MappingProxyType(dict.fromkeys(DESCRIPTIONS, TOPIC))
        processes = self._node_parameters.value("planning_processes")
        #: Where plan_kinematic_path plans (None: on the node's threads); each process builds every robot served.
        self.planning = PlanningProcesses(processes) if processes else None
        self._setups = SetupUpdates(self._store, lambda changes: self._node_parameters.setup_inputs(
            self._topic_descriptions, changes, self._description_sources), self.get_logger(), self._on_served,
            self._on_installing)
        self.add_on_set_parameters_callback(self._on_set_parameters)
        self.add_post_set_parameters_callback(self._after_set_parameters)

        callbacks = ReentrantCallbackGroup()
        transforms = create_transform_source(self, callbacks)
        self.search_scheduler = SearchScheduler(self._startup_count("search_threads", _cpu_count()))
        declare_joint_limit_parameters(self)
        self._tools = ServiceTools(self.get_logger(), self.get_clock(), transforms, self.get_fully_qualified_name(),
                                   self.search_scheduler, self.planning, lambda: joint_limit_overrides(self),
                                   lambda: cartesian_limit_values(self))
        #: The descriptions' topics (and, while the robot's has not come, the wait for it).
        self._descriptions = DescriptionTopics(self, self._on_descriptions, self._description_missing, callbacks)
        self.create_subscription(JointState, "joint_states", self._on_joint_states, 10, callback_group=callbacks)
        self._scene_topics = SceneTopics(self, self._store, self._positions, transforms, [
            self._node_parameters.value(name) for name in ("planning_scene_topic", "monitored_planning_scene_topic")])
        ReachabilityMarkers(self)  # reachability_map (a map file) -> reachability_markers (RViz)
        servo = servo_settings({name: given.value for name, given in self._parameter_overrides.items()})
        #: moveit_servo's topics, services and loop in a process of their own (None: no move_group_name).
        self.servo = ServoProcess(self, self._store, servo) if servo.enabled else None
        viewer_port = self._node_parameters.value("viewer_port")
        self.viewer_feed = ViewerFeed(self._store, self._node_parameters.value("viewer_host"), viewer_port,
                                      self.get_logger()) if viewer_port else None
        services = self._service_table()
        self._create_services(services, callbacks)
        #: The action servers, through the configured (or simulated) controllers (None: none).
        self.execution = serve_execution(self, self._node_parameters, self._store, self._positions, transforms,
                                         self._planners(), callbacks)
        self.get_logger().info(f"TF lookups through {transforms.backend}; services: "
                               f"{', '.join(f'{name} ({kind.__name__})' for kind, name, *_ in services)}; world "
                               f"from the collision_object, attached_collision_object and planning scene topics")
        self._node_parameters.warn_unused_overrides()
        if self._node_parameters.value("robot_description"):
            self._setups.serve("start-up", wait=None)
        else:
            self.get_logger().info("robot_description parameter empty: waiting for the robot_description topic "
                                   "(or robot_state_publisher's robot_description parameter)")

    def _create_services(self, services: list[tuple[type, str, object, bool]], callbacks) -> None:
        """The services of ``_service_table``, and which of them search."""
        search_services, other_services = [], []
        for service_type, name, handler, searches in services:
            service = self.create_service(service_type, name, self._serving(handler), qos_profile=SERVICE_QOS,
                                          callback_group=callbacks)
            (search_services if searches else other_services).append(service)
        #: Whether a ready entity is a service that runs IK searches (its callbacks run on the IK request threads).
        self.is_search = entities_among(search_services)
        #: Whether a ready entity is one of the node's other services (their requests run cheap ones first).
        self.is_queued = entities_among(other_services)

    def _planners(self) -> Planners:
        """The plan_kinematic_path and plan_sequence_path handlers, as move_action and sequence_move_group plan
        with them: from a given state (the current one, its scene with the goal's diff applied)."""
        def context(state) -> RequestContext:
            return RequestContext(state, self._positions.current, self._tools)
        return Planners(
            lambda request, state: self._plan_kinematic_path(request, GetMotionPlan.Response(), context(state)),
            lambda request, state: self._plan_sequence_path(request, GetMotionSequence.Response(), context(state)))

    def _service_table(self) -> list[tuple[type, str, object, bool]]:
        """(type, name, handler, whether it runs IK searches) of every service. Services that search run on the
        IK request threads, so that the others never wait behind them."""
        display = DisplayPublishers(self)
        shown = self.viewer_feed.watching if self.viewer_feed is not None else lambda _service, handler: handler
        compute_ik = shown("compute_ik", display.showing_ik_answers(ik_service.compute_ik))
        cartesian = CartesianPathService(display)
        motions = MotionPlanService(display)
        sequences = SequenceService(display)
        # move_action and sequence_move_group plan with them
        self._plan_kinematic_path, self._plan_sequence_path = motions.plan_kinematic_path, sequences.plan_sequence_path
        return [(GetPositionIK, "compute_ik", compute_ik, True),
                (GetPositionIK, self._node_parameters.value("solve_ik_service_name"), compute_ik, True),
                (GetPositionFK, "compute_fk", shown("compute_fk", fk_service.compute_fk), False),
                (GetStateValidity, "check_state_validity", shown("check_state_validity",
                                                                 state_validity_service.check_state_validity), False),
                (GetCartesianPath, "compute_cartesian_path", shown("compute_cartesian_path",
                                                                   cartesian.compute_cartesian_path), True),
                (GetMotionPlan, "plan_kinematic_path", shown("plan_kinematic_path", motions.plan_kinematic_path),
                 True),
                (GetMotionSequence, "plan_sequence_path", shown("plan_sequence_path", sequences.plan_sequence_path),
                 True),
                (QueryPlannerInterfaces, "query_planner_interface", motions.query_planner_interface, False),
                (ApplyPlanningScene, "apply_planning_scene", self._scene_topics.apply_planning_scene, False),
                (GetPlanningScene, "get_planning_scene", planning_scene_service.get_planning_scene, False)]

    def _serving(self, handler):
        """A service callback answering each request from one RequestContext (the state read once)."""
        def callback(request, response, arrival: Arrival | None = None):
            if arrival is None:  # not taken by NodeExecutor (another executor, or an older rclpy)
                arrival = Arrival(0.0, time.monotonic())
            return handler(request, response, RequestContext(
                self._store.current, self._positions.current, self._tools, transit=arrival.transit,
                arrived=arrival.taken_at, client=arrival.client))
        return callback

    def _on_joint_states(self, message: JointState) -> None:
        self._positions.update(message.name, message.position)
        if self.viewer_feed is not None:
            self.viewer_feed.joint_states(self._positions.current)

    def destroy_node(self) -> None:
        if self.execution is not None:
            self.execution.close()
        if self.viewer_feed is not None:
            self.viewer_feed.close()
        if self.servo is not None:
            self.servo.close()
        super().destroy_node()

    def _startup_count(self, name: str, default: int) -> int:
        return self._node_parameters.value(name) or default

    def create_executor(self) -> NodeExecutor:
        """The executor serving this node: IK requests apart from every other callback."""
        executor = NodeExecutor(self._startup_count("executor_threads", max(4, _cpu_count())),
                                self._node_parameters.value("max_concurrent_ik_requests"), self.is_search,
                                self.get_logger(), is_queued=self.is_queued, context=self.context)
        presence = ClientPresence(self, [service.service_name for service in self.services])
        executor.on_taken = lambda _io, taken: presence.note(taken.client)
        executor.refusal_unread = self._refusal_unread
        self.create_timer(GONE_CLIENTS_CHECK_S, lambda: self._forget_gone_clients(executor, presence))
        return executor

    def _forget_gone_clients(self, executor: NodeExecutor, presence: ClientPresence) -> None:
        """Drop the waiting requests and cancel the searches of the clients the ROS graph no longer lists."""
        gone = presence.gone(executor.clients_waiting() | self.search_scheduler.clients())
        if not gone:
            return
        dropped = executor.drop_clients(gone)
        cancelled = self.search_scheduler.cancel_clients(gone, CLIENT_GONE)
        if dropped or cancelled:
            self.get_logger().info(f"{len(gone)} client(s) gone: {dropped} waiting request(s) dropped, "
                                   f"{cancelled} search(es) cancelled")

    def _refusal_unread(self, io: ServiceIO, taken: TakenRequest):
        """The answer of a compute_fk request over max_fk_links, read in C (its message never built), or None."""
        if io.service.srv_type is not GetPositionFK or taken.c_message is None:
            return None
        return fk_service.refusal_unread(fk_link_count(taken.c_message), self._store.current.settings.max_fk_links,
                                         self.get_fully_qualified_name())

    def stop_searches(self, executor: NodeExecutor) -> None:
        """Cancel every IK search, plan and request, and give their answers time to be sent and to leave."""
        self.search_scheduler.close()
        if self.planning is not None:
            self.planning.close()
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
    def _on_descriptions(self, texts: Mapping[str, str], source: str) -> None:
        """Descriptions (name -> text) from ``source`` (their topics, or robot_state_publisher's parameter): the new
        ones served, in one build, unless the node's own parameters of the same names are set."""
        with self._store.lock:
            new = {which: text for which, text in texts.items() if self._topic_descriptions[which] != text}
            self._topic_descriptions = MappingProxyType({**self._topic_descriptions, **new})
            self._description_sources = MappingProxyType({**self._description_sources, **dict.fromkeys(new, source)})
        for which in [which for which in new if self._node_parameters.value(which)]:
            self.get_logger().info(f"{which} from the {source} received; the {which} parameter is set and takes "
                                   f"precedence")
            del new[which]
        if new:
            self._refresh(f"new {' and '.join(new)} from the {source}")

    def _description_missing(self, which: str) -> bool:
        """Whether the node has no ``which`` description: its parameter empty, none received."""
        return not (self._node_parameters.value(which) or self._topic_descriptions[which])

    def _on_installing(self, setup) -> None:
        """A robot set-up is about to serve: simulated joints start at its initial positions, the node's state with
        them (not from their first joint_states message, which its subscription receives a moment later)."""
        execution = getattr(self, "execution", None)  # None until the node's execution is served
        if execution is not None and execution.simulated is not None:
            execution.simulated.prepare(setup)

    def _on_served(self, setup) -> None:
        """A robot set-up now serves: its groups' parameters are declared, the planning processes build it."""
        self._node_parameters.declare_groups(setup.groups)
        if self.planning is not None:
            self.planning.prepare(setup)

    def _refresh(self, reason: str) -> None:
        """Serve the set-up the current parameters and topics give (``setup_updates``: built in the background,
        waited for at most robot_setup_wait)."""
        self._setups.serve(reason, self._node_parameters.value("robot_setup_wait"))


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
    sys.setswitchinterval(GIL_SWITCH_INTERVAL_S)
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
