"""The controllers a MoveIt configuration names, read from the parameters its ``moveit_controllers.yaml`` gives
move_group (MoveIt's names, unchanged):

- ``moveit_simple_controller_manager.controller_names``: the controllers, in order; for each one
  ``moveit_simple_controller_manager.<name>.type`` (``FollowJointTrajectory``; ``GripperCommand`` controllers are
  read and never sent a trajectory), ``.action_ns``, ``.default`` and ``.joints``;
- ``trajectory_execution.allowed_execution_duration_scaling``, ``.allowed_goal_duration_margin``,
  ``.allowed_start_tolerance`` and ``.execution_duration_monitoring`` (MoveIt's defaults when absent);
- ``initial_positions.<joint>`` (a config package's ``initial_positions.yaml``, which mock controllers start from).

A nested mapping (the YAML file as loaded) is flattened into these dotted names by ``flatten``.
"""
from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..errors import KinematicsError

MANAGER_NAMESPACE = "moveit_simple_controller_manager"
EXECUTION_NAMESPACE = "trajectory_execution"
INITIAL_POSITIONS_NAMESPACE = "initial_positions"
FOLLOW_JOINT_TRAJECTORY = "FollowJointTrajectory"
GRIPPER_COMMAND = "GripperCommand"
CONTROLLER_TYPES = (FOLLOW_JOINT_TRAJECTORY, GRIPPER_COMMAND)
#: The one controller a node simulating controllers serves when the configuration lists none: every joint.
WHOLE_ROBOT_CONTROLLER = "joint_trajectory_controller"
WHOLE_ROBOT_ACTION_NS = "follow_joint_trajectory"
#: Parameters outside these namespaces that a moveit_controllers.yaml also holds (the plugin loader's).
LOADER_KEYS = ("moveit_controller_manager",)


class ControllerConfigError(KinematicsError):
    """A controller configuration that cannot be used; the message names the parameter and why."""


@dataclass(frozen=True)
class ExecutionSettings:
    """``trajectory_execution.*``, with MoveIt's defaults.

    Notes:
        An execution may take ``expected duration x allowed_execution_duration_scaling +
        allowed_goal_duration_margin`` [s] before it is TIMED_OUT (when ``execution_duration_monitoring``); its
        first point must be within ``allowed_start_tolerance`` [rad or m] of the current state (0: not checked).
    """

    allowed_execution_duration_scaling: float = 1.1
    allowed_goal_duration_margin: float = 0.5
    allowed_start_tolerance: float = 0.01
    execution_duration_monitoring: bool = True

    def allowed_duration(self, expected: float) -> float:
        """How long [s] an execution expected to take ``expected`` [s] may run (inf without monitoring)."""
        if not self.execution_duration_monitoring:
            return math.inf
        return expected * self.allowed_execution_duration_scaling + self.allowed_goal_duration_margin


@dataclass(frozen=True)
class ControllerSpec:
    """One controller of ``moveit_simple_controller_manager``: its action is ``<name>/<action_ns>``."""

    name: str
    type: str
    action_ns: str
    default: bool
    joints: tuple[str, ...]

    @property
    def action_name(self) -> str:
        return f"{self.name}/{self.action_ns}" if self.action_ns else self.name

    @property
    def follows_trajectories(self) -> bool:
        return self.type == FOLLOW_JOINT_TRAJECTORY


@dataclass(frozen=True)
class ControllerConfig:
    """The controllers (in ``controller_names`` order), the execution settings and the initial positions."""

    controllers: tuple[ControllerSpec, ...] = ()
    settings: ExecutionSettings = ExecutionSettings()
    #: joint -> its initial position [rad or m] (``initial_positions.<joint>``)
    initial_positions: Mapping[str, float] = field(default_factory=dict)

    def by_name(self, name: str) -> ControllerSpec:
        for controller in self.controllers:
            if controller.name == name:
                return controller
        raise ControllerConfigError(f"no controller {name!r}; the configured ones are "
                                    f"{[c.name for c in self.controllers]}")

    def effective(self, robot_joints: tuple[str, ...]) -> tuple[ControllerSpec, ...]:
        """The configured controllers, or without any, one default controller of every joint in ``robot_joints``
        (``WHOLE_ROBOT_CONTROLLER``: what the node simulates then)."""
        return self.controllers or (ControllerSpec(WHOLE_ROBOT_CONTROLLER, FOLLOW_JOINT_TRAJECTORY,
                                                   WHOLE_ROBOT_ACTION_NS, True, robot_joints),)

    @classmethod
    def from_parameters(cls, parameters: Mapping[str, Any]) -> ControllerConfig:
        """The configuration the dotted parameters give (as move_group's parameters; see ``flatten``)."""
        names = parameters.get(f"{MANAGER_NAMESPACE}.controller_names", [])
        if isinstance(names, str) or not all(isinstance(name, str) and name for name in names):
            raise ControllerConfigError(f"{MANAGER_NAMESPACE}.controller_names must be a list of controller names; "
                                        f"got {names!r}")
        if len(set(names)) != len(names):
            raise ControllerConfigError(f"{MANAGER_NAMESPACE}.controller_names names a controller twice: {names}")
        controllers = tuple(_controller(parameters, name) for name in names)
        settings = ExecutionSettings(**{
            key: _setting(parameters, key, default) for key, default in vars(ExecutionSettings()).items()})
        return cls(controllers, settings, _initial_positions(parameters))


def _controller(parameters: Mapping[str, Any], name: str) -> ControllerSpec:
    prefix = f"{MANAGER_NAMESPACE}.{name}."
    kind = parameters.get(prefix + "type")
    if kind not in CONTROLLER_TYPES:
        raise ControllerConfigError(f"{prefix}type must be one of {list(CONTROLLER_TYPES)}; got {kind!r}")
    action_ns = parameters.get(prefix + "action_ns")
    if not isinstance(action_ns, str):
        raise ControllerConfigError(f"{prefix}action_ns must be given (a string: the controller's action is "
                                    f"<controller>/<action_ns>); got {action_ns!r}")
    default = parameters.get(prefix + "default", False)
    if not isinstance(default, bool):
        raise ControllerConfigError(f"{prefix}default must be true or false; got {default!r}")
    joints = parameters.get(prefix + "joints")
    if isinstance(joints, str) or not joints or not all(isinstance(joint, str) and joint for joint in joints):
        raise ControllerConfigError(f"{prefix}joints must be a non-empty list of joint names; got {joints!r}")
    if len(set(joints)) != len(joints):
        raise ControllerConfigError(f"{prefix}joints names a joint twice: {list(joints)}")
    return ControllerSpec(name, kind, action_ns.strip("/"), default, tuple(joints))


def _setting(parameters: Mapping[str, Any], key: str, default: Any) -> Any:
    name = f"{EXECUTION_NAMESPACE}.{key}"
    value = parameters.get(name, default)
    if isinstance(default, bool):
        if not isinstance(value, bool):
            raise ControllerConfigError(f"{name} must be true or false; got {value!r}")
        return value
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
        raise ControllerConfigError(f"{name} must be a finite number >= 0; got {value!r}")
    return float(value)


def _initial_positions(parameters: Mapping[str, Any]) -> dict[str, float]:
    prefix = f"{INITIAL_POSITIONS_NAMESPACE}."
    positions = {}
    for name, value in parameters.items():
        if not name.startswith(prefix):
            continue
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise ControllerConfigError(f"{name} must be a finite number; got {value!r}")
        positions[name[len(prefix):]] = float(value)
    return positions


def is_execution_parameter(name: str) -> bool:
    """Whether ``name`` is one of the parameters ``ControllerConfig.from_parameters`` reads."""
    return name in LOADER_KEYS or name.split(".", 1)[0] in (MANAGER_NAMESPACE, EXECUTION_NAMESPACE,
                                                            INITIAL_POSITIONS_NAMESPACE)


def flatten(nested: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """A nested mapping (a YAML file as loaded) as dotted parameter names, as ROS reads a parameter file."""
    flat = {}
    for key, value in nested.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            flat.update(flatten(value, name + "."))
        else:
            flat[name] = value
    return flat
