"""MoveIt's joint_limits.yaml and Pilz's pilz_cartesian_limits.yaml as the node's parameters:
``robot_description_planning.joint_limits.<joint>.<key>`` and ``robot_description_planning.cartesian_limits.<key>``,
declared when given to the node and read by every service that times a trajectory."""
from __future__ import annotations

from rcl_interfaces.msg import ParameterDescriptor
from rclpy.node import Node

#: MoveIt's joint_limits.yaml namespace: ``robot_description_planning.joint_limits.<joint>.<key>``.
JOINT_LIMITS_NAMESPACE = "robot_description_planning.joint_limits"
JOINT_LIMIT_KEYS = ("has_velocity_limits", "max_velocity", "has_acceleration_limits", "max_acceleration")
#: Pilz's pilz_cartesian_limits.yaml namespace: ``robot_description_planning.cartesian_limits.<key>``.
CARTESIAN_LIMITS_NAMESPACE = "robot_description_planning.cartesian_limits"


def declare_joint_limit_parameters(node: Node) -> None:
    """Declare the joint_limits.yaml and pilz_cartesian_limits.yaml entries given to ``node`` (rclpy keeps
    undeclared overrides only in ``_parameter_overrides``)."""
    for name, parameter in node._parameter_overrides.items():
        if name.startswith((JOINT_LIMITS_NAMESPACE + ".", CARTESIAN_LIMITS_NAMESPACE + ".")) \
                and not node.has_parameter(name):
            node.declare_parameter(name, parameter.value, ParameterDescriptor(
                description="MoveIt joint_limits.yaml or Pilz pilz_cartesian_limits.yaml entry, used to time "
                            "trajectories", dynamic_typing=True))


def joint_limit_overrides(node: Node) -> dict[str, dict[str, object]]:
    """joint -> {key: value} of the ``robot_description_planning.joint_limits`` parameters."""
    overrides: dict[str, dict[str, object]] = {}
    for name, parameter in node.get_parameters_by_prefix(JOINT_LIMITS_NAMESPACE).items():
        joint, _, key = name.rpartition(".")
        if joint and key in JOINT_LIMIT_KEYS:
            overrides.setdefault(joint, {})[key] = parameter.value
    return overrides


def cartesian_limit_values(node: Node) -> dict[str, object]:
    """key -> value of the ``robot_description_planning.cartesian_limits`` parameters ({} when none is given)."""
    return {name: parameter.value
            for name, parameter in node.get_parameters_by_prefix(CARTESIAN_LIMITS_NAMESPACE).items()}
