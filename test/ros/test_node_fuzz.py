"""Property-based fuzzing (hypothesis) of every request and topic message kinematics_node takes, over real DDS
against a node in its own process (issue 9).

Requests: compute_ik, solve_ik, compute_fk, check_state_validity. Topics: collision_object,
attached_collision_object, joint_states, /tf, robot_description and robot_description_semantic (a second node
fed by the topics). Each case is a
well-typed message with hostile values (names good and bad, NaN, infinities, huge and tiny numbers, zero and huge
quaternions, mismatched lengths, timeouts from 0 to beyond max_ik_timeout). Properties: an answer always comes
back; its code is one the docs list for that service; a SUCCESS is right (the independent model's FK of the IK
solution reaches the goal within tolerance, inside the joint limits; FK poses match the model's); the node never
logs an internal error and stays alive.

Seeded (derandomized): every run tries the same cases. ``KINEMATICS_PY_FUZZ_EXAMPLES=N`` runs N cases per test
with random seeds instead (a longer soak, e.g. N=2000).
"""
from __future__ import annotations

import math
import os
import time

import numpy as np
import pytest
from geometry_msgs.msg import Pose, Quaternion, TransformStamped
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from moveit_msgs.msg import AttachedCollisionObject, CollisionObject, JointConstraint, MoveItErrorCodes
from moveit_msgs.srv import GetPositionFK, GetPositionIK, GetStateValidity
from node_harness import (
    NodeUnderTest,
    module_processes,  # noqa: F401 (fixture)
    serving_node,
    start_node,
    ur5_parameters,
    wait_for,
)
from sensor_msgs.msg import JointState
from shape_msgs.msg import SolidPrimitive
from std_msgs.msg import String
from tf2_msgs.msg import TFMessage

from kinematics_py.geometry.poses import transform_from_any_pose
from kinematics_py.geometry.transforms import quaternion_from_rotation
from kinematics_py.model.robot_model import RobotModel
from kinematics_py.robots import bundled_robot_path
from kinematics_py.ros.topics.description_topics import DESCRIPTION_QOS
from kinematics_py.ros.topics.scene_topics import SCENE_QOS

SOAK_EXAMPLES = int(os.environ.get("KINEMATICS_PY_FUZZ_EXAMPLES", "0"))


def fuzz_settings(examples: int):
    """``examples`` seeded cases (or the soak's count, random)."""
    return settings(max_examples=SOAK_EXAMPLES or examples, derandomize=not SOAK_EXAMPLES, database=None,
                    deadline=None, suppress_health_check=list(HealthCheck))


GROUP = "ur_manipulator"
MODEL = RobotModel.from_urdf_file(bundled_robot_path("ur5"))
JOINTS = list(MODEL.chain("base_link", "tool0").joint_names)
LINKS = list(MODEL.link_names)
#: What a request may answer (docs/node.md's tables), beside SUCCESS.
IK_CODES = {MoveItErrorCodes.SUCCESS, MoveItErrorCodes.INVALID_GROUP_NAME, MoveItErrorCodes.INVALID_LINK_NAME,
            MoveItErrorCodes.FRAME_TRANSFORM_FAILURE, MoveItErrorCodes.INVALID_GOAL_CONSTRAINTS,
            MoveItErrorCodes.INVALID_ROBOT_STATE, MoveItErrorCodes.FAILURE, MoveItErrorCodes.NO_IK_SOLUTION,
            MoveItErrorCodes.GOAL_IN_COLLISION, MoveItErrorCodes.TIMED_OUT, MoveItErrorCodes.GOAL_CONSTRAINTS_VIOLATED}
FK_CODES = {MoveItErrorCodes.SUCCESS, MoveItErrorCodes.INVALID_LINK_NAME, MoveItErrorCodes.INVALID_ROBOT_STATE,
            MoveItErrorCodes.FRAME_TRANSFORM_FAILURE}
#: Accepted error of a SUCCESS (the node's thresholds are 1e-5).
POSITION_TOLERANCE_M = 2e-5
ROTATION_TOLERANCE_RAD = 2e-5
LIMIT_SLACK = 1e-6
#: Longest IK timeout fuzzed [s] (and some beyond max_ik_timeout, refused at once).
MAX_FUZZ_TIMEOUT_S = 0.03
ANSWER_WAIT_S = 10.0

# ------------------------------------------------------------------------------------------- strategies
hostile_floats = st.one_of(st.floats(-2.0, 2.0), st.sampled_from([0.0, -0.0, math.nan, math.inf, -math.inf,
                                                                   1e308, -1e308, 1e-308, 1e200, 5e-324]),
                           st.floats(allow_nan=True, allow_infinity=True))
def mostly(good, bad):
    """``good`` in 4 cases of 5, else ``bad``: most requests reach the search, the rest probe the checks."""
    return st.integers(0, 4).flatmap(lambda i: good if i else bad)


names = st.one_of(st.sampled_from(JOINTS + LINKS + ["", "world", "base_link", GROUP]), st.text(max_size=12))
frames = st.one_of(st.just(""), st.just("base_link"), st.sampled_from(LINKS), st.text(max_size=8))


@st.composite
def quaternions(draw):
    kind = draw(st.sampled_from(["unit", "scaled", "hostile"]))
    values = draw(st.lists(st.floats(-1.0, 1.0), min_size=4, max_size=4))
    if kind == "scaled":
        values = [v * draw(st.sampled_from([1e-200, 1e-3, 7.0, 1e200])) for v in values]
    elif kind == "hostile":
        values = draw(st.lists(hostile_floats, min_size=4, max_size=4))
    elif not any(values):
        values = [0.0, 0.0, 0.0, 1.0]
    return Quaternion(x=values[0], y=values[1], z=values[2], w=values[3])


@st.composite
def poses(draw, reachable: bool = True):
    pose = Pose(orientation=draw(quaternions()))
    if reachable and draw(st.integers(0, 3)):
        q = draw(st.lists(st.floats(-3.0, 3.0), min_size=6, max_size=6))
        T = MODEL.link_poses(dict(zip(JOINTS, q)))["tool0"]
        pose.position.x, pose.position.y, pose.position.z = (float(v) for v in T[:3, 3])
        if draw(st.integers(0, 3)):
            x, y, z, w = quaternion_from_rotation(T[:3, :3])
            pose.orientation = Quaternion(x=float(x), y=float(y), z=float(z), w=float(w))
    else:
        pose.position.x, pose.position.y, pose.position.z = (draw(hostile_floats) for _ in range(3))
    return pose


@st.composite
def robot_states(draw):
    """A robot_state: nothing, good joints, or mismatched / unknown / non-finite ones."""
    state = GetPositionIK.Request().ik_request.robot_state
    if draw(st.booleans()):
        chosen = draw(st.lists(names, max_size=7))
        values = draw(st.lists(st.one_of(st.floats(-3.0, 3.0), hostile_floats), max_size=8))
        if draw(st.integers(0, 3)):  # the common, well-formed case
            chosen = JOINTS
            values = draw(st.lists(st.floats(-3.0, 3.0), min_size=6, max_size=6))
        state.joint_state.name = chosen
        state.joint_state.position = values
    state.is_diff = draw(st.booleans())
    return state


@st.composite
def ik_requests(draw):
    request = GetPositionIK.Request()
    ik = request.ik_request
    ik.group_name = draw(mostly(st.just(GROUP), names))
    ik.robot_state = draw(robot_states())
    ik.avoid_collisions = draw(st.booleans())
    if draw(st.integers(0, 9)) == 0:  # several poses
        count = draw(st.integers(0, 3))
        ik.pose_stamped_vector = [_stamped(draw(poses()), draw(frames)) for _ in range(count)]
        ik.ik_link_names = draw(st.lists(names, min_size=0, max_size=3))
    else:
        ik.pose_stamped = _stamped(draw(poses()), draw(mostly(st.sampled_from(["", "base_link"]), frames)))
        ik.ik_link_name = draw(mostly(st.sampled_from(["", "tool0"]), names))
    timeout = draw(mostly(st.floats(0.005, MAX_FUZZ_TIMEOUT_S),
                          st.one_of(st.floats(0.0, 0.005), st.sampled_from([0.0, 1e-9, 1e4]))))
    ik.timeout.sec, ik.timeout.nanosec = int(timeout), int((timeout - int(timeout)) * 1e9)
    if draw(st.integers(0, 4)) == 0:
        ik.constraints.joint_constraints = [JointConstraint(
            joint_name=draw(names), position=draw(hostile_floats), tolerance_above=draw(hostile_floats),
            tolerance_below=draw(hostile_floats), weight=1.0) for _ in range(draw(st.integers(1, 2)))]
    return request


def _stamped(pose, frame):
    stamped = GetPositionIK.Request().ik_request.pose_stamped
    stamped.header.frame_id = frame
    stamped.pose = pose
    return stamped


@st.composite
def fk_requests(draw):
    request = GetPositionFK.Request(fk_link_names=draw(mostly(st.lists(st.sampled_from(LINKS), min_size=1,
                                                                       max_size=4), st.lists(names, max_size=4))))
    request.header.frame_id = draw(mostly(st.sampled_from(["", "base_link"]), frames))
    request.robot_state = draw(robot_states())
    return request


@st.composite
def validity_requests(draw):
    request = GetStateValidity.Request(group_name=draw(mostly(st.sampled_from(["", GROUP]), names)))
    request.robot_state = draw(robot_states())
    if draw(st.integers(0, 3)) == 0:
        request.constraints.joint_constraints = [JointConstraint(
            joint_name=draw(names), position=draw(hostile_floats), tolerance_above=draw(hostile_floats),
            tolerance_below=draw(hostile_floats), weight=draw(hostile_floats))]
    return request


@st.composite
def collision_objects(draw):
    msg = CollisionObject(id=draw(st.one_of(st.sampled_from(["a", "b", "c"]), st.text(max_size=6))),
                          operation=draw(st.one_of(st.sampled_from([0, 1, 2, 3]), st.integers(0, 255))))
    msg.header.frame_id = draw(frames)
    msg.pose = draw(poses(reachable=False))
    count = draw(st.integers(0, 2))
    msg.primitives = [SolidPrimitive(type=draw(st.integers(0, 6)), dimensions=draw(
        st.lists(st.one_of(st.floats(0.0, 0.5), hostile_floats), max_size=4))) for _ in range(count)]
    msg.primitive_poses = [draw(poses(reachable=False)) for _ in range(draw(st.integers(0, 2)))]
    return msg


@st.composite
def attached_objects(draw):
    return AttachedCollisionObject(link_name=draw(names), object=draw(collision_objects()),
                                   touch_links=draw(st.lists(names, max_size=3)), weight=draw(hostile_floats))


TF_FRAMES = ["fuzz_a", "fuzz_b", "fuzz_c", "base_link", "world", "tool0", ""]


@st.composite
def tf_messages(draw):
    """Transforms between a few frames (robot links among them; cycles possible), hostile values too."""
    transforms = []
    for _ in range(draw(st.integers(1, 3))):
        stamped = TransformStamped(child_frame_id=draw(st.sampled_from(TF_FRAMES)))
        stamped.header.frame_id = draw(st.sampled_from(TF_FRAMES))
        pose = draw(poses(reachable=False))
        stamped.transform.translation.x, stamped.transform.translation.y, stamped.transform.translation.z = (
            pose.position.x, pose.position.y, pose.position.z)
        stamped.transform.rotation = pose.orientation
        transforms.append(stamped)
    return TFMessage(transforms=transforms)


@st.composite
def joint_states(draw):
    chosen = draw(st.one_of(st.just(JOINTS), st.lists(names, max_size=7)))
    values = draw(st.lists(st.one_of(st.floats(-3.0, 3.0), hostile_floats), min_size=len(chosen),
                           max_size=len(chosen)))
    return JointState(name=chosen, position=values)


URDF = bundled_robot_path("ur5").read_text(encoding="utf-8")
SRDF = bundled_robot_path("ur5", "srdf").read_text(encoding="utf-8")


@st.composite
def descriptions(draw):
    """The UR5's URDF cut, spliced, with a number replaced by a hostile one, or random text."""
    kind = draw(st.sampled_from(["cut", "number", "splice", "text"]))
    if kind == "cut":
        return URDF[:draw(st.integers(0, len(URDF)))]
    if kind == "number":
        index = draw(st.integers(0, len(URDF) - 1))
        start = URDF.find('"', index)
        end = URDF.find('"', start + 1)
        if start < 0 or end < 0:
            return URDF
        return URDF[:start + 1] + str(draw(hostile_floats)) + URDF[end:]
    if kind == "splice":
        a, b = sorted(draw(st.lists(st.integers(0, len(URDF)), min_size=2, max_size=2)))
        return URDF[:a] + URDF[b:]
    return draw(st.text(max_size=200))


# ------------------------------------------------------------------------------------------- checks
def answer(node: NodeUnderTest, client, request):
    future = client.call_async(request)
    node.client.spin_until(future, ANSWER_WAIT_S)
    assert future.done(), f"no answer within {ANSWER_WAIT_S} s to {request}"
    return future.result()


def check_code(code, allowed: set[int], request) -> None:
    event(f"code {code.val}")  # the spread of answers, in --hypothesis-show-statistics
    assert code.val in allowed, f"code {code.val} ({code.message}) for {request}"
    assert "internal error" not in code.message, f"{code.message} for {request}"
    if code.val != MoveItErrorCodes.SUCCESS:
        assert code.message, f"code {code.val} without a message for {request}"


def check_ik_solution(request, response) -> None:
    """The model's FK of the answer reaches the goal (goals in the model frame), within the joint limits."""
    state = response.solution.joint_state
    values = dict(zip(state.name, state.position))
    for joint in JOINTS:
        limits = MODEL.joints[joint]
        assert limits.lower - LIMIT_SLACK <= values[joint] <= limits.upper + LIMIT_SLACK, (joint, values[joint])
    ik = request.ik_request
    if ik.pose_stamped_vector or ik.pose_stamped.header.frame_id not in ("", "base_link"):
        return  # goals in frames placed by the request's state: the limits are checked
    link = ik.ik_link_name or "tool0"
    T_goal = transform_from_any_pose(ik.pose_stamped.pose)
    T_reached = MODEL.link_poses({joint: values[joint] for joint in JOINTS})[link]
    R = T_goal[:3, :3].T @ T_reached[:3, :3]
    rotation = math.acos(float(np.clip((np.trace(R) - 1) / 2, -1.0, 1.0)))
    assert np.linalg.norm(T_goal[:3, 3] - T_reached[:3, 3]) <= POSITION_TOLERANCE_M, (request, values)
    assert rotation <= ROTATION_TOLERANCE_RAD, (request, values)


# ------------------------------------------------------------------------------------------- the node
@pytest.fixture(scope="module")
def ur5(module_processes, tmp_path_factory):  # noqa: F811
    with serving_node(module_processes, tmp_path_factory.mktemp("fuzz"), ur5_parameters(), "fuzz_node") as node:
        node.scene = node.node.create_publisher(CollisionObject, f"{node.namespace}/collision_object", SCENE_QOS)
        node.attached = node.node.create_publisher(AttachedCollisionObject,
                                                   f"{node.namespace}/attached_collision_object", SCENE_QOS)
        node.joints = node.node.create_publisher(JointState, f"{node.namespace}/joint_states", 10)
        node.tf = node.node.create_publisher(TFMessage, "/tf", 10)
        yield node
        assert node.fk(GetPositionFK.Request(fk_link_names=["tool0"])).error_code.val == MoveItErrorCodes.SUCCESS
        assert "internal error" not in node.process.output()


@pytest.fixture(scope="module")
def solve_ik_client(ur5):
    ur5.solve_ik(GetPositionIK.Request())  # creates and waits for the client
    return ur5._solve_ik


@fuzz_settings(120)
@given(request=ik_requests(), service=st.sampled_from(["compute_ik", "solve_ik"]))
def test_ik_requests(ur5, solve_ik_client, request, service):
    response = answer(ur5, ur5.client.ik_client if service == "compute_ik" else solve_ik_client, request)
    check_code(response.error_code, IK_CODES, request)
    if response.error_code.val == MoveItErrorCodes.SUCCESS:
        check_ik_solution(request, response)


@fuzz_settings(60)
@given(request=fk_requests())
def test_fk_requests(ur5, request):
    response = answer(ur5, ur5.client.fk_client, request)
    check_code(response.error_code, FK_CODES, request)
    assert list(response.fk_link_names) == [link for link in request.fk_link_names if link in LINKS] \
        or response.error_code.val != MoveItErrorCodes.SUCCESS
    if response.error_code.val == MoveItErrorCodes.SUCCESS and request.header.frame_id in ("", "base_link") \
            and list(request.robot_state.joint_state.name) == JOINTS and not request.robot_state.is_diff:
        T_links = MODEL.link_poses(dict(zip(JOINTS, request.robot_state.joint_state.position)))
        for link, pose in zip(response.fk_link_names, response.pose_stamped):
            assert np.allclose(transform_from_any_pose(pose.pose), T_links[link], atol=1e-9), link


@fuzz_settings(60)
@given(request=validity_requests())
def test_state_validity_requests(ur5, request):
    ur5.state_validity(GetStateValidity.Request())  # creates and waits for the client
    response = answer(ur5, ur5._state_validity, request)
    assert isinstance(response.valid, bool)
    event(f"valid {response.valid}, {len(response.contacts)} contact(s)")
    if response.valid:
        assert not response.contacts


@fuzz_settings(60)
@given(messages=st.lists(st.one_of(collision_objects(), attached_objects(), joint_states(), tf_messages()),
                         min_size=1, max_size=4), frame=st.sampled_from(TF_FRAMES))
def test_topic_messages(ur5, messages, frame):
    for msg in messages:
        {CollisionObject: ur5.scene, AttachedCollisionObject: ur5.attached, JointState: ur5.joints,
         TFMessage: ur5.tf}[type(msg)].publish(msg)
    request = GetPositionFK.Request(fk_link_names=["tool0"])
    request.header.frame_id = frame  # through TF, after the updates
    response = ur5.fk(request)
    check_code(response.error_code, FK_CODES, messages)
    assert "internal error" not in ur5.process.output()


@pytest.fixture(scope="module")
def topic_fed(module_processes, tmp_path_factory):  # noqa: F811
    """A node without description parameters: it takes the robot_description(_semantic) topics."""
    parameters = ur5_parameters()
    del parameters["robot_description"], parameters["robot_description_semantic"]
    process, namespace = start_node(module_processes, tmp_path_factory.mktemp("topic_fed"), parameters,
                                    "fuzz_topic_node")
    node = NodeUnderTest(process, namespace)
    node.description = node.node.create_publisher(String, f"{namespace}/robot_description", DESCRIPTION_QOS)
    node.semantic = node.node.create_publisher(String, f"{namespace}/robot_description_semantic", DESCRIPTION_QOS)
    node.description.publish(String(data=URDF))
    node.semantic.publish(String(data=SRDF))
    node.wait_serving("tool0")
    yield node
    node.description.publish(String(data=URDF))
    node.semantic.publish(String(data=SRDF))
    wait_for(lambda: node.client.wait_until_serving("tool0", 1.0), 60.0, "the UR5 back", process)
    assert "internal error" not in process.output()
    node.assert_alive()
    node.close()


@fuzz_settings(15)
@given(description=descriptions(), which=st.sampled_from(["robot_description", "robot_description_semantic"]))
def test_robot_descriptions_on_the_topic(topic_fed, description, which):
    if which == "robot_description":
        topic_fed.description.publish(String(data=description))
    else:
        topic_fed.semantic.publish(String(data=SRDF[:len(description)] if description else SRDF))
    time.sleep(0.05)
    response = topic_fed.fk(GetPositionFK.Request(fk_link_names=["tool0"]))
    check_code(response.error_code, FK_CODES | {MoveItErrorCodes.FAILURE}, description[:200])
    topic_fed.assert_alive()
