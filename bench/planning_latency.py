"""Does planning make kinematics_node deaf? compute_fk and short compute_ik latency over DDS while plans run.

    .venv/bin/python bench/planning_latency.py [--calls 500] [--planners 2] [--duration 20]
                                               [--planning-processes 1 0]

Starts kinematics_node on the bundled UR5 (as bench/service_latency.py does: its own process, DDS on this
machine only), publishes the ``make run`` demo's obstacle, and measures from one client process the latency of
compute_fk (tool0) and compute_ik (nearby seed) twice: with the node idle, then while ``--planners`` client
processes send plan_kinematic_path requests back to back (the demo's motion around the obstacle, which needs a
search: OMPL's bindings keep the GIL while they plan). Prints p50 / p90 / p99 of both series and their ratio,
for each value of the node's ``planning_processes`` parameter given (0: plans on the node's own threads), one
node after the other.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from service_latency import _client, _targets, isolated_ros_env, percentiles, run_python, start_node, stop_node

GROUP = "ur_manipulator"
#: Time [s] a planning process takes to start and build the robot on a busy machine (plans run on the node's
#: threads until then).
WORKER_START_S = 10.0


def _obstacle_and_motion():
    """(the demo's obstacle message, start, goal) on the bundled UR5."""
    from kinematics_py.geometry.transforms import make_transform
    from kinematics_py.model.robot_model import RobotModel
    from kinematics_py.robots import bundled_robot_path
    from kinematics_py.ros.demo.client import box_object
    from kinematics_py.ros.demo.motion import OFFSET
    from kinematics_py.ros.demo.walkthrough import OBSTACLE_SCENES, OBSTACLE_SIZE

    model = RobotModel.from_urdf_file(bundled_robot_path("ur5"))
    values, link = OBSTACLE_SCENES["ur5"]
    joints = model.chain("base_link", "tool0").joint_names
    through = dict(zip(joints, values))
    centre = model.link_poses(through)[link][:3, 3]
    box = box_object("obstacle", OBSTACLE_SIZE, make_transform(None, centre), model.root_link)
    moved = joints[1:3]
    start = {**through, **{name: through[name] + OFFSET for name in moved}}
    goal = {**through, **{name: through[name] - OFFSET for name in moved}}
    return box, start, goal


def planner(namespace: str, duration: float, seed: int) -> dict:
    """Plan the demo's motion back to back for ``duration`` [s]."""
    from moveit_msgs.srv import GetMotionPlan

    from kinematics_py.ros.demo.client import joint_goal, motion_plan_request

    client = _client(namespace, f"bench_planner_{seed}")
    _box, start, goal = _obstacle_and_motion()
    plans = client.client(GetMotionPlan, f"{namespace}/plan_kinematic_path")
    request = motion_plan_request(GROUP, [joint_goal(goal)], start, 5.0)
    times, codes, failures = [], [], []
    deadline = time.perf_counter() + duration
    try:
        while time.perf_counter() < deadline:
            began = time.perf_counter()
            answer = client.call(plans, request, 60.0).motion_plan_response
            times.append(time.perf_counter() - began)
            codes.append(int(answer.error_code.val))
            if answer.error_code.val != 1:
                failures.append(f"{answer.error_code.val}: {answer.error_code.message[:200]}")
    finally:
        client.close()
    return {"plans": len(times), "succeeded": codes.count(1), "failures": failures[:5], **percentiles(times)}


def latency(namespace: str, calls: int) -> dict:
    """compute_fk and compute_ik (nearby seed) latency of ``calls`` calls each."""
    from kinematics_py.ros.demo.client import fk_request, ik_request

    client = _client(namespace, "bench_latency")
    chain, configurations, targets = _targets(calls, seed=3)
    fk, ik = [], []
    try:
        for q, T in zip(configurations, targets):
            began = time.perf_counter()
            client.call(client.fk_client, fk_request(["tool0"], dict(zip(chain.joint_names, q))))
            fk.append(time.perf_counter() - began)
            began = time.perf_counter()
            client.call(client.ik_client, ik_request(GROUP, T, seed=dict(zip(chain.joint_names, q + 0.1))))
            ik.append(time.perf_counter() - began)
    finally:
        client.close()
    return {"compute_fk": percentiles(fk[len(fk) // 10:]), "compute_ik": percentiles(ik[len(ik) // 10:])}


def publish_obstacle(namespace: str) -> dict:
    """Publish the demo's obstacle for 30 s (the node takes it within a second)."""
    from moveit_msgs.msg import CollisionObject
    from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy

    client = _client(namespace, "bench_scene")
    box, _start, _goal = _obstacle_and_motion()
    publisher = client.node.create_publisher(CollisionObject, f"{namespace}/collision_object", QoSProfile(
        depth=10, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.VOLATILE))
    try:
        for _ in range(60):
            publisher.publish(box)
            client._executor.spin_once(timeout_sec=0.5)
    finally:
        client.close()
    return {"published": True}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=500)
    parser.add_argument("--planners", type=int, default=2)
    parser.add_argument("--duration", type=float, default=20.0, help="[s] the planners keep planning")
    parser.add_argument("--planning-processes", type=int, nargs="+", default=[1, 0],
                        help="the node's planning_processes parameter, one measurement per value")
    parser.add_argument("--latency", metavar="NAMESPACE", help=argparse.SUPPRESS)
    parser.add_argument("--planner", metavar="NAMESPACE", help=argparse.SUPPRESS)
    parser.add_argument("--scene", metavar="NAMESPACE", help=argparse.SUPPRESS)
    parser.add_argument("--seed", type=int, default=0, help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.latency:
        print(json.dumps(latency(options.latency, options.calls)))
        return 0
    if options.planner:
        print(json.dumps(planner(options.planner, options.duration, options.seed)))
        return 0
    if options.scene:
        print(json.dumps(publish_obstacle(options.scene)))
        return 0
    for processes in options.planning_processes:
        _measure(options, processes)
    return 0


def _measure(options, processes: int) -> None:
    directory = Path(tempfile.mkdtemp(prefix="kinematics_py-bench-"))
    env = isolated_ros_env(directory)
    namespace = "/bench_planning"
    node = start_node(directory, namespace, env, extra={"planning_processes": processes})
    try:
        run_python(["--scene", namespace], env, 300, __file__)
        idle = run_python(["--latency", namespace, "--calls", str(options.calls)], env, 900, __file__)
        planners = [subprocess.Popen([sys.executable, __file__, "--planner", namespace, "--duration",
                                      str(options.duration), "--seed", str(i)], env=env, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True) for i in range(options.planners)]
        time.sleep(3.0 + WORKER_START_S * bool(processes))  # the planners plan, the processes have the robot
        busy = run_python(["--latency", namespace, "--calls", str(options.calls)], env, 900, __file__)
        plans = []
        for process in planners:
            out, err = process.communicate(timeout=options.duration + 300)
            if process.returncode != 0:
                raise SystemExit(f"planner failed:\n{err[-3000:]}")
            plans.append(json.loads(out.strip().splitlines()[-1]))
    finally:
        stop_node(node)
    print(f"kinematics_node on the bundled UR5, planning_processes {processes}; {options.planners} clients planning "
          f"the demo's motion back to back (plans: {[p['plans'] for p in plans]}, succeeded "
          f"{[p['succeeded'] for p in plans]}, p50 {np.median([p['p50_ms'] for p in plans]):.0f} ms):")
    for failure in sorted({failure for p in plans for failure in p["failures"]}):
        print(f"  failed: {failure}")
    for service in ("compute_fk", "compute_ik"):
        a, b = idle[service], busy[service]
        print(f"  {service:10s} idle p50 {a['p50_ms']:.2f} p90 {a['p90_ms']:.2f} p99 {a['p99_ms']:.2f} ms | while "
              f"planning p50 {b['p50_ms']:.2f} p90 {b['p90_ms']:.2f} p99 {b['p99_ms']:.2f} ms | p50 x"
              f"{b['p50_ms'] / a['p50_ms']:.2f}, p99 x{b['p99_ms'] / a['p99_ms']:.2f}")

if __name__ == "__main__":
    sys.exit(main())
