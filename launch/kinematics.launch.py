"""kinematics_node and a robot description publisher, on a ROS 2 install or the project's venv.

    ros2 launch kinematics_py kinematics.launch.py
    ros2 launch kinematics_py kinematics.launch.py description_file:=/path/robot.urdf.xacro \\
        semantic_description_file:=/path/robot.srdf kinematics_config:=/path/kinematics.yaml
    ros2 launch kinematics_py kinematics.launch.py state_publisher:=description_publisher

The state publisher takes the URDF (or expanded xacro) as its robot_description parameter, publishes it on
the robot_description topic and the robot's TF: robot_state_publisher where it is installed, otherwise (or
with ``state_publisher:=description_publisher``) kinematics_py's own kinematics_description_publisher, which
does the same for this purpose. The launch says which it starts. kinematics_node takes the description from
that topic, and the SRDF and MoveIt's kinematics.yaml as parameters (kinematics.yaml under
robot_description_kinematics). Defaults: the bundled UR5. Every executable is found before anything starts,
and when either process ends the launch ends the other: no process is left behind.
"""
import os
from pathlib import Path

import yaml
from ament_index_python.packages import PackageNotFoundError, get_package_prefix, get_package_share_directory
from launch.actions import DeclareLaunchArgument, LogInfo, OpaqueFunction, Shutdown
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node
from launch_ros.parameter_descriptions import ParameterValue

from kinematics_py.model.urdf import urdf_string_from_xacro_file
from kinematics_py.robots import bundled_robot_path
from launch import LaunchDescription

PACKAGE = "kinematics_py"
#: state_publisher choice -> (package, executable)
STATE_PUBLISHERS = {
    "robot_state_publisher": ("robot_state_publisher", "robot_state_publisher"),
    "description_publisher": (PACKAGE, "kinematics_description_publisher"),
}
AUTO = "auto"


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
        DeclareLaunchArgument("state_publisher", default_value=AUTO, choices=[AUTO, *STATE_PUBLISHERS],
                              description="what publishes robot_description and the robot's TF: "
                                          "robot_state_publisher when installed (auto), or the one named"),
    ]


def executable_path(package: str, executable: str) -> Path | None:
    """<prefix>/lib/<package>/<executable> as launch_ros finds it, or None where it is not installed."""
    try:
        path = Path(get_package_prefix(package)) / "lib" / package / executable
    except PackageNotFoundError:
        return None
    return path if os.access(path, os.X_OK) else None


def choose_state_publisher(choice: str) -> tuple[str, str, str]:
    """(package, executable, why) of the state publisher; RuntimeError (nothing started) when it is missing."""
    if choice == AUTO:
        if executable_path(*STATE_PUBLISHERS["robot_state_publisher"]):
            return (*STATE_PUBLISHERS["robot_state_publisher"], "installed")
        return (*STATE_PUBLISHERS["description_publisher"], "robot_state_publisher is not installed")
    package, executable = STATE_PUBLISHERS[choice]
    return package, executable, f"state_publisher:={choice}"


def _nodes(context):
    def argument(name: str) -> str:
        return LaunchConfiguration(name).perform(context)

    package, executable, why = choose_state_publisher(argument("state_publisher"))
    needed = ((package, executable), (PACKAGE, "kinematics_node"))
    missing = [f"{p}/{e}" for p, e in needed if not executable_path(p, e)]
    if missing:
        raise RuntimeError(f"not installed: {', '.join(missing)} (no <prefix>/lib/<package>/<executable> on "
                           f"AMENT_PREFIX_PATH); nothing was started")
    description_file = Path(argument("description_file"))
    robot_description = urdf_string_from_xacro_file(description_file) if description_file.suffix == ".xacro" \
        else description_file.read_text(encoding="utf-8")
    semantic = Path(argument("semantic_description_file")).read_text(encoding="utf-8")
    kinematics = yaml.safe_load(Path(argument("kinematics_config")).read_text(encoding="utf-8")) or {}
    return [
        LogInfo(msg=f"kinematics.launch.py: robot_description and TF from {package}/{executable} ({why})"),
        Node(package=package, executable=executable, output="screen", on_exit=Shutdown(),
             parameters=[{"robot_description": ParameterValue(robot_description, value_type=str)}]),
        Node(package=PACKAGE, executable="kinematics_node", output="screen", on_exit=Shutdown(),
             parameters=[{
                 "robot_description_semantic": ParameterValue(semantic, value_type=str),
                 "robot_description_kinematics": kinematics,
                 "collision_checking_unavailable_policy": argument("collision_checking_unavailable_policy"),
                 "solve_ik_service_name": argument("solve_ik_service_name"),
             }]),
    ]


def generate_launch_description():
    return LaunchDescription([*_arguments(), OpaqueFunction(function=_nodes)])
