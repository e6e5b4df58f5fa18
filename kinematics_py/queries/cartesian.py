"""A Cartesian path query (compute_cartesian_path): its path, then that path's timing."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..ik.budget import UNBOUNDED, Budget
from ..ik.plugin import KinematicsPlugin
from ..planning.cartesian_path import CartesianPath, JumpThresholds, compute_cartesian_path
from ..planning.time_parameterization import JointLimits, TimedPath, time_parameterize
from ..state_check import StateCheck


@dataclass(frozen=True)
class LinkSpeedLimit:
    """``link`` moves no faster than ``max_speed`` [m/s] along the timed path."""

    link: str
    max_speed: float


@dataclass(frozen=True)
class CartesianQuery:
    """A link moved along straight lines through waypoints, from ``start`` (n,) (``getJointNames()`` order).

    ``T_base_waypoints`` (w, 4, 4): the link's poses in the plugin's base frame; ``T_tip_link`` (4, 4) places the
    link on the tip. ``check`` (its ``base_values`` the other joints) holds at every step: collisions when it
    asks, and the path constraints. ``limits`` are the (scaled) joint limits the path is timed within.
    """

    start: np.ndarray
    T_base_waypoints: np.ndarray
    max_step: float
    T_tip_link: np.ndarray
    check: StateCheck
    limits: JointLimits
    jump_thresholds: JumpThresholds = JumpThresholds()
    speed_limit: LinkSpeedLimit | None = None
    budget: Budget = UNBOUNDED


def plan_cartesian_query(plugin: KinematicsPlugin, query: CartesianQuery, checker=None) -> CartesianPath:
    """The path of ``query`` (``checker`` for its collisions); CartesianPathError when it cannot be planned at all
    (a path that stops early is an answer with its ``stop_reason``)."""
    validity = query.check.bound(plugin.robot_model, checker) if query.check else None
    return compute_cartesian_path(plugin, query.start, list(query.T_base_waypoints), query.max_step,
                                  T_tip_link=query.T_tip_link, jump_thresholds=query.jump_thresholds,
                                  validity=validity, budget=query.budget)


def time_cartesian_path(plugin: KinematicsPlugin, query: CartesianQuery, path: CartesianPath) -> TimedPath:
    """The timing of ``query``'s path within its limits (and its link speed limit); TimeParameterizationError when
    it cannot be timed. Apart from the search: it needs no search slot."""
    if query.speed_limit is None:
        return time_parameterize(path.positions, query.limits)
    model, names, base = plugin.robot_model, query.check.joint_names, query.check.base_values
    link = query.speed_limit.link
    link_positions = np.array([model.link_poses({**base, **dict(zip(names, q))})[link][:3, 3]
                               for q in path.positions])
    return time_parameterize(path.positions, query.limits, link_positions=link_positions,
                             max_link_speed=query.speed_limit.max_speed)
