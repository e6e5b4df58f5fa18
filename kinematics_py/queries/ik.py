"""An IK query (compute_ik, solve_ik) and its answer."""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

import numpy as np

from ..ik.budget import UNBOUNDED, Budget
from ..ik.plugin import KinematicsPlugin
from ..ik.results import IKResult
from ..state_check import StateCheck


@dataclass(frozen=True)
class IkQuery:
    """Joint values of a group reaching one pose per tip.

    ``T_base_tips`` (t, 4, 4): the target of each tip, in the plugin's tip order and base frame. ``seed`` (n,):
    where the search starts, in ``getJointNames()`` order. ``timeout`` [s] (None: the plugin's default).
    ``check`` holds the request's constraints and whether collisions are avoided; its ``base_values`` are the
    rest of the robot's state (every joint), as the solution's other joints.
    """

    T_base_tips: np.ndarray
    seed: np.ndarray
    check: StateCheck
    timeout: float | None = None
    budget: Budget = UNBOUNDED


@dataclass(frozen=True)
class IkAnswer:
    """The search's result and, on success, the whole robot's state with the solution in it."""

    result: IKResult
    state: Mapping[str, object] | None = None


def seed_within_constraints(seed: np.ndarray, check: StateCheck) -> np.ndarray:
    """``seed`` with each joint bounded by a joint constraint moved inside it (a search starting there is
    nearer the answers the constraint allows)."""
    if not check.constraints:
        return seed
    names = list(check.joint_names)
    seed = seed.copy()
    for bound in check.constraints.joint_bounds:
        if bound.joint in names and not bound.continuous:
            index = names.index(bound.joint)
            seed[index] = min(max(seed[index], bound.lower), bound.upper)
    return seed


def solve_ik_query(plugin: KinematicsPlugin, query: IkQuery, checker=None) -> IkAnswer:
    """``query`` answered by one search of ``plugin`` (whether a plain request takes the closed form's lean path
    is decided there); collisions, when ``query.check`` asks, against ``checker``."""
    model = plugin.robot_model
    constraints = replace(query.check, collisions=False)
    bound = constraints.bound(model) if constraints else None
    callback = (lambda _pose, solution: bound(np.asarray(solution))) if bound is not None else None
    targets = query.T_base_tips[0] if len(query.T_base_tips) == 1 else query.T_base_tips
    avoid = query.check.collisions and checker is not None
    result = plugin.searchPositionIK(targets, seed_within_constraints(query.seed, query.check).tolist(),
                                     query.timeout, solution_callback=callback,
                                     context_state=query.check.base_values, avoid_collisions=avoid,
                                     collision_checker=checker if avoid else None, budget=query.budget)
    if not result.success:
        return IkAnswer(result)
    solved = dict(zip(query.check.joint_names, result.solution))
    return IkAnswer(result, model.resolve_joint_values({**query.check.base_values, **solved}))
