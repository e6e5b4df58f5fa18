"""The servo loop in a process of its own (``ServoProcess``): it keeps its period beside the node's services
without delaying them and without being delayed by them.

On a thread of the node, the loop and its 100 Hz topics shared the node's GIL and executor with the services:
compute_ik took 40-50 % longer at the median (docs/benchmarks.md, bench/servo_jitter.py). Here, as plans run in
planning processes (``planning.processes``): a process started with multiprocessing's spawn method builds the
robot set-up from the node's ``SetupInputs`` and its collision checker from the scene's immutable content
(``SceneContent``), each sent only when it changes (the node looks every ``WATCH_S``). The process has its own
rclpy context and node (``<node name>_servo``, no parameter services) holding every servo topic and service
under the names the kinematics node resolves (``~/status`` is ``/<ns>/kinematics_node/status``), its own
joint_states subscription and TF listener: commands, outputs and statuses never pass through the kinematics
node. The ``moveit_servo.*`` parameters stay declared on the kinematics node. The process ends when its pipe
closes: ``close``, or the node's process gone.
"""
from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
import threading
from collections.abc import Mapping

from ...errors import KinematicsError
from ...planning.processes import SceneContent, scene_checker
from ...robot_setup import RobotSetup, build_robot_setup
from ...servo import ServoSettings
from ..serving_state import StateStore
from .servo import declare_servo_parameters, resolved_names

#: How often [s] the node looks for a new robot set-up or scene to send to the servo process.
WATCH_S = 0.05
#: How long [s] ``close`` waits for the process to end before it is killed.
CLOSE_WAIT_S = 2.0


class ServoProcess:
    """The servo process of ``node`` (the kinematics node) for ``settings`` (enabled), fed from ``store``."""

    def __init__(self, node, store: StateStore, settings: ServoSettings):
        declare_servo_parameters(node, settings)
        self._store = store
        context = multiprocessing.get_context("spawn")
        self._conn, child_end = context.Pipe()
        self.process = context.Process(
            target=_process_main, name="kinematics_servo", daemon=True,
            args=(child_end, settings, resolved_names(node, settings), f"{node.get_name()}_servo",
                  node.get_namespace(), node.context.get_domain_id()))
        self.process.start()
        child_end.close()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="servo robot feed", daemon=True)
        self._thread.start()

    def _watch(self) -> None:
        """Send the served robot (its inputs, with a new key per set-up) and scene whenever either changes."""
        key, sent_setup, sent_content = 0, None, None
        while not self._stop.wait(WATCH_S):
            state = self._store.current
            if state.setup is None:
                continue
            content = SceneContent.of(state.checker) if state.checker is not None else None
            same_content = content is sent_content or (content is not None and content.same_as(sent_content))
            if state.setup is sent_setup and same_content:
                continue
            if state.setup is not sent_setup:
                key += 1
            try:
                self._conn.send(("robot", key, state.setup.inputs, content))
            except (OSError, EOFError, ValueError):  # the process is gone, or closed
                return
            sent_setup, sent_content = state.setup, content

    def close(self) -> None:
        self._stop.set()
        self._thread.join(CLOSE_WAIT_S)
        with contextlib.suppress(OSError):
            self._conn.close()
        self.process.join(CLOSE_WAIT_S)
        if self.process.is_alive():
            self.process.kill()
            self.process.join(CLOSE_WAIT_S)


class _ServedRobot:
    """The servo process's robot: the set-up built from the last inputs and the checker of the last scene."""

    def __init__(self, log):
        self._log = log
        self._key, self._robot = 0, (None, None)

    def current(self) -> tuple[RobotSetup | None, object]:
        return self._robot

    def take(self, key: int, inputs, content: SceneContent | None) -> None:
        setup = self._robot[0]
        try:
            if key != self._key or setup is None:
                setup = build_robot_setup(inputs)
            checker = scene_checker(setup, content) if content is not None else None
        except (KinematicsError, OSError) as error:  # the node refused these inputs as well
            self._log(f"servo: the robot could not be built here: {error}")
            return
        self._key, self._robot = key, (setup, checker)


def _process_main(conn, settings: ServoSettings, names: Mapping[str, str], node_name: str, namespace: str,
                  domain_id: int) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C stops the node, which closes the pipe
    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.signals import SignalHandlerOptions
    from sensor_msgs.msg import JointState

    from ..frames import create_transform_source
    from ..messages.robot_state import JointPositions
    from ..transport.lean_node import LeanNode
    from .servo import ServoLoop

    rclpy.init(args=[], domain_id=domain_id, signal_handler_options=SignalHandlerOptions.NO)
    node = LeanNode(node_name, namespace=namespace, start_parameter_services=False)
    positions = JointPositions()
    node.create_subscription(JointState, names["joint_states"], lambda m: positions.update(m.name, m.position), 10)
    robot = _ServedRobot(node.get_logger().error)
    loop = ServoLoop(node, robot.current, positions, create_transform_source(node), settings, names, None)
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    threading.Thread(target=executor.spin, name="servo executor", daemon=True).start()
    while True:
        try:
            _, key, inputs, content = conn.recv()
        except (EOFError, OSError):
            break
        robot.take(key, inputs, content)
    loop.close()
    executor.shutdown(timeout_sec=0)
    node.destroy_node()
    rclpy.try_shutdown()
    os._exit(0)  # nothing to save: skip the teardown of the compiled code and collision structures
