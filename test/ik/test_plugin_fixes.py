"""Search behaviours that once went wrong: wrapped distances in posture mode, solutions equal modulo 2 pi,
callbacks answering None or an unknown code, searches ending within their timeout, the discretization after
setRedundantJoints and getSearchDiscretization() without an index."""
from __future__ import annotations

import math
import time

import numpy as np
import pytest
from test_plugin_api import PANDA, SHORT_TIMEOUT, panda_text, plugin_for_urdf, random_query
from test_plugin_conformance import PANDA_READY, make_plugin, verifier_for

from kinematics_py import DiscretizationMethod, ErrorCode, KinematicsPlugin, KinematicsQueryOptions, Pose
from kinematics_py.ik.search import preference_costs, same_solution

#: A search may end this much [s] after its timeout beyond a few local searches (Python, the clock, load).
TIMEOUT_MARGIN = 0.02
UNREACHABLE = Pose((5.0, 0.0, 0.0))


def test_posture_mode_measures_the_wrapped_distance_to_preferred_posture():
    """A solution a whole turn away from preferred_posture on a revolute joint is in its posture: cost 0."""
    plugin = make_plugin(PANDA, {"solve_mode": "posture", "preferred_posture": PANDA_READY})
    solver = plugin.group_setup.solver
    preferred = np.array(PANDA_READY)
    turned = preferred.copy()
    turned[0] += 2 * math.pi
    assert preference_costs(solver, turned[None], np.zeros(7), None)[0] == pytest.approx(0.0, abs=1e-18)
    nearby = preferred + 0.1
    assert preference_costs(solver, nearby[None], np.zeros(7), None)[0] == pytest.approx(0.07)


def test_solutions_equal_modulo_two_pi_are_one_solution():
    """Discretizing a continuous joint over a whole turn reaches the same solution at both ends of the turn:
    it is returned once."""
    plugin, check = plugin_for_urdf("continuous.urdf", "base_link", ["tool"])
    assert plugin.setRedundantJoints([0])
    plugin.setSearchDiscretization(math.pi / 4)
    seed = np.array([0.2, 0.3, 0.4, 0.5])
    answer = seed.copy()
    answer[0] += math.pi  # the last value of the grid seed - pi ... seed + pi, and the first one
    targets = check.targets(answer)
    result = plugin.searchPositionIK(targets, seed.tolist(), 1.0, options=KinematicsQueryOptions(
        discretization_method=DiscretizationMethod.ALL_DISCRETIZED))
    assert result.success, result.message
    revolute = np.ones(4, dtype=bool)
    solutions = [np.array(s) for s in result.solutions]
    for i, a in enumerate(solutions):
        assert not check.problems(a, targets)
        for b in solutions[:i]:
            assert not same_solution(a, b, revolute), (a, b)


@pytest.mark.parametrize("answer", [None, 7777, "yes", 2.5])
def test_a_callback_answering_neither_bool_nor_error_code_rejects_the_solution_and_says_so(answer):
    plugin = make_plugin(PANDA)
    check = verifier_for(PANDA, plugin)
    _, (target,), seed = random_query(check, np.random.default_rng(3))
    result = plugin.searchPositionIK(target, seed.tolist(), SHORT_TIMEOUT,
                                     solution_callback=lambda pose, solution: answer)
    assert not result.success and result.error_code == ErrorCode.NO_IK_SOLUTION
    assert f"returned {answer!r}" in result.message


def test_a_callback_answering_none_in_a_collision_aware_search_is_a_rejection_too():
    """The collision-aware search counts the other callback's rejections; None is one, not an exception (and
    the answer does not claim that every solution collided)."""
    from kinematics_py import CollisionChecker, SemanticModel
    plugin = make_plugin(PANDA)
    model = plugin.robot_model
    plugin.setCollisionChecker(CollisionChecker(model, SemanticModel.from_srdf_string(panda_text()[1], model)))
    ok, (ready_pose,) = plugin.getPositionFK(["panda_link8"], PANDA_READY)  # collision-free, reached from its seed
    result = plugin.searchPositionIK(ready_pose, PANDA_READY, SHORT_TIMEOUT, avoid_collisions=True,
                                     solution_callback=lambda pose, solution: None)
    assert ok and not result.success and result.diagnostics is not None
    assert "every one was in collision" not in result.message


def one_local_search_seconds(plugin: KinematicsPlugin, seed) -> float:
    started = time.perf_counter()
    plugin.getPositionIK(UNREACHABLE, seed)
    return time.perf_counter() - started


@pytest.mark.parametrize("mode", ["speed", "distance"])
def test_a_search_ends_within_its_timeout_plus_about_one_local_search(mode):
    """With slow local searches (many iterations, no stall test) on an unreachable pose, a search stops within
    its timeout plus about one local search, not after a whole compiled call of eight."""
    plugin = make_plugin(PANDA, {"solve_mode": mode, "max_iterations": 3000, "stall_iterations": 0})
    one = max(one_local_search_seconds(plugin, PANDA_READY) for _ in range(2))
    timeout = 0.005
    started = time.perf_counter()
    result = plugin.searchPositionIK(UNREACHABLE, PANDA_READY, timeout)
    elapsed = time.perf_counter() - started
    assert not result.success
    assert elapsed <= timeout + 3 * one + TIMEOUT_MARGIN, (elapsed, one)


def test_a_discretized_search_ends_within_its_timeout():
    """Hundreds of values of the redundant joint and a 5 ms timeout: the search stops at the timeout
    (about one local search later), it does not search every value."""
    plugin = make_plugin(PANDA)
    assert plugin.setRedundantJoints([2])
    plugin.setSearchDiscretization(0.01)
    one = max(one_local_search_seconds(plugin, PANDA_READY) for _ in range(2))
    timeout = 0.005
    started = time.perf_counter()
    plugin.searchPositionIK(UNREACHABLE, PANDA_READY, timeout, options=KinematicsQueryOptions(
        discretization_method=DiscretizationMethod.ALL_DISCRETIZED))
    elapsed = time.perf_counter() - started
    assert elapsed <= timeout + 3 * one + TIMEOUT_MARGIN, (elapsed, one)


def test_set_redundant_joints_resets_the_discretization_to_the_default():
    plugin = make_plugin(PANDA)
    plugin.setSearchDiscretization({2: 0.3})
    assert plugin.setRedundantJoints([2])
    assert plugin.getSearchDiscretization(2) == KinematicsPlugin.DEFAULT_SEARCH_DISCRETIZATION
    plugin.setSearchDiscretization(0.4)
    assert plugin.setRedundantJoints([3])
    assert plugin.getSearchDiscretization() == KinematicsPlugin.DEFAULT_SEARCH_DISCRETIZATION
    plugin.setSearchDiscretization(0.2)
    assert not plugin.setRedundantJoints([9])  # refused: nothing changes
    assert plugin.getSearchDiscretization() == 0.2


def test_search_discretization_without_an_index_is_joint_zeros():
    plugin = make_plugin(PANDA)
    plugin.setSearchDiscretization({0: 0.3, 2: 0.25})
    assert plugin.getSearchDiscretization() == 0.3
    assert plugin.getSearchDiscretization(2) == 0.25
