"""The one implementation behind every searchPositionIK / getPositionIK variant: a request parsed once, then
the strategy for it chosen once.

Strategies, by the set-up and the request: the closed form of a 6R arm (the lean path for plain requests,
else every branch with the callbacks), the closed form of a 7-joint arm with a joint locked, and the
numerical search (discretized over the redundant joints when a discretization method asks for every
solution). A closed form that neither solves nor disproves the pose hands the request to the numerical search.
"""
from __future__ import annotations

import time
from typing import TYPE_CHECKING

import numpy as np

from ..errors import RequestError
from .closed_form.branch_search import closed_form_search
from .closed_form.locked_joint_search import locked_solver, redundant_closed_form_search
from .discretization import discretized_search
from .options import DiscretizationMethod
from .request import IkRequest, ParsedRequest, parse_request
from .results import IKResult, failure, result_from_outcome, solved
from .search import IkSearch, quick_search, solved_message

if TYPE_CHECKING:
    from .closed_form.redundant import LockedJointSolver
    from .group_setup import PluginState


def solve(state: PluginState, request: IkRequest) -> IKResult:
    """Answer ``request`` with the set-up of ``state``. Bad input gives its error code, never an exception."""
    try:
        parsed = parse_request(state, request)
    except RequestError as error:
        return failure(error.code, str(error))
    return solve_parsed(parsed)


def solve_parsed(request: ParsedRequest) -> IKResult:
    """Answer a parsed request by the strategy its set-up and its options call for."""
    setup = request.setup
    plain = request.plain
    if setup.closed_form_applies:
        return _closed_form(request, plain)
    if plain:  # no options, solve mode "speed": no locked-joint closed form either
        return _numerical(request, plain)
    locked = None if setup.redundant_closed_form is None else \
        locked_solver(setup, request.options, request.cost_function)
    if locked is not None:
        return _locked_joint(request, locked)
    return _numerical(request, plain)


def _closed_form(request: ParsedRequest, plain: bool) -> IKResult:
    """Every branch in one compiled call; a plain request takes the branch nearest the seed."""
    setup = request.setup
    if plain and setup.fast_path is not None:
        result = setup.fast_path(request.targets[0], request.seed)
        if result is not None:
            return result
    outcome = closed_form_search(
        setup, request.targets, request.seed, consistency_limits=request.limits, is_valid=request.is_valid,
        cost_function=request.cost_function, collect_all=_wants_all(request),
        prove_out_of_reach=not request.options.return_approximate_solution, timeout=request.timeout,
        budget=request.budget)
    return _numerical(request, plain) if outcome is None else result_from_outcome(outcome)


def _locked_joint(request: ParsedRequest, locked: LockedJointSolver) -> IKResult:
    outcome = redundant_closed_form_search(
        request.setup, locked, request.step_of, request.targets, request.seed, request.options,
        timeout=request.timeout, consistency_limits=request.limits, is_valid=request.is_valid,
        cost_function=request.cost_function, budget=request.budget)
    return _numerical(request, False) if outcome is None else result_from_outcome(outcome)


def _numerical(request: ParsedRequest, plain: bool) -> IKResult:
    """The compiled multi-start search. A plain request first tries the seed and a few restarts in one
    compiled call (most end there); the search then resumes after them."""
    setup, seed, timeout = request.setup, request.seed, request.timeout
    resume_after, elapsed = 0, 0.0
    if plain and not request.local_only and not setup.closed_form_applies:
        started = time.perf_counter()
        q, resume_after = quick_search(setup.solver, request.targets, seed, timeout, request.budget)
        elapsed = time.perf_counter() - started
        if q is not None:
            return solved(q, solved_message(elapsed, 1, resume_after))
    locked = None
    if request.options.lock_redundant_joints and setup.redundant_joints:
        locked = np.zeros(setup.problem.dof, dtype=bool)
        locked[list(setup.redundant_joints)] = True
    search_args = dict(timeout=timeout, local_only=request.local_only, consistency_limits=request.limits,
                       return_approximate=request.options.return_approximate_solution, is_valid=request.is_valid,
                       cost_function=request.cost_function, budget=request.budget)
    if _wants_all(request):
        outcome = discretized_search(setup, request.step_of, request.targets, seed, locked,
                                     request.options.discretization_method, search_args)
    else:
        outcome = IkSearch(setup.solver, request.targets, seed, locked=locked, resume_after=resume_after,
                           already_spent=elapsed, **search_args).run()
    return result_from_outcome(outcome)


def _wants_all(request: ParsedRequest) -> bool:
    return request.options.discretization_method != DiscretizationMethod.NO_DISCRETIZATION
