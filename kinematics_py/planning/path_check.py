"""Collision checks of joint-space motions (ROS-free): a straight segment between two configurations is checked
at steps of at most ``resolution`` per joint [rad or m], its midpoint first.

One ``PathCheck`` serves a whole plan: the group's joints move, every other joint keeps its value from the base
state. Segments are checked in one compiled placement call per round (see ``CollisionChecker.first_colliding``):
first a few states spread over the segment by bisection (where a collision is most likely found), then the rest.
"""
from __future__ import annotations

import functools
from collections.abc import Callable, Sequence

import numpy as np

from ..collision.checker import CollisionChecker, binding_key, first_colliding
from ..compiled import compiled_kernel
from ..model.joint_steps import straight_steps

#: Largest joint change between two checked states of a returned trajectory [rad or m].
FINE_RESOLUTION = 0.01
#: Resolution of the motion checks while searching [rad or m]: coarser than the trajectory's, for speed (about
#: MoveIt's default for a 7-joint arm: 0.005 of the joint space's extent); the path found is checked again at
#: FINE_RESOLUTION and a segment that fails is searched again at that resolution (0.03 -> 0.06: plan() medians
#: Panda 1.28 -> 1.09 ms, Kinova 3.39 -> 2.55, UR5 4.68 -> 4.09; 3 detours in 90 Kinova plans, success the same;
#: 0.06 -> 0.09: the Panda's medians over five sets of 30 problems 5-16 % lower, the paths as long, the UR5's and
#: the Kinova's medians 2-13 % lower; 0.10 and 0.12 gave longer tails).
SEARCH_RESOLUTION = 0.09
#: States checked in the first round of a segment (spread by bisection), before the rest.
FIRST_ROUND = 8


def steps_between(q_from: np.ndarray, q_to: np.ndarray, resolution: float) -> int:
    """The number of steps (>= 1) that keep every joint's change per step within ``resolution``
    (``model.joint_steps``)."""
    return straight_steps(np.ascontiguousarray(q_from, dtype=float), np.ascontiguousarray(q_to, dtype=float),
                          float(resolution))


def segment_states(q_from: np.ndarray, q_to: np.ndarray, resolution: float) -> np.ndarray:
    """(steps, joints): the states after ``q_from`` up to ``q_to`` included, at most ``resolution`` apart."""
    steps = steps_between(q_from, q_to, resolution)
    fractions = np.arange(1, steps + 1)[:, None] / steps
    return q_from + fractions * (q_to - q_from)


def densify(waypoints: np.ndarray, resolution: float) -> np.ndarray:
    """The straight segments through ``waypoints`` as states at most ``resolution`` apart, waypoints included."""
    parts = [waypoints[:1]]
    for q_from, q_to in zip(waypoints[:-1], waypoints[1:]):
        parts.append(segment_states(q_from, q_to, resolution))
    return np.concatenate(parts)


@compiled_kernel
def _bisection_order(count):
    order, seen, filled, parts = np.empty(count, dtype=np.int64), np.zeros(count, dtype=np.bool_), 0, 1
    while filled < count and parts <= 2 * count:
        for k in range(1, 2 * parts, 2):
            index = min(count - 1, (k * count) // (2 * parts))
            if not seen[index]:
                seen[index] = True
                order[filled] = index
                filled += 1
        parts *= 2
    for index in range(count):
        if not seen[index]:
            order[filled] = index
            filled += 1
    return order


@functools.lru_cache(maxsize=1024)
def bisection_order(count: int) -> np.ndarray:
    """0..count-1 ordered coarse to fine: the middle, then the quarters, and so on (each index where it first
    appears; the rest in order at the end)."""
    result = _bisection_order(count)
    result.flags.writeable = False
    return result


class PathCheck:
    """Collision checks (and an optional ``state_validity``, e.g. path constraints) of a group's motions in one
    scene; counts the states it checked."""

    def __init__(self, checker: CollisionChecker, joint_names: Sequence[str], base_state=None,
                 resolution: float = FINE_RESOLUTION,
                 state_validity: Callable[[np.ndarray], str | None] | None = None):
        self.checker, self.joint_names, self.resolution = checker, tuple(joint_names), resolution
        self.base, self.indices = checker.binding(joint_names, base_state)
        #: The key of what is kept per group and base state.
        self.binding_key = binding_key(self.indices, self.base)
        self.state_validity = state_validity
        self.states_checked = 0
        #: Set when a valid state of the group is known (e.g. a plan's start): then the pairs no joint of the group
        #: moves are free in every state (``sphere_proof`` leaves them out).
        self.fixed_pairs_free = False

    @classmethod
    def of(cls, checker: CollisionChecker, joint_names: Sequence[str], base_state, resolution: float,
           path_check=None, model=None) -> PathCheck:
        """The checks of a motion whose every state must also pass ``path_check`` (a ``state_check.StateCheck``, or
        None), bound to ``model`` (the group's RobotModel; ``checker``'s when None) and ``checker``."""
        problem = None if path_check is None else path_check.problem(model or checker.model, checker)
        return cls(checker, joint_names, base_state, resolution, problem)

    def with_resolution(self, resolution: float) -> PathCheck:
        """The same checks at another resolution (its states are counted separately)."""
        other = object.__new__(type(self))  # (its binding to the checker made once)
        other.__dict__.update(self.__dict__)
        other.resolution, other.states_checked = resolution, 0
        return other

    def full_state(self, q: np.ndarray) -> np.ndarray:
        state = self.base.copy()
        state[self.indices] = q
        return state

    def full_states(self, states: np.ndarray) -> np.ndarray:
        """(n, variables): the base state with the group's values of each row of ``states`` (n, joints)."""
        full = np.tile(self.base, (len(states), 1))
        full[:, self.indices] = states
        return full

    def validity_problem(self, q: np.ndarray) -> str | None:
        """Why ``q`` fails ``state_validity`` (None: it passes, or there is none)."""
        return self.state_validity(q) if self.state_validity is not None else None

    def state_problem(self, q: np.ndarray) -> str:
        """Why ``q`` is not a valid state of a path ("" when it is): its collisions or its validity problem."""
        self.states_checked += 1
        report = self.checker.check(self.full_state(q))
        if report.in_collision:
            return f"in collision ({report.describe()})"
        return self.validity_problem(q) or ""

    def state_free(self, q: np.ndarray) -> bool:
        return not self.state_problem(q)

    def first_invalid(self, states: np.ndarray) -> int:
        """Index of an invalid state among ``states`` (group joint vectors, e.g. a path's points at most
        ``resolution`` apart; the first found, midpoints first), -1 when all are valid."""
        self.states_checked += len(states)
        if len(states) == 1:  # (one state: its own check, without the rounds' bookkeeping)
            if self.checker.is_colliding(self.full_state(states[0])):
                return 0
            return -1 if self.state_validity is None or self.state_validity(states[0]) is None else 0
        order = bisection_order(len(states))
        rounds = [order[:FIRST_ROUND], order[FIRST_ROUND:]] if len(order) > FIRST_ROUND else [order]
        colliding = first_colliding(self.checker, self.full_states(states), rounds)
        if colliding >= 0 or self.state_validity is None:
            return colliding
        return next((int(k) for k in order if self.state_validity(states[k]) is not None), -1)

    def segment_free(self, q_from: np.ndarray, q_to: np.ndarray) -> bool:
        """True when the straight motion from ``q_from`` (not checked) to ``q_to`` is valid throughout."""
        return self.first_invalid(segment_states(q_from, q_to, self.resolution)) < 0
