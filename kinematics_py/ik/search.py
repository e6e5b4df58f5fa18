"""Global IK search: compiled multi-start local searches, wrapped with time budget, verification,
validity callbacks and solution preferences. ROS-free; poses are 4x4 ``T_base_tip`` arrays.
"""
from __future__ import annotations

import itertools
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from ..errors import ErrorCode, Verdict
from . import kernels
from .budget import UNBOUNDED, Budget
from .problem import SolverSetup

#: Two solutions closer than this in every joint [rad or m] count as the same solution.
DISTINCT_SOLUTION_TOLERANCE = 1e-3
#: Random starts tried per compiled call between two clock checks (the first call also tries the seed).
STARTS_PER_CALL = 8

#: validity callback: q -> True/False, an ErrorCode (SUCCESS accepts) or a Verdict.
ValidityCallback = Callable[[np.ndarray], "bool | ErrorCode | Verdict"]


@dataclass
class SearchOutcome:
    """What a search found. ``solution`` is None unless ``error_code`` is SUCCESS."""

    error_code: ErrorCode
    message: str
    solution: np.ndarray | None = None
    approximate: bool = False
    solutions: list[np.ndarray] = field(default_factory=list)
    reached: int = 0
    rejected: int = 0
    searches: int = 0
    elapsed: float = 0.0


def verdict_of(answer) -> Verdict:
    """A validity callback's answer (bool, ErrorCode, int or Verdict) as a Verdict; anything else (None, an int
    that is no MoveIt error code) rejects the solution with a reason saying what the callback returned."""
    if isinstance(answer, Verdict):
        return answer
    if isinstance(answer, (bool, np.bool_)):
        return Verdict(ErrorCode.SUCCESS if answer else ErrorCode.NO_IK_SOLUTION)
    if isinstance(answer, (int, np.integer)):
        try:
            return Verdict(ErrorCode(int(answer)))
        except ValueError:
            pass
    return Verdict(ErrorCode.NO_IK_SOLUTION, f"the validity callback returned {answer!r}, which is not a bool, a "
                                             f"MoveIt error code or a Verdict: taken as a rejection")


def wrapped_difference(a: np.ndarray, b: np.ndarray, is_revolute: np.ndarray) -> np.ndarray:
    """a - b, revolute joints' differences wrapped into [-pi, pi] [rad]."""
    difference = a - b
    return np.where(is_revolute, difference - kernels.TWO_PI * np.round(difference / kernels.TWO_PI), difference)


def same_solution(a: np.ndarray, b: np.ndarray, is_revolute: np.ndarray) -> bool:
    """Whether two solutions are the same modulo whole turns of the revolute joints (DISTINCT_SOLUTION_TOLERANCE)."""
    return float(np.max(np.abs(wrapped_difference(a, b, is_revolute)), initial=0.0)) < DISTINCT_SOLUTION_TOLERANCE


def posture_reference(solver: SolverSetup, seed: np.ndarray) -> np.ndarray:
    """The configuration posture mode keeps the branch of: preferred_posture when set, else the seed."""
    return solver.preferred if len(solver.params.preferred_posture) else seed


def preference_costs(solver: SolverSetup, solutions: np.ndarray, seed: np.ndarray,
                     cost_function: Callable[[np.ndarray], float] | None) -> np.ndarray:
    """(k,) what the solve mode (or the cost function) minimises, for each of ``solutions`` (k, n)."""
    solutions = np.asarray(solutions, dtype=float).reshape(-1, solver.problem.dof)
    if cost_function is not None:
        return np.array([float(cost_function(q)) for q in solutions])
    mode = solver.params.solve_mode
    if mode == "distance":  # the motion from the seed (solutions are the whole-turn equivalents nearest it)
        return np.sum(solver.joint_weights * (solutions - seed) ** 2, axis=1)
    if mode == "posture":
        difference = wrapped_difference(solutions, posture_reference(solver, seed), solver.problem.is_revolute)
        return np.sum(solver.joint_weights * difference ** 2, axis=1)
    if mode == "manipulability":
        return np.array([-_manipulability(solver.problem.jacobian(q)) for q in solutions])
    return np.zeros(len(solutions))


def _manipulability(J: np.ndarray) -> float:
    product = J @ J.T if J.shape[0] <= J.shape[1] else J.T @ J
    return math.sqrt(max(np.linalg.det(product), 0.0))


def preferred_solution(solver: SolverSetup, solutions, seed: np.ndarray,
                       cost_function: Callable[[np.ndarray], float] | None) -> np.ndarray:
    """The solution of least ``preference_costs``; among equal costs the nearest the seed (wrapped)."""
    if len(solutions) == 1:
        return solutions[0]
    stacked = np.asarray(solutions, dtype=float)
    nearness = np.sum(wrapped_difference(stacked, seed, solver.problem.is_revolute) ** 2, axis=1)
    return solutions[int(np.lexsort((nearness, preference_costs(solver, stacked, seed, cost_function)))[0])]


def polished(solver: SolverSetup, targets: np.ndarray, seed: np.ndarray, found, candidates: np.ndarray, *,
             locked: np.ndarray | None = None, budget: Budget = UNBOUNDED) -> list[tuple[int, np.ndarray]]:
    """Closed-form candidates that missed the pose (near singularities), each after one numerical local search
    from it (``locked`` joints stay): (index into ``candidates``, solution) for each that converges to a
    solution not in ``found`` nor found before, each joint's whole-turn equivalent nearest the seed."""
    problem = solver.problem
    known, new = list(found), []
    for index, candidate in enumerate(candidates):
        q = IkSearch(solver, targets, candidate, timeout=0.0, local_only=True, locked=locked,
                     budget=budget).run().solution
        if q is None:
            continue
        kernels.wrap_near(q, seed, problem.is_revolute, problem.lower, problem.upper)
        if not any(same_solution(q, other, problem.is_revolute) for other in known):
            known.append(q)
            new.append((index, q))
    return new


def solved_message(elapsed: float, compared: int, searches: int) -> str:
    return f"solved in {elapsed * 1e3:.2f} ms ({compared} distinct solution(s) compared, {searches} local search(es))"


def quick_search(solver: SolverSetup, targets: np.ndarray, seed: np.ndarray, timeout: float,
                 budget: Budget = UNBOUNDED) -> tuple[np.ndarray | None, int]:
    """The first round of a plain search (no callbacks, bounds = the joint limits) in one kernel call: the
    seed, then up to STARTS_PER_CALL - 1 pool restarts (as many as fit in ``timeout`` [s]). Returns (verified
    solution or None, starts used); ``IkSearch(..., resume_after=used)`` carries on from there.

    Notes:
        Most queries end here. Keeping this path short matters most when caches are cold (e.g. a
        process that also runs other solvers), where every Python statement costs several times more.
    """
    unbounded = budget is UNBOUNDED  # the hot path of library calls: no calls for a budget without limits
    if not unbounded and budget.should_stop():
        return None, 0
    problem = solver.problem
    q = np.empty(problem.dof)
    bounds = solver.bounds(problem.lower, problem.upper, seed)
    fitting = starts_fitting(timeout if unbounded else min(timeout, budget.time_left()),
                             solver.timing.seconds_per_start)
    starts = (seed, True, solver.restarts, 0, fitting - 1)  # Starts, packed
    used, found, _, _ = kernels.multi_start_search(solver.tables, targets, bounds, starts, q, math.inf)
    return (q if found else None), used


def starts_fitting(remaining: float, seconds_per_start: float) -> int:
    """How many local searches of ``seconds_per_start`` [s] fit in ``remaining`` [s]: 1 to STARTS_PER_CALL."""
    if seconds_per_start <= 0.0:
        return STARTS_PER_CALL
    return int(min(STARTS_PER_CALL, max(1.0, remaining / seconds_per_start)))


class IkSearch:
    """One IK query: targets, seed and settings; ``run`` searches until done or out of time."""

    def __init__(self, solver: SolverSetup, targets: np.ndarray, seed: np.ndarray, *, timeout: float,
                 local_only: bool = False, consistency_limits: np.ndarray | None = None,
                 locked: np.ndarray | None = None, is_valid: ValidityCallback | None = None,
                 cost_function: Callable[[np.ndarray], float] | None = None, return_approximate: bool = False,
                 collect_all: bool = False, resume_after: int = 0, already_spent: float = 0.0,
                 budget: Budget = UNBOUNDED):
        problem = solver.problem
        self.problem = problem
        self.solver = solver
        self.params = solver.params
        self.targets = np.ascontiguousarray(targets, dtype=float)
        self.seed = np.asarray(seed, dtype=float)
        self.timeout = timeout
        self.local_only = local_only
        self.is_valid = is_valid
        self.cost_function = cost_function
        self.return_approximate = return_approximate
        self.collect_all = collect_all
        self.budget = budget
        #: Starts a ``quick_search`` already tried (the seed and the first pool restarts; 0 for none), and the
        #: time [s] it took out of ``timeout``.
        self.resume_after = resume_after
        self.already_spent = already_spent
        self.consistency_limits = consistency_limits
        lower, upper = problem.lower, problem.upper
        if consistency_limits is not None:
            lower = np.maximum(lower, self.seed - consistency_limits)
            upper = np.minimum(upper, self.seed + consistency_limits)
        if locked is not None and locked.any():
            lower, upper = lower.copy(), upper.copy()
            lower[locked] = upper[locked] = np.clip(self.seed[locked], problem.lower[locked], problem.upper[locked])
        self.lower, self.upper = lower, upper
        self.bounds = solver.bounds(lower, upper, self.seed)

    def run(self) -> SearchOutcome:
        started = time.perf_counter() - self.already_spent
        deadline = started + self.timeout
        outcome = SearchOutcome(ErrorCode.NO_IK_SOLUTION, "")
        wants_more = self.collect_all or self.cost_function is not None or self.params.solve_mode != "speed"
        best_candidate, best_cost = None, math.inf
        last_rejection = None
        problem, solver = self.problem, self.solver
        pool, next_restart, pool_block = solver.restarts, max(self.resume_after - 1, 0), 0
        use_seed = self.resume_after == 0
        count = 0 if self.local_only else STARTS_PER_CALL - use_seed
        if not self.local_only:
            count = starts_fitting(self._time_left(deadline), solver.timing.seconds_per_start) - use_seed
        outcome.searches = self.resume_after
        q = np.empty(problem.dof)
        while not self.budget.should_stop():
            if next_restart + count > len(pool):
                # The shared pool is used up (a long search): continue with fresh, still reproducible draws.
                pool_block += 1
                pool = np.random.default_rng((self.params.random_seed, pool_block)).random(solver.restarts.shape)
                next_restart = 0
            if best_candidate is not None:
                q[:] = best_candidate  # restarts may be drawn near it
            starts = (self.seed, use_seed, pool, next_restart, count)  # Starts, packed
            call_started = time.perf_counter()
            used, found, cost, _ = kernels.multi_start_search(solver.tables, self.targets, self.bounds, starts, q,
                                                              best_cost)
            now = time.perf_counter()
            solver.timing.observe(now - call_started, used)
            outcome.searches += used
            next_restart += used - use_seed
            use_seed = False
            if found:
                outcome.reached += 1
                verdict = self._validity(q) if self.is_valid is not None else None
                if verdict is not None and verdict.error_code not in (ErrorCode.SUCCESS, ErrorCode.GOAL_IN_COLLISION):
                    verdict = self._other_turn(q, verdict, deadline)
                if verdict is None or verdict.error_code == ErrorCode.SUCCESS:
                    if not any(same_solution(q, s, problem.is_revolute) for s in outcome.solutions):
                        outcome.solutions.append(q.copy())
                    if not wants_more or len(outcome.solutions) >= self.params.solutions_to_compare:
                        break
                else:
                    outcome.rejected += 1
                    last_rejection = verdict
            elif cost < best_cost:
                best_cost, best_candidate = cost, q.copy()
            now = time.perf_counter()
            if self.local_only or now >= deadline:
                break
            # As many starts as fit in the time left (at least one): a search ends within its timeout (or the
            # caller's deadline) plus about one local search.
            count = starts_fitting(self._time_left(deadline), solver.timing.seconds_per_start)
        if best_candidate is not None:
            kernels.wrap_near(best_candidate, self.seed, problem.is_revolute, self.lower, self.upper)
        outcome.elapsed = time.perf_counter() - started
        if outcome.solutions:
            outcome.solution = preferred_solution(solver, outcome.solutions, self.seed, self.cost_function)
            outcome.error_code = ErrorCode.SUCCESS
            outcome.message = solved_message(outcome.elapsed, len(outcome.solutions), outcome.searches)
            return outcome
        if self.return_approximate and best_candidate is not None and self._approximate_ok(best_candidate):
            outcome.solution = best_candidate
            outcome.approximate = True
            outcome.solutions = [best_candidate]
            outcome.error_code = ErrorCode.SUCCESS
            errors = self.problem.task_errors(best_candidate, self.targets).max(axis=0)
            outcome.message = (f"approximate solution: position error {errors[0]:.3g} m, rotation error "
                               f"{errors[1]:.3g} rad")
            return outcome
        outcome.error_code, outcome.message = self._failure(outcome, best_candidate, last_rejection)
        return outcome

    def _time_left(self, deadline: float) -> float:
        """Time [s] until ``deadline`` (``time.perf_counter()``) or the caller's budget's."""
        return min(deadline - time.perf_counter(), self.budget.time_left())

    def _approximate_ok(self, q: np.ndarray) -> bool:
        errors = self.problem.weighted_errors(q, self.targets, self.solver.weights)
        return (bool(np.all(errors[:, 0] <= self.params.approximate_solution_position_threshold)
                     and np.all(errors[:, 1] <= self.params.approximate_solution_orientation_threshold))
                and self._validity(q).error_code == ErrorCode.SUCCESS)

    def _other_turn(self, q: np.ndarray, verdict: Verdict, deadline: float) -> Verdict:
        """``q`` rejected for anything but a collision: its whole-turn equivalents within the bounds, nearest the
        seed first, until one is valid (then ``q`` is set to it; a joint constraint may allow another turn of a
        +-2 pi joint, and the local searches end near the seed's turn) or the search's time is up (a chain of six
        +-2 pi joints has 63 of them). The last verdict."""
        alternatives = [other for other in whole_turn_alternatives(self.problem, q, self.seed, self.consistency_limits)
                        if np.all(other >= self.lower - kernels.LIMIT_SLACK)
                        and np.all(other <= self.upper + kernels.LIMIT_SLACK)]  # locked joints stay
        for other in sorted(alternatives, key=lambda other: float(np.linalg.norm(other - self.seed))):
            if self._time_left(deadline) <= 0.0:
                break
            verdict = self._validity(other)
            if verdict.error_code == ErrorCode.SUCCESS:
                q[:] = other
                break
        return verdict

    def _validity(self, q: np.ndarray) -> Verdict:
        return Verdict(ErrorCode.SUCCESS) if self.is_valid is None else verdict_of(self.is_valid(q))

    def _failure(self, outcome: SearchOutcome, best_candidate, last_rejection) -> tuple[ErrorCode, str]:
        budget = "one local search from the seed" if self.local_only else f"{self.timeout * 1e3:.1f} ms"
        if outcome.rejected:
            return last_rejection.error_code, (f"{outcome.reached} solution(s) reached the pose within {budget} but "
                                               f"the validity check rejected all of them (last verdict: "
                                               f"{last_rejection.described()})")
        detail = ""
        if best_candidate is not None:
            errors = self.problem.task_errors(best_candidate, self.targets).max(axis=0)
            detail = f"; closest approach: position error {errors[0]:.3g} m, rotation error {errors[1]:.3g} rad"
        return ErrorCode.NO_IK_SOLUTION, (f"no solution within {budget} ({outcome.searches} local "
                                          f"search(es)){detail}")


def whole_turn_alternatives(problem, q: np.ndarray, seed: np.ndarray,
                            consistency_limits: np.ndarray | None = None) -> list[np.ndarray]:
    """The configurations equal to ``q`` but for whole turns (2 pi) of its bounded revolute joints, within the
    limits (and the consistency limits around ``seed``), ``q`` itself left out."""
    turns = []
    for j, value in enumerate(q):
        lower, upper = problem.lower[j], problem.upper[j]
        if problem.is_revolute[j] and np.isfinite(lower) and np.isfinite(upper):
            first = math.ceil((lower - kernels.LIMIT_SLACK - value) / kernels.TWO_PI)
            last = math.floor((upper + kernels.LIMIT_SLACK - value) / kernels.TWO_PI)
            turns.append(range(first, last + 1))
        else:
            turns.append((0,))
    alternatives = []
    for shift in itertools.product(*turns):
        if any(shift):
            other = q + kernels.TWO_PI * np.asarray(shift, dtype=float)
            if consistency_limits is None or np.all(np.abs(other - seed) <= consistency_limits + kernels.LIMIT_SLACK):
                alternatives.append(other)
    return alternatives
