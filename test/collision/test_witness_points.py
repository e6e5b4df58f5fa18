"""Witness points of the links' geometry (``collision.witness_points``): a state they prove in collision collides for
the exact checker, always; pairs the checker does not test, meshes it does not test as solids (their triangles) and
obstacles that are not solids prove nothing; and they prove many of the states where a link is in an obstacle (the
bundled Panda's links are cylinders and boxes)."""
from __future__ import annotations

import numpy as np
import pytest
from meshes import boxes_mesh
from robots import bundled_robot, example_robot_urdf

from kinematics_py import RobotModel, SemanticModel
from kinematics_py.collision import witness_points
from kinematics_py.collision.checker import CollisionChecker
from kinematics_py.collision.geometry import Box, Cone, Cylinder, Mesh, Sphere, convex_hull
from kinematics_py.collision.witness_points import (
    first_proven_colliding,
    proven_colliding,
    shape_points,
    witness_table,
)
from kinematics_py.geometry.transforms import make_transform

SEED = 11
STATES = 600
#: Obstacles of every kind: boxes, a sphere and a cylinder (solids), a cone (not one here).
OBSTACLES = {"table": (Box((0.8, 1.6, 0.04)), (0.6, 0.0, 0.0)), "wall": (Box((0.04, 1.2, 0.6)), (0.5, 0.0, 0.32)),
             "ball": (Sphere(0.15), (0.3, 0.4, 0.5)), "pillar": (Cylinder(0.08, 1.0), (-0.4, -0.3, 0.5)),
             "cone": (Cone(0.2, 0.4), (-0.3, 0.4, 0.4))}
ARM = ("panda_joint1", "panda_joint2", "panda_joint3", "panda_joint4", "panda_joint5", "panda_joint6", "panda_joint7")


def panda_among(obstacles, mesh_mode="convex_hull", meshes=False) -> CollisionChecker:
    """The bundled Panda (cylinders and boxes), or with ``meshes`` example-robot-data's (meshes, no SRDF)."""
    if meshes:
        model = RobotModel.from_urdf_file(example_robot_urdf("panda"))
        checker = CollisionChecker(model, mesh_mode=mesh_mode)
    else:
        urdf, srdf = bundled_robot("panda.urdf").read_text(), bundled_robot("panda.srdf").read_text()
        model = RobotModel.from_urdf_string(urdf)
        checker = CollisionChecker(model, SemanticModel.from_srdf_string(srdf, model), mesh_mode=mesh_mode)
    for name, (shape, centre) in obstacles.items():
        checker.scene.add_object(name, [shape], pose=make_transform(None, centre))
    return checker


def random_states(checker: CollisionChecker, count: int) -> np.ndarray:
    joints = checker.model.joints
    lower, upper = np.array([joints[n].lower for n in ARM]), np.array([joints[n].upper for n in ARM])
    return lower + np.random.default_rng(SEED).random((count, len(ARM))) * (upper - lower)


def proven(checker: CollisionChecker, states: np.ndarray) -> np.ndarray:
    names = list(checker.model.variable_names)
    indices = np.array([names.index(n) for n in ARM], dtype=np.int64)
    base = np.array([checker.model.resolve_joint_values({})[n] for n in names])
    return np.array([proven_colliding(checker, indices, base, q) for q in states])


@pytest.fixture(scope="module")
def cluttered():
    checker = panda_among(OBSTACLES)
    states = random_states(checker, STATES)
    return checker, states, checker.check_batch(states, joint_names=ARM)


def test_a_state_its_witness_points_prove_colliding_collides_for_the_exact_checker(cluttered):
    checker, states, exact = cluttered
    found = proven(checker, states)
    assert not (found & ~exact).any(), np.flatnonzero(found & ~exact)
    assert found.sum() >= 0.5 * exact.sum(), (found.sum(), exact.sum())  # most collisions are deep in an obstacle


def test_the_first_of_many_states_proven_is_the_first_each_proves_alone(cluttered):
    """``first_proven_colliding`` over a batch answers what ``proven_colliding`` answers state by state."""
    checker, states, _ = cluttered
    names = list(checker.model.variable_names)
    indices = np.array([names.index(n) for n in ARM], dtype=np.int64)
    base = np.array([checker.model.resolve_joint_values({})[n] for n in names])
    each = proven(checker, states)
    for first, last in ((0, 40), (0, STATES), (int(np.argmax(each)) + 1, STATES)):
        expected = int(np.argmax(each[first:last])) if each[first:last].any() else -1
        assert first_proven_colliding(checker, indices, base, states[first:last]) == expected
    assert first_proven_colliding(checker, indices, base, states[~each]) == -1


def test_mesh_hull_vertices_prove_only_collisions_and_meshes_checked_by_their_triangles_prove_nothing():
    hulls = panda_among(OBSTACLES, meshes=True)
    states = random_states(hulls, STATES // 2)
    exact = hulls.check_batch(states, joint_names=ARM, self_collisions=False)  # (no SRDF: links touch their own)
    found = proven(hulls, states)
    assert not (found & ~exact).any(), np.flatnonzero(found & ~exact)
    assert found.sum() >= 0.3 * exact.sum(), (found.sum(), exact.sum())
    triangles = panda_among(OBSTACLES, mesh_mode="mesh", meshes=True)  # its fingers' boxes alone give points
    assert 0 < len(witness_table(triangles).points) < len(witness_table(hulls).points)
    assert not (proven(triangles, states) & ~exact).any()


def test_pairs_the_checker_does_not_test_prove_nothing(cluttered):
    checker, states, _ = cluttered
    allowing = panda_among(OBSTACLES)
    for link in allowing.link_geometry:
        for name in ("table", "wall", "ball", "pillar"):
            allowing.allow_collision(link, name)
    assert witness_table(allowing).solid_tested.sum() == 0
    assert not proven(allowing, states).any()
    assert witness_table(checker).solid_tested.any()


def test_a_held_parts_points_prove_its_collisions_and_a_held_mesh_none():
    """A part in the hand is one more body of the hand: its box's corners prove states where it lies in an
    obstacle (the arm's own points are allowed there, so only the part's can), never a free one; a held mesh is
    checked by its triangles, so it has no points."""
    checker = panda_among(OBSTACLES)
    for link in checker.link_geometry:
        for name in OBSTACLES:
            checker.allow_collision(link, name)
    checker.scene.attach_object("part", "panda_hand", ("panda_leftfinger", "panda_rightfinger"),
                                [Box((0.06, 0.06, 0.3))], make_transform(None, (0.0, 0.0, 0.25)))
    table = witness_table(checker)
    assert np.diff(table.body_first)[-1] == 8 and table.solid_tested[-1].any() and not table.solid_tested[:-1].any()
    states = random_states(checker, STATES)
    exact = checker.check_batch(states, joint_names=ARM)
    found = proven(checker, states)
    assert not (found & ~exact).any(), np.flatnonzero(found & ~exact)
    assert found.sum() >= 10, found.sum()
    checker.scene.attach_object("part", "panda_hand", ("panda_leftfinger", "panda_rightfinger"),
                                [boxes_mesh([((0.0, 0.0, 0.0), (0.06, 0.06, 0.3))])],
                                make_transform(None, (0.0, 0.0, 0.25)))
    assert np.diff(witness_table(checker).body_first)[-1] == 0


def test_a_cone_proves_nothing():
    assert not witness_table(panda_among({"cone": OBSTACLES["cone"]})).solid_tested.any()


def test_shape_points_lie_in_their_solid():
    box = shape_points(Box((0.2, 0.4, 0.6)), True)
    assert len(box) == 8 and np.allclose(np.abs(box), [0.1, 0.2, 0.3])
    ball = shape_points(Sphere(0.3), True)
    assert np.all(np.linalg.norm(ball, axis=1) <= 0.3 + 1e-12)
    can = shape_points(Cylinder(0.1, 0.5), True)
    assert np.all(np.linalg.norm(can[:, :2], axis=1) <= 0.1 + 1e-12) and np.all(np.abs(can[:, 2]) <= 0.25 + 1e-12)
    rng = np.random.default_rng(SEED)
    mesh = Mesh(rng.normal(size=(200, 3)), np.array([[0, 1, 2]]))
    hull = {tuple(v) for v in np.asarray(convex_hull(mesh).vertices)}
    points = shape_points(mesh, True)
    assert len(points) > 0 and all(tuple(p) in hull for p in points)
    assert len(shape_points(mesh, False)) == 0


def test_the_chains_kept_per_checker_stay_bounded_whatever_the_base_states():
    """A node's plans with ever new base states (a gripper's fingers) keep at most MAX_KEPT_CHAINS chains."""
    checker = panda_among(OBSTACLES)
    names = list(checker.model.variable_names)
    indices = np.array([names.index(n) for n in ARM], dtype=np.int64)
    q = random_states(checker, 1)[0]
    for k in range(3 * witness_points.MAX_KEPT_CHAINS):
        base = np.full(len(names), 0.001 * k)
        witness_points.proven_colliding(checker, indices, base, q)
        assert len(witness_points._entry(checker)[2]) <= witness_points.MAX_KEPT_CHAINS
