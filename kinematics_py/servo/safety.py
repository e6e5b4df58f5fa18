"""moveit_servo's safety rules as pure functions: each answers a velocity scale in [0, 1] (or the joints to halt)
and its status code."""
from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence

import numpy as np

from ..errors import KinematicsError
from .commands import StatusCode

#: Within this fraction of a proximity threshold from contact the arm stops (the deceleration before it leaves
#: less than a micrometre per period at the default scales).
STOP_FRACTION = 0.125
#: The velocity scale at contact of the exponential deceleration (moveit_servo's: 0.001).
SCALE_AT_CONTACT = 1e-3
#: Below this scale a deceleration toward a singularity becomes a halt: the scale only tends to 0 as the
#: condition number nears the hard threshold, so the arm would creep toward it without ever stopping.
HALT_BELOW_SCALE = 0.05


def singularity_scale(condition: float, approaching: bool, lower: float, hard: float,
                      leaving_multiplier: float) -> tuple[float, StatusCode]:
    """Decelerate linearly from ``lower`` to the hard threshold (times ``leaving_multiplier`` when moving away),
    stop within HALT_BELOW_SCALE of it and beyond; (1, NO_WARNING) below ``lower``."""
    if not condition > lower:
        return 1.0, StatusCode.NO_WARNING
    upper = hard if approaching else hard * leaving_multiplier
    scale = 1.0 - (condition - lower) / (upper - lower)
    if scale < HALT_BELOW_SCALE:
        return 0.0, StatusCode.HALT_FOR_SINGULARITY
    status = (StatusCode.DECELERATE_FOR_APPROACHING_SINGULARITY if approaching
              else StatusCode.DECELERATE_FOR_LEAVING_SINGULARITY)
    return scale, status


def condition_number(J: np.ndarray) -> float:
    """Largest over smallest singular value of J (6, n) (inf at a singularity)."""
    values = np.linalg.svd(J, compute_uv=False)
    return float(values[0] / values[-1]) if values[-1] > 0 else math.inf


def collision_scale(distance: float, threshold: float) -> tuple[float, StatusCode]:
    """1 beyond ``threshold`` [m]; exponentially down to SCALE_AT_CONTACT at contact within it; 0 (halt) within
    STOP_FRACTION of the threshold from contact."""
    if distance >= threshold:
        return 1.0, StatusCode.NO_WARNING
    if distance <= STOP_FRACTION * threshold:
        return 0.0, StatusCode.HALT_FOR_COLLISION
    return math.exp(math.log(SCALE_AT_CONTACT) * (1.0 - distance / threshold)), StatusCode.DECELERATE_FOR_COLLISION


def joints_at_bound(q: np.ndarray, qdot: np.ndarray, period: float, lower: np.ndarray, upper: np.ndarray,
                    margins: np.ndarray) -> np.ndarray:
    """Indexes of the joints whose next position passes their limit less its margin while moving outward."""
    following = q + qdot * period
    beyond = ((following < lower + margins) & (qdot < 0)) | ((following > upper - margins) & (qdot > 0))
    return np.flatnonzero(beyond)


def velocity_limit_scale(qdot: np.ndarray, limits: np.ndarray) -> float:
    """The largest scale in (0, 1] keeping every joint within its velocity limit (direction kept)."""
    with np.errstate(divide="ignore"):
        ratios = np.abs(qdot) / limits
    worst = float(ratios.max(initial=0.0))
    return 1.0 if worst <= 1.0 else 1.0 / worst


class ProximityProbe:
    """How near the scene and the robot itself are to a collision, bracketed by padded collision checks.

    ``checker`` is a ``collision.CollisionChecker`` (its scene stays live: changes are seen); copies padded at
    ``threshold * k / levels`` (k = levels ... 1) bracket the distance to within ``threshold / levels``.
    ``distances(q)`` answers (scene, self) lower bounds [m]: inf beyond the threshold, 0 closer than the
    finest level (with the default 8 levels: STOP_FRACTION of the threshold, where the arm stops).
    """

    def __init__(self, checker, joint_names: Sequence[str], scene_threshold: float, self_threshold: float,
                 base_state: Mapping[str, float] | None = None, levels: int = 8):
        if levels < 1:
            raise KinematicsError(f"levels must be >= 1; got {levels}")
        self._joint_names = tuple(joint_names)
        self._base = dict(base_state or {})
        shares = [(levels - k) / levels for k in range(levels)]
        self._scene = self._padded(checker, [scene_threshold * share for share in shares], 1.0)
        # Both links of a self-collision pair are padded: half the distance each.
        self._self = self._padded(checker, [self_threshold * share for share in shares], 0.5)

    @staticmethod
    def _padded(checker, distances: list[float], share: float) -> list[tuple[float, object]]:
        padded = []
        for distance in distances:
            copy = checker.for_scene(checker.scene)
            copy.set_padding(distance * share)
            padded.append((distance, copy))
        return padded

    def distances(self, q: Sequence[float]) -> tuple[float, float]:
        state = {**self._base, **dict(zip(self._joint_names, map(float, q)))}
        return (self._bracket(self._scene, lambda c: c.is_colliding(state, self_collisions=False)),
                self._bracket(self._self, lambda c: c.is_colliding(state, world=False)))

    @staticmethod
    def _bracket(padded: list[tuple[float, object]], colliding: Callable[[object], bool]) -> float:
        nearest = math.inf
        for distance, checker in padded:
            if not colliding(checker):
                return nearest if nearest == math.inf else distance
            nearest = distance
        return 0.0
