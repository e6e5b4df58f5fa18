"""The compiled narrow phase (``convex_kernels``): every pair of convex kinds it tests, and each kind against an
octree's voxels and a mesh's triangles, answers as coal does; pairs a known distance apart are decided on the right
side of any margin near it (or left to the backend, never decided wrongly); and a checker's answers on real robots
are those of coal alone, grown shapes included, among primitives, in an octomap and among meshes."""
from __future__ import annotations

import itertools

import coal
import numpy as np
import pytest
import trimesh
from meshes import boxes_cloud, boxes_mesh
from robots import bundled_robot, example_robot_urdf, ur5_collision_srdf
from scipy.spatial import ConvexHull
from scipy.spatial.transform import Rotation

from kinematics_py import RobotModel, SemanticModel
from kinematics_py.collision import convex_kernels
from kinematics_py.collision import tables as tables_module
from kinematics_py.collision.backend import CoalBackend
from kinematics_py.collision.checker import CollisionChecker, _pair_collides, offsets_exact
from kinematics_py.collision.convex_kernels import APART, TOUCHING, UNDECIDED, candidate_verdicts
from kinematics_py.collision.geometry import Box, Cylinder, Mesh, Sphere
from kinematics_py.collision.octree import Octree
from kinematics_py.collision.tables import _convex_row, convex_table, hull_neighbours
from kinematics_py.geometry.transforms import make_transform

KINDS = ("sphere", "box", "cylinder", "cone", "hull")
#: Random poses of each ordered pair of kinds.
POSES_PER_PAIR = 150
#: Relative distances from touching of the margins tried on pairs a known distance apart.
NEAR_MARGINS = (1e-7, 1e-5, 1e-3, 1e-1)
#: Random states of each robot in its scene.
ROBOT_STATES = 300


def _shape(kind: str, rng: np.random.Generator):
    """(coal geometry, convex row (``tables._convex_row``)) of a random shape of ``kind``."""
    if kind == "sphere":
        radius = rng.uniform(0.01, 0.1)
        return coal.Sphere(radius), (convex_kernels.POINT, (0.0, 0.0, 0.0), radius, None, None, None)
    if kind == "box":
        size = rng.uniform(0.01, 0.3, 3)
        return coal.Box(*size), (convex_kernels.BOX, tuple(size / 2), 0.0, None, None, None)
    if kind in ("cylinder", "cone"):
        radius, length = rng.uniform(0.01, 0.1), rng.uniform(0.01, 0.4)
        kernel_kind = convex_kernels.CYLINDER if kind == "cylinder" else convex_kernels.CONE
        geometry = coal.Cylinder(radius, length) if kind == "cylinder" else coal.Cone(radius, length)
        return geometry, (kernel_kind, (radius, length / 2, 0.0), 0.0, None, None, None)
    points = rng.normal(size=(int(rng.choice([8, 30, 300, 3000])), 3)) * rng.uniform(0.02, 0.15, 3)
    hull = ConvexHull(points)
    kept = np.unique(hull.simplices)
    vertices, triangles = points[kept], np.searchsorted(kept, hull.simplices)
    coal_points, coal_triangles = coal.StdVec_Vec3s(), coal.StdVec_Triangle()
    coal_points.extend(list(vertices))
    coal_triangles.extend([coal.Triangle(int(a), int(b), int(c)) for a, b, c in triangles])
    return coal.Convex(coal_points, coal_triangles), (convex_kernels.VERTICES, (0.0, 0.0, 0.0), 0.0, vertices,
                                                      hull_neighbours(len(vertices), triangles), None)


def _table(rows, offsets) -> tuple:
    """``ConvexTable`` (as a tuple) of convex rows, each grown by its offset."""
    return tuple(convex_table([(kind, size, margin + offset, *hull) for (kind, size, margin, *hull), offset
                               in zip(rows, offsets)]))


def _verdicts(table: tuple, poses: np.ndarray) -> np.ndarray:
    """The kernel's verdict on shapes 0 and 1 of ``table``, 1 posed by each of ``poses`` (N, 4, 4) in 0's frame."""
    verdicts = np.empty((len(poses), 1), dtype=np.int8)
    candidate_verdicts(np.ascontiguousarray(poses[:, None, :3, :]), np.ones((len(poses), 1), dtype=bool),
                       np.array([[0, 1]], dtype=np.int64), table, False, verdicts)
    return verdicts[:, 0]


def _verdicts_either_way(rows, offsets, poses: np.ndarray) -> np.ndarray:
    """The kernel's verdicts on shapes 0 and 1 of ``rows`` grown by ``offsets``, 1 posed by each of ``poses``; checked
    to be the same, where both are decided, with the shapes the other way round (0 posed in 1's frame)."""
    verdicts = _verdicts(_table(rows, offsets), poses)
    swapped = _verdicts(_table(rows[::-1], offsets[::-1]), np.linalg.inv(poses))
    both = (verdicts != UNDECIDED) & (swapped != UNDECIDED)
    assert np.array_equal(verdicts[both], swapped[both])
    return verdicts


def _random_poses(rng: np.random.Generator, count: int, spread: float) -> np.ndarray:
    poses = np.tile(np.eye(4), (count, 1, 1))
    poses[:, :3, :3] = Rotation.random(count, random_state=int(rng.integers(1 << 31))).as_matrix()
    poses[:, :3, 3] = rng.normal(size=(count, 3)) * spread
    return poses


@pytest.mark.parametrize("kind_a, kind_b", list(itertools.product(KINDS, repeat=2)))
def test_each_pair_of_kinds_is_decided_as_coal_decides_it(kind_a, kind_b):
    rng = np.random.default_rng(len(KINDS) * KINDS.index(kind_a) + KINDS.index(kind_b))
    request, agreed, undecided = coal.CollisionRequest(), 0, 0
    for grown in (False, True):
        (geometry_a, row_a), (geometry_b, row_b) = _shape(kind_a, rng), _shape(kind_b, rng)
        offsets = rng.uniform(0.001, 0.02, 2) if grown else np.zeros(2)
        if grown:  # the backend's exact growth, as ``CollisionChecker.set_offset`` asks for
            geometry_a, geometry_b = geometry_a.clone(), geometry_b.clone()
            geometry_a.setSweptSphereRadius(float(offsets[0]))
            geometry_b.setSweptSphereRadius(float(offsets[1]))
        poses = _random_poses(rng, POSES_PER_PAIR, rng.uniform(0.05, 0.25))
        verdicts = _verdicts(_table([row_a, row_b], offsets), poses)
        for T, verdict in zip(poses, verdicts):
            if verdict == UNDECIDED:
                undecided += 1
                continue
            hit = coal.collide(geometry_a, coal.Transform3s(), geometry_b, coal.Transform3s(T[:3, :3], T[:3, 3]),
                               request, coal.CollisionResult()) > 0
            assert (verdict == TOUCHING) == hit, (kind_a, kind_b, grown, T)
            agreed += 1
    assert undecided <= 0.01 * 2 * POSES_PER_PAIR  # nearly all decided here, none wrongly


def _random_obstacle(obstacle: str, rng: np.random.Generator):
    """(shape, coal geometry) of a random octree or mesh within about 0.3 m of the origin. The octree: voxels of 2-4
    cm of a noisy cloud of a slab's and a post's surfaces and of scattered points (boxes of many sizes, ragged edges,
    lone voxels). The mesh: a noisy icosphere, a slab's surfaces and scattered triangles."""
    if obstacle == "octree":
        cloud = boxes_cloud([((0.0, 0.0, -0.05), (0.3, 0.25, 0.04)), ((0.08, -0.05, 0.05), (0.06, 0.06, 0.2))], 4000,
                            int(rng.integers(1 << 31)))
        octree = Octree.from_points(np.vstack([cloud, rng.uniform(-0.2, 0.2, (40, 3))]), float(rng.uniform(0.02, 0.04)))
        return octree, coal.makeOctree(octree.centers, octree.resolution)
    ball = trimesh.creation.icosphere(subdivisions=2, radius=0.1)
    slab = boxes_mesh([((0.0, 0.0, -0.12), (0.3, 0.25, 0.02))])
    scattered = rng.uniform(-0.25, 0.25, (20, 3, 3))
    vertices = np.vstack([np.asarray(ball.vertices) + rng.normal(0.0, 0.005, (len(ball.vertices), 3)), slab.vertices,
                          scattered.reshape(-1, 3)])
    offsets = np.cumsum([0, len(ball.vertices), len(slab.vertices)])
    triangles = np.vstack([np.asarray(ball.faces), slab.triangles + offsets[1],
                           offsets[2] + np.arange(60).reshape(20, 3)])
    mesh = Mesh(vertices, triangles)
    return mesh, CoalBackend().geometry(mesh, False)


@pytest.mark.parametrize("obstacle", ["octree", "mesh"])
@pytest.mark.parametrize("kind", KINDS)
def test_each_kind_against_an_octree_or_a_mesh_is_decided_as_coal_decides_it(kind, obstacle):
    """A shape of each convex kind against an octree's voxels or a mesh's triangles (``TREE``: its leaves under a
    tree of bounds) answers as coal's octree or mesh does, and nearly always without coal; grown by an offset, it
    touches where coal's distance is within the offset (which coal's own test of a grown shape against an octree or
    a mesh ignores); the same with the tree as the pair's first shape."""
    rng = np.random.default_rng(100 + KINDS.index(kind))
    request, hits, undecided, count = coal.CollisionRequest(), 0, 0, 0
    for grown in (False, False, True):
        shape, obstacle_geometry = _random_obstacle(obstacle, rng)
        geometry, row = _shape(kind, rng)
        poses = _random_poses(rng, POSES_PER_PAIR, 0.2)
        tree_row = _convex_row(shape, False)
        offset = rng.uniform(0.001, 0.02) if grown else 0.0  # (an exact growth of the shape: its margin)
        for T, verdict in zip(poses, _verdicts_either_way([row, tree_row], (offset, 0.0), poses)):
            count += 1
            if verdict == UNDECIDED:
                undecided += 1
                continue
            pose = coal.Transform3s(T[:3, :3], T[:3, 3])
            if grown:  # touching: within the offset of the obstacle (coal's distance, to its precision)
                distance = coal.distance(geometry, coal.Transform3s(), obstacle_geometry, pose, coal.DistanceRequest(),
                                         coal.DistanceResult())
                if abs(distance - offset) < 1e-6:
                    continue
                hit = distance <= offset
            else:
                hit = coal.collide(geometry, coal.Transform3s(), obstacle_geometry, pose, request,
                                   coal.CollisionResult()) > 0
            assert (verdict == TOUCHING) == hit, (kind, obstacle, grown, T)
            hits += hit
    assert 0.1 * count < hits < 0.9 * count  # both answers are asked about
    assert undecided <= 0.01 * count


@pytest.mark.parametrize("obstacle", ["octree", "mesh"])
def test_a_mesh_against_an_octree_or_a_mesh_is_decided_as_coal_decides_it(obstacle):
    """Two trees (a mesh's triangles against an octree's voxels or another mesh's triangles: ``trees_verdict``)
    answer as coal's BVH against its octree or BVH does, in either order, nearly always without coal."""
    rng = np.random.default_rng(7 if obstacle == "octree" else 8)
    request, hits, undecided, count = coal.CollisionRequest(), 0, 0, 0
    for _ in range(3):
        mesh, mesh_geometry = _random_obstacle("mesh", rng)
        shape, obstacle_geometry = _random_obstacle(obstacle, rng)
        poses = _random_poses(rng, POSES_PER_PAIR, 0.3)
        rows = [_convex_row(mesh, False), _convex_row(shape, False)]
        for T, verdict in zip(poses, _verdicts_either_way(rows, (0.0, 0.0), poses)):
            count += 1
            if verdict == UNDECIDED:
                undecided += 1
                continue
            hit = coal.collide(mesh_geometry, coal.Transform3s(), obstacle_geometry,
                               coal.Transform3s(T[:3, :3], T[:3, 3]), request, coal.CollisionResult()) > 0
            assert (verdict == TOUCHING) == hit, (obstacle, T)
            hits += hit
    assert 0.1 * count < hits < 0.9 * count  # both answers are asked about
    assert undecided <= 0.01 * count


def test_a_degenerate_triangle_is_touched_where_a_sphere_reaches_its_segment():
    """A triangle with two equal corners is the segment between its corners: a sphere touches it when its centre is
    within its radius of that segment (coal's triangle BVH answers "colliding" for spheres 0.1-0.3 m from such a
    triangle, so this is checked against the distance)."""
    rng = np.random.default_rng(21)
    start, end = np.array([0.2, 0.2, 0.2]), np.array([0.25, 0.2, 0.2])
    row = _convex_row(Mesh(np.array([start, start, end]), np.array([[0, 1, 2]])), False)
    radius = 0.04
    poses = _random_poses(rng, 2000, 0.04)
    poses[:, :3, 3] -= poses[:, :3, :3] @ ((start + end) / 2)  # (the segment's middle within about 0.04 m)
    centres = np.einsum("nji,nj->ni", poses[:, :3, :3], -poses[:, :3, 3])  # (in the segment's frame)
    along = np.clip((centres - start) @ (end - start) / np.sum((end - start) ** 2), 0.0, 1.0)
    distance = np.linalg.norm(centres - (start + along[:, None] * (end - start)), axis=1)
    verdicts = _verdicts(_table([(convex_kernels.POINT, (0.0, 0.0, 0.0), radius, None, None, None), row], (0.0, 0.0)),
                         poses)
    decided = (verdicts != UNDECIDED) & (np.abs(distance - radius) > 1e-9)
    assert np.array_equal(verdicts[decided] == TOUCHING, distance[decided] <= radius)
    assert 0.1 * len(poses) < (distance <= radius).sum() < 0.9 * len(poses) and decided.mean() > 0.99


def _hull_support(vertices: np.ndarray, direction: np.ndarray) -> np.ndarray:
    return vertices[np.argmax(vertices @ direction)]


def test_shapes_a_known_distance_apart_are_never_decided_on_the_wrong_side_of_a_margin_near_it():
    """Hulls (and boxes, as their 8 corners) placed so that the point of b farthest along -n is d along n from the
    point of a farthest along n: their distance is exactly d. Margins just below d are apart, just above touching,
    down to a relative 1e-7; what the bounds cannot tell within ``DECIDED_BY`` is left to the backend."""
    rng = np.random.default_rng(3)
    decided = {margin: 0 for margin in NEAR_MARGINS}
    for trial in range(200):
        rows, corners = [], []
        for _ in range(2):
            if rng.random() < 0.3:
                half = rng.uniform(0.01, 0.15, 3)
                rows.append((convex_kernels.BOX, tuple(half), 0.0, None, None, None))
                corners.append(np.array(list(itertools.product(*[(-h, h) for h in half]))))
            else:
                _, row = _shape("hull", rng)
                rows.append(row)
                corners.append(row[3])
        R = Rotation.random(random_state=trial).as_matrix()
        n = rng.normal(size=3)
        n /= np.linalg.norm(n)
        distance = rng.uniform(0.001, 0.2)
        T = np.eye(4)
        T[:3, :3] = R
        T[:3, 3] = _hull_support(corners[0], n) + distance * n - R @ _hull_support(corners[1], -R.T @ n)
        for relative in NEAR_MARGINS:
            for side in (-1, 1):
                margin = distance * (1 + side * relative)
                share = rng.uniform(0.0, 1.0)
                verdict = _verdicts(_table(rows, (share * margin, (1 - share) * margin)), T[None])[0]
                if verdict != UNDECIDED:
                    assert verdict == (TOUCHING if side > 0 else APART), (trial, relative, side)
                    decided[relative] += 1
    assert all(count >= 0.95 * 400 for relative, count in decided.items() if relative >= 1e-5), decided


def _coal_alone(checker: CollisionChecker, states: np.ndarray) -> np.ndarray:
    """Which full states collide, every candidate pair asked of the backend (the checker's answer before the
    compiled narrow phase)."""
    tables = checker._current_tables()
    transforms, candidates, _ = checker._place(tables, states, tables.masks[(True, True)], False)
    colliding = np.zeros(len(states), dtype=bool)
    for k, p in np.argwhere(candidates):
        colliding[k] |= checker.backend.collide(*tables.pair_geometries[p], transforms[k, p])
    return colliding


def _robot_in_a_scene(robot: str, obstacles: str = "primitives") -> CollisionChecker:
    if robot == "panda":  # the bundled URDF's primitives and its SRDF
        model = RobotModel.from_urdf_file(str(bundled_robot("panda.urdf")))
        semantic = SemanticModel.from_srdf_string(bundled_robot("panda.urdf").with_suffix(".srdf").read_text(), model)
        checker = CollisionChecker(model, semantic)
    else:  # example-robot-data's meshes, checked as their hulls (the UR5's of 72-220 vertices, the Kinova's 277-1498)
        path = example_robot_urdf(robot)
        model = RobotModel.from_urdf_file(str(path))
        semantic = SemanticModel.from_srdf_string(ur5_collision_srdf(), model) if robot == "ur5" else None
        checker = CollisionChecker(model, semantic, base_dir=path.parent)
    turned = make_transform(Rotation.from_euler("z", 0.1).as_matrix(), (0.02, 0.0, 0.0))
    if obstacles == "octomap":  # a sensor's octomap of the same: 2 cm voxels of a noisy cloud of their boxes' surfaces
        cloud = boxes_cloud([((0.65, 0.0, 0.15), (0.6, 1.2, 0.04)), ((0.3, 0.3, 0.5), (0.24, 0.24, 0.24)),
                             ((-0.3, 0.2, 0.5), (0.1, 0.1, 1.0))], 40_000, 5)
        checker.scene.add_point_cloud("cloud", cloud, 0.02, pose=turned)
        return checker
    if obstacles == "meshes":  # the same as meshes, the ball and the post of 1280 and 64 triangles
        ball = trimesh.creation.icosphere(subdivisions=3, radius=0.12)
        post = trimesh.creation.cylinder(radius=0.05, height=1.0, sections=32)
        checker.scene.add_object("table", [boxes_mesh([((0.65, 0.0, 0.15), (0.6, 1.2, 0.04))])], pose=turned)
        checker.scene.add_object("ball", [Mesh(np.asarray(ball.vertices), np.asarray(ball.faces))],
                                 pose=make_transform(None, (0.3, 0.3, 0.5)))
        checker.scene.add_object("post", [Mesh(np.asarray(post.vertices), np.asarray(post.faces))],
                                 pose=make_transform(None, (-0.3, 0.2, 0.5)))
        checker.scene.add_object("shelf", [Box((1.2, 1.2, 0.1))], pose=make_transform(None, (0.3, 0.0, 0.75)))
        held = trimesh.creation.icosphere(subdivisions=1, radius=0.06)  # a part in the hand, against the others
        checker.scene.attach_object("part", model.link_names[-1], shapes=[
            Mesh(np.asarray(held.vertices) * (1.0, 1.0, 2.0), np.asarray(held.faces))],
            pose=make_transform(None, (0.0, 0.0, 0.15)))
        return checker
    checker.scene.add_object("table", [Box((0.6, 1.2, 0.04))], pose=make_transform(None, (0.65, 0.0, 0.15)))
    checker.scene.add_object("ball", [Sphere(0.12)], pose=make_transform(None, (0.3, 0.3, 0.5)))
    checker.scene.add_object("post", [Cylinder(0.05, 1.0)], pose=make_transform(None, (-0.3, 0.2, 0.5)))
    return checker


@pytest.mark.parametrize("robot", ["panda", "ur5", "kinova"])
def test_a_checker_answers_as_coal_alone_on_a_real_robot_grown_or_not(robot):
    checker = _robot_in_a_scene(robot)
    model = checker.model
    rng = np.random.default_rng(11)
    lower = np.array([max(model.joints[j].lower, -np.pi) if j in model.joints else 0.0 for j in model.variable_names])
    upper = np.array([min(model.joints[j].upper, np.pi) if j in model.joints else 0.0 for j in model.variable_names])
    states = rng.uniform(lower, upper, (ROBOT_STATES, len(lower)))
    links = list(checker.link_geometry)
    for grown in (False, True):
        if grown:  # the exact proofs' checks: every link grown by an exact offset
            checker.set_offset(0.003, links)
        expected = _coal_alone(checker, states)
        assert 0.1 * ROBOT_STATES < expected.sum() < 0.9 * ROBOT_STATES  # both answers are asked about
        assert np.array_equal(checker.check_batch(states), expected)
        assert [checker.is_colliding(q) for q in states[:60]] == list(expected[:60])
        assert [checker.check(q).in_collision for q in states[:60]] == list(expected[:60])


def test_a_hull_s_neighbours_are_the_vertices_its_triangles_join_it_to_each_once_in_order():
    points = np.random.default_rng(5).normal(size=(200, 3))
    hull = ConvexHull(points)
    kept = np.unique(hull.simplices)
    triangles = np.searchsorted(kept, hull.simplices)
    neighbour_first, neighbours = hull_neighbours(len(kept), triangles)
    joined = {i: set() for i in range(len(kept))}
    for a, b, c in triangles:
        for u, v in ((a, b), (b, c), (c, a)):
            joined[u].add(int(v))
            joined[v].add(int(u))
    assert len(neighbour_first) == len(kept) + 1 and neighbour_first[-1] == len(neighbours)
    for i in range(len(kept)):
        assert neighbours[neighbour_first[i]:neighbour_first[i + 1]].tolist() == sorted(joined[i]), i


def test_tables_of_the_same_hulls_share_their_joined_vertices_and_others_do_not():
    """A checker's grown copies (the same hulls, other margins) join the hulls' vertices once; tables of other
    hulls, or of the same hulls in another order, get their own."""
    rng = np.random.default_rng(7)
    a, b = (_shape("hull", rng)[1] for _ in range(2))
    grown = [(kind, size, margin + 0.01, *hull) for kind, size, margin, *hull in (a, b)]
    first, again, swapped = convex_table([a, b]), convex_table(grown), convex_table([b, a])
    assert again.vertices is first.vertices and again.neighbours is first.neighbours
    np.testing.assert_allclose(again.margin, first.margin + 0.01)
    assert swapped.vertices is not first.vertices
    np.testing.assert_array_equal(swapped.vertices, np.concatenate([b[3], a[3]]))
    np.testing.assert_array_equal(swapped.neighbours[:len(b[4][1])], b[4][1])


@pytest.mark.parametrize("obstacles", ["octomap", "meshes"])
@pytest.mark.parametrize("robot", ["panda", "ur5", "kinova"])
def test_a_checker_answers_as_coal_alone_in_an_octomap_and_among_meshes(robot, obstacles):
    """A noisy octomap of a table, a ball and a post, rotated, or the same as meshes with a mesh in the hand: the
    checker (the octree's boxes and the meshes' triangles tested by the compiled narrow phase) answers as coal's
    octree and meshes do on every state."""
    checker = _robot_in_a_scene(robot, obstacles)
    model = checker.model
    lower = np.array([max(model.joints[j].lower, -np.pi) if j in model.joints else 0.0 for j in model.variable_names])
    upper = np.array([min(model.joints[j].upper, np.pi) if j in model.joints else 0.0 for j in model.variable_names])
    states = np.random.default_rng(12).uniform(lower, upper, (ROBOT_STATES, len(lower)))
    expected = _coal_alone(checker, states)
    assert 0.1 * ROBOT_STATES < expected.sum() < 0.9 * ROBOT_STATES  # both answers are asked about
    assert np.array_equal(checker.check_batch(states), expected)
    assert [checker.check(q).in_collision for q in states[:60]] == list(expected[:60])
    tables = checker._current_tables()
    _, candidates, verdicts = checker._place(tables, states, tables.masks[(True, True)], False)
    trees = tables.convex.kind[tables.shapes.pairs] == convex_kernels.TREE
    tree_second, tree_first = trees[:, 1] & ~trees[:, 0], trees[:, 0] & ~trees[:, 1]  # (an attached mesh: first)
    for tree_pairs in (tree_second, tree_first, trees.all(axis=1)) if obstacles == "meshes" else (tree_second,):
        asked = candidates[:, tree_pairs]
        assert asked.sum() > ROBOT_STATES // 20  # asked about, and nearly all decided by the compiled narrow phase
        assert (verdicts[:, tree_pairs][asked] == UNDECIDED).sum() <= 0.01 * asked.sum()


def test_a_grown_body_s_undecided_pairs_with_meshes_and_octrees_count_as_colliding(monkeypatch):
    """The backend ignores an offset against a mesh or an octree, or of one (a held mesh grown: the kernels grow
    its triangles): a pair of a grown body and one of them that the kernels leave undecided counts as colliding,
    and only such pairs; offsets are exact with meshes and octrees the kernels test, not with a mesh too large for
    them."""
    checker = _robot_in_a_scene("panda", "meshes")
    checker.scene.add_point_cloud("cloud", np.random.default_rng(3).uniform(0.3, 0.5, (200, 3)), 0.02)
    grown_bodies = [*list(checker.link_geometry)[:4], *checker.scene.attached_objects]
    checker.set_offset(0.01, grown_bodies)
    tables = checker._current_tables()
    grown = np.isin(tables.shape_body, [tables.body_names.index(body) for body in grown_bodies])
    triangles_or_voxels = np.array([isinstance(geometry, (coal.BVHModelOBB, coal.OcTree))
                                    for geometry in tables.geometries])
    a, b = tables.shapes.pairs.T
    expected = (grown[a] | grown[b]) & (triangles_or_voxels[a] | triangles_or_voxels[b])
    assert (grown & triangles_or_voxels).any()  # (the held mesh)
    assert expected.any() and np.array_equal(tables.undecided_collides, expected)
    far = np.tile(np.eye(4)[:3], (1, len(a), 1, 1))
    far[0, :, :, 3] = 100.0  # (every pair 100 m apart: the backend says apart)
    undecided = np.full((1, len(a)), UNDECIDED, dtype=np.int8)
    assert [_pair_collides(checker.backend, tables, far, undecided, 0, p) for p in range(len(a))] == list(expected)
    assert offsets_exact(checker)
    monkeypatch.setattr(tables_module, "MAX_TREE_TRIANGLES", 100)
    assert not offsets_exact(checker)
