"""Poses a closed-form arm provably cannot reach are NO_IK_SOLUTION at once, saying why; poses at the edge of the
reach (singular: the arm stretched) still go on to be solved."""
from __future__ import annotations

import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent / "closed_form"))
from closed_form_cases import CLOSED_FORM_ROBOTS, pose_errors  # noqa: E402

from kinematics_py import ErrorCode, KinematicsPlugin, KinematicsQueryOptions  # noqa: E402
from kinematics_py.ik.closed_form.branch_search import out_of_reach_message  # noqa: E402

TIMEOUT = 1.0
#: An out-of-reach answer comes well within this [s] (the search would take the whole TIMEOUT).
QUICK = 0.1


def plugin_on(name: str) -> KinematicsPlugin:
    path, base, tip, _ = CLOSED_FORM_ROBOTS[name]
    plugin = KinematicsPlugin()
    assert plugin.initialize(Path(path()).read_text(), "arm", base, [tip]), plugin.last_error
    return plugin


def stretched(plugin: KinematicsPlugin, seed: int = 3) -> np.ndarray:
    """A configuration within the limits whose wrist point is (nearly) as far as it goes: the arm stretched, a
    singular pose."""
    closed_form = plugin.group_setup.closed_form
    chain = closed_form.chain
    lower, upper = np.maximum(chain.lower, -np.pi), np.minimum(chain.upper, np.pi)
    rng = np.random.default_rng(seed)
    q = rng.uniform(lower, upper, (2000, 6))
    best = q[np.argmax([closed_form.beyond_reach(T) for T in chain.forward_kinematics(q)])]
    step = 0.05
    for _ in range(300):
        trials = np.clip(best + rng.normal(0.0, step, (32, 6)), lower, upper)
        values = [closed_form.beyond_reach(T) for T in chain.forward_kinematics(trials)]
        if max(values) > closed_form.beyond_reach(chain.forward_kinematics(best)):
            best = trials[int(np.argmax(values))]
        else:
            step *= 0.9
    return best


def outward(T: np.ndarray, distance: float, centre: np.ndarray) -> np.ndarray:
    """``T`` moved ``distance`` [m] away from ``centre`` (its wrist point moves as much, farther from the centre
    when the wrist point lies beyond the tip as seen from it, as for a stretched arm)."""
    moved = T.copy()
    direction = T[:3, 3] - centre
    moved[:3, 3] += distance * direction / np.linalg.norm(direction)
    return moved


@pytest.mark.parametrize("name", ["ur5", "kinova", "kr16", "puma560", "spherical-shoulder"])
def test_a_pose_beyond_the_reach_is_no_ik_solution_at_once(name):
    plugin = plugin_on(name)
    chain = plugin.group_setup.closed_form.chain
    T = chain.forward_kinematics(np.zeros(6)).copy()
    T[:3, 3] += (3.0, 0.0, 0.0)
    for call in (lambda: plugin.searchPositionIK(T, np.zeros(6), TIMEOUT),
                 lambda: plugin.searchPositionIK(T, np.zeros(6), TIMEOUT, solution_callback=lambda pose, q: True),
                 lambda: plugin.getPositionIK(T, np.zeros(6))):
        started = time.perf_counter()
        result = call()
        elapsed = time.perf_counter() - started
        assert result.error_code == ErrorCode.NO_IK_SOLUTION and elapsed < QUICK, (elapsed, result.message)
        assert result.message.startswith("the pose is out of reach: the wrist point it needs is ")
        assert "whatever the joint values" in result.message


@pytest.mark.parametrize("name", ["kr16", "ur5"])
def test_a_stretched_arm_is_still_solved_and_just_past_it_is_left_to_the_search(name):
    plugin = plugin_on(name)
    setup = plugin.group_setup
    chain = setup.closed_form.chain
    T = chain.forward_kinematics(stretched(plugin))
    assert -0.01 < setup.closed_form.beyond_reach(T) <= 1e-9  # at the edge of the reach
    result = plugin.searchPositionIK(T, np.zeros(6), TIMEOUT)
    assert result.success, result.message
    position, rotation = pose_errors(chain, np.array(result.solution)[None], T)
    assert position[0] <= 1e-5 and rotation[0] <= 1e-5
    # Moved outward by less than the position threshold: a configuration may still be within the thresholds.
    assert out_of_reach_message(setup, outward(T, 0.5e-5, setup.closed_form.reach.centre)) is None


def test_approximate_solutions_are_still_searched_for():
    plugin = plugin_on("kr16")
    setup = plugin.group_setup
    T = outward(setup.closed_form.chain.forward_kinematics(stretched(plugin)), 0.02, setup.closed_form.reach.centre)
    assert setup.closed_form.beyond_reach(T) > 0.01
    assert plugin.searchPositionIK(T, np.zeros(6), TIMEOUT).message.startswith("the pose is out of reach")
    result = plugin.searchPositionIK(T, np.zeros(6), 0.05,
                                     options=KinematicsQueryOptions(return_approximate_solution=True))
    assert result.approximate and result.solution is not None, result.message


@pytest.mark.parametrize("name", ["ur5", "spherical-shoulder"])
def test_absurdly_far_poses_are_out_of_reach_without_overflow_warnings(name):
    plugin = plugin_on(name)
    for far in (1e300, 1.7e308):
        T = np.eye(4)
        T[:3, 3] = (far, far, -far)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            result = plugin.searchPositionIK(T, np.zeros(6), TIMEOUT)
        assert result.error_code == ErrorCode.NO_IK_SOLUTION and "out of reach" in result.message
