"""The one implementation behind every searchPositionIK / getPositionIK variant."""
from __future__ import annotations

import time
from typing import TYPE_CHECKING

import numpy as np

from ..errors import ErrorCode, RequestError
from .analytic import closed_form_applies, closed_form_search
from .discretization import discretized_search
from .options import DiscretizationMethod
from .redundant_closed_form import locked_solver, redundant_closed_form_search
from .request import (
    DEFAULT_OPTIONS,
    IkRequest,
    consistency_window,
    joint_vector,
    search_time,
    target_transforms,
)
from .results import IKResult, failure, result_from_outcome, solved
from .search import IkSearch, quick_search, solved_message

if TYPE_CHECKING:
    from .state import PluginState


def solve(state: PluginState, request: IkRequest) -> IKResult:
    """Answer ``request`` with the set-up of ``state``. Bad input gives its error code, never an exception.

    Arms with a closed form (``analytic``) get every branch in one compiled call first; a plain request (no
    callbacks, consistency limits or options, solve mode "speed") then takes the branch nearest the seed. A
    plain request to other arms first tries the seed and a few restarts in one compiled call; most end there.
    """
    ik_pose, seed, timeout, consistency_limits, solution_callback, cost_function, options, local_only = request
    try:
        setup = state.require_setup()
        options = options or DEFAULT_OPTIONS
        targets = target_transforms(setup, ik_pose)
        q_seed = joint_vector(setup, seed, "ik_seed_state")
        timeout = search_time(timeout, state.default_timeout)
        limits = consistency_window(setup, consistency_limits)
    except RequestError as error:
        return failure(error.code, str(error))

    resume_after, elapsed = 0, 0.0
    closed_form = closed_form_applies(setup)
    plain = (solution_callback is None and cost_function is None and limits is None
             and (options is DEFAULT_OPTIONS or options == DEFAULT_OPTIONS)
             and setup.solver.params.solve_mode == "speed")
    if plain and closed_form:
        if setup.fast_path is not None:
            result = setup.fast_path(targets[0], np.ascontiguousarray(q_seed))
            if result is not None:
                return result
    elif plain and not local_only:
        started = time.perf_counter()
        q, resume_after = quick_search(setup.solver, targets, q_seed, timeout)
        elapsed = time.perf_counter() - started
        if q is not None:
            return solved(q, solved_message(elapsed, 1, resume_after))

    all_solutions = options.discretization_method != DiscretizationMethod.NO_DISCRETIZATION
    callbacks = dict(is_valid=_validity_callback(request), cost_function=_cost_callback(request))
    if closed_form:
        outcome = closed_form_search(setup, targets, q_seed, consistency_limits=limits, collect_all=all_solutions,
                                     prove_out_of_reach=not options.return_approximate_solution, timeout=timeout,
                                     **callbacks)
        if outcome is not None:
            return result_from_outcome(outcome)
    redundant_closed_form = locked_solver(setup, options, cost_function)
    if redundant_closed_form is not None:
        outcome = redundant_closed_form_search(setup, redundant_closed_form, state.discretization, targets, q_seed,
                                               options, timeout=timeout, consistency_limits=limits, **callbacks)
        if outcome is not None:
            return result_from_outcome(outcome)
    locked = None
    if options.lock_redundant_joints and setup.redundant_joints:
        locked = np.zeros(setup.problem.dof, dtype=bool)
        locked[list(setup.redundant_joints)] = True
    search_args = dict(timeout=timeout, local_only=local_only, consistency_limits=limits,
                       return_approximate=options.return_approximate_solution, **callbacks)
    if all_solutions:
        outcome = discretized_search(setup, state.discretization, targets, q_seed, locked,
                                     options.discretization_method, search_args)
    else:
        outcome = IkSearch(setup.solver, targets, q_seed, locked=locked, resume_after=resume_after,
                           already_spent=elapsed, **search_args).run()
    return result_from_outcome(outcome)


def _validity_callback(request: IkRequest):
    """q -> the request's solution_callback(ik_pose, solution as a list), or None."""
    callback = request.solution_callback
    if callback is None:
        return None
    ik_pose = request.ik_pose

    def is_valid(q: np.ndarray) -> bool | ErrorCode:
        return callback(ik_pose, [float(v) for v in q])

    return is_valid


def _cost_callback(request: IkRequest):
    """q -> the request's cost_function(ik_pose, solution as a list), or None."""
    cost_function = request.cost_function
    if cost_function is None:
        return None
    ik_pose = request.ik_pose

    def cost(q: np.ndarray) -> float:
        return cost_function(ik_pose, [float(v) for v in q])

    return cost
