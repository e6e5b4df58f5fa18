"""Calibrated and real arms near a closed-form family: solved as the family's nearest ideal arm, every branch
polished onto the real chain. Each solution reaches the pose by the real chain's FK within the limits, the
configuration the pose came from is among them, and the branches equal a brute-force numerical enumeration."""
import math

import numpy as np
import pytest
from calibrated_arms import calibration_deltas, moved_joint_origins, ur_urdf
from closed_form_cases import CLOSED_FORM_ROBOTS, load_chain, pose_errors, random_configurations, same_branch
from robots import TEST_DIR, small_urdf

from kinematics_py import KinematicsPlugin, RobotModel
from kinematics_py.ik.closed_form import (
    ClosedFormFamily,
    ClosedFormSolver,
    FamilyTolerance,
    classification_report,
    redundant,
)
from kinematics_py.ik.closed_form.kernels import POSITION_TOLERANCE, ROTATION_TOLERANCE

SEED = 20261201
#: The solutions of one pose are the same branches when they agree within this [rad] modulo 2 pi.
SAME_BRANCH = 1e-6
#: A brute-force enumeration: numerical searches to ENUMERATION_THRESHOLD [m, rad] from this many random seeds per
#: pose; two of its solutions are one when this near [rad] (ill-conditioned near singularities).
ENUMERATION_SEEDS = 120
ENUMERATION_THRESHOLD = 1e-10
SAME_NUMERICAL_SOLUTION = 1e-4
IIWA_URDF = TEST_DIR.parent / "bench" / "robots" / "kuka_iiwa14.urdf"


def calibrated_ur(name: str, length: float, angle: float, seed: int = SEED) -> str:
    return ur_urdf(name, calibration_deltas(np.random.default_rng(seed), length, angle))


def ur_chain(urdf: str):
    return RobotModel.from_urdf_string(urdf).chain("base_link", "tool0")


def ur_plugin(urdf: str, **parameters) -> KinematicsPlugin:
    plugin = KinematicsPlugin()
    assert plugin.initialize(urdf, "arm", "base_link", "tool0", parameters=parameters), plugin.last_error
    return plugin


def check_reaches(chain, solutions: np.ndarray, T: np.ndarray) -> None:
    position, rotation = pose_errors(chain, solutions, T)
    assert np.all(position <= POSITION_TOLERANCE) and np.all(rotation <= ROTATION_TOLERANCE)
    assert np.all(chain.within_limits(solutions, 1e-9))


def distinct(solutions, tolerance: float = SAME_BRANCH) -> list[np.ndarray]:
    kept = []
    for q in solutions:
        if not any(same_branch(q, other, tolerance) for other in kept):
            kept.append(np.asarray(q))
    return kept


@pytest.mark.parametrize("name", ["ur5", "ur10"])
@pytest.mark.parametrize(("length", "angle"), [(1e-4, 1e-4), (1e-3, 1e-3)])
def test_a_calibrated_ur_is_solved_as_its_nearest_ideal_arm(name, length, angle):
    nominal, _ = classification_report(ur_chain(ur_urdf(name)))
    assert nominal is not None and nominal.exact and nominal.config[3] == 0
    classification, report = classification_report(ur_chain(calibrated_ur(name, length, angle)))
    assert classification is not None, report
    assert classification.family is ClosedFormFamily.THREE_PARALLEL and not classification.exact
    assert classification.config[3] == 1, "branches polished onto the chain"
    deviation = classification.deviation
    assert 0.0 < deviation.angle <= 4 * angle and 0.0 < deviation.distance <= 4 * length
    assert "three parallel axes (2-4)" in report and "nearest ideal arm" in report and "mrad" in report


def test_the_exact_families_are_unchanged():
    for name in CLOSED_FORM_ROBOTS:
        classification, report = classification_report(load_chain(name))
        assert classification.exact and classification.config[3] == 0, report
        assert "nearest ideal arm" not in report


def test_without_tolerance_a_calibrated_arm_has_no_closed_form():
    classification, report = classification_report(ur_chain(calibrated_ur("ur5", 1e-4, 1e-4)),
                                                    tolerance=FamilyTolerance(0.0, 0.0))
    assert classification is None and "axes 2-4 are not parallel" in report


def test_an_arm_too_far_from_every_family_keeps_the_numerical_search_with_the_reason():
    """offset_wrist.urdf: a KR 16 whose axis 6 is 2 cm off axis 4."""
    chain = RobotModel.from_urdf_file(small_urdf("offset_wrist.urdf")).chain("base_link", "tool0")
    classification, report = classification_report(chain)
    assert classification is None
    assert "axes 4-6 do not meet at one point" in report and f"nor within {FamilyTolerance()} of one" in report
    plugin = KinematicsPlugin()
    text = small_urdf("offset_wrist.urdf").read_text()
    assert plugin.initialize(text, "arm", "base_link", "tool0")
    q = np.array([0.3, -0.4, 0.5, 0.6, 0.7, 0.8])
    result = plugin.searchPositionIK(chain.forward_kinematics(q), q + 0.1, timeout=1.0)
    assert result.success and "closed form" not in result.message


@pytest.mark.parametrize("name", ["ur5", "ur10", "kr16", "puma560", "kinova"])
def test_every_branch_of_a_calibrated_arm_reaches_the_pose_and_the_configuration_is_among_them(name):
    rng = np.random.default_rng(SEED)
    if name.startswith("ur"):
        chain = ur_chain(calibrated_ur(name, 1e-3, 1e-3))
    else:
        path, base, tip, _ = CLOSED_FORM_ROBOTS[name]
        chain = RobotModel.from_urdf_string(moved_joint_origins(path().read_text(), rng, 1e-3, 1e-3)).chain(base, tip)
    solver = ClosedFormSolver.for_chain(chain)
    assert not solver.classification.exact
    found = 0
    configurations = random_configurations(chain, rng, 200)
    for q in configurations:
        T = chain.forward_kinematics(q)
        solutions, _ = solver.solve(T, q)
        check_reaches(chain, solutions, T)
        found += any(same_branch(q, s, 1e-6) for s in solutions)
    assert found >= 0.99 * len(configurations)


def numerical_enumeration(plugin: KinematicsPlugin, chain, T: np.ndarray, rng) -> list[np.ndarray]:
    """Every distinct solution the numerical search finds from ENUMERATION_SEEDS random seeds."""
    found = []
    for seed in random_configurations(chain, rng, ENUMERATION_SEEDS):
        result = plugin.searchPositionIK(T, seed, timeout=0.05)
        if result.success:
            found.append(np.asarray(result.solution))
    return distinct(found, SAME_NUMERICAL_SOLUTION)


def covers(solutions, others) -> bool:
    return all(any(same_branch(q, s, SAME_NUMERICAL_SOLUTION) for s in solutions) for q in others)


@pytest.mark.parametrize("name", ["ur5", "ur10"])
def test_all_solutions_of_a_calibrated_ur_equal_a_brute_force_enumeration(name):
    """On at least 99 % of poses the closed form's branches include every solution of the enumeration (which may
    miss some: every one of the closed form's reaches the pose, within the limits, distinct)."""
    urdf = calibrated_ur(name, 1e-3, 1e-3)
    chain = ur_chain(urdf)
    closed_form = ur_plugin(urdf)
    numerical = ur_plugin(urdf, closed_form_angle_tolerance=0.0, closed_form_distance_tolerance=0.0,
                          position_threshold=ENUMERATION_THRESHOLD, orientation_threshold=ENUMERATION_THRESHOLD)
    rng = np.random.default_rng(SEED)
    poses = 40
    equal = 0
    for q in random_configurations(chain, rng, poses):
        T = chain.forward_kinematics(q)
        solutions = np.array(closed_form.all_solutions(T, q))
        check_reaches(chain, solutions, T)
        enumerated = numerical_enumeration(numerical, chain, T, rng)
        assert len(distinct(solutions)) == len(solutions)
        # Whole turns aside (the enumeration's values are anywhere within +-2 pi).
        equal += covers(solutions, enumerated)
    assert equal >= math.ceil(0.99 * poses)  # 99 % of 40 poses: all of them


@pytest.mark.parametrize("mode", ["speed", "distance"])
def test_a_plain_request_to_a_calibrated_arm_takes_the_nearest_branch(mode):
    urdf = calibrated_ur("ur5", 1e-3, 1e-3)
    chain = ur_chain(urdf)
    plugin = ur_plugin(urdf, solve_mode=mode)
    rng = np.random.default_rng(SEED)
    for q in random_configurations(chain, rng, 50):
        T = chain.forward_kinematics(q)
        seed = q + rng.normal(0.0, 0.3, 6)
        result = plugin.searchPositionIK(T, seed, timeout=0.05)
        assert result.success and "closed form" in result.message, result.message
        branches = np.array(plugin.all_solutions(T, seed))
        nearest = branches[np.argmin(np.linalg.norm(branches - seed, axis=1))]
        np.testing.assert_allclose(result.solution, nearest, atol=1e-9)


def test_posture_batch_and_out_of_reach_on_a_calibrated_arm():
    urdf = calibrated_ur("ur10", 1e-3, 1e-3)
    chain = ur_chain(urdf)
    plugin = ur_plugin(urdf)
    rng = np.random.default_rng(SEED)
    configurations = random_configurations(chain, rng, 30)
    poses = chain.forward_kinematics(configurations)
    # Posture: the pose of each configuration, in the posture of that configuration, is that configuration.
    solutions = plugin.compute_inverse_kinematics(poses, configurations[0])
    for T, q in zip(poses, solutions):
        if q is not None:
            check_reaches(chain, np.array([q]), T)
    for q in configurations[:10]:
        found = plugin.compute_inverse_kinematics(chain.forward_kinematics(q)[None], q)[0]
        assert found is not None and same_branch(found, q, 1e-6)
    batch = plugin.searchPositionIKBatch(poses, configurations)
    assert all(result.success for result in batch)
    for result, T in zip(batch, poses):
        check_reaches(chain, np.array([result.solution]), T)
    far = np.eye(4)
    far[:3, 3] = (3.0, 0.0, 0.5)
    result = plugin.searchPositionIK(far, configurations[0], timeout=1.0)
    assert result.error_code.name == "NO_IK_SOLUTION" and "out of reach" in result.message


def iiwa_with_published_offsets() -> str:
    """The bench's KUKA iiwa 14 with the x offsets of +-0.43624 mm at joints 2 and 4 that a public description
    package publishes."""
    text = IIWA_URDF.read_text()
    for old, new in (('<origin xyz="0 0 0.2025" rpy="1.57079632679 0 3.14159265359"/>',
                      '<origin xyz="-0.00043624 0 0.2025" rpy="1.57079632679 0 3.14159265359"/>'),
                     ('<origin xyz="0 0 0.2155" rpy="1.57079632679 0 0"/>',
                      '<origin xyz="0.00043624 0 0.2155" rpy="1.57079632679 0 0"/>')):
        assert old in text
        text = text.replace(old, new, 1)
    return text


def test_the_iiwa_with_its_published_offsets_keeps_its_locked_joint_closed_forms():
    chain = RobotModel.from_urdf_string(iiwa_with_published_offsets()).chain("iiwa_link_0", "iiwa_link_ee")
    found = redundant.redundant_chain(chain)
    assert found.default_joint == 2, found.report
    solver = found.solvers[2]
    assert not solver.classification.exact and "nearest ideal arm" in solver.name
    rng = np.random.default_rng(SEED)
    among = 0
    configurations = random_configurations(chain, rng, 100)
    for q in configurations:
        T = chain.forward_kinematics(q)
        solutions = solver.solve(T, q, q[2])
        check_reaches(chain, solutions, T)
        among += any(np.abs(s - q).max() < 1e-6 for s in solutions)
    assert among >= 0.99 * len(configurations)


def test_reachability_maps_take_the_closed_form_of_a_calibrated_arm():
    from kinematics_py.reachability.ik_adapter import ReachIK

    urdf = calibrated_ur("ur5", 1e-3, 1e-3)
    chain = ur_chain(urdf)
    reach = ReachIK(ur_plugin(urdf))
    assert reach.name.startswith("closed form: three parallel axes")
    configurations = random_configurations(chain, np.random.default_rng(SEED), 50)
    poses = chain.forward_kinematics(configurations)
    solutions, counts = reach.solve(poses)
    assert np.all(counts >= 1)
    for T, found, count, q in zip(poses, solutions, counts, configurations):
        check_reaches(chain, found[:count], T)
        assert any(same_branch(q, s, 1e-6) for s in found[:count])
