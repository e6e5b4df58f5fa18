"""Generated link spheres: they contain every collision shape (points sampled on the surface and inside each
primitive and mesh lie in the union of its link's spheres, and in its bounding sphere), for primitive and mesh
robots and posed shapes, in the plain fit and the fine one; the balls of a convex polytope's grid pieces contain it."""
from __future__ import annotations

import math

import numpy as np
import pytest
import trimesh
from robots import bundled_robot, example_robot_urdf

from kinematics_py import RobotModel
from kinematics_py.collision.checker import CollisionChecker
from kinematics_py.collision.geometry import Box, Cone, Cylinder, Mesh, Placed, Plane, Sphere
from kinematics_py.collision.sphere_cells import Polytope, enclosing_balls, grid_pieces
from kinematics_py.collision.spheres import SphereModelError, link_spheres, robot_spheres
from kinematics_py.geometry.transforms import make_transform, rotation_about_axis

SEED = 3
#: Points sampled on the surface of each shape, and inside each primitive.
SURFACE_POINTS = 3000
INSIDE_POINTS = 1000


def _unit_vectors(rng, count):
    v = rng.normal(size=(count, 3))
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def primitive_points(shape, rng) -> np.ndarray:
    """Points on the surface and inside a primitive, in its own frame (exactly on the surface, not on a
    polygonal approximation of it)."""
    n, m = SURFACE_POINTS, INSIDE_POINTS
    if isinstance(shape, Box):
        half = np.asarray(shape.size) / 2
        points = rng.uniform(-half, half, size=(n, 3))
        axis = rng.integers(0, 3, n)
        points[np.arange(n), axis] = half[axis] * rng.choice((-1.0, 1.0), n)
        return np.vstack([points, rng.uniform(-half, half, size=(m, 3))])
    if isinstance(shape, Sphere):
        directions = _unit_vectors(rng, n + m)
        radii = np.concatenate([np.full(n, shape.radius), shape.radius * rng.random(m) ** (1 / 3)])
        return directions * radii[:, None]
    angle = rng.uniform(0, 2 * math.pi, n + m)
    z = rng.uniform(-shape.length / 2, shape.length / 2, n + m)
    z[: n // 4] = shape.length / 2 * rng.choice((-1.0, 1.0), n // 4)  # the caps (a cone's base and apex)
    fraction = np.concatenate([np.where(np.arange(n) < n // 4, np.sqrt(rng.random(n)), 1.0), rng.random(m)])
    radius = shape.radius * (0.5 - z / shape.length if isinstance(shape, Cone) else 1.0)
    return np.stack([radius * fraction * np.cos(angle), radius * fraction * np.sin(angle), z], axis=1)


def shape_points(placed: Placed, rng) -> np.ndarray:
    """Sampled points of a placed shape in its link's frame: a mesh's vertices and surface, a primitive's surface
    and inside."""
    shape = placed.shape
    if isinstance(shape, Mesh):
        surface = trimesh.Trimesh(shape.vertices, shape.triangles, process=False)
        points = np.vstack([shape.vertices, trimesh.sample.sample_surface(surface, SURFACE_POINTS, seed=SEED)[0]])
    else:
        points = primitive_points(shape, rng)
    return points @ placed.T_frame_shape[:3, :3].T + placed.T_frame_shape[:3, 3]


def assert_contained(link_geometry, spheres) -> int:
    rng = np.random.default_rng(SEED)
    checked = 0
    for link, shapes in link_geometry.items():
        for placed in shapes:
            points = shape_points(placed, rng)
            inside = spheres[link].contains(points)
            assert inside.all(), (link, type(placed.shape).__name__, points[~inside][:3])
            beyond = np.linalg.norm(points - spheres[link].bound_center, axis=1) - spheres[link].bound_radius
            assert (beyond <= 1e-9).all(), (link, "bounding sphere", points[beyond > 1e-9][:3])
            checked += len(points)
    return checked


@pytest.mark.parametrize("urdf", [bundled_robot("panda.urdf"), bundled_robot("ur5.urdf"),
                                  example_robot_urdf("panda"), example_robot_urdf("ur5"), example_robot_urdf("kinova")],
                         ids=["bundled panda", "bundled ur5", "panda meshes", "ur5 meshes", "kinova meshes"])
@pytest.mark.parametrize("fine", [False, True], ids=["plain fit", "fine fit"])
def test_every_collision_shape_of_a_robot_lies_inside_its_links_spheres(urdf, fine):
    checker = CollisionChecker(RobotModel.from_urdf_file(urdf))
    fine_links = frozenset(checker.link_geometry) if fine else frozenset()
    spheres = robot_spheres(checker.link_geometry, fine_links)
    assert set(spheres) == set(checker.link_geometry)
    assert assert_contained(checker.link_geometry, spheres) > 5 * SURFACE_POINTS
    assert robot_spheres(checker.link_geometry, fine_links) is spheres  # cached per shape set and fine links


@pytest.mark.parametrize("fine", [False, True], ids=["plain fit", "fine fit"])
def test_posed_primitives_of_every_kind_lie_inside_the_spheres(fine):
    T = make_transform(rotation_about_axis(np.array((1.0, 2.0, 0.5)) / math.sqrt(5.25), 0.7), (0.1, -0.05, 0.2))
    shapes = [Placed(Box((0.3, 0.05, 0.1)), T), Placed(Cylinder(0.04, 0.25), np.linalg.inv(T)),
              Placed(Sphere(0.07), make_transform(None, (0.0, 0.2, 0.0))), Placed(Cone(0.05, 0.12), T @ T)]
    spheres = link_spheres(shapes, fine=fine)
    assert assert_contained({"link": shapes}, {"link": spheres}) > len(shapes) * SURFACE_POINTS
    far = np.array([[2.0, 2.0, 2.0]])
    assert not spheres.contains(far).any()


def test_a_plane_has_no_spheres():
    with pytest.raises(SphereModelError, match="Plane"):
        link_spheres([Placed(Plane((0.0, 0.0, 1.0, 0.0)))])


def test_the_balls_of_a_polytopes_grid_pieces_contain_it():
    rng = np.random.default_rng(SEED)
    polytope = Polytope.hull_of(rng.normal(size=(40, 3)) * (0.3, 0.1, 0.05))
    low, high = polytope.vertices.min(axis=0), polytope.vertices.max(axis=0)
    breaks = tuple(np.linspace(low[k], high[k], count + 1) for k, count in enumerate((4, 2, 1)))
    centers, radii = enclosing_balls(grid_pieces(polytope, breaks))
    weights = rng.dirichlet(np.full(len(polytope.vertices), 0.2), size=INSIDE_POINTS)
    a, b = polytope.vertices[polytope.edges[:, 0]], polytope.vertices[polytope.edges[:, 1]]
    t = rng.random((len(a), 20, 1))
    points = np.vstack([weights @ polytope.vertices, (a[:, None] + t * (b - a)[:, None]).reshape(-1, 3)])
    gaps = np.linalg.norm(points[:, None] - centers[None], axis=2) - radii[None]
    assert (gaps <= 1e-9).any(axis=1).all()


@pytest.mark.parametrize("fine", [False, True], ids=["plain fit", "fine fit"])
def test_posed_meshes_flat_and_solid_lie_inside_the_spheres(fine):
    T = make_transform(rotation_about_axis(np.array((0.0, 0.6, 0.8)), 1.1), (0.02, 0.1, -0.3))
    square = Mesh(np.array([(0, 0, 0), (0.2, 0, 0), (0.2, 0.1, 0), (0, 0.1, 0)], dtype=float),
                  np.array([(0, 1, 2), (0, 2, 3)]))
    sphere = trimesh.creation.icosphere(subdivisions=3, radius=0.05)
    long_one = trimesh.creation.cylinder(radius=0.03, height=0.4, sections=40)
    shapes = [Placed(square, T), Placed(Mesh(sphere.vertices, sphere.faces), np.linalg.inv(T)),
              Placed(Mesh(long_one.vertices, long_one.faces), T @ T)]
    spheres = link_spheres(shapes, fine=fine)
    assert assert_contained({"link": shapes}, {"link": spheres}) > len(shapes) * SURFACE_POINTS
