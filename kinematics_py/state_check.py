"""Whether one group configuration is acceptable: the request's constraints and, where asked, collisions, answered
as one ``Verdict``. The same value checks an IK solution, every step of a Cartesian path and the goals and path
of a motion plan; it is picklable (constraints and joint values only), so a planning process binds it to its own
robot model and collision checker.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from .collision.validity import CollisionValidity, StateCollisions
from .errors import ErrorCode, Verdict
from .model.constraints import RequestConstraints
from .model.robot_model import RobotModel

#: check(q) for a group joint vector ``q`` [rad or m] -> Verdict (SUCCESS when acceptable).
BoundCheck = Callable[[np.ndarray], Verdict]
ACCEPTED = Verdict(ErrorCode.SUCCESS)


@dataclass(frozen=True)
class StateCheck:
    """Group configurations (``joint_names`` order), completed by ``base_values`` (every other joint), checked
    against ``constraints`` (a violation answers ``violation_code``, its reason after ``prefix``) and, when
    ``collisions``, against the collision checker given to ``bound`` (GOAL_IN_COLLISION naming the pairs)."""

    joint_names: Sequence[str]
    base_values: Mapping[str, object]
    constraints: RequestConstraints | None = None
    collisions: bool = False
    violation_code: ErrorCode = ErrorCode.GOAL_CONSTRAINTS_VIOLATED
    prefix: str = ""

    def __bool__(self) -> bool:
        """Whether it checks anything."""
        return bool(self.constraints) or self.collisions

    def bound(self, model: RobotModel, checker: StateCollisions | None = None) -> BoundCheck:
        """check(q) on ``model`` and (when ``collisions``) ``checker``; collisions are checked first."""
        collisions = CollisionValidity(checker, self.joint_names, self.base_values) \
            if self.collisions and checker is not None else None
        constraints = self.constraints or None
        names, code, prefix = list(self.joint_names), self.violation_code, self.prefix
        base = model.resolve_joint_values(self.base_values) if constraints is not None else {}
        mimics = [(name, model.joints[name].mimic) for name in model.joint_names
                  if model.joints[name].mimic is not None]

        def check(q: np.ndarray) -> Verdict:
            if collisions is not None:
                verdict = collisions(q)
                if verdict.error_code != ErrorCode.SUCCESS:
                    return verdict
            if constraints is not None:
                values = dict(base)
                values.update(zip(names, np.asarray(q, dtype=float).tolist()))
                for name, mimic in mimics:  # as resolve_joint_values derives them, without checking every joint
                    values[name] = mimic.multiplier * values[mimic.joint] + mimic.offset
                reason = constraints.violation(values, model)
                if reason is not None:
                    return Verdict(code, prefix + reason)
            return ACCEPTED
        return check

    def problem(self, model: RobotModel, checker: StateCollisions | None = None) -> Callable[[np.ndarray], str | None]:
        """The bound check as ``reason(q) -> None when acceptable, else why not`` (planning's form)."""
        check = self.bound(model, checker)

        def reason(q: np.ndarray) -> str | None:
            verdict = check(q)
            return None if verdict.error_code == ErrorCode.SUCCESS else verdict.reason
        return reason
