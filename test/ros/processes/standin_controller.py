"""A stand-in controller: serves control_msgs/action/FollowJointTrajectory on --action and publishes joint_states
(--joints at --positions, 50 Hz), as a robot's joint_trajectory_controller and joint_state_broadcaster would.

Every goal it receives is written, as one JSON line, to --record (joint names, each point's time and positions);
so is every cancel request ("cancel"). --mode: ``follow`` (succeed once the trajectory's duration has passed,
joint_states then at its last point), ``reject`` (refuse every goal), ``abort`` (abort with
PATH_TOLERANCE_VIOLATED after half the duration), ``hang`` (never finish until cancelled), ``mute`` (never answer
the goal request); the mode is read from
the file --mode-file at each goal (its text, else ``follow``).
"""
import argparse
import contextlib
import json
import os
import threading
import time
from pathlib import Path

import rclpy
from control_msgs.action import FollowJointTrajectory
from rclpy.action import ActionServer, CancelResponse, GoalResponse
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.executors import ExternalShutdownException, MultiThreadedExecutor
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
            threading.Event().wait()  # the goal never answered (a controller stuck, or killed, before it answers)
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
            if not rclpy.ok():
                return result
            if goal_handle.is_cancel_requested:
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
    ActionServer(node, FollowJointTrajectory, args.action, execute_callback=execute, goal_callback=on_goal,
                 cancel_callback=on_cancel, callback_group=group)
    publisher = node.create_publisher(JointState, args.joint_states, 10)

    def publish() -> None:
        with lock:
            msg = JointState(name=list(positions), position=list(positions.values()))
        publisher.publish(msg)
    node.create_timer(0.02, publish, callback_group=group)
    executor = MultiThreadedExecutor(4)
    executor.add_node(node)
    print("serving", flush=True)
    with contextlib.suppress(KeyboardInterrupt, ExternalShutdownException):
        executor.spin()
    # SIGTERM (rclpy's handler shut the context down): the participant announced gone, then leave at once (the goals'
    # threads with it)
    rclpy.get_default_context().destroy()
    os._exit(0)


if __name__ == "__main__":
    main()
