"""Latency of kinematics_node's compute_cartesian_path over DDS on loopback, and of the planner alone.

    .venv/bin/python bench/cartesian_path_latency.py [--calls 300] [--output bench/results/cartesian_path.json]

Starts kinematics_node on example-robot-data's UR5 (its collision meshes) in its own process, as
bench/service_latency.py's collision series does, sends its world (a table under the robot and a box in its
workspace) on collision_object, and calls compute_cartesian_path from a client process: 0.3 m lines at
max_step 1 cm (31 IK steps) with avoid_collisions=true, from a tool-down configuration along +-x, +-y, +-z in
turn, each answer timed by toppra. For comparison, the same paths planned in the client process without ROS
(kinematics_py.planning: compute_cartesian_path with the collision check, then time_parameterize).
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from service_latency import GROUP, SCENE, _client, isolated_ros_env, percentiles, start_node, stop_node

START = (0.0, -1.2, 1.5, -1.9, -1.57, 0.0)
LINE_M = 0.3
MAX_STEP_M = 0.01
DIRECTIONS = np.vstack([np.eye(3), -np.eye(3)])


def _lines(model):
    names = ("shoulder_pan_joint", "shoulder_lift_joint", "elbow_joint", "wrist_1_joint", "wrist_2_joint",
             "wrist_3_joint")
    start = dict(zip(names, START))
    T_start = model.link_poses(start)["tool0"]
    goals = []
    for direction in DIRECTIONS:
        goal = T_start.copy()
        goal[:3, 3] += LINE_M * direction
        goals.append(goal)
    return names, start, goals


def over_dds(namespace: str, calls: int) -> dict:
    from moveit_msgs.msg import CollisionObject
    from moveit_msgs.srv import GetCartesianPath
    from robots import example_robot_urdf
    from shape_msgs.msg import SolidPrimitive

    from kinematics_py.geometry.transforms import make_transform
    from kinematics_py.model.robot_model import RobotModel
    from kinematics_py.ros.demo.client import cartesian_path_request
    from kinematics_py.ros.messages.conversions import pose_msg_from_transform

    model = RobotModel.from_urdf_string(example_robot_urdf("ur5").read_text())
    names, start, goals = _lines(model)
    client = _client(namespace, "bench_cartesian")
    service = client.client(GetCartesianPath, f"{namespace}/compute_cartesian_path")
    publisher = client.node.create_publisher(CollisionObject, f"{namespace}/collision_object", 100)
    try:
        if not client.wait_until_answering(service, GetCartesianPath.Request(), 60.0):
            raise SystemExit("compute_cartesian_path not answering")
        for name, (size, center) in SCENE.items():
            msg = CollisionObject(id=name, operation=CollisionObject.ADD,
                                  pose=pose_msg_from_transform(make_transform(None, center)),
                                  primitives=[SolidPrimitive(type=SolidPrimitive.BOX, dimensions=list(size))])
            msg.primitive_poses = [pose_msg_from_transform(np.eye(4))]
            publisher.publish(msg)
        time.sleep(2.0)
        requests = [cartesian_path_request(GROUP, [goal], MAX_STEP_M, start) for goal in goals]
        times, fractions, points = [], [], []
        for k in range(calls):
            request = requests[k % len(requests)]
            began = time.perf_counter()
            response = client.call(service, request, 30.0)
            times.append(time.perf_counter() - began)
            if response.error_code.val != 1:
                raise SystemExit(f"compute_cartesian_path failed: {response.error_code.message}")
            fractions.append(response.fraction)
            points.append(len(response.solution.joint_trajectory.points))
        return {**percentiles(times[len(times) // 10:]), "mean_fraction": float(np.mean(fractions)),
                "points": sorted(set(points))}
    finally:
        client.close()


def without_ros(calls: int) -> dict:
    from robots import example_robot_urdf, ur5_collision_srdf

    from kinematics_py import CollisionChecker, KinematicsPlugin, RobotModel, SemanticModel
    from kinematics_py.collision.geometry import Box
    from kinematics_py.geometry.transforms import make_transform
    from kinematics_py.planning.cartesian_path import compute_cartesian_path
    from kinematics_py.planning.time_parameterization import joint_limits, time_parameterize

    urdf, srdf = example_robot_urdf("ur5").read_text(), ur5_collision_srdf()
    model = RobotModel.from_urdf_string(urdf)
    checker = CollisionChecker(model, SemanticModel.from_srdf_string(srdf, model))
    for name, (size, center) in SCENE.items():
        checker.scene.add_object(name, [Box(size)], pose=make_transform(None, center))
    plugin = KinematicsPlugin()
    assert plugin.initialize(urdf, GROUP, robot_description_semantic=srdf)
    names, start, goals = _lines(model)
    validity = checker.validity(names, start)
    limits = joint_limits(model, names)
    plan_times, timing_times = [], []
    for k in range(calls):
        began = time.perf_counter()
        path = compute_cartesian_path(plugin, list(START), [goals[k % len(goals)]], MAX_STEP_M, validity=validity)
        planned = time.perf_counter()
        time_parameterize(path.positions, limits)
        timing_times.append(time.perf_counter() - planned)
        plan_times.append(planned - began)
    return {"compute_cartesian_path": percentiles(plan_times[len(plan_times) // 10:]),
            "time_parameterize": percentiles(timing_times[len(timing_times) // 10:])}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--output", type=Path)
    parser.add_argument("--client", metavar="NAMESPACE", help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.client:
        print(json.dumps(over_dds(options.client, options.calls)))
        return 0
    import subprocess

    directory = Path(tempfile.mkdtemp(prefix="kinematics_py-bench-"))
    env = isolated_ros_env(directory)
    namespace = f"/bench_cartesian_{os.getpid()}"
    node = start_node(directory, namespace, env, collision=True)
    try:
        output = subprocess.run([sys.executable, __file__, "--client", namespace, "--calls", str(options.calls)],
                                env=env, capture_output=True, text=True, timeout=1800)
        if output.returncode != 0:
            raise SystemExit(f"client failed:\n{output.stderr[-3000:]}")
        results = {"compute_cartesian_path over DDS": json.loads(output.stdout.strip().splitlines()[-1])}
    finally:
        stop_node(node)
    results.update(without_ros(options.calls))
    print(f"0.3 m lines at 1 cm steps (31 IK steps), avoid_collisions, example-robot-data's UR5 (collision meshes), "
          f"world: a table and a box; {os.cpu_count()} CPUs; first 10 % dropped as warm-up:")
    for label, figures in results.items():
        extra = (f", mean fraction {figures['mean_fraction']:.3f}, points per answer {figures['points']}"
                 if "mean_fraction" in figures else "")
        print(f"  {label:<32} p50 {figures['p50_ms']:6.2f} ms  p90 {figures['p90_ms']:6.2f} ms  "
              f"p99 {figures['p99_ms']:6.2f} ms  max {figures['max_ms']:7.2f} ms{extra}")
    if options.output:
        options.output.write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
