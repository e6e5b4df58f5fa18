"""CPU the servo process takes per period, idle and servoing, at moveit_servo's default publish_period.

    .venv/bin/python bench/servo_cpu.py [--period 0.034] [--duration 10]

Starts kinematics_node on the bundled UR5 with servo on (``ur_manipulator``, the given publish_period, the
default collision checks, DDS on this machine only, as bench/servo_jitter.py), and a client process that sends
joint_states once, then for ``--duration`` seconds each: sends nothing ("idle": the loop holds the arm, and its
commands time out), streams a twist (0.5 cm/s along x in base_link) once per period ("twist"), streams a joint jog
(0.02 rad/s of the elbow) once per period ("jog"). For each phase: the CPU [ms] the servo process (the node's
child process taking the most) and the kinematics node took per period, from Linux /proc, and the outputs the
client received per period.
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

from service_latency import isolated_ros_env, run_python, start_node, stop_node
from servo_jitter import JOINTS, START, child_pids, cpu_seconds, servo_parameters


def client(namespace: str, node_pid: int, duration: float, period: float) -> dict:
    from control_msgs.msg import JointJog
    from geometry_msgs.msg import TwistStamped
    from moveit_msgs.srv import ServoCommandType
    from sensor_msgs.msg import JointState
    from trajectory_msgs.msg import JointTrajectory

    from kinematics_py.ros.demo.client import KinematicsClient

    kinematics = KinematicsClient(namespace, node_name="bench_servo_cpu")
    node, private = kinematics.node, f"{namespace}/kinematics_node"
    outputs = []
    node.create_subscription(JointTrajectory, f"{namespace}/servo_out", outputs.append, 1000)
    states = node.create_publisher(JointState, f"{namespace}/joint_states", 10)
    twist = node.create_publisher(TwistStamped, f"{private}/delta_twist_cmds", 10)
    jog = node.create_publisher(JointJog, f"{private}/delta_joint_cmds", 10)
    switch = node.create_client(ServoCommandType, f"{private}/switch_command_type")
    deadline = time.monotonic() + 120.0
    while not outputs and time.monotonic() < deadline:
        states.publish(JointState(name=list(JOINTS), position=list(START)))
        kinematics.spin_once(0.05)
    if not outputs:
        raise SystemExit("the servo loop published nothing within 120 s")
    kinematics.spin_once(2.0)  # the first periods' compilation and collision set-up are not measured

    def phase(send) -> dict:
        processes = [node_pid, *child_pids(node_pid)]
        before = {pid: cpu_seconds(pid) for pid in processes}
        outputs.clear()
        start = time.monotonic()
        next_send = start
        while (now := time.monotonic()) < start + duration:
            if send is not None and now >= next_send:
                send()
                next_send += period
            kinematics.spin_once(max(0.0, min(next_send - time.monotonic(), 0.005)))
        elapsed = time.monotonic() - start
        used = {pid: cpu_seconds(pid) - before[pid] for pid in processes}
        periods = elapsed / period
        servo_pid = max(processes[1:], key=used.get)
        return {"servo_ms_per_period": 1e3 * used[servo_pid] / periods,
                "servo_share": 100 * used[servo_pid] / elapsed,
                "node_ms_per_period": 1e3 * used[node_pid] / periods,
                "outputs_per_period": len(outputs) / periods,
                "other_children_ms": 1e3 * sum(v for p, v in used.items() if p not in (node_pid, servo_pid))}

    figures = {"idle": phase(None)}
    command = TwistStamped()
    command.header.frame_id = "base_link"
    command.twist.linear.x = 0.005
    figures["twist"] = phase(lambda: twist.publish(command))
    kinematics.call(switch, ServoCommandType.Request(command_type=ServoCommandType.Request.JOINT_JOG), 30.0)
    figures["jog"] = phase(lambda: jog.publish(JointJog(joint_names=["elbow_joint"], velocities=[0.02])))
    kinematics.close()
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--period", type=float, default=0.034)
    parser.add_argument("--duration", type=float, default=10.0)
    parser.add_argument("--client")
    parser.add_argument("--node-pid", type=int)
    args = parser.parse_args()
    if args.client:
        print(json.dumps(client(args.client, args.node_pid, args.duration, args.period)))
        return 0
    directory = Path(tempfile.mkdtemp(prefix="servo_cpu_"))
    env = isolated_ros_env(directory)
    servo = servo_parameters(args.period)
    node = start_node(directory, "/bench_servo_cpu", env, extra=servo)
    try:
        figures = run_python(["--client", "/bench_servo_cpu", "--node-pid", str(node.pid), "--duration",
                              str(args.duration), "--period", str(args.period)], env,
                             timeout=3 * args.duration + 300, script=__file__)
    finally:
        stop_node(node)
    print(f"publish_period {args.period * 1e3:g} ms, {args.duration:g} s per phase")
    print("| phase | servo process [ms CPU / period] | [% of a core] | kinematics node [ms / period] | "
          "outputs / period |")
    print("|---|---|---|---|---|")
    for name, f in figures.items():
        print(f"| {name} | {f['servo_ms_per_period']:.2f} | {f['servo_share']:.1f} | {f['node_ms_per_period']:.2f} | "
              f"{f['outputs_per_period']:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
