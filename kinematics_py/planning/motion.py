"""Collision-free motions to one of several goals (ROS-free), as Zivid Motion's planner and move_group plan them.

``plan`` checks the start, turns every goal into candidate configurations (``goals``), drops the candidates outside
the limits, in collision or off the path constraints, and then finds a path to one of the rest: the straight joint
motion when it is free (the shortest path there is), else a compiled RRT-Connect on the robot's spheres
(``sphere_search``; default planner only), or OMPL's planner (``ompl_search``) when that finds nothing. A ``touch``
motion ends with a straight-line approach to its pose goal (the Cartesian planner); a ``retract`` starts the plan with a
straight-line retraction. The path is densified to steps of at most ``resolution`` per joint, checked again as a
whole, timed within the scaled joint limits (toppra) and checked once more as timed: a trajectory that fails a
check is never returned.

Failures say why, as Zivid's errors: the start is blocked (the colliding bodies, the joints out of their limits),
every goal is blocked or outside the limits, or no path was found within the time.
"""
from __future__ import annotations

import math
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from ..collision.checker import CollisionChecker
from ..errors import ErrorCode, KinematicsError, Verdict
from ..geometry.poses import transform_from_any_pose
from ..ik.budget import UNBOUNDED, Budget
from ..ik.plugin import KinematicsPlugin
from .blending import blend_radii
from .cartesian_path import compute_cartesian_path
from .goals import Goal, GoalError, GroupLimits, PoseGoal, goal_candidates
from .ompl_search import DEFAULT_PLANNER, planner_id_or_default, search_path
from .path_check import FINE_RESOLUTION, SEARCH_RESOLUTION, PathCheck, densify
from .sphere_search import fast_or_ompl_search
from .time_parameterization import (
    JointLimits,
    TimedPath,
    TimeParameterizationError,
    joint_limits,
    time_parameterize,
    time_straight_line,
)

#: How the goal is chosen among the reachable ones: the one giving the shortest path, or the first in the list.
PRIORITIZATIONS = ("shortest_path", "list_order")
MOTION_TYPES = ("free", "touch")
#: Part of an attempt's time the search may take: the rest is for re-checking its path at the trajectory's
#: resolution (the optimizing planners, RRT* and BIT*, search until their time is up).
SEARCH_SHARE = 0.8
#: Step of a touch motion's approach and of a retraction [m].
LINEAR_STEP = 0.005
#: Candidate configurations of a touch goal tried for the straight approach (the nearest to the start first).
MAX_TOUCH_CANDIDATES = 8

#: state_validity(q) for a group joint vector: None when valid, else why not (path constraints, for instance).
StateValidity = Callable[[np.ndarray], "str | None"]


class PlanningError(KinematicsError):
    """A plan request that is malformed (names the valid choices); a plan that fails is a MotionPlan instead."""


@dataclass(frozen=True)
class Approach:
    """A straight-line motion of ``distance`` [m] along ``direction`` (in the plugin's base frame; None: along
    the link's z axis, the tool axis, at the goal for a touch approach and backwards at the start for a
    retraction)."""

    distance: float
    direction: Sequence[float] | None = None


@dataclass(frozen=True)
class Waypoint:
    """A waypoint of the path: ``motion`` "joint" (a straight joint move from the previous one) or "linear" (a
    straight line of the link); ``blend_radius`` [rad, joint-space distance] keeps a blended motion through it
    collision-free (0 at the ends and on linear moves)."""

    positions: np.ndarray
    motion: str
    blend_radius: float = 0.0


@dataclass(frozen=True)
class StateDiagnosis:
    """The collisions and limit violations of the start or of one goal (all of a pose goal's candidates)."""

    what: str
    collisions: tuple[tuple[str, str], ...] = ()
    limit_violations: tuple[str, ...] = ()
    other: tuple[str, ...] = ()

    @property
    def valid(self) -> bool:
        return not (self.collisions or self.limit_violations or self.other)


@dataclass(frozen=True)
class MotionPlan:
    """A plan's answer. On success: the waypoints, the trajectory (``positions``, one row per step of at most the
    checking resolution, and its ``timing``), which goal it reaches. On failure: ``error_code`` and ``message``
    say why; ``failure`` is one of "blocked_start", "blocked_goals", "goals_outside_limits", "no_goal_solution",
    "blocked_path", "stopped"."""

    joint_names: tuple[str, ...]
    error_code: ErrorCode
    message: str
    failure: str = ""
    waypoints: tuple[Waypoint, ...] = ()
    positions: np.ndarray = field(default_factory=lambda: np.empty((0, 0)))
    timing: TimedPath | None = None
    goal_index: int = -1
    planning_time: float = 0.0
    diagnosis: tuple[StateDiagnosis, ...] = ()
    #: The retraction that undoes a touch plan's approach (for the next plan's ``retract``).
    retraction: Approach | None = None

    @property
    def success(self) -> bool:
        return self.error_code == ErrorCode.SUCCESS


@dataclass
class _Candidate:
    goal_index: int
    q: np.ndarray
    approach: np.ndarray | None = None  # (points, joints) of a touch motion's approach, q first


def plan(plugin: KinematicsPlugin, checker: CollisionChecker, start: Sequence[float], goals: Sequence[Goal], *,
         base_state=None, prioritization: str = "shortest_path", motion: str = "free",
         approach: Approach | None = None, retract: Approach | None = None, planner_id: str = DEFAULT_PLANNER,
         planning_time: float = 1.0, attempts: int = 1, limits: JointLimits | None = None,
         velocity_scaling: float = 1.0, acceleration_scaling: float = 1.0, path_validity: StateValidity | None = None,
         budget: Budget = UNBOUNDED, diagnose: bool = False,
         resolution: float = FINE_RESOLUTION, search_resolution: float = SEARCH_RESOLUTION) -> MotionPlan:
    """A collision-free motion of the plugin's group from ``start`` (its joint values, ``getJointNames()`` order)
    to one of ``goals``, found within ``planning_time`` [s] (goals, search, simplification, re-checks and blend
    radii; the final check and timing of the trajectory, a few milliseconds, come after) or until
    ``budget.should_stop()`` (the caller's stop hook, also given to the IK searches of pose goals and linear moves).
    ``base_state`` gives the other joints (a mapping or a full state vector; default: the checker's zeros).
    ``path_validity`` is held at every state of the path. The trajectory's points are at most ``resolution`` apart
    per joint, each checked; the search checks its motions at ``search_resolution``. PlanningError for a malformed
    request."""
    began = time.perf_counter()
    deadline = began + planning_time
    should_stop = budget.should_stop
    names = tuple(plugin.getJointNames())
    planner_id = planner_id_or_default(planner_id)
    q_start = _checked_request(names, start, goals, prioritization, motion, approach, retract, planning_time)
    bounds = GroupLimits(plugin, q_start)
    check = PathCheck(checker, names, base_state, resolution, path_validity)
    context = _Context(plugin, check, bounds, names, began)

    start_report = context.diagnose("start", q_start)
    if not start_report.valid:
        code = ErrorCode.START_STATE_INVALID if start_report.limit_violations else (
            ErrorCode.START_STATE_IN_COLLISION if start_report.collisions else
            ErrorCode.START_STATE_VIOLATES_PATH_CONSTRAINTS)
        return context.failed(code, "blocked_start", f"the start is blocked: {_described(start_report)}",
                              (start_report,))
    prefix: list[Waypoint] = [Waypoint(q_start, "joint")]
    if retract is not None:
        retraction = _linear_motion(plugin, check, q_start, _retraction_target(plugin, q_start, retract), budget)
        if isinstance(retraction, str):
            return context.failed(ErrorCode.PLANNING_FAILED, "blocked_start", f"the retraction stopped: {retraction}")
        prefix += [Waypoint(q, "linear") for q in retraction[1:]]
    q_free = prefix[-1].positions

    candidates, diagnosis = [], [start_report]
    for index, goal in enumerate(goals):
        found, report = context.goal_candidates(index, goal, q_free, motion, approach, deadline, budget)
        candidates += found
        diagnosis.append(report)
    if not candidates:
        code, failure, message = _no_valid_goal(diagnosis[1:])
        return context.failed(code, failure, message, tuple(diagnosis))

    groups = ([candidates] if prioritization == "shortest_path" else
              [[c for c in candidates if c.goal_index == index] for index in range(len(goals))])
    groups = [group for group in groups if group]
    found = None
    for position, group in enumerate(groups):
        remaining = deadline - time.perf_counter()
        share = remaining / (len(groups) - position)
        found = _path_to_one_of(check, search_resolution, q_free, group, bounds, planner_id, share, attempts,
                                should_stop)
        if found is not None or should_stop():
            break
    if found is None:
        stopped = should_stop()
        return context.failed(ErrorCode.PREEMPTED if stopped else ErrorCode.TIMED_OUT,
                              "stopped" if stopped else "blocked_path",
                              ("planning was stopped" if stopped else
                               f"no collision-free path found within {planning_time:.3g} s "
                               f"({planner_id}; the start and {len(candidates)} goal configuration(s) are free)"),
                              tuple(diagnosis) if diagnose else ())
    joint_path, candidate = found
    waypoints = prefix + [Waypoint(q, "joint") for q in joint_path[1:]]
    if candidate.approach is not None:
        waypoints += [Waypoint(q, "linear") for q in candidate.approach[1:]]
    radii = blend_radii(check, [w.positions for w in waypoints], [w.motion for w in waypoints], deadline)
    waypoints = [Waypoint(w.positions, w.motion, r) for w, r in zip(waypoints, radii)]
    scaled = (limits or joint_limits(plugin.robot_model, names)).scaled(velocity_scaling, acceleration_scaling)
    try:
        positions, timing = timed_trajectory(waypoints, scaled, resolution)
    except TimeParameterizationError as error:
        return context.failed(ErrorCode.PLANNING_FAILED, "blocked_path", f"the path cannot be timed: {error}")
    problem = context.trajectory_problem(positions)
    if problem:
        return context.failed(ErrorCode.PLANNING_FAILED, "blocked_path", f"the path failed its final check: {problem}")
    retraction = None
    goal = goals[candidate.goal_index]
    if candidate.approach is not None:
        direction = _approach_direction(approach, transform_from_any_pose(goal.pose))
        retraction = Approach(approach.distance, tuple(-direction))
    return MotionPlan(names, ErrorCode.SUCCESS,
                      f"reached goal {candidate.goal_index}{_named(goal)}: {len(waypoints)} waypoints, "
                      f"{len(positions)} points, {timing.time_from_start[-1]:.3f} s; {check.states_checked} states "
                      f"checked", "", tuple(waypoints), positions, timing, candidate.goal_index,
                      time.perf_counter() - began, tuple(diagnosis) if diagnose else (), retraction)


def timed_trajectory(waypoints: Sequence[Waypoint], limits: JointLimits,
                     resolution: float) -> tuple[np.ndarray, TimedPath]:
    """(positions, timing) of the path through ``waypoints``: each joint move a straight line at most
    ``resolution`` apart per joint, timed on its own from rest to rest (so the trajectory is exactly the checked
    path: a spline through a corner would leave it), each run of linear moves timed as one smooth path."""
    runs: list[np.ndarray] = []
    for previous, waypoint in zip(waypoints[:-1], waypoints[1:]):
        if waypoint.motion == "linear" and runs and previous.motion == "linear":
            runs[-1] = np.vstack([runs[-1], waypoint.positions])
        else:
            runs.append(np.array([previous.positions, waypoint.positions]))
    positions, times, velocities, accelerations, offset = [waypoints[0].positions[None, :]], [np.zeros(1)], [], [], 0.0
    dof = len(waypoints[0].positions)
    velocities.append(np.zeros((1, dof)))
    accelerations.append(np.zeros((1, dof)))
    for run in runs:
        dense = densify(run, resolution)
        timed = time_straight_line(dense, limits) if len(run) == 2 else time_parameterize(dense, limits)
        positions.append(dense[1:])
        times.append(offset + timed.time_from_start[1:])
        velocities.append(timed.velocities[1:])
        accelerations.append(timed.accelerations[1:])
        offset += float(timed.time_from_start[-1])
    return np.concatenate(positions), TimedPath(np.concatenate(times), np.concatenate(velocities),
                                                np.concatenate(accelerations))


def _checked_request(names: tuple[str, ...], start, goals, prioritization: str, motion: str,
                     approach: Approach | None, retract: Approach | None, planning_time: float) -> np.ndarray:
    """The start as an array; PlanningError naming the valid choices for anything malformed."""
    _check_choice(prioritization, PRIORITIZATIONS, "prioritization")
    _check_choice(motion, MOTION_TYPES, "motion")
    if not goals:
        raise PlanningError("plan needs at least one goal")
    if motion == "touch" and (approach is None or not any(isinstance(goal, PoseGoal) for goal in goals)):
        raise PlanningError("a touch motion needs an approach (distance, direction) and pose goals")
    for what, linear in (("approach", approach), ("retract", retract)):
        if linear is not None and not (math.isfinite(linear.distance) and linear.distance > 0):
            raise PlanningError(f"{what} distance must be finite and > 0 [m]; got {linear.distance!r}")
    if not (math.isfinite(planning_time) and planning_time > 0):
        raise PlanningError(f"planning_time must be finite and > 0 [s]; got {planning_time!r}")
    q_start = np.asarray(start, dtype=float)
    if q_start.shape != (len(names),) or not np.isfinite(q_start).all():
        raise PlanningError(f"start needs one finite value per joint {list(names)}; got {list(start)!r}")
    return q_start


class _Context:
    """What the steps of one plan share: the group, its checks, and how to answer a failure."""

    def __init__(self, plugin: KinematicsPlugin, check: PathCheck, bounds: GroupLimits, names: tuple[str, ...],
                 began: float):
        self.plugin, self.check, self.bounds, self.names, self.began = plugin, check, bounds, names, began

    def failed(self, code: ErrorCode, failure: str, message: str,
               diagnosis: tuple[StateDiagnosis, ...] = ()) -> MotionPlan:
        return MotionPlan(self.names, code, message, failure, planning_time=time.perf_counter() - self.began,
                          diagnosis=diagnosis)

    def diagnose(self, what: str, q: np.ndarray) -> StateDiagnosis:
        violations = tuple(self.bounds.violations(q))
        report = self.check.checker.check(self.check.full_state(q))
        other = self.check.validity_problem(q)
        return StateDiagnosis(what, report.pairs, violations, (other,) if other else ())

    def goal_candidates(self, index: int, goal: Goal, q_start: np.ndarray, motion: str, approach: Approach | None,
                        deadline: float, budget: Budget) -> tuple[list[_Candidate], StateDiagnosis]:
        """The goal's valid candidates and its diagnosis (why the others are not)."""
        what = f"goal {index}{_named(goal)}"
        touch = motion == "touch" and isinstance(goal, PoseGoal)
        try:
            reached = goal_candidates(_pre_touch_goal(self.plugin, goal, approach) if touch else goal,
                                      self.plugin, q_start, self.bounds, deadline, budget)
        except GoalError as error:
            raise PlanningError(f"{what}: {error}") from None
        if not len(reached.configurations):
            return [], StateDiagnosis(what, other=(reached.reason,))
        found, collisions, violations, other = [], Counter(), [], Counter()
        for q in reached.configurations:
            report = self.diagnose(what, q)
            if not report.valid:
                collisions.update(report.collisions)
                violations += report.limit_violations
                other.update(report.other)
                continue
            candidate = _Candidate(index, q)
            if touch:
                if len(found) >= MAX_TOUCH_CANDIDATES:
                    break
                path = _linear_motion(self.plugin, self.check, q, transform_from_any_pose(goal.pose), budget)
                if isinstance(path, str):
                    other[f"the approach stopped: {path}"] += 1
                    continue
                rejected = goal.accept(path[-1]) if goal.accept is not None else None
                if rejected:
                    other[f"the touch configuration: {rejected}"] += 1
                    continue
                candidate.approach = path
            found.append(candidate)
        if found:
            return found, StateDiagnosis(what)
        return [], StateDiagnosis(what, tuple(collisions), tuple(dict.fromkeys(violations)), tuple(other))

    def trajectory_problem(self, positions: np.ndarray) -> str:
        """Why a densified path cannot be returned ("" when it can): a state in collision, off the path
        constraints or outside the limits."""
        outside = self.bounds.first_outside(positions)
        if outside >= 0:
            return "joint limits: " + ", ".join(self.bounds.violations(positions[outside]))
        invalid = self.check.first_invalid(positions)
        return f"point {invalid}: {self.check.state_problem(positions[invalid])}" if invalid >= 0 else ""


def _path_to_one_of(check: PathCheck, search_resolution: float, q_start: np.ndarray, candidates: list[_Candidate],
                    bounds: GroupLimits, planner_id: str, time_limit: float, attempts: int,
                    should_stop) -> tuple[np.ndarray, _Candidate] | None:
    """The shortest path found to one of the candidates: the straight motion to the nearest candidate it is free
    to (no path to any candidate is shorter than the straight one to it), else the shortest of ``attempts``
    searches. Every segment of the answer is free at ``check``'s resolution."""
    distances = np.array([np.linalg.norm(c.q - q_start) for c in candidates])
    for k in np.argsort(distances, kind="stable"):
        if check.segment_free(q_start, candidates[k].q):
            return np.array([q_start, candidates[k].q]), candidates[k]
    goals = np.array([c.q for c in candidates])
    deadline = time.perf_counter() + time_limit
    search_check = check.with_resolution(max(search_resolution, check.resolution))
    best = None
    for attempt in range(max(1, attempts)):
        remaining = deadline - time.perf_counter()
        if remaining <= 0 or should_stop():
            break
        share = SEARCH_SHARE * remaining / (max(1, attempts) - attempt)
        result = fast_or_ompl_search(search_check, q_start, goals, (bounds.bounds_lower, bounds.bounds_upper),
                                     planner_id, share, should_stop, attempt)
        waypoints = result.waypoints
        if waypoints is not None and search_check.resolution > check.resolution:
            waypoints = _refined(check, waypoints, bounds, deadline, should_stop)
        if waypoints is None:
            continue
        length = float(np.linalg.norm(np.diff(waypoints, axis=0), axis=1).sum())
        if best is None or length < best[0]:
            best = (length, waypoints)
        check.states_checked += search_check.states_checked
        search_check.states_checked = 0
    if best is None:
        return None
    waypoints = best[1]
    reached = int(np.argmin(np.abs(goals - waypoints[-1]).max(axis=1)))
    waypoints[-1] = goals[reached]
    return waypoints, candidates[reached]


def _refined(check: PathCheck, waypoints: np.ndarray, bounds: GroupLimits, deadline: float,
             should_stop) -> np.ndarray | None:
    """``waypoints`` with every segment that fails ``check`` (finer than the search's) searched again at
    ``check``'s resolution (by the default planner: it stops at its first path); None when one cannot be within
    the deadline."""
    refined = [waypoints[0]]
    for q_from, q_to in zip(waypoints[:-1], waypoints[1:]):
        if not check.segment_free(q_from, q_to):
            detour = search_path(check, q_from, q_to[None, :], (bounds.bounds_lower, bounds.bounds_upper),
                                 DEFAULT_PLANNER, deadline - time.perf_counter(), should_stop)
            if detour.waypoints is None:
                return None
            refined += list(detour.waypoints[1:-1])
        refined.append(q_to)
    return np.array(refined)


def _no_valid_goal(reports: list[StateDiagnosis]) -> tuple[ErrorCode, str, str]:
    """(code, failure, message) when no goal has a valid candidate."""
    described = "; ".join(f"{r.what}: {_described(r)}" for r in reports)
    if all(r.limit_violations and not r.collisions for r in reports):
        return ErrorCode.GOAL_STATE_INVALID, "goals_outside_limits", f"every goal is outside the limits: {described}"
    if any(r.collisions for r in reports):
        return ErrorCode.GOAL_IN_COLLISION, "blocked_goals", f"every goal is blocked: {described}"
    if all(r.other and not r.limit_violations for r in reports) and any(
            "no IK solution" in text for r in reports for text in r.other):
        return ErrorCode.NO_IK_SOLUTION, "no_goal_solution", f"no goal can be reached: {described}"
    return ErrorCode.GOAL_STATE_INVALID, "blocked_goals", f"no goal is valid: {described}"


def _described(report: StateDiagnosis) -> str:
    parts = []
    if report.collisions:
        parts.append("in collision (" + ", ".join(f"{a} - {b}" for a, b in report.collisions) + ")")
    if report.limit_violations:
        parts.append("outside the joint limits (" + ", ".join(report.limit_violations) + ")")
    parts += list(report.other)
    return "; ".join(parts) or "valid"


def _named(goal: Goal) -> str:
    return f" ({goal.name})" if goal.name else ""


def _check_choice(value: str, choices: tuple[str, ...], what: str) -> None:
    if value not in choices:
        raise PlanningError(f"{what} must be one of {list(choices)}; got {value!r}")


def _unit(direction: Sequence[float]) -> np.ndarray:
    vector = np.asarray(direction, dtype=float)
    norm = float(np.linalg.norm(vector)) if vector.shape == (3,) else math.nan
    if not (math.isfinite(norm) and norm > 1e-12):
        raise PlanningError(f"a direction is a non-zero 3-vector; got {direction!r}")
    return vector / norm


def _approach_direction(approach: Approach, T_touch: np.ndarray) -> np.ndarray:
    """The unit direction a touch approach moves along: the given one, or the touch pose's z axis (the tool axis)."""
    return _unit(approach.direction) if approach.direction is not None else T_touch[:3, 2]


def _tip_transform(plugin: KinematicsPlugin, q: np.ndarray) -> np.ndarray:
    _ok, (pose,) = plugin.getPositionFK(plugin.getTipFrames(), q.tolist())
    return transform_from_any_pose(pose)


def _pre_touch_goal(plugin: KinematicsPlugin, goal: PoseGoal, approach: Approach) -> PoseGoal:
    """The tip's pose goal ``approach.distance`` back from the touch pose, against the approach direction
    (default: the touch pose's z axis, the tool axis); the goal's ``accept`` is not its."""
    if goal.link and goal.link != plugin.getTipFrames()[0]:
        raise PlanningError(f"a touch goal is a pose of the tip {plugin.getTipFrames()[0]!r}; got link {goal.link!r}")
    try:
        T_goal = transform_from_any_pose(goal.pose)
    except KinematicsError as error:
        raise PlanningError(f"touch goal: {error}") from None
    direction = _approach_direction(approach, T_goal)
    T_pre = T_goal.copy()
    T_pre[:3, 3] -= approach.distance * direction
    return PoseGoal(T_pre, "", None, goal.name)  # ``accept`` is for the touch configuration, at the approach's end


def _retraction_target(plugin: KinematicsPlugin, q_start: np.ndarray, retract: Approach) -> np.ndarray:
    """Where a retraction takes the tip: ``retract.distance`` along its direction (default: back along the tip's
    z axis, the way a touch approach came)."""
    T_start = _tip_transform(plugin, q_start)
    direction = _unit(retract.direction) if retract.direction is not None else -T_start[:3, 2]
    T_to = T_start.copy()
    T_to[:3, 3] += retract.distance * direction
    return T_to


def _linear_motion(plugin: KinematicsPlugin, check: PathCheck, q_from: np.ndarray, T_to: np.ndarray,
                   budget: Budget) -> np.ndarray | str:
    """The configurations of the tip's straight-line motion from ``q_from`` to ``T_to``, or why it stopped."""
    def validity(q: np.ndarray) -> Verdict:
        problem = check.state_problem(q)
        return Verdict(ErrorCode.SUCCESS) if not problem else Verdict(ErrorCode.GOAL_IN_COLLISION, problem)

    path = compute_cartesian_path(plugin, q_from, [T_to], LINEAR_STEP, validity=validity, budget=budget)
    return path.positions if path.complete else path.stop_reason
