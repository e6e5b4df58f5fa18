"""The closed form of 7-joint arms inside KinematicsPlugin's searches, one joint locked.

The locked (redundant) joint takes each value of MoveIt's discretization methods, or the seed's value
(``lock_redundant_joints``); per value every branch of the six others, then the same verification,
validity callbacks and solve modes as the numerical search. The joint is the one ``setRedundantJoints``
names when locking it leaves a closed form, else the one chosen at initialize
(``closed_form.redundant.default_locked_joint``).

Per value the branches are every solution within the limits (each joint's whole-turn equivalent nearest
the seed): ALL_DISCRETIZED returns the exact solution set of every value of the grid, and a pose whose
solutions are all rejected has no valid solution at those values. Distance mode takes the nearest solution
over the grid, refined around the nearest value (``nearest_solution_search``). Speed mode keeps the
numerical search, as fast (docs/benchmarks.md).
"""
from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

import numpy as np

from ...errors import ErrorCode
from .. import kernels
from ..budget import UNBOUNDED, Budget
from ..discretization import joint_values
from ..options import DiscretizationMethod, KinematicsQueryOptions
from ..problem import SolverSetup
from ..search import (
    DISTINCT_SOLUTION_TOLERANCE,
    IkSearch,
    SearchOutcome,
    polished,
    preferred_solution,
    same_solution,
)
from .branch_search import call_back_branches, turns_ran_out, verified_branches
from .families import MAX_BRANCHES
from .near_ideal import FamilyTolerance
from .redundant import LockedJointSolver, RedundantChain, redundant_chain

if TYPE_CHECKING:
    from ..group_setup import GroupSetup
    from ..search import ValidityCallback

#: Distance mode's refinement around the nearest value of the grid: rounds, and values per round (each round spans
#: two steps of the previous one: a step of 0.1 rad ends at 0.1 / 4^3, about 1.6e-3 rad).
REFINEMENT_ROUNDS = 3
REFINEMENT_VALUES = 9
#: Distance mode refines around the values of this many nearest solutions (more than a step apart): more are
#: slower and no nearer (docs/benchmarks.md).
REFINED_BASINS = 1
#: Values of the redundant joint solved per compiled call (about 10 us per value); the clock and the
#: caller's budget are checked between calls.
VALUES_PER_CALL = 16


def redundant_closed_form_of(solver: SolverSetup) -> tuple[RedundantChain | None, str]:
    """The closed forms of a 7-joint set-up's problem with one joint locked (or None), and a sentence for the log
    ("" for problems of other sizes)."""
    problem = solver.problem
    if problem.dof != 7 or len(problem.chains) != 1:
        return None, ""
    chain = problem.chains[0]
    if chain.joint_names != problem.variable_names or not np.all(solver.weights > 0.0):
        return None, "no closed form with a joint locked: the group is not one chain solved for full poses"
    found = redundant_chain(chain, FamilyTolerance.of_parameters(solver.params))
    if not found.solvers:
        return None, f"numerical search: {found.report}"
    return found, (f"{found.report}, for the discretization methods, lock_redundant_joints and distance mode; speed "
                   f"mode: numerical search")


def locked_solver(setup: GroupSetup, options: KinematicsQueryOptions, cost_function: Callable | None
                  ) -> LockedJointSolver | None:
    """The solver a request goes to (a discretization method, lock_redundant_joints with a redundant joint set, or
    distance mode without a cost function), or None: the numerical search."""
    redundant = setup.redundant_closed_form
    if redundant is None:
        return None
    if options.discretization_method != DiscretizationMethod.NO_DISCRETIZATION:
        return redundant.for_redundant_joints(setup.redundant_joints)
    if options.lock_redundant_joints:
        return redundant.for_redundant_joints(setup.redundant_joints) if setup.redundant_joints else None
    if setup.solver.params.solve_mode == "distance" and cost_function is None:
        return redundant.for_redundant_joints(setup.redundant_joints)
    return None


def redundant_closed_form_search(setup: GroupSetup, solver: LockedJointSolver, step_of: Callable[[int], float],
                                 targets: np.ndarray, seed: np.ndarray, options: KinematicsQueryOptions, *,
                                 timeout: float, consistency_limits: np.ndarray | None,
                                 is_valid: ValidityCallback | None, cost_function: Callable[[np.ndarray], float] | None,
                                 budget: Budget = UNBOUNDED) -> SearchOutcome | None:
    """Every branch at every value of the redundant joint (the discretization method's, or the seed's when it is
    locked) within ``timeout`` [s], called back value by value, nearest the seed first within a value; None when
    none reaches the pose and the options ask for an approximate solution (the numerical search gives those).
    Distance mode without either: ``nearest_solution_search``."""
    method = options.discretization_method
    if method == DiscretizationMethod.NO_DISCRETIZATION and not options.lock_redundant_joints:
        return nearest_solution_search(setup, solver, step_of, targets, seed, timeout=timeout,
                                       consistency_limits=consistency_limits, is_valid=is_valid, budget=budget)
    started = time.perf_counter()
    deadline = started + timeout
    problem = setup.problem
    joint = solver.locked
    collect_all = method != DiscretizationMethod.NO_DISCRETIZATION
    if collect_all:
        values = joint_values(setup, step_of, seed, [joint], method)[0]
    else:
        values = np.array([min(max(seed[joint], problem.lower[joint]), problem.upper[joint])])
    mode = setup.solver.params.solve_mode
    first_wins = not collect_all and cost_function is None and mode == "speed"
    target = np.ascontiguousarray(targets[0], dtype=np.float64)
    outcome = SearchOutcome(ErrorCode.NO_IK_SOLUTION, "")
    last_rejection, tried, branches, skipped = None, 0, 0, 0
    same_turn_values = _SameTurnValues(values)
    per_value: list[list[np.ndarray]] = []
    for index, found in _solutions_per_value(setup, solver, target, targets, seed, values, deadline, budget):
        if index and is_valid is not None and time.perf_counter() >= deadline:
            break  # the validity checks took the time
        tried = index + 1
        found, _ = verified_branches(setup.solver, targets, seed, found, np.zeros(len(found), np.int64),
                                     consistency_limits)
        branches += len(found)
        earlier = [other for u in same_turn_values.earlier(index) for other in per_value[u]]
        per_value.append([])
        if is_valid is None and not earlier and not first_wins:  # the common case, without a loop
            per_value[-1] = list(found)
            outcome.solutions += per_value[-1]
            outcome.reached += len(found)
            continue
        per_value[-1] = [candidate for candidate in found
                         if not any(same_solution(candidate, other, problem.is_revolute) for other in earlier)]
        if per_value[-1]:
            rejection, not_tried = call_back_branches(outcome, setup.solver, np.array(per_value[-1]), seed, is_valid,
                                                      consistency_limits, stop_at_first=first_wins,
                                                      turns_until=deadline, budget=budget)
            last_rejection, skipped = rejection or last_rejection, skipped + not_tried
        if outcome.solutions and first_wins:
            break
    outcome.elapsed = time.perf_counter() - started
    name = f"closed form, {solver.name}"
    swept = f"{tried} of {len(values)} value(s) of {solver.joint_name}"
    if outcome.solutions:
        outcome.error_code = ErrorCode.SUCCESS
        outcome.solution = preferred_solution(setup.solver, outcome.solutions, seed, cost_function)
        outcome.message = (f"solved in {outcome.elapsed * 1e3:.3f} ms ({name}: {len(outcome.solutions)} valid of "
                           f"{branches} solution(s) within the limits over {swept})")
    elif skipped:
        outcome.error_code, outcome.message = turns_ran_out(outcome, skipped, last_rejection, f"{swept}; {name}")
    elif outcome.rejected:
        outcome.error_code = last_rejection.error_code
        outcome.message = (f"the validity check rejected every one of the {outcome.rejected} solution(s) reaching the "
                           f"pose within the limits over {swept} ({name}: there are no others at these values; "
                           f"last verdict: {last_rejection.described()})")
    elif options.return_approximate_solution:
        return None
    else:
        outcome.message = f"no solution within the limits reaches the pose over {swept} ({name})"
    return outcome


def nearest_solution_search(setup: GroupSetup, solver: LockedJointSolver, step_of: Callable[[int], float],
                            targets: np.ndarray, seed: np.ndarray, *, timeout: float,
                            consistency_limits: np.ndarray | None, is_valid: ValidityCallback | None,
                            budget: Budget = UNBOUNDED) -> SearchOutcome | None:
    """Distance mode: the valid solution nearest the seed (the joint-weighted distance) among every branch at the
    seed's value of the redundant joint and every value of its ALL_DISCRETIZED grid, then at values refined around
    those of the REFINED_BASINS nearest solutions (REFINEMENT_ROUNDS rounds of REFINEMENT_VALUES values each, a
    round two steps of the previous one wide), and the solution of one numerical local search from the seed.
    Solutions are called back nearest first. Certain over those values; a nearer solution can only lie in a basin
    narrower than a step that no grid value falls in, away from the seed's. None when nothing reaches the pose."""
    started = time.perf_counter()
    deadline = started + timeout
    problem = setup.problem
    joint = solver.locked
    weights = setup.solver.joint_weights
    target = np.ascontiguousarray(targets[0], dtype=np.float64)
    grid = joint_values(setup, step_of, seed, [joint], DiscretizationMethod.ALL_DISCRETIZED)[0]
    values = np.append(min(max(seed[joint], problem.lower[joint]), problem.upper[joint]), grid)
    solutions, tried = _solutions_at(setup, solver, target, targets, seed, values, deadline, budget)
    step = step_of(joint)
    for _ in range(REFINEMENT_ROUNDS if len(solutions) and tried == len(values) else 0):
        if time.perf_counter() >= deadline:
            break
        centres = _nearest_values(solutions[:, joint], np.sum(weights * (solutions - seed) ** 2, axis=1), step)
        around = np.unique(np.clip((centres[:, None] + step * np.linspace(-1.0, 1.0, REFINEMENT_VALUES)).ravel(),
                                   problem.lower[joint], problem.upper[joint]))  # clipped values repeat
        solutions = np.vstack([solutions, _solutions_at(setup, solver, target, targets, seed, around, deadline,
                                                                budget)[0]])
        step *= 2.0 / (REFINEMENT_VALUES - 1)
    local = IkSearch(setup.solver, targets, seed, timeout=0.0, local_only=True, budget=budget).run().solution
    if local is not None:  # the solution a local search from the seed reaches: often in a basin between values
        solutions = np.vstack([solutions, local])
    solutions, _ = verified_branches(setup.solver, targets, seed, solutions, np.zeros(len(solutions), np.int64),
                                     consistency_limits)
    if not len(solutions):
        return None
    outcome = SearchOutcome(ErrorCode.NO_IK_SOLUTION, "")
    last_rejection, skipped = call_back_branches(
        outcome, setup.solver, solutions, seed, is_valid, consistency_limits, stop_at_first=True,
        distance=lambda q: float(np.sum(weights * (q - seed) ** 2)), deadline=deadline, turns_until=deadline,
        budget=budget)
    outcome.solution = outcome.solutions[0] if outcome.solutions else None
    outcome.elapsed = time.perf_counter() - started
    name = f"closed form, {solver.name}"
    swept = f"{tried} of {len(values)} value(s) of {solver.joint_name}"
    if outcome.solution is not None:
        outcome.error_code = ErrorCode.SUCCESS
        outcome.message = (f"solved in {outcome.elapsed * 1e3:.3f} ms ({name}: the nearest of {len(solutions)} "
                           f"solution(s) within the limits over {swept}, refined around the nearest, and a local "
                           f"search from the seed)")
    elif skipped:
        outcome.error_code, outcome.message = turns_ran_out(outcome, skipped, last_rejection, f"{swept}; {name}")
    else:
        outcome.error_code = last_rejection.error_code
        outcome.message = (f"the validity check rejected {outcome.rejected} solution(s) reaching the pose within the "
                           f"limits over {swept} ({len(solutions)} and those rejected for other reasons than a "
                           f"collision in their other whole turns), nearest first, "
                           f"{'all' if outcome.rejected >= len(solutions) else 'until the time ran out'} ({name}; "
                           f"last verdict: {last_rejection.described()})")
    return outcome


def _nearest_values(values: np.ndarray, costs: np.ndarray, step: float) -> np.ndarray:
    """The values of the redundant joint of the REFINED_BASINS cheapest solutions, each more than a step from the
    others."""
    centres: list[float] = []
    for index in np.argsort(costs, kind="stable"):
        if all(abs(values[index] - centre) > step for centre in centres):
            centres.append(float(values[index]))
            if len(centres) == REFINED_BASINS:
                break
    return np.array(centres)


def _solutions_at(setup: GroupSetup, solver: LockedJointSolver, target: np.ndarray, targets: np.ndarray,
                  seed: np.ndarray, values: np.ndarray, deadline: float, budget: Budget) -> tuple[np.ndarray, int]:
    """(every in-limit solution (k, 7) at ``values`` of the redundant joint, near misses polished until ``deadline``,
    how many values were solved before it): ``_solutions_per_value`` gathered a compiled call at a time."""
    found, tried = [], 0
    while tried < len(values) and not (tried and (time.perf_counter() >= deadline or budget.should_stop())):
        chunk = values[tried:tried + VALUES_PER_CALL]
        tried += len(chunk)
        q, _, counts, failed = solver.solve_values(target, seed, chunk)
        found.append(q[np.arange(MAX_BRANCHES) < counts[:, None]])
        for v in np.flatnonzero(failed) if time.perf_counter() < deadline else ():
            found.append(_polished_at_value(setup.solver, solver.locked, targets, seed, q[v, :counts[v]],
                                            q[v, MAX_BRANCHES - failed[v]:], budget)[counts[v]:])
    return (np.concatenate(found) if found else np.empty((0, setup.problem.dof))), tried


def _solutions_per_value(setup: GroupSetup, solver: LockedJointSolver, target: np.ndarray, targets: np.ndarray,
                         seed: np.ndarray, values: np.ndarray, deadline: float, budget: Budget
                         ) -> Iterator[tuple[int, np.ndarray]]:
    """(index of the value, every in-limit solution there (k, 7), nearest the seed first, near misses polished), value
    by value, VALUES_PER_CALL per compiled call, until ``deadline`` or the caller's stop hook (one call at least)."""
    tried = 0
    while tried < len(values) and not (tried and (time.perf_counter() >= deadline or budget.should_stop())):
        chunk = values[tried:tried + VALUES_PER_CALL]
        q, _, counts, failed = solver.solve_values(target, seed, chunk)
        for v in range(len(chunk)):
            at_value = q[v, :counts[v]]
            if failed[v]:
                at_value = _polished_at_value(setup.solver, solver.locked, targets, seed, at_value,
                                              q[v, MAX_BRANCHES - failed[v]:], budget)
            yield tried + v, at_value
        tried += len(chunk)


class _SameTurnValues:
    """Which earlier values of the redundant joint equal a value modulo whole turns. Solutions at values that differ
    modulo a turn are distinct: only a grid over a turn or more (a continuous joint's reaches the same solution at
    both ends) needs comparing solutions, with those of these values."""

    def __init__(self, values: np.ndarray):
        self.values = values
        span = float(values.max() - values.min()) if len(values) else 0.0
        self.wraps = span + DISTINCT_SOLUTION_TOLERANCE >= kernels.TWO_PI
        # Compared by their remainders modulo a turn: any span (a range of 1e300 rad too) costs one sort.
        self.remainders = np.mod(values, kernels.TWO_PI)
        self.order = np.argsort(self.remainders, kind="stable")
        self.sorted = self.remainders[self.order]

    def earlier(self, index: int) -> list[int]:
        if not self.wraps:
            return []
        found = []
        value, remainder = self.values[index], self.remainders[index]
        for centre in (remainder - kernels.TWO_PI, remainder, remainder + kernels.TWO_PI):
            low, high = np.searchsorted(self.sorted, [centre - DISTINCT_SOLUTION_TOLERANCE,
                                                      centre + DISTINCT_SOLUTION_TOLERANCE])
            found += [int(u) for u in self.order[low:high]
                      if u < index and abs(self.values[u] - value) > DISTINCT_SOLUTION_TOLERANCE]
        return found


def _polished_at_value(solver: SolverSetup, joint: int, targets: np.ndarray, seed: np.ndarray,
                       solutions: np.ndarray, missed: np.ndarray, budget: Budget) -> np.ndarray:
    """The solutions plus the polished candidates that missed the pose (``search.polished``, the redundant
    joint locked)."""
    locked = np.zeros(solver.problem.dof, dtype=bool)
    locked[joint] = True
    found = polished(solver, targets, seed, solutions, missed, locked=locked, budget=budget)
    return np.array([*solutions, *(q for _, q in found)]).reshape(-1, solver.problem.dof)
