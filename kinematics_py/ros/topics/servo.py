"""moveit_servo's interface on the node: runs when ``moveit_servo.move_group_name`` is given.

Topics and services relative to the node, named by the ``moveit_servo.*`` parameters (moveit_servo's names and
defaults, ``parameters.SERVO_PARAMETERS``): twists (TwistStamped), joint jogs (control_msgs/JointJog) and pose
targets (PoseStamped) in; ``~/switch_command_type`` (moveit_msgs/srv/ServoCommandType), ``~/pause_servo``
(std_srvs/SetBool); the status (moveit_msgs/ServoStatus) and the commands on ``command_out_topic``
(trajectory_msgs/JointTrajectory or std_msgs/Float64MultiArray; positions and velocities as
``publish_joint_*`` say, accelerations not computed) out, every period (zero velocities while there is no fresh
command). The loop (``servo.ServoCore``) runs in the servo process (``servo_process``), on a
thread of its own at ``publish_period``, on an absolute schedule: the kinematics node's services never delay it,
and it never waits for them (it reads the robot it is sent, one immutable value, once per period). It starts from the
latest joint_states and then integrates its own commands. Frames: the group's base, the model frame, every link of
the robot (placed at the servoed positions) and frames TF knows; others are refused with a status.
"""
from __future__ import annotations

import threading
import time
from collections.abc import Mapping

import numpy as np
from builtin_interfaces.msg import Duration
from control_msgs.msg import JointJog
from geometry_msgs.msg import PoseStamped, TwistStamped
from moveit_msgs.msg import ServoStatus
from moveit_msgs.srv import ServoCommandType
from rcl_interfaces.msg import ParameterDescriptor
from std_msgs.msg import Float64MultiArray
from std_srvs.srv import SetBool
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from ...errors import KinematicsError
from ...geometry.transforms import transform_from_pose
from ...parameters import SERVO_NAMESPACE, ParameterError
from ...robot_setup import SetupError
from ...servo import (
    STATUS_MESSAGES,
    JointJogCommand,
    PoseCommand,
    ProximityProbe,
    ServoCore,
    ServoSettings,
    StatusCode,
    TwistCommand,
)
from ..frames import ModelFrames

#: How long [s] the loop waits for joint_states holding every joint of the group before it looks again.
WAITING_FOR_STATE_S = 0.1


def declare_servo_parameters(node, settings: ServoSettings) -> None:
    """The ``moveit_servo.*`` parameters on the kinematics node, read-only: the loop reads them once."""
    for name, value in settings.values.items():
        node.declare_parameter(f"{SERVO_NAMESPACE}.{name}", list(value) if isinstance(value, tuple) else value,
                               ParameterDescriptor(read_only=True), ignore_override=True)


def resolved_names(node, settings: ServoSettings) -> dict[str, str]:
    """The servo's topics and services as ``node`` (the kinematics node) resolves them: the servo process serves
    them under these absolute names (``~/`` relative to the kinematics node, as moveit_servo's to its node)."""
    s = settings
    topics = {"twist": s["cartesian_command_in_topic"], "jog": s["joint_command_in_topic"],
              "pose": s["pose_command_in_topic"], "status": s["status_topic"], "out": s["command_out_topic"],
              "joint_states": "joint_states"}
    services = {"switch": "~/switch_command_type", "pause": "~/pause_servo"}
    return {**{key: node.resolve_topic_name(name) for key, name in topics.items()},
            **{key: node.resolve_service_name(name) for key, name in services.items()}}


def servo_settings(overrides: Mapping[str, object]) -> ServoSettings:
    """The ``moveit_servo.*`` values given to the node (command line, parameter file); SetupError for a bad one."""
    prefix = SERVO_NAMESPACE + "."
    try:
        return ServoSettings.from_parameters({name: value for name, value in overrides.items()
                                              if name.startswith(prefix)})
    except ParameterError as error:
        raise SetupError(str(error)) from None


class ServoLoop:
    """The servo topics, services and loop for ``settings`` (enabled) on ``node`` (the servo process's own);
    ``close()`` stops the loop.

    ``robot()`` is the served (RobotSetup, CollisionChecker or None), or (None, None) before the first; ``names``
    the topics' and services' resolved names (``resolved_names``: those of the kinematics node);
    ``positions`` holds the latest joint_states."""

    def __init__(self, node, robot, positions, transforms, settings: ServoSettings, names: Mapping[str, str],
                 callback_group):
        self._node, self._robot, self._positions, self.settings = node, robot, positions, settings
        self._transforms = transforms
        self._lock = threading.Lock()
        self._core: ServoCore | None = None
        self._setup = self._checker = None
        self._stop = threading.Event()
        self._last_failure = ""
        options = {"callback_group": callback_group}
        node.create_subscription(TwistStamped, names["twist"], self._on_twist, 10, **options)
        node.create_subscription(JointJog, names["jog"], self._on_jog, 10, **options)
        node.create_subscription(PoseStamped, names["pose"], self._on_pose, 10, **options)
        node.create_service(ServoCommandType, names["switch"], self._on_switch, **options)
        node.create_service(SetBool, names["pause"], self._on_pause, **options)
        self._status = node.create_publisher(ServoStatus, names["status"], 10)
        trajectory = settings["command_out_type"] == "trajectory_msgs/JointTrajectory"
        self._out = node.create_publisher(JointTrajectory if trajectory else Float64MultiArray, names["out"], 10)
        self._thread = threading.Thread(target=self._run, name="servo loop", daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=1.0)

    # ------------------------------------------------------------------ commands in
    def _on_twist(self, message: TwistStamped) -> None:
        t = message.twist
        velocities = np.array([t.linear.x, t.linear.y, t.linear.z, t.angular.x, t.angular.y, t.angular.z])
        self._take(lambda core: TwistCommand(velocities, self._frame(core, message.header.frame_id)))

    def _on_jog(self, message: JointJog) -> None:
        self._take(lambda _core: JointJogCommand(tuple(message.joint_names), tuple(message.velocities)))

    def _on_pose(self, message: PoseStamped) -> None:
        p, o = message.pose.position, message.pose.orientation
        T_frame_target = transform_from_pose((p.x, p.y, p.z), (o.x, o.y, o.z, o.w))
        self._take(lambda core: PoseCommand(self._frame(core, message.header.frame_id) @ T_frame_target))

    def _take(self, build) -> None:
        """Hand a command to the core; a refused one (malformed, unknown frame, wrong type) gets a status."""
        with self._lock:
            core = self._core
            if core is None:
                return self._publish_status(StatusCode.INVALID, "servo has no joint states of its group yet")
            try:
                reason = core.command(build(core), time.monotonic())
            except KinematicsError as error:
                reason = str(error)
        if reason:
            self._publish_status(StatusCode.INVALID, f"command refused: {reason}")

    def _frame(self, core: ServoCore, frame_id: str) -> np.ndarray:
        """T_base_frame of a command's frame: the group's base, the model frame, a robot link (placed at the
        servoed positions) or a frame TF knows; RequestError naming it when none of these."""
        base = core.solver.base
        if frame_id in ("", base):
            return np.eye(4)
        model = self._setup.model
        measured = {name: value for name, value in self._positions.current.items() if name in model.joints}
        link_poses = model.link_poses({**measured, **dict(zip(core.joint_names, core.positions))})
        frames = ModelFrames(self._setup, self._transforms)
        return frames.T_base_model(base, link_poses) @ frames.T_model_frame(frame_id, link_poses)

    def _on_switch(self, request, response):
        with self._lock:
            response.success = self._core is not None and self._core.switch_command_type(request.command_type)
        return response

    def _on_pause(self, request, response):
        with self._lock:
            response.success = self._core is not None
            if self._core is not None:
                self._core.paused = bool(request.data)
        response.message = ("paused" if request.data else "resumed") if response.success else "servo not running"
        return response

    # ------------------------------------------------------------------ the loop
    def _run(self) -> None:
        period = self.settings["publish_period"]
        next_start = time.monotonic()
        while not self._stop.is_set():
            try:
                self._period()
            except Exception as error:  # never a dead loop: it reports and goes on
                self._report_failure(f"{type(error).__name__}: {error}")
            next_start += period
            delay = next_start - time.monotonic()
            if delay < -period:  # fell more than a period behind: start again from now
                next_start, delay = time.monotonic(), 0.0
            self._stop.wait(max(delay, 0.0))

    def _period(self) -> None:
        now = time.monotonic()
        with self._lock:
            core = self._current_core()
            step = core.step(now) if core is not None else None
        if step is None:
            return
        self._publish_status(step.status, step.message or STATUS_MESSAGES[step.status])
        self._out.publish(self._command_message(core.joint_names, step))

    def _report_failure(self, reason: str) -> None:
        """A period that failed: the status says why every time, the log once per distinct reason."""
        if reason != self._last_failure:
            self._node.get_logger().error(f"servo period failed (the arm holds still): {reason}")
            self._last_failure = reason
        self._publish_status(StatusCode.INVALID, f"servo period failed: {reason}")

    def _current_core(self) -> ServoCore | None:
        """The core of the served robot (a new one after a robot or scene change), reset from joint_states."""
        setup, checker = self._robot()
        if setup is None:
            return None
        if setup is not self._setup or checker is not self._checker:
            plugin = setup.groups.get(self.settings["move_group_name"])
            if plugin is None:
                return None
            probe = None
            if checker is not None:
                probe = ProximityProbe(checker, plugin.getJointNames(),
                                       self.settings["scene_collision_proximity_threshold"],
                                       self.settings["self_collision_proximity_threshold"])
            previous = self._core
            self._core = ServoCore(plugin, self.settings, probe.distances if probe else None)
            if previous is not None and previous.joint_names == self._core.joint_names:
                self._core.reset(previous.positions)
            self._setup, self._checker = setup, checker
        if self._core.positions is None:
            current = self._positions.current
            if not all(name in current for name in self._core.joint_names):
                return None
            self._core.reset([current[name] for name in self._core.joint_names])
        return self._core

    def _command_message(self, joint_names, step):
        s = self.settings
        if s["command_out_type"] != "trajectory_msgs/JointTrajectory":
            values = step.positions if s["publish_joint_positions"] else step.velocities
            return Float64MultiArray(data=[float(v) for v in values])
        point = JointTrajectoryPoint()
        if s["publish_joint_positions"]:
            point.positions = [float(v) for v in step.positions]
        if s["publish_joint_velocities"]:
            point.velocities = [float(v) for v in step.velocities]
        seconds = s["publish_period"]
        point.time_from_start = Duration(sec=int(seconds), nanosec=int(round((seconds % 1) * 1e9)))
        message = JointTrajectory(joint_names=list(joint_names), points=[point])
        message.header.stamp = self._node.get_clock().now().to_msg()
        return message

    def _publish_status(self, code: StatusCode, message: str) -> None:
        self._status.publish(ServoStatus(code=int(code), message=message))
