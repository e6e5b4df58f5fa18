"""Many IK queries in one compiled, multi-core call (``KinematicsPlugin.searchPositionIKBatch``)."""
from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from ..compiled import PARALLEL_KERNEL_LOCK
from ..errors import ErrorCode, RequestError
from ..geometry.poses import transforms_from_poses
from . import kernels
from .results import IKResult, failure, solved

if TYPE_CHECKING:
    from .group_setup import GroupSetup, PluginState


def search_batch(state: PluginState, ik_poses, ik_seed_states: Sequence[Sequence[float]] | None,
                 max_starts: int) -> list[IKResult]:
    """One IKResult per pose (KinematicsPlugin.searchPositionIKBatch says what is accepted)."""
    try:
        setup = state.require_setup()
        if max_starts < 1:
            raise RequestError(ErrorCode.FAILURE, f"max_starts must be >= 1; got {max_starts}")
        tips = len(setup.tip_frames)
        if not isinstance(ik_poses, np.ndarray) and tips > 1:
            raise RequestError(ErrorCode.INVALID_LINK_NAME, f"a batch for {tips} tips must be an array "
                               f"(N, {tips}, 4, 4) of transforms")
        T, bad = transforms_from_poses(ik_poses)
        count = len(T) // tips
        targets = T.reshape(count, tips, 4, 4)
        bad_targets = {i // tips: reason for i, reason in bad.items()}
        seeds = _seeds(setup, ik_seed_states, count)
    except RequestError as error:
        return [failure(error.code, str(error))] * len(ik_poses)
    solutions, found, closed_form = _search(setup, targets, seeds, max_starts)
    results = []
    for k in range(count):
        if k in bad_targets:
            results.append(failure(ErrorCode.INVALID_GOAL_CONSTRAINTS, f"invalid target pose: {bad_targets[k]}"))
        elif found[k]:
            results.append(solved(solutions[k], "solved (closed form)" if closed_form[k] else "solved"))
        else:
            with np.errstate(over="ignore"):  # a target 1e308 m away is unreachable, not an error: inf m
                errors = setup.problem.task_errors(solutions[k], targets[k]).max(axis=0)
            results.append(failure(ErrorCode.NO_IK_SOLUTION, f"no solution from {max_starts} start(s); closest "
                                   f"approach: position error {errors[0]:.3g} m, rotation error {errors[1]:.3g} rad"))
    return results


def _seeds(setup: GroupSetup, ik_seed_states, count: int) -> np.ndarray:
    """(count, n) seeds: the given ones (checked), or the middle of the joint ranges."""
    problem = setup.problem
    if ik_seed_states is None:
        return np.tile(problem.middle, (count, 1))
    try:
        seeds = np.array(ik_seed_states, dtype=float)
    except (TypeError, ValueError) as error:  # not numbers, or rows of different lengths
        raise RequestError(ErrorCode.INVALID_ROBOT_STATE, f"ik_seed_states must be numbers: {error}") from None
    if seeds.shape != (count, problem.dof) or not np.isfinite(seeds).all():
        raise RequestError(ErrorCode.INVALID_ROBOT_STATE, f"ik_seed_states must be finite, shape "
                           f"({count}, {problem.dof}); got shape {seeds.shape}")
    return seeds


def _search(setup: GroupSetup, targets: np.ndarray, seeds: np.ndarray, max_starts: int):
    """(solutions (N, n), found (N,), by the closed form (N,)): the closed form's branch nearest each seed where
    it applies, the compiled multi-start search for the rest."""
    problem = setup.problem
    count = len(targets)
    solutions = np.empty((count, problem.dof))
    found = np.zeros(count, dtype=np.bool_)
    closed_form = np.zeros(count, dtype=np.bool_)
    if setup.closed_form_is_exact:
        branches, _, counts = setup.closed_form.solve_batch(targets[:, 0], seeds, wanted=1)
        closed_form = counts > 0
        found = closed_form.copy()
        solutions[found] = branches[found, 0]
        if found.all():
            return solutions, found, closed_form
    rest = np.flatnonzero(~found)
    # Continuous joints are sampled within half a turn of zero (the pool is shared by all poses).
    bounds = setup.solver.bounds(problem.lower, problem.upper, np.zeros(problem.dof))
    rest_solutions = np.empty((len(rest), problem.dof))
    rest_found = np.zeros(len(rest), dtype=np.bool_)
    costs = np.empty(len(rest))
    with PARALLEL_KERNEL_LOCK:
        kernels.batch_search(setup.solver.tables, bounds, np.ascontiguousarray(targets[rest]),
                             np.ascontiguousarray(seeds[rest], dtype=float), setup.solver.restarts, max_starts,
                             rest_solutions, rest_found, costs)
    solutions[rest], found[rest] = rest_solutions, rest_found
    return solutions, found, closed_form
