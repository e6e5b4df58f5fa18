"""The collision check an IK search calls on each solution it finds."""
from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Protocol

import numpy as np

from ..errors import ErrorCode, Verdict
from .report import CollisionReport


class StateCollisions(Protocol):
    """What a validity check needs of a checker (``CollisionChecker`` is one): named so that this module need not
    import the checker, which makes validity checks."""

    def binding(self, joint_names: Sequence[str], base_state=None) -> tuple[np.ndarray, np.ndarray]: ...

    def check(self, state) -> CollisionReport: ...


class CollisionValidity:
    """IK validity check: ``validity(q) -> Verdict`` for a group's joint vector ``q`` (in the order of the
    ``joint_names`` it was made for, the other joints from ``base_state``). A colliding solution gets
    GOAL_IN_COLLISION with the colliding pairs as its reason; the checks and rejections are counted for
    diagnostics.

    Use it as ``is_valid`` (``validity(q)``) or as a KinematicsPlugin ``solution_callback``
    (``validity.solution_callback``).
    """

    def __init__(self, checker: StateCollisions, joint_names: Sequence[str], base_state=None):
        self.checker = checker
        self._base, self._indices = checker.binding(joint_names, base_state)
        #: Solutions checked, and how many of them were in collision.
        self.checks = 0
        self.rejections = 0
        #: body pair -> how many rejected solutions it appeared in.
        self.pair_counts: Counter = Counter()

    def __call__(self, q: np.ndarray | Sequence[float]) -> Verdict:
        state = self._base.copy()
        state[self._indices] = q
        self.checks += 1
        report = self.checker.check(state)  # one query: the colliding pairs come with the answer
        if not report.in_collision:
            return Verdict(ErrorCode.SUCCESS)
        self.rejections += 1
        self.pair_counts.update(report.pairs)
        return Verdict(ErrorCode.GOAL_IN_COLLISION, f"in collision: {report.describe()}")

    def solution_callback(self, _pose, solution: Sequence[float]) -> Verdict:
        return self(solution)

    def colliding_pairs(self) -> tuple[tuple[str, str], ...]:
        """Pairs seen in rejected solutions, most frequent first."""
        return tuple(pair for pair, _ in self.pair_counts.most_common())
