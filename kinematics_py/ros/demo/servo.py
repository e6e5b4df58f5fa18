"""``make run ARGS=--servo``: the node servos the bundled robot; a stand-in controller closes the loop.

The node starts with ``SERVO_PARAMETERS`` (moveit_servo's, speed units, commands out on ``OUT_TOPIC``). This
client plays the controller (every command's positions go back out on joint_states, so robot_state_publisher and
RViz show the arm move), streams a twist up, then jogs the first joint, and prints where the tip went.
"""
from __future__ import annotations

import time

import numpy as np
from control_msgs.msg import JointJog
from geometry_msgs.msg import TwistStamped
from moveit_msgs.msg import ServoStatus
from moveit_msgs.srv import ServoCommandType
from sensor_msgs.msg import JointState
from trajectory_msgs.msg import JointTrajectory

from ...model.robot_model import RobotModel
from ...model.srdf import SemanticModel
from ...robots import bundled_robot_path
from .client import KinematicsClient

OUT_TOPIC = "servo_controller/joint_trajectory"
GROUPS = {"ur5": "ur_manipulator", "panda": "panda_arm"}
START = {"ur5": (0.3, -1.0, 1.2, -0.4, 0.5, -0.6), "panda": (0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785)}
TWIST_UP_M_S = 0.05
JOG_RAD_S = 0.3
STREAM_S = 2.0
WAIT_S = 60.0


def servo_parameters(robot: str) -> dict:
    return {"moveit_servo": {"move_group_name": GROUPS[robot], "command_in_type": "speed_units",
                             "command_out_topic": OUT_TOPIC}}


def servo_demo(client: KinematicsClient, robot: str) -> bool:
    """Twist the tip up, jog the first joint; True when the tip rose and the joint turned as asked."""
    model = RobotModel.from_urdf_file(bundled_robot_path(robot))
    group = SemanticModel.from_srdf_file(bundled_robot_path(robot, "srdf"), model).group(GROUPS[robot])
    chain = model.chain(group.base_link, group.tip_link)
    node, prefix = client.node, client.prefix
    private = f"{prefix}kinematics_node/"
    states = node.create_publisher(JointState, f"{prefix}joint_states", 10)
    latest = {"positions": None, "status": ""}

    def controller(message: JointTrajectory) -> None:  # the stand-in: commanded positions are where the arm is
        latest["positions"] = np.array(message.points[0].positions)
        states.publish(JointState(name=list(message.joint_names), position=list(message.points[0].positions)))

    node.create_subscription(JointTrajectory, f"{prefix}{OUT_TOPIC}", controller, 10)
    node.create_subscription(ServoStatus, f"{private}status", lambda m: latest.update(status=m.message), 10)
    switch = node.create_client(ServoCommandType, f"{private}switch_command_type")
    deadline = time.monotonic() + WAIT_S
    while latest["positions"] is None and time.monotonic() < deadline:
        states.publish(JointState(name=list(chain.joint_names), position=list(START[robot])))
        client.spin_once(0.05)
    if latest["positions"] is None:
        print(f"no servo output on {prefix}{OUT_TOPIC} within {WAIT_S} s")
        return False
    tip_before = chain.forward_kinematics(latest["positions"])[:3, 3]
    twist = TwistStamped()
    twist.header.frame_id = group.base_link
    twist.twist.linear.z = TWIST_UP_M_S
    _stream(client, switch, ServoCommandType.Request.TWIST, node.create_publisher(
        TwistStamped, f"{private}delta_twist_cmds", 10), twist)
    rise = chain.forward_kinematics(latest["positions"])[2, 3] - tip_before[2]
    print(f"twist {TWIST_UP_M_S} m/s up for {STREAM_S} s: the tip rose {rise * 100:.1f} cm ({latest['status']})")
    joint_before = latest["positions"][0]
    jog = JointJog(joint_names=[chain.joint_names[0]], velocities=[JOG_RAD_S])
    _stream(client, switch, ServoCommandType.Request.JOINT_JOG, node.create_publisher(
        JointJog, f"{private}delta_joint_cmds", 10), jog)
    turned = latest["positions"][0] - joint_before
    print(f"jog {chain.joint_names[0]} at {JOG_RAD_S} rad/s for {STREAM_S} s: turned {turned:.2f} rad "
          f"({latest['status']})")
    return rise > 0.5 * TWIST_UP_M_S * STREAM_S and turned > 0.5 * JOG_RAD_S * STREAM_S


def _stream(client: KinematicsClient, switch, command_type: int, publisher, message) -> None:
    """Switch the command type, then publish ``message`` every 10 ms for STREAM_S."""
    client.call(switch, ServoCommandType.Request(command_type=command_type), WAIT_S)
    end = time.monotonic() + STREAM_S
    while time.monotonic() < end:
        publisher.publish(message)
        client.spin_once(0.01)
