"""The node's building blocks without DDS: message conversions, request constraints, the /tf listener, parameters."""
from __future__ import annotations

import math

import numpy as np
import pytest
from geometry_msgs.msg import Point, Pose, TransformStamped
from moveit_msgs.msg import (
    BoundingVolume,
    CollisionObject,
    Constraints,
    JointConstraint,
    OrientationConstraint,
    PositionConstraint,
    RobotState,
)
from shape_msgs.msg import Mesh, MeshTriangle, Plane, SolidPrimitive
from tf2_msgs.msg import TFMessage

from kinematics_py.collision.scene import Operation, SceneError
from kinematics_py.errors import ErrorCode, RequestError
from kinematics_py.geometry.transforms import make_transform, rotation_about_axis
from kinematics_py.model import constraints as state_constraints
from kinematics_py.model.constraints import xyz_euler_angles
from kinematics_py.model.robot_model import RobotModel
from kinematics_py.parameters import ParameterError, validate_node_parameter
from kinematics_py.robots import bundled_robot_path
from kinematics_py.ros.frames import FrameLookupError, TfMessageListener
from kinematics_py.ros.messages.constraints import constraints_from_msg
from kinematics_py.ros.messages.conversions import (
    collision_object_update,
    joint_values_from_robot_state,
    pose_msg_from_transform,
    transform_from_pose_msg,
    transform_msg_from_transform,
)
from kinematics_py.ros.node_parameters import split_kinematics_parameter

UR5 = RobotModel.from_urdf_file(bundled_robot_path("ur5"))
X, Y, Z = np.eye(3)
EXACT = 1e-12


def random_transform(rng) -> np.ndarray:
    axis = rng.normal(size=3)
    return make_transform(rotation_about_axis(axis / np.linalg.norm(axis), rng.uniform(-np.pi, np.pi)),
                          rng.uniform(-1, 1, 3))


def test_pose_and_transform_messages_round_trip():
    rng = np.random.default_rng(0)
    for _ in range(20):
        T = random_transform(rng)
        assert np.allclose(transform_from_pose_msg(pose_msg_from_transform(T)), T, atol=EXACT)


def test_unusable_poses_are_invalid_goal_constraints():
    pose = Pose()
    pose.orientation.w = 0.0
    with pytest.raises(RequestError) as error:
        transform_from_pose_msg(pose)
    assert error.value.code == ErrorCode.INVALID_GOAL_CONSTRAINTS


def test_the_ros_free_constraints_use_the_messages_constants():
    """model.constraints keeps its own copies of shape_msgs' and moveit_msgs' constants (it imports no message)."""
    assert (state_constraints.BOX, state_constraints.SPHERE, state_constraints.CYLINDER) == (
        SolidPrimitive.BOX, SolidPrimitive.SPHERE, SolidPrimitive.CYLINDER)
    assert (state_constraints.CYLINDER_HEIGHT, state_constraints.CYLINDER_RADIUS) == (
        SolidPrimitive.CYLINDER_HEIGHT, SolidPrimitive.CYLINDER_RADIUS)
    assert (state_constraints.XYZ_EULER_ANGLES, state_constraints.ROTATION_VECTOR) == (
        OrientationConstraint.XYZ_EULER_ANGLES, OrientationConstraint.ROTATION_VECTOR)


def test_xyz_euler_angles_invert_rx_ry_rz():
    rng = np.random.default_rng(1)
    for a, b, c in rng.uniform([-np.pi, -np.pi / 2, -np.pi], [np.pi, np.pi / 2, np.pi], (50, 3)):
        R = rotation_about_axis(X, a) @ rotation_about_axis(Y, b) @ rotation_about_axis(Z, c)
        assert np.allclose(xyz_euler_angles(R), (a, b, c), atol=1e-9)


def test_robot_state_values_are_strictly_checked():
    state = RobotState()
    state.joint_state.name = ["elbow_joint", "wrist_1_joint"]
    state.joint_state.position = [0.5, -0.25]
    assert joint_values_from_robot_state(state, UR5) == {"elbow_joint": 0.5, "wrist_1_joint": -0.25}
    state.joint_state.name = ["elbow_joint", "gripper_joint"]
    with pytest.raises(RequestError) as error:
        joint_values_from_robot_state(state, UR5)
    assert error.value.code == ErrorCode.INVALID_ROBOT_STATE and "gripper_joint" in str(error.value)


def _region(shape: int, dimensions, center, frame: str = "") -> Constraints:
    constraint = PositionConstraint(link_name="tool0", constraint_region=BoundingVolume(
        primitives=[SolidPrimitive(type=shape, dimensions=list(dimensions))],
        primitive_poses=[pose_msg_from_transform(make_transform(None, center))]))
    constraint.header.frame_id = frame
    return Constraints(position_constraints=[constraint])


@pytest.mark.parametrize("shape, dimensions, inside, outside", [
    (SolidPrimitive.BOX, (0.2, 0.1, 0.4), (0.09, -0.04, 0.19), (0.09, 0.06, 0.0)),
    (SolidPrimitive.SPHERE, (0.1,), (0.05, 0.05, 0.05), (0.06, 0.06, 0.06)),
    (SolidPrimitive.CYLINDER, (0.4, 0.1), (0.07, 0.07, 0.19), (0.0, 0.0, 0.21)),
])
def test_position_regions_contain_exactly_their_points(shape, dimensions, inside, outside):
    values = UR5.resolve_joint_values({})
    tool = UR5.link_poses(values)["tool0"][:3, 3]
    for offset, expected in ((inside, None), (outside, "outside")):
        constraints = constraints_from_msg(_region(shape, dimensions, tool - np.array(offset)), UR5,
                                           lambda frame: np.eye(4))
        reason = constraints.violation(values, UR5)
        assert (reason is None) if expected is None else (expected in reason)


def test_orientation_constraints_measure_each_axis():
    values = UR5.resolve_joint_values({})
    R_tool = UR5.link_poses(values)["tool0"][:3, :3]
    for parameterization in (OrientationConstraint.XYZ_EULER_ANGLES, OrientationConstraint.ROTATION_VECTOR):
        desired = pose_msg_from_transform(make_transform(R_tool @ rotation_about_axis(Z, 0.2))).orientation
        constraint = OrientationConstraint(link_name="tool0", orientation=desired, parameterization=parameterization,
                                           absolute_x_axis_tolerance=0.01, absolute_y_axis_tolerance=0.01,
                                           absolute_z_axis_tolerance=0.25)
        checked = constraints_from_msg(Constraints(orientation_constraints=[constraint]), UR5,
                                       lambda frame: np.eye(4))
        assert checked.violation(values, UR5) is None
        constraint.absolute_z_axis_tolerance = 0.15
        checked = constraints_from_msg(Constraints(orientation_constraints=[constraint]), UR5,
                                       lambda frame: np.eye(4))
        assert "orientation constraint" in checked.violation(values, UR5)
        ((reason, distance),) = checked.evaluate(values, UR5)
        assert reason and distance == pytest.approx(0.2, abs=1e-9), "the sum of the axis errors, as MoveIt's"


def test_joint_constraints_on_continuous_joints_wrap():
    constraint = JointConstraint(joint_name="elbow_joint", position=0.5, tolerance_above=0.1, tolerance_below=0.2)
    checked = constraints_from_msg(Constraints(joint_constraints=[constraint]), UR5, lambda frame: np.eye(4))
    (bound,) = checked.joint_bounds
    assert bound.violation(0.35) is None and bound.violation(0.59) is None
    assert bound.violation(0.25) and bound.violation(0.65)
    continuous = type(bound)(bound.joint, bound.lower, bound.upper, True, bound.target)
    assert continuous.violation(0.5 + 2 * math.pi) is None and continuous.violation(0.65 - 2 * math.pi)
    assert bound.distance(0.25) == pytest.approx(0.25) and continuous.distance(0.4 + 2 * math.pi) == pytest.approx(0.1)


def _object(operation=CollisionObject.ADD, frame="") -> CollisionObject:
    msg = CollisionObject(id="thing", operation=operation)
    msg.header.frame_id = frame
    msg.pose = pose_msg_from_transform(make_transform(None, (1.0, 0.0, 0.0)))
    msg.primitives = [SolidPrimitive(type=SolidPrimitive.CONE, dimensions=[0.2, 0.05])]
    msg.primitive_poses = [Pose()]
    msg.meshes = [Mesh(vertices=[Point(), Point(x=1.0), Point(y=1.0)],
                       triangles=[MeshTriangle(vertex_indices=[0, 1, 2])])]
    msg.mesh_poses = [Pose()]
    msg.planes, msg.plane_poses = [Plane(coef=[0.0, 0.0, 2.0, 1.0])], [Pose()]
    msg.subframe_names, msg.subframe_poses = ["tip"], [Pose()]
    return msg


def test_collision_objects_become_scene_updates_field_by_field():
    update = collision_object_update(_object(), lambda frame: (frame, None))
    assert (update.id, update.operation, update.frame_id) == ("thing", Operation.ADD, "")
    (cone,), (mesh,), (plane,) = update.primitives, update.meshes, update.planes
    assert (cone.length, cone.radius) == (0.2, 0.05) and mesh.triangles.tolist() == [[0, 1, 2]]
    assert plane.coefficients == (0.0, 0.0, 1.0, 0.5) and list(update.subframe_names) == ["tip"]


def test_a_frame_known_only_to_tf_is_folded_into_the_pose():
    T_model_camera = make_transform(rotation_about_axis(Z, 0.5), (0.0, 2.0, 0.0))
    update = collision_object_update(_object(frame="camera"), lambda frame: ("base_link", T_model_camera))
    assert update.frame_id == "base_link"
    assert np.allclose(update.pose, T_model_camera @ make_transform(None, (1.0, 0.0, 0.0)), atol=EXACT)


def test_remove_and_move_read_only_what_moveit_reads():
    broken = _object(operation=CollisionObject.REMOVE)
    broken.primitives[0].dimensions = [-1.0, 0.0]
    update = collision_object_update(broken, lambda frame: pytest.fail("REMOVE resolves no frame"))
    assert update.operation == Operation.REMOVE and not update.has_geometry
    broken.operation = CollisionObject.MOVE
    assert not collision_object_update(broken, lambda frame: (frame, None)).has_geometry


@pytest.mark.parametrize("edit, words", [
    (lambda msg: msg.primitives[0].dimensions.__setitem__(1, -0.05), "primitives[0]: cone radius"),
    (lambda msg: setattr(msg.meshes[0], "triangles", []), "meshes[0]: mesh: needs at least one triangle"),
    (lambda msg: setattr(msg, "planes", [Plane()]), "planes[0]: plane coefficients"),
])
def test_malformed_shapes_are_scene_errors_naming_the_shape(edit, words):
    msg = _object()
    edit(msg)
    with pytest.raises(SceneError) as error:
        collision_object_update(msg, lambda frame: (frame, None))
    assert f"collision object 'thing': {words}" in str(error.value)


def test_constraint_frames_that_are_unknown_raise_from_the_resolver():
    def resolver(frame):
        raise RequestError(ErrorCode.FRAME_TRANSFORM_FAILURE, f"unknown {frame}")

    with pytest.raises(RequestError) as error:
        constraints_from_msg(_region(SolidPrimitive.SPHERE, (1.0,), (0, 0, 0), "nowhere"), UR5, resolver)
    assert error.value.code == ErrorCode.FRAME_TRANSFORM_FAILURE


# ------------------------------------------------------------------------------------------ /tf listener
class _NodeStandIn:
    def create_subscription(self, *args, **kwargs):
        return args


def _message(*edges) -> TFMessage:
    transforms = []
    for parent, child, T in edges:
        stamped = TransformStamped(transform=transform_msg_from_transform(T))
        stamped.header.frame_id, stamped.child_frame_id = parent, child
        transforms.append(stamped)
    return TFMessage(transforms=transforms)


def test_tf_listener_composes_transforms_through_the_common_ancestor():
    rng = np.random.default_rng(2)
    T_world_a, T_a_b, T_world_c = (random_transform(rng) for _ in range(3))
    listener = TfMessageListener(_NodeStandIn())
    listener.add_message(_message(("world", "a", T_world_a), ("/a", "b", T_a_b)))
    listener.add_message(_message(("world", "c", T_world_c)))
    assert np.allclose(listener.lookup("c", "b"), np.linalg.inv(T_world_c) @ T_world_a @ T_a_b, atol=1e-12)
    assert np.allclose(listener.lookup("b", "world"), np.linalg.inv(T_world_a @ T_a_b), atol=1e-12)
    assert np.allclose(listener.lookup("/b", "b"), np.eye(4))
    # The latest transform of a frame replaces the earlier one.
    listener.add_message(_message(("world", "a", np.eye(4))))
    assert np.allclose(listener.lookup("world", "b"), T_a_b, atol=1e-12)


def test_tf_listener_says_which_frames_are_unknown_or_unconnected():
    listener = TfMessageListener(_NodeStandIn())
    listener.add_message(_message(("world", "a", np.eye(4)), ("moon", "rock", np.eye(4))))
    with pytest.raises(FrameLookupError,
                       match='"nowhere" passed to lookupTransform argument source_frame does not exist'):
        listener.lookup("world", "nowhere")
    with pytest.raises(FrameLookupError, match="Could not find a connection between 'a' and 'rock'"):
        listener.lookup("a", "rock")


# ------------------------------------------------------------------------------------------ parameters
def test_node_parameters_are_validated():
    assert validate_node_parameter("max_ik_timeout", 3) == 3.0
    assert validate_node_parameter("tip_frames", ["a", "b"]) == ("a", "b")
    assert validate_node_parameter("simulate_controllers", True) is True
    for name, value in (("collision_checking_unavailable_policy", "maybe"), ("max_ik_timeout", 1e9),
                        ("executor_threads", 1.5), ("tip_frames", [1, 2]), ("base_frame", 3),
                        ("simulate_controllers", 1), ("simulate_controllers", "true")):
        with pytest.raises(ParameterError):
            validate_node_parameter(name, value)


def test_kinematics_parameter_names_split_into_group_and_key():
    assert split_kinematics_parameter("robot_description_kinematics.arm.solve_mode") == ("arm", "solve_mode")
    assert split_kinematics_parameter("robot_description_kinematics.a.b.timeout") == ("a.b", "timeout")
    assert split_kinematics_parameter("arm.solve_mode") is None
    assert split_kinematics_parameter("robot_description_kinematics.solve_mode") is None
