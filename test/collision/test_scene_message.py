"""A whole planning scene message applies as MoveIt applies it (full scenes replace, diffs change what they
carry), all at once or not at all; the allowed collision matrix, link padding and scale, fixed frames, the
octomap and point clouds reach every collision check."""
import numpy as np
import pytest
from robots import bundled_robot

from kinematics_py import Box, CollisionChecker, RobotModel, SemanticModel
from kinematics_py.collision.allowed_collisions import AllowedCollisionMatrix, CollisionMatrixError
from kinematics_py.collision.octree import OCTOMAP_ID, Octree
from kinematics_py.collision.scene import (
    AttachedObjectUpdate,
    CollisionObjectUpdate,
    Operation,
    PlanningScene,
    SceneError,
)
from kinematics_py.collision.scene_message import OctomapUpdate, PlanningSceneMessage, apply_planning_scene

#: The UR5's upper arm lowered onto a table just below its base (docs/collision.md's example).
ARM_ON_TABLE = {"shoulder_lift_joint": 0.5}
TABLE = CollisionObjectUpdate("table", pose=((0.0, 0.0, -0.03), (0.0, 0.0, 0.0, 1.0)),
                              primitives=[Box((1.2, 1.6, 0.05))], primitive_poses=[None])


@pytest.fixture(scope="module")
def robot():
    model = RobotModel.from_urdf_file(bundled_robot("ur5.urdf"))
    return model, SemanticModel.from_srdf_file(bundled_robot("ur5.srdf"), model)


@pytest.fixture
def scene(robot):
    return PlanningScene(robot[0])


@pytest.fixture
def checker(robot, scene):
    return CollisionChecker(robot[0], robot[1], scene)


def apply(scene, **fields):
    apply_planning_scene(scene, PlanningSceneMessage(**fields))


def test_diff_adds_objects_and_a_full_scene_replaces_the_world(scene, checker):
    apply(scene, collision_objects=[TABLE])
    assert checker.check(ARM_ON_TABLE).pairs == (("upper_arm_link", "table"),)
    apply(scene, collision_objects=[CollisionObjectUpdate("box", primitives=[Box((0.1, 0.1, 0.1))],
                                                          primitive_poses=[((2.0, 0.0, 0.0), (0, 0, 0, 1))])])
    assert sorted(scene.world_objects) == ["box", "table"]
    apply(scene, is_diff=False, collision_objects=[CollisionObjectUpdate(
        "box", primitives=[Box((0.1, 0.1, 0.1))], primitive_poses=[((2.0, 0.0, 0.0), (0, 0, 0, 1))])])
    assert sorted(scene.world_objects) == ["box"]
    assert not checker.check(ARM_ON_TABLE).in_collision


def test_matrix_entries_allow_a_contact_and_defaults_allow_an_object_with_everything(scene, checker):
    apply(scene, collision_objects=[TABLE])
    apply(scene, allowed_collisions=AllowedCollisionMatrix.from_matrix(["table", "upper_arm_link"],
                                                                        [[False, True], [True, False]]))
    assert not checker.check(ARM_ON_TABLE).in_collision
    apply(scene, allowed_collisions=AllowedCollisionMatrix.from_matrix(["table", "upper_arm_link"],
                                                                        [[False, False], [False, False]]))
    assert checker.check(ARM_ON_TABLE).in_collision
    apply(scene, allowed_collisions=AllowedCollisionMatrix(defaults={"table": True}))
    assert not checker.check(ARM_ON_TABLE).in_collision


def test_a_full_scene_with_an_empty_matrix_keeps_the_robots_own_rules(scene, checker):
    adjacent = frozenset(("base_link", "shoulder_link"))  # touching at every state
    assert not checker.check({}).in_collision
    apply(scene, allowed_collisions=AllowedCollisionMatrix({adjacent: False}))
    assert checker.check({}).pairs == (("base_link", "shoulder_link"),)
    apply(scene, is_diff=False)
    assert scene.settings.allowed_collisions.is_empty
    assert not checker.check({}).in_collision


def test_matrix_as_a_message_lists_the_robot_rules_and_round_trips(checker):
    matrix = AllowedCollisionMatrix({frozenset(("table", "wrist_3_link")): True}, {"table": False})
    names, rows, default_names, default_values = matrix.as_matrix(checker.disabled_pairs, list(checker.link_geometry))
    assert set(checker.link_geometry) < set(names) and "table" in names
    index = {name: k for k, name in enumerate(names)}
    assert rows[index["shoulder_link"]][index["upper_arm_link"]]  # adjacent
    assert not rows[index["base_link"]][index["wrist_3_link"]]
    assert rows[index["table"]][index["wrist_3_link"]] and not rows[index["table"]][index["base_link"]]
    assert (default_names, default_values) == (["table"], [False])
    again = AllowedCollisionMatrix.from_matrix(names, rows, default_names, default_values)
    assert again.disabled_pairs(checker.disabled_pairs, checker.link_geometry, [*checker.link_geometry, "table"]) \
        == matrix.disabled_pairs(checker.disabled_pairs, checker.link_geometry, [*checker.link_geometry, "table"])


@pytest.mark.parametrize("names, rows, defaults, reason", [
    (["a", "b"], [[False, True]], ([], []), "2 entry_names but 1 entry_values"),
    (["a", "b"], [[False, True], [True]], ([], []), "entry_values\\[1\\]"),
    (["a", "a"], [[False, True], [True, False]], ([], []), "more than once"),
    ([], [], (["a"], []), "1 default_entry_names but 0"),
])
def test_malformed_matrices_are_refused(names, rows, defaults, reason):
    with pytest.raises(CollisionMatrixError, match=reason):
        AllowedCollisionMatrix.from_matrix(names, rows, *defaults)


def test_link_padding_and_scale_reach_the_checker(scene, checker):
    apply(scene, collision_objects=[CollisionObjectUpdate(
        "near", primitives=[Box((0.05, 0.05, 0.05))], primitive_poses=[((0.0, 0.0, -0.1), (0, 0, 0, 1))])])
    assert not checker.check({}).in_collision
    apply(scene, link_padding={"base_link": 0.1})
    assert checker.padding("base_link") == 0.1 and checker.check({}).pairs == (("base_link", "near"),)
    apply(scene, link_padding={"base_link": 0.0}, link_scale={"base_link": 3.0})
    assert checker.scale("base_link") == 3.0
    with pytest.raises(SceneError, match="padding of 'base_link' must be finite and >= 0"):
        apply(scene, link_padding={"base_link": -1.0})


def test_fixed_frames_place_objects(scene):
    apply(scene, fixed_frames={"camera": ((1.0, 0.0, 1.0), (0, 0, 0, 1))},
          collision_objects=[CollisionObjectUpdate("seen", frame_id="camera", primitives=[Box((0.1, 0.1, 0.1))],
                                                   primitive_poses=[None])])
    assert np.allclose(scene.world_objects["seen"].T_parent_object[:3, 3], [1.0, 0.0, 1.0])
    apply(scene, is_diff=False)
    with pytest.raises(SceneError, match="unknown frame 'camera'"):
        scene.frame_transform("camera")


def test_octomap_voxels_are_obstacles_and_survive_removing_every_object(scene, checker):
    apply(scene, collision_objects=[TABLE])
    voxels = Octree.from_points(np.random.default_rng(0).uniform(-0.05, 0.05, (500, 3)), 0.02)
    free = {"shoulder_lift_joint": -1.0}
    apply(scene, octomap=OctomapUpdate(voxels, "", ((0.3, 0.1, 0.4), (0, 0, 0, 1))))
    assert ("upper_arm_link", OCTOMAP_ID) in checker.check(free).pairs
    scene.remove_object("")
    assert list(scene.world_objects) == [OCTOMAP_ID]
    apply(scene, octomap=OctomapUpdate(None))
    assert not checker.check(free).in_collision
    with pytest.raises(SceneError, match="reserved"):
        scene.add_object(OCTOMAP_ID, [Box((1, 1, 1))])


def test_point_cloud_obstacle(scene, checker):
    points = np.random.default_rng(1).uniform(-0.05, 0.05, (2000, 3))
    scene.add_point_cloud("cloud", points, 0.01, pose=((0.3, 0.1, 0.4), (0, 0, 0, 1)),
                          clip_box=((-1, -1, -1), (1, 1, 1)))
    assert ("upper_arm_link", "cloud") in checker.check({"shoulder_lift_joint": -1.0}).pairs
    assert not checker.check({}).in_collision
    with pytest.raises(SceneError, match="point cloud 'empty'"):
        scene.add_point_cloud("empty", points, 0.01, clip_box=((5, 5, 5), (6, 6, 6)))


def test_attached_objects_of_a_full_scene_replace_the_attached_ones(scene):
    tool = CollisionObjectUpdate("tool", primitives=[Box((0.05, 0.05, 0.05))], primitive_poses=[None])
    apply(scene, attached_objects=[AttachedObjectUpdate("wrist_3_link", tool)])
    assert list(scene.attached_objects) == ["tool"]
    apply(scene, is_diff=False, replace_attached=True, attached_objects=[
        AttachedObjectUpdate("wrist_2_link", CollisionObjectUpdate("other", primitives=[Box((0.05, 0.05, 0.05))],
                                                                   primitive_poses=[None]))])
    assert list(scene.attached_objects) == ["other"] and "tool" not in scene.world_objects
    with pytest.raises(SceneError, match="can only ADD"):
        apply(scene, replace_attached=True, attached_objects=[
            AttachedObjectUpdate("", CollisionObjectUpdate("other", Operation.REMOVE))])


def test_a_malformed_scene_changes_nothing(scene, checker):
    apply(scene, collision_objects=[TABLE], allowed_collisions=AllowedCollisionMatrix(defaults={"x": True}))
    version, settings, world = scene.version, scene.settings, dict(scene.world_objects)
    with pytest.raises(SceneError, match=r"world.collision_objects\[1\]: cannot move"):
        apply(scene, is_diff=False, name="new", collision_objects=[
            CollisionObjectUpdate("box", primitives=[Box((0.1, 0.1, 0.1))], primitive_poses=[None]),
            CollisionObjectUpdate("missing", Operation.MOVE)])
    assert (scene.version, scene.settings, dict(scene.world_objects)) == (version, settings, world)
    assert checker.check(ARM_ON_TABLE).in_collision


def test_a_diff_of_the_robot_state_alone_changes_nothing_checks_see(scene):
    apply(scene, collision_objects=[TABLE], link_padding={"base_link": 0.01})
    version = scene.version
    apply(scene, joint_values={"elbow_joint": 0.3}, link_padding={"base_link": 0.01})
    assert scene.version == version and scene.robot_state["elbow_joint"] == 0.3
    apply(scene, fixed_frames={"camera": None})
    assert scene.version > version
