"""The closed form inside KinematicsPlugin's searches: every branch of a 6R arm in one compiled call, then the
same verification, validity callbacks and solve modes as the numerical search.

A closed form is complete: its branches are every solution within the joint limits (each as the whole-turn
equivalent nearest the seed), so a pose whose branches are all rejected has no valid solution, and the
nearest branch is the globally nearest solution. Poses no branch reaches (out of reach, or a singular pose
lost to round-off) go on to the numerical search.
"""
from __future__ import annotations

import heapq
import itertools
import math
import time
from typing import TYPE_CHECKING

import numpy as np

from ...errors import ErrorCode, Verdict
from ..budget import UNBOUNDED, Budget
from ..group_setup import closed_form_check_suffices
from ..kernels import LIMIT_SLACK
from ..problem import SolverSetup
from ..search import (
    SearchOutcome,
    polished,
    posture_reference,
    preferred_solution,
    verdict_of,
    whole_turn_alternatives,
)
from .classification import classification_report
from .near_ideal import FamilyTolerance
from .solver import ClosedFormSolver

if TYPE_CHECKING:
    from collections.abc import Callable

    from ..group_setup import GroupSetup
    from ..search import ValidityCallback


#: How much farther [m] than the thresholds allow a wrist point must lie beyond the reach to prove a pose out of it
#: (far above round-off: poses nearer the boundary go on to the numerical search).
REACH_MARGIN = 1e-5


def closed_form_of(solver: SolverSetup) -> tuple[ClosedFormSolver | None, str]:
    """The closed-form solver of a set-up's problem (or None), and a sentence for the log saying which family
    was found or why the numerical search is used."""
    problem = solver.problem
    if len(problem.chains) != 1:
        return None, "numerical search: the closed forms solve one tip"
    chain = problem.chains[0]
    if chain.joint_names != problem.variable_names:
        return None, "numerical search: the chain's joints are not the group's variables"
    if not np.all(solver.weights > 0.0):
        return None, "numerical search: the closed forms solve full poses (position_only_ik or a zero axis weight)"
    classification, report = classification_report(chain, tolerance=FamilyTolerance.of_parameters(solver.params))
    if classification is None:
        return None, f"numerical search: {report}"
    return ClosedFormSolver(chain, classification), report


def closed_form_search(setup: GroupSetup, targets: np.ndarray, seed: np.ndarray, *,
                       consistency_limits: np.ndarray | None, is_valid: ValidityCallback | None,
                       cost_function: Callable[[np.ndarray], float] | None, collect_all: bool,
                       prove_out_of_reach: bool = True, timeout: float = math.inf, budget: Budget = UNBOUNDED
                       ) -> SearchOutcome | None:
    """Every branch reaching ``targets[0]``, called back nearest the seed first and chosen as the solve mode says
    (the other whole turns of rejected ones within ``timeout`` [s]). When no branch reaches the pose within the
    limits: NO_IK_SOLUTION if the pose is provably out of reach (and ``prove_out_of_reach``: not when an
    approximate solution is wanted), else None (the caller searches numerically)."""
    started = time.perf_counter()
    solver, closed_form = setup.solver, setup.closed_form
    solutions, codes, missed, missed_codes = closed_form.solve_unverified(targets[0], seed)
    if len(missed):
        solutions, codes = _with_polished(setup, targets, seed, solutions, codes, missed, missed_codes, budget)
    solutions, codes = verified_branches(solver, targets, seed, solutions, codes, consistency_limits)
    if not len(solutions):
        unreachable = out_of_reach_message(setup, targets[0]) if prove_out_of_reach else None
        return None if unreachable is None else SearchOutcome(ErrorCode.NO_IK_SOLUTION, unreachable,
                                                              elapsed=time.perf_counter() - started)
    mode = solver.params.solve_mode
    in_posture = None
    if mode == "posture" and cost_function is None:
        in_posture = closed_form.posture_code(posture_reference(solver, seed))
        solutions = solutions[codes == in_posture]
    nearest_wins = cost_function is None and (mode in ("speed", "posture") or (
        mode == "distance" and bool(np.all(solver.joint_weights == solver.joint_weights[0]))))
    outcome = SearchOutcome(ErrorCode.NO_IK_SOLUTION, "")
    last_rejection, skipped = call_back_branches(outcome, solver, solutions, seed, is_valid, consistency_limits,
                                                 stop_at_first=nearest_wins and not collect_all,
                                                 turns_until=started + timeout, budget=budget)
    outcome.elapsed = time.perf_counter() - started
    family = f"closed form, {closed_form.name}"
    if outcome.solutions:
        outcome.error_code = ErrorCode.SUCCESS
        outcome.solution = outcome.solutions[0] if nearest_wins else \
            preferred_solution(solver, outcome.solutions, seed, cost_function)
        outcome.message = (f"solved in {outcome.elapsed * 1e3:.3f} ms ({family}: {len(outcome.solutions)} valid of "
                           f"{len(codes)} branch(es) within the limits)")
    elif skipped:
        outcome.error_code, outcome.message = turns_ran_out(outcome, skipped, last_rejection,
                                                            f"{len(codes)} branch(es); {family}")
    elif outcome.rejected:
        outcome.error_code = last_rejection.error_code
        outcome.message = (f"the validity check rejected every one of the {outcome.rejected} solution(s) reaching the "
                           f"pose within the limits ({len(codes)} branch(es), those rejected for other reasons than "
                           f"a collision also in their other whole turns; {family}: there are no others; last "
                           f"verdict: {last_rejection.described()})")
    else:
        reference = "preferred_posture" if len(solver.params.preferred_posture) else "the seed"
        posture = "an undefined posture" if in_posture is None else closed_form.posture(in_posture)
        outcome.message = (f"the pose is not reachable in the posture of {reference} ({posture}): "
                           f"{len(codes)} branch(es) of other postures reach it within the limits ({family})")
    return outcome


def call_back_branches(outcome: SearchOutcome, solver: SolverSetup, solutions: np.ndarray, seed: np.ndarray,
                       is_valid: ValidityCallback | None, consistency_limits: np.ndarray | None, *,
                       stop_at_first: bool, distance: Callable[[np.ndarray], float] | None = None,
                       deadline: float = math.inf, turns_until: float = math.inf, budget: Budget = UNBOUNDED
                       ) -> tuple[Verdict | None, int]:
    """Each branch's first valid solution into ``outcome.solutions``, nearest the seed first over every branch
    (``distance(q)``, the Euclidean one by default); the last rejection (or None). A branch whose representative
    is rejected for anything but a collision is tried again in its other whole-turn equivalents within the
    limits (joint constraints may allow another turn of a +-2 pi joint; a collision is the same in every turn).
    With a ``deadline`` (``time.perf_counter()``), the calls end there or at the caller's ``budget`` once one
    solution was called back (the caller then says the time ran out); without, every branch is called back (a
    verdict over all of them is final: "there are no others"). Other whole turns are tried until ``turns_until``
    or the caller's deadline only (a chain of six +-2 pi joints has 63 per branch); (last rejection or None,
    how many were not tried for want of time)."""
    if distance is None:
        def distance(q):
            return float(np.linalg.norm(q - seed))
    candidates = [(distance(q), branch, 0, q) for branch, q in enumerate(solutions)]
    heapq.heapify(candidates)
    valid_branches, last_rejection, order, skipped = set(), None, itertools.count(1), 0
    while candidates:
        if deadline < math.inf and outcome.reached and (time.perf_counter() >= deadline or budget.should_stop()):
            break
        _, branch, turned, q = heapq.heappop(candidates)
        if branch in valid_branches:
            continue
        if turned and (time.perf_counter() >= turns_until or budget.time_left() <= 0.0):
            skipped += 1
            continue
        outcome.reached += 1
        verdict = None if is_valid is None else verdict_of(is_valid(q))
        if verdict is not None and verdict.error_code != ErrorCode.SUCCESS:
            outcome.rejected += 1
            last_rejection = verdict
            if verdict.error_code != ErrorCode.GOAL_IN_COLLISION and not turned:
                for other in whole_turn_alternatives(solver.problem, q, seed, consistency_limits):
                    heapq.heappush(candidates, (distance(other), branch, next(order), other))
            continue
        valid_branches.add(branch)
        outcome.solutions.append(q)
        if stop_at_first:
            break
    return last_rejection, skipped


def turns_ran_out(outcome: SearchOutcome, skipped: int, last_rejection: Verdict | None, searched: str
                  ) -> tuple[ErrorCode, str]:
    """TIMED_OUT and why, when every solution tried was rejected but ``skipped`` other whole turns of rejected
    ones were not tried for want of time (a longer timeout may find a valid one)."""
    verdict = "" if last_rejection is None else f"; last verdict: {last_rejection.described()}"
    return ErrorCode.TIMED_OUT, (f"the validity check rejected the {outcome.rejected} solution(s) tried, and the time "
                                 f"ran out before {skipped} other whole turn(s) of them were tried ({searched}"
                                 f"{verdict}): a longer timeout may find a valid one")


def out_of_reach_message(setup: GroupSetup, T_base_tip: np.ndarray) -> str | None:
    """Why no configuration can reach ``T_base_tip`` (4, 4) within the solver's thresholds, when the closed form
    proves it (the wrist point the pose needs is farther than the arm reaches, by more than the thresholds allow
    plus REACH_MARGIN); None otherwise (near the boundary, or inside it: the numerical search decides)."""
    closed_form, params = setup.closed_form, setup.solver.params
    reach = closed_form.reach
    # A near-ideal arm's reach is its ideal arm's: the two tips differ by at most the deviation's bounds.
    deviation = closed_form.classification.deviation
    allowed = (params.position_threshold + deviation.position + (params.orientation_threshold + deviation.rotation)
               * reach.wrist_offset + REACH_MARGIN)
    beyond = closed_form.beyond_reach(T_base_tip)
    if not beyond > allowed:
        return None
    return (f"the pose is out of reach: the wrist point it needs is {beyond:.4g} m beyond the farthest the arm can "
            f"place it ({reach.radius:.4g} m from its base axis, whatever the joint values; closed form, "
            f"{closed_form.name})")


def _with_polished(setup: GroupSetup, targets: np.ndarray, seed: np.ndarray, solutions: np.ndarray,
                   codes: np.ndarray, missed: np.ndarray, missed_codes: np.ndarray, budget: Budget
                   ) -> tuple[np.ndarray, np.ndarray]:
    """The branches plus the candidates that missed the pose, polished (``search.polished``), nearest the seed
    first."""
    found = polished(setup.solver, targets, seed, solutions, missed, budget=budget)
    if not found:
        return solutions, codes
    solutions = np.vstack([solutions.reshape(-1, setup.problem.dof), [q for _, q in found]])
    codes = np.concatenate([codes, [missed_codes[i] for i, _ in found]]).astype(codes.dtype)
    order = np.argsort(np.sum((solutions - seed) ** 2, axis=1), kind="stable")
    return solutions[order], codes[order]


def verified_branches(solver: SolverSetup, targets: np.ndarray, seed: np.ndarray, solutions: np.ndarray,
                      codes: np.ndarray, consistency_limits: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """The branches within the consistency limits, and within the solver's thresholds when they are tighter
    than the closed form's own check."""
    keep = np.ones(len(solutions), dtype=bool)
    params = solver.params
    if not closed_form_check_suffices(params):
        errors = np.array([solver.problem.task_errors(q, targets).max(axis=0) for q in solutions]).reshape(-1, 2)
        keep &= (errors[:, 0] <= params.position_threshold) & (errors[:, 1] <= params.orientation_threshold)
    if consistency_limits is not None:
        keep &= np.all(np.abs(solutions - seed) <= consistency_limits + LIMIT_SLACK, axis=1)
    return (solutions, codes) if keep.all() else (solutions[keep], codes[keep])
