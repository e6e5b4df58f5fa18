"""How a motion plan is planned (ROS-free): ``PlanOptions``, one typed, frozen value validated once, when it is
made, and the straight-line ``Approach`` and retraction it may hold. ``motion.plan`` takes it; a planning process
receives it as it is (it pickles).
"""
from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..errors import KinematicsError
from .ompl_search import DEFAULT_PLANNER, planner_id_or_default
from .path_check import FINE_RESOLUTION, SEARCH_RESOLUTION
from .time_parameterization import JointLimits

#: How the goal is chosen among the reachable ones: the one giving the shortest path, or the first in the list.
PRIORITIZATIONS = ("shortest_path", "list_order")
MOTION_TYPES = ("free", "touch")
TOUCH_NEEDS = "a touch motion needs an approach (distance, direction) and pose goals"


class PlanningError(KinematicsError):
    """A plan request that is malformed (names the valid choices); a plan that fails is a MotionPlan instead."""


def _positive(value) -> bool:
    return (type(value) is float or isinstance(value, numbers.Real)) and math.isfinite(value) and value > 0


def _check_choice(value: str, choices: tuple[str, ...], what: str) -> None:
    if value not in choices:
        raise PlanningError(f"{what} must be one of {list(choices)}; got {value!r}")


def unit_direction(direction: Sequence[float]) -> np.ndarray:
    vector = np.asarray(direction, dtype=float)
    norm = float(np.linalg.norm(vector)) if vector.shape == (3,) else math.nan
    if not (math.isfinite(norm) and norm > 1e-12):
        raise PlanningError(f"a direction is a non-zero 3-vector; got {direction!r}")
    return vector / norm


@dataclass(frozen=True)
class Approach:
    """A straight-line motion of ``distance`` [m] along ``direction`` (in the plugin's base frame; None: along
    the link's z axis, the tool axis, at the goal for a touch approach and backwards at the start for a
    retraction)."""

    distance: float
    direction: Sequence[float] | None = None


@dataclass(frozen=True, eq=False)
class PlanOptions:
    """How ``plan`` plans; validated once, here (PlanningError naming the valid choices, PlannerError for an
    unknown planner).

    ``prioritization``: "shortest_path" (among the reachable goals the one with the shortest path) or
    "list_order" (the first goal reachable). ``motion``: "free", or "touch" (ends with a straight ``approach`` to
    the pose goal). ``retract``: the plan starts with this straight retraction (``MotionPlan.retraction`` of the
    plan before). ``planner_id``: one of ``ompl_search.PLANNER_IDS`` (also as MoveIt spells them; "" the default),
    kept as its plain name. ``planning_time`` [s] for the goals, search, simplification, re-checks and blend radii;
    ``attempts`` searches, the shortest path kept. The trajectory is timed within ``limits`` (default: the URDF's
    velocities, ``time_parameterization.joint_limits``) times ``velocity_scaling`` and ``acceleration_scaling``.
    ``blend``: the trajectory flows through the joint waypoints, each within its blend radius, instead of stopping
    at each. ``blend_radii``: each waypoint's blend radius is found (always with ``blend``; otherwise they are 0, as
    no ROS answer carries them: the search for them took about a sixth of a plan's time). ``diagnose``: the answer
    lists the collisions and limit violations of the start and of every goal.
    Its points are at most ``resolution`` apart per joint [rad or m], each checked; the search checks its motions at
    ``search_resolution`` (the straight motion to a goal too).

    Notes: the search resolution is nine times the trajectory's: a coarse check finds a path sooner, and a segment
    that fails the trajectory's final check is searched again at the fine resolution.
    """

    prioritization: str = "shortest_path"
    motion: str = "free"
    approach: Approach | None = None
    retract: Approach | None = None
    planner_id: str = DEFAULT_PLANNER
    planning_time: float = 1.0
    attempts: int = 1
    limits: JointLimits | None = None
    velocity_scaling: float = 1.0
    acceleration_scaling: float = 1.0
    diagnose: bool = False
    resolution: float = FINE_RESOLUTION
    blend: bool = False
    blend_radii: bool = False
    search_resolution: float = SEARCH_RESOLUTION

    def __post_init__(self):
        _check_choice(self.prioritization, PRIORITIZATIONS, "prioritization")
        _check_choice(self.motion, MOTION_TYPES, "motion")
        if self.motion == "touch" and self.approach is None:
            raise PlanningError(TOUCH_NEEDS)
        for what, linear in (("approach", self.approach), ("retract", self.retract)):
            if linear is not None and not _positive(linear.distance):
                raise PlanningError(f"{what} distance must be finite and > 0 [m]; got {linear.distance!r}")
            if linear is not None and linear.direction is not None:
                unit_direction(linear.direction)
        for what, value, unit in (("planning_time", self.planning_time, " [s]"),
                                  ("velocity_scaling", self.velocity_scaling, ""),
                                  ("acceleration_scaling", self.acceleration_scaling, ""),
                                  ("resolution", self.resolution, " [rad or m]"),
                                  ("search_resolution", self.search_resolution, " [rad or m]")):
            if not _positive(value):
                raise PlanningError(f"{what} must be finite and > 0{unit}; got {value!r}")
        for what in ("blend", "blend_radii"):
            if not isinstance(getattr(self, what), bool):
                raise PlanningError(f"{what} must be True or False; got {getattr(self, what)!r}")
        if not (isinstance(self.attempts, numbers.Integral) and self.attempts >= 1):
            raise PlanningError(f"attempts must be an integer >= 1; got {self.attempts!r}")
        object.__setattr__(self, "planner_id", planner_id_or_default(self.planner_id))
