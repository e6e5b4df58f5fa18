"""``ik.search``: the caller's budget, the solve modes' costs, the choice among solutions, near misses polished."""
from __future__ import annotations

import math

import numpy as np
import pytest
from robots import UR5_Q, UR5_UNREACHABLE_POSITION, ur5_arm_plugin

from kinematics_py import KinematicsPlugin
from kinematics_py.geometry.transforms import transform_from_pose
from kinematics_py.ik import search
from kinematics_py.ik.budget import Budget
from kinematics_py.ik.problem import SolverSetup
from kinematics_py.parameters import SOLVE_MODES

Q = np.array(UR5_Q)


@pytest.fixture(scope="module")
def ur5() -> KinematicsPlugin:
    return ur5_arm_plugin()


def _target(setup, q: np.ndarray) -> np.ndarray:
    return setup.problem.chains[0].forward_kinematics(q)[None]


def test_a_budget_that_says_stop_ends_the_search_before_its_first_compiled_call(ur5):
    setup = ur5.group_setup
    calls = []
    outcome = search.IkSearch(setup.solver, _target(setup, Q), np.zeros(6), timeout=10.0,
                       budget=Budget(lambda: calls.append(1) or True)).run()
    assert outcome.solution is None and outcome.searches == 0 and calls == [1]
    assert search.quick_search(setup.solver, _target(setup, Q), np.zeros(6), 10.0, Budget(lambda: True)) == (None, 0)


def test_a_budget_whose_deadline_passed_sizes_the_next_call_to_one_start(ur5):
    setup = ur5.group_setup
    solver = SolverSetup.build(setup.problem, setup.solver.params)  # its own timing
    solver.timing.seconds_per_start = 1.0
    unreachable = transform_from_pose(UR5_UNREACHABLE_POSITION, (0.0, 0.0, 0.0, 1.0))[None]
    q, used = search.quick_search(solver, unreachable, np.zeros(6), 10.0, Budget(deadline=-math.inf))
    assert q is None and used == 1


@pytest.mark.parametrize("mode", SOLVE_MODES)
def test_the_costs_of_many_solutions_are_those_of_each_alone(ur5, mode):
    setup = ur5.group_setup
    solver = SolverSetup.build(setup.problem, setup.solver.params.replace(solve_mode=mode))
    solutions = np.random.default_rng(1).uniform(-3.0, 3.0, (5, 6))
    seed = np.full(6, 0.2)
    together = search.preference_costs(solver, solutions, seed, None)
    alone = [search.preference_costs(solver, q[None], seed, None)[0] for q in solutions]
    assert together.shape == (5,) and np.allclose(together, alone)
    assert np.allclose(search.preference_costs(solver, solutions, seed, lambda q: float(q[0])), solutions[:, 0])


def test_equal_costs_go_to_the_solution_nearest_the_seed(ur5):
    solver = ur5.group_setup.solver  # speed mode: every cost 0
    seed = np.zeros(6)
    far, near = np.full(6, 1.0), np.full(6, 0.1)
    assert search.preferred_solution(solver, [far, near], seed, None) is near
    assert search.preferred_solution(solver, [far, near], seed, lambda q: -float(np.sum(q))) is far


def test_polishing_keeps_only_new_solutions(ur5):
    setup = ur5.group_setup
    targets = _target(setup, Q)
    near_miss = Q + 0.01
    found = search.polished(setup.solver, targets, Q, [], np.array([near_miss, near_miss + 0.001]))
    assert len(found) == 1 and found[0][0] == 0 and search.same_solution(found[0][1], Q, setup.problem.is_revolute)
    assert search.polished(setup.solver, targets, Q, [Q], np.array([near_miss])) == []
