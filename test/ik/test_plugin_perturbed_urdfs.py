"""Real arms, perturbed (issue 18): initialize never raises, and every answer of a plugin it set up is right.

Property-based (hypothesis, derandomized: CI draws the same cases every run): an arm of ``perturbed_arms.ARMS`` (the
bundled UR5 and Panda, example-robot-data's UR5, UR10, Panda and Kinova, the small URDFs of test/data/urdf, the
KUKA LBR iiwa 14 as ROS-Industrial describes it) with joint origins, axes and limits changed as one kind of
``perturbed_urdfs.KINDS`` says. initialize returns True, or False with a reason that is no defect
(``perturbed_arms.DEFECT_WORDS``); when True, getPositionFK equals pinocchio's FK, and every solution of
searchPositionIK (from random seeds to poses of random configurations) and of all_solutions is inside the limits
the XML writes and reaches its pose by pinocchio's FK within the solver's thresholds. More cases:
bench/fuzz_urdf_perturbations.py. The quirks it found have their own tests below.
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from perturbed_arms import ARMS, check_arm, check_perturbed_arm
from perturbed_urdfs import KINDS, JointChange, movable_joints, perturbed_urdf
from robots import small_urdf

from kinematics_py import DiscretizationMethod, ErrorCode, KinematicsPlugin, KinematicsQueryOptions
from kinematics_py.ik.closed_form import redundant
from kinematics_py.robots import bundled_robot_path

#: Cases per kind of perturbation (7 kinds), and of the node's robot set-up (over every kind).
CASES_PER_KIND = 30
ROBOT_SETUP_CASES = 40


def _settings(examples: int):
    return settings(max_examples=examples, derandomize=True, database=None, deadline=None,
                    suppress_health_check=list(HealthCheck))


@pytest.mark.parametrize("kind", list(KINDS))
@_settings(CASES_PER_KIND)
@given(arm=st.sampled_from(sorted(ARMS)), seed=st.integers(0, 2**32 - 1))
def test_perturbed_arms_initialize_or_refuse_and_every_answer_is_verified(kind, arm, seed):
    _, outcome = check_perturbed_arm(arm, kind, seed)
    assert not outcome.problems, (arm, kind, seed, outcome)


@_settings(ROBOT_SETUP_CASES)
@given(arm=st.sampled_from(sorted(ARMS)), kind=st.sampled_from(list(KINDS)), seed=st.integers(0, 2**32 - 1))
def test_the_robot_set_up_of_perturbed_arms_serves_them_or_says_why_not(arm, kind, seed):
    _, outcome = check_perturbed_arm(arm, kind, seed, robot_setup=True)
    assert not outcome.problems, (arm, kind, seed, outcome)


def test_the_generator_changes_what_it_is_told_and_nothing_else():
    urdf = bundled_robot_path("ur5").read_text()
    changed = perturbed_urdf(urdf, {"elbow_joint": JointChange(xyz=(1e-4, 0.0, 0.0), rpy=(0.0, 2e-4, 0.0),
                                                               lower=-1.0, text={"axis.xyz": "nan 0 1"})})
    plugin = KinematicsPlugin()
    assert not plugin.initialize(changed, "arm", "base_link", "tool0")
    assert "elbow_joint" in plugin.last_error and "non-finite" in plugin.last_error, plugin.last_error
    assert movable_joints(changed) == movable_joints(urdf)
    with pytest.raises(KeyError, match="elbow_joint"):
        perturbed_urdf(urdf, {"elbow": JointChange()})


# ------------------------------------------------------------------------------ the quirks found, one test each
def test_lbr_iiwa_as_ros_industrial_describes_it_initializes_with_its_closed_forms():
    """Its joints a2 and a4 are 0.44 mm off the axes of a1, a3 and a5: with a2 locked at 0, axes a1 and a3 are
    parallel, and the locked-joint search divided by the zero determinant of their meeting point (it raised
    ZeroDivisionError out of initialize). a2 now has no closed form (its family fails there); a1 and a4 keep their
    exact one, and a3 (the default: the joint the self-motion moves most) and a5 have their nearest ideal arm's."""
    urdf = small_urdf("lbr_iiwa_14_r820.urdf").read_text()
    plugin = KinematicsPlugin()
    assert plugin.initialize(urdf, "arm", "base_link", "tool0"), plugin.last_error
    report = plugin.group_setup.closed_form_report
    assert "closed form with joint_a3 locked" in report and "nearest ideal arm" in report, report
    assert "these work too: joint_a1, joint_a4, joint_a5)" in report, report
    chain = plugin.robot_model.chain("base_link", "tool0")
    solver, reason = redundant.locked_joint_report(chain, 1)
    assert solver is None and reason.endswith("does not hold at 0 rad (there: spherical wrist (axes 4-6 meet), axes "
                                              "1 and 2 are parallel)"), reason
    outcome = check_arm(urdf, "base_link", "tool0", np.random.default_rng(18))
    assert not outcome.problems and outcome.codes.count("SUCCESS") == len(outcome.codes), outcome
    assert plugin.setRedundantJoints(["joint_a2"])  # no closed form with it locked: the numerical search answers
    q = [0.3, 0.5, -0.2, -1.2, 0.4, 0.8, 0.1]
    ok, (target,) = plugin.getPositionFK(["tool0"], q)
    result = plugin.searchPositionIK(target, [v + 0.05 for v in q], 0.5)
    assert ok and result.success, result


@pytest.mark.parametrize("limit", [1e6, 1e300, 1.7e308], ids=str)
def test_huge_limits_of_a_redundant_joint_give_answers_not_exceptions(limit):
    """A URDF writing +-1e300 for 'no limit' on a 7-joint arm: the discretization grid of the redundant joint was
    np.arange of 1e300 values (ValueError) and the comparison of whole turns a list of 1e299 turns (MemoryError).
    The grid now has at most MAX_JOINT_VALUES values spread over the range; both searches answer, verified."""
    urdf = perturbed_urdf(bundled_robot_path("panda").read_text(),
                          {"panda_joint7": JointChange(lower=-limit, upper=limit)})
    plugin = KinematicsPlugin()
    assert plugin.initialize(urdf, "arm", "panda_link0", "panda_link8"), plugin.last_error
    rng = np.random.default_rng(18)
    outcome = check_arm(urdf, "panda_link0", "panda_link8", rng)  # all_solutions: the locked joint's closed form
    assert not outcome.problems, outcome
    assert plugin.setRedundantJoints(["panda_joint4"])  # no closed form with the elbow locked: numerical search
    options = KinematicsQueryOptions(discretization_method=DiscretizationMethod.ALL_DISCRETIZED)
    ok, (target,) = plugin.getPositionFK(["panda_link8"], [0.1, -0.3, 0.2, -2.0, 0.1, 1.8, 0.4])
    result = plugin.searchPositionIK(target, [0.0, -0.3, 0.0, -2.0, 0.0, 1.8, 0.0], 0.05, options=options)
    assert ok and result.error_code in (ErrorCode.SUCCESS, ErrorCode.TIMED_OUT, ErrorCode.NO_IK_SOLUTION), result
    assert result.message


def test_an_axis_with_huge_components_is_its_direction():
    """'0 0 1e300' is the z axis: its norm overflowed to inf and the joint was refused as having 'a zero axis'."""
    urdf = bundled_robot_path("ur5").read_text()
    scaled = perturbed_urdf(urdf, {"shoulder_pan_joint": JointChange(text={"axis.xyz": "0 0 1e300"}),
                                   "wrist_3_joint": JointChange(text={"axis.xyz": "0 1.7e308 0"})})
    plain, huge = KinematicsPlugin(), KinematicsPlugin()
    assert plain.initialize(urdf, "arm", "base_link", "tool0"), plain.last_error
    assert huge.initialize(scaled, "arm", "base_link", "tool0"), huge.last_error
    q = [0.3, -1.2, 1.0, -0.5, 0.8, 0.2]
    (_, (expected,)), (_, (found,)) = plain.getPositionFK(["tool0"], q), huge.getPositionFK(["tool0"], q)
    assert np.allclose(expected.position, found.position, atol=1e-12)


@pytest.mark.parametrize("text, words", [
    ({"axis.xyz": "nan 0 1"}, ["elbow_joint", "non-finite", "axis (nan, 0.0, 1.0)"]),
    ({"origin.xyz": "0 inf 0"}, ["elbow_joint", "non-finite", "xyz (0.0, inf, 0.0)"]),
    ({"limit.lower": "nan"}, ["elbow_joint", "NaN limit"]),
    ({"axis.xyz": "0 0 0"}, ["elbow_joint", "zero axis (0.0, 0.0, 0.0)"]),
], ids=["nan-axis", "inf-origin", "nan-limit", "zero-axis"])
def test_non_finite_numbers_in_a_joint_are_refused_naming_the_joint_and_the_values(text, words):
    """The refusals said 'zero axis (np.float64(nan), ...)' for a NaN axis and 'lower limit nan above upper limit'."""
    urdf = perturbed_urdf(bundled_robot_path("ur5").read_text(), {"elbow_joint": JointChange(text=text)})
    plugin = KinematicsPlugin()
    assert plugin.initialize(urdf, "arm", "base_link", "tool0") is False
    for word in words:
        assert word in plugin.last_error, (word, plugin.last_error)
