"""The scene as the sphere kernels see it: each world primitive's axis-aligned bounds in the planning frame (the
first test of a body against it) hold every point of the primitive, however it is posed, and no more than its
extreme points for an unrotated one; a plane is unbounded; a world mesh is its posed triangles under a tree of
bounds, and a point's distance to a triangle is that of its nearest point."""
from __future__ import annotations

import numpy as np
import pytest
from meshes import boxes_mesh
from robots import bundled_robot

from kinematics_py import RobotModel
from kinematics_py.collision import sphere_world
from kinematics_py.collision.checker import CollisionChecker
from kinematics_py.collision.geometry import Box, Cone, Cylinder, Plane, Sphere
from kinematics_py.collision.octree import Octree
from kinematics_py.collision.sphere_kernels import BOX, NODE, TRIANGLE, triangle_distance_squared
from kinematics_py.collision.sphere_world import obstacle_owners, obstacle_solids, sphere_table
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


def assert_a_tree(table) -> None:
    """Each NODE row's bounds hold every row up to its skip, which ends within its parent's; rows not NODE skip to
    the next."""
    kinds, skip = table.obstacle_kind, table.obstacle_skip
    for m in range(len(kinds)):
        if kinds[m] != NODE:
            assert skip[m] == m + 1
            continue
        assert m + 1 < skip[m] <= len(kinds)
        inside = np.arange(m + 1, skip[m])
        assert (table.obstacle_lower[inside] >= table.obstacle_lower[m] - 1e-12).all()
        assert (table.obstacle_upper[inside] <= table.obstacle_upper[m] + 1e-12).all()
        assert all(skip[k] <= skip[m] for k in inside)


def test_a_world_mesh_is_its_triangles_under_a_tree_of_bounds(checker):
    """Each triangle of a posed world mesh is a row of its own (its corners posed, within its bounds), once, under
    a tree of NODE rows; none is a solid."""
    mesh = boxes_mesh([((0.0, 0.0, 0.0), (0.4, 0.3, 0.02)), ((0.1, 0.0, 0.2), (0.02, 0.3, 0.4)),
                       ((-0.1, 0.05, 0.1), (0.05, 0.05, 0.05))])
    rotation = rotation_about_axis(unit(np.array([0.3, -0.5, 0.8])), 0.7)
    checker.scene.add_object("thing", [mesh], pose=make_transform(rotation, CENTRE))
    table = sphere_table(checker)
    kinds, T = table.obstacle_kind, table.T_obstacle_plan
    triangles = np.flatnonzero(kinds == TRIANGLE)
    assert set(kinds) == {TRIANGLE, NODE} and len(triangles) == len(mesh.triangles)
    posed = mesh.vertices[mesh.triangles] @ rotation.T + CENTRE
    rows = {tuple(np.round(T[m, :, :3], 9).ravel()) for m in triangles}
    assert rows == {tuple(np.round(corners, 9).ravel()) for corners in posed}
    for m in triangles:
        assert (T[m, :, :3] >= table.obstacle_lower[m] - 1e-12).all()
        assert (T[m, :, :3] <= table.obstacle_upper[m] + 1e-12).all()
    assert_a_tree(table)
    assert obstacle_owners(checker) == ("thing",) * len(kinds) and not any(obstacle_solids(checker))


def test_an_octree_is_its_voxel_boxes_under_a_tree_of_bounds(checker):
    """A posed octree's boxes (``Octree.boxes``) are BOX rows (solids) under a tree of NODE rows: each voxel's
    posed centre lies inside one, and their corners within their bounds."""
    rng = np.random.default_rng(6)
    octree = Octree.from_points(np.vstack([rng.random((400, 3)) * [0.5, 0.5, 0.02], rng.normal(0.2, 0.1, (300, 3))]),
                                0.02)
    rotation = rotation_about_axis(unit(np.array([-0.2, 0.9, 0.4])), 1.1)
    checker.scene.clear()
    checker.scene.set_octomap(octree, make_transform(rotation, CENTRE))
    table = sphere_table(checker)
    kinds, T, half = table.obstacle_kind, table.T_obstacle_plan, table.obstacle_size
    boxes = np.flatnonzero(kinds == BOX)
    assert set(kinds) == {BOX, NODE} and len(boxes) == len(octree.boxes[0])
    centres = octree.centers @ rotation.T + CENTRE
    local = np.einsum("bij,nj->bni", T[boxes, :, :3], centres) + T[boxes, None, :, 3]
    assert ((np.abs(local) < half[boxes, None]).all(axis=2).sum(axis=0) == 1).all()
    signs = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)])
    for m in boxes:
        R, t = T[m, :, :3], T[m, :, 3]
        corners = (signs * half[m] - t) @ R
        assert (corners >= table.obstacle_lower[m] - 1e-12).all() and (corners <= table.obstacle_upper[m] + 1e-12).all()
    assert_a_tree(table)
    assert obstacle_solids(checker) == tuple(kinds == BOX)
    checker.scene.clear()


@pytest.mark.parametrize("kind", ["triangles", "degenerate", "thin"])
def test_a_points_distance_to_a_triangle_is_its_nearest_points(kind):
    """``triangle_distance_squared`` against the nearest of a fine grid of the triangle's points (its corners and
    edges among them): never more, and within the grid's spacing; for segments and points too (degenerate), and
    triangles a nanometre wide."""
    rng = np.random.default_rng(5)
    for k in range(60):
        corners = rng.normal(size=(3, 3)) * 0.2
        if kind != "triangles":  # a segment, or a point; or a thin one
            corners[2] = corners[0] + (rng.random() if k % 2 else 0.0) * (corners[1] - corners[0])
            if kind == "thin":
                corners[2] += np.cross(corners[1] - corners[0], rng.normal(size=3)) * 1e-9
            elif k % 4 == 0:
                corners[1] = corners[0]
        T = np.zeros((1, 3, 4))
        T[0, :, :3] = corners
        u, v = np.meshgrid(np.linspace(0, 1, 201), np.linspace(0, 1, 201))
        keep = u + v <= 1
        points = corners[0] + u[keep, None] * (corners[1] - corners[0]) + v[keep, None] * (corners[2] - corners[0])
        spacing = np.linalg.norm(corners - np.roll(corners, 1, axis=0), axis=1).max() / 200
        for p in rng.normal(size=(10, 3)) * 0.3:
            found = np.sqrt(triangle_distance_squared(p[0], p[1], p[2], T, 0))
            nearest = np.linalg.norm(points - p, axis=1).min()
            assert found <= nearest + 1e-12 and found >= nearest - 2 * spacing - 1e-12, (k, p)


def test_a_world_meshs_rows_are_kept_per_pose_and_too_many_leaves_take_the_exact_checks(checker, monkeypatch):
    """A mesh's tree is built once per pose (another object moving leaves it as it is); a scene whose meshes and
    octrees hold more than MAX_WORLD_LEAVES triangles and boxes has no table and says why."""
    mesh = boxes_mesh([((0.0, 0.0, 0.0), (0.2, 0.2, 0.2)), ((0.3, 0.0, 0.0), (0.1, 0.1, 0.1))])
    checker.scene.add_object("thing", [mesh], pose=make_transform(None, CENTRE))
    first = sphere_table(checker)
    rows = sphere_world._TREE_ROWS[mesh][1]
    checker.scene.add_object("other", [Box((0.1, 0.1, 0.1))], pose=make_transform(None, (1.0, 1.0, 1.0)))
    assert sphere_table(checker) is not first and sphere_world._TREE_ROWS[mesh][1] is rows
    checker.scene.move_object("thing", make_transform(None, CENTRE + 0.1))
    sphere_table(checker)
    assert sphere_world._TREE_ROWS[mesh][1] is not rows
    checker.scene.move_object("thing", make_transform(None, CENTRE))
    checker.scene.add_point_cloud("cloud", [[1.0, 1.0, 1.0], [1.2, 1.0, 1.0]], 0.05)  # (two boxes)
    leaves = len(mesh.triangles) + 2
    assert not isinstance(sphere_table(checker), str)
    monkeypatch.setattr(sphere_world, "MAX_WORLD_LEAVES", leaves - 1)
    checker.scene.move_object("thing", make_transform(None, CENTRE + 0.1))
    assert sphere_table(checker) == (f"world meshes' triangles and octrees' boxes number {leaves} (more than "
                                     f"MAX_WORLD_LEAVES = {leaves - 1})")
    checker.scene.remove_object("cloud")
    checker.scene.remove_object("other")


def test_a_node_row_is_tested_where_a_row_under_it_is(checker):
    """``through_nodes``: pairs narrowed to one triangle row keep every NODE row above it tested (the kernels skip
    what is under a NODE row not tested), and no other."""
    mesh = boxes_mesh([((0.0, 0.0, 0.0), (0.4, 0.3, 0.02)), ((0.1, 0.0, 0.2), (0.02, 0.3, 0.4))])
    checker.scene.add_object("thing", [mesh], pose=make_transform(None, CENTRE))
    table = sphere_table(checker)
    kinds, skip = table.obstacle_kind, table.obstacle_skip
    kept = int(np.flatnonzero(kinds == TRIANGLE)[-1])
    narrowed = np.zeros_like(table.world_tested)
    narrowed[0, kept] = True
    tested = sphere_world.through_nodes(table, narrowed)
    above = [m for m in np.flatnonzero(kinds == NODE) if m < kept < skip[m]]
    assert above and set(np.flatnonzero(tested[0])) == {kept, *above} and not tested[1:].any()


def test_every_array_of_the_table_is_c_contiguous_whatever_the_scene(checker):
    """The kernels are compiled for C-contiguous arrays (``kernel_warm_up`` loads that signature): an array of
    another layout would compile new ones inside a plan (seconds). An empty scene, boxes, a mesh and an octree."""
    checker.scene.clear()
    scene = checker.scene
    scenes = [lambda: None, lambda: scene.add_object("bar", [Box((0.8, 0.04, 0.1))], pose=make_transform(None, CENTRE)),
              lambda: scene.add_object("thing", [boxes_mesh([((0.0, 0.0, 0.0), (0.2, 0.2, 0.2))])]),
              lambda: scene.set_octomap(Octree.from_points([[1.0, 1.0, 1.0], [1.5, 1.0, 1.0]], 0.05))]
    for add in scenes:
        add()
        table = sphere_table(checker)
        assert all(array.flags["C_CONTIGUOUS"] for array in table), [array.flags for array in table]
    checker.scene.clear()


def test_a_held_object_is_one_more_body_of_its_link_with_the_pairs_the_checker_tests(checker):
    """After the links, each attached object is a body moving with its link: its spheres contain its shapes as
    posed on the link; it is not paired with its link, its touch links or what it may touch (``allow_collision``),
    and is paired with every other link and world object."""
    part, pose = Cylinder(0.02, 0.2), make_transform(rotation_about_axis((1.0, 0.0, 0.0), 0.4), (0.0, 0.0, 0.15))
    checker.scene.add_object("thing", [Box((0.1, 0.1, 0.1))], pose=make_transform(None, CENTRE))
    checker.scene.add_object("shelf", [Box((0.1, 0.1, 0.1))], pose=make_transform(None, -CENTRE))
    checker.scene.attach_object("part", "panda_hand", touch_links=["panda_leftfinger", "panda_rightfinger"],
                                shapes=[part], pose=pose)
    checker.allow_collision("part", "panda_link6")
    checker.allow_collision("part", "shelf")
    try:
        table, links = sphere_table(checker), list(checker.link_geometry)
        held = len(links)
        assert len(table.body_link) == held + 1
        assert checker.model.link_names[table.body_link[held]] == "panda_hand"
        first, end = table.body_first[held], table.body_first[held + 1]
        points = surface_points(part, np.random.default_rng(3)) @ pose[:3, :3].T + pose[:3, 3]
        gaps = np.linalg.norm(points[:, None] - table.sphere_center[None, first:end], axis=2) - \
            table.sphere_radius[None, first:end]
        assert (gaps.min(axis=1) <= 1e-9).all()
        paired = {links[a if b == held else b] for a, b in table.self_pairs if held in (a, b)}
        assert paired == set(links) - {"panda_hand", "panda_leftfinger", "panda_rightfinger", "panda_link6"}
        owners = obstacle_owners(checker)
        assert {owners[m] for m in np.flatnonzero(table.world_tested[held])} == {"thing"}
        checker.scene.attach_object("flat", "panda_hand", shapes=[Plane((0.0, 0.0, 1.0, 0.0))])
        assert "attached object has no spheres" in sphere_table(checker)
    finally:
        checker.disallow_collision("part", "panda_link6")
        checker.disallow_collision("part", "shelf")
        checker.scene.clear()
