"""What servoing takes and answers: moveit_servo's command kinds and status codes, as plain values.

Frames are resolved before a command gets here (the node does it with TF and the model): twists and poses are in
the servoed group's base frame, with the pose of the frame the twist was given in (``T_base_frame``).
"""
from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum

import numpy as np


class StatusCode(IntEnum):
    """moveit_servo's StatusCode (moveit_msgs/msg/ServoStatus.code)."""

    INVALID = -1
    NO_WARNING = 0
    DECELERATE_FOR_APPROACHING_SINGULARITY = 1
    HALT_FOR_SINGULARITY = 2
    DECELERATE_FOR_LEAVING_SINGULARITY = 3
    DECELERATE_FOR_COLLISION = 4
    HALT_FOR_COLLISION = 5
    JOINT_BOUND = 6


#: moveit_servo's words for each status (ServoStatus.message).
STATUS_MESSAGES = {
    StatusCode.INVALID: "Invalid",
    StatusCode.NO_WARNING: "No warnings",
    StatusCode.DECELERATE_FOR_APPROACHING_SINGULARITY: "Moving closer to a singularity, decelerating",
    StatusCode.HALT_FOR_SINGULARITY: "Very close to a singularity, emergency stop",
    StatusCode.DECELERATE_FOR_LEAVING_SINGULARITY: "Moving away from a singularity, decelerating",
    StatusCode.DECELERATE_FOR_COLLISION: "Close to a collision, decelerating",
    StatusCode.HALT_FOR_COLLISION: "Collision detected, emergency stop",
    StatusCode.JOINT_BOUND: "Close to a joint bound (position or velocity), halting",
}


class CommandType(IntEnum):
    """moveit_servo's CommandType (moveit_msgs/srv/ServoCommandType.Request.command_type)."""

    JOINT_JOG = 0
    TWIST = 1
    POSE = 2


@dataclass(frozen=True)
class TwistCommand:
    """``velocities`` (6,): linear (x, y, z) then angular, in the axes of ``T_base_frame`` (4, 4), the frame the
    command was given in (default: the base frame)."""

    velocities: np.ndarray
    T_base_frame: np.ndarray | None = None


@dataclass(frozen=True)
class JointJogCommand:
    """Velocities of the named joints (others stay still)."""

    names: tuple[str, ...]
    velocities: tuple[float, ...]


@dataclass(frozen=True)
class PoseCommand:
    """``T_base_target`` (4, 4): the pose the tip is to reach."""

    T_base_target: np.ndarray


@dataclass(frozen=True)
class ServoStep:
    """One period's output: joint ``positions`` and ``velocities`` (group order), its ``status`` and, when a
    command was refused or dropped, why (``message``)."""

    positions: np.ndarray
    velocities: np.ndarray
    status: StatusCode
    message: str = ""
