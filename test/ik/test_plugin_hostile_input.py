"""Hostile but well-formed targets: quaternions of any finite magnitude are rotations, absurdly far positions are
unreachable (NO_IK_SOLUTION, as MoveIt answers any unreachable pose), and neither reaches an internal error. Bad
numbers (NaN, inf, wrong lengths) in seeds and poses get an error code and a message on every IK path: the closed
form's lean path, the 7-joint locked-joint closed form, the numerical search, discretization, batch (issue 18)."""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from test_plugin_conformance import CASES, SEED, shared_plugin, verifier_for

from kinematics_py import DiscretizationMethod, ErrorCode, KinematicsQueryOptions, Pose

PANDA = CASES["bundled-panda"]
TIMEOUT = 0.1
HUGE_SCALES = (1e200, 1e300, 1.7e308)
ABSURD_POSITIONS = ((1e300, 0.0, 0.0), (1e308, 1e308, -1e308), (0.0, 0.0, 1e5))


def _query():
    plugin = shared_plugin("bundled-panda")
    check = verifier_for(PANDA, plugin)
    rng = np.random.default_rng(SEED)
    answer = check.random_configuration(rng)
    (target,) = check.targets(answer)
    return plugin, check, target, check.random_configuration(rng)


@pytest.mark.parametrize("scale", HUGE_SCALES, ids=str)
def test_huge_quaternion_is_a_valid_rotation_for_search_and_batch(scale):
    plugin, check, target, seed = _query()
    huge = Pose(target.position, tuple(scale * v for v in target.orientation))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no overflow on the way
        result = plugin.searchPositionIK(huge, seed.tolist(), TIMEOUT)
        (batch_result,) = plugin.searchPositionIKBatch([huge], [seed.tolist()])
    for answer in (result, batch_result):
        assert answer.success and answer.error_code == ErrorCode.SUCCESS, answer
        assert not check.problems(answer.solution, target)


def test_huge_quaternion_on_one_axis_is_that_rotation_not_an_error():
    plugin, _check, target, seed = _query()
    huge_w = Pose(target.position, (0.0, 0.0, 0.0, 1e200))  # the identity orientation
    results = [plugin.searchPositionIK(huge_w, seed.tolist(), TIMEOUT), *plugin.searchPositionIKBatch([huge_w])]
    for result in results:  # searched for like any goal (the identity may be out of reach there)
        assert result.error_code in (ErrorCode.SUCCESS, ErrorCode.NO_IK_SOLUTION), result


@pytest.mark.parametrize("position", ABSURD_POSITIONS, ids=str)
def test_absurdly_far_target_is_no_ik_solution(position):
    plugin, _check, _target, seed = _query()
    results = [plugin.searchPositionIK(Pose(position), seed.tolist(), 0.01),
               *plugin.searchPositionIKBatch([Pose(position)])]
    for result in results:
        assert (result.success, result.error_code) == (False, ErrorCode.NO_IK_SOLUTION), result
        assert result.message


#: Bad joint vectors for a 6- or 7-joint group: (name, builder from the joint count).
BAD_JOINT_VECTORS = {
    "nan": lambda n: [math.nan] + [0.1] * (n - 1),
    "inf": lambda n: [0.1] * (n - 1) + [-math.inf],
    "huge": lambda n: [1e300] * n,
    "too-short": lambda n: [0.1] * (n - 1),
    "too-long": lambda n: [0.1] * (n + 1),
    "empty": lambda n: [],
    "not-numbers": lambda n: ["a"] * n,
}
BAD_POSES = {
    "nan-position": Pose((math.nan, 0.0, 0.5)),
    "inf-orientation": Pose((0.3, 0.0, 0.5), (math.inf, 0.0, 0.0, 1.0)),
    "huge-position": Pose((1e308, -1e308, 1e308)),
    "zero-quaternion": Pose((0.3, 0.0, 0.5), (0.0, 0.0, 0.0, 0.0)),
}
#: The closed form's lean path (UR5), the 7-joint locked-joint closed form (Panda), the numerical search (4 joints).
ARMS = ("bundled-ur5", "bundled-panda", "planar-4dof")


def _every_ik_call(plugin, pose, seed):
    """(name, IKResult) of every IK entry point for one pose and seed."""
    options = KinematicsQueryOptions(discretization_method=DiscretizationMethod.ALL_DISCRETIZED)
    approximate = KinematicsQueryOptions(return_approximate_solution=True)
    yield "searchPositionIK", plugin.searchPositionIK(pose, seed, TIMEOUT)
    yield "getPositionIK", plugin.getPositionIK(pose, seed)
    yield "ALL_DISCRETIZED", plugin.getPositionIK(pose, seed, options)
    yield "approximate", plugin.searchPositionIK(pose, seed, TIMEOUT, options=approximate)
    yield "batch", plugin.searchPositionIKBatch([pose], [seed])[0]


@pytest.mark.parametrize("arm", ARMS)
@pytest.mark.parametrize("bad", sorted(BAD_JOINT_VECTORS))
def test_bad_seeds_get_an_error_code_with_a_message_on_every_path(arm, bad):
    plugin = shared_plugin(arm)
    n = len(plugin.getJointNames())
    ok, (pose,) = plugin.getPositionFK(plugin.getTipFrames(), [0.1] * n)
    seed = BAD_JOINT_VECTORS[bad](n)
    assert ok
    for name, result in _every_ik_call(plugin, pose, seed):
        if bad == "huge":  # a seed of 1e300 rad is a valid seed: answers come in the limits, verified
            check = verifier_for(CASES[arm], plugin)
            assert not result.success or not check.problems(result.solution, pose), (name, result)
            continue
        assert (result.success, result.error_code) == (False, ErrorCode.INVALID_ROBOT_STATE), (name, result)
        assert result.message, name
    assert plugin.all_solutions(pose, seed) == [] or bad == "huge"
    assert plugin.getPositionFK(plugin.getTipFrames(), seed)[0] is (bad == "huge")


@pytest.mark.parametrize("arm", ARMS)
@pytest.mark.parametrize("bad", sorted(BAD_POSES))
def test_bad_poses_get_an_error_code_with_a_message_on_every_path(arm, bad):
    plugin = shared_plugin(arm)
    seed = [0.1] * len(plugin.getJointNames())
    for name, result in _every_ik_call(plugin, BAD_POSES[bad], seed):
        expected = ErrorCode.NO_IK_SOLUTION if bad == "huge-position" else ErrorCode.INVALID_GOAL_CONSTRAINTS
        assert (result.success, result.error_code) == (False, expected), (name, result)
        assert result.message, name
    assert plugin.all_solutions(BAD_POSES[bad], seed) == []
