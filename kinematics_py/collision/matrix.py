"""Proposing link pairs to leave out of self-collision checks, as MoveIt Setup Assistant does.

For a robot without an SRDF (or to write one): sample random joint values (a mobile base's floating or
planar joint stays at the default state), check every pair of links with geometry, and disable, in this order,

- "Adjacent": links joined by a joint (through links without geometry),
- "Default": pairs in collision at the default state (every joint at zero, clamped into its limits),
- "Always": pairs in collision in at least ``always_fraction`` of the samples,
- "Never": pairs never in collision in any sample.

Pairs in collision only sometimes stay enabled: that is where self-collision checking matters.
"""
from __future__ import annotations

from dataclasses import dataclass
from xml.sax.saxutils import quoteattr

import numpy as np

from ..model.ranges import uniform
from ..model.urdf import SINGLE_DOF_JOINT_TYPES
from ..parameters import ParameterError
from .checker import CollisionChecker
from .tables import adjacent_link_pairs

#: MoveIt Setup Assistant's defaults: 10000 samples, "always" at 95 % of them.
DEFAULT_SAMPLES = 10000
DEFAULT_ALWAYS_FRACTION = 0.95
#: Joints without finite limits (continuous) are sampled over one turn [rad].
CONTINUOUS_RANGE = (-np.pi, np.pi)


@dataclass(frozen=True)
class DisabledPair:
    link_1: str
    link_2: str
    reason: str  # "Adjacent", "Default", "Always" or "Never"


@dataclass(frozen=True)
class CollisionMatrixProposal:
    """The proposed pairs, and how often each pair collided in the samples (for review)."""

    disabled: tuple[DisabledPair, ...]
    samples: int
    collision_fraction: dict[tuple[str, str], float]

    def srdf(self) -> str:
        """The ``<disable_collisions>`` lines of an SRDF."""
        return "\n".join(f"<disable_collisions link1={quoteattr(p.link_1)} link2={quoteattr(p.link_2)} "
                         f"reason={quoteattr(p.reason)}/>" for p in self.disabled)

    def apply_to(self, checker: CollisionChecker) -> None:
        """Leave the proposed pairs out of the checker's self-collision checks."""
        for pair in self.disabled:
            checker.allow_collision(pair.link_1, pair.link_2, pair.reason)


def propose_disabled_pairs(checker: CollisionChecker, *, samples: int = DEFAULT_SAMPLES,
                           always_fraction: float = DEFAULT_ALWAYS_FRACTION, seed: int = 0,
                           default_state=None) -> CollisionMatrixProposal:
    """Sample ``samples`` uniformly random states (within the joint limits) and classify every pair of the
    checker's links with geometry (see the module docstring). Deterministic for a given ``seed``."""
    if samples < 1:
        raise ParameterError(f"samples must be >= 1; got {samples}")
    if not 0.0 < always_fraction <= 1.0:
        raise ParameterError(f"always_fraction must be within (0, 1]; got {always_fraction}")
    model = checker.model
    default = checker.state_vector(default_state).reshape(1, -1)
    # Floating and planar joints stay where the default state has them: they carry the links they move rigidly.
    lower, upper = default[0].copy(), default[0].copy()
    for name, values in model.tree.slots.items():
        joint = model.joints[name]
        if joint.type in SINGLE_DOF_JOINT_TYPES:
            lower[values] = joint.lower if np.isfinite(joint.lower) else CONTINUOUS_RANGE[0]
            upper[values] = joint.upper if np.isfinite(joint.upper) else CONTINUOUS_RANGE[1]
    states = uniform(np.random.default_rng(seed), lower, upper, (samples, len(lower)))

    pairs, hits = checker.link_pair_collisions(np.vstack([default, states]))
    fractions = hits[1:].mean(axis=0)
    adjacent = adjacent_link_pairs(model, checker.link_geometry)
    disabled = []
    for k, (link_1, link_2) in enumerate(pairs):
        reason = _reason(frozenset((link_1, link_2)) in adjacent, hits[0, k], fractions[k], always_fraction)
        if reason:
            disabled.append(DisabledPair(link_1, link_2, reason))
    order = {"Adjacent": 0, "Default": 1, "Always": 2, "Never": 3}
    disabled.sort(key=lambda p: (order[p.reason], p.link_1, p.link_2))
    return CollisionMatrixProposal(tuple(disabled), samples,
                                   {pair: float(f) for pair, f in zip(pairs, fractions)})


def _reason(adjacent: bool, in_default: bool, fraction: float, always_fraction: float) -> str:
    if adjacent:
        return "Adjacent"
    if in_default:
        return "Default"
    if fraction >= always_fraction:
        return "Always"
    if fraction == 0.0:
        return "Never"
    return ""

