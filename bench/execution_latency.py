"""Latency of kinematics_node's execute_trajectory: from the client sending a goal to the controller receiving its
part (control_msgs/action/FollowJointTrajectory), over DDS on loopback.

    .venv/bin/python bench/execution_latency.py [--goals 200] [--ends 10]
        [--output bench/results/execution_latency.json]

Starts kinematics_node on the bundled Panda with moveit_resources' moveit_controllers.yaml (test/data) in its own
process; this process is the controller (a FollowJointTrajectory server succeeding at once, joint_states at
100 Hz at the ready pose) and the client (ExecuteTrajectory goals of two points 20 ms apart, one after the other).
Per goal, on this process's clock: ``accepted`` (sent -> the node's acceptance received), ``forwarded`` (sent ->
the controller's goal callback). The node sends its acceptance and starts the execution at once, so
forwarded - accepted is the node's time from accepting the goal to sending the controller's (its checks, the
split, one DDS hop less one).

Then the ends of goals (issue 29's target: each within ``ENDS_WITHIN_S``, 1 s), ``--ends`` repetitions of each, with
test/ros/processes/standin_controller.py (run as a process, as the tests run it) as the controller:
``cancel`` (a 60 s goal at a hanging controller cancelled: cancel sent -> the goal's result, CANCELED/PREEMPTED),
``overrun`` (a 1 s goal at a hanging controller: sent -> TIMED_OUT result, less the 1.0 x 1.2 + 0.5 s allowed;
from the client's send, so the acceptance's and the forwarding's hops are in it), ``killed SIGTERM`` and
``killed SIGKILL`` (a 60 s goal's controller killed mid-execution, 1 s after it received the goal, a stand-in of
its own each time: the process reaped -> the goal's CONTROL_FAILED "gone" result). Printed as a table
(p50/p90/max against the target) with the load average before and after.
"""
from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
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
STANDIN = REPO / "test" / "ros" / "processes" / "standin_controller.py"
#: Issue 29's target: a goal whose controller is gone, that is cancelled or that overran ends within this long [s].
ENDS_WITHIN_S = 1.0
#: moveit_controllers.yaml's allowed execution: duration x scaling + margin.
ALLOWED_SCALING, ALLOWED_MARGIN_S = 1.2, 0.5
LONG_TRAJECTORY_S = 60.0  # cancelled or killed mid-execution
OVERRUN_TRAJECTORY_S = 1.0
#: Left to a controller that has a goal before it is killed, for its acceptance to reach the node [s] (killed
#: before, the goal is one the controller never answered: CONTROL_FAILED once GOAL_RESPONSE_WAIT_S, 5 s, passed).
SETTLE_S = 1.0


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


class StandIn:
    """A stand-in controller process in NAMESPACE at ``positions`` (its record and mode files in ``directory``)."""

    def __init__(self, directory: Path, env: dict, index: int, positions: list[float], mode: str):
        self.record, mode_file = directory / f"standin_{index}.jsonl", directory / f"standin_{index}.mode"
        mode_file.write_text(mode)
        self.positions = positions
        with open(directory / f"standin_{index}.log", "wb") as log:
            self.process = subprocess.Popen(
                [sys.executable, str(STANDIN), "--action", f"{NAMESPACE}/panda_arm_controller/follow_joint_trajectory",
                 "--joint-states", f"{NAMESPACE}/joint_states", "--joints", *JOINTS, "--positions",
                 *map(str, positions), "--record", str(self.record), "--mode-file", str(mode_file)],
                env=env, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)

    def entries(self) -> list:
        return [json.loads(line) for line in self.record.read_text().splitlines()] if self.record.exists() else []

    def goals(self) -> int:
        return sum(entry != "cancel" for entry in self.entries())

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10.0)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def _wait(condition, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise SystemExit(f"timed out waiting for {what}")
        time.sleep(0.01)


def end_times(repetitions: int, directory: Path, env: dict) -> dict:
    """Seconds from each event to its goal's result, per kind, and the results that were not the expected one."""
    import rclpy
    from moveit_msgs.action import ExecuteTrajectory
    from moveit_msgs.msg import MoveItErrorCodes, PlanningSceneComponents
    from moveit_msgs.srv import GetPlanningScene
    from rclpy.action import ActionClient
    from rclpy.executors import MultiThreadedExecutor
    from trajectory_msgs.msg import JointTrajectoryPoint

    from kinematics_py.ros.messages.joint_trajectory import duration_msg

    rclpy.init()
    node = rclpy.create_node("bench_execution_ends", namespace=NAMESPACE)
    client = ActionClient(node, ExecuteTrajectory, "execute_trajectory")
    scene = node.create_client(GetPlanningScene, "get_planning_scene")
    executor = MultiThreadedExecutor(2)
    executor.add_node(node)
    threading.Thread(target=executor.spin, daemon=True).start()
    if not client.wait_for_server(timeout_sec=120.0) or not scene.wait_for_service(timeout_sec=120.0):
        raise SystemExit("execute_trajectory or get_planning_scene never served")

    def done(future, timeout: float):
        _wait(future.done, timeout, "an answer of the node")
        return future.result()

    def node_positions() -> list[float]:
        request = GetPlanningScene.Request()
        request.components.components = PlanningSceneComponents.ROBOT_STATE
        state = done(scene.call_async(request), 30.0).scene.robot_state.joint_state
        values = dict(zip(state.name, state.position))
        return [values.get(joint, float("nan")) for joint in JOINTS]

    started = 0

    def stand_in(mode: str) -> StandIn:
        """A new stand-in at a start of its own, once the node has its joint_states."""
        nonlocal started
        started += 1
        positions = READY[:6] + [READY[6] + 1e-4 * started]
        standin = StandIn(directory, env, started, positions, mode)
        _wait(lambda: np.allclose(node_positions(), positions, atol=1e-12, rtol=0), 120.0,
              "the stand-in's joint_states at the node")
        return standin

    def send(standin: StandIn, duration: float):
        goal = ExecuteTrajectory.Goal()
        goal.trajectory.joint_trajectory.joint_names = JOINTS
        goal.trajectory.joint_trajectory.points = [
            JointTrajectoryPoint(positions=[v + offset for v in standin.positions], time_from_start=duration_msg(t))
            for t, offset in ((0.0, 0.0), (duration / 2, 0.05), (duration, 0.1))]
        # back to the start for the next goal: the stand-in hangs, so joint_states stay at its positions
        sent = time.monotonic()
        handle = done(client.send_goal_async(goal), 60.0)
        if not handle.accepted:
            raise SystemExit("a goal was not accepted")
        return sent, handle

    def ended(handle, timeout: float = LONG_TRAJECTORY_S * 1.5):
        """(monotonic time the result was received, status, error code)."""
        result = done(handle.get_result_async(), timeout)
        return time.monotonic(), result.status, result.result.error_code

    codes = {v: k for k, v in vars(MoveItErrorCodes).items() if k.isupper() and isinstance(v, int)}
    figures: dict[str, list[float]] = {"cancel": [], "overrun": [], "killed SIGTERM": [], "killed SIGKILL": []}
    unexpected: list[str] = []

    def check(kind: str, status: int, code, expected: tuple[int, int], word: str | None = None) -> None:
        if (status, code.val) != expected or (word and word not in code.message):
            unexpected.append(f"{kind}: status {status} {codes.get(code.val, code.val)} {code.message!r}")

    hanging = stand_in("hang")
    try:
        for _ in range(repetitions):
            goals = hanging.goals()
            _, handle = send(hanging, LONG_TRAJECTORY_S)
            _wait(lambda before=goals: hanging.goals() > before, 30.0, "the goal at the controller")
            time.sleep(0.2)
            cancelled = time.monotonic()
            done(handle.cancel_goal_async(), 60.0)
            at, status, code = ended(handle)
            figures["cancel"].append(at - cancelled)
            check("cancel", status, code, (5, MoveItErrorCodes.PREEMPTED))  # GoalStatus.STATUS_CANCELED
            sent, handle = send(hanging, OVERRUN_TRAJECTORY_S)
            at, status, code = ended(handle)
            figures["overrun"].append(at - sent - (OVERRUN_TRAJECTORY_S * ALLOWED_SCALING + ALLOWED_MARGIN_S))
            check("overrun", status, code, (6, MoveItErrorCodes.TIMED_OUT))  # GoalStatus.STATUS_ABORTED
    finally:
        hanging.stop()
    for how in (signal.SIGTERM, signal.SIGKILL):
        kind = f"killed {how.name}"
        for _ in range(repetitions):
            standin = stand_in("hang")
            try:
                _, handle = send(standin, LONG_TRAJECTORY_S)
                _wait(lambda s=standin: s.goals() > 0, 30.0, "the goal at the controller")
                time.sleep(SETTLE_S)  # mid-execution: the controller's acceptance at the node too
                standin.process.send_signal(how)
                standin.process.wait(30.0)
                died = time.monotonic()
                at, status, code = ended(handle)
                figures[kind].append(at - died)
                check(kind, status, code, (6, MoveItErrorCodes.CONTROL_FAILED), "gone")
            finally:
                standin.stop()
    rclpy.shutdown()
    return {"repetitions": repetitions, "target_ms": ENDS_WITHIN_S * 1e3, "unexpected_results": unexpected,
            **{kind: {**percentiles(times), "over_target": int(sum(t > ENDS_WITHIN_S for t in times))}
               for kind, times in figures.items()}}


def print_ends(figures: dict) -> None:
    print(f"Goal ends, {figures['repetitions']} each, against issue 29's {figures['target_ms']:.0f} ms target; load "
          f"average (1/5/15 min) before {figures['load_before']}, after {figures['load_after']}:")
    print("| end | p50 ms | p90 ms | max ms | over target |")
    print("|---|---|---|---|---|")
    for kind in ("killed SIGTERM", "killed SIGKILL", "cancel", "overrun"):
        row = figures[kind]
        print(f"| {kind} | {row['p50_ms']:.0f} | {row['p90_ms']:.0f} | {row['max_ms']:.0f} | "
              f"{row['over_target']}/{row['calls']} |")
    if figures["unexpected_results"]:
        print("unexpected results:", *figures["unexpected_results"], sep="\n  ")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--goals", type=int, default=200)
    parser.add_argument("--ends", type=int, default=10, help="repetitions of each goal end (0: none)")
    parser.add_argument("--output", type=Path)
    options = parser.parse_args()
    sys.path[:0] = [str(REPO), str(REPO / "test")]
    directory = Path(tempfile.mkdtemp(prefix="bench_execution-"))
    env = isolated_ros_env(directory)
    os.environ.update({k: v for k, v in env.items() if k.startswith("ROS_")})
    node = start_node(directory, env)
    figures = {}
    try:
        if options.goals:
            figures = measure(options.goals)
        if options.ends:
            load_before = [round(v, 2) for v in os.getloadavg()]
            ends = end_times(options.ends, directory, env)
            figures["ends"] = {**ends, "load_before": load_before,
                               "load_after": [round(v, 2) for v in os.getloadavg()]}
    finally:
        stop_node(node)
    print(json.dumps(figures, indent=2))
    if options.ends:
        print_ends(figures["ends"])
    if options.output:
        options.output.parent.mkdir(parents=True, exist_ok=True)
        options.output.write_text(json.dumps(figures, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
