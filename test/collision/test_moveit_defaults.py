"""The planning scene accepts what MoveIt's planning scene (moveit_core planning_scene.cpp) accepts, with MoveIt's
defaults, one test per message MoveIt takes that way, and refuses what MoveIt refuses, saying why."""
# ruff: noqa: F811  (the fixtures of test_planning_scene, imported, are the tests' arguments)
import numpy as np
import pytest
from test_planning_scene import (  # the bundled Panda's empty scene
    IDENTITY,
    QUARTER_TURN_Z,
    model,  # noqa: F401 (fixture)
    pose,
    scene,  # noqa: F401 (fixture)
)

from kinematics_py.collision.geometry import Box, Sphere
from kinematics_py.collision.scene import AttachedObjectUpdate, CollisionObjectUpdate, Operation, SceneError
from kinematics_py.collision.scene_message import PlanningSceneMessage, apply_planning_scene


def shape_positions(scene, object_id):
    """Where each shape of a world object is, in the planning frame."""
    item = scene.world_objects[object_id]
    return [tuple(np.round((item.T_parent_object @ p.T_frame_shape)[:3, 3], 12)) for p in item.shapes]


# ================================================================================== CollisionObject
def test_a_shape_without_a_pose_is_at_the_object_pose(scene):
    """pymoveit2's add_collision_box: ``pose`` set, no primitive_poses (MoveIt: "Assuming identity")."""
    scene.apply(CollisionObjectUpdate("table", pose=pose(0.5, 0.0, 0.2), primitives=[Box((1.0, 1.0, 0.05))]))
    assert shape_positions(scene, "table") == [(0.5, 0.0, 0.2)]


def test_shapes_beyond_the_given_poses_are_at_the_object_pose(scene):
    scene.apply(CollisionObjectUpdate("pair", pose=pose(1.0, 0.0, 0.0), primitives=[Sphere(0.1), Sphere(0.1)],
                                      primitive_poses=[pose(0.0, 0.5, 0.0)]))
    assert shape_positions(scene, "pair") == [(1.0, 0.5, 0.0), (1.0, 0.0, 0.0)]


def test_more_shape_poses_than_shapes_are_refused(scene):
    """MoveIt: "More primitive shape poses than shapes in collision object message"."""
    with pytest.raises(SceneError, match="1 primitives but 2 primitive_poses; give at most one pose per shape"):
        scene.apply(CollisionObjectUpdate("x", primitives=[Sphere(0.1)], primitive_poses=[None, None]))
    assert not scene.world_objects


def test_one_shape_in_an_object_at_the_identity_lends_the_object_its_pose(scene):
    """MoveIt moves the only shape's pose to the object when the object's pose is the identity: the shape is
    where it was given, and subframes are posed relative to it."""
    scene.apply(CollisionObjectUpdate("box", pose=IDENTITY, primitives=[Box((0.1, 0.1, 0.1))],
                                      primitive_poses=[pose(0.4, 0.0, 0.3, QUARTER_TURN_Z)],
                                      subframe_names=["tip"], subframe_poses=[pose(0.1, 0.0, 0.0)]))
    box = scene.world_objects["box"]
    assert np.allclose(box.T_parent_object[:3, 3], (0.4, 0.0, 0.3))
    assert np.allclose(box.shapes[0].T_frame_shape, np.eye(4))
    assert np.allclose(scene.frame_transform("box/tip")[:3, 3], (0.4, 0.1, 0.3)), "the subframe turns with the box"


def test_subframe_names_without_poses_are_ignored_and_poses_without_names_refused(scene):
    scene.apply(CollisionObjectUpdate("box", primitives=[Box((0.1, 0.1, 0.1))], subframe_names=["a", "b"],
                                      subframe_poses=[pose(0.0, 0.0, 0.1)]))
    assert list(scene.world_objects["box"].subframes) == ["a"]
    with pytest.raises(SceneError, match="1 subframe_names but 2 subframe_poses; give a name per pose"):
        scene.apply(CollisionObjectUpdate("box", primitives=[Box((0.1, 0.1, 0.1))], subframe_names=["a"],
                                          subframe_poses=[None, None]))


def test_append_poses_new_shapes_relative_to_the_object_and_replaces_its_subframes(scene):
    """MoveIt's world keeps the object's pose on APPEND; the update's pose is not used."""
    scene.apply(CollisionObjectUpdate("shelf", pose=pose(0.5, 0.0, 0.3), primitives=[Box((0.4, 0.4, 0.02))],
                                      subframe_names=["old"], subframe_poses=[None]))
    scene.apply(CollisionObjectUpdate("shelf", Operation.APPEND, pose=pose(9.0, 9.0, 9.0),
                                      primitives=[Box((0.4, 0.4, 0.02)), Sphere(0.01)],
                                      primitive_poses=[pose(0.0, 0.0, 0.2), pose(0.0, 0.0, 0.4)],
                                      subframe_names=["top"], subframe_poses=[pose(0.0, 0.0, 0.4)]))
    assert shape_positions(scene, "shelf") == [(0.5, 0.0, 0.3), (0.5, 0.0, 0.5), (0.5, 0.0, 0.7)]
    assert list(scene.world_objects["shelf"].subframes) == ["top"]


def test_move_with_shape_poses_re_poses_the_shapes(scene):
    scene.add_object("pair", [(Sphere(0.1), pose(0.0, 0.0, 0.0)), (Sphere(0.1), pose(0.0, 0.2, 0.0))],
                     pose=pose(0.5, 0.0, 0.0))
    scene.apply(CollisionObjectUpdate("pair", Operation.MOVE, pose=pose(1.0, 0.0, 0.0),
                                      primitive_poses=[pose(0.0, 0.0, 0.1), pose(0.0, 0.0, 0.3)]))
    assert shape_positions(scene, "pair") == [(1.0, 0.0, 0.1), (1.0, 0.0, 0.3)]
    with pytest.raises(SceneError, match="1 shape poses given for its 2 shapes; give one per shape or none"):
        scene.apply(CollisionObjectUpdate("pair", Operation.MOVE, primitive_poses=[None]))


# ================================================================================== AttachedCollisionObject
def test_touch_links_need_not_be_robot_links(scene):
    scene.attach_object("cup", "panda_hand", touch_links=["panda_leftfinger", "gripper_pad"], shapes=[Sphere(0.02)])
    assert scene.attached_objects["cup"].touch_links == {"panda_leftfinger", "gripper_pad"}


def test_append_to_an_attached_object_keeps_its_pose_and_adds_shapes(scene):
    scene.attach_object("tool", "panda_hand", touch_links=["panda_leftfinger"], shapes=[Sphere(0.02)],
                        pose=pose(0.0, 0.0, 0.1))
    scene.apply_attached(AttachedObjectUpdate("panda_hand", CollisionObjectUpdate(
        "tool", Operation.APPEND, primitives=[Sphere(0.01)], primitive_poses=[pose(0.0, 0.0, 0.05)]),
        ("panda_rightfinger",)))
    tool = scene.attached_objects["tool"]
    assert np.allclose(tool.object.T_parent_object[:3, 3], (0.0, 0.0, 0.1)), "an identity pose keeps the object's"
    assert [tuple(np.round(p.T_frame_shape[:3, 3], 12)) for p in tool.object.shapes] == [(0, 0, 0.05), (0, 0, 0)]
    assert tool.touch_links == {"panda_leftfinger", "panda_rightfinger"}


def test_append_attaches_an_object_not_attached_yet(scene):
    scene.apply_attached(AttachedObjectUpdate("panda_hand", CollisionObjectUpdate(
        "tool", Operation.APPEND, primitives=[Sphere(0.01)])))
    assert scene.attached_objects["tool"].link == "panda_hand"


def test_detaching_from_another_link_is_refused(scene):
    """MoveIt: the object is attached to another link; "leave the link_name empty or specify the correct link"."""
    scene.attach_object("cup", "panda_hand", shapes=[Sphere(0.02)])
    with pytest.raises(SceneError, match="cannot detach 'cup' from link 'panda_link3': it is attached to link "
                                         "'panda_hand'"):
        scene.apply_attached(AttachedObjectUpdate("panda_link3", CollisionObjectUpdate("cup", Operation.REMOVE)))
    assert "cup" in scene.attached_objects


def test_a_detached_object_does_not_replace_a_world_object_of_its_id(scene):
    scene.attach_object("cup", "panda_hand", shapes=[Sphere(0.02)])
    scene.add_object("cup", [Box((0.3, 0.3, 0.3))], pose=pose(2.0, 0.0, 0.0))
    scene.detach_object("cup")
    assert not scene.attached_objects
    assert shape_positions(scene, "cup") == [(2.0, 0.0, 0.0)] and isinstance(
        scene.world_objects["cup"].shapes[0].shape, Box)


# ================================================================================== PlanningScene
def test_a_diff_sets_its_fixed_frames_over_the_others(scene):
    apply_planning_scene(scene, PlanningSceneMessage(is_diff=False, fixed_frames={"camera": pose(1.0, 0.0, 1.0)}))
    apply_planning_scene(scene, PlanningSceneMessage(fixed_frames={"table": pose(0.5, 0.0, 0.0)}))
    assert sorted(scene.settings.fixed_frames) == ["camera", "table"]
