"""Servoing as moveit_servo does it, without ROS: ``ServoCore`` (the loop body), ``ServoSettings`` (its
parameters), the commands and status codes, and the safety rules. The node's servo loop (ros/) drives it."""
from .commands import (
    STATUS_MESSAGES,
    CommandType,
    JointJogCommand,
    PoseCommand,
    ServoStep,
    StatusCode,
    TwistCommand,
)
from .core import ServoCore, ServoError
from .safety import ProximityProbe
from .settings import ServoSettings

__all__ = ["STATUS_MESSAGES", "CommandType", "JointJogCommand", "PoseCommand", "ProximityProbe", "ServoCore",
           "ServoError", "ServoSettings", "ServoStep", "StatusCode", "TwistCommand"]
