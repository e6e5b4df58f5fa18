"""kinematics_node fed by topics: robot_description and robot_description_semantic arriving (and changing) on
their transient-local topics, several tips, and poses in frames known only to TF (/tf, /tf_static).

The robot is test/data/urdf/tree.urdf: a lifting torso with two 3-joint arms. The tests of this module
share one node and run in file order; the last one replaces the robot.
"""
from __future__ import annotations

import numpy as np
import pytest
from geometry_msgs.msg import PoseStamped, TransformStamped
from moveit_msgs.msg import MoveItErrorCodes
from node_harness import (
    TREE_URDF,
    NodeUnderTest,
    fk_request,
    ik_request,
    module_processes,  # noqa: F401 (fixture)
    pose_msg,
    poses_close,
    solution_values,
    start_node,
    transform_of_pose_stamped,
    wait_for,
)
from rclpy.duration import Duration
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from robots import TREE_SRDF
from std_msgs.msg import String
from tf2_msgs.msg import TFMessage

from kinematics_py.geometry.transforms import make_transform, rotation_about_axis
from kinematics_py.model.robot_model import RobotModel
from kinematics_py.robots import bundled_robot_path
from kinematics_py.ros.messages.conversions import transform_msg_from_transform

LATCHED = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL)
MODEL = RobotModel.from_urdf_file(TREE_URDF)
ARMS_JOINTS = ("torso_lift_joint", "left_shoulder_joint", "right_shoulder_joint", "left_upper_arm_joint",
               "right_upper_arm_joint", "left_elbow_joint", "right_elbow_joint")
TOLERANCE_M = 2e-5
TOLERANCE_RAD = 2e-5
WAIT_S = 30.0
T_TORSO_CAMERA = make_transform(rotation_about_axis(np.array([0.0, 1.0, 0.0]), 0.7), (0.6, -0.2, 1.4))
T_CAMERA_MARKER = make_transform(rotation_about_axis(np.array([0.0, 0.0, 1.0]), -0.5), (0.1, 0.3, 0.9))


class TreeNode(NodeUnderTest):
    def __init__(self, process, namespace):
        super().__init__(process, namespace)
        self.description = self.node.create_publisher(String, f"{namespace}/robot_description", LATCHED)
        self.semantic = self.node.create_publisher(String, f"{namespace}/robot_description_semantic", LATCHED)
        self.tf_static = self.node.create_publisher(TFMessage, "/tf_static", LATCHED)
        self.tf = self.node.create_publisher(TFMessage, "/tf", 10)

    def group_served(self, group: str):
        def check():
            response = self.ik(ik_request(group, np.eye(4), link="no_such_link"))
            return response.error_code.val not in (MoveItErrorCodes.INVALID_GROUP_NAME, MoveItErrorCodes.FAILURE)
        return check


@pytest.fixture(scope="module")
def tree_node(module_processes, tmp_path_factory):  # noqa: F811
    parameters = {"base_frame": "torso", "tip_frame": "left_tcp",
                  "collision_checking_unavailable_policy": "ignore_with_warning"}
    process, namespace = start_node(module_processes, tmp_path_factory.mktemp("tree"), parameters, "tree_node")
    node = TreeNode(process, namespace)
    try:
        assert node.client.wait_for_services(240.0), process.output()
        yield node
        node.assert_alive()
    finally:
        node.close()


@pytest.fixture
def tree(tree_node):
    """The node with tree.urdf and its SRDF (both from the topics)."""
    tree_node.description.publish(String(data=TREE_URDF.read_text()))
    tree_node.semantic.publish(String(data=TREE_SRDF))
    wait_for(tree_node.group_served("arms"), WAIT_S, "group 'arms' from the SRDF topic", tree_node.process)
    return tree_node


def random_state(seed: int) -> dict[str, float]:
    rng = np.random.default_rng(seed)
    return {name: float(rng.uniform(MODEL.joints[name].lower, MODEL.joints[name].upper))
            for name in MODEL.single_dof_joint_names}


def middle(names) -> dict[str, float]:
    return {name: (MODEL.joints[name].lower + MODEL.joints[name].upper) / 2 for name in names}


def multi_tip_request(targets: dict[str, np.ndarray], seed: dict[str, float], frame: str = "torso"):
    request = ik_request("arms", np.eye(4), seed=seed, timeout=1.0)
    ik = request.ik_request
    for link, T in targets.items():
        pose = PoseStamped()
        pose.header.frame_id = frame
        pose.pose = pose_msg(T)
        ik.pose_stamped_vector.append(pose)
        ik.ik_link_names.append(link)
    return request


def assert_reaches(response, targets: dict[str, np.ndarray], fixed: dict[str, float] | None = None) -> None:
    assert response.error_code.val == MoveItErrorCodes.SUCCESS, response.error_code.message
    poses = MODEL.link_poses({**(fixed or {}), **solution_values(response)})
    for link, T in targets.items():
        assert poses_close(poses[link], T, TOLERANCE_M, TOLERANCE_RAD), link


# ------------------------------------------------------------------------------------------ descriptions
def test_descriptions_arrive_by_topic(tree_node):
    response = tree_node.fk(fk_request(["left_tcp"]))
    assert response.error_code.val == MoveItErrorCodes.FAILURE
    assert "no robot description" in response.error_code.message

    tree_node.description.publish(String(data=TREE_URDF.read_text()))
    tree_node.wait_serving("left_tcp", WAIT_S)
    # Without an SRDF: one group, 'arm' (the group_name default), from base_frame and tip_frame.
    state = random_state(1)
    target = MODEL.link_poses(state)["left_tcp"]
    arm = ("torso_lift_joint", "left_shoulder_joint", "left_upper_arm_joint", "left_elbow_joint")
    assert_reaches(tree_node.ik(ik_request("arm", target, seed=middle(arm), timeout=1.0)), {"left_tcp": target})

    tree_node.semantic.publish(String(data=TREE_SRDF))
    wait_for(tree_node.group_served("arms"), WAIT_S, "group 'arms' from the SRDF topic", tree_node.process)
    response = tree_node.ik(ik_request("arm", target))
    assert response.error_code.val == MoveItErrorCodes.INVALID_GROUP_NAME
    assert "'arms'" in response.error_code.message and "'left_arm'" in response.error_code.message
    response = tree_node.ik(ik_request("left_gripper", target))
    assert response.error_code.val == MoveItErrorCodes.INVALID_GROUP_NAME
    assert "not served" in response.error_code.message


# ------------------------------------------------------------------------------------------ several tips
def test_several_tips_in_any_order(tree):
    poses = MODEL.link_poses(random_state(2))
    targets = {"left_tcp": poses["left_tcp"], "right_tcp": poses["right_tcp"]}
    assert_reaches(tree.ik(multi_tip_request(targets, middle(ARMS_JOINTS))), targets)
    reversed_targets = dict(reversed(list(targets.items())))
    assert_reaches(tree.ik(multi_tip_request(reversed_targets, middle(ARMS_JOINTS))), targets)


def test_ik_links_rigidly_attached_to_tips(tree):
    """left_gripper is fixed to left_tcp; left_finger_a moves only by a finger joint, held at the seed."""
    state = random_state(3)
    poses = MODEL.link_poses(state)
    targets = {"left_gripper": poses["left_gripper"], "right_tcp": poses["right_tcp"]}
    assert_reaches(tree.ik(multi_tip_request(targets, middle(ARMS_JOINTS))), targets)
    fingers = {"left_finger_a_joint": state["left_finger_a_joint"]}
    targets = {"left_finger_a": poses["left_finger_a"], "right_tcp": poses["right_tcp"]}
    assert_reaches(tree.ik(multi_tip_request(targets, {**middle(ARMS_JOINTS), **fingers})), targets, fingers)


@pytest.mark.parametrize("links, words", [
    (["left_tcp"], ["no pose for tip", "right_tcp"]),
    (["left_tcp", "left_gripper"], ["two poses", "left_tcp"]),
    (["left_tcp", "head"], ["head", "rigidly attached"]),
    (["left_tcp", ""], ["name the IK link"]),
])
def test_several_tips_bad_links_are_invalid_link_name(tree, links, words):
    poses = MODEL.link_poses(random_state(4))
    request = multi_tip_request({link or "left_tcp": poses["left_tcp"] for link in links}, middle(ARMS_JOINTS))
    request.ik_request.ik_link_names = links
    request.ik_request.pose_stamped_vector = request.ik_request.pose_stamped_vector[:1] * len(links)
    response = tree.ik(request)
    assert response.error_code.val == MoveItErrorCodes.INVALID_LINK_NAME, response.error_code.message
    for word in words:
        assert word in response.error_code.message


def test_solve_ik_with_srv_kinematics_plugins_several_tip_request(tree):
    """Full seed state, poses in the base frame with ik_link_names = tips, zero timeout, avoid_collisions=true
    (this node runs with collision_checking_unavailable_policy = ignore_with_warning)."""
    state = random_state(5)
    poses = MODEL.link_poses(state)
    targets = {"left_tcp": poses["left_tcp"], "right_tcp": poses["right_tcp"]}
    request = multi_tip_request(targets, random_state(6))
    request.ik_request.timeout.sec = 0
    request.ik_request.avoid_collisions = True
    response = tree.solve_ik(request)
    assert_reaches(response, targets)
    assert "collisions NOT checked" in response.error_code.message
    assert sorted(solution_values(response)) == sorted(MODEL.single_dof_joint_names)


# ------------------------------------------------------------------------------------------ TF frames
def stamped(parent: str, child: str, T: np.ndarray) -> TransformStamped:
    transform = TransformStamped(transform=transform_msg_from_transform(T))
    transform.header.frame_id, transform.child_frame_id = parent, child
    return transform


def test_poses_in_tf_frames(tree):
    tree.tf_static.publish(TFMessage(transforms=[stamped("torso", "camera", T_TORSO_CAMERA),
                                                 stamped("moon", "rock", np.eye(4))]))
    T_torso_marker = T_TORSO_CAMERA @ T_CAMERA_MARKER
    state = random_state(7)
    T_torso_tcp = MODEL.link_poses(state)["left_tcp"]

    def fk_in_marker_matches(T_camera_marker):
        expected = np.linalg.inv(T_TORSO_CAMERA @ T_camera_marker) @ T_torso_tcp

        def check():
            tree.tf.publish(TFMessage(transforms=[stamped("camera", "marker", T_camera_marker)]))
            response = tree.fk(fk_request(["left_tcp"], state, frame="marker"))
            return response.error_code.val == MoveItErrorCodes.SUCCESS and \
                poses_close(transform_of_pose_stamped(response.pose_stamped[0]), expected, 1e-9, 1e-7)
        return check

    wait_for(fk_in_marker_matches(T_CAMERA_MARKER), WAIT_S, "the node to know frame 'marker'")
    left_arm = ("torso_lift_joint", "left_shoulder_joint", "left_upper_arm_joint", "left_elbow_joint")
    request = ik_request("left_arm", np.linalg.inv(T_torso_marker) @ T_torso_tcp, frame="marker",
                         seed=middle(left_arm), timeout=1.0)
    assert_reaches(tree.ik(request), {"left_tcp": T_torso_tcp})

    # /tf updates move the frame.
    moved = make_transform(rotation_about_axis(np.array([1.0, 0.0, 0.0]), 0.3), (-0.2, 0.1, 0.5))
    wait_for(fk_in_marker_matches(moved), WAIT_S, "the node to take the moved 'marker'")

    # tf2's wording, from tf2_ros or the node's own listener alike.
    for frame, words in (("nowhere", ['"nowhere"', "does not exist"]), ("rock", ["Could not find a connection"])):
        response = tree.fk(fk_request(["left_tcp"], state, frame=frame))
        assert response.error_code.val == MoveItErrorCodes.FRAME_TRANSFORM_FAILURE
        assert all(word in response.error_code.message for word in words), response.error_code.message


def test_a_stale_frame_under_a_moving_frame_is_a_frame_transform_failure(tree):
    """A frame published once, 20 s ago, under a frame that keeps moving: the chain's latest common time is
    older than the moving frame's 10 s cache, so tf2 (and the node's own listener) extrapolate into the past."""
    now = tree.node.get_clock().now()
    tree.tf_static.publish(TFMessage(transforms=[stamped("torso", "camera", T_TORSO_CAMERA)]))

    def at(transform: TransformStamped, seconds_ago: float) -> TransformStamped:
        transform.header.stamp = (now - Duration(seconds=seconds_ago)).to_msg()
        return transform

    tree.tf.publish(TFMessage(transforms=[at(stamped("camera", "turntable", np.eye(4)), 20.0),
                                          at(stamped("turntable", "parcel", T_CAMERA_MARKER), 20.0)]))
    for seconds_ago in (1.0, 0.0):
        tree.tf.publish(TFMessage(transforms=[at(stamped("camera", "turntable", np.eye(4)), seconds_ago)]))
    tree.tf.publish(TFMessage(transforms=[at(stamped("turntable", "fresh_parcel", T_CAMERA_MARKER), 0.5)]))
    state = random_state(3)

    def answer(frame: str):
        def check():
            response = tree.fk(fk_request(["left_tcp"], state, frame=frame))
            return response if "does not exist" not in response.error_code.message else None
        return wait_for(check, WAIT_S, f"the node to know frame {frame!r}")

    fresh = answer("fresh_parcel")
    assert fresh.error_code.val == MoveItErrorCodes.SUCCESS, fresh.error_code.message
    stale = answer("parcel")
    assert stale.error_code.val == MoveItErrorCodes.FRAME_TRANSFORM_FAILURE
    assert "extrapolation into the past" in stale.error_code.message, stale.error_code.message


@pytest.mark.parametrize("joint_type", ["planar", "floating"])
def test_planar_and_floating_virtual_joints_are_read_from_tf(tree, joint_type):
    """As MoveIt's current state monitor: the value of a planar or floating SRDF virtual joint is the TF
    transform parent frame -> root link (a fixed one is the identity: test_node_services)."""
    odom = f"odom_{joint_type}"
    virtual_joint = f'<virtual_joint name="base_joint" type="{joint_type}" parent_frame="{odom}" child_link="torso"/>'
    tree.semantic.publish(String(data=TREE_SRDF.replace("</robot>", f"  {virtual_joint}\n</robot>")))
    state = random_state(11)
    T_torso_tcp = MODEL.link_poses(state)["left_tcp"]

    def fk_in_odom():
        response = tree.fk(fk_request(["left_tcp"], state, frame=odom))
        return response if f"{joint_type} virtual joint 'base_joint'" in response.error_code.message else None

    unknown = wait_for(fk_in_odom, WAIT_S, "the SRDF with the virtual joint", tree.process)
    assert unknown.error_code.val == MoveItErrorCodes.FRAME_TRANSFORM_FAILURE

    T_odom_torso = make_transform(rotation_about_axis(np.array([0.0, 0.0, 1.0]), 0.4 + len(joint_type)),
                                  (1.5, -0.5, 0.0))
    tree.tf.publish(TFMessage(transforms=[stamped(odom, "torso", T_odom_torso)]))

    def fk_succeeds():
        tree.tf.publish(TFMessage(transforms=[stamped(odom, "torso", T_odom_torso)]))
        response = tree.fk(fk_request(["left_tcp"], state, frame=f"/{odom}"))
        return response if response.error_code.val == MoveItErrorCodes.SUCCESS else None

    fk = wait_for(fk_succeeds, WAIT_S, f"the node to read {odom} -> torso from TF")
    assert fk.pose_stamped[0].header.frame_id == odom, "the leading slash is dropped, as tf2 does"
    assert poses_close(transform_of_pose_stamped(fk.pose_stamped[0]), T_odom_torso @ T_torso_tcp, 1e-9, 1e-7)
    left_arm = ("torso_lift_joint", "left_shoulder_joint", "left_upper_arm_joint", "left_elbow_joint")
    request = ik_request("left_arm", T_odom_torso @ T_torso_tcp, frame=odom, seed=middle(left_arm), timeout=1.0)
    assert_reaches(tree.ik(request), {"left_tcp": T_torso_tcp})


# ------------------------------------------------------------------------------------------ a new robot
def test_a_new_robot_description_reinitialises(tree):
    """Last in this module: it replaces the robot."""
    tree.description.publish(String(data=bundled_robot_path("ur5").read_text()))
    tree.semantic.publish(String(data=bundled_robot_path("ur5", "srdf").read_text()))
    wait_for(tree.group_served("ur_manipulator"), WAIT_S, "group 'ur_manipulator' of the new robot", tree.process)
    response = tree.fk(fk_request(["left_tcp", "tool0"]))
    assert response.error_code.val == MoveItErrorCodes.INVALID_LINK_NAME
    assert list(response.fk_link_names) == ["tool0"]
    ur5 = RobotModel.from_urdf_file(bundled_robot_path("ur5"))
    target = ur5.link_poses({"elbow_joint": 1.0, "shoulder_lift_joint": -1.0})["tool0"]
    response = tree.ik(ik_request("ur_manipulator", target, seed={"elbow_joint": 0.9}))
    assert response.error_code.val == MoveItErrorCodes.SUCCESS, response.error_code.message
    tree.assert_alive()

