"""Collision shapes and URDF collision geometry: dimensions checked, padding/scale as MoveIt, mesh URIs
resolved the ROS ways and example-robot-data's way, STL/OBJ/DAE read, bad input named."""
import math

import numpy as np
import pytest
from robots import example_robot_data_dir, example_robot_urdf

from kinematics_py import RobotModel
from kinematics_py.collision.geometry import (
    MAX_COORDINATE,
    MAX_SIZE,
    Box,
    Cone,
    Cylinder,
    GeometryError,
    Mesh,
    MeshLoadError,
    Plane,
    Sphere,
    convex_hull,
    load_mesh,
    local_bounds,
    resolve_uri,
    robot_collision_geometry,
    scaled_and_padded,
    solid_primitive,
)

PANDA_LINK0 = "package://example-robot-data/robots/panda_description/meshes/collision/link0.stl"
PANDA_LINK1_DAE = "package://example-robot-data/robots/panda_description/meshes/visual/link1.dae"
#: The Panda's collision links: link0..7, hand, and two fingers (4 boxes each in example-robot-data).
PANDA_COLLISION_LINKS = {f"panda_link{i}" for i in range(8)} | {"panda_hand", "panda_leftfinger",
                                                                 "panda_rightfinger"}
UR5_COLLISION_LINKS = {"base_link", "shoulder_link", "upper_arm_link", "forearm_link", "wrist_1_link", "wrist_2_link",
                       "wrist_3_link"}
TOLERANCE = 1e-12

TETRAHEDRON = Mesh([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]], [[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]])
SMALL_URDF = """<robot name="shapes">
  <link name="base">
    <collision><origin xyz="0 0 0.1" rpy="0 0 1.5707963267948966"/>
      <geometry><box size="0.2 0.4 0.1"/></geometry></collision>
    <collision><geometry><sphere radius="0.05"/></geometry></collision>
  </link>
  <link name="arm"><collision><geometry><cylinder radius="0.03" length="0.5"/></geometry></collision></link>
  <link name="tool"/>
  <joint name="j1" type="revolute"><parent link="base"/><child link="arm"/><axis xyz="0 0 1"/>
    <limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
  <joint name="j2" type="fixed"><parent link="arm"/><child link="tool"/></joint>
</robot>"""


# ================================================================================== shapes
@pytest.mark.parametrize("make, message", [
    (lambda: Box((1, 0, 1)), "box size must be finite and > 0"),
    (lambda: Box((1, 1)), "box size must be 3 lengths"),
    (lambda: Sphere(-1), "sphere radius must be finite and > 0"),
    (lambda: Cylinder(0.1, math.inf), "cylinder length"),
    (lambda: Cone("wide", 1), "cone radius must be a number"),
    (lambda: Plane((0, 0, 0, 1)), "non-zero normal"),
    (lambda: Mesh([[0, 0, 0], [1, 0, 0]], [[0, 1, 1]]), "at least 3 vertices"),
    (lambda: Mesh([[0, 0, 0], [1, 0, 0], [0, math.nan, 0]], [[0, 1, 2]]), "vertices must be finite"),
    (lambda: Mesh([[0, 0, 0], [1, 0, 0], [0, 1, 0]], np.zeros((0, 3))), "at least one triangle"),
])
def test_invalid_shapes_are_refused_with_the_reason(make, message):
    with pytest.raises(GeometryError, match=message):
        make()


def test_solid_primitive_layouts_follow_shape_msgs():
    assert solid_primitive(1, [1, 2, 3]) == Box((1.0, 2.0, 3.0))
    assert solid_primitive(2, [0.5]) == Sphere(0.5)
    assert solid_primitive(3, [2.0, 0.1]) == Cylinder(radius=0.1, length=2.0), "CYLINDER is (height, radius)"
    assert solid_primitive(4, [2.0, 0.1]) == Cone(radius=0.1, length=2.0)


def test_padding_and_scale_grow_primitives_as_moveit():
    assert scaled_and_padded(Box((1, 2, 3)), 2.0, 0.1) == Box((2.2, 4.2, 6.2))
    assert scaled_and_padded(Sphere(1.0), 0.5, 0.1) == Sphere(0.6)
    assert scaled_and_padded(Cylinder(1.0, 2.0), 1.0, 0.1) == Cylinder(1.1, 2.2)
    plane = Plane((0, 0, 1, 0))
    assert scaled_and_padded(plane, 3.0, 1.0) is plane


def test_mesh_padding_moves_every_vertex_away_from_the_centroid():
    padded = scaled_and_padded(TETRAHEDRON, 1.0, 0.1)
    centroid = TETRAHEDRON.vertices.mean(axis=0)
    before = np.linalg.norm(TETRAHEDRON.vertices - centroid, axis=1)
    after = np.linalg.norm(padded.vertices - centroid, axis=1)
    assert np.allclose(after - before, 0.1, atol=TOLERANCE)
    doubled = scaled_and_padded(TETRAHEDRON, 2.0, 0.0)
    assert np.allclose(doubled.vertices - centroid, 2 * (TETRAHEDRON.vertices - centroid), atol=TOLERANCE)


def test_local_bounds_and_convex_hull():
    center, half = local_bounds(Cylinder(0.2, 1.0))
    assert np.allclose(center, 0) and np.allclose(half, (0.2, 0.2, 0.5))
    assert local_bounds(Plane((0, 0, 1, 0))) is None
    cube = np.array([[x, y, z] for x in (0, 1) for y in (0, 1) for z in (0, 1)], dtype=float)
    hull = convex_hull(Mesh(np.vstack([cube, [[0.5, 0.5, 0.5]]]), [[0, 1, 2]]))
    assert len(hull.vertices) == 8, "the interior point is not on the hull"
    with pytest.raises(GeometryError, match="no convex hull"):
        convex_hull(Mesh([[0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 0]], [[0, 1, 2]]))


# ================================================================================== URIs and files
def test_package_uri_resolves_in_example_robot_data_layout():
    path = resolve_uri(PANDA_LINK0)
    assert path.is_file() and path.name == "link0.stl"
    assert str(path).startswith(str(example_robot_data_dir().parent))


def test_package_uri_resolves_with_package_paths_ament_prefix_and_ros_package_path(tmp_path, monkeypatch):
    for root in ("explicit/my_robot", "ament/share/my_robot", "ros1/my_robot"):
        (tmp_path / root / "meshes").mkdir(parents=True)
        (tmp_path / root / "meshes" / "part.stl").write_text(root)
    monkeypatch.setenv("AMENT_PREFIX_PATH", str(tmp_path / "ament"))
    monkeypatch.setenv("ROS_PACKAGE_PATH", str(tmp_path / "ros1"))
    uri = "package://my_robot/meshes/part.stl"
    explicit = resolve_uri(uri, package_paths={"my_robot": tmp_path / "explicit/my_robot"})
    assert explicit.read_text() == "explicit/my_robot"
    assert resolve_uri(uri).read_text() == "ament/share/my_robot"
    monkeypatch.setenv("AMENT_PREFIX_PATH", "")
    assert resolve_uri(uri).read_text() == "ros1/my_robot"


def test_file_uris_and_relative_paths(tmp_path):
    (tmp_path / "part.stl").write_text("x")
    assert resolve_uri(f"file://{tmp_path}/part.stl") == tmp_path / "part.stl"
    assert resolve_uri("part.stl", base_dir=tmp_path) == tmp_path / "part.stl"


@pytest.mark.parametrize("uri, message", [
    ("package://no_such_package/meshes/x.stl",
     "cannot read mesh 'package://no_such_package/meshes/x.stl': not a readable mesh file .*; looked in package "
     "'no_such_package' at"),
    ("package://example-robot-data/robots/missing.stl",
     "cannot read mesh 'package://example-robot-data/robots/missing.stl': .*looked in package 'example-robot-data'"),
    ("http://example.com/x.stl", "unsupported URI scheme 'http'"),
    ("file:///nonexistent/x.stl", "cannot read mesh 'file:///nonexistent/x.stl': not a readable mesh file"),
])
def test_unresolvable_uris_say_where_they_looked(uri, message):
    with pytest.raises(MeshLoadError, match=message):
        resolve_uri(uri)


def test_stl_obj_and_dae_meshes_load(tmp_path):
    stl = load_mesh(PANDA_LINK0)
    assert len(stl.triangles) > 50 and np.all(np.ptp(stl.vertices, axis=0) > 0.05)
    obj = tmp_path / "tetra.obj"
    obj.write_text("v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\nf 1 3 2\nf 1 2 4\nf 1 4 3\nf 2 3 4\n")
    loaded = load_mesh(obj, scale=(2, 2, 2))
    assert sorted(map(tuple, loaded.vertices)) == sorted(map(tuple, 2 * TETRAHEDRON.vertices))
    dae = load_mesh(PANDA_LINK1_DAE)
    assert len(dae.triangles) > 1000
    link1 = load_mesh("package://example-robot-data/robots/panda_description/meshes/collision/link1.stl")
    assert np.allclose(dae.vertices.min(axis=0), link1.vertices.min(axis=0), atol=0.01), "visual ~ collision"


def test_unreadable_mesh_files_are_refused(tmp_path):
    garbage = tmp_path / "broken.stl"
    garbage.write_bytes(b"\x00\x01 not a mesh")
    with pytest.raises(MeshLoadError, match=f"cannot read mesh '{garbage}': not a readable mesh file"):
        load_mesh(garbage)
    with pytest.raises(MeshLoadError, match="scale must be 3 finite non-zero numbers"):
        load_mesh(PANDA_LINK0, scale=(1, 0, 1))


# ================================================================================== URDF
def test_primitives_and_origins_from_a_urdf():
    geometry = robot_collision_geometry(SMALL_URDF)
    assert set(geometry) == {"base", "arm"}, "links without <collision> have no entry"
    box, sphere = geometry["base"]
    assert box.shape == Box((0.2, 0.4, 0.1)) and sphere.shape == Sphere(0.05)
    assert np.allclose(box.T_frame_shape[:3, 3], (0, 0, 0.1))
    assert np.allclose(box.T_frame_shape[:3, 0], (0, 1, 0), atol=1e-12), "rpy yaw pi/2 turns x onto y"
    assert geometry["arm"][0].shape == Cylinder(0.03, 0.5)


def test_real_robots_collision_meshes_from_example_robot_data():
    panda = robot_collision_geometry(example_robot_urdf("panda").read_text())
    assert set(panda) == PANDA_COLLISION_LINKS
    assert all(isinstance(p.shape, Mesh) for link in PANDA_COLLISION_LINKS - {"panda_leftfinger", "panda_rightfinger"}
               for p in panda[link])
    assert [type(p.shape) for p in panda["panda_leftfinger"]] == [Box] * 4
    ur5 = robot_collision_geometry(example_robot_urdf("ur5").read_text())
    assert set(ur5) >= UR5_COLLISION_LINKS


@pytest.mark.parametrize("collision, message", [
    ('<geometry><capsule radius="1" length="2"/></geometry>', "link 'base': unsupported collision shape <capsule>"),
    ('<geometry><box size="1 1"/></geometry>', "link 'base': box size must be 3 finite number"),
    ('<geometry><sphere radius="0"/></geometry>', "link 'base': sphere radius must be finite and > 0"),
    ('<geometry/>', "link 'base': a <collision> needs exactly one shape"),
    ('<geometry><mesh filename="package://nowhere/x.stl"/></geometry>', "link 'base': cannot read mesh"),
    ('<origin xyz="0 0"/><geometry><sphere radius="1"/></geometry>', "link 'base': <collision><origin>"),
])
def test_bad_collision_elements_name_the_link(collision, message):
    urdf = f'<robot name="r"><link name="base"><collision>{collision}</collision></link></robot>'
    with pytest.raises(GeometryError, match=message):
        robot_collision_geometry(urdf)


def test_model_from_urdf_keeps_the_text_the_geometry_is_read_from():
    model = RobotModel.from_urdf_string(SMALL_URDF)
    assert robot_collision_geometry(model.urdf_xml).keys() == {"base", "arm"}


def test_sizes_and_coordinates_are_bounded_by_the_documented_constants():
    assert (MAX_SIZE, MAX_COORDINATE) == (1e4, 1e4)
    assert Box((MAX_SIZE, 1.0, 1.0)).size[0] == MAX_SIZE and Sphere(MAX_SIZE).radius == MAX_SIZE
    for build, what in [(lambda: Box((1.0, 1e300, 1.0)), "box size"), (lambda: Sphere(2e4), "sphere radius"),
                        (lambda: Cylinder(0.1, 1e308), "cylinder length"), (lambda: Cone(1e5, 0.1), "cone radius")]:
        with pytest.raises(GeometryError, match=f"{what} must be at most MAX_SIZE = 10000 m"):
            build()
    Mesh([[0, 0, 0], [MAX_COORDINATE, 0, 0], [0, -MAX_COORDINATE, 0]], [[0, 1, 2]])
    with pytest.raises(GeometryError, match="vertices must lie within .* magnitude 10001"):
        Mesh([[0, 0, 0], [1.0001e4, 0, 0], [0, 1, 0]], [[0, 1, 2]])
    assert Plane((1e200, 0.0, 0.0, 1e200)).coefficients == (1.0, 0.0, 0.0, 1.0), "normalised without overflow"
    with pytest.raises(GeometryError, match="plane offset"):
        Plane((0.0, 1.0, 0.0, 2e4))
