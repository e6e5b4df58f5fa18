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

from kinematics_py import KinematicsPlugin, Pose
from kinematics_py.robots import bundled_robot_path

#: Cases per kind of perturbation (7 kinds).
CASES_PER_KIND = 40


def _settings(examples: int):
    return settings(max_examples=examples, derandomize=True, database=None, deadline=None,
                    suppress_health_check=list(HealthCheck))


@pytest.mark.parametrize("kind", list(KINDS))
@_settings(CASES_PER_KIND)
@given(arm=st.sampled_from(sorted(ARMS)), seed=st.integers(0, 2**32 - 1))
def test_perturbed_arms_initialize_or_refuse_and_every_answer_is_verified(kind, arm, seed):
    _, outcome = check_perturbed_arm(arm, kind, seed)
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
    ZeroDivisionError out of initialize). a2 now has no closed form (its family fails there); a1 and a4 keep one."""
    urdf = small_urdf("lbr_iiwa_14_r820.urdf").read_text()
    plugin = KinematicsPlugin()
    assert plugin.initialize(urdf, "arm", "base_link", "tool0"), plugin.last_error
    report = plugin._require_setup().closed_form_report
    assert "joint_a2 locked: the closed form found at" in report and "does not hold at 0 rad" in report, report
    assert "closed form with joint_a" in report, report
    outcome = check_arm(urdf, "base_link", "tool0", np.random.default_rng(18))
    assert not outcome.problems and outcome.codes.count("SUCCESS") == len(outcome.codes), outcome
    assert plugin.setRedundantJoints(["joint_a2"])
    result = plugin.all_solutions(Pose((0.4, 0.1, 0.7), (1.0, 0.0, 0.0, 0.0)), [0.3] * 7)
    assert result, "the numerical search answers for a joint without a closed form"
