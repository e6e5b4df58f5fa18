"""kinematics_node beside robot_state_publisher, on a ROS 2 install (needs launch, launch_ros, xacro).

    ros2 launch kinematics_py kinematics.launch.py
    ros2 launch kinematics_py kinematics.launch.py description_file:=/path/robot.urdf.xacro \\
        semantic_description_file:=/path/robot.srdf kinematics_config:=/path/kinematics.yaml

robot_state_publisher publishes the URDF (or expanded xacro) on robot_description and the robot's TF;
kinematics_node takes the description from that topic, and the SRDF and MoveIt's kinematics.yaml as
parameters (kinematics.yaml under robot_description_kinematics). Defaults: the bundled UR5.
"""
from pathlib import Path

import yaml
from ament_index_python.packages import get_package_share_directory
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node
from launch_ros.parameter_descriptions import ParameterValue

from kinematics_py.model.urdf import urdf_string_from_xacro_file
from kinematics_py.robots import bundled_robot_path
from launch import LaunchDescription

PACKAGE = "kinematics_py"


def _arguments():
    config = Path(get_package_share_directory(PACKAGE)) / "config"
    return [
        DeclareLaunchArgument("description_file", default_value=str(bundled_robot_path("ur5")),
                              description="URDF or xacro file of the robot"),
        DeclareLaunchArgument("semantic_description_file", default_value=str(bundled_robot_path("ur5", "srdf")),
                              description="SRDF file with the planning groups"),
        DeclareLaunchArgument("kinematics_config", default_value=str(config / "kinematics.yaml"),
                              description="MoveIt kinematics.yaml: solver settings per group"),
        DeclareLaunchArgument("collision_checking_unavailable_policy", default_value="error",
                              description="avoid_collisions=true on a robot without loadable collision geometry: "
                                          "error | ignore_with_warning"),
        DeclareLaunchArgument("solve_ik_service_name", default_value="solve_ik",
                              description="the service MoveIt's srv_kinematics_plugin calls"),
    ]


def _nodes(context):
    def argument(name: str) -> str:
        return LaunchConfiguration(name).perform(context)

    description_file = Path(argument("description_file"))
    robot_description = urdf_string_from_xacro_file(description_file) if description_file.suffix == ".xacro" \
        else description_file.read_text(encoding="utf-8")
    semantic = Path(argument("semantic_description_file")).read_text(encoding="utf-8")
    kinematics = yaml.safe_load(Path(argument("kinematics_config")).read_text(encoding="utf-8")) or {}
    return [
        Node(package="robot_state_publisher", executable="robot_state_publisher", output="screen",
             parameters=[{"robot_description": ParameterValue(robot_description, value_type=str)}]),
        Node(package=PACKAGE, executable="kinematics_node", output="screen",
             parameters=[{
                 "robot_description_semantic": ParameterValue(semantic, value_type=str),
                 "robot_description_kinematics": kinematics,
                 "collision_checking_unavailable_policy": argument("collision_checking_unavailable_policy"),
                 "solve_ik_service_name": argument("solve_ik_service_name"),
             }]),
    ]


def generate_launch_description():
    return LaunchDescription([*_arguments(), OpaqueFunction(function=_nodes)])
