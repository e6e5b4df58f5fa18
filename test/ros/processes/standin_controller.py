"""A stand-in controller: serves control_msgs/action/FollowJointTrajectory on --action and publishes joint_states
(--joints at --positions, 50 Hz), as a robot's joint_trajectory_controller and joint_state_broadcaster would.

Every goal it receives is written, as one JSON line, to --record (joint names, each point's time and positions);
so is every cancel request ("cancel"). --mode: ``follow`` (succeed once the trajectory's duration has passed,
joint_states then at its last point), ``reject`` (refuse every goal), ``abort`` (abort with
PATH_TOLERANCE_VIOLATED after half the duration), ``hang`` (never finish until cancelled), ``mute`` (never answer
the goal request), ``late`` (accept the goal --late-s after it came, then follow it); the mode is read from
the file --mode-file at each goal (its text, else ``follow``). SIGTERM (or SIGINT) ends the process at once, as a
controller that dies: its goals unanswered, its participant announced gone.
"""
import argparse
import json
import os
import threading
import time
import traceback
from pathlib import Path
from typing import NoReturn

import rclpy
from control_msgs.action import FollowJointTrajectory
from rclpy.action import ActionServer, CancelResponse, GoalResponse
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.executors import MultiThreadedExecutor
from rclpy.node import Node
from sensor_msgs.msg import JointState


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--action", required=True)
    parser.add_argument("--joint-states", required=True, help="the joint_states topic")
    parser.add_argument("--joints", required=True, nargs="+")
    parser.add_argument("--positions", required=True, nargs="+", type=float)
    parser.add_argument("--record", required=True)
    parser.add_argument("--mode-file", required=True)
    parser.add_argument("--late-s", type=float, default=6.0, help="how late a goal is accepted in mode late [s]")
    args = parser.parse_args()
    modes = {}  # id of an accepted goal's request -> its mode

    def current_mode() -> str:
        return (Path(args.mode_file).read_text().strip() if os.path.exists(args.mode_file) else "") or "follow"

    rclpy.init()
    node = Node("standin_controller")
    positions = dict(zip(args.joints, args.positions))
    lock = threading.Lock()
    record = open(args.record, "a", buffering=1)  # noqa: SIM115 (open while the process serves)

    def write(entry) -> None:
        with lock:
            record.write(json.dumps(entry) + "\n")

    def on_goal(goal_request) -> GoalResponse:
        record_goal(goal_request)
        mode = current_mode()
        if mode == "reject":
            return GoalResponse.REJECT
        if mode == "mute":
            never_answer()  # (a controller stuck, or killed, before it answers)
        if mode == "late":
            time.sleep(args.late_s)
            mode = "follow"
        modes[id(goal_request)] = mode
        return GoalResponse.ACCEPT

    def record_goal(goal) -> None:
        trajectory = goal.trajectory
        write({"joint_names": list(trajectory.joint_names),
               "times": [p.time_from_start.sec + p.time_from_start.nanosec * 1e-9 for p in trajectory.points],
               "positions": [list(p.positions) for p in trajectory.points]})

    def on_cancel(_goal_handle) -> CancelResponse:
        write("cancel")
        return CancelResponse.ACCEPT

    def execute(goal_handle):
        trajectory = goal_handle.request.trajectory
        last = trajectory.points[-1]
        duration = last.time_from_start.sec + last.time_from_start.nanosec * 1e-9
        mode = modes.pop(id(goal_handle.request))
        until = time.monotonic() + (duration / 2 if mode == "abort" else duration)
        result = FollowJointTrajectory.Result()
        while mode == "hang" or time.monotonic() < until:
            with lock:  # not while the process leaves (see leave)
                serving = rclpy.ok()
                cancelled = serving and goal_handle.is_cancel_requested
            if not serving:
                never_answer()  # (a controller killed mid-execution)
            if cancelled:
                goal_handle.canceled()
                return result
            time.sleep(0.005)
        if mode == "abort":
            result.error_code = FollowJointTrajectory.Result.PATH_TOLERANCE_VIOLATED
            result.error_string = "stand-in: path tolerance violated"
            goal_handle.abort()
            return result
        with lock:
            positions.update(zip(trajectory.joint_names, last.positions))
        goal_handle.succeed()
        return result

    group = ReentrantCallbackGroup()
    server = ActionServer(node, FollowJointTrajectory, args.action, execute_callback=execute, goal_callback=on_goal,
                          cancel_callback=on_cancel, callback_group=group)
    publisher = node.create_publisher(JointState, args.joint_states, 10)

    def publish() -> None:
        with lock:  # not while the process leaves (see leave)
            if rclpy.ok():
                publisher.publish(JointState(name=list(positions), position=list(positions.values())))
    node.create_timer(0.02, publish, callback_group=group)
    executor = MultiThreadedExecutor(4)
    executor.add_node(node)
    print("serving", flush=True)
    shut_down = spin_until_shutdown(executor)
    with lock:
        leave(server, node, 0 if shut_down else 1)


def spin_until_shutdown(executor) -> bool:
    """Spin until rclpy's SIGINT/SIGTERM handler shuts the context down (True), or an error (False, printed).

    The handler shuts the context down from a thread of its own, at any moment: between two waits the executor's
    next wait set then fails (RCLError, "the given context is not valid") instead of ExternalShutdownException."""
    try:
        executor.spin()
    except BaseException:
        if rclpy.ok():
            traceback.print_exc()
            return False
    return True


def never_answer() -> None:
    """The calling goal's thread waits until the process ends, its goal unanswered."""
    threading.Event().wait()


def leave(server: ActionServer, node: Node, code: int) -> NoReturn:
    """End the process at once, its participant first announced gone: the action server holds the node, and the
    node the participant, so both are destroyed (the participant then leaves the graph, and the node under test sees
    the server gone). No callback may use them meanwhile (rclpy would put their destruction off until it returns,
    after the exit). The goals' threads are not joined: they never answer once the context is shut down, and the
    interpreter's exit would wait for them forever."""
    try:
        server.destroy()
        node.destroy_node()
    except Exception:
        traceback.print_exc()
        code = 1
    os._exit(code)


if __name__ == "__main__":
    main()
