"""kinematics_node servoing as moveit_servo, over real DDS: the node in its own process, this test's client in
another, the bundled UR5 with ``moveit_servo.*`` parameters (speed units, commands out on a topic in the test's
namespace).

Each test states the property the issue's proof names: a constant twist moves the tip along it (direction within
TWIST_ANGLE, speed within SPEED_SHARE, both from the commanded positions the node publishes, period by period:
independent of how late messages arrive), also in a frame only TF knows; a joint jog moves only its joint; the arm
stops once commands are older than incoming_command_timeout, and when paused; malformed commands get an INVALID
status while the node keeps serving; a pose target is reached within the pose_tracking tolerances; the arm stops
before a joint limit less its margin, at a singularity (and leaves it), and short of a box published on
collision_object (its last state valid by check_state_validity). The tests share one node and run in file order.
"""
from __future__ import annotations

import math
import time

import numpy as np
import pytest
from control_msgs.msg import JointJog
from geometry_msgs.msg import PoseStamped, TransformStamped, TwistStamped
from moveit_msgs.msg import CollisionObject, ServoStatus
from moveit_msgs.srv import ServoCommandType
from node_harness import (
    UR5_JOINTS,
    UR5_MODEL,
    NodeUnderTest,
    module_processes,  # noqa: F401 (fixture)
    pose_msg,
    start_node,
    state_validity_request,
    ur5_parameters,
    wait_for,
)
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState
from std_srvs.srv import SetBool
from tf2_msgs.msg import TFMessage
from trajectory_msgs.msg import JointTrajectory

from kinematics_py.geometry.transforms import make_transform, rotation_log
from kinematics_py.ros.demo.client import box_object

UR5_Q = (0.3, -1.0, 1.2, -0.4, 0.5, -0.6)
TWIST_ANGLE = math.radians(2.0)
SPEED_SHARE = 0.05
PERIOD_S = 0.01
TIMEOUT_S = 0.5
WAIT_S = 30.0
CHAIN = UR5_MODEL.chain("base_link", "tool0")
LATCHED = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL)


class ServoClient(NodeUnderTest):
    def __init__(self, process, namespace):
        super().__init__(process, namespace)
        private = f"{namespace}/kinematics_node"
        self.twist = self.node.create_publisher(TwistStamped, f"{private}/delta_twist_cmds", 10)
        self.jog = self.node.create_publisher(JointJog, f"{private}/delta_joint_cmds", 10)
        self.joint_states = self.node.create_publisher(JointState, f"{namespace}/joint_states", 10)
        self.switch = self.node.create_client(ServoCommandType, f"{private}/switch_command_type")
        self.pause = self.node.create_client(SetBool, f"{private}/pause_servo")
        self.commands: list[JointTrajectory] = []
        self.statuses: list[ServoStatus] = []
        self.node.create_subscription(JointTrajectory, f"{namespace}/servo_out", self.commands.append, 100)
        self.node.create_subscription(ServoStatus, f"{private}/status", self.statuses.append, 100)
        self.pose = self.node.create_publisher(PoseStamped, f"{private}/pose_target_cmds", 10)
        self.objects = self.node.create_publisher(CollisionObject, f"{namespace}/collision_object", 10)
        self.tf_static = self.node.create_publisher(TFMessage, "/tf_static", LATCHED)

    def last_positions(self) -> np.ndarray:
        return np.array(self.commands[-1].points[0].positions)

    def stream_until(self, publish, done, what: str) -> None:
        """Publish every 10 ms (spinning between) until ``done()``."""
        wait_for(lambda: publish() or self.spin_for(0.01) or done(), WAIT_S, what, self.process, interval=0.0)

    def spin_for(self, seconds: float, every=None) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            if every is not None:
                every()
            self.client.spin_once(0.01)

    def switch_to(self, command_type: int) -> None:
        assert self.client.call(self.switch, ServoCommandType.Request(command_type=command_type), WAIT_S).success


@pytest.fixture(scope="module")
def servo(module_processes, tmp_path_factory):  # noqa: F811 (fixture)
    parameters = ur5_parameters(moveit_servo={
        "move_group_name": "ur_manipulator", "command_in_type": "speed_units", "publish_period": PERIOD_S,
        "incoming_command_timeout": TIMEOUT_S, "command_out_topic": "servo_out", "collision_check_rate": 0.0})
    process, namespace = start_node(module_processes, tmp_path_factory.mktemp("servo"), parameters, "servo_node")
    node = ServoClient(process, namespace)
    try:
        node.wait_serving("tool0")
        state = JointState(name=list(UR5_JOINTS), position=list(UR5_Q))
        wait_for(lambda: node.joint_states.publish(state) or node.spin_for(0.05) or node.commands, WAIT_S,
                 "the servo loop to publish from joint_states", process)
        yield node
        node.assert_alive()
    finally:
        node.close()


def moving_steps(commands: list[JointTrajectory]) -> list[tuple[np.ndarray, np.ndarray]]:
    """(positions, velocities) of every output with a non-zero velocity."""
    points = [(np.array(c.points[0].positions), np.array(c.points[0].velocities)) for c in commands]
    return [(q, v) for q, v in points if np.abs(v).max() > 0]


def test_a_constant_twist_moves_the_tip_along_it_at_its_speed(servo):
    servo.switch_to(ServoCommandType.Request.TWIST)
    servo.commands.clear()
    command = TwistStamped()
    command.header.frame_id = "base_link"
    command.twist.linear.x, command.twist.linear.y, command.twist.linear.z = 0.02, -0.03, 0.01
    servo.spin_for(1.0, every=lambda: servo.twist.publish(command))
    steps = moving_steps(servo.commands)
    assert len(steps) > 20, f"{len(servo.commands)} outputs, {len(steps)} moving"
    wanted = np.array([0.02, -0.03, 0.01])
    tips = np.array([CHAIN.forward_kinematics(q)[:3, 3] for q, _ in steps])
    moved = tips[-1] - tips[0]
    assert math.acos(np.dot(moved, wanted) / np.linalg.norm(moved) / np.linalg.norm(wanted)) <= TWIST_ANGLE
    per_step = np.linalg.norm(np.diff(tips, axis=0), axis=1) / PERIOD_S
    consecutive = per_step[per_step > 0]
    assert abs(np.median(consecutive) - np.linalg.norm(wanted)) <= SPEED_SHARE * np.linalg.norm(wanted)


def test_a_twist_in_a_frame_only_tf_knows_is_applied_in_its_axes(servo):
    """A static TF frame turned 90 degrees about z from base_link: its x axis is the base's y axis."""
    transform = TransformStamped(child_frame_id="servo_camera")
    transform.header.frame_id = "base_link"
    transform.transform.rotation.z, transform.transform.rotation.w = math.sin(math.pi / 4), math.cos(math.pi / 4)
    servo.tf_static.publish(TFMessage(transforms=[transform]))
    servo.spin_for(0.5)
    command = TwistStamped()
    command.header.frame_id = "servo_camera"
    command.twist.linear.x = 0.03
    servo.commands.clear()
    servo.spin_for(0.6, every=lambda: servo.twist.publish(command))
    steps = moving_steps(servo.commands)
    assert len(steps) > 20
    moved = CHAIN.forward_kinematics(steps[-1][0])[:3, 3] - CHAIN.forward_kinematics(steps[0][0])[:3, 3]
    assert math.acos(moved[1] / np.linalg.norm(moved)) <= TWIST_ANGLE


def test_commands_older_than_the_timeout_stop_the_arm(servo):
    servo.spin_for(TIMEOUT_S + 0.3)
    servo.commands.clear()
    servo.spin_for(0.3)
    assert servo.commands and not moving_steps(servo.commands)


def test_a_joint_jog_moves_only_its_joint(servo):
    servo.switch_to(ServoCommandType.Request.JOINT_JOG)
    servo.commands.clear()
    jog = JointJog(joint_names=["elbow_joint"], velocities=[0.2])
    servo.spin_for(0.5, every=lambda: servo.jog.publish(jog))
    steps = moving_steps(servo.commands)
    assert steps
    first, last = steps[0][0], steps[-1][0]
    assert last[2] > first[2]
    assert np.array_equal(np.delete(first, 2), np.delete(last, 2))
    assert all(np.count_nonzero(v) == 1 and v[2] == pytest.approx(0.2) for _, v in steps)


def test_pausing_stops_the_arm(servo):
    assert servo.client.call(servo.pause, SetBool.Request(data=True), WAIT_S).success
    jog = JointJog(joint_names=["elbow_joint"], velocities=[0.2])
    servo.spin_for(0.2, every=lambda: servo.jog.publish(jog))
    servo.commands.clear()
    servo.spin_for(0.3, every=lambda: servo.jog.publish(jog))
    assert servo.commands and not moving_steps(servo.commands)
    assert servo.client.call(servo.pause, SetBool.Request(data=False), WAIT_S).success


def test_malformed_commands_get_a_status_and_the_node_keeps_serving(servo):
    servo.statuses.clear()
    servo.jog.publish(JointJog(joint_names=["no_such_joint"], velocities=[1.0]))
    servo.jog.publish(JointJog(joint_names=["elbow_joint"], velocities=[1.0, 2.0]))
    servo.switch_to(ServoCommandType.Request.TWIST)
    unknown_frame = TwistStamped()
    unknown_frame.header.frame_id = "no_such_frame"
    servo.twist.publish(unknown_frame)
    wait_for(lambda: servo.spin_for(0.05) or sum(s.code == ServoStatus.INVALID for s in servo.statuses) >= 3, WAIT_S,
             "three INVALID statuses", servo.process)
    reasons = [s.message for s in servo.statuses if s.code == ServoStatus.INVALID]
    assert any("no_such_joint" in r for r in reasons) and any("no_such_frame" in r for r in reasons)
    assert not servo.client.call(servo.switch, ServoCommandType.Request(command_type=7), WAIT_S).success
    servo.wait_serving("tool0", timeout=WAIT_S)


def test_a_pose_target_is_reached_within_the_tolerances(servo):
    servo.switch_to(ServoCommandType.Request.POSE)
    servo.commands.clear()
    servo.spin_for(0.1)
    T_base_target = CHAIN.forward_kinematics(servo.last_positions())
    T_base_target[:3, 3] += (0.03, 0.02, -0.02)
    target = PoseStamped(pose=pose_msg(T_base_target))
    target.header.frame_id = "base_link"
    servo.statuses.clear()
    servo.stream_until(lambda: servo.pose.publish(target),
                       lambda: any(s.message == "pose target reached" for s in servo.statuses), "the pose target")
    reached = CHAIN.forward_kinematics(servo.last_positions())
    assert np.linalg.norm(reached[:3, 3] - T_base_target[:3, 3]) <= 0.001  # pose_tracking.linear_tolerance
    assert np.linalg.norm(rotation_log(reached[:3, :3].T @ T_base_target[:3, :3])) <= 0.01  # angular_tolerance


def halted(servo, code: int):
    return lambda: servo.statuses and servo.statuses[-1].code == code


def test_the_arm_stops_before_a_joint_limit(servo):
    servo.switch_to(ServoCommandType.Request.JOINT_JOG)
    jog = JointJog(joint_names=["shoulder_pan_joint"], velocities=[3.0])
    servo.statuses.clear()
    servo.stream_until(lambda: servo.jog.publish(jog), halted(servo, ServoStatus.JOINT_BOUND), "JOINT_BOUND")
    upper = UR5_MODEL.joints["shoulder_pan_joint"].upper
    assert max(c.points[0].positions[0] for c in servo.commands) <= upper - 0.1  # joint_limit_margins
    jog.velocities = [-3.0]
    servo.stream_until(lambda: servo.jog.publish(jog), lambda: servo.last_positions()[0] < 1.0, "back to the middle")


def test_the_arm_stops_at_a_singularity(servo):
    """wrist_2 at 0 aligns the UR5's wrist axes 4 and 6: jogging toward it halts before it."""
    side = math.copysign(1.0, servo.last_positions()[4])
    jog = JointJog(joint_names=["wrist_2_joint"], velocities=[-side * 0.5])
    servo.statuses.clear()
    servo.stream_until(lambda: servo.jog.publish(jog), halted(servo, ServoStatus.HALT_FOR_SINGULARITY),
                       "HALT_FOR_SINGULARITY")
    assert ServoStatus.DECELERATE_FOR_APPROACHING_SINGULARITY in {s.code for s in servo.statuses}
    assert all(side * c.points[0].positions[4] > 0 for c in servo.commands)
    jog.velocities = [side * 0.5]
    servo.stream_until(lambda: servo.jog.publish(jog), lambda: side * servo.last_positions()[4] > 0.5, "leaving")


def test_the_arm_stops_short_of_a_box_in_its_way(servo):
    servo.switch_to(ServoCommandType.Request.TWIST)
    tip = CHAIN.forward_kinematics(servo.last_positions())[:3, 3]
    servo.objects.publish(box_object("servo_box", 0.1, make_transform(None, tip + (0.25, 0.0, 0.0)), "base_link"))
    servo.spin_for(1.0)
    command = TwistStamped()
    command.header.frame_id = "base_link"
    command.twist.linear.x = 0.1
    servo.statuses.clear()
    servo.stream_until(lambda: servo.twist.publish(command), halted(servo, ServoStatus.HALT_FOR_COLLISION),
                       "HALT_FOR_COLLISION")
    assert ServoStatus.DECELERATE_FOR_COLLISION in {s.code for s in servo.statuses}
    stopped = dict(zip(UR5_JOINTS, servo.last_positions()))
    assert servo.state_validity(state_validity_request(stopped)).valid


def test_the_loop_and_its_topics_run_in_a_process_of_their_own(servo):
    """The servo's outputs, status and services belong to the servo process's node (kinematics_node_servo), not to
    the kinematics node: the loop and its traffic never share the services' process."""
    def publishers(topic: str) -> list[tuple[str, str]]:
        return sorted((i.node_name, i.node_namespace) for i in servo.node.get_publishers_info_by_topic(topic))

    private = f"{servo.namespace}/kinematics_node"
    expected = [("kinematics_node_servo", servo.namespace)]
    wait_for(lambda: servo.spin_for(0.05) or (publishers(f"{servo.namespace}/servo_out") == expected
                                             and publishers(f"{private}/status") == expected), WAIT_S,
             "the servo process's node publishing servo_out and status", servo.process)
    services = dict(servo.node.get_service_names_and_types_by_node("kinematics_node_servo", servo.namespace))
    assert {f"{private}/switch_command_type", f"{private}/pause_servo"} <= set(services), sorted(services)
    kinematics_node = dict(servo.node.get_service_names_and_types_by_node("kinematics_node", servo.namespace))
    assert f"{private}/pause_servo" not in kinematics_node and f"{servo.namespace}/compute_ik" in kinematics_node


def test_a_group_the_settings_do_not_fit_gets_a_status_and_the_node_keeps_serving(module_processes, tmp_path):  # noqa: F811
    """joint_limit_margins with 3 values for a 6-joint group: every period says why on the status, none moves."""
    parameters = ur5_parameters(moveit_servo={"move_group_name": "ur_manipulator", "command_out_topic": "servo_out",
                                              "joint_limit_margins": [0.1, 0.1, 0.1]})
    process, namespace = start_node(module_processes, tmp_path, parameters, "servo_misfit_node")
    node = ServoClient(process, namespace)
    try:
        node.wait_serving("tool0")
        state = JointState(name=list(UR5_JOINTS), position=list(UR5_Q))
        wait_for(lambda: node.joint_states.publish(state) or node.spin_for(0.05) or node.statuses, WAIT_S,
                 "a servo status", process)
        assert "joint_limit_margins takes 1 value or 6" in node.statuses[-1].message
        assert node.statuses[-1].code == ServoStatus.INVALID and not node.commands
        node.wait_serving("tool0", timeout=WAIT_S)
        node.assert_alive()
    finally:
        node.close()
