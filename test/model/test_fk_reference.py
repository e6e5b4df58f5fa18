"""Forward kinematics equals an independent reference (pinocchio) for every link of every robot.

Robots: UR5, UR10, Panda, Kinova Gen2, Baxter from example-robot-data; the edge-case URDFs in
``test/data/urdf``; the robots bundled in ``kinematics_py/robots``. Configurations are drawn
uniformly within the URDF limits (continuous joints over two full turns, floating and planar
joints over +-1 m and +-pi rad) with fixed seeds. The bundled robots are also checked against
example-robot-data's descriptions of the same robots and against their makers' published DH tables.
"""
import numpy as np
import pytest
from reference import PinocchioReference
from robots import (
    BUNDLED_URDFS,
    EXAMPLE_ROBOT_DATA_URDFS,
    SMALL_URDFS,
    bundled_robot,
    example_robot_urdf,
    small_urdf,
)

from kinematics_py import RobotModel

#: Max abs difference of any entry of a 4x4 pose [m or unitless]: both sides are double-precision
#: products of at most ~30 transforms, which agree to ~1e-15 per entry.
FK_TOLERANCE = 1e-9
#: Batched and single-configuration calls run the same arithmetic: at most round-off apart.
BATCH_TOLERANCE = 1e-12
CONFIGURATIONS_PER_ROBOT = 20
SEED = 20240601
#: Every robot description the reference test runs on: (id, path getter, name).
ROBOTS = (
    [pytest.param(example_robot_urdf, name, id=f"example-robot-data/{name}") for name in EXAMPLE_ROBOT_DATA_URDFS]
    + [pytest.param(small_urdf, name, id=f"small/{name}") for name in SMALL_URDFS]
    + [pytest.param(bundled_robot, name, id=f"bundled/{name}") for name in BUNDLED_URDFS]
)
#: Serial chains (urdf getter, file, base link, tip link) whose compiled FK is checked against the
#: reference: root and non-root bases, fixed joints inside, mimic joints (master on and off the chain).
CHAINS = [
    pytest.param(bundled_robot, "ur5.urdf", "base_link", "tool0", id="ur5"),
    pytest.param(bundled_robot, "panda.urdf", "panda_link0", "panda_hand_tcp", id="panda-tcp"),
    pytest.param(bundled_robot, "panda.urdf", "panda_link3", "panda_rightfinger", id="panda-rightfinger-mimic"),
    pytest.param(example_robot_urdf, "kinova", "base", "j2s6s200_end_effector", id="kinova"),
    pytest.param(example_robot_urdf, "baxter", "base", "left_gripper", id="baxter-left"),
    pytest.param(example_robot_urdf, "baxter", "right_arm_mount", "r_gripper_r_finger", id="baxter-right-mimic"),
    pytest.param(small_urdf, "prismatic.urdf", "base_link", "tool", id="prismatic"),
    pytest.param(small_urdf, "prismatic.urdf", "link2", "link5", id="prismatic-midchain"),
    pytest.param(small_urdf, "continuous.urdf", "base_link", "tool", id="continuous"),
    pytest.param(small_urdf, "mimic.urdf", "base_link", "right_knuckle", id="mimic-arm-and-gripper"),
    pytest.param(small_urdf, "mimic.urdf", "link2", "right_finger", id="mimic-master-off-chain"),
    pytest.param(small_urdf, "tree.urdf", "torso", "left_tcp", id="tree-left"),
    pytest.param(small_urdf, "tree.urdf", "chest", "right_finger_b", id="tree-right-finger"),
    pytest.param(small_urdf, "fixed_between.urdf", "root", "tool", id="fixed-between"),
    pytest.param(small_urdf, "fixed_between.urdf", "bracket1", "flange", id="fixed-between-midchain"),
    pytest.param(small_urdf, "planar_arm_4dof.urdf", "base_link", "tool", id="planar-4dof"),
    pytest.param(small_urdf, "floating_base.urdf", "base", "tool", id="floating-base-arm"),
    pytest.param(small_urdf, "planar_base.urdf", "cart", "tool", id="planar-base-arm"),
]


def max_pose_error(poses, reference_poses) -> tuple[float, str]:
    """(largest entry difference, link where it occurs) over the reference's links."""
    return max((float(np.abs(poses[link] - T).max()), link) for link, T in reference_poses.items())


def chain_configurations(reference, chain, rng, count):
    """``count`` random configurations as (q array in chain order, joint-name dict)."""
    for _ in range(count):
        values = reference.random_configuration(rng)
        yield np.array([values[name] for name in chain.joint_names]), values


def test_every_robot_description_is_found():
    """The parametrized tests below cover these files; a missing one must fail here, not vanish."""
    assert set(SMALL_URDFS) >= {"prismatic.urdf", "continuous.urdf", "mimic.urdf", "tree.urdf", "fixed_between.urdf",
                                "planar_arm_4dof.urdf", "floating_base.urdf", "planar_base.urdf"}
    assert set(BUNDLED_URDFS) >= {"ur5.urdf", "panda.urdf"}
    for name in EXAMPLE_ROBOT_DATA_URDFS:
        assert example_robot_urdf(name).is_file()


@pytest.mark.parametrize("locate, name", ROBOTS)
def test_model_names_match_the_urdf(locate, name):
    path = locate(name)
    model, reference = RobotModel.from_urdf_file(path), PinocchioReference(path)
    assert model.root_link == reference.root_link
    assert sorted(model.link_names) == sorted(reference.link_names)
    assert sorted(model.joint_names) == sorted(reference.joints)
    assert sorted(model.independent_joint_names) == sorted(reference.independent_joint_names)


@pytest.mark.parametrize("locate, name", ROBOTS)
def test_every_link_pose_matches_pinocchio(locate, name):
    path = locate(name)
    model, reference = RobotModel.from_urdf_file(path), PinocchioReference(path)
    rng = np.random.default_rng(SEED)
    for _ in range(CONFIGURATIONS_PER_ROBOT):
        q = reference.random_configuration(rng)
        expected = reference.link_poses(q)
        poses = model.link_poses(q)
        assert sorted(poses) == sorted(expected)
        error, link = max_pose_error(poses, expected)
        assert error <= FK_TOLERANCE, f"{name}: link {link!r} off by {error:.3g} at {q}"


@pytest.mark.parametrize("locate, name", ROBOTS)
def test_missing_joints_default_to_zero_clamped_into_limits(locate, name):
    path = locate(name)
    model, reference = RobotModel.from_urdf_file(path), PinocchioReference(path)
    error, link = max_pose_error(model.link_poses({}), reference.link_poses({}))
    assert error <= FK_TOLERANCE, f"{name}: link {link!r} off by {error:.3g} with no joint values"


@pytest.mark.parametrize("locate, name, base_link, tip_link", CHAINS)
def test_chain_forward_kinematics_matches_pinocchio(locate, name, base_link, tip_link):
    path = locate(name)
    model, reference = RobotModel.from_urdf_file(path), PinocchioReference(path)
    chain = model.chain(base_link, tip_link)
    assert sorted(chain.joint_names) == sorted(reference.chain_variables(base_link, tip_link))
    rng = np.random.default_rng(SEED)
    for q, values in chain_configurations(reference, chain, rng, CONFIGURATIONS_PER_ROBOT):
        expected = reference.chain_pose(values, base_link, tip_link)
        error = np.abs(chain.forward_kinematics(q) - expected).max()
        assert error <= FK_TOLERANCE, f"{name} {base_link}->{tip_link}: off by {error:.3g} at {q}"


@pytest.mark.parametrize("locate, name, base_link, tip_link", CHAINS)
def test_batched_chain_fk_equals_per_configuration_fk(locate, name, base_link, tip_link):
    """q of shape (5, 3, n) gives (5, 3, 4, 4), each pose the single-configuration FK."""
    model, reference = RobotModel.from_urdf_file(locate(name)), PinocchioReference(locate(name))
    chain = model.chain(base_link, tip_link)
    rng = np.random.default_rng(SEED)
    Q = np.array([q for q, _ in chain_configurations(reference, chain, rng, 15)]).reshape(5, 3, len(chain.joint_names))
    T = chain.forward_kinematics(Q)
    assert T.shape == (5, 3, 4, 4)
    for index in np.ndindex(5, 3):
        np.testing.assert_allclose(T[index], chain.forward_kinematics(Q[index]), rtol=0, atol=BATCH_TOLERANCE)


@pytest.mark.parametrize("robot, example_robot", [("ur5.urdf", "ur5"), ("panda.urdf", "panda")])
def test_bundled_robot_frames_match_example_robot_data(robot, example_robot):
    """Every link of the bundled robot sits where example-robot-data's description puts it.

    Poses are compared in the bundled robot's root frame (example-robot-data's UR5 adds a `world`
    root above base_link). ur_description writes pi/2 as 1.57079632679: a 5e-12 rad difference.
    """
    model = RobotModel.from_urdf_file(bundled_robot(robot))
    reference = PinocchioReference(example_robot_urdf(example_robot))
    assert set(model.link_names) <= set(reference.link_names)
    assert model.independent_joint_names == tuple(reference.independent_joint_names)
    rng = np.random.default_rng(SEED)
    for _ in range(CONFIGURATIONS_PER_ROBOT):
        q = reference.random_configuration(rng)
        expected = reference.link_poses(q)
        T_root_reference = np.linalg.inv(expected[model.root_link])
        poses = model.link_poses(q)
        error, link = max_pose_error(poses, {name: T_root_reference @ expected[name] for name in model.link_names})
        assert error <= FK_TOLERANCE, f"{robot}: link {link!r} off by {error:.3g} at {q}"


def standard_dh(a, d, alpha, theta):
    """Denavit-Hartenberg transform Rz(theta) Tz(d) Tx(a) Rx(alpha)."""
    ct, st, ca, sa = np.cos(theta), np.sin(theta), np.cos(alpha), np.sin(alpha)
    return np.array([[ct, -st * ca, st * sa, a * ct], [st, ct * ca, -ct * sa, a * st], [0, sa, ca, d], [0, 0, 0, 1]])


def modified_dh(a, d, alpha, theta):
    """Craig's modified DH transform Rx(alpha) Tx(a) Rz(theta) Tz(d)."""
    ct, st, ca, sa = np.cos(theta), np.sin(theta), np.cos(alpha), np.sin(alpha)
    return np.array([[ct, -st, 0, a], [st * ca, ct * ca, -sa, -d * sa], [st * sa, ct * sa, ca, d * ca], [0, 0, 0, 1]])


#: Universal Robots' published UR5 DH table [m, rad], rows (a, d, alpha).
UR5_DH = [(0, 0.089159, np.pi / 2), (-0.425, 0, 0), (-0.39225, 0, 0), (0, 0.10915, np.pi / 2),
          (0, 0.09465, -np.pi / 2), (0, 0.0823, 0)]
#: Franka's published Panda modified DH table [m, rad], rows (a, d, alpha); the last row is the flange.
PANDA_DH = [(0, 0.333, 0), (0, 0, -np.pi / 2), (0, 0.316, np.pi / 2), (0.0825, 0, np.pi / 2),
            (-0.0825, 0.384, -np.pi / 2), (0, 0, np.pi / 2), (0.088, 0, np.pi / 2), (0, 0.107, 0)]


def test_bundled_ur5_tool0_follows_the_published_dh_table():
    """T_base_tool0 (UR controller base frame to the zero TCP) is the product of the DH rows."""
    model = RobotModel.from_urdf_file(bundled_robot("ur5.urdf"))
    chain = model.chain("base_link", "tool0")
    rng = np.random.default_rng(SEED)
    for q in rng.uniform(chain.lower, chain.upper, (CONFIGURATIONS_PER_ROBOT, 6)):
        poses = model.link_poses(dict(zip(chain.joint_names, q)))
        expected = np.linalg.multi_dot([standard_dh(a, d, alpha, theta) for (a, d, alpha), theta in zip(UR5_DH, q)])
        error = np.abs(np.linalg.inv(poses["base"]) @ poses["tool0"] - expected).max()
        assert error <= FK_TOLERANCE, f"off by {error:.3g} at {q}"


def test_bundled_panda_flange_follows_the_published_dh_table():
    model = RobotModel.from_urdf_file(bundled_robot("panda.urdf"))
    chain = model.chain("panda_link0", "panda_link8")
    rng = np.random.default_rng(SEED)
    for q in rng.uniform(chain.lower, chain.upper, (CONFIGURATIONS_PER_ROBOT, 7)):
        thetas = np.append(q, 0.0)
        expected = np.linalg.multi_dot([modified_dh(a, d, alpha, t) for (a, d, alpha), t in zip(PANDA_DH, thetas)])
        error = np.abs(chain.forward_kinematics(q) - expected).max()
        assert error <= FK_TOLERANCE, f"off by {error:.3g} at {q}"


@pytest.mark.parametrize("base_link, tip_link", [("panda_link8", "panda_hand_tcp"), ("panda_link3", "panda_link3")])
def test_chain_of_fixed_joints_gives_the_fixed_transform(base_link, tip_link):
    """A chain with no variables still has FK (the constant T_base_tip) and a (6, 0) Jacobian."""
    model = RobotModel.from_urdf_file(bundled_robot("panda.urdf"))
    chain = model.chain(base_link, tip_link)
    assert chain.joint_names == ()
    poses = model.link_poses({})
    expected = np.linalg.inv(poses[base_link]) @ poses[tip_link]
    assert np.abs(chain.forward_kinematics(np.zeros(0)) - expected).max() <= FK_TOLERANCE
    assert chain.jacobian(np.zeros(0)).shape == (6, 0)
    assert chain.forward_kinematics(np.zeros((5, 0))).shape == (5, 4, 4)
