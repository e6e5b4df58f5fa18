"""moveit_msgs/PlanningScene <-> the planning scene without DDS: a scene sent by get_planning_scene and applied
again as a full scene gives the same scene; malformed parts are refused naming the part."""
from __future__ import annotations

import numpy as np
import pytest
from geometry_msgs.msg import Pose, TransformStamped
from moveit_msgs.msg import AllowedCollisionEntry, CollisionObject, PlanningScene, PlanningSceneComponents
from shape_msgs.msg import SolidPrimitive

from kinematics_py import Box, CollisionChecker, Mesh, Plane, SemanticModel
from kinematics_py.collision.allowed_collisions import AllowedCollisionMatrix
from kinematics_py.collision.octree import OCTOMAP_ID, Octree
from kinematics_py.collision.scene import AttachedObjectUpdate, CollisionObjectUpdate, SceneError
from kinematics_py.collision.scene import PlanningScene as Scene
from kinematics_py.collision.scene_message import OctomapUpdate, PlanningSceneMessage, apply_planning_scene
from kinematics_py.model.robot_model import RobotModel
from kinematics_py.robots import bundled_robot_path
from kinematics_py.ros.messages.scene_conversions import planning_scene_message, planning_scene_msg

UR5 = RobotModel.from_urdf_file(bundled_robot_path("ur5"))
CHECKER = CollisionChecker(UR5, SemanticModel.from_srdf_string(bundled_robot_path("ur5", "srdf").read_text(), UR5))
LINKS = list(CHECKER.link_geometry)
JOINTS = list(UR5.single_dof_joint_names)
QUARTER_Z = (0.0, 0.0, np.sin(np.pi / 4), np.cos(np.pi / 4))


def received(msg: PlanningScene) -> PlanningSceneMessage:
    return planning_scene_message(msg, UR5, lambda frame: (frame, None), lambda frame: frame in ("", "base_link"))


def sent(scene: Scene, components: int = 0) -> PlanningScene:
    return planning_scene_msg(scene, components, CHECKER.disabled_pairs, LINKS, JOINTS, dict.fromkeys(JOINTS, 0.0))


@pytest.fixture
def scene():
    scene = Scene(UR5)
    tetrahedron = Mesh([[0, 0, 0], [0.1, 0, 0], [0, 0.1, 0], [0, 0, 0.1]], [[0, 1, 2], [0, 1, 3], [0, 2, 3], [1, 2, 3]])
    apply_planning_scene(scene, PlanningSceneMessage(
        name="kitchen",
        fixed_frames={"camera": ((1.0, 0.0, 1.0), QUARTER_Z)},
        allowed_collisions=AllowedCollisionMatrix({frozenset(("table", "wrist_3_link")): True}, {"cup": True}),
        link_padding={"wrist_3_link": 0.01}, link_scale={"forearm_link": 1.1},
        object_colors={"table": (1.0, 0.0, 0.0, 1.0)},
        collision_objects=[
            CollisionObjectUpdate("table", pose=((0.5, 0.0, -0.05), QUARTER_Z), primitives=[Box((1.0, 0.5, 0.1))],
                                  primitive_poses=[((0.0, 0.1, 0.0), (0, 0, 0, 1))], meshes=[tetrahedron],
                                  mesh_poses=[None], planes=[Plane((0, 0, 1, 1.0))], plane_poses=[None],
                                  subframe_names=["corner"], subframe_poses=[((0.5, 0.25, 0.05), (0, 0, 0, 1))]),
            CollisionObjectUpdate("seen", frame_id="camera", primitives=[Box((0.1, 0.1, 0.1))],
                                  primitive_poses=[None])],
        attached_objects=[AttachedObjectUpdate("wrist_3_link", CollisionObjectUpdate(
            "cup", pose=((0.0, 0.0, 0.1), (0, 0, 0, 1)), primitives=[Box((0.05, 0.05, 0.1))],
            primitive_poses=[None]), ("wrist_2_link",))],
        octomap=OctomapUpdate(Octree.from_points([[0.0, 0.0, 0.0], [0.1, 0.0, 0.0]], 0.05), "camera")))
    return scene


def test_a_sent_scene_applied_again_gives_the_same_scene(scene):
    msg = sent(scene)
    assert msg.is_diff is False and msg.name == "kitchen" and msg.robot_model_name == UR5.name
    again = Scene(UR5)
    apply_planning_scene(again, received(msg))
    assert again.settings.name == "kitchen"
    assert again.settings.link_padding["wrist_3_link"] == 0.01 and again.settings.link_scale["forearm_link"] == 1.1
    assert again.settings.object_colors == {"table": (1.0, 0.0, 0.0, 1.0)}
    assert np.allclose(again.frame_transform("camera"), scene.frame_transform("camera"))
    for object_id in ("table", "seen", OCTOMAP_ID):
        assert np.allclose(again.frame_transform(object_id), scene.frame_transform(object_id)), object_id
    assert np.allclose(again.frame_transform("table/corner"), scene.frame_transform("table/corner"))
    table, old_table = again.world_objects["table"], scene.world_objects["table"]
    assert [type(p.shape) for p in table.shapes] == [type(p.shape) for p in old_table.shapes]
    assert all(np.allclose(a.T_frame_shape, b.T_frame_shape) for a, b in zip(table.shapes, old_table.shapes))
    assert np.array_equal(again.world_objects[OCTOMAP_ID].shapes[0].shape.keys,
                          np.unique(scene.world_objects[OCTOMAP_ID].shapes[0].shape.keys, axis=0))
    cup = again.attached_objects["cup"]
    assert cup.link == "wrist_3_link" and cup.touch_links == {"wrist_2_link"}
    assert np.allclose(cup.object.T_parent_object, scene.attached_objects["cup"].object.T_parent_object)
    bodies = [*LINKS, "table", "seen", "cup"]
    assert again.settings.allowed_collisions.disabled_pairs(CHECKER.disabled_pairs, LINKS, bodies).keys() == \
        scene.settings.allowed_collisions.disabled_pairs(CHECKER.disabled_pairs, LINKS, bodies).keys()


def test_components_select_what_is_sent(scene):
    names = sent(scene, PlanningSceneComponents.WORLD_OBJECT_NAMES)
    assert sorted(o.id for o in names.world.collision_objects) == ["seen", "table"]
    assert not any(o.primitives for o in names.world.collision_objects)
    assert not names.world.octomap.octomap.data and not names.robot_state.attached_collision_objects
    assert not names.name and not names.allowed_collision_matrix.entry_names and not names.link_padding
    octomap = sent(scene, PlanningSceneComponents.OCTOMAP)
    assert octomap.world.octomap.octomap.binary and octomap.world.octomap.octomap.id == "OcTree"
    assert not octomap.world.collision_objects
    attached = sent(scene, PlanningSceneComponents.ROBOT_STATE_ATTACHED_OBJECTS)
    assert [a.object.id for a in attached.robot_state.attached_collision_objects] == ["cup"]


def test_a_point_cloud_object_is_sent_as_one_box_per_voxel(scene):
    scene.add_point_cloud("cloud", [[0.0, 0.0, 2.0], [0.3, 0.0, 2.0]], 0.1)
    (cloud,) = [o for o in sent(scene).world.collision_objects if o.id == "cloud"]
    assert len(cloud.primitives) == 2 and list(cloud.primitives[0].dimensions) == pytest.approx([0.1] * 3)


def test_malformed_parts_are_refused_naming_them():
    matrix = PlanningScene(is_diff=True)
    matrix.allowed_collision_matrix.entry_names = ["a", "b"]
    matrix.allowed_collision_matrix.entry_values = [AllowedCollisionEntry(enabled=[False, True])]
    with pytest.raises(SceneError, match="2 entry_names but 1 entry_values"):
        received(matrix)
    frames = PlanningScene(is_diff=True)
    frames.fixed_frame_transforms = [TransformStamped(child_frame_id="camera")]
    frames.fixed_frame_transforms[0].header.frame_id = "elsewhere"
    with pytest.raises(SceneError, match="must be given in the model frame"):
        received(frames)
    octomap = PlanningScene(is_diff=True)
    octomap.world.octomap.octomap.id, octomap.world.octomap.octomap.resolution = "OcTree", 0.05
    octomap.world.octomap.octomap.binary = True
    octomap.world.octomap.octomap.data = [3, 0]
    with pytest.raises(SceneError, match="world.octomap: binary octree stream ends early"):
        received(octomap)


def test_joints_of_other_descriptions_are_skipped():
    msg = PlanningScene(is_diff=True)
    msg.robot_state.joint_state.name = ["elbow_joint", "gripper_joint"]
    msg.robot_state.joint_state.position = [0.5, 0.01]
    assert received(msg).joint_values == {"elbow_joint": 0.5}


def test_frames_the_message_defines_are_known_to_its_objects():
    msg = PlanningScene(is_diff=True)
    camera = TransformStamped(child_frame_id="camera")
    camera.transform.translation.x, camera.transform.rotation.w = 1.0, 1.0
    msg.fixed_frame_transforms = [camera]
    seen = CollisionObject(id="seen", operation=CollisionObject.ADD)
    seen.header.frame_id = "camera"
    seen.primitives = [SolidPrimitive(type=SolidPrimitive.BOX, dimensions=[0.1, 0.1, 0.1])]
    seen.primitive_poses = [Pose()]
    on_it = CollisionObject(id="on_it", operation=CollisionObject.ADD)
    on_it.header.frame_id = "seen"
    on_it.pose.position.z, on_it.pose.orientation.w = 0.1, 1.0
    on_it.primitives, on_it.primitive_poses = list(seen.primitives), [Pose()]
    msg.world.collision_objects = [seen, on_it]

    def nothing_else(frame):
        if frame:
            raise SceneError(f"unknown frame {frame!r}")
        return "", None
    scene = Scene(UR5)
    apply_planning_scene(scene, planning_scene_message(msg, UR5, nothing_else, lambda frame: not frame))
    assert np.allclose(scene.frame_transform("on_it")[:3, 3], [1.0, 0.0, 0.1])


def test_one_leading_slash_of_a_fixed_frame_is_dropped_as_tf2_does():
    msg = PlanningScene(is_diff=True)
    frames = []
    for child in ("/camera", "//mount"):
        frame = TransformStamped(child_frame_id=child)
        frame.transform.rotation.w = 1.0
        frames.append(frame)
    msg.fixed_frame_transforms = frames
    assert set(received(msg).fixed_frames) == {"camera", "/mount"}
