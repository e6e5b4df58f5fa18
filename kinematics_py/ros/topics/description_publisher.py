"""A robot_state_publisher stand-in for machines without it (``make run``, the launch file's fallback).

Publishes the URDF on ``robot_description`` and, if given, the SRDF on ``robot_description_semantic``
(std_msgs/String, transient local, as robot_state_publisher and move_group do), the fixed joints on
``/tf_static`` and, for every ``joint_states`` message, the movable joints on ``/tf``.
``--semantic-only`` publishes just the SRDF, beside a real robot_state_publisher. Without ``--urdf`` or
``--robot`` it takes the URDF from its ``robot_description`` parameter, as robot_state_publisher does.

    kinematics_description_publisher --urdf robot.urdf [--srdf robot.srdf]    # also .xacro
    kinematics_description_publisher --robot ur5      # a bundled robot, URDF and SRDF
    kinematics_description_publisher --ros-args --params-file robot_description.params.yaml
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import rclpy
from geometry_msgs.msg import TransformStamped
from rclpy.executors import ExternalShutdownException
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from rclpy.utilities import remove_ros_args
from sensor_msgs.msg import JointState
from std_msgs.msg import String
from tf2_msgs.msg import TFMessage

from ...errors import KinematicsError, UrdfError
from ...model.robot_model import RobotModel, joint_motion
from ...model.urdf import urdf_string_from_xacro_file
from ...robots import BUNDLED_ROBOTS, bundled_robot_path
from ..messages.conversions import joint_values_from_joint_state, transform_msg_from_transform

LATCHED_QOS = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL)


class DescriptionPublisher(Node):
    def __init__(self, urdf: str = "", srdf: str = "", semantic_only: bool = False):
        """``urdf`` "": the ``robot_description`` parameter's (UrdfError when that is empty too)."""
        super().__init__("description_publisher")
        urdf = urdf or self.declare_parameter("robot_description", "").value
        if not urdf:
            raise UrdfError("no URDF: give --urdf, --robot or the robot_description parameter")
        self._model = RobotModel.from_urdf_string(urdf)
        if srdf:
            self.create_publisher(String, "robot_description_semantic", LATCHED_QOS).publish(String(data=srdf))
        if semantic_only:
            return
        self.create_publisher(String, "robot_description", LATCHED_QOS).publish(String(data=urdf))
        fixed = [joint for joint in self._model.description.joints if joint.type == "fixed"]
        static = TFMessage(transforms=[self._stamped(joint, joint.T_parent_joint) for joint in fixed])
        self.create_publisher(TFMessage, "/tf_static", LATCHED_QOS).publish(static)
        self._tf = self.create_publisher(TFMessage, "/tf", 100)
        self.create_subscription(JointState, "joint_states", self._on_joint_states, 10)
        self.get_logger().info(f"publishing robot {self._model.name!r}: robot_description"
                               f"{', robot_description_semantic' if srdf else ''}, {len(fixed)} fixed joint(s) on "
                               f"/tf_static, movable joints on /tf from joint_states")

    def _stamped(self, joint, T) -> TransformStamped:
        stamped = TransformStamped(transform=transform_msg_from_transform(T))
        stamped.header.stamp = self.get_clock().now().to_msg()
        stamped.header.frame_id = joint.parent
        stamped.child_frame_id = joint.child
        return stamped

    def _on_joint_states(self, msg: JointState) -> None:
        values = joint_values_from_joint_state(msg, self._model, strict=False)
        resolved = self._model.resolve_joint_values(values)
        moving = [joint for joint in self._model.description.joints
                  if joint.is_movable and joint.name in resolved and joint.type != "fixed"]
        self._tf.publish(TFMessage(transforms=[
            self._stamped(joint, joint.T_parent_joint @ joint_motion(joint, resolved[joint.name]))
            for joint in moving]))


def read_description(path: str | Path) -> str:
    """A URDF file's text, or a xacro file's expansion."""
    path = Path(path)
    return urdf_string_from_xacro_file(path) if path.suffix == ".xacro" else path.read_text(encoding="utf-8")


def main(args: list[str] | None = None) -> int:
    argv = list(sys.argv if args is None else args)
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--urdf", help="URDF or .xacro file (default: the robot_description parameter)")
    source.add_argument("--robot", choices=BUNDLED_ROBOTS, help="a bundled robot (URDF and SRDF)")
    parser.add_argument("--srdf", help="SRDF file")
    parser.add_argument("--semantic-only", action="store_true",
                        help="publish only robot_description_semantic (robot_state_publisher does the rest)")
    options = parser.parse_args(remove_ros_args(argv)[1:])
    urdf_path = options.urdf or (bundled_robot_path(options.robot) if options.robot else None)
    urdf = read_description(urdf_path) if urdf_path else ""
    srdf_path = options.srdf or (bundled_robot_path(options.robot, "srdf") if options.robot else None)
    srdf = Path(srdf_path).read_text(encoding="utf-8") if srdf_path else ""

    rclpy.init(args=argv)
    try:
        node = DescriptionPublisher(urdf, srdf, options.semantic_only)
    except (ValueError, KinematicsError) as error:
        print(f"kinematics_description_publisher: {error}", file=sys.stderr)
        rclpy.try_shutdown()
        return 1
    try:
        rclpy.spin(node)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        node.destroy_node()
        rclpy.try_shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
