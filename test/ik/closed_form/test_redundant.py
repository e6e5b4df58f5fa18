"""7-joint arms in closed form with one joint locked (KUKA iiwa, Panda): every solution reaches the pose and
is within the limits, the configuration the pose came from is among them (near singularities too), the
compiled geometry per locked value is the classification's, and the joint to lock is chosen as expected."""
import numpy as np
import pytest
from closed_form_cases import pose_errors, random_configurations
from robots import TEST_DIR, bundled_robot, example_robot_urdf

from kinematics_py import RobotModel
from kinematics_py.errors import ChainError
from kinematics_py.ik.closed_form import families, redundant
from kinematics_py.ik.closed_form.classification import classify_geometry

SEED = 20261130
CONFIGURATIONS = 150
#: 7-joint arms: name -> (URDF path getter, base link, tip link, the default joint to lock, every joint that works).
REDUNDANT_ROBOTS = {
    "iiwa": (lambda: TEST_DIR.parent / "bench" / "robots" / "kuka_iiwa14.urdf", "iiwa_link_0", "iiwa_link_ee",
             2, {0, 2, 4, 6}),
    "panda": (lambda: bundled_robot("panda.urdf"), "panda_link0", "panda_link8", 6, {3, 6}),
}
POSITION_TOLERANCE = 1e-5
ROTATION_TOLERANCE = 1e-5
#: The configuration the pose came from is found within this [rad] (away from singularities).
FOUND_TOLERANCE = 1e-6
#: Near a singularity two joints turning about nearly aligned axes move the tip by the offset times their
#: turn: a solution within the pose tolerances may differ from the configuration by this much [rad].
NEAR_SINGULAR_TOLERANCE = 1e-2


def load_chain(name: str):
    path, base, tip, _, _ = REDUNDANT_ROBOTS[name]
    return RobotModel.from_urdf_file(path()).chain(base, tip)


def check_solutions(chain, solutions, T, locked: int, value: float):
    assert solutions.shape[1] == 7
    position, rotation = pose_errors(chain, solutions, T)
    assert np.all(position <= POSITION_TOLERANCE) and np.all(rotation <= ROTATION_TOLERANCE)
    assert np.all(chain.within_limits(solutions, 1e-9))
    assert np.all(solutions[:, locked] == value)
    gaps = [np.abs(a - b).max() for i, a in enumerate(solutions) for b in solutions[i + 1:]]
    assert not gaps or min(gaps) > 1e-6, "solutions are distinct"


@pytest.mark.parametrize("name", sorted(REDUNDANT_ROBOTS))
def test_the_joints_that_leave_a_closed_form_and_the_default_one(name):
    chain = load_chain(name)
    found = redundant.redundant_chain(chain)
    _, _, _, default, working = REDUNDANT_ROBOTS[name]
    assert set(found.solvers) == working, found.report
    assert found.default_joint == default
    assert found.report.startswith(f"closed form with {found.solvers[default].name}")
    assert redundant.redundant_chain(load_chain(name)) is found, "kept per chain description"


@pytest.mark.parametrize("name", sorted(REDUNDANT_ROBOTS))
def test_every_solution_reaches_the_pose_and_the_configuration_is_among_them(name):
    chain = load_chain(name)
    solvers = redundant.redundant_chain(chain).solvers
    rng = np.random.default_rng(SEED)
    for joint, solver in solvers.items():
        answers = random_configurations(chain, rng, CONFIGURATIONS)
        seeds = random_configurations(chain, rng, CONFIGURATIONS)
        for q, seed in zip(answers, seeds):
            T = chain.forward_kinematics(q)
            solutions = solver.solve(T, seed, q[joint])
            check_solutions(chain, solutions, T, joint, q[joint])
            assert np.abs(solutions - q).max(axis=1).min() < FOUND_TOLERANCE, (solver.name, q)
            distances = np.linalg.norm(solutions - seed, axis=1)
            assert np.all(np.diff(distances) >= -1e-12), "nearest the seed first"


@pytest.mark.parametrize("name, joint, singular", [
    ("iiwa", 5, 0.0),  # wrist straight: axes 5 and 7 aligned
    ("iiwa", 3, 0.0),  # arm stretched
    ("iiwa", 1, 0.0),  # shoulder: axes 1 and 3 aligned
    ("panda", 1, 0.0),  # axes 1 and 3 aligned (the spherical shoulder, solved as the reversed chain's wrist)
    ("panda", 5, np.pi / 2),
])
@pytest.mark.parametrize("offset", [0.0, 1e-9, 1e-6, 1e-4])
def test_near_singular_configurations_are_solved(name, joint, singular, offset):
    chain = load_chain(name)
    solvers = redundant.redundant_chain(chain).solvers
    rng = np.random.default_rng(SEED + joint)
    for locked, solver in solvers.items():
        for q in random_configurations(chain, rng, 20):
            q[joint] = singular + offset
            T = chain.forward_kinematics(q)
            solutions = solver.solve(T, q + rng.normal(0.0, 0.05, 7) * (np.arange(7) != locked), q[locked])
            assert len(solutions), (solver.name, q)
            check_solutions(chain, solutions, T, locked, q[locked])
            if offset >= 1e-4:  # the configuration's branch is found (to the pose's sensitivity near the singularity)
                assert np.abs(solutions - q).max(axis=1).min() < NEAR_SINGULAR_TOLERANCE, (solver.name, q)


@pytest.mark.parametrize("name", sorted(REDUNDANT_ROBOTS))
def test_the_compiled_geometry_per_value_is_the_classifications(name):
    chain = load_chain(name)
    solvers = redundant.redundant_chain(chain).solvers
    rng = np.random.default_rng(SEED)
    for joint, solver in solvers.items():
        segments, joint_info = redundant.locked_tables(chain, joint)
        for value in rng.uniform(chain.lower[joint], chain.upper[joint], 5):
            expected, _ = classify_geometry(redundant.locked_geometry_of(chain, joint, value))
            geometry = np.empty((families.GEOMETRY_ROWS, 3))
            assert redundant.locked_geometry(segments, joint_info, joint, float(chain.compiled[0][joint, 15]), value,
                                             solver.classification.config, solver.classification.ideal_sets, geometry)
            assert np.array_equal(expected.config, solver.classification.config)
            assert np.allclose(geometry, expected.packed, atol=1e-12)


def test_a_seven_joint_arm_without_a_closed_form_says_why():
    chain = RobotModel.from_urdf_file(example_robot_urdf("baxter")).chain("left_arm_mount", "left_wrist")
    assert chain.dof == 7
    found = redundant.redundant_chain(chain)
    assert not found.solvers and found.default_joint is None
    assert found.report.startswith("no closed form with any one joint of") and "left_s0 locked" in found.report
    with pytest.raises(ChainError, match="no closed form"):
        redundant.for_chain(chain, 2)


def test_chains_of_other_lengths_are_refused():
    chain = RobotModel.from_urdf_file(bundled_robot("ur5.urdf")).chain("base_link", "tool0")
    found = redundant.redundant_chain(chain)
    assert not found.solvers and "7 joints" in found.report
