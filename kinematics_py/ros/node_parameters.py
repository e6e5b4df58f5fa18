"""The node's ROS parameters, declared from the specs of ``kinematics_py.parameters``: the node's own, and one
set of solver parameters per group under ``robot_description_kinematics.<group>.<name>`` (MoveIt's
kinematics.yaml convention).

``NodeParameters`` declares them (values from the command line / parameter files, checked), validates changes
without side effects, and reads them as the pure inputs of a robot set-up (``SetupInputs``) and of the
requests (``ServiceSettings``), with changes that are not yet set applied over the current values.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from types import MappingProxyType
from typing import Any

from rcl_interfaces.msg import FloatingPointRange, IntegerRange, ParameterDescriptor
from rclpy.node import Node
from rclpy.parameter import Parameter

from ..model.urdf import DescriptionLimits
from ..parameters import (
    KINEMATICS_NAMESPACE,
    MOVEIT_LOADER_KEYS,
    NODE_PARAMETERS,
    NODE_SPECS_BY_NAME,
    SERVO_NAMESPACE,
    SERVO_PARAMETERS,
    SPECS,
    SPECS_BY_NAME,
    ParameterError,
    ParameterSpec,
    validate_node_parameter,
    validate_parameter,
)
from ..robot_setup import SetupError, SetupInputs
from .serving_state import ServiceSettings

NODE_NAME = "kinematics_node"
#: kinematics.yaml keys for MoveIt's plugin loader and srv_kinematics_plugin: accepted, not used here.
IGNORED_KINEMATICS_KEYS = MOVEIT_LOADER_KEYS
#: Parameters read once at start-up (read-only afterwards).
STARTUP_PARAMETERS = ("solve_ik_service_name", "executor_threads", "search_threads", "max_concurrent_ik_requests",
                      "planning_processes", "planning_scene_topic", "monitored_planning_scene_topic", "viewer_port",
                      "viewer_host", "simulate_controllers")
#: Node parameters a robot set-up is built from (with the solver parameters).
DESCRIPTION_PARAMETERS = ("robot_description", "robot_description_semantic", "group_name", "base_frame",
                          "tip_frame", "tip_frames", "max_description_bytes", "max_links", "max_joints",
                          "max_mesh_triangles")
#: Node parameters requests read (ServiceSettings).
SETTINGS_PARAMETERS = ("max_ik_timeout", "collision_checking_unavailable_policy", "max_mesh_triangles", "max_fk_links")
DESCRIPTIONS = ("robot_description", "robot_description_semantic")
#: The node parameters of ``DescriptionLimits``, in its fields' order.
LIMIT_PARAMETERS = ("max_description_bytes", "max_links", "max_joints", "max_mesh_triangles")


def kinematics_parameter(group: str, name: str) -> str:
    return f"{KINEMATICS_NAMESPACE}.{group}.{name}"


def split_kinematics_parameter(name: str) -> tuple[str, str] | None:
    """(group, key) of ``robot_description_kinematics.<group>.<key>``, else None."""
    prefix = KINEMATICS_NAMESPACE + "."
    if not name.startswith(prefix) or name.count(".") < 2:
        return None
    group, key = name[len(prefix):].rsplit(".", 1)
    return group, key


def is_setup_input(name: str) -> bool:
    """True for the parameters a robot set-up is built from."""
    return name in DESCRIPTION_PARAMETERS or split_kinematics_parameter(name) is not None


def descriptor(spec: ParameterSpec, read_only: bool = False) -> ParameterDescriptor:
    result = ParameterDescriptor(description=spec.description, read_only=read_only, dynamic_typing=True)
    if spec.choices:
        result.additional_constraints = f"one of {list(spec.choices)}"
    if spec.minimum is not None and not isinstance(spec.default, bool):
        if isinstance(spec.default, int):
            result.integer_range = [IntegerRange(from_value=int(spec.minimum), to_value=int(spec.maximum))]
        else:
            result.floating_point_range = [FloatingPointRange(from_value=float(spec.minimum),
                                                              to_value=float(spec.maximum))]
    return result


def _ros_value(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


class NodeParameters:
    """Declares and reads ``node``'s parameters. Groups with solver settings on the command line or in a
    parameter file are the configured groups (fixed at start-up); other groups get their parameters declared
    (defaults) once they are served."""

    def __init__(self, node: Node):
        self._node = node
        self._logger = node.get_logger()
        # rclpy keeps the overrides of undeclared parameters only in this attribute.
        self._overrides: Mapping[str, Parameter] = dict(node._parameter_overrides)
        for spec in NODE_PARAMETERS:
            value = self.override(spec.name)
            try:
                value = spec.default if value is None else validate_node_parameter(spec.name, value)
            except ParameterError as error:
                raise SetupError(str(error)) from None
            node.declare_parameter(spec.name, _ros_value(value), descriptor(spec, spec.name in STARTUP_PARAMETERS),
                                   ignore_override=True)
        self.configured_groups = frozenset(split[0] for name in self._overrides
                                           if (split := split_kinematics_parameter(name)) is not None)
        #: Groups whose solver parameters are declared (replaced as a whole).
        self._declared_groups: frozenset[str] = frozenset()
        if self.configured_groups:
            self._logger.info(f"{KINEMATICS_NAMESPACE} parameters given for group(s) {sorted(self.configured_groups)}")
        else:
            self._logger.warning(f"no {KINEMATICS_NAMESPACE}.<group>.* parameters given (is kinematics.yaml loaded "
                                 f"under '{KINEMATICS_NAMESPACE}'?): every group gets default solver parameters")
        self.declare_groups(self.configured_groups)

    def override(self, name: str) -> Any:
        """The value given for ``name`` on the command line or in a parameter file, or None."""
        parameter = self._overrides.get(name)
        return None if parameter is None else parameter.value

    def overrides(self, wanted: Callable[[str], bool]) -> dict[str, Any]:
        """name -> value of the parameters given on the command line or in a parameter file whose names are
        ``wanted``."""
        return {name: parameter.value for name, parameter in self._overrides.items() if wanted(name)}

    def value(self, name: str, changes: Mapping[str, Any] | None = None) -> Any:
        """A node parameter's value (checked), or its value in ``changes``."""
        if changes and name in changes:
            return validate_node_parameter(name, changes[name])
        value = self._node.get_parameter(name).value
        return validate_node_parameter(name, value if value is not None else NODE_SPECS_BY_NAME[name].default)

    # ------------------------------------------------------------------ declaring
    def declare_groups(self, groups: Iterable[str]) -> None:
        """Declare the solver parameters of each group not declared yet (values from overrides, else defaults;
        unusable overrides and unknown keys are logged)."""
        for group in sorted(set(groups) - self._declared_groups):
            self._declare_group(group)
            self._declared_groups = self._declared_groups | {group}

    def _declare_group(self, group: str) -> None:
        for spec in SPECS:
            name = kinematics_parameter(group, spec.name)
            value = self.override(name)
            if value is not None:
                try:
                    value = validate_parameter(spec.name, value)
                except ParameterError as error:
                    self._logger.error(f"{name}: {error}; using the default {spec.default!r}")
                    value = None
            value = spec.default if value is None else value
            self._node.declare_parameter(name, _ros_value(value), descriptor(spec), ignore_override=True)
        for key in IGNORED_KINEMATICS_KEYS:
            name = kinematics_parameter(group, key)
            if self.override(name) is not None:
                self._node.declare_parameter(name, self.override(name), ParameterDescriptor(
                    description="MoveIt plugin-loader key; accepted, not used by kinematics_py", dynamic_typing=True))
        unknown = sorted(key for name in self._overrides
                         if (split := split_kinematics_parameter(name)) and split[0] == group
                         and (key := split[1]) not in SPECS_BY_NAME and key not in IGNORED_KINEMATICS_KEYS)
        if unknown:
            self._logger.warning(f"group {group!r}: {KINEMATICS_NAMESPACE} keys {unknown} are not used by "
                                 f"kinematics_py (ignored); valid keys are {sorted(SPECS_BY_NAME)}")

    def warn_unused_overrides(self) -> None:
        for name in sorted(self._overrides):
            if self._node.has_parameter(name) or split_kinematics_parameter(name):
                continue
            last = name.rsplit(".", 1)[-1]
            hint = (f"; solver parameters go under {KINEMATICS_NAMESPACE}.<group>.{last}"
                    if last in SPECS_BY_NAME or last in IGNORED_KINEMATICS_KEYS else "")
            self._logger.warning(f"parameter {name!r} is not a parameter of {NODE_NAME}: ignored{hint}")

    # ------------------------------------------------------------------ reading
    @staticmethod
    def validate(parameters: Iterable[Parameter]) -> dict[str, Any]:
        """name -> checked value of the node and solver parameters among ``parameters``; ParameterError."""
        changes = {}
        for parameter in parameters:
            name, value = parameter.name, parameter.value
            if name in NODE_SPECS_BY_NAME:
                changes[name] = validate_node_parameter(name, value)
            elif (split := split_kinematics_parameter(name)) and split[1] in SPECS_BY_NAME:
                changes[name] = validate_parameter(split[1], value)
        return changes

    def settings(self, changes: Mapping[str, Any] | None = None) -> ServiceSettings:
        return ServiceSettings(**{name: self.value(name, changes) for name in SETTINGS_PARAMETERS})

    def setup_inputs(self, topic_descriptions: Mapping[str, str], changes: Mapping[str, Any] | None = None,
                     sources: Mapping[str, str] | None = None) -> SetupInputs:
        """The inputs of the robot set-up the parameters (with ``changes`` applied) and the description topics
        give: each description from its parameter, or from its topic while the parameter is empty (``sources``:
        where each of ``topic_descriptions`` came from, if not its topic)."""
        changes, sources = changes or {}, sources or {}
        (urdf, urdf_source), (srdf, srdf_source) = (
            (text, "parameter") if (text := self.value(which, changes))
            else (topic_descriptions[which], sources.get(which, "topic")) for which in DESCRIPTIONS)
        groups = MappingProxyType({group: MappingProxyType(given) for group in self._declared_groups
                                   if (given := self._given(group, changes))})
        return SetupInputs(urdf, srdf, urdf_source, srdf_source, self.value("group_name", changes),
                           self.value("base_frame", changes),
                           self.value("tip_frames", changes) or tuple(t for t in [self.value("tip_frame", changes)]
                                                                       if t),
                           self.configured_groups, groups,
                           DescriptionLimits(*(self.value(name, changes) for name in LIMIT_PARAMETERS)),
                           srdf_required="robot_description_semantic" in changes)

    def _given(self, group: str, changes: Mapping[str, Any]) -> dict[str, Any]:
        """The solver parameters of ``group`` given at start-up or set to other than their defaults (checked
        values: lists as tuples)."""
        given = {}
        for spec in SPECS:
            name = kinematics_parameter(group, spec.name)
            value = validate_parameter(spec.name, changes[name] if name in changes else
                                       self._node.get_parameter(name).value)
            if self.override(name) is not None or value != validate_parameter(spec.name, spec.default):
                given[spec.name] = value
        return given


def parameters_markdown() -> str:
    """The README's parameter tables, generated from parameters.NODE_PARAMETERS, SPECS and SERVO_PARAMETERS."""

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
        if isinstance(value, int):
            return f"`{value}`"
        return f'`"{value}"`' if isinstance(value, str) else f"`{value:g}`"

    def rows(specs, name_format: str) -> list[str]:
        return [f"| `{name_format.format(spec.name)}` | {default(spec)} | {limits(spec)} | "
                f"{spec.description.replace('|', '/')} |" for spec in specs]

    header = ["| parameter | default | range / choices | description |", "|---|---|---|---|"]
    lines = ["Node parameters:", "", *header, *rows(NODE_PARAMETERS, "{}"), "",
             f"Solver parameters, one set per group: `{KINEMATICS_NAMESPACE}.<group>.<name>` (MoveIt's "
             f"kinematics.yaml; `{'`, `'.join(IGNORED_KINEMATICS_KEYS)}` are accepted and not used):", "",
             *header, *rows(SPECS, "{}"), "",
             f"Servo parameters, moveit_servo's: `{SERVO_NAMESPACE}.<name>` (servoing runs when "
             f"`{SERVO_NAMESPACE}.move_group_name` is given):", "",
             *header, *rows(SERVO_PARAMETERS, "{}")]
    return "\n".join(lines)
