"""kinematics_node keeps its world in step with move_group's, in its own process over DDS: diffs on
planning_scene, a full scene then diffs on monitored_planning_scene, apply_planning_scene and get_planning_scene
(with the requested components); an allowed collision matrix entry lets a contact pass, an octomap blocks an IK
answer, and a malformed scene is refused with the reason logged (and published on /diagnostics) and the world
unchanged; a collision object without shape poses has its shape at its pose, as MoveIt reads it.

The bundled UR5: its upper arm lowered by shoulder_lift_joint = 0.5 rests on a table just below its base.
"""
from __future__ import annotations

import math
import time

import numpy as np
import pytest
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
from geometry_msgs.msg import Pose, TransformStamped
from moveit_msgs.msg import (
    AllowedCollisionEntry,
    AttachedCollisionObject,
    CollisionObject,
    MoveItErrorCodes,
    PlanningScene,
    PlanningSceneComponents,
)
from moveit_msgs.srv import ApplyPlanningScene, GetPlanningScene
from node_harness import (
    CALL_TIMEOUT_S,
    UR5_GROUP,
    UR5_JOINTS,
    UR5_MODEL,
    NodeUnderTest,
    ik_request,
    module_processes,  # noqa: F401 (fixture)
    pose_msg,
    serving_node,
    state_validity_request,
    ur5_parameters,
    wait_for,
)
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from rclpy.task import Future
from shape_msgs.msg import SolidPrimitive

from kinematics_py.collision.octree import OCTOMAP_ID, Octree
from kinematics_py.geometry.transforms import make_transform

GROUP, MODEL, JOINTS = UR5_GROUP, UR5_MODEL, UR5_JOINTS
ARM_ON_TABLE = {"shoulder_lift_joint": 0.5}
#: A reachable tool pose: elbow up, tool low in front of the robot.
Q_TARGET = dict(zip(JOINTS, (0.3, -1.2, 1.5, -1.9, -1.57, 0.0)))
WAIT_S = 20.0
SCENE_QOS = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.VOLATILE)
ALL = 1023


class SceneClient(NodeUnderTest):
    def __init__(self, process, namespace):
        super().__init__(process, namespace)
        self.diffs = self.node.create_publisher(PlanningScene, f"{namespace}/planning_scene", SCENE_QOS)
        self.monitored = self.node.create_publisher(PlanningScene, f"{namespace}/monitored_planning_scene", SCENE_QOS)
        self.objects = self.node.create_publisher(CollisionObject, f"{namespace}/collision_object", SCENE_QOS)
        self._apply = self.client.client(ApplyPlanningScene, f"{namespace}/apply_planning_scene")
        self._get = self.client.client(GetPlanningScene, f"{namespace}/get_planning_scene")

    def apply(self, scene: PlanningScene) -> bool:
        return self.client.call(self._apply, ApplyPlanningScene.Request(scene=scene), CALL_TIMEOUT_S).success

    def get(self, components: int = 0) -> PlanningScene:
        request = GetPlanningScene.Request()
        request.components.components = components
        return self.client.call(self._get, request, CALL_TIMEOUT_S).scene

    def world_ids(self) -> list[str]:
        return sorted(o.id for o in self.get(PlanningSceneComponents.WORLD_OBJECT_NAMES).world.collision_objects)

    def publish_until(self, publisher, msg, condition, what: str) -> None:
        """Publish ``msg`` until ``condition()`` holds (again every second: discovery may lose the first)."""
        last = [-math.inf]

        def check():
            if time.monotonic() - last[0] > 1.0:
                publisher.publish(msg)
                last[0] = time.monotonic()
            return condition()
        wait_for(check, WAIT_S, what, self.process)

    def valid(self, joints) -> bool:
        return self.state_validity(state_validity_request(joints)).valid


@pytest.fixture(scope="module")
def scene_node(module_processes, tmp_path_factory):  # noqa: F811
    with serving_node(module_processes, tmp_path_factory.mktemp("planning_scene"), ur5_parameters(max_ik_timeout=5.0),
                      "planning_scene_node", client_class=SceneClient) as node:
        assert node.client.wait_until_answering(node._get, GetPlanningScene.Request(), CALL_TIMEOUT_S)
        yield node


@pytest.fixture
def ur5(scene_node):
    """The node with an empty world and the robot's own collision rules."""
    assert scene_node.apply(PlanningScene(is_diff=False))
    return scene_node


def box(object_id: str, size, position) -> CollisionObject:
    msg = CollisionObject(id=object_id, operation=CollisionObject.ADD, pose=pose_msg(make_transform(None, position)))
    msg.primitives = [SolidPrimitive(type=SolidPrimitive.BOX, dimensions=list(size))]
    msg.primitive_poses = [Pose()]
    return msg


def table() -> CollisionObject:
    return box("table", (1.2, 1.6, 0.05), (0.0, 0.0, -0.03))


def diff(*objects, **fields) -> PlanningScene:
    scene = PlanningScene(is_diff=True, **fields)
    scene.world.collision_objects = list(objects)
    return scene


def octomap_scene(octree: Octree, binary: bool = True, data: bytes | None = None) -> PlanningScene:
    scene = diff()
    octomap = scene.world.octomap.octomap
    octomap.binary, octomap.id, octomap.resolution = binary, "OcTree", octree.resolution
    octomap.data = np.frombuffer(octree.binary_stream() if data is None else data, dtype=np.int8).tolist()
    return scene


def test_diffs_on_planning_scene_change_the_world(ur5):
    ur5.publish_until(ur5.diffs, diff(table()), lambda: "table" in ur5.world_ids(), "the table to appear")
    assert not ur5.valid(ARM_ON_TABLE)
    moved = CollisionObject(id="table", operation=CollisionObject.MOVE, pose=pose_msg(make_transform(None, (3, 0, 0))))
    ur5.publish_until(ur5.diffs, diff(moved), lambda: ur5.valid(ARM_ON_TABLE), "the table to move away")
    assert ur5.world_ids() == ["table"]


def test_a_full_scene_on_monitored_planning_scene_replaces_the_world_then_diffs_apply(ur5):
    assert ur5.apply(diff(box("old", (0.1, 0.1, 0.1), (2.0, 0.0, 0.0))))
    full = PlanningScene(is_diff=False, name="move_group")
    full.world.collision_objects = [table()]
    ur5.publish_until(ur5.monitored, full, lambda: ur5.world_ids() == ["table"], "the full scene to replace the world")
    assert ur5.get(PlanningSceneComponents.SCENE_SETTINGS).name == "move_group"
    ur5.publish_until(ur5.monitored, diff(box("new", (0.1, 0.1, 0.1), (2.0, 0.0, 0.0))),
                      lambda: ur5.world_ids() == ["new", "table"], "the diff to add an object")
    assert not ur5.valid(ARM_ON_TABLE)


def test_get_planning_scene_answers_the_requested_components(ur5):
    assert ur5.apply(diff(table(), object_colors=[]))
    names_only = ur5.get(PlanningSceneComponents.WORLD_OBJECT_NAMES)
    assert [o.id for o in names_only.world.collision_objects] == ["table"]
    assert not names_only.world.collision_objects[0].primitives
    assert not names_only.allowed_collision_matrix.entry_names and not names_only.robot_state.joint_state.name
    everything = ur5.get()
    assert everything.is_diff is False and everything.robot_model_name
    (table_msg,) = everything.world.collision_objects
    assert list(table_msg.primitives[0].dimensions) == pytest.approx([1.2, 1.6, 0.05])
    assert table_msg.pose.position.z == pytest.approx(-0.03)
    assert set(JOINTS) <= set(everything.robot_state.joint_state.name)
    matrix = everything.allowed_collision_matrix
    index = {name: k for k, name in enumerate(matrix.entry_names)}
    assert matrix.entry_values[index["base_link"]].enabled[index["shoulder_link"]]  # adjacent
    assert not matrix.entry_values[index["base_link"]].enabled[index["wrist_3_link"]]
    assert {p.link_name for p in everything.link_padding} >= {"base_link", "wrist_3_link"}


def test_matrix_entries_allow_a_contact(ur5):
    assert ur5.apply(diff(table()))
    assert not ur5.valid(ARM_ON_TABLE)
    allowed = diff()
    allowed.allowed_collision_matrix.entry_names = ["table", "upper_arm_link"]
    allowed.allowed_collision_matrix.entry_values = [AllowedCollisionEntry(enabled=[False, True]),
                                                     AllowedCollisionEntry(enabled=[True, False])]
    assert ur5.apply(allowed)
    assert ur5.valid(ARM_ON_TABLE)
    assert ur5.valid({})  # the robot's own rules stay: adjacent links touch at zero
    got = ur5.get(PlanningSceneComponents.ALLOWED_COLLISION_MATRIX).allowed_collision_matrix
    index = {name: k for k, name in enumerate(got.entry_names)}
    assert got.entry_values[index["table"]].enabled[index["upper_arm_link"]]
    assert ur5.apply(PlanningScene(is_diff=False, world=allowed.world))  # full scene, empty matrix
    ur5.apply(diff(table()))
    assert not ur5.valid(ARM_ON_TABLE)


def test_an_octomap_blocks_an_ik_answer(ur5):
    target = MODEL.link_poses(Q_TARGET)["tool0"]
    request = ik_request(GROUP, target, seed=Q_TARGET, timeout=0.5, avoid_collisions=True)
    assert ur5.ik(request).error_code.val == MoveItErrorCodes.SUCCESS
    steps = np.arange(-0.04, 0.041, 0.01)
    cube = np.stack(np.meshgrid(steps, steps, steps, indexing="ij"), axis=-1).reshape(-1, 3)
    octree = Octree.from_points(cube, 0.02)
    scene = octomap_scene(octree)
    scene.world.octomap.origin = pose_msg(make_transform(None, target[:3, 3]))
    assert ur5.apply(scene)
    answer = ur5.ik(request)
    assert answer.error_code.val == MoveItErrorCodes.GOAL_IN_COLLISION, answer.error_code.message
    assert OCTOMAP_ID in answer.error_code.message
    got = ur5.get(PlanningSceneComponents.OCTOMAP).world.octomap
    assert Octree.from_stream(np.asarray(got.octomap.data, dtype=np.int8).tobytes(), got.octomap.binary,
                              got.octomap.resolution).keys.shape == octree.keys.shape
    assert got.origin.position.x == pytest.approx(target[0, 3])
    cleared = diff()
    cleared.world.octomap.octomap.id = "OcTree"  # named, no data: the octomap goes
    assert ur5.apply(cleared)
    assert ur5.ik(request).error_code.val == MoveItErrorCodes.SUCCESS


def test_a_malformed_scene_is_refused_and_changes_nothing(ur5):
    assert ur5.apply(diff(table()))
    before = ur5.get()
    octree = Octree.from_points([[0.0, 0.0, 2.0]], 0.05)
    bad = octomap_scene(octree, data=octree.binary_stream()[:-1])
    bad.world.collision_objects = [box("new", (0.1, 0.1, 0.1), (2.0, 0.0, 0.0))]
    assert not ur5.apply(bad)
    wait_for(lambda: "world.octomap: binary octree stream ends early" in ur5.process.output(), WAIT_S,
             "the refusal to be logged", ur5.process)
    unknown = diff(CollisionObject(id="ghost", operation=CollisionObject.MOVE))
    assert not ur5.apply(unknown)
    after = ur5.get()
    assert [o.id for o in after.world.collision_objects] == [o.id for o in before.world.collision_objects]
    assert not after.world.octomap.octomap.data
    assert not ur5.valid(ARM_ON_TABLE)


def test_a_full_scene_as_move_group_sends_it(ur5):
    """Attached objects in robot_state (posed in their link's frame), fixed frames and an object posed in one."""
    full = PlanningScene(is_diff=False, name="from move_group")
    camera = TransformStamped(child_frame_id="camera")
    camera.header.frame_id = "base_link"
    camera.transform.translation.z, camera.transform.rotation.w = 2.0, 1.0
    full.fixed_frame_transforms = [camera]
    seen = box("seen", (0.1, 0.1, 0.1), (0.0, 0.0, 0.5))
    seen.header.frame_id = "camera"
    full.world.collision_objects = [seen]
    tool = box("tool", (0.05, 0.05, 0.05), (0.0, 0.0, 0.05))
    tool.header.frame_id = "tool0"
    full.robot_state.attached_collision_objects = [AttachedCollisionObject(link_name="tool0", object=tool,
                                                                           touch_links=["wrist_3_link"])]
    ur5.publish_until(ur5.monitored, full, lambda: ur5.world_ids() == ["seen"], "the full scene to apply")
    got = ur5.get()
    (seen_msg,) = got.world.collision_objects
    assert (seen_msg.pose.position.x, seen_msg.pose.position.z) == pytest.approx((0.0, 2.5))
    (attached,) = got.robot_state.attached_collision_objects
    assert (attached.link_name, attached.object.id, list(attached.touch_links)) == ("tool0", "tool", ["wrist_3_link"])
    assert attached.object.pose.position.z == pytest.approx(0.05)
    assert [t.child_frame_id for t in got.fixed_frame_transforms][-1] == "camera"
    assert ur5.valid({})


def test_a_collision_object_without_shape_poses_has_its_shape_at_its_pose(ur5):
    """As pymoveit2 sends a box (MoveIt takes the identity for a missing shape pose)."""
    lone = box("lone", (0.2, 0.2, 0.2), (0.5, 0.0, 0.2))
    lone.primitive_poses = []
    ur5.publish_until(ur5.objects, lone, lambda: "lone" in ur5.world_ids(), "the box to appear")
    (got,) = ur5.get(PlanningSceneComponents.WORLD_OBJECT_GEOMETRY).world.collision_objects
    position = got.pose.position
    shape_position = got.primitive_poses[0].position
    assert (position.x, position.y, position.z) == pytest.approx((0.5, 0.0, 0.2))
    assert (shape_position.x, shape_position.y, shape_position.z) == pytest.approx((0.0, 0.0, 0.0))


def test_a_refused_collision_object_is_published_on_diagnostics(ur5):
    received = Future()

    def on_diagnostics(msg: DiagnosticArray) -> None:
        about_ghost = any(value.key == "object" and value.value == "ghost" for status in msg.status
                          for value in status.values)
        if about_ghost and not received.done():
            received.set_result(msg)
    ur5.node.create_subscription(DiagnosticArray, "/diagnostics", on_diagnostics, 10)
    ghost = CollisionObject(id="ghost", operation=CollisionObject.MOVE, pose=pose_msg(make_transform(None, (1, 0, 0))))
    deadline = time.monotonic() + WAIT_S
    while not received.done() and time.monotonic() < deadline:
        ur5.objects.publish(ghost)  # again every second: discovery may lose the first
        ur5.client.spin_until(received, 1.0)
    assert received.done(), f"no diagnostic about 'ghost' within {WAIT_S} s\n{ur5.process.output()}"
    (status,) = received.result().status
    assert status.level == DiagnosticStatus.ERROR
    assert status.name.endswith(": planning scene")
    assert status.message.startswith("collision_object 'ghost' (MOVE) refused: cannot move collision object 'ghost'")
    assert {value.key: value.value for value in status.values} == {
        "object": "ghost", "source": "collision_object", "operation": "MOVE",
        "reason": "cannot move collision object 'ghost': it does not exist; world objects are []"}
