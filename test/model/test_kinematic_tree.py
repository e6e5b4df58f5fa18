"""The whole-tree FK's state vectors and entry points: variable names and slots, state vectors built from
joint values, batches, and the single-joint motion the description publisher uses (its poses are checked
against pinocchio in test_fk_reference)."""
from __future__ import annotations

import numpy as np
import pytest
from reference import PinocchioReference
from robots import SMALL_URDFS, small_urdf

from kinematics_py import RobotModel
from kinematics_py.errors import JointValueError, UnknownJointError
from kinematics_py.model.robot_model import joint_motion
from kinematics_py.model.tree_kernels import joints_placing, place_some_links

SEED = 3
#: The same double-precision products in the same order: equal up to round-off [m or unitless].
TOLERANCE = 1e-12


@pytest.mark.parametrize("name", SMALL_URDFS)
def test_joint_motion_composes_into_the_link_poses(name):
    model = RobotModel.from_urdf_file(small_urdf(name))
    reference = PinocchioReference(small_urdf(name))
    values = model.resolve_joint_values(reference.random_configuration(np.random.default_rng(SEED)))
    poses = model.link_poses(values)
    for joint in model.description.joints:
        motion = joint_motion(joint, values[joint.name]) if joint.is_movable else np.eye(4)
        np.testing.assert_allclose(poses[joint.parent] @ joint.T_parent_joint @ motion, poses[joint.child],
                                   rtol=0, atol=TOLERANCE, err_msg=joint.name)


def test_variables_of_mimic_floating_and_planar_joints():
    mimic = RobotModel.from_urdf_file(small_urdf("mimic.urdf"))
    assert mimic.variable_names == tuple(mimic.independent_joint_names)
    assert "joint3" not in mimic.variable_names, "a mimic joint has no value of its own"
    planar = RobotModel.from_urdf_file(small_urdf("planar_base.urdf"))
    assert planar.variable_names == ("cart_joint/x", "cart_joint/y", "cart_joint/theta", "joint1", "joint2")
    assert planar.tree.slots["cart_joint"] == slice(0, 3)
    assert np.isinf(planar.tree.lower[:3]).all() and planar.tree.lower[3] == -3.0


def test_state_vector_writes_given_values_over_the_base():
    model = RobotModel.from_urdf_file(small_urdf("mimic.urdf"))
    default = model.state_vector()
    np.testing.assert_array_equal(default, model.tree.default)
    moved = model.state_vector({"joint1": 0.5, "joint3": 9.0})  # joint3 mimics joint2: checked, then left out
    assert moved[model.tree.variable_index["joint1"]] == 0.5
    np.testing.assert_array_equal(np.delete(moved, model.tree.variable_index["joint1"]),
                                  np.delete(default, model.tree.variable_index["joint1"]))
    again = model.state_vector({"joint2": 0.25}, base=moved)
    assert again[model.tree.variable_index["joint1"]] == 0.5 and again[model.tree.variable_index["joint2"]] == 0.25
    assert moved[model.tree.variable_index["joint2"]] == default[model.tree.variable_index["joint2"]], "base unchanged"
    with pytest.raises(UnknownJointError):
        model.state_vector({"joint9": 0.0})
    with pytest.raises(JointValueError, match="finite"):
        model.state_vector({"joint3": float("nan")})


@pytest.mark.parametrize("name", ["floating_base.urdf", "planar_base.urdf", "mimic.urdf", "tree.urdf"])
def test_batch_link_poses_equal_single_ones(name):
    model = RobotModel.from_urdf_file(small_urdf(name))
    reference = PinocchioReference(small_urdf(name))
    rng = np.random.default_rng(SEED)
    states = [model.state_vector(reference.random_configuration(rng)) for _ in range(10)]
    batch = model.tree.link_poses_batch(np.array(states))
    assert batch.shape == (10, len(model.link_names), 4, 4)
    for q, poses in zip(states, batch):
        np.testing.assert_allclose(poses, model.tree.link_poses(q), rtol=0, atol=TOLERANCE)


@pytest.mark.parametrize("name", ["tree.urdf", "mimic.urdf", "planar_base.urdf"])
def test_some_links_are_placed_with_their_ancestors_alone_as_the_whole_tree_places_them(name):
    """``tree_kernels.joints_placing`` marks the joints from the root to each chosen link (on a tree, the other
    branches' stay unmarked) and ``place_some_links`` places those links as ``place_links`` does."""
    model = RobotModel.from_urdf_file(small_urdf(name))
    reference = PinocchioReference(small_urdf(name))
    q = model.state_vector(reference.random_configuration(np.random.default_rng(SEED)))
    table, whole = model.tree.table, model.tree.link_poses(q)
    names = list(model.link_names)
    parent_joint = {joint.child: k for k, joint in enumerate(model.description.joints)}
    for link in range(1, len(names)):
        chosen = np.zeros(len(names), dtype=bool)
        chosen[link] = True
        joints = joints_placing(table, chosen)
        on_the_way, child = set(), names[link]
        while child in parent_joint:  # (up to the root)
            on_the_way.add(parent_joint[child])
            child = model.description.joints[parent_joint[child]].parent
        assert set(np.flatnonzero(joints)) == on_the_way, names[link]
        poses = np.full_like(whole, np.nan)
        place_some_links(q, table, poses, joints)
        np.testing.assert_allclose(poses[link], whole[link], rtol=0, atol=TOLERANCE)
    assert not joints_placing(table, np.zeros(len(names), dtype=bool)).any()
