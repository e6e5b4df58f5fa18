"""Searches over the redundant joints (MoveIt's discretization methods): every distinct solution."""
from __future__ import annotations

import itertools
import math
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from ..errors import ErrorCode
from ..model.ranges import spread
from .options import DiscretizationMethod
from .search import IkSearch, SearchOutcome, same_solution, wrapped_difference

if TYPE_CHECKING:
    from .group_setup import GroupSetup

#: The most values a redundant joint is tried at in one request (1.6e5: ten turns in steps of 0.4 mrad).
MAX_JOINT_VALUES = 160_000
#: A revolute joint's values are taken within this many whole turns of the seed (its range otherwise).
MAX_REVOLUTE_TURNS = 8


def discretized_search(setup: GroupSetup, step_of: Callable[[int], float], targets: np.ndarray, q_seed: np.ndarray,
                       locked: np.ndarray | None, method: DiscretizationMethod, search_args: dict) -> SearchOutcome:
    """All distinct solutions: redundant joints stepped (by ``step_of(joint index)`` [rad or m]) or sampled,
    the others solved for each value. ``search_args`` are IkSearch's; their timeout is shared out."""
    problem = setup.problem
    locked = np.zeros(problem.dof, dtype=bool) if locked is None else locked
    redundant = [i for i in setup.redundant_joints if not locked[i]]
    if not redundant:
        return IkSearch(setup.solver, targets, q_seed, locked=locked, collect_all=True, **search_args).run()
    grids = joint_values(setup, step_of, q_seed, redundant, method)
    combinations = itertools.product(*grids)
    total = math.prod(len(grid) for grid in grids)
    started = time.perf_counter()
    deadline = started + search_args["timeout"]
    merged = SearchOutcome(ErrorCode.NO_IK_SOLUTION, "")
    tried = 0
    for tried, values in enumerate(combinations, start=1):
        now = time.perf_counter()
        seed = q_seed.copy()
        seed[redundant] = values
        fixed = locked.copy()
        fixed[redundant] = True
        # The time left shared among the values left (each search fits its first call to its share too).
        budget = max(deadline - now, 0.0) / (total - tried + 1)
        outcome = IkSearch(setup.solver, targets, seed, locked=fixed, collect_all=True,
                           **{**search_args, "timeout": budget}).run()
        merged.searches += outcome.searches
        merged.reached += outcome.reached
        merged.rejected += outcome.rejected
        merged.solutions += [s for s in outcome.solutions
                             if not any(same_solution(s, t, problem.is_revolute) for t in merged.solutions)]
        if not merged.message:
            merged.error_code, merged.message = outcome.error_code, outcome.message
        if time.perf_counter() >= deadline:
            break
    if merged.solutions:
        merged.solution = min(merged.solutions, key=lambda s: float(np.sum(
            wrapped_difference(s, q_seed, problem.is_revolute) ** 2)))
        merged.error_code = ErrorCode.SUCCESS
        merged.message = (f"{len(merged.solutions)} distinct solution(s) over {tried} of {total} "
                          f"values of the redundant joints")
    return merged


def joint_values(setup: GroupSetup, step_of: Callable[[int], float], q_seed: np.ndarray, redundant: list[int],
                  method: DiscretizationMethod) -> list[np.ndarray]:
    """Per redundant joint, the values to try: its range (or a turn around the seed) in steps, or as many
    uniform samples (reproducible: the solver's random seed). A revolute joint's values lie within
    MAX_REVOLUTE_TURNS turns of the seed (of the nearer limit for a seed outside them). A range of more than
    MAX_JOINT_VALUES steps (a URDF writing 1e300 for no limit) gets MAX_JOINT_VALUES values spread over it,
    its ends included."""
    problem = setup.problem
    rng = np.random.default_rng(setup.solver.params.random_seed)
    discretized = method in (DiscretizationMethod.ALL_DISCRETIZED, DiscretizationMethod.SOME_DISCRETIZED)
    grids = []
    for i in redundant:
        low = problem.lower[i] if np.isfinite(problem.lower[i]) else q_seed[i] - math.pi
        high = problem.upper[i] if np.isfinite(problem.upper[i]) else q_seed[i] + math.pi
        if problem.is_revolute[i]:  # farther turns repeat these, and angles of 1e300 rad lose every digit
            centre = min(max(q_seed[i], low), high)  # a seed outside the limits: the turns at the nearer limit
            low = max(low, centre - MAX_REVOLUTE_TURNS * 2.0 * math.pi)
            high = min(high, centre + MAX_REVOLUTE_TURNS * 2.0 * math.pi)
        step = step_of(i)
        steps = (high / step - low / step)  # not (high - low) / step: that overflows for ranges near 1e308
        if steps < MAX_JOINT_VALUES:
            count = int(math.floor(steps)) + 1
            grids.append(low + step * np.arange(count) if discretized else rng.uniform(low, high, count))
        else:
            fractions = np.linspace(0.0, 1.0, MAX_JOINT_VALUES) if discretized else rng.random(MAX_JOINT_VALUES)
            grids.append(spread(low, high, fractions))
    return grids
