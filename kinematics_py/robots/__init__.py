"""Robot descriptions bundled with kinematics_py, written from published kinematic parameters."""
from __future__ import annotations

from pathlib import Path

ROBOTS_DIRECTORY = Path(__file__).resolve().parent
BUNDLED_ROBOTS = ("ur5", "panda")


def bundled_robot_path(robot: str, extension: str = "urdf") -> Path:
    """Path of a bundled robot's ``.urdf`` or ``.srdf``; ValueError names the bundled robots."""
    if robot not in BUNDLED_ROBOTS:
        raise ValueError(f"unknown bundled robot {robot!r}; bundled robots are {list(BUNDLED_ROBOTS)}")
    return ROBOTS_DIRECTORY / f"{robot}.{extension}"
