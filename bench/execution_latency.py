"""Latency of kinematics_node's execute_trajectory: from the client sending a goal to the controller receiving its
part (control_msgs/action/FollowJointTrajectory), over DDS on loopback.

    .venv/bin/python bench/execution_latency.py [--goals 200] [--output bench/results/execution_latency.json]

Starts kinematics_node on the bundled Panda with moveit_resources' moveit_controllers.yaml (test/data) in its own
process; this process is the controller (a FollowJointTrajectory server succeeding at once, joint_states at
100 Hz at the ready pose) and the client (ExecuteTrajectory goals of two points 20 ms apart, one after the other).
Per goal, on this process's clock: ``accepted`` (sent -> the node's acceptance received), ``forwarded`` (sent ->
the controller's goal callback). The node sends its acceptance and starts the execution at once, so
forwarded - accepted is the node's time from accepting the goal to sending the controller's (its checks, the
split, one DDS hop less one).
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np
import yaml
from service_latency import isolated_ros_env, percentiles, stop_node

REPO = Path(__file__).resolve().parents[1]
CONFIG = REPO / "test" / "data" / "moveit_resources" / "panda_moveit_config" / "config"
JOINTS = [f"panda_joint{i}" for i in range(1, 8)]
READY = [0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785]
NAMESPACE = "/bench_execution"


def start_node(directory: Path, env: dict):
    import subprocess

    from kinematics_py.robots import bundled_robot_path

    parameters = {"robot_description": bundled_robot_path("panda").read_text(),
                  "robot_description_semantic": bundled_robot_path("panda", "srdf").read_text(),
                  **yaml.safe_load((CONFIG / "moveit_controllers.yaml").read_text())}
    params_file = directory / "node.params.yaml"
    params_file.write_text(yaml.safe_dump({"/**": {"ros__parameters": parameters}}))
    with open(directory / "node.log", "wb") as log:
        return subprocess.Popen([sys.executable, "-m", "kinematics_py.ros.node", "--ros-args", "--params-file",
                                 str(params_file), "-r", f"__ns:={NAMESPACE}"], env=env, stdout=log,
                                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)


def measure(goals: int) -> dict:
    import rclpy
    from control_msgs.action import FollowJointTrajectory
    from moveit_msgs.action import ExecuteTrajectory
    from rclpy.action import ActionClient, ActionServer
    from rclpy.callback_groups import ReentrantCallbackGroup
    from rclpy.executors import MultiThreadedExecutor
    from sensor_msgs.msg import JointState
    from trajectory_msgs.msg import JointTrajectoryPoint

    from kinematics_py.ros.messages.joint_trajectory import duration_msg

    rclpy.init()
    node = rclpy.create_node("bench_execution", namespace=NAMESPACE)
    group = ReentrantCallbackGroup()
    received: list[float] = []

    def on_goal(_goal):
        from rclpy.action import GoalResponse

        received.append(time.monotonic())
        return GoalResponse.ACCEPT

    def execute(goal_handle):
        goal_handle.succeed()
        return FollowJointTrajectory.Result()

    ActionServer(node, FollowJointTrajectory, "panda_arm_controller/follow_joint_trajectory", execute_callback=execute,
                 goal_callback=on_goal, callback_group=group)
    states = node.create_publisher(JointState, "joint_states", 10)
    node.create_timer(0.01, lambda: states.publish(JointState(name=JOINTS, position=READY)), callback_group=group)
    client = ActionClient(node, ExecuteTrajectory, "execute_trajectory", callback_group=group)
    executor = MultiThreadedExecutor(4)
    executor.add_node(node)
    threading.Thread(target=executor.spin, daemon=True).start()
    if not client.wait_for_server(timeout_sec=300.0):
        raise SystemExit("execute_trajectory never served")
    goal = ExecuteTrajectory.Goal()
    goal.trajectory.joint_trajectory.joint_names = JOINTS
    goal.trajectory.joint_trajectory.points = [JointTrajectoryPoint(positions=READY, time_from_start=duration_msg(t))
                                               for t in (0.0, 0.02)]
    accepted, forwarded, failures = [], [], []
    time.sleep(2.0)  # the node's controller client and joint_states subscription matched
    for _ in range(goals):
        count = len(received)
        sent = time.monotonic()
        future = client.send_goal_async(goal)
        while not future.done():
            time.sleep(0.0002)
        accepted.append(time.monotonic() - sent)
        result = future.result().get_result_async()
        while not result.done():
            time.sleep(0.0002)
        if result.result().result.error_code.val != 1 or len(received) != count + 1:
            failures.append(result.result().result.error_code.message)
            continue
        forwarded.append((accepted[-1], received[-1] - sent))
    rclpy.shutdown()
    if not forwarded:
        raise SystemExit(f"no goal was forwarded: {failures[:5]}")
    pairs = np.array(forwarded)
    return {"goals": goals, "failures": len(failures), "failure_messages": failures[:5],
            "accepted": percentiles(accepted), "forwarded": percentiles(pairs[:, 1]),
            "forwarded_minus_accepted": percentiles(pairs[:, 1] - pairs[:, 0])}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--goals", type=int, default=200)
    parser.add_argument("--output", type=Path)
    options = parser.parse_args()
    sys.path[:0] = [str(REPO), str(REPO / "test")]
    directory = Path(tempfile.mkdtemp(prefix="bench_execution-"))
    env = isolated_ros_env(directory)
    import os

    os.environ.update({k: v for k, v in env.items() if k.startswith("ROS_")})
    node = start_node(directory, env)
    try:
        figures = measure(options.goals)
    finally:
        stop_node(node)
    print(json.dumps(figures, indent=2))
    if options.output:
        options.output.parent.mkdir(parents=True, exist_ok=True)
        options.output.write_text(json.dumps(figures, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
