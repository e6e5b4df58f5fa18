"""kinematics_node with a real robot's collision geometry (example-robot-data's UR5 with its collision meshes), in
its own process: the world from the collision_object / attached_collision_object topics, collision-aware
compute_ik / solve_ik, and check_state_validity.

Properties: world updates (ADD, MOVE, APPEND, REMOVE; primitives, meshes, planes; poses in the model frame, a TF
frame or an object's subframe) change the answers; malformed updates are refused with a logged reason and change
nothing; avoid_collisions answers are collision free by an independent check (pinocchio + coal in this process);
a request's attached objects move with their link and may touch their touch_links; a pose reachable only in
collision is GOAL_IN_COLLISION naming the pair; check_state_validity reports contacts, limits the check to the
group, and checks joint limits and constraints.

The world is observed through check_state_validity: a small probe sphere, attached by the request to the fixed
base far from the arm, touches exactly the world objects around its centre (``objects_at``). The tests share one
node and each starts from an empty world.
"""
from __future__ import annotations

import math
import time

import coal
import numpy as np
import pytest
from geometry_msgs.msg import Point, Pose, TransformStamped
from moveit_msgs.msg import (
    AttachedCollisionObject,
    BoundingVolume,
    CollisionObject,
    ContactInformation,
    JointConstraint,
    MoveItErrorCodes,
    PositionConstraint,
)
from node_harness import (
    NodeUnderTest,
    fk_request,
    ik_request,
    module_processes,  # noqa: F401 (fixture)
    pose_msg,
    poses_close,
    serving_node,
    solution_values,
    state_validity_request,
    ur5_parameters,
    wait_for,
)
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from reference import PinocchioCollisions
from robots import example_robot_urdf, ur5_collision_srdf, without_collision_geometry
from shape_msgs.msg import Mesh, MeshTriangle, Plane, SolidPrimitive
from tf2_msgs.msg import TFMessage

from kinematics_py.geometry.transforms import make_transform, rotation_about_axis
from kinematics_py.model.robot_model import RobotModel
from kinematics_py.robots import bundled_robot_path
from kinematics_py.ros.messages.conversions import transform_msg_from_transform

GROUP = "ur_manipulator"
URDF = example_robot_urdf("ur5").read_text()
MODEL = RobotModel.from_urdf_string(URDF)
JOINTS = ("shoulder_pan_joint", "shoulder_lift_joint", "elbow_joint", "wrist_1_joint", "wrist_2_joint",
          "wrist_3_joint")
SRDF = ur5_collision_srdf()
#: Elbow up, tool low in front of the robot; the elbow (forearm_link's origin) is far from the tool.
Q_A = np.array([0.3, -1.2, 1.5, -1.9, -1.57, 0.0])
ELBOW_BOX = (0.12, 0.12, 0.12)
IK_TIMEOUT_S = 0.5
#: Answers reach the target within the solver's thresholds (1e-5); checked looser [m, rad].
POSITION_TOLERANCE_M = 2e-5
ROTATION_TOLERANCE_RAD = 2e-5
SAME_SOLUTION_RAD = 1e-3
WAIT_S = 20.0
PROBE_RADIUS = 0.005
#: A point no link reaches: where the sentinel object goes.
FAR = (3.0, 3.0, 3.0)
LATCHED = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL)
SCENE_QOS = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.VOLATILE)


class SceneNode(NodeUnderTest):
    def __init__(self, process, namespace):
        super().__init__(process, namespace)
        self.objects = self.node.create_publisher(CollisionObject, f"{namespace}/collision_object", SCENE_QOS)
        self.attached = self.node.create_publisher(AttachedCollisionObject, f"{namespace}/attached_collision_object",
                                                   SCENE_QOS)
        self.tf_static = self.node.create_publisher(TFMessage, "/tf_static", LATCHED)

    def publish(self, *messages) -> None:
        for msg in messages:
            (self.attached if isinstance(msg, AttachedCollisionObject) else self.objects).publish(msg)

    def objects_at(self, point) -> set[str]:
        """Ids of the world objects a probe sphere at ``point`` (model frame) touches."""
        request = state_validity_request()
        request.robot_state.is_diff = True
        request.robot_state.attached_collision_objects = [attached("probe", "base_link", sphere_object(
            "probe", PROBE_RADIUS, point, frame="world"))]
        response = self.state_validity(request)
        return {c.contact_body_2 if c.contact_body_1 == "probe" else c.contact_body_1 for c in response.contacts
                if "probe" in (c.contact_body_1, c.contact_body_2)}

    def publish_until(self, msg, condition, what: str) -> None:
        """Publish ``msg`` until ``condition()`` holds (again every second: discovery may lose the first)."""
        last = [-math.inf]

        def check():
            if time.monotonic() - last[0] > 1.0:
                self.publish(msg)
                last[0] = time.monotonic()
            return condition()
        wait_for(check, WAIT_S, what, self.process)

    def sync(self) -> None:
        """Return once every update published so far is applied: the node applies collision_object updates in
        order, so the sentinel published after them shows up only after them."""
        self.publish_until(box("sentinel", (0.1, 0.1, 0.1), FAR), lambda: "sentinel" in self.objects_at(FAR),
                           "the sentinel object to appear")
        self.publish_until(remove("sentinel"), lambda: "sentinel" not in self.objects_at(FAR),
                           "the sentinel object to go")

    def log_says(self, text: str) -> None:
        wait_for(lambda: text in self.process.output(), WAIT_S, f"the node to log {text!r}", self.process)


@pytest.fixture(scope="module")
def scene_node(module_processes, tmp_path_factory):  # noqa: F811
    parameters = ur5_parameters(robot_description=URDF, robot_description_semantic=SRDF, max_ik_timeout=5.0)
    with serving_node(module_processes, tmp_path_factory.mktemp("collision"), parameters, "collision_node",
                      client_class=SceneNode) as node:
        wait_for(lambda: node.objects.get_subscription_count() > 0, WAIT_S, "the collision_object subscription")
        yield node


@pytest.fixture
def ur5(scene_node):
    """The node with an empty world."""
    scene_node.publish(remove(""))
    scene_node.sync()
    return scene_node


# ------------------------------------------------------------------------------------------ messages
def collision_object(object_id: str, position=(0.0, 0.0, 0.0), frame: str = "", operation=CollisionObject.ADD,
                     T=None) -> CollisionObject:
    msg = CollisionObject(id=object_id, operation=operation)
    msg.header.frame_id = frame
    msg.pose = pose_msg(make_transform(None, position) if T is None else T)
    return msg


def box(object_id: str, size, position, frame: str = "", operation=CollisionObject.ADD) -> CollisionObject:
    msg = collision_object(object_id, position, frame, operation)
    msg.primitives = [SolidPrimitive(type=SolidPrimitive.BOX, dimensions=list(size))]
    msg.primitive_poses = [Pose()]
    return msg


def sphere_object(object_id: str, radius: float, position, frame: str = "") -> CollisionObject:
    msg = collision_object(object_id, position, frame)
    msg.primitives = [SolidPrimitive(type=SolidPrimitive.SPHERE, dimensions=[radius])]
    msg.primitive_poses = [Pose()]
    return msg


def remove(object_id: str) -> CollisionObject:
    return CollisionObject(id=object_id, operation=CollisionObject.REMOVE)


def attached(object_id: str, link: str, obj: CollisionObject, touch_links=()) -> AttachedCollisionObject:
    obj.id = object_id
    return AttachedCollisionObject(link_name=link, object=obj, touch_links=list(touch_links))


ROD_LENGTH, ROD_RADIUS, ROD_CENTER = 0.3, 0.01, 0.12


def rod(touch_links=("wrist_3_link", "ee_link")) -> AttachedCollisionObject:
    """A 30 cm rod held along tool0's z axis, from 3 cm inside the flange (it overlaps wrist_3_link and ee_link)."""
    obj = collision_object("rod", (0.0, 0.0, ROD_CENTER), frame="tool0")
    obj.primitives = [SolidPrimitive(type=SolidPrimitive.CYLINDER, dimensions=[ROD_LENGTH, ROD_RADIUS])]
    obj.primitive_poses = [Pose()]
    return attached("rod", "tool0", obj, touch_links)


def along_rod(q, distance: float) -> tuple[float, float, float]:
    """The point ``distance`` [m] along tool0's z axis, in the model frame."""
    return tuple((link_pose(q, "tool0") @ np.array([0.0, 0.0, distance, 1.0]))[:3])


def joints(q) -> dict[str, float]:
    return dict(zip(JOINTS, (float(v) for v in q)))


def link_pose(q, link: str) -> np.ndarray:
    return MODEL.link_poses(joints(q))[link]


def solved(response, target) -> np.ndarray:
    assert response.error_code.val == MoveItErrorCodes.SUCCESS, response.error_code.message
    q = np.array([solution_values(response)[j] for j in JOINTS])
    assert poses_close(link_pose(q, "tool0"), target, POSITION_TOLERANCE_M, ROTATION_TOLERANCE_RAD)
    return q


def collision_ik(node, target, seed, avoid_collisions=True, attached_objects=(), timeout=IK_TIMEOUT_S):
    request = ik_request(GROUP, target, seed=joints(seed), timeout=timeout, avoid_collisions=avoid_collisions)
    request.ik_request.robot_state.attached_collision_objects = list(attached_objects)
    return node.ik(request)


def reference_world(**boxes) -> PinocchioCollisions:
    """The independent checker with world boxes: name=(size, position)."""
    reference = PinocchioCollisions("ur5")
    for name, (size, position) in boxes.items():
        reference.add_world_object(name, coal.Box(*size), make_transform(None, position))
    return reference


def pairs_of(response) -> set[frozenset[str]]:
    return {frozenset((c.contact_body_1, c.contact_body_2)) for c in response.contacts}


def elbow_position(q=Q_A) -> tuple[float, float, float]:
    return tuple(link_pose(q, "forearm_link")[:3, 3])


# ------------------------------------------------------------------------------------------ world updates and IK
def test_add_move_append_remove_change_the_ik_answers(ur5):
    """A box around the elbow of the seed's solution forces the other elbow branch; moving it away, appending a
    shape there again and removing the object each change the answer accordingly."""
    target, seed = link_pose(Q_A, "tool0"), Q_A + 0.05
    elbow = elbow_position()
    assert np.allclose(solved(collision_ik(ur5, target, seed), target), Q_A, atol=SAME_SOLUTION_RAD)

    ur5.publish(box("box", ELBOW_BOX, elbow))
    ur5.sync()
    q = solved(collision_ik(ur5, target, seed), target)
    assert not np.allclose(q, Q_A, atol=0.1), "the blocked solution was returned"
    reference = reference_world(box=(ELBOW_BOX, elbow))
    assert not reference.colliding_pairs(joints(q)), "the answer collides by the independent check"
    assert {"box"} & {name for pair in reference.colliding_pairs(joints(Q_A)) for name in pair}, \
        "the box must block the seed's solution"
    plain = solved(collision_ik(ur5, target, seed, avoid_collisions=False), target)
    assert np.allclose(plain, Q_A, atol=SAME_SOLUTION_RAD), "avoid_collisions=false ignores the world"

    away = (0.8, -0.8, 0.3)
    ur5.publish(collision_object("box", away, operation=CollisionObject.MOVE))
    wait_for(lambda: "box" in ur5.objects_at(away), WAIT_S, "the box to move", ur5.process)
    assert "box" not in ur5.objects_at(elbow)
    assert np.allclose(solved(collision_ik(ur5, target, seed), target), Q_A, atol=SAME_SOLUTION_RAD)

    appended = box("box", ELBOW_BOX, (0.0, 0.0, 0.0), operation=CollisionObject.APPEND)
    # Relative to the object's pose, which an APPEND keeps (MoveIt's World::addToObject): the box is at `away`.
    appended.primitive_poses = [pose_msg(make_transform(None, np.subtract(elbow, away)))]
    ur5.publish(appended)
    wait_for(lambda: "box" in ur5.objects_at(elbow), WAIT_S, "the appended shape", ur5.process)
    assert "box" in ur5.objects_at(away), "APPEND keeps the object's shapes"
    q = solved(collision_ik(ur5, target, seed), target)
    assert not np.allclose(q, Q_A, atol=0.1)
    assert not reference.colliding_pairs(joints(q))

    ur5.publish(remove("box"))
    wait_for(lambda: not ur5.objects_at(elbow), WAIT_S, "the box to go", ur5.process)
    assert np.allclose(solved(collision_ik(ur5, target, seed), target), Q_A, atol=SAME_SOLUTION_RAD)


def test_a_pose_reachable_only_in_collision_is_goal_in_collision_naming_the_pairs(ur5):
    target = link_pose(Q_A, "tool0")
    cage = (0.1, 0.1, 0.1)
    ur5.publish(box("cage", cage, tuple(target[:3, 3])))
    ur5.sync()
    plain = solved(collision_ik(ur5, target, Q_A, avoid_collisions=False), target)
    colliding = reference_world(cage=(cage, tuple(target[:3, 3]))).colliding_pairs(joints(plain))
    assert colliding, "the pose is reachable, in collision"
    for call in (ur5.ik, ur5.solve_ik):
        request = ik_request(GROUP, target, link="tool0", frame="base_link", seed=joints(Q_A), timeout=0.2,
                             avoid_collisions=True)
        error = call(request).error_code
        assert error.val == MoveItErrorCodes.GOAL_IN_COLLISION, error.message
        assert "every one was in collision" in error.message
        assert any(f"{a} - {b}" in error.message or f"{b} - {a}" in error.message for a, b in map(tuple, colliding)), \
            f"no colliding pair of the reference {colliding} named in: {error.message}"


def test_solve_ik_checks_collisions_as_srv_kinematics_plugin_asks(ur5):
    """MoveIt's srv_kinematics_plugin always sends avoid_collisions=true: answered with collision checking."""
    target = link_pose(Q_A, "tool0")
    request = ik_request(GROUP, target, link="tool0", frame="base_link", seed=joints(Q_A + 0.2), avoid_collisions=True)
    response = ur5.solve_ik(request)
    solved(response, target)
    assert "NOT checked" not in response.error_code.message


# ------------------------------------------------------------------------------------------ attached objects
def test_a_request_attached_object_may_touch_its_touch_links_only(ur5):
    state = joints(Q_A)
    held = state_validity_request(state)
    held.robot_state.attached_collision_objects = [rod()]
    response = ur5.state_validity(held)
    assert response.valid and not response.contacts, pairs_of(response)

    held.robot_state.attached_collision_objects = [rod(touch_links=())]
    response = ur5.state_validity(held)
    assert not response.valid
    assert frozenset(("rod", "wrist_3_link")) in pairs_of(response)
    contact = next(c for c in response.contacts if {c.contact_body_1, c.contact_body_2} == {"rod", "wrist_3_link"})
    types = {contact.contact_body_1: contact.body_type_1, contact.contact_body_2: contact.body_type_2}
    assert types == {"rod": ContactInformation.ROBOT_ATTACHED, "wrist_3_link": ContactInformation.ROBOT_LINK}


def test_a_request_attached_object_moves_with_its_link(ur5):
    ur5.publish(box("post", (0.06, 0.06, 0.06), along_rod(Q_A, ROD_CENTER + ROD_LENGTH / 2 - 0.02)))
    ur5.sync()
    assert ur5.state_validity(state_validity_request(joints(Q_A))).valid, "the arm alone is clear of the post"
    for q, valid in ((Q_A, False), (Q_A + np.array([0.0, 0.0, 0.0, 0.0, 0.6, 0.0]), True)):
        request = state_validity_request(joints(q))
        request.robot_state.attached_collision_objects = [rod()]
        response = ur5.state_validity(request)
        assert response.valid == valid, pairs_of(response)
        assert (frozenset(("rod", "post")) in pairs_of(response)) == (not valid)


def test_an_attached_object_reaching_into_the_table_makes_every_solution_collide(ur5):
    """Tool 10 cm above the table, pointing down: the 30 cm rod it holds goes into the table whatever the arm
    does. The rod belongs to that request only: the next request without it is solved."""
    table_size, table_center = (0.6, 0.8, 0.1), (0.45, 0.1, 0.15)
    target = make_transform(rotation_about_axis(np.array([1.0, 0.0, 0.0]), math.pi), (0.45, 0.1, 0.30))
    ur5.publish(box("table", table_size, table_center))
    ur5.sync()
    error = collision_ik(ur5, target, Q_A, attached_objects=[rod()], timeout=0.2).error_code
    assert error.val == MoveItErrorCodes.GOAL_IN_COLLISION, error.message
    assert "rod - table" in error.message or "table - rod" in error.message
    q = solved(collision_ik(ur5, target, Q_A), target)
    assert not reference_world(table=(table_size, table_center)).colliding_pairs(joints(q))


def test_objects_attached_by_topic_follow_moveits_is_diff_rule(ur5):
    """An object attached through attached_collision_object stays in requests whose robot_state is a diff (or
    names no joints); a full robot_state (is_diff=false) replaces the attached objects by its own, as in MoveIt.
    Detaching leaves the object in the world where the current state (no joint_states: all zero) holds it."""
    ur5.publish(box("post", (0.06, 0.06, 0.06), along_rod(Q_A, ROD_CENTER + ROD_LENGTH / 2 - 0.02)))
    ur5.sync()

    def request(is_diff: bool):
        message = state_validity_request(joints(Q_A))
        message.robot_state.is_diff = is_diff
        return message

    ur5.publish_until(rod(), lambda: not ur5.state_validity(request(is_diff=True)).valid, "the rod to be attached")
    assert frozenset(("rod", "post")) in pairs_of(ur5.state_validity(request(is_diff=True)))
    assert ur5.state_validity(request(is_diff=False)).valid

    detach = rod()
    detach.object = CollisionObject(id="rod", operation=CollisionObject.REMOVE)
    ur5.publish(detach)
    rod_middle = along_rod(np.zeros(6), ROD_CENTER)
    wait_for(lambda: "rod" in ur5.objects_at(rod_middle), WAIT_S, "the rod to stay in the world", ur5.process)


# ------------------------------------------------------------------------------------------ frames, shapes
def test_objects_posed_in_tf_frames_and_subframes_with_meshes_and_planes(ur5):
    T_world_fixture = make_transform(rotation_about_axis(np.array([0.0, 0.0, 1.0]), math.pi / 2), (0.0, -2.0, 0.0))
    transform = TransformStamped(transform=transform_msg_from_transform(T_world_fixture))
    transform.header.frame_id, transform.child_frame_id = "world", "fixture"
    ur5.tf_static.publish(TFMessage(transforms=[transform]))
    wait_for(lambda: ur5.fk(fk_request(["tool0"], frame="fixture")).error_code.val == MoveItErrorCodes.SUCCESS,
             WAIT_S, "the node to know frame 'fixture' from /tf_static", ur5.process)

    holder = box("holder", (0.05, 0.05, 0.05), (0.5, 0.0, 0.0), frame="fixture")
    holder.subframe_names = ["slot"]
    holder.subframe_poses = [pose_msg(make_transform(None, (0.0, 0.0, 0.3)))]
    pin = sphere_object("pin", 0.03, (0.1, 0.0, 0.0), frame="holder/slot")
    tetrahedron = collision_object("tetrahedron", (2.0, -1.0, 0.5))
    corners = [(0.0, 0.0, 0.0), (0.2, 0.0, 0.0), (0.0, 0.2, 0.0), (0.0, 0.0, 0.2)]
    tetrahedron.meshes = [Mesh(vertices=[Point(x=x, y=y, z=z) for x, y, z in corners],
                               triangles=[MeshTriangle(vertex_indices=t) for t in
                                          ((0, 2, 1), (0, 1, 3), (0, 3, 2), (1, 2, 3))])]
    tetrahedron.mesh_poses = [Pose()]
    floor = collision_object("floor")
    floor.planes, floor.plane_poses = [Plane(coef=[0.0, 0.0, 1.0, 2.0])], [Pose()]  # z = -2
    ur5.publish(holder, pin, tetrahedron, floor)
    ur5.sync()

    T_world_holder = T_world_fixture @ make_transform(None, (0.5, 0.0, 0.0))
    assert ur5.objects_at(T_world_holder[:3, 3]) == {"holder"}
    pin_center = T_world_holder @ make_transform(None, (0.0, 0.0, 0.3)) @ np.array([0.1, 0.0, 0.0, 1.0])
    assert ur5.objects_at(pin_center[:3]) == {"pin"}, "posed in the holder's subframe"
    assert ur5.objects_at((2.05, -0.95, 0.5)) == {"tetrahedron"}, "a point on the mesh's bottom face"
    assert ur5.objects_at((1.0, 1.0, -2.0)) == {"floor"} and not ur5.objects_at((1.0, 1.0, -1.9))


MALFORMED = {
    "empty id": (lambda: box("", (0.1, 0.1, 0.1), (0.0, 0.0, 2.0)), "needs a non-empty id"),
    "more primitive poses than primitives": (lambda: _edited(box("box", (0.3, 0.3, 0.3), (0.0, 0.0, 2.0)),
                                                             primitive_poses=[Pose(), Pose()]),
                                             "1 primitives but 2 primitive_poses"),
    "negative size": (lambda: box("box", (0.3, -0.3, 0.3), (0.0, 0.0, 2.0)), "box size must be finite and > 0"),
    "unknown primitive type": (lambda: _edited(box("box", (0.3, 0.3, 0.3), (0.0, 0.0, 2.0)), primitives=[
        SolidPrimitive(type=9, dimensions=[0.1])]), "unsupported SolidPrimitive type 9"),
    "NaN pose": (lambda: collision_object("box", (math.nan, 0.0, 0.0), operation=CollisionObject.MOVE), "finite"),
    "unknown frame": (lambda: box("box", (0.3, 0.3, 0.3), (0.0, 0.0, 2.0), frame="no_such_frame"),
                      "unknown frame 'no_such_frame'"),
    "mesh index out of range": (lambda: _edited(collision_object("box"), meshes=[Mesh(
        vertices=[Point(), Point(x=1.0), Point(y=1.0)], triangles=[MeshTriangle(vertex_indices=[0, 1, 7])])],
        mesh_poses=[Pose()]), "triangle vertex indices must be within [0, 2]"),
    "subframe poses without names": (lambda: _edited(box("box", (0.3, 0.3, 0.3), (0.0, 0.0, 2.0)),
                                                     subframe_poses=[Pose()]), "0 subframe_names but 1 subframe_poses"),
    "move of a missing object": (lambda: collision_object("ghost", operation=CollisionObject.MOVE),
                                 "cannot move collision object 'ghost'"),
    "remove of a missing object": (lambda: remove("ghost"), "cannot remove world object 'ghost'"),
    "unknown operation": (lambda: _edited(box("box", (0.3, 0.3, 0.3), (0.0, 0.0, 2.0)), operation=bytes([7])),
                          "unknown operation 7"),
    "attach to an unknown link": (lambda: attached("box", "no_such_link", box("box", (0.1, 0.1, 0.1), (0, 0, 0))),
                                  "unknown link 'no_such_link'"),
}


def _edited(msg, **fields):
    for name, value in fields.items():
        setattr(msg, name, value)
    return msg


def test_malformed_updates_are_refused_with_the_reason_and_change_nothing(ur5):
    ur5.publish(box("box", ELBOW_BOX, elbow_position()))
    ur5.sync()
    blocked = state_validity_request(joints(Q_A))
    before = ur5.state_validity(blocked)
    assert not before.valid and any("box" in pair for pair in pairs_of(before))

    ur5.publish(*(make() for make, _ in MALFORMED.values()))
    ur5.sync()
    after = ur5.state_validity(blocked)
    assert [(c.contact_body_1, c.contact_body_2, c.depth) for c in after.contacts] == \
        [(c.contact_body_1, c.contact_body_2, c.depth) for c in before.contacts]
    assert [(c.position.x, c.position.y, c.position.z) for c in after.contacts] == \
        [(c.position.x, c.position.y, c.position.z) for c in before.contacts]
    assert ur5.objects_at((0.0, 0.0, 2.0)) == set() and ur5.objects_at(elbow_position()) == {"box"}
    for _, reason in MALFORMED.values():
        ur5.log_says(reason)
    assert "refused, the planning scene is unchanged" in ur5.process.output()


# ------------------------------------------------------------------------------------------ check_state_validity
def test_check_state_validity_reports_contacts_in_the_planning_frame(ur5):
    elbow = elbow_position()
    ur5.publish(box("box", ELBOW_BOX, elbow))
    ur5.sync()
    response = ur5.state_validity(state_validity_request(joints(Q_A)))
    assert not response.valid and response.contacts
    reference = {pair for pair in reference_world(box=(ELBOW_BOX, elbow)).colliding_pairs(joints(Q_A))}
    assert pairs_of(response) == reference
    half = np.array(ELBOW_BOX) / 2 + 0.01
    for contact in response.contacts:
        assert contact.header.frame_id == "world"
        assert {contact.body_type_1, contact.body_type_2} == {ContactInformation.ROBOT_LINK,
                                                              ContactInformation.WORLD_OBJECT}
        assert contact.depth >= 0.0
        assert abs(math.hypot(contact.normal.x, contact.normal.y, contact.normal.z) - 1.0) < 1e-6
        position = np.array([contact.position.x, contact.position.y, contact.position.z])
        assert np.all(np.abs(position - elbow) <= half), "contact outside the box"


def test_check_state_validity_limits_the_check_to_the_group(ur5):
    """The box touches the upper arm and forearm, which the wrist group's joints do not move."""
    ur5.publish(box("box", ELBOW_BOX, elbow_position()))
    ur5.sync()
    for group, valid in (("", False), (GROUP, False), ("wrist", True)):
        response = ur5.state_validity(state_validity_request(joints(Q_A), group=group))
        assert response.valid == valid, (group, pairs_of(response))
        assert bool(response.contacts) != valid


def test_check_state_validity_checks_joint_limits_and_constraints(ur5):
    beyond = {**joints(Q_A), "elbow_joint": 3.3}
    assert not ur5.state_validity(state_validity_request(beyond)).valid
    ur5.log_says("joint 'elbow_joint' = 3.3 outside its limits")

    tool = link_pose(Q_A, "tool0")
    region = PositionConstraint(link_name="tool0", weight=1.0, constraint_region=BoundingVolume(
        primitives=[SolidPrimitive(type=SolidPrimitive.SPHERE, dimensions=[0.05])],
        primitive_poses=[pose_msg(make_transform(None, tool[:3, 3] + [0.0, 0.0, 0.02]))]))
    for elbow_target, valid in ((Q_A[2] + 0.05, True), (Q_A[2] + 0.5, False)):
        request = state_validity_request(joints(Q_A))
        request.constraints.joint_constraints = [JointConstraint(
            joint_name="elbow_joint", position=elbow_target, tolerance_above=0.1, tolerance_below=0.1, weight=1.0)]
        request.constraints.position_constraints = [region]
        response = ur5.state_validity(request)
        assert response.valid == valid
        results = [(r.result, r.distance) for r in response.constraint_result]
        assert [r for r, _ in results] == [valid, True]
        assert results[0][1] == pytest.approx(abs(elbow_target - Q_A[2]), abs=1e-9)
        assert results[1][1] == pytest.approx(0.02, abs=1e-6)


@pytest.mark.parametrize("edit, reason", [
    (lambda r: setattr(r, "group_name", "no_such_group"), "unknown group 'no_such_group'"),
    (lambda r: r.robot_state.joint_state.name.__setitem__(0, "no_such_joint"), "no_such_joint"),
    (lambda r: r.robot_state.joint_state.position.__setitem__(0, math.nan),
     "positions are not finite for ['shoulder_pan_joint']"),
])
def test_check_state_validity_of_a_bad_request_is_invalid_with_a_logged_reason(ur5, edit, reason):
    request = state_validity_request(joints(Q_A))
    edit(request)
    response = ur5.state_validity(request)
    assert not response.valid and not response.contacts and not response.constraint_result
    ur5.log_says(reason)


# ------------------------------------------------------------------------------------------ new descriptions
def test_a_new_robot_description_rebuilds_the_checker_and_keeps_the_world(ur5):
    """A UR5 without collision geometry (the bundled one stripped of its primitives): collision checking becomes
    unavailable (with the reason); back on the real UR5 it works again, and the world objects were kept
    throughout."""
    elbow = elbow_position()
    ur5.publish(box("box", ELBOW_BOX, elbow))
    ur5.sync()
    target = link_pose(Q_A, "tool0")
    bare = without_collision_geometry(bundled_robot_path("ur5").read_text())
    (result,) = ur5.set_parameters(robot_description=bare)
    assert result.successful, result.reason
    try:
        error = collision_ik(ur5, target, Q_A + 0.05).error_code
        assert error.val == MoveItErrorCodes.COLLISION_CHECKING_UNAVAILABLE, error.message
        assert "no <collision> geometry" in error.message
    finally:
        (result,) = ur5.set_parameters(robot_description=URDF)
        assert result.successful, result.reason
    assert ur5.objects_at(elbow) == {"box"}
    assert not np.allclose(solved(collision_ik(ur5, target, Q_A + 0.05), target), Q_A, atol=0.1)
