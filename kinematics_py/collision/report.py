"""What a collision check reports: the colliding body pairs and their contacts."""
from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum

import numpy as np


class BodyType(IntEnum):
    """moveit_msgs/ContactInformation body types."""

    ROBOT_LINK = 0
    WORLD_OBJECT = 1
    ROBOT_ATTACHED = 2


@dataclass(frozen=True, eq=False)
class Contact:
    """One contact: ``normal`` (unit) points from body_1 into body_2; ``depth`` [m] is the penetration.
    ``position`` and ``normal`` are in the planning frame."""

    body_1: str
    type_1: BodyType
    body_2: str
    type_2: BodyType
    position: np.ndarray
    normal: np.ndarray
    depth: float


@dataclass(frozen=True)
class CollisionReport:
    """Outcome of one check: the colliding body pairs, and their contacts when they were asked for."""

    in_collision: bool
    pairs: tuple[tuple[str, str], ...] = ()
    contacts: tuple[Contact, ...] = ()

    def describe(self) -> str:
        return ", ".join(f"{a} - {b}" for a, b in self.pairs) if self.pairs else "no collision"
