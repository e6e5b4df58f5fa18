"""Goals of a motion plan (ROS-free) and the joint configurations that reach them.

A goal is reached by any of its candidate configurations: a ``JointGoal`` has one, a ``PoseGoal`` one per IK
solution of its pose (every closed-form branch, each with its whole-turn equivalents within the limits; or the
distinct solutions of the numerical search), filtered by its ``check`` (MoveIt's goal constraint tolerances, for
instance).
"""
from __future__ import annotations

import itertools
import math
import time
import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ..compiled import compiled_kernel
from ..errors import KinematicsError
from ..geometry.poses import transform_from_any_pose
from ..geometry.transforms import invert_transform
from ..ik.budget import UNBOUNDED, Budget
from ..ik.plugin import KinematicsPlugin
from ..state_check import StateCheck

#: Most candidate configurations taken from one pose goal (the nearest to the start first).
MAX_CANDIDATES_PER_GOAL = 64
#: Random restarts of the numerical IK search that collect a pose goal's solutions when there is no closed form.
NUMERICAL_RESTARTS = 16
NUMERICAL_RESTART_TIMEOUT = 0.02
#: A joint this far past a limit [rad or m] is outside it (rounding of values at the limit).
LIMIT_TOLERANCE = 1e-9
_LIMITS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # model -> {joint names: ``_group_limits``}
#: Two solutions closer than this in every joint are the same one [rad or m].
SAME_SOLUTION = 1e-6

#: problem(q) for a group joint vector: None when it is acceptable, else why not (a bound ``StateCheck``).
Acceptance = Callable[[np.ndarray], "str | None"]


class GoalError(KinematicsError):
    """A goal that cannot be planned to as given (wrong length, not finite, a bad pose, an unknown link)."""


@dataclass(frozen=True)
class JointGoal:
    """A configuration of the group's joints, in ``KinematicsPlugin.getJointNames()`` order."""

    positions: Sequence[float]
    name: str = ""


@dataclass(frozen=True, eq=False)
class PoseGoal:
    """A pose of ``link`` (default: the group's tip; another link must move rigidly with a tip) in the plugin's
    base frame, and the ``check`` its IK solutions must pass (constraints; picklable, bound by the plan). With a
    ``tcp`` (T_link_tool (4, 4): a tool frame, an attached object's subframe), the pose is that tool frame's.

    ``T_base_link`` (4, 4) is given as any pose form (a Pose, (position, quaternion x, y, z, w) or a 4x4 array)
    and converted once, here, to a read-only (4, 4) float array; GoalError for an unusable pose.
    """

    T_base_link: np.ndarray
    link: str = ""
    check: StateCheck | None = None
    name: str = ""
    tcp: np.ndarray | None = None

    def __post_init__(self):
        try:
            T_base_link = transform_from_any_pose(self.T_base_link)
            tcp = None if self.tcp is None else transform_from_any_pose(self.tcp)
        except KinematicsError as error:
            raise GoalError(f"{self.described()}: {error}") from None
        for value in (T_base_link, tcp):
            if value is not None:
                value.flags.writeable = False
        object.__setattr__(self, "T_base_link", T_base_link)
        object.__setattr__(self, "tcp", tcp)

    @property
    def link_target(self) -> np.ndarray:
        """(4, 4) the pose of ``link`` itself that puts the tool frame (``tcp``) on the goal (a writable copy)."""
        return self.T_base_link.copy() if self.tcp is None else self.T_base_link @ invert_transform(self.tcp)

    def described(self) -> str:
        return f"pose goal {self.name!r}" if self.name else "pose goal"


Goal = JointGoal | PoseGoal


@dataclass(frozen=True)
class Candidates:
    """A goal's candidate configurations (rows) and, when there are none, why."""

    configurations: np.ndarray
    reason: str = ""


class GroupLimits:
    """The group's joint limits as planning bounds: a continuous joint (no limits) gets a turn either way of the
    start; a revolute joint's whole turns are the values 2 pi apart within its limits."""

    def __init__(self, plugin: KinematicsPlugin, start: np.ndarray):
        self.names, self.lower, self.upper, self.revolute, unbounded, self._within = _group_limits(
            plugin.robot_model, tuple(plugin.getJointNames()))
        self.bounds_lower, self.bounds_upper = self.lower, self.upper
        if unbounded.any():
            self.bounds_lower = np.where(unbounded, start - math.pi, self.lower)
            self.bounds_upper = np.where(unbounded, start + math.pi, self.upper)

    def violations(self, q: np.ndarray) -> list[str]:
        """Each joint outside its limits, with its value and limits."""
        q = np.asarray(q, dtype=float)
        low, high = self._within
        if ((q >= low) & (q <= high)).all():  # (NaN is outside)
            return []
        return [f"{name} = {value:.6g} outside [{low:.6g}, {high:.6g}]"
                for name, value, low, high in zip(self.names, q, self.lower, self.upper)
                if not (low - LIMIT_TOLERANCE <= value <= high + LIMIT_TOLERANCE)]

    def first_outside(self, positions: np.ndarray) -> int:
        """Index of the first row of ``positions`` with a joint outside its limits (as ``violations``), -1: none."""
        return _first_outside(np.ascontiguousarray(positions, dtype=float), *self._within)

    def whole_turns(self, q: np.ndarray) -> list[np.ndarray]:
        """``q`` and its equivalents with revolute joints whole turns away, within the planning bounds."""
        options = []
        for value, low, high, revolute in zip(q, self.bounds_lower, self.bounds_upper, self.revolute):
            if not revolute:
                options.append([value])
                continue
            turns = range(math.ceil((low - value) / (2 * math.pi) - 1e-9),
                          math.floor((high - value) / (2 * math.pi) + 1e-9) + 1)
            options.append([value + 2 * math.pi * k for k in turns] or [value])
        return [np.array(choice) for choice in itertools.product(*options)]


@compiled_kernel
def _first_outside(positions, low, high):
    """``GroupLimits.first_outside`` (a NaN is not outside: it fails every comparison)."""
    for k in range(positions.shape[0]):
        for d in range(positions.shape[1]):
            if positions[k, d] < low[d] or positions[k, d] > high[d]:
                return k
    return -1


def _group_limits(model, names: tuple[str, ...]) -> tuple:
    """(names, lower, upper, revolute, unbounded, (lower, upper) widened by LIMIT_TOLERANCE) of the joints ``names``
    (read-only arrays), kept per model."""
    kept = _LIMITS.setdefault(model, {})
    if names not in kept:
        joints = [model.joints[name] for name in names]
        lower = np.array([joint.lower for joint in joints], dtype=float)
        upper = np.array([joint.upper for joint in joints], dtype=float)
        arrays = (lower, upper, np.array([joint.type in ("revolute", "continuous") for joint in joints]),
                  ~(np.isfinite(lower) & np.isfinite(upper)), lower - LIMIT_TOLERANCE, upper + LIMIT_TOLERANCE)
        for array in arrays:
            array.flags.writeable = False
        kept[names] = (names, *arrays[:4], arrays[4:])
    return kept[names]


def goal_candidates(goal: Goal, plugin: KinematicsPlugin, start: np.ndarray, limits: GroupLimits,
                    deadline: float = math.inf, budget: Budget = UNBOUNDED,
                    T_model_links: Mapping[str, np.ndarray] | None = None,
                    accept: Acceptance | None = None) -> Candidates:
    """The configurations reaching ``goal``, nearest the start first (numerical restarts end at ``deadline``, a
    ``time.perf_counter()``), those of a pose goal filtered by ``accept`` (its bound check); GoalError for a
    malformed goal. ``T_model_links`` (link -> T_model_link (4, 4), the start state) places a pose goal's link
    relative to its tip (``tip_pose``)."""
    if isinstance(goal, JointGoal):
        q = np.asarray(goal.positions, dtype=float)
        if q.shape != start.shape or not np.isfinite(q).all():
            raise GoalError(f"a joint goal needs one finite value per joint {list(limits.names)}; got "
                            f"{list(goal.positions)!r}")
        return Candidates(q[None, :])
    if not isinstance(goal, PoseGoal):
        raise GoalError(f"a goal is a JointGoal or a PoseGoal; got {type(goal).__name__}")
    return pose_candidates(tip_pose(goal, plugin, T_model_links), plugin, start, limits, deadline, budget, accept)


def tip_pose(goal: PoseGoal, plugin: KinematicsPlugin,
             T_model_links: Mapping[str, np.ndarray] | None = None) -> np.ndarray:
    """T_base_tip (4, 4) that puts the goal's link at its pose (``KinematicsPlugin.tip_target``), a writable array
    (the compiled IK kernels are compiled for writable arrays: a read-only one would cost a compilation in each
    process); GoalError for a link the robot does not have or that moves relative to the tip."""
    try:
        return plugin.tip_target(goal.link_target, goal.link or plugin.getTipFrames()[0], T_model_links)
    except KinematicsError as error:
        raise GoalError(f"{goal.described()}: {error}") from None


def pose_candidates(T_base_tip: np.ndarray, plugin: KinematicsPlugin, start: np.ndarray, limits: GroupLimits,
                    deadline: float = math.inf, budget: Budget = UNBOUNDED,
                    accept: Acceptance | None = None) -> Candidates:
    """The IK solutions of the tip pose ``T_base_tip`` (4, 4) with their whole turns, those ``accept`` passes,
    nearest the start first."""
    solutions = _pose_solutions(T_base_tip, plugin, start, limits, deadline, budget)
    if not solutions:
        return Candidates(np.empty((0, len(start))), "no IK solution reaches the pose within the joint limits")
    expanded = [turn for solution in solutions for turn in limits.whole_turns(solution)]
    rejected = []
    if accept is not None:
        kept = []
        for q in expanded:
            reason = accept(q)
            (rejected if reason else kept).append(reason or q)
        expanded = kept
    if not expanded:
        return Candidates(np.empty((0, len(start))), f"no IK solution meets the goal's constraints ({rejected[0]})")
    rows = np.array(expanded)
    order = np.argsort(np.abs(rows - start).max(axis=1), kind="stable")
    return Candidates(rows[order[:MAX_CANDIDATES_PER_GOAL]])


def _pose_solutions(T_base_tip: np.ndarray, plugin: KinematicsPlugin, start: np.ndarray, limits: GroupLimits,
                    deadline: float, budget: Budget) -> list[np.ndarray]:
    """The distinct IK solutions of the tip pose ``T_base_tip`` (4, 4)."""
    solutions = [np.array(q) for q in plugin.all_solutions(T_base_tip, start.tolist())]
    if len(solutions) <= 1:  # a numerical search: restarts from random seeds collect more branches
        rng = np.random.default_rng(len(solutions))
        for _ in range(NUMERICAL_RESTARTS):
            if time.perf_counter() + NUMERICAL_RESTART_TIMEOUT > deadline:
                break
            seed = rng.uniform(limits.bounds_lower, limits.bounds_upper)
            result = plugin.searchPositionIK(T_base_tip, seed.tolist(), NUMERICAL_RESTART_TIMEOUT, budget=budget)
            if result.success:
                solutions.append(np.array(result.solution))
    distinct: list[np.ndarray] = []
    for q in solutions:
        if all(np.abs(q - other).max() > SAME_SOLUTION for other in distinct):
            distinct.append(q)
    return distinct
