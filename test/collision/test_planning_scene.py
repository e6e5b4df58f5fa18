"""The planning scene applies CollisionObject / AttachedCollisionObject operations as MoveIt does, poses
objects in any known frame, and refuses malformed updates with a clear error, leaving itself unchanged."""
import math

import numpy as np
import pytest
from robots import bundled_robot

from kinematics_py import RobotModel
from kinematics_py.collision.geometry import Box, Cylinder, GeometryError, Mesh, Plane, Sphere, solid_primitive
from kinematics_py.collision.scene import (
    AttachedObjectUpdate,
    CollisionObjectUpdate,
    Operation,
    PlanningScene,
    SceneError,
)
from kinematics_py.geometry.transforms import make_transform, rotation_about_axis

#: Poses are composed from exact inputs: only rounding remains.
POSE_TOLERANCE = 1e-12
IDENTITY = ((0.0, 0.0, 0.0), (0.0, 0.0, 0.0, 1.0))
QUARTER_TURN_Z = (0.0, 0.0, math.sin(math.pi / 4), math.cos(math.pi / 4))


@pytest.fixture(scope="module")
def model():
    return RobotModel.from_urdf_file(bundled_robot("panda.urdf"))


@pytest.fixture
def scene(model):
    return PlanningScene(model)


def pose(x, y, z, quaternion=(0.0, 0.0, 0.0, 1.0)):
    return ((x, y, z), quaternion)


def snapshot(scene):
    """Everything an update may change."""
    world = {k: (o.T_parent_object.copy(), len(o.shapes), dict(o.subframes)) for k, o in scene.world_objects.items()}
    attached = {k: (a.link, a.object.T_parent_object.copy(), a.touch_links) for k, a in scene.attached_objects.items()}
    return scene.version, world, attached


def assert_same_snapshot(before, after):
    assert before[0] == after[0], "version changed"
    assert before[1].keys() == after[1].keys() and before[2].keys() == after[2].keys()
    for key, (T, count, subframes) in before[1].items():
        assert np.array_equal(T, after[1][key][0]) and count == after[1][key][1]
        assert subframes.keys() == after[1][key][2].keys()
    for key, (link, T, touch) in before[2].items():
        assert (link, touch) == (after[2][key][0], after[2][key][2]) and np.array_equal(T, after[2][key][1])


# ================================================================================== operations
def test_add_places_shapes_relative_to_the_object_pose(scene):
    scene.apply(CollisionObjectUpdate("table", pose=pose(1.0, 0.0, 0.5, QUARTER_TURN_Z),
                                      primitives=[Box((1.0, 2.0, 0.1))], primitive_poses=[pose(0.1, 0.0, 0.0)]))
    table = scene.world_objects["table"]
    assert np.allclose(table.T_parent_object[:3, 3], (1.0, 0.0, 0.5), atol=POSE_TOLERANCE)
    shape_in_plan = table.T_parent_object @ table.shapes[0].T_frame_shape
    assert np.allclose(shape_in_plan[:3, 3], (1.0, 0.1, 0.5), atol=POSE_TOLERANCE), "shape offset turns with the object"


def test_add_replaces_an_object_of_the_same_id(scene):
    scene.add_object("box", [Box((0.1, 0.1, 0.1)), Sphere(0.05)])
    scene.add_object("box", [Cylinder(0.02, 0.3)])
    assert [type(p.shape) for p in scene.world_objects["box"].shapes] == [Cylinder]


def test_append_adds_shapes_posed_relative_to_the_object_and_keeps_its_pose(scene):
    scene.add_object("shelf", [Box((0.4, 0.4, 0.02))], pose=pose(0.5, 0.0, 0.3))
    scene.append_to_object("shelf", [(Box((0.4, 0.4, 0.02)), pose(0.0, 0.0, 0.2))], pose=pose(0.5, 0.0, 0.3))
    shelf = scene.world_objects["shelf"]
    assert np.allclose(shelf.T_parent_object[:3, 3], (0.5, 0.0, 0.3))
    tops = [(shelf.T_parent_object @ p.T_frame_shape)[2, 3] for p in shelf.shapes]
    assert np.allclose(tops, [0.3, 0.5])
    scene.append_to_object("new", [Sphere(0.1)])
    assert "new" in scene.world_objects, "APPEND to an unknown id creates the object (MoveIt)"


def test_appends_may_not_take_an_object_over_the_triangle_cap(scene):
    triangle = Mesh([[0, 0, 0], [1, 0, 0], [0, 1, 0]], [[0, 1, 2]])
    scene.max_object_triangles = 2
    scene.add_object("scan", [triangle])
    scene.append_to_object("scan", [triangle])
    with pytest.raises(SceneError, match="APPEND would give it 3 mesh triangles, more than max_mesh_triangles = 2"):
        scene.append_to_object("scan", [triangle])
    assert len(scene.world_objects["scan"].shapes) == 2
    assert scene.copy().max_object_triangles == 2


def test_move_changes_only_the_pose(scene):
    scene.add_object("box", [(Box((0.1, 0.1, 0.1)), pose(0.0, 0.0, 0.05))], pose=pose(0.3, 0.0, 0.0))
    shapes_before = scene.world_objects["box"].shapes
    scene.move_object("box", pose(0.6, 0.2, 0.0))
    moved = scene.world_objects["box"]
    assert moved.shapes is shapes_before
    assert np.allclose(moved.T_parent_object[:3, 3], (0.6, 0.2, 0.0))


def test_remove_one_object_or_all_with_an_empty_id(scene):
    for name in ("a", "b", "c"):
        scene.add_object(name, [Sphere(0.1)])
    scene.remove_object("b")
    assert sorted(scene.world_objects) == ["a", "c"]
    scene.remove_object("")
    assert not scene.world_objects


def test_every_change_increments_the_version(scene):
    versions = [scene.version]
    scene.add_object("a", [Sphere(0.1)])
    versions.append(scene.version)
    scene.move_object("a", pose(1.0, 0.0, 0.0))
    versions.append(scene.version)
    scene.remove_object("a")
    versions.append(scene.version)
    assert versions == sorted(set(versions))


def test_meshes_planes_and_solid_primitive_codes(scene, tmp_path):
    tetrahedron = Mesh([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]], [[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]])
    stl = tmp_path / "tetra.stl"
    import trimesh
    trimesh.Trimesh(tetrahedron.vertices, tetrahedron.triangles).export(stl)
    scene.apply(CollisionObjectUpdate(
        "things", primitives=[solid_primitive(1, [0.1, 0.2, 0.3]), solid_primitive(3, [0.5, 0.05])],
        primitive_poses=[None, None], meshes=[tetrahedron, str(stl)], mesh_poses=[None, None],
        planes=[Plane((0, 0, 2, -1))], plane_poses=[None]))
    shapes = [p.shape for p in scene.world_objects["things"].shapes]
    assert shapes[0] == Box((0.1, 0.2, 0.3)) and shapes[1] == Cylinder(radius=0.05, length=0.5)
    assert sorted(map(tuple, shapes[3].vertices)) == sorted(map(tuple, tetrahedron.vertices)), "file loaded"
    assert shapes[4].coefficients == (0.0, 0.0, 1.0, -0.5), "plane normal normalised"


# ================================================================================== frames
def test_poses_in_a_robot_link_frame_follow_the_robot_state(scene, model):
    scene.set_robot_state({"panda_joint1": math.pi / 2})
    scene.add_object("cup", [Sphere(0.03)], pose=pose(0.1, 0.0, 0.0), frame_id="panda_link1")
    T_plan_link1 = model.link_poses({"panda_joint1": math.pi / 2})["panda_link1"]
    expected = T_plan_link1 @ make_transform(None, (0.1, 0.0, 0.0))
    assert np.allclose(scene.world_objects["cup"].T_parent_object, expected, atol=POSE_TOLERANCE)


def test_object_and_subframe_frames(scene):
    scene.add_object("tray", [Box((0.3, 0.3, 0.02))], pose=pose(0.5, 0.0, 0.2, QUARTER_TURN_Z),
                     subframes={"corner": pose(0.15, 0.15, 0.0)})
    scene.add_object("cup", [Sphere(0.03)], pose=pose(0.0, 0.0, 0.05), frame_id="tray/corner")
    corner = make_transform(rotation_about_axis(np.array([0.0, 0.0, 1.0]), math.pi / 2), (0.5, 0.0, 0.2)) @ \
        make_transform(None, (0.15, 0.15, 0.0))
    assert np.allclose(scene.frame_transform("tray/corner"), corner, atol=POSE_TOLERANCE)
    assert np.allclose(scene.world_objects["cup"].T_parent_object[:3, 3], corner[:3, 3] + (0, 0, 0.05))
    assert "tray/corner" in scene.known_frames()


# ================================================================================== attached objects
def test_attaching_a_world_object_keeps_it_where_it_is_and_it_then_moves_with_its_link(scene, model):
    scene.add_object("box", [Box((0.05, 0.05, 0.05))], pose=pose(0.4, 0.1, 0.3))
    scene.attach_object("box", "panda_hand", touch_links=["panda_leftfinger", "panda_rightfinger"])
    assert "box" not in scene.world_objects
    attached = scene.attached_objects["box"]
    assert attached.link == "panda_hand" and attached.touch_links == {"panda_leftfinger", "panda_rightfinger"}
    assert np.allclose(scene.frame_transform("box")[:3, 3], (0.4, 0.1, 0.3))
    state = {"panda_joint1": 0.5}
    scene.set_robot_state(state)
    T_plan_hand = model.link_poses(state)["panda_hand"]
    assert np.allclose(scene.frame_transform("box"), T_plan_hand @ attached.object.T_parent_object)


def test_attaching_new_geometry_poses_it_in_the_link_frame_and_replaces_a_world_object(scene, model):
    scene.add_object("tool", [Sphere(0.3)])
    scene.attach_object("tool", "panda_hand", shapes=[Cylinder(0.01, 0.2)], pose=pose(0.0, 0.0, 0.1))
    assert "tool" not in scene.world_objects
    T_plan_hand = model.link_poses()["panda_hand"]
    assert np.allclose(scene.frame_transform("tool"), T_plan_hand @ make_transform(None, (0.0, 0.0, 0.1)))


def test_detaching_returns_the_object_to_the_world_where_it_is(scene):
    scene.attach_object("tool", "panda_hand", shapes=[Sphere(0.02)], pose=pose(0.0, 0.0, 0.1))
    scene.set_robot_state({"panda_joint1": 1.0})
    held_at = scene.frame_transform("tool")
    scene.detach_object("tool")
    assert "tool" not in scene.attached_objects
    assert np.allclose(scene.world_objects["tool"].T_parent_object, held_at)
    scene.set_robot_state({"panda_joint1": 0.0})
    assert np.allclose(scene.frame_transform("tool"), held_at), "a detached object no longer follows the link"


def test_detach_all_objects_of_a_link(scene):
    scene.attach_object("a", "panda_hand", shapes=[Sphere(0.02)])
    scene.attach_object("b", "panda_hand", shapes=[Sphere(0.02)])
    scene.attach_object("c", "panda_link5", shapes=[Sphere(0.02)])
    scene.apply_attached(AttachedObjectUpdate("panda_hand", CollisionObjectUpdate("", Operation.REMOVE)))
    assert sorted(scene.attached_objects) == ["c"] and sorted(scene.world_objects) == ["a", "b"]


# ================================================================================== malformed updates
MALFORMED = [
    pytest.param(lambda s: s.apply(CollisionObjectUpdate("", primitives=[Sphere(0.1)], primitive_poses=[None])),
                 SceneError, "non-empty id", id="empty-id"),
    pytest.param(lambda s: s.apply(CollisionObjectUpdate("x", primitives=[Sphere(0.1)],
                                                         primitive_poses=[None, None])),
                 SceneError, "1 primitives but 2 primitive_poses", id="primitive-pose-count"),
    pytest.param(lambda s: s.apply(CollisionObjectUpdate("x", meshes=[], mesh_poses=[None])),
                 SceneError, "0 meshes but 1 mesh_poses", id="mesh-pose-count"),
    pytest.param(lambda s: s.apply(CollisionObjectUpdate("x", primitives=[Sphere(0.1)], primitive_poses=[None],
                                                         subframe_poses=[None])),
                 SceneError, "0 subframe_names but 1 subframe_poses", id="subframe-count"),
    pytest.param(lambda s: s.add_object("x", [Box((0.1, -0.2, 0.1))]), GeometryError, "box size must be finite and > 0",
                 id="negative-box"),
    pytest.param(lambda s: s.add_object("x", [solid_primitive(2, [])]), GeometryError, "SPHERE primitive needs 1",
                 id="missing-dimension"),
    pytest.param(lambda s: s.add_object("x", [Cylinder(math.nan, 0.2)]), GeometryError, "cylinder radius",
                 id="nan-radius"),
    pytest.param(lambda s: s.add_object("x", [solid_primitive(7, [1.0])]), GeometryError,
                 "unsupported SolidPrimitive type 7", id="unknown-primitive"),
    pytest.param(lambda s: s.add_object("x", []), SceneError, "needs at least one primitive", id="no-shapes"),
    pytest.param(lambda s: s.add_object("x", [Sphere(0.1)], pose=pose(0, 0, 0, (0, 0, 0, 0))), SceneError,
                 "quaternion .* is zero", id="zero-quaternion"),
    pytest.param(lambda s: s.add_object("x", [(Sphere(0.1), pose(math.inf, 0, 0))]), SceneError,
                 "primitive_poses\\[0\\].*finite", id="infinite-shape-pose"),
    pytest.param(lambda s: s.add_object("x", [Sphere(0.1)], frame_id="nowhere"), SceneError,
                 "unknown frame 'nowhere'", id="unknown-frame"),
    pytest.param(lambda s: s.add_object("x", [Sphere(0.1)], frame_id="table/missing"), SceneError,
                 "object 'table' has subframes \\['leg'\\]", id="unknown-subframe"),
    pytest.param(lambda s: s.add_object("x", [Box((0.1, 0.1, 0.1))], pose=pose(0, 0, 1e308)), SceneError,
                 "collision object 'x': pose: position must lie within \\+-MAX_COORDINATE = 10000 m; got a "
                 "coordinate of magnitude 1e\\+308", id="absurd-object-position"),
    pytest.param(lambda s: s.add_object("x", [(Sphere(0.1), pose(0, -2e4, 0))]), SceneError,
                 "primitive_poses\\[0\\]: position must lie within .* magnitude 20000", id="absurd-shape-position"),
    pytest.param(lambda s: s.add_object("x", [Sphere(0.1)], subframes={"tip": pose(1e300, 0, 0)}), SceneError,
                 "subframe 'tip': position must lie within .* 1e\\+300", id="absurd-subframe-position"),
    pytest.param(lambda s: s.move_object("table", pose(0, 0, 1e5)), SceneError, "pose: position must lie within",
                 id="absurd-move"),
    pytest.param(lambda s: s.attach_object("box", "panda_hand", shapes=[Sphere(0.1)], pose=pose(0, 0, -1e308)),
                 SceneError, "position must lie within .* 1e\\+308", id="absurd-attached-position"),
    pytest.param(lambda s: s.add_object("x", [Sphere(0.1)], pose=pose(9999.9, 0, 0), frame_id="table"), SceneError,
                 "'x': pose in the planning frame: position must lie within .* 10000.4", id="absurd-composed-position"),
    pytest.param(lambda s: s.add_object("x", [Box((1e300, 1.0, 1.0))]), GeometryError,
                 "box size must be at most MAX_SIZE = 10000 m; got 1e\\+300", id="absurd-box-size"),
    pytest.param(lambda s: s.add_object("x", [Mesh([[0, 0, 0], [1, 0, 0], [0, 0, 1e308]], [[0, 1, 2]])]),
                 GeometryError, "vertices must lie within .* 1e\\+308", id="absurd-mesh-vertex"),
    pytest.param(lambda s: s.add_object("x", [Plane((0, 0, 1, -1e308))]), GeometryError,
                 "plane offset .* must lie within", id="absurd-plane-offset"),
    pytest.param(lambda s: s.add_object("x", ["/nonexistent/mesh.stl"]), SceneError,
                 "cannot read mesh '/nonexistent/mesh.stl'", id="missing-mesh-file"),
    pytest.param(lambda s: s.add_object("x", [Mesh([[0, 0, 0], [1, 0, 0], [0, 1, 0]], [[0, 1, 5]])]), GeometryError,
                 "indices must be within \\[0, 2\\]", id="bad-mesh-index"),
    pytest.param(lambda s: s.move_object("ghost", pose(0, 0, 0)), SceneError,
                 "cannot move collision object 'ghost': it does not exist; world objects are \\['table'\\]",
                 id="move-unknown"),
    pytest.param(lambda s: s.remove_object("ghost"), SceneError, "cannot remove world object 'ghost'",
                 id="remove-unknown"),
    pytest.param(lambda s: s.apply(CollisionObjectUpdate("x", operation=9)), SceneError, "unknown operation 9",
                 id="unknown-operation"),
    pytest.param(lambda s: s.attach_object("box", "panda_link99", shapes=[Sphere(0.1)]), SceneError,
                 "unknown link 'panda_link99'; links are \\['panda_link0'", id="attach-unknown-link"),
    pytest.param(lambda s: s.attach_object("ghost", "panda_hand"), SceneError,
                 "no geometry given and no world object of that id", id="attach-nothing"),
    pytest.param(lambda s: s.detach_object("ghost"), SceneError, "cannot detach 'ghost': it is not attached",
                 id="detach-unknown"),
    pytest.param(lambda s: s.apply_attached(AttachedObjectUpdate("panda_hand", CollisionObjectUpdate(
        "box", Operation.MOVE, primitives=[Sphere(0.1)], primitive_poses=[None]))), SceneError,
                 "operation MOVE is not supported for attached objects", id="attached-move"),
]


@pytest.mark.parametrize("update, error, message", MALFORMED)
def test_malformed_update_names_the_problem_and_leaves_the_scene_unchanged(scene, update, error, message):
    scene.add_object("table", [Box((1.0, 1.0, 0.05))], pose=pose(0.5, 0.0, 0.0), subframes={"leg": pose(0.4, 0.4, 0)})
    scene.attach_object("held", "panda_hand", shapes=[Sphere(0.02)])
    before = snapshot(scene)
    with pytest.raises(error, match=message):
        update(scene)
    assert_same_snapshot(before, snapshot(scene))


def test_unreadable_mesh_file_is_refused_with_its_uri(scene, tmp_path):
    garbage = tmp_path / "broken.stl"
    garbage.write_text("this is not a mesh")
    before = snapshot(scene)
    with pytest.raises(SceneError, match=f"meshes\\[0\\]: cannot read mesh '{garbage}': not a readable mesh file"):
        scene.add_object("x", [str(garbage)])
    assert_same_snapshot(before, snapshot(scene))


def test_huge_quaternions_are_rotations_and_the_world_bounds_are_accepted(scene):
    scene.add_object("far", [(Box((1e4, 1e4, 1e-3)), pose(-1e4, 0.0, 0.0))],
                     pose=pose(0.0, 1e4, 0.0, (0, 0, 1e200, 1e200)),
                     subframes={"tip": pose(0.0, 0.0, 1e4, (1.7e308, 0.0, 0.0, 0.0))})
    far = scene.world_objects["far"]
    expected = make_transform(rotation_about_axis([0.0, 0.0, 1.0], math.pi / 2), (0.0, 1e4, 0.0))
    np.testing.assert_allclose(far.T_parent_object, expected, rtol=0, atol=1e-12)
    np.testing.assert_allclose(far.subframes["tip"][:3, :3], np.diag([1.0, -1.0, -1.0]), atol=1e-15)


def test_a_bad_shape_among_good_ones_adds_nothing(scene):
    before = snapshot(scene)
    with pytest.raises(SceneError, match="primitive_poses\\[1\\]: cannot read a pose"):
        scene.apply(CollisionObjectUpdate("x", primitives=[Sphere(0.1), Sphere(0.2)],
                                          primitive_poses=[None, "not a pose"]))
    with pytest.raises(SceneError, match="primitives\\[1\\] is a Plane"):
        scene.apply(CollisionObjectUpdate("x", primitives=[Sphere(0.1), Plane((0, 0, 1, 0))],
                                          primitive_poses=[None, None]))
    assert_same_snapshot(before, snapshot(scene))
