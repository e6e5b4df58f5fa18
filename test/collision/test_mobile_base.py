"""Mobile bases: the collision checker places links where RobotModel.link_poses does, floating and planar joints
included (it once held them at zero, so a moved base was checked where it was not).

Robots: ``test/data/urdf/floating_base.urdf`` (a floating joint, then a 3-joint arm) and ``planar_base.urdf`` (a
planar joint on a tilted plane, then a 2-joint arm), given collision boxes off each link's origin."""
from __future__ import annotations

import math

import numpy as np
import pytest
from robots import small_urdf

from kinematics_py import RobotModel
from kinematics_py.collision.checker import CollisionChecker
from kinematics_py.collision.geometry import Box, Placed, Sphere
from kinematics_py.collision.matrix import propose_disabled_pairs
from kinematics_py.errors import JointValueError, UnknownJointError
from kinematics_py.geometry.transforms import make_transform, rotation_from_rpy

SEED = 11
STATES = 50
#: Both sides run double-precision products of a few transforms [m or unitless].
PLACEMENT_TOLERANCE = 1e-12
#: Base values are drawn over +-BASE_RANGE [m] and +-pi [rad]: far from where a base held at zero would be.
BASE_RANGE = 3.0
#: Farther than this from the root [m], a point is out of reach of both robots with their base at zero.
CLEAR_OF_THE_ROBOT_AT_ZERO = 2.0
BASE_JOINTS = {"floating_base.urdf": "base_joint", "planar_base.urdf": "cart_joint"}
BASE_LINKS = {"floating_base.urdf": "base", "planar_base.urdf": "cart"}


def mobile_robot(name: str) -> CollisionChecker:
    """The robot with a box per link, each off its link's origin so that a wrong rotation shows as well."""
    model = RobotModel.from_urdf_file(small_urdf(name))
    geometry = {link: [Placed(Box((0.1, 0.06, 0.04)), make_transform(rotation_from_rpy(0.3, -0.2, 0.5),
                                                                         (0.05, 0.02, -0.03)))]
                for link in model.link_names if link != model.root_link}
    return CollisionChecker(model, geometry=geometry)


def random_values(model: RobotModel, rng) -> dict:
    """Every independent joint: arm joints within their limits, the base anywhere within BASE_RANGE."""
    values = {}
    for name in model.independent_joint_names:
        joint = model.joints[name]
        if joint.type == "floating":
            values[name] = np.concatenate([rng.uniform(-BASE_RANGE, BASE_RANGE, 3), rng.uniform(-math.pi, math.pi, 3)])
        elif joint.type == "planar":
            values[name] = np.array([*rng.uniform(-BASE_RANGE, BASE_RANGE, 2), rng.uniform(-math.pi, math.pi)])
        else:
            values[name] = float(rng.uniform(joint.lower, joint.upper))
    return values


@pytest.mark.parametrize("name", sorted(BASE_JOINTS))
def test_every_shape_sits_where_the_model_puts_its_link(name):
    checker = mobile_robot(name)
    model = checker.model
    rng = np.random.default_rng(SEED)
    for _ in range(STATES):
        values = random_values(model, rng)
        link_poses = model.link_poses(values)
        placed = checker.shape_poses(values)
        assert [body for body, _ in placed] == list(checker.link_geometry)
        for body, T_plan_shape in placed:
            expected = link_poses[body] @ checker.link_geometry[body][0].T_frame_shape
            np.testing.assert_allclose(T_plan_shape, expected, rtol=0, atol=PLACEMENT_TOLERANCE, err_msg=body)
        # The same state as a vector in variable_names order places the shapes alike.
        vector = checker.state_vector(values)
        for (_, by_mapping), (_, by_vector) in zip(placed, checker.shape_poses(vector)):
            np.testing.assert_array_equal(by_mapping, by_vector)


@pytest.mark.parametrize("name", sorted(BASE_JOINTS))
def test_a_world_object_touched_by_the_moved_base_collides(name):
    """A crate around the base link's box once the base is moved: colliding there, free with the base at zero."""
    checker = mobile_robot(name)
    model, base_joint, base_link = checker.model, BASE_JOINTS[name], BASE_LINKS[name]
    rng = np.random.default_rng(SEED)
    tested = 0
    while tested < 5:
        values = random_values(model, rng)
        T_plan_box = model.link_poses(values)[base_link] @ checker.link_geometry[base_link][0].T_frame_shape
        if np.linalg.norm(T_plan_box[:3, 3]) < CLEAR_OF_THE_ROBOT_AT_ZERO:
            continue
        tested += 1
        scene = checker.scene.copy()
        scene.add_object("crate", [Sphere(0.03)], pose=make_transform(None, T_plan_box[:3, 3]))
        moved = checker.for_scene(scene)
        assert moved.is_colliding(values), f"{base_joint} at {values[base_joint]}"
        report = moved.check(values, contacts=True)
        assert (base_link, "crate") in report.pairs
        contact = next(c for c in report.contacts if {c.body_1, c.body_2} == {base_link, "crate"})
        assert np.linalg.norm(contact.position - T_plan_box[:3, 3]) < 0.1, "contacts are in the planning frame"
        assert moved.check_batch(checker.state_vector(values).reshape(1, -1)).tolist() == [True]
        at_zero = {**values, base_joint: np.zeros_like(values[base_joint])}
        assert not moved.is_colliding(at_zero)


def test_disabled_pairs_are_proposed_with_the_base_at_the_default_state():
    checker = mobile_robot("floating_base.urdf")
    proposal = propose_disabled_pairs(checker, samples=200, default_state={"base_joint": [5, 0, 0, 0, 0, 1]})
    assert proposal.samples == 200 and proposal.disabled
    adjacent = {frozenset((p.link_1, p.link_2)) for p in proposal.disabled if p.reason == "Adjacent"}
    assert frozenset(("base", "link1")) in adjacent


def test_state_vectors_carry_floating_and_planar_values():
    floating = mobile_robot("floating_base.urdf")
    assert floating.variable_names == ("base_joint/x", "base_joint/y", "base_joint/z", "base_joint/roll",
                                       "base_joint/pitch", "base_joint/yaw", "joint1", "joint2", "joint3")
    values = {"base_joint": [1.0, 2.0, 3.0, 0.1, 0.2, 0.3], "joint2": 0.5}
    np.testing.assert_array_equal(floating.state_vector(values), [1.0, 2.0, 3.0, 0.1, 0.2, 0.3, 0.0, 0.5, 0.0])
    with pytest.raises(JointValueError, match="'base_joint' \\(floating\\) takes 6"):
        floating.state_vector({"base_joint": [1.0, 2.0, 3.0]})
    with pytest.raises(UnknownJointError):
        floating.state_vector({"base_joint/w": 1.0})

    planar = mobile_robot("planar_base.urdf")
    assert planar.variable_names == ("cart_joint/x", "cart_joint/y", "cart_joint/theta", "joint1", "joint2")
    base, indices = planar.binding(["cart_joint/theta", "joint2"], {"cart_joint": [0.5, -0.5, 1.0]})
    np.testing.assert_array_equal(base, [0.5, -0.5, 1.0, 0.0, 0.0])
    assert indices.tolist() == [2, 4]
    with pytest.raises(Exception, match="not single-DOF"):
        planar.binding(["cart_joint"])
    # A group's joints embedded in a moved base: the same verdict as the whole state.
    states = np.random.default_rng(SEED).uniform(-2.0, 2.0, (20, 2))
    embedded = planar.check_batch(states, joint_names=["joint1", "joint2"], base_state={"cart_joint": [2, 1, 0.3]})
    full = [planar.is_colliding({"cart_joint": [2, 1, 0.3], "joint1": a, "joint2": b}) for a, b in states]
    assert embedded.tolist() == full
