"""Collision-aware IK (``searchPositionIK(..., avoid_collisions=True)``) and why it ended as it did."""
from __future__ import annotations

import math
import weakref
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import ErrorCode, KinematicsError, RequestError
from . import kernels
from .kernels import LIMIT_SLACK
from .problem import IkProblem, SolverSetup
from .request import IkRequest, ParsedRequest, parse_request
from .results import IKDiagnostics, IKResult, JointLimitViolation, failure
from .search import IkSearch, verdict_of
from .solve import solve_parsed

if TYPE_CHECKING:
    from .group_setup import PluginState

#: Time [s] and least iterations per local search of the follow-up search that explains why nothing
#: reached the pose.
DIAGNOSIS_TIMEOUT = 0.02
DIAGNOSIS_ITERATIONS = 200


def collision_aware_search(state: PluginState, request: IkRequest, context_state: Any, checker) -> IKResult:
    """``solve`` with solutions in collision rejected (other joints at ``context_state``); failures explained
    (KinematicsPlugin.searchPositionIK says how)."""
    if checker is None:
        return failure(ErrorCode.COLLISION_CHECKING_UNAVAILABLE,
                       "avoid_collisions needs a collision checker: call setCollisionChecker() first")
    try:
        parsed = parse_request(state, request)
    except RequestError as error:
        return failure(error.code, str(error))
    try:
        validity = checker.validity(parsed.setup.problem.variable_names, context_state)
    except KinematicsError as error:
        code = getattr(error, "code", ErrorCode.INVALID_ROBOT_STATE)
        return failure(code, f"cannot check collisions: {error}")
    other_rejections = 0
    request_valid = parsed.is_valid

    def is_valid(q: np.ndarray):
        nonlocal other_rejections
        verdict = validity(q)
        if verdict.error_code == ErrorCode.SUCCESS and request_valid is not None:
            verdict = request_valid(q)
            other_rejections += not _accepts(verdict)
        return verdict

    result = solve_parsed(parsed._replace(is_valid=is_valid, local_only=False))
    diagnostics = IKDiagnostics(validity.checks, validity.rejections, validity.colliding_pairs())
    if result.success or result.error_code not in (ErrorCode.NO_IK_SOLUTION, ErrorCode.GOAL_IN_COLLISION):
        return result._replace(diagnostics=diagnostics)
    if validity.rejections and not other_rejections:
        counts = ", ".join(f"{a} - {b} ({n}x)" for (a, b), n in validity.pair_counts.most_common())
        return result._replace(error_code=ErrorCode.GOAL_IN_COLLISION, diagnostics=diagnostics, message=(
            f"{validity.checks} solution(s) reached the pose but every one was in collision: {counts}"))
    if validity.checks:
        return result._replace(diagnostics=diagnostics)
    return explain_unreached(parsed, result, diagnostics)


def explain_unreached(request: ParsedRequest, result: IKResult, diagnostics: IKDiagnostics) -> IKResult:
    """Nothing reached the pose: search on briefly, with long local searches, to tell a pose the time was
    too short for (TIMED_OUT) from one out of reach or beyond the joint limits (NO_IK_SOLUTION, with the
    pose error or the limit violations, from a search with the limits lifted). Consistency limits count
    as joint limits here."""
    problem = request.setup.problem
    targets, q_seed, window, budget = request.targets, request.seed, request.limits, request.budget
    lower, upper = problem.lower, problem.upper
    if window is not None:
        lower, upper = np.maximum(lower, q_seed - window), np.minimum(upper, q_seed + window)
    timed_out = result._replace(error_code=ErrorCode.TIMED_OUT, diagnostics=diagnostics, message=(
        f"the time ran out while still searching: {result.message}; the pose is reachable within the joint "
        f"limits (a follow-up search found a configuration), so a longer timeout may succeed"))
    within, relaxed = diagnosis_solvers(request.setup.solver)
    if IkSearch(within, targets, q_seed, timeout=DIAGNOSIS_TIMEOUT / 2, consistency_limits=window,
                budget=budget).run().solution is not None:
        return timed_out
    outcome = IkSearch(relaxed, targets, q_seed, timeout=DIAGNOSIS_TIMEOUT / 2, collect_all=True,
                       return_approximate=True, budget=budget).run()
    if outcome.solution is None:
        return result._replace(diagnostics=diagnostics)
    if outcome.approximate:
        position, rotation = problem.task_errors(outcome.solution, targets).max(axis=0)
        return result._replace(error_code=ErrorCode.NO_IK_SOLUTION, diagnostics=replace(
            diagnostics, position_error=float(position), rotation_error=float(rotation)), message=(
            f"the pose is out of reach: even without joint limits the closest approach leaves a position "
            f"error of {position:.3g} m and a rotation error of {rotation:.3g} rad"))
    violations = min((limit_violations(problem, q, lower, upper) for q in outcome.solutions),
                     key=lambda found: sum(max(v.lower - v.value, v.value - v.upper) for v in found))
    if not violations:
        return timed_out
    listed = ", ".join(f"{v.joint} = {v.value:.4g} outside [{v.lower:.4g}, {v.upper:.4g}]" for v in violations)
    return result._replace(error_code=ErrorCode.NO_IK_SOLUTION, message=(
        f"the pose is not reachable within the joint limits: reaching it needs {listed}"),
        diagnostics=replace(diagnostics, joint_limit_violations=violations))


#: solver -> its diagnosis solvers: built when a collision-aware search first fails (most never do).
_DIAGNOSIS_SOLVERS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def diagnosis_solvers(solver: SolverSetup) -> tuple[SolverSetup, SolverSetup]:
    """``solver`` with long local searches, within the limits and with revolute joints unbounded and
    prismatic ranges tripled (accepting any closest approach as approximate); built once per solver."""
    found = _DIAGNOSIS_SOLVERS.get(solver)
    if found is None:
        found = _DIAGNOSIS_SOLVERS[solver] = _built_diagnosis_solvers(solver)
    return found


def _built_diagnosis_solvers(solver: SolverSetup) -> tuple[SolverSetup, SolverSetup]:
    problem = solver.problem
    params = solver.params.replace(
        approximate_solution_position_threshold=10.0, approximate_solution_orientation_threshold=math.pi,
        solve_mode="speed", max_iterations=max(solver.params.max_iterations, DIAGNOSIS_ITERATIONS))
    span = np.where(np.isfinite(problem.upper - problem.lower), problem.upper - problem.lower, 0.0)
    lower = np.where(problem.is_revolute, -np.inf, problem.lower - span)
    upper = np.where(problem.is_revolute, np.inf, problem.upper + span)
    relaxed = replace(problem, lower=lower, upper=upper, is_continuous=problem.is_continuous | problem.is_revolute)
    return SolverSetup.build(problem, params), SolverSetup.build(relaxed, params)


def limit_violations(problem: IkProblem, q: np.ndarray, lower: np.ndarray, upper: np.ndarray
                     ) -> tuple[JointLimitViolation, ...]:
    """Joint values outside [lower, upper], revolute joints first shifted by whole turns into (or toward) it."""
    middle = np.where(np.isfinite(lower) & np.isfinite(upper), (lower + upper) / 2, 0.0)
    q = np.where(problem.is_revolute, q + 2 * math.pi * np.round((middle - q) / (2 * math.pi)), q)
    kernels.wrap_near(q, middle, problem.is_revolute, lower, upper)
    outside = (q < lower - LIMIT_SLACK) | (q > upper + LIMIT_SLACK)
    return tuple(JointLimitViolation(problem.variable_names[i], float(q[i]), float(lower[i]), float(upper[i]))
                 for i in np.flatnonzero(outside))


def _accepts(verdict) -> bool:
    """Whether a solution_callback answer (see ``search.verdict_of``) accepts the solution."""
    return verdict_of(verdict).error_code == ErrorCode.SUCCESS
