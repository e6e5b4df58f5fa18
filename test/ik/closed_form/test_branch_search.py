"""``ik.closed_form.branch_search``: the closed form inside the plugin's searches (every branch, called back
nearest the seed first, the caller's budget, out-of-reach proofs)."""
from __future__ import annotations

import numpy as np
import pytest
from robots import UR5_Q, ur5_arm_plugin

from kinematics_py import ErrorCode
from kinematics_py.ik.budget import Budget
from kinematics_py.ik.closed_form.branch_search import (
    call_back_branches,
    closed_form_search,
    out_of_reach_message,
    verified_branches,
)
from kinematics_py.ik.search import SearchOutcome

Q = np.array(UR5_Q)


@pytest.fixture(scope="module")
def setup():
    return ur5_arm_plugin().group_setup


def _search(setup, **arguments):
    T = setup.closed_form.chain.forward_kinematics(Q)
    defaults = dict(consistency_limits=None, is_valid=None, cost_function=None, collect_all=False)
    return closed_form_search(setup, T[None], Q + 0.05, **{**defaults, **arguments})


def test_every_branch_is_collected_and_the_nearest_is_the_solution(setup):
    branches, _ = setup.closed_form.solve(setup.closed_form.chain.forward_kinematics(Q), Q + 0.05)
    outcome = _search(setup, collect_all=True)
    assert outcome.error_code == ErrorCode.SUCCESS and len(outcome.solutions) == len(branches) > 1
    assert np.allclose(outcome.solution, Q, atol=1e-6)


def test_branches_are_called_back_nearest_the_seed_first(setup):
    seen = []
    outcome = _search(setup, is_valid=lambda q: seen.append(q.copy()) or False)
    assert outcome.error_code == ErrorCode.NO_IK_SOLUTION and "there are no others" in outcome.message
    first_turns = [np.linalg.norm(q - (Q + 0.05)) for q in seen[:2]]
    assert first_turns == sorted(first_turns)


def test_a_deadline_and_a_stopping_budget_end_the_call_backs_after_the_first_valid_one(setup):
    solutions = np.array([Q, Q + 0.5, Q - 0.5])
    outcome = SearchOutcome(ErrorCode.NO_IK_SOLUTION, "")
    call_back_branches(outcome, setup.solver, solutions, Q, lambda q: True, None, stop_at_first=False,
                       budget=Budget(lambda: True))
    assert len(outcome.solutions) == 3  # no deadline: every branch, whatever the budget says
    outcome = SearchOutcome(ErrorCode.NO_IK_SOLUTION, "")
    call_back_branches(outcome, setup.solver, solutions, Q, lambda q: True, None, stop_at_first=False,
                       deadline=1e300, budget=Budget(lambda: True))
    assert len(outcome.solutions) == 1


def test_consistency_limits_keep_the_branches_near_the_seed(setup):
    solutions = np.array([Q, Q + 0.5])
    kept, codes = verified_branches(setup.solver, setup.closed_form.chain.forward_kinematics(Q)[None], Q, solutions,
                                    np.array([1, 2]), np.full(6, 0.1))
    assert np.array_equal(kept, solutions[:1]) and codes.tolist() == [1]


def test_a_pose_beyond_the_reach_is_proved_out_of_it(setup):
    T = np.eye(4)
    T[0, 3] = 5.0
    assert "out of reach" in out_of_reach_message(setup, T)
    outcome = closed_form_search(setup, T[None], Q, consistency_limits=None, is_valid=None, cost_function=None,
                                 collect_all=False)
    assert outcome.error_code == ErrorCode.NO_IK_SOLUTION and "out of reach" in outcome.message
    assert closed_form_search(setup, T[None], Q, consistency_limits=None, is_valid=None, cost_function=None,
                              collect_all=False, prove_out_of_reach=False) is None
