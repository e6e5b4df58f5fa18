"""A collision-free joint-space path by one of OMPL's sampling-based planners (PyPI ``ompl``), and OMPL's path
simplification.

OMPL samples and connects states; each motion it tries is checked here in one call (``PathCheck.segment_free``),
not state by state through Python. Several goal configurations are given as OMPL goal states: the planner
connects to whichever it reaches first.
"""
from __future__ import annotations

import functools
import itertools
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..errors import KinematicsError
from .path_check import PathCheck

#: The planners one can name (``planner_id``), the first is the default. Each works with several goal states and
#: with a motion check that answers a whole segment.
PLANNER_IDS = ("RRTConnect", "RRT", "RRTstar", "InformedRRTstar", "BITstar", "BKPIECE1", "KPIECE1")
DEFAULT_PLANNER = PLANNER_IDS[0]
#: Tries per round of simplification, and rounds without a change after which it ends.
SIMPLIFY_ROUND_STEPS = 4
SIMPLIFY_IDLE_ROUNDS = 3
#: Longest simplification of a found path [s] (OMPL's shortcutting and vertex reduction; a quarter of the time
#: limit when that is shorter, taken from the search's time).
SIMPLIFY_MAX_S = 0.05


class PlannerError(KinematicsError):
    """A planner that does not exist or cannot run; names the valid ones."""


@dataclass(frozen=True)
class SearchResult:
    """The waypoints of a collision-free path (None when none was found) and OMPL's status."""

    waypoints: np.ndarray | None
    status: str


@functools.cache
def load_ompl():
    """OMPL's base and geometric modules, imported on first use, with its log on stdout limited to errors."""
    from ompl import base, geometric, util

    util.setLogLevel(util.LOG_ERROR)
    return base, geometric


def planner_id_or_default(planner_id: str) -> str:
    """The planner to use for ``planner_id`` ("" gives the default; MoveIt's "<group>[<id>]" and "<id>kConfig..."
    forms name the same planners); PlannerError naming the valid ones otherwise."""
    name = planner_id.strip()
    if "[" in name and name.endswith("]"):
        name = name[name.index("[") + 1:-1]
    name = name.removesuffix("kConfigDefault")
    if not name:
        return DEFAULT_PLANNER
    if name not in PLANNER_IDS:
        raise PlannerError(f"unknown planner {planner_id!r}; planners are {list(PLANNER_IDS)}")
    return name


def search_path(check: PathCheck, start: np.ndarray, goals: np.ndarray, bounds: tuple[np.ndarray, np.ndarray],
                planner_id: str, time_limit: float, should_stop: Callable[[], bool] | None = None,
                simplify: bool = True) -> SearchResult:
    """A path from ``start`` to one of the ``goals`` (rows), all collision-free and within ``bounds`` (widened to
    hold the start and the goals: a continuous joint's bounds are a half turn either way of the plan's start, and a
    goal or a detour's end may lie beyond), found and simplified by OMPL's shortcutting (when ``simplify``: a
    quarter of the time, at most SIMPLIFY_MAX_S) within ``time_limit`` [s], or until ``should_stop()``."""
    base, geometric = load_ompl()
    planner_id = planner_id_or_default(planner_id)
    dof = len(start)
    space = base.RealVectorStateSpace(dof)
    space_bounds = base.RealVectorBounds(dof)
    ends = np.vstack([start, goals])
    for i, (low, high) in enumerate(zip(np.minimum(bounds[0], ends.min(axis=0)),
                                        np.maximum(bounds[1], ends.max(axis=0)))):
        space_bounds.setLow(i, float(low))
        space_bounds.setHigh(i, float(high))
    space.setBounds(space_bounds)
    setup = geometric.SimpleSetup(space)
    information = setup.getSpaceInformation()

    def values(state) -> np.ndarray:
        return np.array([state[i] for i in range(dof)])

    class SegmentValidator(base.MotionValidator):
        def checkMotion(self, s1, s2) -> bool:  # noqa: N802 (OMPL's name)
            return check.segment_free(values(s1), values(s2))

    setup.setStateValidityChecker(lambda state: check.state_free(values(state)))
    validator = SegmentValidator(information)
    information.setMotionValidator(validator)
    setup.setStartState(_state(space, start))
    goal_states = base.GoalStates(information)
    for goal in goals:
        goal_states.addState(_state(space, goal))
    setup.setGoal(goal_states)
    setup.setPlanner(getattr(geometric, planner_id)(information))
    stop = should_stop or (lambda: False)
    simplify_time = min(SIMPLIFY_MAX_S, max(time_limit, 0.0) / 4) if simplify else 0.0
    condition = base.plannerOrTerminationCondition(
        base.timedPlannerTerminationCondition(max(time_limit - simplify_time, 0.0)),
        base.PlannerTerminationCondition(stop))
    status = setup.solve(condition)
    if not setup.haveExactSolutionPath():  # RRTConnect reports an approximate path to an unreachable goal
        return SearchResult(None, str(status))
    path = setup.getSolutionPath()

    def waypoints_of(path) -> np.ndarray:
        return np.array([values(path.getState(i)) for i in range(path.getStateCount())])

    if simplify:
        shorten(geometric.PathSimplifier(information), path, simplify_time, lambda path: all(
            check.segment_free(a, b) for a, b in itertools.pairwise(waypoints_of(path))))
    return SearchResult(waypoints_of(path), str(status))


def shorten(simplifier, path, seconds: float, segments_free: Callable[[object], bool]) -> None:
    """OMPL's vertex reduction and partial shortcutting, in rounds of SIMPLIFY_ROUND_STEPS tries each, until
    ``seconds`` [s] are spent or SIMPLIFY_IDLE_ROUNDS rounds in a row change nothing. (OMPL's own ``simplify``
    looks at its time only between whole passes, which overran a 10 ms limit by up to 60 ms here.)

    Vertex reduction checks its shortcuts with the motion validator; partial shortcutting checks interpolated
    states at OMPL's own resolution instead (about one path in twenty had a segment in collision after it, on the
    UR5 around the demo's obstacle), so a round of it is kept only when ``segments_free(path)``."""
    _, geometric = load_ompl()
    end, idle = time.perf_counter() + seconds, 0
    while idle < SIMPLIFY_IDLE_ROUNDS and time.perf_counter() < end:
        changed = simplifier.reduceVertices(path, SIMPLIFY_ROUND_STEPS, SIMPLIFY_ROUND_STEPS)
        if time.perf_counter() < end:
            before = geometric.PathGeometric(path)
            if simplifier.partialShortcutPath(path, SIMPLIFY_ROUND_STEPS, SIMPLIFY_ROUND_STEPS):
                if segments_free(path):
                    changed = True
                else:
                    path.assign(before)
        idle = 0 if changed else idle + 1


def _state(space, q: np.ndarray):
    state = space.allocState()
    for i, value in enumerate(q):
        state[i] = float(value)
    return state
