"""Does the servo loop keep its period while compute_ik is hammered, and does it slow compute_ik down?

    .venv/bin/python bench/servo_jitter.py [--duration 10] [--hammers 2] [--period 0.01]

Starts kinematics_node on the bundled UR5 twice (its own process each, DDS on this machine only, as
bench/service_latency.py does): without servo, then with ``moveit_servo.*`` (a joint jog streamed at 100 Hz, the
default collision checks on). For each, ``--hammers`` client processes call compute_ik back to back for
``--duration`` seconds, and a recorder process streams the jog (to both nodes: the same load) and, with servo
on, takes the loop's outputs on command_out_topic and the
intervals between their header stamps (the node's clock when each period published: the loop's own schedule,
not DDS delivery). Prints the interval p50 / p99 / max against publish_period, the periods late by more than half a
period, compute_ik's latency p50 / p99 with servo off and on, and the CPU the node and its child processes (the
servo process, with servo on) took over the measured window [% of one core] (Linux /proc).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np
from service_latency import isolated_ros_env, percentiles, run_python, start_node, stop_node, worker

JOINTS = ("shoulder_pan_joint", "shoulder_lift_joint", "elbow_joint", "wrist_1_joint", "wrist_2_joint",
          "wrist_3_joint")
START = (0.3, -1.0, 1.2, -0.4, 0.5, -0.6)


def cpu_seconds(pid: int) -> float:
    """User + system CPU time [s] of process ``pid`` so far (0 once it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def child_pids(pid: int) -> list[int]:
    children = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        children += [int(child) for child in (task / "children").read_text().split()]
    return children


def cpu_shares(pid: int, start_at: float, duration: float, shares: dict) -> None:
    """Fill ``shares`` with the CPU [% of one core] ``pid`` and its children took from ``start_at`` (a
    ``time.time()``) for ``duration`` [s]."""
    time.sleep(max(0.0, start_at - time.time()))
    children = child_pids(pid)
    before = {p: cpu_seconds(p) for p in [pid, *children]}
    time.sleep(duration)
    used = {p: cpu_seconds(p) - before[p] for p in before}
    shares["node"] = 100 * used[pid] / duration
    shares["children"] = 100 * sum(used[p] for p in children) / duration


def recorder(namespace: str, duration: float, start_at: float, servo: bool) -> dict:
    """Stream a slow elbow jog and record the servo outputs' stamps [s] for ``duration`` (without ``servo``, the
    same stream to a node that drops it: the same load on the machine)."""
    from control_msgs.msg import JointJog
    from moveit_msgs.srv import ServoCommandType
    from sensor_msgs.msg import JointState
    from trajectory_msgs.msg import JointTrajectory

    from kinematics_py.ros.demo.client import KinematicsClient

    client = KinematicsClient(namespace, node_name="bench_servo_recorder")
    node, private = client.node, f"{namespace}/kinematics_node"
    stamps = []
    node.create_subscription(JointTrajectory, f"{namespace}/servo_out",
                             lambda m: stamps.append(m.header.stamp.sec + m.header.stamp.nanosec * 1e-9), 1000)
    states = node.create_publisher(JointState, f"{namespace}/joint_states", 10)
    jog = node.create_publisher(JointJog, f"{private}/delta_joint_cmds", 10)
    switch = node.create_client(ServoCommandType, f"{private}/switch_command_type")
    while servo and not stamps:
        states.publish(JointState(name=list(JOINTS), position=list(START)))
        client.spin_once(0.05)
    if servo:
        client.call(switch, ServoCommandType.Request(command_type=ServoCommandType.Request.JOINT_JOG), 30.0)
    time.sleep(max(0.0, start_at - time.time()))
    stamps.clear()
    end = time.monotonic() + duration
    command = JointJog(joint_names=["elbow_joint"], velocities=[0.02])
    while time.monotonic() < end:
        jog.publish(command)
        client.spin_once(0.01)
    client.close()
    # Outputs published before start_at may still have been queued when the list was cleared.
    return {"stamps": [stamp for stamp in stamps if stamp >= start_at]}


def run(extra: dict, hammers: int, duration: float, env: dict, directory: Path, period: float) -> dict:
    namespace = f"/bench_servo_{'on' if extra else 'off'}"
    node = start_node(directory, namespace, env, extra=extra)
    try:
        start_at = time.time() + 15.0  # the node serves and every client found it by then
        workers = [subprocess.Popen([sys.executable, __file__, "--worker", namespace, "--duration", str(duration),
                                     "--seed", str(i), "--start-at", str(start_at)], env=env,
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                   for i in range(hammers)]
        shares: dict = {}
        sampler = threading.Thread(target=cpu_shares, args=(node.pid, start_at, duration, shares), daemon=True)
        sampler.start()
        stamps = run_python(["--recorder", namespace, "--duration", str(duration), "--start-at", str(start_at)]
                            + (["--servo"] if extra else []), env, timeout=duration + 180, script=__file__)["stamps"]
        latencies = []
        for process in workers:
            output, errors = process.communicate(timeout=duration + 180)
            if process.returncode != 0:
                raise SystemExit(f"worker failed:\n{errors[-3000:]}")
            latencies += json.loads(output.strip().splitlines()[-1])["latencies_s"]
        sampler.join()
    finally:
        stop_node(node)
    result = {"compute_ik": percentiles(latencies), "cpu": shares}
    if stamps:
        intervals = np.diff(np.asarray(stamps))
        result["intervals"] = percentiles(intervals) | {"late": int(np.sum(intervals > 1.5 * period))}
    return result


def servo_parameters(period: float) -> dict:
    """The node's servo parameters in the benches: the UR5's group, commands in speed units, ``period`` [s]."""
    return {"moveit_servo": {"move_group_name": "ur_manipulator", "publish_period": period,
                             "command_out_topic": "servo_out", "command_in_type": "speed_units"}}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--duration", type=float, default=10.0)
    parser.add_argument("--hammers", type=int, default=2)
    parser.add_argument("--period", type=float, default=0.01)
    parser.add_argument("--worker")
    parser.add_argument("--recorder")
    parser.add_argument("--servo", action="store_true")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--start-at", type=float, default=0.0)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(worker(args.worker, args.duration, args.seed, args.start_at)))
        return 0
    if args.recorder:
        print(json.dumps(recorder(args.recorder, args.duration, args.start_at, args.servo)))
        return 0
    directory = Path(tempfile.mkdtemp(prefix="servo_jitter_"))
    env = isolated_ros_env(directory)
    servo = servo_parameters(args.period)
    off = run({}, args.hammers, args.duration, env, directory, args.period)
    on = run(servo, args.hammers, args.duration, env, directory, args.period)
    i = on["intervals"]
    print(f"servo loop, publish_period {args.period * 1e3:g} ms, {args.hammers} compute_ik clients: interval p50 "
          f"{i['p50_ms']:.2f} ms, p99 {i['p99_ms']:.2f} ms, max {i['max_ms']:.2f} ms over {i['calls']} periods, "
          f"{i['late']} late by more than half a period")
    for label, figures in (("servo off", off), ("servo on", on)):
        ik = figures["compute_ik"]
        cpu = figures["cpu"]
        print(f"compute_ik with {label}: p50 {ik['p50_ms']:.2f} ms, p99 {ik['p99_ms']:.2f} ms ({ik['calls']} calls); "
              f"CPU: node {cpu['node']:.1f} %, its child processes {cpu['children']:.1f} % of a core")
    return 0


if __name__ == "__main__":
    sys.exit(main())
