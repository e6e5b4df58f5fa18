"""Chain Jacobians are the derivative of chain FK, and equal pinocchio's geometric Jacobians.

The Jacobian convention under test: shape (6, n), rows (vx, vy, vz, wx, wy, wz), linear velocity
of the tip origin and angular velocity of the tip, both expressed in the chain's base frame; a
mimic joint's motion is folded into its master's column.
"""
import numpy as np
import pytest
from reference import PinocchioReference
from robots import bundled_robot, example_robot_urdf, small_urdf

from kinematics_py import RobotModel

#: Central difference step [rad or m]: truncation error ~ h^2/6 |d3T/dq3| ~ 2e-11, round-off
#: ~ eps |T| / h ~ 2e-11 for the few-metre robots used here.
FD_STEP = 1e-5
#: Max abs difference between an analytic Jacobian entry and its central difference [m/rad or 1].
FD_TOLERANCE = 1e-8
#: Max abs difference between two analytic Jacobians (ours vs pinocchio) [m/rad or 1].
JACOBIAN_TOLERANCE = 1e-9
#: Batched and single-configuration calls run the same arithmetic: at most round-off apart.
BATCH_TOLERANCE = 1e-12
CONFIGURATIONS_PER_CHAIN = 20
SEED = 7

#: (urdf getter, file, base link, tip link): prismatic joints, oblique axes, fixed joints with
#: rotations, mimic joints with the master on and off the chain, bases below the root.
FD_CHAINS = [
    pytest.param(bundled_robot, "ur5.urdf", "base_link", "tool0", id="ur5"),
    pytest.param(bundled_robot, "panda.urdf", "panda_link0", "panda_link8", id="panda-arm"),
    pytest.param(bundled_robot, "panda.urdf", "panda_link0", "panda_rightfinger", id="panda-rightfinger-mimic"),
    pytest.param(small_urdf, "prismatic.urdf", "base_link", "tool", id="prismatic"),
    pytest.param(small_urdf, "prismatic.urdf", "link1", "link4", id="prismatic-non-root-base"),
    pytest.param(small_urdf, "continuous.urdf", "base_link", "tool", id="continuous"),
    pytest.param(small_urdf, "mimic.urdf", "base_link", "right_finger", id="mimic-in-arm-and-gripper"),
    pytest.param(small_urdf, "mimic.urdf", "base_link", "right_knuckle", id="mimic-negative-multiplier"),
    pytest.param(small_urdf, "mimic.urdf", "link2", "link5", id="mimic-master-off-chain"),
    pytest.param(small_urdf, "tree.urdf", "chest", "left_finger_b", id="tree-non-root-base"),
    pytest.param(small_urdf, "fixed_between.urdf", "root", "tool", id="fixed-between"),
    pytest.param(small_urdf, "planar_arm_4dof.urdf", "base_link", "tool", id="planar-4dof"),
    pytest.param(small_urdf, "floating_base.urdf", "base", "tool", id="below-floating-joint"),
    pytest.param(small_urdf, "planar_base.urdf", "cart", "tool", id="below-planar-joint"),
]
#: Chains compared with pinocchio's Jacobian: the Panda arm and hand (bundled and
#: example-robot-data's) and the mimic / non-root-base edge cases.
PINOCCHIO_CHAINS = [
    pytest.param(bundled_robot, "panda.urdf", "panda_link0", "panda_link8", id="panda-arm"),
    pytest.param(bundled_robot, "panda.urdf", "panda_link0", "panda_hand_tcp", id="panda-tcp"),
    pytest.param(bundled_robot, "panda.urdf", "panda_link0", "panda_rightfinger", id="panda-rightfinger-mimic"),
    pytest.param(example_robot_urdf, "panda", "panda_link0", "panda_link8", id="erd-panda-arm"),
    pytest.param(example_robot_urdf, "panda", "panda_link2", "panda_leftfinger", id="erd-panda-non-root-base"),
    pytest.param(example_robot_urdf, "baxter", "torso", "r_gripper_r_finger", id="erd-baxter-mimic"),
    pytest.param(small_urdf, "mimic.urdf", "base_link", "right_knuckle", id="mimic-arm-and-gripper"),
    pytest.param(small_urdf, "mimic.urdf", "link2", "link5", id="mimic-master-off-chain"),
    pytest.param(small_urdf, "prismatic.urdf", "link1", "link4", id="prismatic-non-root-base"),
    pytest.param(small_urdf, "floating_base.urdf", "base", "tool", id="below-floating-joint"),
]


def rotation_log(R: np.ndarray) -> np.ndarray:
    """Rotation vector (axis * angle) of a rotation matrix with angle < pi."""
    w = 0.5 * np.array([R[2, 1] - R[1, 2], R[0, 2] - R[2, 0], R[1, 0] - R[0, 1]])
    sin_angle = np.linalg.norm(w)
    angle = np.arctan2(sin_angle, 0.5 * (np.trace(R) - 1.0))
    return w if sin_angle < 1e-12 else w * (angle / sin_angle)


def finite_difference_jacobian(chain, q: np.ndarray) -> np.ndarray:
    """Central differences of chain FK: position rows from p, rotation rows from log(R+ R-^T)."""
    J = np.empty((6, len(q)))
    for i in range(len(q)):
        step = np.zeros(len(q))
        step[i] = FD_STEP
        T_plus, T_minus = chain.forward_kinematics(q + step), chain.forward_kinematics(q - step)
        J[:3, i] = (T_plus[:3, 3] - T_minus[:3, 3]) / (2 * FD_STEP)
        J[3:, i] = rotation_log(T_plus[:3, :3] @ T_minus[:3, :3].T) / (2 * FD_STEP)
    return J


def random_chain_configurations(reference, chain, count):
    """Configurations within limits, kept FD_STEP inside them so the differences stay in range."""
    rng = np.random.default_rng(SEED)
    for _ in range(count):
        values = reference.random_configuration(rng)
        q = np.array([values[name] for name in chain.joint_names])
        yield np.clip(q, chain.lower + FD_STEP, chain.upper - FD_STEP), values


def load(locate, name):
    path = locate(name)
    return RobotModel.from_urdf_file(path), PinocchioReference(path)


@pytest.mark.parametrize("locate, name, base_link, tip_link", FD_CHAINS)
def test_jacobian_is_the_derivative_of_forward_kinematics(locate, name, base_link, tip_link):
    model, reference = load(locate, name)
    chain = model.chain(base_link, tip_link)
    for q, _ in random_chain_configurations(reference, chain, CONFIGURATIONS_PER_CHAIN):
        J = chain.jacobian(q)
        assert J.shape == (6, len(chain.joint_names))
        error = np.abs(J - finite_difference_jacobian(chain, q)).max()
        assert error <= FD_TOLERANCE, f"{name} {base_link}->{tip_link}: off by {error:.3g} at {q}"


@pytest.mark.parametrize("locate, name, base_link, tip_link", PINOCCHIO_CHAINS)
def test_jacobian_matches_pinocchio(locate, name, base_link, tip_link):
    model, reference = load(locate, name)
    chain = model.chain(base_link, tip_link)
    variables = list(chain.joint_names)
    assert sorted(variables) == sorted(reference.chain_variables(base_link, tip_link))
    for q, _ in random_chain_configurations(reference, chain, CONFIGURATIONS_PER_CHAIN):
        values = dict(zip(variables, q))
        expected = reference.jacobian(values, base_link, tip_link, variables)
        error = np.abs(chain.jacobian(q) - expected).max()
        assert error <= JACOBIAN_TOLERANCE, f"{name} {base_link}->{tip_link}: off by {error:.3g} at {q}"


@pytest.mark.parametrize("locate, name, base_link, tip_link", FD_CHAINS[:4])
def test_combined_and_batched_calls_equal_single_calls(locate, name, base_link, tip_link):
    """forward_kinematics_and_jacobian on (5, 3, n) equals the separate per-configuration calls."""
    model, reference = load(locate, name)
    chain = model.chain(base_link, tip_link)
    Q = np.array([q for q, _ in random_chain_configurations(reference, chain, 15)]).reshape(5, 3, -1)
    T, J = chain.forward_kinematics_and_jacobian(Q)
    assert T.shape == (5, 3, 4, 4) and J.shape == (5, 3, 6, len(chain.joint_names))
    np.testing.assert_allclose(chain.jacobian(Q), J, rtol=0, atol=BATCH_TOLERANCE)
    for index in np.ndindex(5, 3):
        np.testing.assert_allclose(T[index], chain.forward_kinematics(Q[index]), rtol=0, atol=BATCH_TOLERANCE)
        np.testing.assert_allclose(J[index], chain.jacobian(Q[index]), rtol=0, atol=BATCH_TOLERANCE)
