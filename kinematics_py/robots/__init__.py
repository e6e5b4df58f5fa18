"""Robot descriptions bundled with kinematics_py, written from published kinematic parameters."""
from __future__ import annotations

from pathlib import Path

from ..errors import UnknownNameError

ROBOTS_DIRECTORY = Path(__file__).resolve().parent
BUNDLED_ROBOTS = ("ur5", "panda")


class UnknownRobotError(UnknownNameError):
    kind = "bundled robot"


def bundled_robot_path(robot: str, extension: str = "urdf") -> Path:
    """Path of a bundled robot's ``.urdf`` or ``.srdf``; UnknownRobotError names the bundled robots."""
    if robot not in BUNDLED_ROBOTS:
        raise UnknownRobotError(robot, BUNDLED_ROBOTS)
    return ROBOTS_DIRECTORY / f"{robot}.{extension}"
