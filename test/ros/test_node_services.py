"""kinematics_node on the bundled UR5, in its own process, answering compute_fk / compute_ik / solve_ik over DDS.

Properties: answers agree with the core model; every bad request gets its precise MoveIt error code with a
message and source; kinematics.yaml settings, request constraints, /joint_states and parameter validation
take effect.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
from geometry_msgs.msg import Pose
from moveit_msgs.msg import (
    BoundingVolume,
    JointConstraint,
    MoveItErrorCodes,
    OrientationConstraint,
    PositionConstraint,
    VisibilityConstraint,
)
from node_harness import (
    fk_request,
    ik_request,
    module_processes,  # noqa: F401 (fixture)
    pose_error,
    pose_msg,
    poses_close,
    serving_node,
    solution_values,
    state_validity_request,
    transform_of_pose_stamped,
    ur5_parameters,
    wait_for,
)
from robots import UR5_UNREACHABLE_POSITION, without_collision_geometry
from sensor_msgs.msg import JointState
from shape_msgs.msg import Mesh, SolidPrimitive

from kinematics_py.geometry.transforms import make_transform, rotation_about_axis
from kinematics_py.model.robot_model import RobotModel
from kinematics_py.robots import bundled_robot_path

GROUP = "ur_manipulator"
JOINTS = ("shoulder_pan_joint", "shoulder_lift_joint", "elbow_joint", "wrist_1_joint", "wrist_2_joint",
          "wrist_3_joint")
MAX_IK_TIMEOUT_S = 5.0
#: The solver's acceptance thresholds are 1e-5 m / 1e-5 rad; answers travel as float64.
POSITION_TOLERANCE_M = 2e-5
ROTATION_TOLERANCE_RAD = 2e-5
MODEL = RobotModel.from_urdf_file(bundled_robot_path("ur5"))
CHAIN = MODEL.chain("base_link", "tool0")
#: Configurations sampled within +-pi (the UR5's limits are +-2 pi).
SAMPLE_LIMIT = math.pi


@pytest.fixture(scope="module")
def ur5(module_processes, tmp_path_factory):  # noqa: F811
    with serving_node(module_processes, tmp_path_factory.mktemp("ur5"),
                      ur5_parameters(max_ik_timeout=MAX_IK_TIMEOUT_S), "ur5_node") as node:
        yield node


def random_configurations(count: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).uniform(-SAMPLE_LIMIT, SAMPLE_LIMIT, (count, len(JOINTS)))


def link_pose(q, link: str) -> np.ndarray:
    return MODEL.link_poses(dict(zip(JOINTS, q)))[link]


def middle_seed() -> dict[str, float]:
    return dict.fromkeys(JOINTS, 0.1)


def assert_error(response, code: int, *words: str) -> None:
    error = response.error_code
    assert error.val == code, f"expected {code}, got {error.val}: {error.message}"
    assert error.message, "the error code carries no message"
    assert error.source.endswith("kinematics_node")
    for word in words:
        assert word in error.message, error.message


# ------------------------------------------------------------------------------------------ compute_fk
def test_fk_of_named_states_matches_the_model(ur5):
    for q in ([0.0] * 6, [0.0, -1.5707, 0.0, -1.5707, 0.0, 0.0], [0.3, -1.1, 1.4, -0.2, 0.9, -2.0]):
        response = ur5.fk(fk_request(["tool0", "forearm_link"], dict(zip(JOINTS, q))))
        assert response.error_code.val == MoveItErrorCodes.SUCCESS, response.error_code.message
        assert list(response.fk_link_names) == ["tool0", "forearm_link"]
        for link, pose in zip(response.fk_link_names, response.pose_stamped):
            assert pose.header.frame_id == "base_link"
            position_error, rotation_error = pose_error(transform_of_pose_stamped(pose), link_pose(q, link))
            assert position_error < 1e-12 and rotation_error < 1e-7


def test_fk_in_a_link_frame_and_in_the_virtual_joint_frame(ur5):
    q = [0.3, -1.1, 1.4, -0.2, 0.9, -2.0]
    in_tool = ur5.fk(fk_request(["tool0", "wrist_3_link"], dict(zip(JOINTS, q)), frame="tool0"))
    assert in_tool.error_code.val == MoveItErrorCodes.SUCCESS
    assert [p.header.frame_id for p in in_tool.pose_stamped] == ["tool0", "tool0"]
    assert poses_close(transform_of_pose_stamped(in_tool.pose_stamped[0]), np.eye(4), 1e-12, 1e-7)
    expected = np.linalg.inv(link_pose(q, "tool0")) @ link_pose(q, "wrist_3_link")
    assert poses_close(transform_of_pose_stamped(in_tool.pose_stamped[1]), expected, 1e-12, 1e-7)
    # "world" is the parent frame of the SRDF's fixed virtual joint: the model frame itself.
    in_world = ur5.fk(fk_request(["tool0"], dict(zip(JOINTS, q)), frame="world"))
    assert in_world.pose_stamped[0].header.frame_id == "world"
    assert poses_close(transform_of_pose_stamped(in_world.pose_stamped[0]), link_pose(q, "tool0"), 1e-12, 1e-7)


def test_fk_skips_unknown_links_with_invalid_link_name(ur5):
    response = ur5.fk(fk_request(["no_such_link", "tool0"], middle_seed()))
    assert_error(response, MoveItErrorCodes.INVALID_LINK_NAME, "no_such_link")
    assert list(response.fk_link_names) == ["tool0"]
    assert len(response.pose_stamped) == 1


def test_fk_without_links_is_invalid_link_name(ur5):
    assert_error(ur5.fk(fk_request([], middle_seed())), MoveItErrorCodes.INVALID_LINK_NAME, "empty")


@pytest.mark.parametrize("names, positions, word", [
    (["no_such_joint"], [0.0], "no_such_joint"),
    (["elbow_joint", "wrist_1_joint"], [0.0], "2 names but 1 positions"),
    (["elbow_joint"], [math.nan], "not finite"),
    (["wrist_3_link-tool0_fixed_joint"], [0.0], "wrist_3_link-tool0_fixed_joint"),
])
def test_fk_with_a_bad_robot_state_is_invalid_robot_state(ur5, names, positions, word):
    request = fk_request(["tool0"])
    request.robot_state.joint_state.name = names
    request.robot_state.joint_state.position = positions
    assert_error(ur5.fk(request), MoveItErrorCodes.INVALID_ROBOT_STATE, word)


def test_fk_in_an_unknown_frame_is_frame_transform_failure(ur5):
    assert_error(ur5.fk(fk_request(["tool0"], frame="no_such_frame")), MoveItErrorCodes.FRAME_TRANSFORM_FAILURE,
                 "no_such_frame")


# ------------------------------------------------------------------------------------------ compute_ik
def test_ik_reaches_random_reachable_poses(ur5):
    for q in random_configurations(20, seed=1):
        target = link_pose(q, "tool0")
        response = ur5.ik(ik_request(GROUP, target, seed=middle_seed()))
        assert response.error_code.val == MoveItErrorCodes.SUCCESS, response.error_code.message
        assert response.error_code.message and response.error_code.source.endswith("kinematics_node")
        values = solution_values(response)
        assert list(values) == list(JOINTS) and not response.solution.is_diff
        position_error, rotation_error = pose_error(link_pose([values[j] for j in JOINTS], "tool0"), target)
        assert position_error < POSITION_TOLERANCE_M and rotation_error < ROTATION_TOLERANCE_RAD


def test_ik_starts_from_the_request_seed(ur5):
    """A seed next to a solution gives that solution (the search starts from the seed)."""
    for q in random_configurations(5, seed=2):
        seed = dict(zip(JOINTS, q + 0.01))
        values = solution_values(ur5.ik(ik_request(GROUP, link_pose(q, "tool0"), seed=seed)))
        assert np.allclose([values[j] for j in JOINTS], q, atol=1e-4)


def test_ik_for_a_link_rigidly_attached_to_the_tip(ur5):
    q = random_configurations(1, seed=3)[0]
    target = link_pose(q, "wrist_3_link")
    response = ur5.ik(ik_request(GROUP, target, link="wrist_3_link", seed=middle_seed()))
    assert response.error_code.val == MoveItErrorCodes.SUCCESS, response.error_code.message
    values = solution_values(response)
    assert poses_close(link_pose([values[j] for j in JOINTS], "wrist_3_link"), target, POSITION_TOLERANCE_M,
                       ROTATION_TOLERANCE_RAD)


def test_ik_for_a_pose_in_robot_link_frames(ur5):
    """Frames of robot links are placed by the seed state: 'base' (fixed) and 'tool0' (moves)."""
    q = random_configurations(1, seed=4)[0]
    seed = dict(zip(JOINTS, q))
    T_tool_goal = make_transform(rotation_about_axis(np.array([0.0, 0.0, 1.0]), 0.4), (0.02, -0.01, 0.05))
    expected = link_pose(q, "tool0") @ T_tool_goal
    for frame in ("tool0", "base"):
        T_frame_goal = np.linalg.inv(link_pose(q, frame)) @ expected
        response = ur5.ik(ik_request(GROUP, T_frame_goal, frame=frame, seed=seed))
        assert response.error_code.val == MoveItErrorCodes.SUCCESS, response.error_code.message
        values = solution_values(response)
        assert poses_close(link_pose([values[j] for j in JOINTS], "tool0"), expected, POSITION_TOLERANCE_M,
                           ROTATION_TOLERANCE_RAD)


def _with(request, edit):
    edit(request.ik_request)
    return request


def _reachable():
    return link_pose(random_configurations(1, seed=5)[0], "tool0")


def _vector(ik):
    ik.pose_stamped_vector = [ik.pose_stamped, ik.pose_stamped]
    ik.ik_link_names = ["tool0"]


def _nan_pose(ik):
    ik.pose_stamped.pose.position.x = math.nan


def _zero_quaternion(ik):
    o = ik.pose_stamped.pose.orientation
    o.x = o.y = o.z = o.w = 0.0


def _seed(name, value):
    def edit(ik):
        ik.robot_state.joint_state.name = [name]
        ik.robot_state.joint_state.position = [value]
    return edit


def _timeout(sec, nanosec=0):
    def edit(ik):
        ik.timeout.sec, ik.timeout.nanosec = sec, nanosec
    return edit


def _joint_constraint(name="elbow_joint", position=0.0, above=0.1, below=0.1):
    def edit(ik):
        ik.constraints.joint_constraints = [JointConstraint(joint_name=name, position=position,
                                                            tolerance_above=above, tolerance_below=below,
                                                            weight=1.0)]
    return edit


def _mesh_region(ik):
    ik.constraints.position_constraints = [PositionConstraint(
        link_name="tool0", constraint_region=BoundingVolume(meshes=[Mesh()], mesh_poses=[Pose()]))]


def _visibility(ik):
    ik.constraints.visibility_constraints = [VisibilityConstraint()]


def _region_in_unknown_frame(ik):
    constraint = PositionConstraint(link_name="tool0", constraint_region=BoundingVolume(
        primitives=[SolidPrimitive(type=SolidPrimitive.SPHERE, dimensions=[1.0])], primitive_poses=[Pose()]))
    constraint.header.frame_id = "no_such_frame"
    ik.constraints.position_constraints = [constraint]


ERROR_CASES = {
    "unknown group": (lambda ik: setattr(ik, "group_name", "no_such_group"), MoveItErrorCodes.INVALID_GROUP_NAME,
                      ["no_such_group", GROUP]),
    "unknown ik link": (lambda ik: setattr(ik, "ik_link_name", "no_such_link"), MoveItErrorCodes.INVALID_LINK_NAME,
                        ["no_such_link"]),
    "ik link moved by the group": (lambda ik: setattr(ik, "ik_link_name", "forearm_link"),
                                   MoveItErrorCodes.INVALID_LINK_NAME, ["forearm_link", "rigidly attached"]),
    "poses and links differ in number": (_vector, MoveItErrorCodes.INVALID_LINK_NAME, ["2 poses", "1 ik_link_names"]),
    "unknown frame": (lambda ik: setattr(ik.pose_stamped.header, "frame_id", "no_such_frame"),
                      MoveItErrorCodes.FRAME_TRANSFORM_FAILURE, ["no_such_frame"]),
    "NaN position": (_nan_pose, MoveItErrorCodes.INVALID_GOAL_CONSTRAINTS, ["finite"]),
    "zero quaternion": (_zero_quaternion, MoveItErrorCodes.INVALID_GOAL_CONSTRAINTS, ["quaternion"]),
    "unknown seed joint": (_seed("no_such_joint", 0.0), MoveItErrorCodes.INVALID_ROBOT_STATE, ["no_such_joint"]),
    "NaN seed": (_seed("elbow_joint", math.nan), MoveItErrorCodes.INVALID_ROBOT_STATE, ["elbow_joint"]),
    "timeout above the cap": (_timeout(60), MoveItErrorCodes.FAILURE, ["max_ik_timeout"]),
    "negative timeout": (_timeout(-1), MoveItErrorCodes.FAILURE, [">= 0"]),
    "constraint on an unknown joint": (_joint_constraint(name="no_such_joint"),
                                       MoveItErrorCodes.INVALID_GOAL_CONSTRAINTS, ["no_such_joint"]),
    "negative constraint tolerance": (_joint_constraint(below=-0.1), MoveItErrorCodes.INVALID_GOAL_CONSTRAINTS,
                                      [">= 0"]),
    "mesh constraint region": (_mesh_region, MoveItErrorCodes.INVALID_GOAL_CONSTRAINTS, ["mesh"]),
    "visibility constraint": (_visibility, MoveItErrorCodes.INVALID_GOAL_CONSTRAINTS, ["visibility"]),
    "constraint in an unknown frame": (_region_in_unknown_frame, MoveItErrorCodes.FRAME_TRANSFORM_FAILURE,
                                       ["no_such_frame"]),
}


@pytest.mark.parametrize("case", ERROR_CASES)
def test_ik_bad_requests_get_precise_error_codes(ur5, case):
    edit, code, words = ERROR_CASES[case]
    assert_error(ur5.ik(_with(ik_request(GROUP, _reachable(), seed=middle_seed()), edit)), code, *words)


def test_ik_unreachable_pose_is_no_ik_solution_within_the_timeout(ur5):
    request = ik_request(GROUP, make_transform(None, UR5_UNREACHABLE_POSITION), timeout=0.03)
    assert_error(ur5.ik(request), MoveItErrorCodes.NO_IK_SOLUTION, "30.0 ms")


def test_ik_zero_timeout_takes_the_kinematics_yaml_default(ur5):
    """config/kinematics.yaml sets kinematics_solver_timeout: 0.05 for ur_manipulator."""
    request = ik_request(GROUP, make_transform(None, UR5_UNREACHABLE_POSITION))
    assert_error(ur5.ik(request), MoveItErrorCodes.NO_IK_SOLUTION, "50.0 ms")


def test_ik_honours_joint_position_and_orientation_constraints(ur5):
    q = random_configurations(1, seed=6)[0]
    target = link_pose(q, "tool0")
    request = ik_request(GROUP, target, seed=dict(zip(JOINTS, -q)), timeout=1.0)
    # The UR5 reaches most poses in 8 ways; these two joint constraints leave the branch of q.
    _joint_constraint("shoulder_pan_joint", q[0], 0.05, 0.05)(request.ik_request)
    request.ik_request.constraints.joint_constraints.append(
        JointConstraint(joint_name="elbow_joint", position=q[2], tolerance_above=0.05, tolerance_below=0.05))
    region = PositionConstraint(link_name="tool0", constraint_region=BoundingVolume(
        primitives=[SolidPrimitive(type=SolidPrimitive.BOX, dimensions=[0.01, 0.01, 0.01])],
        primitive_poses=[pose_msg(target)]))
    region.header.frame_id = "base_link"
    orientation = OrientationConstraint(link_name="tool0", orientation=pose_msg(target).orientation,
                                        absolute_x_axis_tolerance=0.01, absolute_y_axis_tolerance=0.01,
                                        absolute_z_axis_tolerance=0.01)
    request.ik_request.constraints.position_constraints = [region]
    request.ik_request.constraints.orientation_constraints = [orientation]
    response = ur5.ik(request)
    assert response.error_code.val == MoveItErrorCodes.SUCCESS, response.error_code.message
    values = solution_values(response)
    assert abs(values["shoulder_pan_joint"] - q[0]) <= 0.05 and abs(values["elbow_joint"] - q[2]) <= 0.05


def test_ik_with_unsatisfiable_constraints_is_goal_constraints_violated(ur5):
    q = random_configurations(1, seed=7)[0]
    # The whole time the node allows: the verdict needs every whole turn of every branch tried (512 checks, 55 ms on
    # a quiet machine), whatever the load; it comes as soon as they are.
    request = ik_request(GROUP, link_pose(q, "tool0"), seed=middle_seed(), timeout=MAX_IK_TIMEOUT_S)
    # wrist_3 only turns the tool about its axis: pinning it elsewhere contradicts the target orientation.
    _joint_constraint("wrist_3_joint", q[5] + 1.0, 0.01, 0.01)(request.ik_request)
    assert_error(ur5.ik(request), MoveItErrorCodes.GOAL_CONSTRAINTS_VIOLATED, "wrist_3_joint")


# ------------------------------------------------------------------------------------------ solve_ik
def srv_kinematics_plugin_request(q_seed, target):
    """Exactly what MoveIt's SrvKinematicsPlugin sends: full seed state, base-frame pose, tip link, zero timeout."""
    request = ik_request(GROUP, target, link="tool0", frame="base_link", seed=dict(zip(JOINTS, q_seed)))
    request.ik_request.avoid_collisions = True
    request.ik_request.robot_state.is_diff = False
    return request


def test_the_bundled_ur5s_collision_geometry_is_checked(ur5):
    """The bundled UR5 has collision primitives: what srv_kinematics_plugin sends is answered with collision
    checking, the named states are valid, and an elbow folded onto the base is a self-collision with contacts."""
    q = random_configurations(1, seed=8)[0]
    target = link_pose(q, "tool0")
    response = ur5.solve_ik(srv_kinematics_plugin_request(q + 0.2, target))
    assert response.error_code.val == MoveItErrorCodes.SUCCESS, response.error_code.message
    assert "NOT checked" not in response.error_code.message
    values = [solution_values(response)[j] for j in JOINTS]
    assert poses_close(link_pose(values, "tool0"), target, POSITION_TOLERANCE_M, ROTATION_TOLERANCE_RAD)
    assert ur5.state_validity(state_validity_request(dict(zip(JOINTS, values)))).valid
    for state in ([0.0] * 6, [0.0, -1.5707, 0.0, -1.5707, 0.0, 0.0]):  # the SRDF's home and up
        response = ur5.state_validity(state_validity_request(dict(zip(JOINTS, state))))
        assert response.valid and not response.contacts
    response = ur5.state_validity(state_validity_request({"elbow_joint": 3.0}))
    assert not response.valid
    assert {"base_link", "forearm_link"} in [{c.contact_body_1, c.contact_body_2} for c in response.contacts]


def test_without_collision_geometry_the_policy_answers_ik_and_check_state_validity(ur5):
    """A robot without any <collision> element (the bundled UR5 stripped of its primitives): collisions cannot be
    checked. Under `error` (the default) collision-aware requests are refused with the reason; under
    `ignore_with_warning` they are answered without a collision check, and the answer says so."""
    q = random_configurations(1, seed=8)[0]
    target = link_pose(q, "tool0")
    request = srv_kinematics_plugin_request(q + 0.2, target)
    bare = without_collision_geometry(bundled_robot_path("ur5").read_text())
    assert "<collision" not in bare
    (result,) = ur5.set_parameters(robot_description=bare)
    assert result.successful, result.reason
    try:
        assert_error(ur5.solve_ik(request), MoveItErrorCodes.COLLISION_CHECKING_UNAVAILABLE, "avoid_collisions",
                     "no <collision> geometry")
        assert_error(ur5.ik(_with(ik_request(GROUP, _reachable(), seed=middle_seed()),
                                  lambda ik: setattr(ik, "avoid_collisions", True))),
                     MoveItErrorCodes.COLLISION_CHECKING_UNAVAILABLE, "no <collision> geometry",
                     "collision_checking_unavailable_policy")
        assert not ur5.state_validity(state_validity_request(dict(zip(JOINTS, q)))).valid

        (result,) = ur5.set_parameters(collision_checking_unavailable_policy="ignore_with_warning")
        assert result.successful, result.reason
        response = ur5.solve_ik(request)
        assert response.error_code.val == MoveItErrorCodes.SUCCESS, response.error_code.message
        assert "collisions NOT checked: the robot description has no <collision> geometry" in \
            response.error_code.message
        values = solution_values(response)
        assert poses_close(link_pose([values[j] for j in JOINTS], "tool0"), target, POSITION_TOLERANCE_M,
                           ROTATION_TOLERANCE_RAD)
        assert ur5.state_validity(state_validity_request(dict(zip(JOINTS, q)))).valid
    finally:
        results = ur5.set_parameters(collision_checking_unavailable_policy="error",
                                     robot_description=bundled_robot_path("ur5").read_text())
        assert all(result.successful for result in results), [result.reason for result in results]


# ------------------------------------------------------------------------------------------ parameters
@pytest.mark.parametrize("name, value, word", [
    (f"robot_description_kinematics.{GROUP}.position_threshold", -1.0, "range"),
    (f"robot_description_kinematics.{GROUP}.solve_mode", "fastest", "one of"),
    (f"robot_description_kinematics.{GROUP}.joint_weights", [1.0, 2.0], "6 values"),
    ("collision_checking_unavailable_policy", "sometimes", "one of"),
    ("max_ik_timeout", -2.0, "range"),
    ("robot_description", "<robot name='broken'><link", "not a usable URDF"),
])
def test_invalid_parameter_values_are_refused_with_the_reason(ur5, name, value, word):
    (result,) = ur5.set_parameters(**{name: value})
    assert not result.successful
    assert word in result.reason, result.reason


def test_a_solver_parameter_set_at_run_time_takes_effect(ur5):
    name = f"robot_description_kinematics.{GROUP}.kinematics_solver_timeout"
    (result,) = ur5.set_parameters(**{name: 0.02})
    assert result.successful, result.reason
    try:
        unreachable = ik_request(GROUP, make_transform(None, UR5_UNREACHABLE_POSITION))
        assert_error(ur5.ik(unreachable), MoveItErrorCodes.NO_IK_SOLUTION, "20.0 ms")
    finally:
        (result,) = ur5.set_parameters(**{name: 0.05})
        assert result.successful, result.reason


# ------------------------------------------------------------------------------------------ /joint_states
def test_joint_states_give_the_default_state_that_requests_overlay(ur5):
    publisher = ur5.node.create_publisher(JointState, f"{ur5.namespace}/joint_states", 10)
    q = random_configurations(1, seed=9)[0]

    def publish(values):
        publisher.publish(JointState(name=list(JOINTS), position=[float(v) for v in values]))

    def fk_matches(values):
        def check():
            publish(values)
            response = ur5.fk(fk_request(["tool0"]))
            return poses_close(transform_of_pose_stamped(response.pose_stamped[0]), link_pose(values, "tool0"),
                               1e-9, 1e-7)
        return check

    try:
        wait_for(fk_matches(q), 10.0, "the node to take the published joint state")
        overlay = {"elbow_joint": 0.0}
        response = ur5.fk(fk_request(["tool0"], overlay))
        expected = link_pose([0.0 if j == "elbow_joint" else v for j, v in zip(JOINTS, q)], "tool0")
        assert poses_close(transform_of_pose_stamped(response.pose_stamped[0]), expected, 1e-9, 1e-7)
        # No seed in the request: the search starts from the current state, which solves the pose at once.
        values = solution_values(ur5.ik(ik_request(GROUP, link_pose(q, "tool0"))))
        assert np.allclose([values[j] for j in JOINTS], q, atol=1e-6)
    finally:
        wait_for(fk_matches(np.zeros(6)), 10.0, "the node to take the zero joint state")
        ur5.node.destroy_publisher(publisher)
