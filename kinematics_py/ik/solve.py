"""The one implementation behind every searchPositionIK / getPositionIK variant: a request parsed once, then
the strategy for it chosen once.

Strategies, by the set-up and the request: the closed form of a 6R arm (the lean path for plain requests,
else every branch with the callbacks), the closed form of a 7-joint arm with a joint locked, and the
numerical search (discretized over the redundant joints when a discretization method asks for every
solution). A closed form that neither solves nor disproves the pose hands the request to the numerical search.
"""
from __future__ import annotations

import math
import time
from typing import TYPE_CHECKING

import numpy as np

from ..errors import RequestError
from ..geometry.poses import Pose, PoseError, transform_from_any_pose
from .closed_form.branch_search import closed_form_search
from .closed_form.locked_joint_search import locked_solver, redundant_closed_form_search
from .discretization import discretized_search
from .options import DiscretizationMethod
from .request import DEFAULT_OPTIONS, IkRequest, ParsedRequest, invalid_pose, parse_request
from .results import IKResult, failure, result_from_outcome, solved
from .search import IkSearch, quick_search, solved_message

if TYPE_CHECKING:
    from .closed_form.redundant import LockedJointSolver
    from .group_setup import GroupSetup, PluginState

_NDARRAY = np.ndarray


def solve(state: PluginState, request: IkRequest) -> IKResult:
    """Answer ``request`` with the set-up of ``state``. Bad input gives its error code, never an exception.
    A plain request to an arm with an exact closed form first takes the lean path (``lean_answer``): the one place
    that decides it."""
    setup = state.setup
    if setup is not None and setup.fast_path is not None and takes_lean_path(request):
        answered, request = lean_answer(setup, request)
        if answered is not None:
            return answered
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


def takes_lean_path(request: IkRequest) -> bool:
    """Whether a request may take the closed form's lean path: no callbacks, consistency limits or options, and a
    valid timeout (or none). The set-up decides the rest (``GroupSetup.fast_path``: an exact closed form, solve
    mode "speed")."""
    timeout = request.timeout
    return (request.solution_callback is None and request.cost_function is None
            and request.consistency_limits is None and (request.options is None or request.options == DEFAULT_OPTIONS)
            and (timeout is None or type(timeout) is float and 0.0 <= timeout < math.inf))


def lean_answer(setup: GroupSetup, request: IkRequest) -> tuple[IKResult | None, IkRequest]:
    """(the lean path's answer, or None where the general path must answer; the request for the general path, its
    pose converted once when it was a ``Pose``)."""
    ik_pose = request.ik_pose
    if type(ik_pose) is _NDARRAY:  # the common case, without a conversion
        return setup.fast_path(ik_pose, request.seed), request
    if type(ik_pose) in (list, tuple) and len(ik_pose) == 1:
        ik_pose = ik_pose[0]
    if type(ik_pose) is Pose:
        try:
            ik_pose = transform_from_any_pose(ik_pose)
        except PoseError as error:
            refused = invalid_pose(error)
            return failure(refused.code, str(refused)), request
    elif type(ik_pose) is not _NDARRAY:
        return None, request
    return setup.fast_path(ik_pose, request.seed), request._replace(ik_pose=ik_pose)


def _closed_form(request: ParsedRequest, plain: bool) -> IKResult:
    """Every branch in one compiled call (a plain request has had the lean path: ``lean_answer``)."""
    setup = request.setup
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
