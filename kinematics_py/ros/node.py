"""The ROS 2 node: MoveIt-compatible ``compute_ik``, ``solve_ik``, ``compute_fk`` and ``check_state_validity``.

A thin layer over ``KinematicsPlugin`` (one per planning group):

- Robot model from the ``robot_description`` parameter or, while it is empty, the ``robot_description``
  topic (std_msgs/String, transient local, as robot_state_publisher publishes it); re-initialised on every
  new description. The SRDF likewise (``robot_description_semantic``). Without an SRDF, one group
  ``group_name`` from ``base_frame`` and ``tip_frame`` (or ``tip_frames``).
- Solver settings per group from ``robot_description_kinematics.<group>.<name>`` (MoveIt's kinematics.yaml
  convention), one ROS parameter per entry of ``parameters.SPECS``, validated when set.
- The seed / current state is the latest ``joint_states`` message overlaid by the request's robot_state.
- Poses in frames other than the model frame: robot links from the state, anything else from TF.
- Collisions: a ``CollisionChecker`` of the robot (URDF collision geometry, SRDF disabled pairs) and a
  ``PlanningScene`` kept from the ``collision_object`` and ``attached_collision_object`` topics, as
  move_group keeps its world. IK with ``avoid_collisions`` and ``check_state_validity`` check against that
  scene, or against a request-scoped copy holding the request's attached objects.

Console script: ``kinematics_node`` (``ros2 run kinematics_py kinematics_node``).
"""
from __future__ import annotations

import math
import os
import sys
import threading
import traceback
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import rclpy
from geometry_msgs.msg import PoseStamped
from moveit_msgs.msg import AttachedCollisionObject, CollisionObject, ConstraintEvalResult
from moveit_msgs.srv import GetPositionFK, GetPositionIK, GetStateValidity
from rcl_interfaces.msg import (
    FloatingPointRange,
    IntegerRange,
    ParameterDescriptor,
    SetParametersResult,
)
from rclpy.callback_groups import MutuallyExclusiveCallbackGroup, ReentrantCallbackGroup
from rclpy.executors import ExternalShutdownException, MultiThreadedExecutor
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState
from std_msgs.msg import String

from ..collision.checker import CollisionChecker
from ..collision.scene import Operation, PlanningScene, SceneError
from ..errors import ErrorCode, KinematicsError, Verdict
from ..geometry.transforms import invert_transform
from ..ik.plugin import LIMIT_SLACK, KinematicsPlugin
from ..model.robot_model import RobotModel
from ..model.srdf import SemanticModel
from ..parameters import (
    MOVEIT_LOADER_KEYS,
    SPECS,
    SPECS_BY_NAME,
    ParameterError,
    ParameterSpec,
    validate_number,
    validate_parameter,
)
from .conversions import (
    RequestConstraints,
    RequestError,
    attached_object_update,
    collision_object_update,
    constraints_from_msg,
    contact_msg,
    error_code_msg,
    joint_values_from_joint_state,
    joint_values_from_robot_state,
    operation_of,
    pose_msg_from_transform,
    robot_state_msg,
    seconds_from_duration,
    transform_from_pose_msg,
)
from .frames import FrameLookupError, create_transform_source

NODE_NAME = "kinematics_node"
KINEMATICS_NAMESPACE = "robot_description_kinematics"
#: kinematics.yaml keys for MoveIt's plugin loader and srv_kinematics_plugin: accepted, not used here.
IGNORED_KINEMATICS_KEYS = MOVEIT_LOADER_KEYS
COLLISION_POLICIES = ("error", "ignore_with_warning")
#: Parameters read once at start-up (read-only afterwards).
STARTUP_PARAMETERS = ("solve_ik_service_name", "executor_threads")
#: Parameters whose change rebuilds the robot set-up.
DESCRIPTION_PARAMETERS = ("robot_description", "robot_description_semantic", "group_name", "base_frame",
                          "tip_frame", "tip_frames")

NODE_PARAMETERS: tuple[ParameterSpec, ...] = (
    ParameterSpec("robot_description", "", "URDF XML. Empty: taken from the `robot_description` topic "
                  "(std_msgs/String, transient local), re-initialising on every new message."),
    ParameterSpec("robot_description_semantic", "", "SRDF XML. Empty: taken from the `robot_description_semantic` "
                  "topic likewise. Without an SRDF one group is built from `group_name`, `base_frame`, `tip_frame`."),
    ParameterSpec("group_name", "arm", "Name of the group served when there is no SRDF."),
    ParameterSpec("base_frame", "", "Base link of that group (no SRDF)."),
    ParameterSpec("tip_frame", "", "Tip link of that group (no SRDF)."),
    ParameterSpec("tip_frames", (), "Several tip links of that group (no SRDF); replaces `tip_frame` when not empty."),
    ParameterSpec("solve_ik_service_name", "solve_ik", "Name of the second GetPositionIK service, the one MoveIt's "
                  "srv_kinematics_plugin calls (its `kinematics_solver_service_name`). Read at start-up."),
    ParameterSpec("collision_checking_unavailable_policy", "error", "Only for robots whose collision geometry "
                  "cannot be loaded (no `<collision>` elements, an unreadable mesh): IK requests with "
                  "avoid_collisions=true get `error` (COLLISION_CHECKING_UNAVAILABLE with the reason; "
                  "check_state_validity answers valid=false) or `ignore_with_warning` (no collision check; the "
                  "answer's message and the log say so).", choices=COLLISION_POLICIES),
    ParameterSpec("max_ik_timeout", 10.0, "Largest IK timeout [s] a request may ask for; larger ones are refused "
                  "with FAILURE.", 0.0, 3600.0),
    ParameterSpec("executor_threads", 0, "Threads serving requests concurrently (0: max(4, CPUs)). Read at "
                  "start-up.", 0, 256),
)
NODE_SPECS_BY_NAME = {spec.name: spec for spec in NODE_PARAMETERS}

#: Keep every request and answer until delivered: with the default depth of 10, a burst from many clients
#: can overwrite answers that a slow client has not yet acknowledged.
SERVICE_QOS = QoSProfile(history=HistoryPolicy.KEEP_ALL, reliability=ReliabilityPolicy.RELIABLE,
                         durability=DurabilityPolicy.VOLATILE)
DESCRIPTION_QOS = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                             durability=DurabilityPolicy.TRANSIENT_LOCAL)
#: World updates arrive in bursts (a scene set up object by object): keep them all, in order.
SCENE_QOS = QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.VOLATILE)


class SetupError(KinematicsError):
    """A robot description (or SRDF) the node cannot use."""


# ------------------------------------------------------------------------------------------- parameters
def validate_node_parameter(name: str, value: Any) -> Any:
    """A node-level parameter's value, converted; ParameterError says why it is invalid."""
    spec = NODE_SPECS_BY_NAME[name]
    default = spec.default
    if isinstance(default, tuple):
        if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
            raise ParameterError(f"parameter {name!r} must be a list of strings; got {value!r}")
        return tuple(value)
    if isinstance(default, str):
        if not isinstance(value, str):
            raise ParameterError(f"parameter {name!r} must be a string; got {value!r}")
        if spec.choices and value not in spec.choices:
            raise ParameterError(f"parameter {name!r} must be one of {list(spec.choices)}; got {value!r}")
        return value
    return validate_number(spec, value)


def _descriptor(spec: ParameterSpec, read_only: bool = False) -> ParameterDescriptor:
    descriptor = ParameterDescriptor(description=spec.description, read_only=read_only, dynamic_typing=True)
    if spec.choices:
        descriptor.additional_constraints = f"one of {list(spec.choices)}"
    if spec.minimum is not None and not isinstance(spec.default, bool):
        if isinstance(spec.default, int):
            descriptor.integer_range = [IntegerRange(from_value=int(spec.minimum), to_value=int(spec.maximum))]
        else:
            descriptor.floating_point_range = [FloatingPointRange(from_value=float(spec.minimum),
                                                                  to_value=float(spec.maximum))]
    return descriptor


def _ros_value(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


def kinematics_parameter(group: str, name: str) -> str:
    return f"{KINEMATICS_NAMESPACE}.{group}.{name}"


def split_kinematics_parameter(name: str) -> tuple[str, str] | None:
    """(group, key) of ``robot_description_kinematics.<group>.<key>``, else None."""
    prefix = KINEMATICS_NAMESPACE + "."
    if not name.startswith(prefix) or name.count(".") < 2:
        return None
    group, key = name[len(prefix):].rsplit(".", 1)
    return group, key


def parameters_markdown() -> str:
    """The README's parameter tables, generated from NODE_PARAMETERS and parameters.SPECS."""

    def limits(spec: ParameterSpec) -> str:
        if spec.choices:
            return ", ".join(f"`{c}`" for c in spec.choices)
        if spec.minimum is not None and isinstance(spec.default, int):
            return f"[{spec.minimum}, {'2^63 - 1' if spec.maximum == 2**63 - 1 else spec.maximum}]"
        if spec.minimum is not None:
            return f"[{spec.minimum:g}, {spec.maximum:g}]"
        return ""

    def default(spec: ParameterSpec) -> str:
        value = spec.default
        if isinstance(value, bool):
            return f"`{str(value).lower()}`"
        if isinstance(value, (list, tuple)):
            return f"`{list(value)}`"
        return f'`"{value}"`' if isinstance(value, str) else f"`{value:g}`"

    def rows(specs, name_format: str) -> list[str]:
        return [f"| `{name_format.format(spec.name)}` | {default(spec)} | {limits(spec)} | "
                f"{spec.description.replace('|', '/')} |" for spec in specs]

    header = ["| parameter | default | range / choices | description |", "|---|---|---|---|"]
    lines = ["Node parameters:", "", *header, *rows(NODE_PARAMETERS, "{}"), "",
             f"Solver parameters, one set per group: `{KINEMATICS_NAMESPACE}.<group>.<name>` (MoveIt's "
             f"kinematics.yaml; `{'`, `'.join(IGNORED_KINEMATICS_KEYS)}` are accepted and not used):", "",
             *header, *rows(SPECS, "{}")]
    return "\n".join(lines)


# ------------------------------------------------------------------------------------------- robot set-up
@dataclass(frozen=True, eq=False)
class CollisionWorld:
    """The planning scene kept from the collision topics and the robot's collision checker on it; ``checker`` is
    None when the robot's collision geometry cannot be loaded (``problem`` says why)."""

    scene: PlanningScene
    checker: CollisionChecker | None
    problem: str = ""


def build_collision_world(model: RobotModel, semantic: SemanticModel | None) -> CollisionWorld:
    """An empty scene for ``model`` and a checker of its URDF collision geometry (the SRDF's disabled pairs and
    adjacent links left out), or the reason there can be no checker."""
    scene = PlanningScene(model)
    try:
        checker = CollisionChecker(model, semantic, scene)
    except (KinematicsError, ImportError) as error:  # GeometryError, MeshLoadError; coal missing
        return CollisionWorld(scene, None, f"its collision geometry cannot be loaded: {error}")
    if not checker.link_geometry:
        return CollisionWorld(scene, None, "the robot description has no <collision> geometry")
    checker.is_colliding(None)  # load the compiled kernels now rather than in the first request
    return CollisionWorld(scene, checker)


@dataclass(frozen=True)
class RobotSetup:
    """Everything built from one robot description; replaced as a whole on re-initialisation."""

    model: RobotModel
    groups: dict[str, KinematicsPlugin]
    #: group -> why it is not served
    unavailable: dict[str, str]
    #: Frames identical to the model frame: "" and the parent frames of fixed SRDF virtual joints.
    model_frame_aliases: frozenset[str]
    #: Single-DOF joints, as listed in every answered RobotState.
    joint_names: tuple[str, ...]
    #: (URDF, SRDF) texts it was built from
    inputs: tuple[str, str] = ("", "")
    #: (group, link) -> tip the link is rigidly attached to (None: it is not)
    attachments: dict[tuple[str, str], str | None] = field(default_factory=dict)
    semantic: SemanticModel | None = None
    world: CollisionWorld | None = None

    @property
    def model_frame(self) -> str:
        return self.model.root_link


def _chain_ends(semantic: SemanticModel, group_name: str) -> tuple[str, list[str]]:
    """(base, tips) of a group: its chain, or the chains of its subgroups if they share one base."""
    group = semantic.group(group_name)
    if group.is_chain:
        return group.base_link, [group.tip_link]
    if not group.subgroups:
        raise KinematicsError(f"group {group_name!r} is not a serial chain (joints {list(group.joint_names)})")
    ends = [_chain_ends(semantic, subgroup) for subgroup in group.subgroups]
    bases = {base for base, _ in ends}
    if len(bases) != 1:
        raise KinematicsError(f"group {group_name!r} is not a serial chain and its subgroups start at different "
                              f"base links {sorted(bases)}")
    return bases.pop(), [tip for _, tips in ends for tip in tips]


# ------------------------------------------------------------------------------------------- the node
class KinematicsNode(Node):
    """Serves compute_ik, solve_ik and compute_fk for the groups of the robot it is given."""

    def __init__(self, **kwargs):
        super().__init__(NODE_NAME, **kwargs)
        self._callbacks = ReentrantCallbackGroup()
        self._build_lock = threading.RLock()
        self._declaring = False
        self._pending = threading.local()
        self._setup: RobotSetup | None = None
        self._setup_problem = "no robot description yet: set the robot_description parameter or publish it on " \
                              "the robot_description topic"
        self._topic_descriptions = {"robot_description": "", "robot_description_semantic": ""}
        self._current_positions: dict[str, float] = {}
        self._configured_groups: set[str] = set()
        self._source = self.get_fully_qualified_name()

        self._declare_node_parameters()
        self._declare_configured_groups()
        self.add_on_set_parameters_callback(self._on_set_parameters)
        self.add_post_set_parameters_callback(self._after_set_parameters)

        self._frames = create_transform_source(self, self._callbacks)
        self.create_subscription(String, "robot_description",
                                 lambda msg: self._on_description("robot_description", msg.data),
                                 DESCRIPTION_QOS, callback_group=self._callbacks)
        self.create_subscription(String, "robot_description_semantic",
                                 lambda msg: self._on_description("robot_description_semantic", msg.data),
                                 DESCRIPTION_QOS, callback_group=self._callbacks)
        self.create_subscription(JointState, "joint_states", self._on_joint_states, 10,
                                 callback_group=self._callbacks)
        # One update at a time, in the order published.
        scene_updates = MutuallyExclusiveCallbackGroup()
        self.create_subscription(CollisionObject, "collision_object", self._on_collision_object, SCENE_QOS,
                                 callback_group=scene_updates)
        self.create_subscription(AttachedCollisionObject, "attached_collision_object",
                                 self._on_attached_collision_object, SCENE_QOS, callback_group=scene_updates)
        solve_ik_name = self.get_parameter("solve_ik_service_name").value
        for service_type, name, callback in ((GetPositionIK, "compute_ik", self._compute_ik),
                                             (GetPositionIK, solve_ik_name, self._compute_ik),
                                             (GetPositionFK, "compute_fk", self._compute_fk),
                                             (GetStateValidity, "check_state_validity", self._check_state_validity)):
            self.create_service(service_type, name, callback, qos_profile=SERVICE_QOS, callback_group=self._callbacks)
        self.get_logger().info(f"TF lookups through {self._frames.backend}; services: compute_ik, {solve_ik_name} "
                               f"(GetPositionIK), compute_fk (GetPositionFK), check_state_validity "
                               f"(GetStateValidity); world from the collision_object and attached_collision_object "
                               f"topics")
        self._warn_unused_overrides()

        if self._parameter("robot_description"):
            self._rebuild("start-up")
        else:
            self.get_logger().info("robot_description parameter empty: waiting for the robot_description topic")

    # ----------------------------------------------------------------------- parameters
    def _parameter(self, name: str) -> Any:
        value = self.get_parameter(name).value
        if name in NODE_SPECS_BY_NAME:
            return validate_node_parameter(name, value if value is not None else NODE_SPECS_BY_NAME[name].default)
        return value

    @property
    def executor_threads(self) -> int:
        return self._parameter("executor_threads") or max(4, os.cpu_count() or 1)

    def _override(self, name: str) -> Any:
        """The value given for ``name`` on the command line or in a parameter file, or None."""
        # rclpy keeps the overrides of undeclared parameters only in this attribute.
        parameter = self._parameter_overrides.get(name)
        return None if parameter is None else parameter.value

    def _declare_node_parameters(self) -> None:
        for spec in NODE_PARAMETERS:
            value = self._override(spec.name)
            try:
                value = spec.default if value is None else validate_node_parameter(spec.name, value)
            except ParameterError as error:
                raise SetupError(str(error)) from None
            self.declare_parameter(spec.name, _ros_value(value), _descriptor(spec, spec.name in STARTUP_PARAMETERS),
                                   ignore_override=True)

    def _declare_configured_groups(self) -> None:
        groups = {split[0] for name in self._parameter_overrides
                  if (split := split_kinematics_parameter(name)) is not None}
        self._configured_groups = groups
        if groups:
            self.get_logger().info(f"{KINEMATICS_NAMESPACE} parameters given for group(s) {sorted(groups)}")
        else:
            self.get_logger().warning(f"no {KINEMATICS_NAMESPACE}.<group>.* parameters given (is kinematics.yaml "
                                      f"loaded under '{KINEMATICS_NAMESPACE}'?): every group gets default solver "
                                      f"parameters")
        for group in sorted(groups):
            self._declare_group(group)

    def _declare_group(self, group: str) -> None:
        """Declare a group's solver parameters (values from overrides, else defaults); log what is unusable."""
        if self.has_parameter(kinematics_parameter(group, SPECS[0].name)):
            return
        logger = self.get_logger()
        self._declaring = True
        try:
            for spec in SPECS:
                name = kinematics_parameter(group, spec.name)
                value = self._override(name)
                if value is not None:
                    try:
                        value = validate_parameter(spec.name, value)
                    except ParameterError as error:
                        logger.error(f"{name}: {error}; using the default {spec.default!r}")
                        value = None
                value = spec.default if value is None else value
                self.declare_parameter(name, _ros_value(value), _descriptor(spec), ignore_override=True)
            for key in IGNORED_KINEMATICS_KEYS:
                name = kinematics_parameter(group, key)
                if self._override(name) is not None:
                    self.declare_parameter(name, self._override(name), ParameterDescriptor(
                        description="MoveIt plugin-loader key; accepted, not used by kinematics_py",
                        dynamic_typing=True))
        finally:
            self._declaring = False
        unknown = sorted(key for name in self._parameter_overrides
                         if (split := split_kinematics_parameter(name)) and split[0] == group
                         and (key := split[1]) not in SPECS_BY_NAME and key not in IGNORED_KINEMATICS_KEYS)
        if unknown:
            logger.warning(f"group {group!r}: {KINEMATICS_NAMESPACE} keys {unknown} are not used by kinematics_py "
                           f"(ignored); valid keys are {sorted(SPECS_BY_NAME)}")

    def _group_parameters(self, group: str) -> dict[str, Any]:
        return {spec.name: self.get_parameter(kinematics_parameter(group, spec.name)).value for spec in SPECS}

    def _warn_unused_overrides(self) -> None:
        for name in sorted(self._parameter_overrides):
            if self.has_parameter(name) or split_kinematics_parameter(name):
                continue
            last = name.rsplit(".", 1)[-1]
            hint = (f"; solver parameters go under {KINEMATICS_NAMESPACE}.<group>.{last}"
                    if last in SPECS_BY_NAME or last in IGNORED_KINEMATICS_KEYS else "")
            self.get_logger().warning(f"parameter {name!r} is not a parameter of {NODE_NAME}: ignored{hint}")

    def _on_set_parameters(self, parameters: list[Parameter]) -> SetParametersResult:
        changes = {}
        try:
            for parameter in parameters:
                name, value = parameter.name, parameter.value
                if name in NODE_SPECS_BY_NAME:
                    changes[name] = validate_node_parameter(name, value)
                elif (split := split_kinematics_parameter(name)) and split[1] in SPECS_BY_NAME:
                    changes[name] = validate_parameter(split[1], value)
        except ParameterError as error:
            return SetParametersResult(successful=False, reason=str(error))
        rebuilds = any(name in DESCRIPTION_PARAMETERS or split_kinematics_parameter(name) for name in changes)
        if self._declaring or not rebuilds:
            return SetParametersResult(successful=True)
        with self._build_lock:
            try:
                setup = self._build(overrides=changes)
            except SetupError as error:
                return SetParametersResult(successful=False, reason=str(error))
            for name in changes:
                split = split_kinematics_parameter(name)
                if split and split[0] in setup.unavailable:
                    return SetParametersResult(successful=False, reason=setup.unavailable[split[0]])
            self._pending.setup = setup
        return SetParametersResult(successful=True)

    def _after_set_parameters(self, parameters: list[Parameter]) -> None:
        setup = getattr(self._pending, "setup", None)
        if setup is not None:
            self._pending.setup = None
            names = [p.name for p in parameters]
            self._install(setup, f"parameter(s) {names} set")

    # ----------------------------------------------------------------------- descriptions and state
    def _on_description(self, which: str, text: str) -> None:
        if self._topic_descriptions[which] == text:
            return
        self._topic_descriptions[which] = text
        if self._parameter(which):
            self.get_logger().info(f"{which} topic received; the {which} parameter is set and takes precedence")
            return
        self._rebuild(f"new {which} from the topic")

    def _on_joint_states(self, msg: JointState) -> None:
        setup = self._setup
        if setup is None:
            positions = {name: float(p) for name, p in zip(msg.name, msg.position) if math.isfinite(p)}
        else:
            positions = joint_values_from_joint_state(msg, setup.model, strict=False)
        self._current_positions = {**self._current_positions, **positions}

    def _description(self, which: str, overrides: Mapping[str, Any]) -> tuple[str, str]:
        """(text, where it came from) of the URDF or SRDF: parameter first, then topic."""
        text = overrides[which] if which in overrides else self._parameter(which)
        if text:
            return text, "parameter"
        return self._topic_descriptions[which], "topic"

    def _rebuild(self, reason: str) -> None:
        with self._build_lock:
            inputs = tuple(self._description(which, {})[0] for which in ("robot_description",
                                                                         "robot_description_semantic"))
            if self._setup is not None and self._setup.inputs == inputs:
                return  # already built from these texts (both topics arrived during one build)
            try:
                setup = self._build()
            except SetupError as error:
                self._setup_problem = str(error)
                self.get_logger().error(f"{reason}: {error}" + ("; keeping the previous robot" if self._setup else ""))
                return
            self._install(setup, reason)

    def _install(self, setup: RobotSetup, reason: str) -> None:
        with self._build_lock:  # also held by scene updates: none is lost between the old and the new scene
            previous = self._setup
            if previous is not None and previous.world is not setup.world:
                self._carry_over(previous.world.scene, setup.world.scene)
            self._setup = setup
        served = sorted(setup.groups)
        self.get_logger().info(f"{reason}: serving group(s) {served}" if served
                               else f"{reason}: NO group can be served")

    def _carry_over(self, old: PlanningScene, new: PlanningScene) -> None:
        """Keep the world objects (posed in the planning frame) for a new robot description; attached objects
        are dropped (their links may be gone)."""
        kept, dropped = [], sorted(old.attached_objects)
        for object_id, item in old.world_objects.items():
            try:
                new.add_object(object_id, item.shapes, item.T_parent_object, subframes=item.subframes)
                kept.append(object_id)
            except KinematicsError:
                dropped.append(object_id)
        if kept or dropped:
            self.get_logger().info(f"planning scene of the new robot description: world objects {kept} kept, "
                                   f"{dropped} dropped (attached objects are dropped)")

    def _build(self, overrides: Mapping[str, Any] | None = None) -> RobotSetup:
        """A new set-up from the current parameters and topics, with ``overrides`` (not yet set) applied. The
        robot model and collision world of the current set-up are kept when the URDF and SRDF are the same."""
        overrides = overrides or {}
        logger = self.get_logger()
        previous = self._setup
        urdf, urdf_source = self._description("robot_description", overrides)
        if not urdf:
            raise SetupError("robot_description is empty")
        try:
            model = previous.model if previous is not None and previous.inputs[0] == urdf else \
                RobotModel.from_urdf_string(urdf)
        except KinematicsError as error:
            raise SetupError(f"robot_description (from the {urdf_source}) is not a usable URDF: {error}") from None
        srdf, srdf_source = self._description("robot_description_semantic", overrides)
        inputs = (urdf, srdf)
        semantic = None
        if srdf:
            try:
                semantic = SemanticModel.from_srdf_string(srdf, model)
            except KinematicsError as error:
                message = f"robot_description_semantic (from the {srdf_source}) does not fit robot {model.name!r}: " \
                          f"{error}"
                if "robot_description_semantic" in overrides:
                    raise SetupError(message) from None
                logger.error(message + "; continuing without an SRDF")
                srdf = ""
        logger.info(f"robot {model.name!r} (URDF from the {urdf_source}): {len(model.link_names)} links, "
                    f"single-DOF joints {list(model.single_dof_joint_names)}, model frame {model.root_link!r}; "
                    + (f"SRDF from the {srdf_source} with groups {sorted(semantic.groups)}" if semantic
                       else "no SRDF"))

        def node_value(name):
            return validate_node_parameter(name, overrides[name]) if name in overrides else self._parameter(name)

        group_ends: dict[str, tuple[str, list[str]] | str] = {}
        if semantic is not None:
            wanted = self._configured_groups or set(semantic.groups)
            for group in sorted(wanted):
                if group not in semantic.groups:
                    group_ends[group] = (f"{KINEMATICS_NAMESPACE}.{group}.* is configured but the SRDF defines no "
                                         f"group {group!r} (SRDF groups: {sorted(semantic.groups)})")
                    continue
                try:
                    group_ends[group] = _chain_ends(semantic, group)
                except KinematicsError as error:
                    group_ends[group] = str(error)
            not_configured = sorted(set(semantic.groups) - wanted)
            if not_configured:
                logger.info(f"SRDF groups {not_configured} have no {KINEMATICS_NAMESPACE} entry: not served")
        else:
            group = node_value("group_name")
            base = node_value("base_frame")
            tips = list(node_value("tip_frames")) or [t for t in [node_value("tip_frame")] if t]
            group_ends[group] = (base, tips) if base and tips else \
                f"no SRDF, and base_frame/tip_frame are not both set for group {group!r}"

        groups, unavailable = {}, {}
        for group, ends in group_ends.items():
            # A group the user asked for is an error; an SRDF group nobody configured (a gripper) is not.
            report = logger.error if semantic is None or group in self._configured_groups else logger.info
            if isinstance(ends, str):
                unavailable[group] = ends
                report(f"group {group!r} NOT served: {ends}")
                continue
            self._declare_group(group)
            parameters = self._group_parameters(group)
            parameters.update({split[1]: value for name, value in overrides.items()
                               if (split := split_kinematics_parameter(name)) and split[0] == group})
            plugin = KinematicsPlugin()
            if not plugin.initialize(urdf, group, ends[0], ends[1], robot_description_semantic=srdf or None,
                                     parameters=parameters):
                unavailable[group] = plugin.last_error
                report(f"group {group!r} NOT served: {plugin.last_error}")
                continue
            groups[group] = plugin
            logger.info(self._group_summary(group, plugin, parameters))

        aliases = {""} | {joint.parent_frame for joint in (semantic.virtual_joints if semantic else ())
                          if joint.type == "fixed" and joint.child_link == model.root_link}
        if previous is not None and previous.inputs == inputs and previous.model is model:
            world = previous.world
        else:
            world = build_collision_world(model, semantic)
            if world.checker is None:
                logger.warning(f"collision checking unavailable for robot {model.name!r}: {world.problem}; "
                               f"avoid_collisions follows collision_checking_unavailable_policy")
            else:
                logger.info(f"collision checking: {len(world.checker.link_geometry)} links with collision geometry, "
                            f"{len(world.checker.disabled_pairs)} link pairs never checked (adjacent or SRDF)")
        return RobotSetup(model, groups, unavailable, frozenset(aliases), model.single_dof_joint_names, inputs,
                          semantic=semantic, world=world)

    def _group_summary(self, group: str, plugin: KinematicsPlugin, parameters: Mapping[str, Any]) -> str:
        given = {name: parameters[name] for name in sorted(parameters)
                 if self._override(kinematics_parameter(group, name)) is not None
                 or validate_parameter(name, parameters[name]) != validate_parameter(name, SPECS_BY_NAME[name].default)}
        settings = ", ".join(f"{name}={value!r}" for name, value in given.items()) or "none"
        return (f"group {group!r}: base {plugin.getBaseFrame()!r}, tips {plugin.getTipFrames()}, joints "
                f"{plugin.getJointNames()}; {KINEMATICS_NAMESPACE}.{group}: {settings} set, defaults for the rest")

    # ----------------------------------------------------------------------- services
    def _compute_ik(self, request: GetPositionIK.Request, response: GetPositionIK.Response):
        return self._answer(response, self._solve_ik, request.ik_request)

    def _compute_fk(self, request: GetPositionFK.Request, response: GetPositionFK.Response):
        return self._answer(response, self._forward_kinematics, request)

    def _check_state_validity(self, request: GetStateValidity.Request, response: GetStateValidity.Response):
        """GetStateValidity has no error code: a request that cannot be checked (unknown group, bad joint names or
        values, unusable constraints, collision checking unavailable) is logged and answered valid=false with no
        contacts and no constraint results."""
        logger = self.get_logger()
        try:
            reasons = self._state_validity(request, response)
        except RequestError as error:
            logger.warning(f"check_state_validity: cannot check the request ({error.code.name}): {error}; "
                           f"answering valid=false")
            reasons, response.contacts, response.constraint_result = [str(error)], [], []
        except Exception as error:  # never a dead node
            logger.error(f"internal error answering check_state_validity: {error!r}\n{traceback.format_exc()}")
            reasons, response.contacts, response.constraint_result = [repr(error)], [], []
        else:
            if reasons:
                logger.debug(f"check_state_validity: not valid: {'; '.join(reasons)}")
        response.valid = not reasons
        return response

    def _answer(self, response, handler, request):
        """Fill ``response`` by ``handler(request, response)``, which returns the success message or a
        (code, message) pair. Every failure becomes an error code and a message."""
        try:
            message = handler(request, response)
            code = ErrorCode.SUCCESS
            if isinstance(message, tuple):
                code, message = message
        except RequestError as error:
            code, message = error.code, str(error)
        except Exception as error:  # never a traceback to the client, never a dead node
            self.get_logger().error(f"internal error answering {type(request).__name__}: {error!r}\n"
                                    f"{traceback.format_exc()}")
            code, message = ErrorCode.FAILURE, f"internal error in {NODE_NAME}: {error!r}"
        response.error_code = error_code_msg(code, message, self._source)
        return response

    def _require_setup(self) -> RobotSetup:
        setup = self._setup
        if setup is None:
            raise RequestError(ErrorCode.FAILURE, self._setup_problem)
        return setup

    def _state(self, setup: RobotSetup, robot_state=None) -> dict[str, Any]:
        """Every movable joint's value: defaults, then /joint_states, then the request's robot_state."""
        model = setup.model
        current = self._current_positions
        values = {name: current[name] for name in setup.joint_names if name in current}
        if robot_state is not None:
            values.update(joint_values_from_robot_state(robot_state, model))
        try:
            return model.resolve_joint_values(values)
        except KinematicsError as error:
            raise RequestError(ErrorCode.INVALID_ROBOT_STATE, str(error)) from None

    def _frame(self, setup: RobotSetup, frame: str, poses: _LinkPoses) -> np.ndarray:
        """``T_model_frame``: identity for the model frame, robot links from the state, other frames from TF."""
        frame = frame.lstrip("/")
        if frame in setup.model_frame_aliases or frame == setup.model_frame:
            return np.eye(4)
        if frame in setup.model.link_names:
            return poses[frame]
        try:
            return self._frames.lookup(setup.model_frame, frame)
        except FrameLookupError as error:
            raise RequestError(ErrorCode.FRAME_TRANSFORM_FAILURE,
                               f"cannot transform frame {frame!r} into the model frame {setup.model_frame!r}: "
                               f"{error}") from None

    def _solve_ik(self, ik, response: GetPositionIK.Response):
        setup = self._require_setup()
        plugin = setup.groups.get(ik.group_name)
        if plugin is None:
            reason = setup.unavailable.get(ik.group_name)
            detail = f"group {ik.group_name!r} is not served: {reason}" if reason else \
                f"unknown group {ik.group_name!r}"
            raise RequestError(ErrorCode.INVALID_GROUP_NAME, f"{detail}; served groups are {sorted(setup.groups)}")
        values = self._state(setup, ik.robot_state)
        poses = _LinkPoses(setup.model, values)
        targets = self._ik_targets(setup, ik, plugin, poses)
        timeout = self._ik_timeout(ik.timeout)
        constraints = self._constraints(setup, ik.constraints, poses)
        checker, note = self._collision_checker(setup, ik.avoid_collisions, ik.robot_state, values)

        joint_names = plugin.getJointNames()
        seed = [values[name] for name in joint_names]
        for bound in constraints.joint_bounds:
            if bound.joint in joint_names and not bound.continuous:
                index = joint_names.index(bound.joint)
                seed[index] = min(max(seed[index], bound.lower), bound.upper)
        callback = None
        if constraints:
            def callback(_pose, solution):
                state = setup.model.resolve_joint_values({**values, **dict(zip(joint_names, solution))})
                reason = constraints.violation(state, setup.model)
                return Verdict(ErrorCode.SUCCESS) if reason is None else \
                    Verdict(ErrorCode.GOAL_CONSTRAINTS_VIOLATED, reason)

        result = plugin.searchPositionIK(targets, seed, timeout, solution_callback=callback, context_state=values,
                                         avoid_collisions=checker is not None, collision_checker=checker)
        if not result.success:
            return result.error_code, result.message + note
        solved = setup.model.resolve_joint_values({**values, **dict(zip(joint_names, result.solution))})
        response.solution = robot_state_msg(setup.joint_names, solved)
        return result.message + note

    def _ik_targets(self, setup: RobotSetup, ik, plugin: KinematicsPlugin, poses: _LinkPoses) -> list[np.ndarray]:
        """``T_base_tip`` targets in the plugin's tip order, from the request's poses and IK links."""
        if ik.pose_stamped_vector:
            if len(ik.ik_link_names) != len(ik.pose_stamped_vector):
                raise RequestError(ErrorCode.INVALID_LINK_NAME,
                                   f"{len(ik.pose_stamped_vector)} poses in pose_stamped_vector but "
                                   f"{len(ik.ik_link_names)} ik_link_names: give one link per pose")
            pairs = list(zip(ik.pose_stamped_vector, ik.ik_link_names))
        else:
            pairs = [(ik.pose_stamped, ik.ik_link_name)]
        tips = plugin.getTipFrames()
        by_tip: dict[str, np.ndarray] = {}
        for pose_stamped, link in pairs:
            if not link:
                if len(tips) != 1:
                    raise RequestError(ErrorCode.INVALID_LINK_NAME, f"group {plugin.getGroupName()!r} has tips "
                                       f"{tips}: name the IK link of every pose")
                link = tips[0]
            tip = self._attached_tip(setup, plugin, link)
            if tip in by_tip:
                raise RequestError(ErrorCode.INVALID_LINK_NAME, f"two poses target tip {tip!r} (link {link!r})")
            T_model_link = self._frame(setup, pose_stamped.header.frame_id, poses) @ \
                transform_from_pose_msg(pose_stamped.pose, f"pose for link {link!r}")
            by_tip[tip] = T_model_link if link == tip else T_model_link @ invert_transform(poses[link]) @ poses[tip]
        missing = [tip for tip in tips if tip not in by_tip]
        if missing:
            raise RequestError(ErrorCode.INVALID_LINK_NAME, f"no pose for tip(s) {missing} of group "
                               f"{plugin.getGroupName()!r}: give one pose per tip {tips}")
        base = plugin.getBaseFrame()
        T_base_model = np.eye(4) if base == setup.model_frame else invert_transform(poses[base])
        return [T_base_model @ by_tip[tip] for tip in tips]

    def _attached_tip(self, setup: RobotSetup, plugin: KinematicsPlugin, link: str) -> str:
        """The tip ``link`` is the tip of, or rigidly attached to (no group joint between them)."""
        group = plugin.getGroupName()
        key = (group, link)
        if key not in setup.attachments:
            setup.attachments[key] = _rigidly_attached_tip(setup.model, plugin, link)
        tip = setup.attachments[key]
        if tip is None:
            if link not in setup.model.link_names:
                raise RequestError(ErrorCode.INVALID_LINK_NAME, f"unknown IK link {link!r}; group {group!r} solves "
                                   f"for tips {plugin.getTipFrames()} and links rigidly attached to them")
            raise RequestError(ErrorCode.INVALID_LINK_NAME, f"IK link {link!r} is neither a tip of group {group!r} "
                               f"{plugin.getTipFrames()} nor rigidly attached to one")
        return tip

    def _ik_timeout(self, duration) -> float | None:
        seconds = seconds_from_duration(duration)
        cap = self._parameter("max_ik_timeout")
        if seconds < 0:
            raise RequestError(ErrorCode.FAILURE, f"timeout must be >= 0 s; got {seconds:g} s")
        if seconds > cap:
            raise RequestError(ErrorCode.FAILURE, f"timeout {seconds:g} s exceeds max_ik_timeout ({cap:g} s)")
        return None if seconds == 0 else seconds

    def _constraints(self, setup: RobotSetup, msg, poses: _LinkPoses) -> RequestConstraints:
        """A request's constraints; robot-link frames are placed per candidate state, others now (TF)."""
        return constraints_from_msg(msg, setup.model, lambda frame: None if frame in setup.model.link_names
                                    else self._frame(setup, frame, poses))

    def _collision_checker(self, setup: RobotSetup, wanted: bool, robot_state,
                           values: Mapping[str, Any]) -> tuple[CollisionChecker | None, str]:
        """(checker for this request or None, note for the answer's message). Without collision geometry the
        policy decides: COLLISION_CHECKING_UNAVAILABLE, or no check and a note saying so."""
        if not wanted:
            return None, ""
        world = setup.world
        if world.checker is not None:
            return self._request_checker(setup, robot_state, values), ""
        if self._parameter("collision_checking_unavailable_policy") == "error":
            raise RequestError(ErrorCode.COLLISION_CHECKING_UNAVAILABLE,
                               f"collisions cannot be checked for robot {setup.model.name!r}: {world.problem}; send "
                               f"avoid_collisions=false, or set collision_checking_unavailable_policy to "
                               f"ignore_with_warning (MoveIt's srv_kinematics_plugin always sends true)")
        self.get_logger().warning(f"collisions NOT checked ({world.problem}; "
                                  f"collision_checking_unavailable_policy=ignore_with_warning)",
                                  throttle_duration_sec=10.0)
        return None, f" (collisions NOT checked: {world.problem})"

    def _request_checker(self, setup: RobotSetup, robot_state, values: Mapping[str, Any]) -> CollisionChecker:
        """The shared checker, or one for a copy of the scene with the request's attached objects. As in MoveIt,
        a robot_state naming joints with is_diff=false replaces the scene's attached objects by its own; with
        is_diff=true its attached objects are applied over the scene's."""
        world = setup.world
        replaces = not robot_state.is_diff and bool(robot_state.joint_state.name or
                                                    robot_state.multi_dof_joint_state.joint_names)
        if not robot_state.attached_collision_objects and not (replaces and world.scene.attached_objects):
            return world.checker
        scene = world.scene.copy()
        scene.set_robot_state(values)
        if replaces:
            for object_id in list(scene.attached_objects):
                _forget_attached(scene, object_id)
        resolve = self._scene_frames(setup, scene)
        for index, msg in enumerate(robot_state.attached_collision_objects):
            try:
                update = attached_object_update(msg, resolve)
                if update.object.operation == Operation.REMOVE and update.object.id:
                    _forget_attached(scene, update.object.id)  # MoveIt drops it from the state
                else:
                    scene.apply_attached(update)
            except (KinematicsError, ValueError) as error:
                raise RequestError(ErrorCode.INVALID_ROBOT_STATE,
                                   f"robot_state.attached_collision_objects[{index}]: {error}") from None
        return world.checker.for_scene(scene)

    def _state_validity(self, request: GetStateValidity.Request, response: GetStateValidity.Response) -> list[str]:
        """Fill contacts and constraint results; the reasons the state is not valid (none: valid). Collisions are
        limited to the links the group's joints move when a group is named, as in MoveIt."""
        setup = self._require_setup()
        values = self._state(setup, request.robot_state)
        joints = self._group_joints(setup, request.group_name) if request.group_name else setup.joint_names
        constraints = self._constraints(setup, request.constraints, _LinkPoses(setup.model, values))
        checker, _ = self._collision_checker(setup, True, request.robot_state, values)
        reasons = _limit_violations(setup.model, values, joints)
        if reasons:  # no field of the answer can show them
            self.get_logger().info(f"check_state_validity: {'; '.join(reasons)}")
        if checker is not None:
            links = checker.links_moved_by(joints) if request.group_name else None
            bodies = len(checker.link_geometry) + len(checker.scene.world_objects) + len(checker.scene.attached_objects)
            report = checker.check(values, contacts=True, max_contacts=bodies ** 2, links=links)
            stamp = self.get_clock().now().to_msg()
            response.contacts = [contact_msg(contact, setup.model_frame, stamp) for contact in report.contacts]
            if report.in_collision:
                reasons.append(f"in collision: {report.describe()}")
        evaluated = constraints.evaluate(values, setup.model)
        response.constraint_result = [ConstraintEvalResult(result=reason is None, distance=distance)
                                      for reason, distance in evaluated]
        return reasons + [reason for reason, _ in evaluated if reason]

    def _group_joints(self, setup: RobotSetup, group: str) -> tuple[str, ...]:
        """The joints of an SRDF group, or of a served group (no SRDF)."""
        if setup.semantic is not None and group in setup.semantic.groups:
            return setup.semantic.groups[group].joint_names
        if group in setup.groups:
            return tuple(setup.groups[group].getJointNames())
        known = sorted(set(setup.semantic.groups if setup.semantic else ()) | set(setup.groups))
        raise RequestError(ErrorCode.INVALID_GROUP_NAME, f"unknown group {group!r}; groups are {known}")

    # ----------------------------------------------------------------------- the planning scene
    def _on_collision_object(self, msg: CollisionObject) -> None:
        what = f"collision_object {msg.id!r} ({_operation_name(operation_of(msg))})"
        self._update_scene(what, lambda scene, resolve: scene.apply(collision_object_update(msg, resolve)))

    def _on_attached_collision_object(self, msg: AttachedCollisionObject) -> None:
        what = (f"attached_collision_object {msg.object.id!r} on link {msg.link_name!r} "
                f"({_operation_name(operation_of(msg.object))})")
        self._update_scene(what, lambda scene, resolve: scene.apply_attached(attached_object_update(msg, resolve)))

    def _update_scene(self, what: str, apply) -> None:
        """Apply one update to the shared scene, robot links placed by the current state; a malformed one is
        logged with the reason and changes nothing."""
        logger = self.get_logger()
        with self._build_lock:
            setup = self._setup
            if setup is None:
                logger.warning(f"{what} ignored: no robot description yet")
                return
            scene = setup.world.scene
            try:
                scene.set_robot_state(self._state(setup))
                apply(scene, self._scene_frames(setup, scene))
            except (KinematicsError, ValueError) as error:  # SceneError, GeometryError
                logger.error(f"{what} refused, the planning scene is unchanged: {error}")
                return
            except Exception as error:  # never a dead node
                logger.error(f"{what}: internal error, the planning scene is unchanged: {error!r}\n"
                             f"{traceback.format_exc()}")
                return
        logger.info(f"{what} applied; world objects {sorted(scene.world_objects)}, attached objects "
                    f"{sorted(scene.attached_objects)}")

    def _scene_frames(self, setup: RobotSetup, scene: PlanningScene):
        """Resolves an object's frame_id: the model frame (and its aliases), robot links, objects and their
        subframes as the scene knows them; any other frame through TF, as ``T_model_frame``."""
        def resolve(frame_id: str) -> tuple[str, np.ndarray | None]:
            frame = frame_id.lstrip("/")
            if not frame:
                return "", None
            if frame in setup.model_frame_aliases or frame == setup.model_frame:
                return setup.model_frame, None
            try:
                scene.frame_transform(frame)
                return frame, None
            except SceneError:
                pass
            try:
                return setup.model_frame, self._frames.lookup(setup.model_frame, frame)
            except FrameLookupError as error:
                raise SceneError(f"unknown frame {frame!r}: not the model frame {setup.model_frame!r}, a robot link, "
                                 f"an object or subframe (objects: {sorted(scene.world_objects)}), nor known to TF "
                                 f"({error})") from None
        return resolve

    def _forward_kinematics(self, request: GetPositionFK.Request, response: GetPositionFK.Response):
        setup = self._require_setup()
        if not request.fk_link_names:
            raise RequestError(ErrorCode.INVALID_LINK_NAME, "fk_link_names is empty")
        values = self._state(setup, request.robot_state)
        poses = _LinkPoses(setup.model, values)
        frame = request.header.frame_id
        T_frame_model = invert_transform(self._frame(setup, frame, poses))
        header_frame = frame or setup.model_frame
        stamp = self.get_clock().now().to_msg()
        known = [link for link in request.fk_link_names if link in setup.model.link_names]
        for link in known:
            pose = PoseStamped(pose=pose_msg_from_transform(T_frame_model @ poses[link]))
            pose.header.frame_id = header_frame
            pose.header.stamp = stamp
            response.pose_stamped.append(pose)
        response.fk_link_names = known
        unknown = [link for link in request.fk_link_names if link not in setup.model.link_names]
        if unknown:
            return ErrorCode.INVALID_LINK_NAME, (f"unknown link(s) {unknown} skipped; answered {known}; the robot's "
                                                 f"links are {list(setup.model.link_names)[:60]}")
        return f"{len(known)} link pose(s) in frame {header_frame!r}"


class _LinkPoses:
    """``T_model_link`` of every link for one state, computed on first use."""

    def __init__(self, model: RobotModel, values: Mapping[str, Any]):
        self._model, self._values, self._poses = model, values, None

    def __getitem__(self, link: str) -> np.ndarray:
        if self._poses is None:
            self._poses = self._model.link_poses(self._values)
        return self._poses[link]


def _forget_attached(scene: PlanningScene, object_id: str) -> None:
    """Remove an attached object from a (request-scoped) scene altogether."""
    scene.detach_object(object_id)
    scene.remove_object(object_id)


def _operation_name(operation: int) -> str:
    try:
        return Operation(operation).name
    except ValueError:
        return f"operation {operation}"


def _limit_violations(model: RobotModel, values: Mapping[str, Any], joints) -> list[str]:
    """'joint = value outside [lower, upper]' for every single-DOF joint of ``joints`` outside its limits."""
    violations = []
    for name in joints:
        joint = model.joints[name]
        value = values.get(name)
        if isinstance(value, float) and not joint.lower - LIMIT_SLACK <= value <= joint.upper + LIMIT_SLACK:
            violations.append(f"joint {name!r} = {value:.6g} outside its limits [{joint.lower:.6g}, {joint.upper:.6g}]")
    return violations


def _rigidly_attached_tip(model: RobotModel, plugin: KinematicsPlugin, link: str) -> str | None:
    """The tip that no joint of the group moves relative to ``link`` (joints outside the group hold still)."""
    if link in plugin.getTipFrames():
        return link
    if link not in model.link_names:
        return None
    group_joints = set(plugin.getJointNames())

    def moves_with_group(joint) -> bool:
        return joint.is_movable and (joint.name in group_joints or
                                     (joint.mimic is not None and joint.mimic.joint in group_joints))

    ancestors = _ancestors(model, link)
    for tip in plugin.getTipFrames():
        tip_ancestors = _ancestors(model, tip)
        common = next(a for a in ancestors if a in tip_ancestors)
        path = model.joint_path(common, link) + model.joint_path(common, tip)
        if not any(moves_with_group(joint) for joint in path):
            return tip
    return None


def _ancestors(model: RobotModel, link: str) -> list[str]:
    chain = [link]
    while (joint := model.parent_joint(chain[-1])) is not None:
        chain.append(joint.parent)
    return chain


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
