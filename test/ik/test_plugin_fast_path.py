"""The lean path of plain requests to closed-form arms (``ik.closed_form.fast_path``): the same answers as the
general path, every input it does not take handed on (and still answered or reported), no compilation on a
request's path."""
from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest
from robots import bundled_robot

sys.path.insert(0, str(Path(__file__).resolve().parent / "closed_form"))
from closed_form_cases import CLOSED_FORM_ROBOTS, pose_errors, random_configurations  # noqa: E402

from kinematics_py import ErrorCode, IKResult, KinematicsPlugin, Pose  # noqa: E402
from kinematics_py.ik.closed_form import kernels  # noqa: E402

SEED = 20261130
QUERIES = 30
ROBOTS = ("ur5", "kinova", "kr16", "puma560", "spherical-shoulder")


def plugin_on(name: str, parameters: dict | None = None) -> KinematicsPlugin:
    path, base, tip, _ = CLOSED_FORM_ROBOTS[name]
    plugin = KinematicsPlugin()
    assert plugin.initialize(Path(path()).read_text(), "arm", base, [tip], parameters=parameters), plugin.last_error
    return plugin


def queries(plugin: KinematicsPlugin, count: int = QUERIES):
    chain = plugin.group_setup.problem.chains[0]
    rng = np.random.default_rng(SEED)
    Ts = np.ascontiguousarray(chain.forward_kinematics(random_configurations(chain, rng, count)))
    return chain, Ts, random_configurations(chain, rng, count)


def accept_all(ik_pose, solution):
    return True


@pytest.mark.parametrize("name", ROBOTS)
def test_plain_requests_get_the_general_paths_answer(name):
    """Speed mode without callbacks: the nearest branch, as the general path (here forced by an accepting callback)
    finds it, with the same result fields."""
    plugin = plugin_on(name)
    assert plugin.group_setup.fast_path is not None
    chain, Ts, seeds = queries(plugin)
    for T, seed in zip(Ts, seeds):
        fast = plugin.searchPositionIK(T, seed)
        general = plugin.searchPositionIK(T, seed, solution_callback=accept_all)
        assert general.success and fast.success and fast.error_code == ErrorCode.SUCCESS
        assert fast.solution == general.solution
        assert fast.solutions == (tuple(fast.solution),) and not fast.approximate and fast.diagnostics is None
        assert len(fast) == len(IKResult._fields)  # built field by field: every field there
        assert fast.message.startswith("solved in ") and "(closed form, " in fast.message
        assert plugin.getPositionIK(T, seed).solution == fast.solution
        position, rotation = pose_errors(chain, np.array(fast.solution)[None], T)
        assert position[0] <= 1e-5 and rotation[0] <= 1e-5 and chain.within_limits(np.array(fast.solution), 1e-9)


def test_every_form_of_pose_and_seed_gets_the_same_answer_without_compiling_a_variant():
    plugin = plugin_on("ur5")
    _, Ts, seeds = queries(plugin, 5)
    for T, seed in zip(Ts, seeds):
        expected = plugin.searchPositionIK(T, seed).solution
        poses = (T, np.asfortranarray(T), T.astype(np.float32).astype(np.float64), Pose.from_transform(T), [T])
        seed_forms = (seed.tolist(), tuple(seed), np.repeat(seed, 2)[::2], seed.astype(np.float32).astype(float))
        for pose in poses:
            for seed_form in seed_forms:
                result = plugin.searchPositionIK(pose, seed_form, 0.05)
                assert result.success and np.allclose(result.solution, expected, atol=1e-9)
        assert plugin.searchPositionIK(T.astype(np.float32), seed).success
        assert plugin.searchPositionIK(T, seed.astype(np.float32)).success
    assert len(kernels.nearest_solution.signatures) == 1


def test_a_pose_value_takes_the_lean_path_too():
    plugin = plugin_on("ur5")
    _, Ts, seeds = queries(plugin, 3)
    fast_path = plugin.group_setup.fast_path
    for T, seed in zip(Ts, seeds):
        result = plugin.searchPositionIK(Pose.from_transform(T), seed)
        assert "the branch nearest the seed" in result.message
        assert np.allclose(result.solution, fast_path(T, seed).solution, atol=1e-9)
    refused = plugin.searchPositionIK(Pose((0.0, 0.0, 0.0), (0.0, 0.0, 0.0, 0.0)), seeds[0])
    assert refused.error_code == ErrorCode.INVALID_GOAL_CONSTRAINTS and "invalid target pose" in refused.message


def test_bad_input_is_still_reported():
    plugin = plugin_on("kr16")
    _, Ts, seeds = queries(plugin, 1)
    T, seed = Ts[0], seeds[0]
    bad_pose = T.copy()
    bad_pose[0, 3] = math.nan
    assert plugin.searchPositionIK(bad_pose, seed).error_code == ErrorCode.INVALID_GOAL_CONSTRAINTS
    assert plugin.searchPositionIK(T[:3, :3].copy(), seed).error_code == ErrorCode.INVALID_GOAL_CONSTRAINTS
    for bad_seed in (seed[:5].copy(), np.append(seed, 0.0), np.full(6, np.inf), ["a"] * 6, None):
        assert plugin.searchPositionIK(T, bad_seed).error_code == ErrorCode.INVALID_ROBOT_STATE
        assert plugin.getPositionIK(T, bad_seed).error_code == ErrorCode.INVALID_ROBOT_STATE
    for bad_timeout in (-1.0, math.nan, math.inf, "soon"):
        assert plugin.searchPositionIK(T, seed, bad_timeout).error_code == ErrorCode.FAILURE


def test_only_plain_set_ups_take_it():
    assert plugin_on("ur5", {"solve_mode": "distance"}).group_setup.fast_path is None
    assert plugin_on("ur5", {"position_threshold": 1e-7}).group_setup.fast_path is None
    plugin = plugin_on("ur5")
    assert plugin.setRedundantJoints([0])
    assert plugin.group_setup.fast_path is None
    panda = KinematicsPlugin()
    assert panda.initialize(bundled_robot("panda.urdf").read_text(), "panda_arm", "panda_link0", ["panda_link8"])
    assert panda.group_setup.fast_path is None


def test_requests_with_anything_else_take_the_general_path():
    """A callback, a cost, consistency limits or options are honoured: the fast path never answers them."""
    plugin = plugin_on("puma560")
    _, Ts, seeds = queries(plugin, 3)
    for T, seed in zip(Ts, seeds):
        assert plugin.searchPositionIK(T, seed, solution_callback=lambda pose, q: False).error_code \
            == ErrorCode.NO_IK_SOLUTION
        assert not plugin.searchPositionIK(T, seed, 0.05, consistency_limits=[1e-6] * 6).success
        costly = plugin.searchPositionIK(T, seed, cost_function=lambda pose, q: -abs(q[0]))
        assert costly.success and "valid of" in costly.message
