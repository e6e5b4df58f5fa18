"""Collision-free motions to one of several goals (ROS-free), as Zivid Motion's planner and move_group plan them.

``plan`` is a pipeline of short steps, each returning its value or the plan's failure (a ``MotionPlan``): the
request validated (``PlanOptions`` once, at construction; the start and goals here), the start diagnosed, the
retraction (a ``retract`` plan starts with a straight-line retraction), the candidates (every goal turned into
candidate configurations by ``goals``; those outside the limits, in collision or off the goal and path checks
dropped), the search for a path to one of the rest (the straight joint motion when it is free, the shortest path
there is, else a compiled RRT-Connect on the robot's spheres, ``sphere_search``, for the default planner, or OMPL's
planner, ``ompl_search``, when that finds nothing; a ``touch`` motion ends with a straight-line approach to its pose
goal, the Cartesian planner), the blend radii (when asked), the timing (the path densified to steps of at most
``resolution`` per joint, timed within the scaled joint limits; joint moves timed and proven on the spheres in one
compiled call, ``proven_moves``) and the final check of the timed trajectory: every point checked, and every state
between two points proven free (``motion_bound``), a joint segment with a point that fails searched again at that
resolution, one not proven searched again with the links' clearance grown (``proof_repair``); a trajectory that
fails a check or is not proven is never returned (where the proof cannot be made, link meshes checked as triangles
or paddings with an attached object, its points are checked alone).

Failures say why, as Zivid's errors: the start is blocked (the colliding bodies, the joints out of their limits),
every goal is blocked or outside the limits, or no path was found within the time.
"""
from __future__ import annotations

import time
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from ..collision.checker import CollisionChecker
from ..collision.sphere_world import free_for_spheres
from ..errors import ErrorCode, Verdict
from ..geometry.poses import transform_from_any_pose
from ..ik.budget import UNBOUNDED, Budget
from ..ik.plugin import KinematicsPlugin
from ..state_check import StateCheck
from .blending import blend_radii, blended_trajectory
from .cartesian_path import compute_cartesian_path
from .goals import Candidates, Goal, GoalError, GroupLimits, PoseGoal, goal_candidates, pose_candidates
from .ompl_search import DEFAULT_PLANNER
from .options import TOUCH_NEEDS, Approach, PlanningError, PlanOptions, unit_direction
from .path_check import PathCheck, densify
from .proof_repair import nearest_segment, repaired_span
from .proven_moves import proven_joint_moves
from .sphere_proof import checked_path, segment_free
from .sphere_search import fast_or_ompl_search
from .straight_timing import timed_joint_moves
from .time_parameterization import JointLimits, TimedPath, TimeParameterizationError, joint_limits, time_parameterize

#: Part of an attempt's time the search may take: the rest is for re-checking its path at the trajectory's
#: resolution (the optimizing planners, RRT* and BIT*, search until their time is up).
SEARCH_SHARE = 0.8
#: Part of the planning time a repair of the trajectory (``_proven``) may take when the search has used it all (the
#: optimizing planners, RRT* and BIT*, search until their time is up); it may always take the rest of it.
REPAIR_SHARE = 0.25
#: A plan's first detour (``_detour``) is searched at DETOUR_COARSENING times the trajectory's resolution, later ones
#: at it; each is checked at it (the Kinova's cage plans with a detour: 5.3 -> 3.1, 5.2 -> 4.5, 3.4 -> 3.3 ms).
DETOUR_COARSENING = 3
#: Step of a touch motion's approach and of a retraction [m].
LINEAR_STEP = 0.005
#: Candidate configurations of a touch goal tried for the straight approach (the nearest to the start first).
MAX_TOUCH_CANDIDATES = 8
#: ``plan``'s options when none are given.
DEFAULT_OPTIONS = PlanOptions()


@dataclass(frozen=True)
class Waypoint:
    """A waypoint of the path: ``motion`` "joint" (a straight joint move from the previous one) or "linear" (a
    straight line of the link); ``blend_radius`` keeps a blended motion through it collision-free: between joint
    moves a joint-space distance [rad], where a linear move meets it metres of the tip's travel [m], as Zivid states
    it (0 at the ends and inside runs of linear moves; ``blending``)."""

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
    #: Whether ``positions`` hold only the points a controller needs (``controller_points.sparse_plan``).
    controller_points_only: bool = False

    @property
    def success(self) -> bool:
        return self.error_code == ErrorCode.SUCCESS


@dataclass
class _Candidate:
    goal_index: int
    q: np.ndarray
    approach: np.ndarray | None = None  # (points, joints) of a touch motion's approach, q first


def plan(plugin: KinematicsPlugin, checker: CollisionChecker, start: Sequence[float], goals: Sequence[Goal],
         options: PlanOptions = DEFAULT_OPTIONS, *, base_state=None, path_check: StateCheck | None = None,
         budget: Budget = UNBOUNDED) -> MotionPlan:
    """A collision-free motion of the plugin's group from ``start`` (its joint values, ``getJointNames()`` order)
    to one of ``goals``, planned as ``options`` say, within ``options.planning_time`` [s] (the final check and
    timing of the trajectory come after; so does its repair when the search used the whole time, within
    REPAIR_SHARE of it) or until ``budget.should_stop()`` (the caller's stop hook, also given to the IK searches
    of pose goals and linear moves). ``base_state`` gives the other joints (a mapping or a full state vector;
    default: the checker's zeros). ``path_check`` holds at every state of the path (bound here to the plugin's
    model and ``checker``, as each pose goal's ``check`` is). PlanningError for a malformed request; a plan that
    fails is a MotionPlan saying why."""
    run = _Run.validated(plugin, checker, start, goals, options, base_state, path_check, budget)
    start_report = _start_diagnosis(run)
    if isinstance(start_report, MotionPlan):
        return start_report
    prefix = _retraction(run)
    if isinstance(prefix, MotionPlan):
        return prefix
    q_free = prefix[-1].positions
    reached = _candidates(run, q_free, start_report)
    if isinstance(reached, MotionPlan):
        return reached
    candidates, diagnosis = reached
    found = _search(run, q_free, candidates, diagnosis)
    if isinstance(found, MotionPlan):
        return found
    joint_path, candidate = found
    proven = _proven(run, _path_waypoints(prefix, joint_path, candidate))
    if isinstance(proven, MotionPlan):
        return proven
    return _answer(run, *proven, candidate, diagnosis)


class _Run:
    """One plan under way: its validated request and what its steps share (the group, its checks, its clock)."""

    def __init__(self, plugin: KinematicsPlugin, q_start: np.ndarray, goals: Sequence[Goal], options: PlanOptions,
                 check: PathCheck, budget: Budget, began: float):
        self.plugin, self.q_start, self.goals, self.options = plugin, q_start, goals, options
        self.check, self.budget, self.began = check, budget, began
        self.names = tuple(plugin.getJointNames())
        self.bounds = GroupLimits(plugin, q_start)
        self.deadline = began + options.planning_time
        self.should_stop = budget.should_stop

    @classmethod
    def validated(cls, plugin: KinematicsPlugin, checker: CollisionChecker, start, goals: Sequence[Goal],
                  options: PlanOptions, base_state, path_check: StateCheck | None, budget: Budget) -> _Run:
        """The request checked (PlanningError naming the valid choices for anything malformed), the path check
        bound to the plugin's model and ``checker``."""
        began = time.perf_counter()
        if not isinstance(options, PlanOptions):
            raise PlanningError(f"options is a PlanOptions; got {type(options).__name__}")
        if not goals:
            raise PlanningError("plan needs at least one goal")
        if options.motion == "touch" and not any(isinstance(goal, PoseGoal) for goal in goals):
            raise PlanningError(TOUCH_NEEDS)
        names = plugin.getJointNames()
        q_start = np.asarray(start, dtype=float)
        if q_start.shape != (len(names),) or not np.isfinite(q_start).all():
            raise PlanningError(f"start needs one finite value per joint {list(names)}; got {list(start)!r}")
        check = PathCheck.of(checker, names, base_state, options.resolution, path_check, plugin.robot_model)
        return cls(plugin, q_start, goals, options, check, budget, began)

    def failed(self, code: ErrorCode, failure: str, message: str,
               diagnosis: tuple[StateDiagnosis, ...] = ()) -> MotionPlan:
        return MotionPlan(self.names, code, message, failure, planning_time=time.perf_counter() - self.began,
                          diagnosis=diagnosis)

    def diagnose(self, what: str, q: np.ndarray) -> StateDiagnosis:
        violations, state = tuple(self.bounds.violations(q)), self.check.full_state(q)
        pairs = () if free_for_spheres(self.check.checker, state) else self.check.checker.check(state).pairs
        return StateDiagnosis(what, pairs, violations, (other,) if (other := self.check.validity_problem(q)) else ())

    def link_poses(self, q: np.ndarray) -> Mapping[str, np.ndarray]:
        """T_model_link (4, 4) of every link with the group at ``q``, the other joints at the base state."""
        model = self.plugin.robot_model
        return dict(zip(model.link_names, model.tree.link_poses(self.check.full_state(q))))

    def tip_positions(self, positions: np.ndarray) -> np.ndarray:
        """The tip's position [m] (k, 3), in the plugin's base frame, at each row of ``positions`` (k, dof)."""
        return np.array([_tip_transform(self.plugin, q)[:3, 3] for q in positions])

    def trajectory_verdict(self, positions: np.ndarray, proof: tuple | None = None) -> tuple[str, int | None, int]:
        """(why a densified path cannot be returned, "" when it can: a state in collision, off the path constraints
        or outside the limits; when it can, ``first_unproven``'s answer; the invalid point, -1 when there is none or
        the path leaves the limits), the spheres' proof first (``sphere_proof``; ``proof``: made already)."""
        outside = self.bounds.first_outside(positions)
        if outside >= 0:
            return "joint limits: " + ", ".join(self.bounds.violations(positions[outside])), -1, -1
        invalid, unproven = checked_path(self.check, positions, proof=proof)
        if invalid < 0:
            return "", unproven, -1
        return f"point {invalid}: {self.check.state_problem(positions[invalid])}", -1, invalid


def _start_diagnosis(run: _Run) -> StateDiagnosis | MotionPlan:
    """The start's diagnosis, or the failure of a blocked start."""
    report = run.diagnose("start", run.q_start)
    if report.valid:
        run.check.fixed_pairs_free = True  # the start is free: so are the pairs the group does not move, throughout
        return report
    code = ErrorCode.START_STATE_INVALID if report.limit_violations else (
        ErrorCode.START_STATE_IN_COLLISION if report.collisions else ErrorCode.START_STATE_VIOLATES_PATH_CONSTRAINTS)
    return run.failed(code, "blocked_start", f"the start is blocked: {_described(report)}", (report,))


def _retraction(run: _Run) -> list[Waypoint] | MotionPlan:
    """The path's first waypoints: the start, then the retraction's (when asked), or the retraction's failure."""
    prefix = [Waypoint(run.q_start, "joint")]
    retract = run.options.retract
    if retract is None:
        return prefix
    target = _retraction_target(run.plugin, run.q_start, retract)
    retraction = _linear_motion(run.plugin, run.check, run.q_start, target, run.budget)
    if isinstance(retraction, str):
        return run.failed(ErrorCode.PLANNING_FAILED, "blocked_start", f"the retraction stopped: {retraction}")
    return prefix + [Waypoint(q, "linear") for q in retraction[1:]]


def _candidates(run: _Run, q_free: np.ndarray,
                start_report: StateDiagnosis) -> tuple[list[_Candidate], list[StateDiagnosis]] | MotionPlan:
    """Every goal's valid candidates reached from ``q_free`` and the diagnosis (the start's, then each goal's),
    or the failure when no goal has one."""
    T_model_links = run.link_poses(q_free) if any(isinstance(goal, PoseGoal) for goal in run.goals) else None
    candidates, diagnosis = [], [start_report]
    for index, goal in enumerate(run.goals):
        found, report = _goal_candidates(run, index, goal, q_free, T_model_links)
        candidates += found
        diagnosis.append(report)
    if not candidates:
        code, failure, message = _no_valid_goal(diagnosis[1:])
        return run.failed(code, failure, message, tuple(diagnosis))
    return candidates, diagnosis


def _goal_candidates(run: _Run, index: int, goal: Goal, q_free: np.ndarray,
                     T_model_links: Mapping[str, np.ndarray]) -> tuple[list[_Candidate], StateDiagnosis]:
    """The goal's valid candidates and its diagnosis (why the others are not). A touch goal's candidates are
    those of its pre-touch pose, each with its approach; the goal's check is held at the approach's end."""
    what = f"goal {index}{_named(goal)}"
    plugin, bounds, deadline, budget = run.plugin, run.bounds, run.deadline, run.budget
    accept = goal.check.problem(plugin.robot_model, run.check.checker) \
        if isinstance(goal, PoseGoal) and goal.check is not None else None
    touch = run.options.motion == "touch" and isinstance(goal, PoseGoal)
    try:
        if touch:
            T_pre = _pre_touch_pose(plugin, goal, run.options.approach)
            reached = pose_candidates(T_pre, plugin, q_free, bounds, deadline, budget)
        else:
            reached = goal_candidates(goal, plugin, q_free, bounds, deadline, budget, T_model_links, accept)
    except GoalError as error:
        raise PlanningError(f"{what}: {error}") from None
    return _valid_candidates(run, what, index, reached, goal.link_target if touch else None, accept)


def _valid_candidates(run: _Run, what: str, index: int, reached: Candidates, T_touch: np.ndarray | None,
                      accept) -> tuple[list[_Candidate], StateDiagnosis]:
    """The candidates of ``reached`` free of collisions, within the limits and the path check (and for a touch
    goal, with a free approach to ``T_touch`` ending where ``accept`` passes), with the goal's diagnosis."""
    if not len(reached.configurations):
        return [], StateDiagnosis(what, other=(reached.reason,))
    found, collisions, violations, other = [], Counter(), [], Counter()
    for q in reached.configurations:
        report = run.diagnose(what, q)
        if not report.valid:
            collisions.update(report.collisions)
            violations += report.limit_violations
            other.update(report.other)
            continue
        candidate = _Candidate(index, q)
        if T_touch is not None:
            if len(found) >= MAX_TOUCH_CANDIDATES:
                break
            path = _linear_motion(run.plugin, run.check, q, T_touch, run.budget)
            if isinstance(path, str):
                other[f"the approach stopped: {path}"] += 1
                continue
            rejected = accept(path[-1]) if accept is not None else None
            if rejected:
                other[f"the touch configuration: {rejected}"] += 1
                continue
            candidate.approach = path
        found.append(candidate)
    if found:
        return found, StateDiagnosis(what)
    return [], StateDiagnosis(what, tuple(collisions), tuple(dict.fromkeys(violations)), tuple(other))


def _search(run: _Run, q_free: np.ndarray, candidates: list[_Candidate],
            diagnosis: list[StateDiagnosis]) -> tuple[np.ndarray, _Candidate] | MotionPlan:
    """The joint path from ``q_free`` to one of the candidates (all at once for the shortest path, goal by goal in
    list order), or the failure: stopped, or no path within the planning time."""
    options, should_stop = run.options, run.should_stop
    groups = ([candidates] if options.prioritization == "shortest_path" else
              [[c for c in candidates if c.goal_index == index] for index in range(len(run.goals))])
    groups = [group for group in groups if group]
    for position, group in enumerate(groups):
        share = (run.deadline - time.perf_counter()) / (len(groups) - position)
        found = _path_to_one_of(run.check, options.search_resolution, q_free, group, run.bounds, options.planner_id,
                                share, options.attempts, should_stop)
        if found is not None:
            return found
        if should_stop():
            break
    # The stop hook also ends a search at the budget's deadline, as the search's own timeout would: that is a
    # timeout, not a stop (a node's scheduler ends its request's plan so).
    budget_over = run.budget.time_left() <= 0
    stopped = should_stop() and not budget_over
    allowed = time.perf_counter() - run.began if budget_over else options.planning_time
    return run.failed(ErrorCode.PREEMPTED if stopped else ErrorCode.TIMED_OUT,
                      "stopped" if stopped else "blocked_path",
                      ("planning was stopped" if stopped else
                       f"no collision-free path found within {allowed:.3g} s "
                       f"({options.planner_id}; the start and {len(candidates)} goal configuration(s) are free)"),
                      tuple(diagnosis) if options.diagnose else ())


def _path_waypoints(prefix: list[Waypoint], joint_path: np.ndarray, candidate: _Candidate) -> list[Waypoint]:
    """The waypoints: the prefix, the joint path, a touch goal's approach."""
    waypoints = prefix + [Waypoint(q, "joint") for q in joint_path[1:]]
    if candidate.approach is not None:
        waypoints += [Waypoint(q, "linear") for q in candidate.approach[1:]]
    return waypoints


def _blended(run: _Run, waypoints: list[Waypoint]) -> list[Waypoint]:
    """The waypoints with their blend radii."""
    radii = blend_radii(run.check, [w.positions for w in waypoints], [w.motion for w in waypoints], run.deadline,
                        run.tip_positions)
    return [Waypoint(w.positions, w.motion, r) for w, r in zip(waypoints, radii)]


def _timed(run: _Run, waypoints: list[Waypoint]) -> tuple[np.ndarray, TimedPath, tuple | None] | MotionPlan:
    """(positions, timing, the spheres' proof of a path of joint moves: ``proven_joint_moves``) of the path within
    the scaled limits, or the failure when it cannot be timed."""
    options = run.options
    limits = options.limits or joint_limits(run.plugin.robot_model, run.names)
    try:
        scaled = limits.scaled(options.velocity_scaling, options.acceleration_scaling)
        if options.blend:
            return *blended_trajectory([w.positions for w in waypoints], [w.motion for w in waypoints],
                                       [w.blend_radius for w in waypoints], scaled, options.resolution,
                                       run.tip_positions), None
        if all(w.motion == "joint" for w in waypoints[1:]):
            return proven_joint_moves(run.check, np.array([w.positions for w in waypoints]), scaled,
                                      options.resolution)
        return *timed_trajectory(waypoints, scaled, options.resolution), None
    except TimeParameterizationError as error:
        return run.failed(ErrorCode.PLANNING_FAILED, "blocked_path", f"the path cannot be timed: {error}")


def _proven(run: _Run, waypoints: list[Waypoint]) -> tuple[list[Waypoint], np.ndarray, TimedPath] | MotionPlan:
    """The waypoints (with their blend radii when asked) and the timed trajectory through them, once its every point
    passes the final check and the states between its points are proven free (``motion_bound``; where the proof
    cannot be made, as for link meshes checked as triangles, the points alone): a joint segment with a point that
    fails is searched again at the trajectory's resolution (``_detour``: the search checked more coarsely), one not
    proven with grown clearance (``proof_repair``), until it passes (until the planning time is up, or REPAIR_SHARE
    of it after the first repair of each kind began); else the failure."""
    deadline = detour_deadline = None
    while True:
        if run.options.blend or run.options.blend_radii:
            waypoints = _blended(run, waypoints)
        timed = _timed(run, waypoints)
        if isinstance(timed, MotionPlan):
            return timed
        positions, timing, proof = timed
        if proof is not None:
            proof[0][0] = True  # the start: valid (``_start_diagnosis``), not checked again where its spheres touch
        problem, unproven, invalid = run.trajectory_verdict(positions, proof)
        if problem and invalid < 0:
            return run.failed(ErrorCode.PLANNING_FAILED, "blocked_path", f"the path failed its final check: {problem}")
        if not problem and (unproven is None or unproven < 0):
            return waypoints, positions, timing
        points = np.array([w.positions for w in waypoints])
        if problem:  # a point between the search's checks (it checks more coarsely) collides: search its segment again
            first_detour, detour_deadline = detour_deadline is None, detour_deadline or _repair_deadline(run)
            detour = _detour(run, points, [w.motion for w in waypoints], nearest_segment(points, positions[invalid]),
                             detour_deadline, first_detour)
            if detour is None:
                return run.failed(ErrorCode.PLANNING_FAILED, "blocked_path",
                                  f"the path failed its final check: {problem}")
            first, last, between = detour
            waypoints = waypoints[:first + 1] + [Waypoint(q, "joint") for q in between] + waypoints[last:]
            continue
        deadline = deadline or _repair_deadline(run)
        segment = nearest_segment(points, (positions[unproven] + positions[unproven + 1]) / 2)
        repair = repaired_span(run.check, points, [w.motion for w in waypoints], segment,
                               (run.bounds.bounds_lower, run.bounds.bounds_upper), deadline, run.should_stop)
        if repair is None:
            return run.failed(ErrorCode.PLANNING_FAILED, "blocked_path",
                              f"the path failed its final check: the states between its points {unproven} and "
                              f"{unproven + 1} are not proven free of collisions, and no detour with more clearance "
                              f"was found within the planning time")
        first, last, detour = repair
        waypoints = waypoints[:first + 1] + [Waypoint(q, "joint") for q in detour[1:-1]] + waypoints[last:]


def _answer(run: _Run, waypoints: list[Waypoint], positions: np.ndarray, timing: TimedPath,
            candidate: _Candidate, diagnosis: list[StateDiagnosis]) -> MotionPlan:
    """The successful plan of a checked trajectory; a touch plan's retraction."""
    goal, approach = run.goals[candidate.goal_index], run.options.approach
    retraction = None
    if candidate.approach is not None:
        retraction = Approach(approach.distance, tuple(-_approach_direction(approach, goal.T_base_link)))
    return MotionPlan(run.names, ErrorCode.SUCCESS,
                      f"reached goal {candidate.goal_index}{_named(goal)}: {len(waypoints)} waypoints, "
                      f"{len(positions)} points, {timing.time_from_start[-1]:.3f} s; {run.check.states_checked} "
                      f"states checked", "", tuple(waypoints), positions, timing, candidate.goal_index,
                      time.perf_counter() - run.began, tuple(diagnosis) if run.options.diagnose else (), retraction)


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
    rest = np.zeros((1, len(waypoints[0].positions)))
    positions, times, velocities, accelerations = [waypoints[0].positions[None, :]], [np.zeros(1)], [rest], [rest]
    offset, first = 0.0, 0
    while first < len(runs):
        last = next((k for k in range(first, len(runs)) if len(runs[k]) > 2), len(runs))
        if last > first:  # straight moves, each from rest to rest, timed in one call
            dense, timed = timed_joint_moves(np.array([run[0] for run in runs[first:last]] + [runs[last - 1][1]]),
                                             limits, resolution)
        else:
            dense = densify(runs[first], resolution)
            timed, last = time_parameterize(dense, limits), first + 1
        for parts, values in ((positions, dense), (times, offset + timed.time_from_start),
                              (velocities, timed.velocities), (accelerations, timed.accelerations)):
            parts.append(values[1:])
        offset, first = offset + float(timed.time_from_start[-1]), last
    return np.concatenate(positions), TimedPath(np.concatenate(times), np.concatenate(velocities),
                                                np.concatenate(accelerations))


def _path_to_one_of(check: PathCheck, search_resolution: float, q_start: np.ndarray, candidates: list[_Candidate],
                    bounds: GroupLimits, planner_id: str, time_limit: float, attempts: int,
                    should_stop) -> tuple[np.ndarray, _Candidate] | None:
    """The shortest path found to one of the candidates: the straight motion to the nearest candidate it is free
    to (no path to any candidate is shorter than the straight one to it), else the shortest of ``attempts``
    searches. Every segment of the answer is free at ``search_resolution`` (the trajectory's final check, at
    ``check``'s, searches again a segment that fails it)."""
    search_check = check.with_resolution(max(search_resolution, check.resolution))
    nearest_first = [0] if len(candidates) == 1 else np.argsort(
        [np.linalg.norm(c.q - q_start) for c in candidates], kind="stable")
    straight = next((k for k in nearest_first if segment_free(search_check, q_start, candidates[k].q)), None)
    check.states_checked += search_check.states_checked
    search_check.states_checked = 0
    if straight is not None:
        return np.array([q_start, candidates[straight].q]), candidates[straight]
    goals = np.array([c.q for c in candidates])
    deadline = time.perf_counter() + time_limit
    best = None
    for attempt in range(max(1, attempts)):
        remaining = deadline - time.perf_counter()
        if remaining <= 0 or should_stop():
            break
        share = SEARCH_SHARE * remaining / (max(1, attempts) - attempt)
        result = fast_or_ompl_search(search_check, q_start, goals, (bounds.bounds_lower, bounds.bounds_upper),
                                     planner_id, share, should_stop, attempt)
        waypoints = result.waypoints
        if waypoints is None:
            continue
        length = float(np.linalg.norm(np.diff(waypoints, axis=0), axis=1).sum()) if attempts > 1 else 0.0
        if best is None or length < best[0]:
            best = (length, waypoints)
        check.states_checked += search_check.states_checked
        search_check.states_checked = 0
    if best is None:
        return None
    waypoints = best[1]
    reached = 0 if len(goals) == 1 else int(np.argmin(np.abs(goals - waypoints[-1]).max(axis=1)))
    waypoints[-1] = goals[reached]
    return waypoints, candidates[reached]


def _repair_deadline(run: _Run) -> float:
    """When the repairs of a trajectory begun now must end: the planning time's end, or REPAIR_SHARE of it from now
    when that is later (the search may have used it all)."""
    return max(run.deadline, time.perf_counter() + REPAIR_SHARE * run.options.planning_time)


def _detour(run: _Run, points: np.ndarray, motions: Sequence[str], segment: int, deadline: float,
            first: bool) -> tuple[int, int, list[np.ndarray]] | None:
    """(first, last, between): the joint segment ``segment`` (from ``points[segment]`` to the next) searched again
    at the trajectory's resolution (coarser for the ``first`` detour: DETOUR_COARSENING) by the default planner (the
    spheres' search first: ``fast_or_ompl_search``), ``between`` its inner waypoints; None for a linear segment, an
    end that is not free, or no detour before ``deadline``."""
    q_from, q_to, fine = points[segment], points[segment + 1], run.check.resolution
    if motions[segment + 1] != "joint" or time.perf_counter() >= deadline or not (
            run.check.state_free(q_from) and run.check.state_free(q_to)):
        return None
    detour_check = run.check.with_resolution(DETOUR_COARSENING * fine if first else fine)
    detour = fast_or_ompl_search(detour_check, q_from, q_to[None, :],
                                 (run.bounds.bounds_lower, run.bounds.bounds_upper), DEFAULT_PLANNER,
                                 deadline - time.perf_counter(), run.should_stop)
    run.check.states_checked += detour_check.states_checked
    return None if detour.waypoints is None else (segment, segment + 1, list(detour.waypoints[1:-1]))


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


def _approach_direction(approach: Approach, T_touch: np.ndarray) -> np.ndarray:
    """The unit direction a touch approach moves along: the given one, or the touch pose's z axis (the tool axis)."""
    return unit_direction(approach.direction) if approach.direction is not None else T_touch[:3, 2]


def _tip_transform(plugin: KinematicsPlugin, q: np.ndarray) -> np.ndarray:
    _ok, (pose,) = plugin.getPositionFK(plugin.getTipFrames(), q.tolist())
    return transform_from_any_pose(pose)


def _pre_touch_pose(plugin: KinematicsPlugin, goal: PoseGoal, approach: Approach) -> np.ndarray:
    """T_base_tip (4, 4) ``approach.distance`` back from the touch pose, against the approach direction (default:
    the touch pose's z axis, the tool axis: the goal's tool frame's, with a ``tcp``)."""
    if goal.link and goal.link != plugin.getTipFrames()[0]:
        raise PlanningError(f"a touch goal is a pose of the tip {plugin.getTipFrames()[0]!r}; got link {goal.link!r}")
    T_pre = goal.link_target  # the tip's pose: moved as the tool frame is, along the tool's axis
    T_pre[:3, 3] -= approach.distance * _approach_direction(approach, goal.T_base_link)
    return T_pre


def _retraction_target(plugin: KinematicsPlugin, q_start: np.ndarray, retract: Approach) -> np.ndarray:
    """Where a retraction takes the tip: ``retract.distance`` along its direction (default: back along the tip's
    z axis, the way a touch approach came)."""
    T_start = _tip_transform(plugin, q_start)
    direction = unit_direction(retract.direction) if retract.direction is not None else -T_start[:3, 2]
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
