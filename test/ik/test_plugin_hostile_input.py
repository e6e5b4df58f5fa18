"""Hostile but well-formed targets: quaternions of any finite magnitude are rotations, absurdly far positions are
unreachable (NO_IK_SOLUTION, as MoveIt answers any unreachable pose), and neither reaches an internal error."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from test_plugin_conformance import CASES, SEED, shared_plugin, verifier_for

from kinematics_py import ErrorCode, Pose

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
