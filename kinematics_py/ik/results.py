"""What an IK call returns: IKResult, and the diagnostics of a collision-aware search."""
from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from ..errors import ErrorCode
from .search import SearchOutcome


class IKResult(NamedTuple):
    """Outcome of an IK call. ``solution`` is a list in joint order, or None on failure."""

    success: bool
    solution: list[float] | None
    error_code: ErrorCode
    message: str = ""
    approximate: bool = False
    #: Every distinct valid solution found (several with a discretization method).
    solutions: tuple[tuple[float, ...], ...] = ()
    #: Why a collision-aware search (``avoid_collisions=True``) ended as it did.
    diagnostics: IKDiagnostics | None = None


@dataclass(frozen=True)
class JointLimitViolation:
    """A joint value [rad or m] outside [lower, upper] that reaching the pose would need."""

    joint: str
    value: float
    lower: float
    upper: float


@dataclass(frozen=True)
class IKDiagnostics:
    """What a collision-aware search saw: solutions reaching the pose within the limits (``reached``), how
    many collided, the colliding body pairs (most frequent first), and, when nothing reached the pose, the
    joint limit violations a reaching configuration needs or the remaining pose error of the closest
    approach (both from a short follow-up search with the joint limits lifted)."""

    reached: int = 0
    in_collision: int = 0
    colliding_pairs: tuple[tuple[str, str], ...] = ()
    joint_limit_violations: tuple[JointLimitViolation, ...] = ()
    position_error: float | None = None
    rotation_error: float | None = None


def failure(error_code: ErrorCode, message: str) -> IKResult:
    return IKResult(False, None, error_code, message)


def solved(solution: np.ndarray, message: str) -> IKResult:
    """A single solution found."""
    values = solution.tolist()
    return IKResult(True, values, ErrorCode.SUCCESS, message, False, (tuple(values),))


def result_from_outcome(outcome: SearchOutcome) -> IKResult:
    if outcome.error_code != ErrorCode.SUCCESS:
        return failure(outcome.error_code, outcome.message)
    return IKResult(True, outcome.solution.tolist(), ErrorCode.SUCCESS, outcome.message, outcome.approximate,
                    tuple(map(tuple, np.array(outcome.solutions).tolist())))
