"""The scene as the sphere kernels see it: each world primitive's axis-aligned bounds in the planning frame (the
first test of a body against it) hold every point of the primitive, however it is posed, and no more than its
extreme points for an unrotated one; a plane is unbounded."""
from __future__ import annotations

import numpy as np
import pytest
from robots import bundled_robot

from kinematics_py import RobotModel
from kinematics_py.collision.checker import CollisionChecker
from kinematics_py.collision.geometry import Box, Cone, Cylinder, Plane, Sphere
from kinematics_py.collision.sphere_world import sphere_table
from kinematics_py.geometry.transforms import make_transform, rotation_about_axis

CENTRE = np.array([0.3, -0.2, 0.7])


def unit(vector: np.ndarray) -> np.ndarray:
    return vector / np.linalg.norm(vector)


def surface_points(shape, rng: np.random.Generator) -> np.ndarray:
    """Points of the shape's surface in its own frame: its corners, rims and poles among them."""
    if isinstance(shape, Box):
        half = np.asarray(shape.size) / 2
        return np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)]) * half
    if isinstance(shape, Sphere):
        directions = np.vstack([np.eye(3), -np.eye(3), rng.normal(size=(200, 3))])
        return shape.radius * directions / np.linalg.norm(directions, axis=1, keepdims=True)
    angles = np.linspace(0.0, 2 * np.pi, 721)
    rim = np.column_stack([shape.radius * np.cos(angles), shape.radius * np.sin(angles)])
    return np.vstack([np.column_stack([rim, np.full(len(rim), z)]) for z in (-shape.length / 2, shape.length / 2)])


@pytest.fixture(scope="module")
def checker() -> CollisionChecker:
    return CollisionChecker(RobotModel.from_urdf_string(bundled_robot("panda.urdf").read_text()))


def obstacle_bounds(checker: CollisionChecker, shape, rotation: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The axis-aligned bounds of ``shape`` placed at CENTRE with ``rotation``, the world's only object."""
    checker.scene.add_object("thing", [shape], pose=make_transform(rotation, CENTRE))
    table = sphere_table(checker)
    return table.obstacle_lower[0], table.obstacle_upper[0]


@pytest.mark.parametrize("shape", [Box((0.8, 0.04, 0.1)), Sphere(0.07), Cylinder(0.03, 0.9), Cone(0.05, 0.6)],
                         ids=["bar", "ball", "rod", "cone"])
def test_every_point_of_a_posed_primitive_lies_within_its_bounds(checker, shape):
    rng = np.random.default_rng(3)
    for k in range(20):
        rotation = np.eye(3) if k == 0 else rotation_about_axis(unit(rng.normal(size=3)), rng.uniform(-np.pi, np.pi))
        lower, upper = obstacle_bounds(checker, shape, rotation)
        points = surface_points(shape, rng) @ rotation.T + CENTRE
        assert (points >= lower - 1e-12).all() and (points <= upper + 1e-12).all(), k
        if k == 0 and not isinstance(shape, Sphere):  # unrotated: the extreme points are the bounds
            assert np.allclose(points.min(axis=0), lower, atol=1e-5) and np.allclose(points.max(axis=0), upper,
                                                                                    atol=1e-5)


def test_a_plane_is_unbounded(checker):
    lower, upper = obstacle_bounds(checker, Plane((0.0, 0.0, 1.0, 0.0)), np.eye(3))
    assert np.isneginf(lower).all() and np.isposinf(upper).all()
