"""Hostile but well-formed input over DDS never reaches an internal error (issue 9, items 1, 6 and 7).

Quaternions of any finite magnitude are rotations in compute_ik (goal and orientation constraints), compute_fk
(TF frames), check_state_validity (attached objects, constraint regions) and collision_object; zero or
non-finite ones stay INVALID_GOAL_CONSTRAINTS. Absurd coordinates and sizes are refused with the world
unchanged; absurdly far IK goals are NO_IK_SOLUTION, as any unreachable goal. A mesh path escaping its package
is refused without echoing what it resolves to.
"""
from __future__ import annotations

import importlib.util
import math

import numpy as np
import pytest
from geometry_msgs.msg import Point, Pose, TransformStamped
from moveit_msgs.msg import BoundingVolume, CollisionObject, MoveItErrorCodes, OrientationConstraint, PositionConstraint
from node_harness import (
    fk_request,
    ik_request,
    module_processes,  # noqa: F401 (fixture)
    poses_close,
    state_validity_request,
    transform_of_pose_stamped,
    wait_for,
)
from shape_msgs.msg import Mesh, MeshTriangle, SolidPrimitive
from test_node_collision import (
    ELBOW_BOX,
    GROUP,
    Q_A,
    URDF,
    WAIT_S,
    _edited,
    attached,
    box,
    collision_ik,
    collision_object,
    elbow_position,
    joints,
    link_pose,
    remove,
    scene_node,  # noqa: F401 (fixture)
    solved,
    sphere_object,
)
from tf2_msgs.msg import TFMessage

from kinematics_py.geometry.transforms import make_transform, rotation_about_axis
from kinematics_py.ros.messages.conversions import transform_msg_from_transform

HUGE = 1e200

#: The node uses real tf2_ros where it is importable (a ROS 2 install), else its own /tf listener.
TF2_ROS_INSTALLED = importlib.util.find_spec("tf2_ros") is not None


@pytest.fixture
def node(scene_node):  # noqa: F811
    """The node on the UR5 with an empty world."""
    scene_node.publish(remove(""))
    scene_node.sync()
    return scene_node


def huge(quaternion) -> tuple[float, ...]:
    return tuple(HUGE * v for v in quaternion)


def set_orientation(orientation, values) -> None:
    orientation.x, orientation.y, orientation.z, orientation.w = values


def quaternion_of(orientation) -> tuple[float, ...]:
    return orientation.x, orientation.y, orientation.z, orientation.w


# ------------------------------------------------------------------------------------------ compute_ik
def test_compute_ik_with_a_huge_quaternion_solves_with_and_without_collisions(node):
    target = link_pose(Q_A, "tool0")
    for avoid_collisions in (False, True):
        request = ik_request(GROUP, target, seed=joints(Q_A + 0.05), timeout=0.5, avoid_collisions=avoid_collisions)
        orientation = request.ik_request.pose_stamped.pose.orientation
        set_orientation(orientation, huge(quaternion_of(orientation)))
        solved(node.ik(request), target)


def test_compute_ik_orientation_constraint_with_a_huge_quaternion_is_that_orientation(node):
    target = link_pose(Q_A, "tool0")
    request = ik_request(GROUP, target, seed=joints(Q_A + 0.05), timeout=0.5)
    constraint = OrientationConstraint(link_name="tool0", absolute_x_axis_tolerance=0.01,
                                       absolute_y_axis_tolerance=0.01, absolute_z_axis_tolerance=0.01, weight=1.0)
    constraint.header.frame_id = "base_link"
    set_orientation(constraint.orientation, huge(quaternion_of(request.ik_request.pose_stamped.pose.orientation)))
    request.ik_request.constraints.orientation_constraints = [constraint]
    solved(node.ik(request), target)


def test_compute_ik_refuses_zero_and_non_finite_quaternions_and_finds_nothing_absurdly_far(node):
    for values in ((0.0, 0.0, 0.0, 0.0), (0.0, 0.0, math.inf, 1.0), (math.nan, 0.0, 0.0, 1.0)):
        request = ik_request(GROUP, link_pose(Q_A, "tool0"), seed=joints(Q_A), timeout=0.05)
        set_orientation(request.ik_request.pose_stamped.pose.orientation, values)
        error = node.ik(request).error_code
        assert error.val == MoveItErrorCodes.INVALID_GOAL_CONSTRAINTS, error.message
    for position in ((0.0, 0.0, 1e308), (1e5, 0.0, 0.0)):
        error = node.ik(ik_request(GROUP, make_transform(None, position), seed=joints(Q_A), timeout=0.05)).error_code
        assert error.val == MoveItErrorCodes.NO_IK_SOLUTION, error.message


# ------------------------------------------------------------------------------------------ compute_fk
def test_compute_fk_in_a_tf_frame_with_a_huge_quaternion(node):
    T_world_frame = make_transform(rotation_about_axis(np.array([0.0, 0.0, 1.0]), math.pi / 2), (0.0, -2.0, 0.0))
    transform = TransformStamped(transform=transform_msg_from_transform(T_world_frame))
    transform.header.frame_id, transform.child_frame_id = "world", "huge_quaternion_frame"
    set_orientation(transform.transform.rotation, huge(quaternion_of(transform.transform.rotation)))
    node.tf_static.publish(TFMessage(transforms=[transform]))
    request = fk_request(["tool0"], joints(Q_A), frame="huge_quaternion_frame")
    wait_for(lambda: node.fk(request).error_code.val == MoveItErrorCodes.SUCCESS, WAIT_S,
             "the node to know frame 'huge_quaternion_frame' from /tf_static", node.process)
    (pose,) = node.fk(request).pose_stamped
    T_frame_tool = transform_of_pose_stamped(pose)
    if TF2_ROS_INSTALLED:
        # The node looks the frame up through real tf2, which stores such a quaternion its own way: what is
        # ours to promise is a well-formed answer (a finite rigid transform), not tf2's rotation.
        R = T_frame_tool[:3, :3]
        assert np.isfinite(T_frame_tool).all() and np.allclose(R @ R.T, np.eye(3), atol=1e-9)
        return
    expected = np.linalg.inv(T_world_frame) @ link_pose(Q_A, "tool0")
    assert poses_close(T_frame_tool, expected, 1e-12, 1e-7)


# ------------------------------------------------------------------------------------------ check_state_validity
def test_check_state_validity_with_huge_quaternions_in_attached_objects_and_constraint_regions(node):
    request = state_validity_request(joints(Q_A))
    request.robot_state.is_diff = True
    held = sphere_object("held", 0.01, (0.0, 0.0, 0.05), frame="tool0")
    set_orientation(held.pose.orientation, (0.0, 0.0, HUGE, HUGE))
    request.robot_state.attached_collision_objects = [attached("held", "tool0", held, ["wrist_3_link", "ee_link"])]
    tool = link_pose(Q_A, "tool0")
    region = Pose()
    region.position.x, region.position.y, region.position.z = (float(v) for v in tool[:3, 3])
    set_orientation(region.orientation, (1.7e308, 0.0, 0.0, 0.0))
    request.constraints.position_constraints = [PositionConstraint(
        link_name="tool0", weight=1.0, constraint_region=BoundingVolume(
            primitives=[SolidPrimitive(type=SolidPrimitive.BOX, dimensions=[0.05, 0.05, 0.05])],
            primitive_poses=[region]))]
    response = node.state_validity(request)
    assert response.valid, [(c.contact_body_1, c.contact_body_2) for c in response.contacts]
    assert [r.result for r in response.constraint_result] == [True]


def test_check_state_validity_refuses_an_absurdly_placed_attached_object(node):
    request = state_validity_request(joints(Q_A))
    request.robot_state.is_diff = True
    request.robot_state.attached_collision_objects = [
        attached("far", "tool0", sphere_object("far", 0.01, (0.0, 0.0, 1e308), frame="tool0"))]
    response = node.state_validity(request)
    assert not response.valid and not response.contacts
    node.log_says("position must lie within +-MAX_COORDINATE = 10000 m; got a coordinate of magnitude 1e+308")


# ------------------------------------------------------------------------------------------ collision_object
def test_collision_object_with_a_huge_quaternion_is_placed_with_that_rotation(node):
    elbow = np.array(elbow_position())
    turned = box("turned", (0.6, 0.02, 0.02), elbow - (0.0, 0.25, 0.0))  # a thin bar along x, turned onto y
    set_orientation(turned.pose.orientation, (0.0, 0.0, HUGE, HUGE))
    node.publish(turned)
    node.sync()
    assert node.objects_at(elbow - (0.0, 0.5, 0.0)) == {"turned"}
    assert node.objects_at(elbow - (0.25, 0.25, 0.0)) == set()


ABSURD = {
    "box at z = 1e308": (lambda: box("absurd", (0.1, 0.1, 0.1), (0.0, 0.0, 1e308)),
                         "position must lie within +-MAX_COORDINATE = 10000 m; got a coordinate of magnitude 1e+308"),
    "box size 1e300": (lambda: box("absurd", (1e300, 0.1, 0.1), (0.0, 0.0, 2.0)),
                       "box size must be at most MAX_SIZE = 10000 m; got 1e+300"),
    "mesh vertex at 1e307": (lambda: _edited(collision_object("absurd"), meshes=[Mesh(
        vertices=[Point(), Point(x=1.0), Point(y=1e307)], triangles=[MeshTriangle(vertex_indices=[0, 1, 2])])],
        mesh_poses=[Pose()]), "vertices must lie within +-MAX_COORDINATE = 10000 m; got a coordinate of magnitude "
                              "1e+307"),
    "move the box to 2e4": (lambda: collision_object("box", (2e4, 0.0, 0.0), operation=CollisionObject.MOVE),
                            "magnitude 20000"),
}


def test_absurd_collision_objects_are_refused_with_the_reason_and_change_nothing(node):
    node.publish(box("box", ELBOW_BOX, elbow_position()))
    node.sync()
    node.publish(*(make() for make, _ in ABSURD.values()))
    node.sync()
    assert node.objects_at(elbow_position()) == {"box"} and node.objects_at((0.0, 0.0, 2.0)) == set()
    for _, reason in ABSURD.values():
        node.log_says(reason)


# ------------------------------------------------------------------------------------------ mesh paths
def test_a_mesh_path_escaping_its_package_is_refused_without_echoing_where_it_leads(node):
    uri = "package://kinematics_py/../../../../etc/passwd"
    hostile = URDF.replace("</robot>", f'<link name="spy"><collision><geometry><mesh filename="{uri}"/></geometry>'
                                       '</collision></link><joint name="spy_joint" type="fixed"><parent link='
                                       '"base_link"/><child link="spy"/></joint></robot>')
    (result,) = node.set_parameters(robot_description=hostile)
    assert result.successful, result.reason
    try:
        error = collision_ik(node, link_pose(Q_A, "tool0"), Q_A + 0.05).error_code
        assert error.val == MoveItErrorCodes.COLLISION_CHECKING_UNAVAILABLE, error.message
        assert f"cannot read mesh {uri!r}: not a readable mesh file" in error.message
        assert "/etc/passwd" not in error.message.replace(uri, "")
    finally:
        (result,) = node.set_parameters(robot_description=URDF)
        assert result.successful, result.reason
    solved(collision_ik(node, link_pose(Q_A, "tool0"), Q_A + 0.05), link_pose(Q_A, "tool0"))
