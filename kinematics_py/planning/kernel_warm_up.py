"""Every compiled kernel a plan may call, loaded from numba's cache (compiled, when the cache is stale) ahead of the
first plan: a kernel a plan reaches only sometimes (the spheres' check of states with margins, when they block a
free state) would otherwise cost that plan the milliseconds of its loading, or the seconds of its compiling.

The set-up's warm-up (``python -m kinematics_py.warm_up``) runs this on the bundled robots; a planning process
(``processes``) runs it on each robot set-up it builds, before its first job.
"""
from __future__ import annotations

import numpy as np

from ..collision.checker import CollisionChecker
from ..collision.witness_points import proven_colliding
from ..ik.plugin import KinematicsPlugin
from ..robot_setup import RobotSetup
from .controller_points import sparse_plan
from .goals import JointGoal
from .motion import MotionPlan, plan
from .motion_bound import clearance_check, first_unproven, provable
from .options import PlanOptions
from .path_check import PathCheck
from .sphere_proof import first_invalid, moving_table, sphere_proof, spheres_free, spheres_free_segments, touching_pairs
from .sphere_search import sphere_search
from .straight_timing import time_straight_line, timed_joint_moves
from .time_parameterization import joint_limits

#: How far (at most, per joint) the warm-up's plan's states are from the state given [rad or m], and how many random
#: states it tries for two free ones.
PLAN_REACH = 0.3
GOAL_TRIES = 20
#: Time of the warm-up's plan and of its sphere search [s]: far more than either takes between states this near (a
#: few milliseconds), so that on a busy machine too the search runs and finds its path (its shortcutting loaded).
PLANNING_TIME_S = 0.5


def warm_up_planning(plugin: KinematicsPlugin, checker: CollisionChecker, state: dict[str, float],
                     near: np.ndarray) -> MotionPlan | None:
    """Load the kernels of a plan of ``plugin``'s group between two free states at or near ``near`` (the robot's
    other joints at ``state``): the sphere search (spheres, RRT-Connect, shortcutting; the plan itself takes the
    straight motion), the plan's straight check and proof (of joint moves with their timing, and alone), the check
    of states with grown spheres that ``sphere_proof.first_invalid`` reaches only when the spheres block a free
    state, the pairs touching at a start or goal and the re-check of a search that relaxed them, the exact proof of a
    step and a repair's grown links (``motion_bound``), the timing of joint moves and of a straight line, and the
    points a controller needs. Returns the plan's result; None when no two of GOAL_TRIES states near ``near`` are free
    (nothing loaded)."""
    model, joints = plugin.robot_model, plugin.getJointNames()
    lower = np.array([model.joints[j].lower for j in joints])
    upper = np.array([model.joints[j].upper for j in joints])
    check = PathCheck(checker, joints, state)
    provable(check)  # (the group's motion bounds, kept per model: its links' hulls, 10-150 ms, not in a first plan)
    rng = np.random.default_rng(0)
    tried = near + np.vstack([np.zeros(len(joints)), rng.uniform(-PLAN_REACH, PLAN_REACH, (GOAL_TRIES, len(joints)))])
    free = [q for q in np.clip(tried, lower, upper) if check.state_free(q)][:2]
    if len(free) < 2:
        return None
    start, goal = free
    sphere_search(check, start, goal[None], (np.maximum(lower, np.minimum(start, goal) - PLAN_REACH),
                                             np.minimum(upper, np.maximum(start, goal) + PLAN_REACH)), PLANNING_TIME_S)
    proof = moving_table(check)
    if proof is not None:
        spheres_free(check, proof.table, np.array([start, goal]), np.zeros((2, len(proof.growth_reach))))
        sphere_proof(check, np.array([start, goal]), proof)  # (a plan's path with linear moves is proven so)
        spheres_free_segments(check, np.array([start, goal]), proof)  # (a path found with relaxed pairs)
        touching_pairs(check, proof.table, np.array([start, goal]))  # (a start or goal whose spheres touch)
        first_invalid(check, np.array([start, goal]), proof)  # (states checked on the spheres, then exactly)
    check.first_invalid(np.array([start, goal]))  # the exact check of states (their order: ``bisection_order``)
    first_unproven(check, np.array([start, goal]))  # (the exact proof of the steps the spheres leave unproven)
    clearance_check(check, 0)  # (a repair's grown links: ``proof_repair``)
    proven_colliding(checker, check.indices, check.base, start)  # (a motion's first touching state)
    limits = joint_limits(model, joints)
    time_straight_line(np.array([start, goal]), limits)
    timed_joint_moves(np.array([start, goal]), limits, check.resolution)  # (a plan's moves not proven on spheres)
    result = plan(plugin, checker, start, [JointGoal(goal)], PlanOptions(planning_time=PLANNING_TIME_S))
    sparse_plan(result)
    return result


def warm_up_setup(setup: RobotSetup) -> MotionPlan | None:
    """``warm_up_planning`` on the first group of ``setup`` (by name) near its default state (every group's plans
    call the same kernels; every group's motion bounds are computed); None when the robot has no collision geometry
    or no group, or no free states are found."""
    checker = setup.collision.checker
    if checker is None or not setup.groups:
        return None
    _, plugin = min(setup.groups.items())
    state = setup.model.resolve_joint_values({})
    for other in setup.groups.values():  # (every group's motion bounds)
        provable(PathCheck(checker, other.getJointNames(), state))
    return warm_up_planning(plugin, checker, state, np.array([state[joint] for joint in plugin.getJointNames()]))
