"""pymoveit2, unchanged, moving the Panda through kinematics_node (docs/moveit.md, "Executing motions"):
move_to_configuration (plan_kinematic_path, then execute_trajectory; or one move_action goal with
--move-group-action) and wait_until_executed; with --cancel-after, cancel_execution that many seconds after the arm
began to move.

    .venv/bin/python examples/move_with_pymoveit2.py --goal 0.6 -0.4 0.3 -2.0 0.2 1.9 0.4 --ros-args -r __ns:=/panda

against a node serving moveit_resources' Panda with its moveit_controllers.yaml (a real controller, or
simulate_controllers:=true). Prints ``<what>: <JSON>`` lines: the joints on joint_states before (``start``) and
after the motion (``final``, and ``final again`` 0.5 s later) and wait_until_executed's answer (``executed``).
test/ros/test_pymoveit2_execution.py runs it against a node in its own process.
"""
import argparse
import threading
import time

import rclpy
from pymoveit2 import MoveIt2
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.executors import MultiThreadedExecutor
from rclpy.node import Node
from sensor_msgs.msg import JointState
from with_pymoveit2 import WAIT_S, report, wait_until  # the example beside this one

JOINTS = [f"panda_joint{i}" for i in range(1, 8)]


def at_rest(latest: dict, settle_s: float = 0.3) -> list:
    """The joints once joint_states stop changing (two readings ``settle_s`` apart agree): the last of them may
    still be on their way when the motion's result arrives."""
    positions = [latest[joint] for joint in JOINTS]
    def settled() -> bool:
        nonlocal positions
        time.sleep(settle_s)
        previous, positions = positions, [latest[joint] for joint in JOINTS]
        return positions == previous
    wait_until(settled, "joint_states to settle")
    return positions


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--goal", type=float, nargs=7, required=True)
    parser.add_argument("--move-group-action", action="store_true")
    parser.add_argument("--cancel-after", type=float, default=0.0, help="[s]")
    parser.add_argument("--max-velocity", type=float, default=0.0,
                        help="pymoveit2's max_velocity (the request's velocity scaling; 0: the planner's default)")
    args, ros_args = parser.parse_known_args()
    rclpy.init(args=ros_args)
    node = Node("pymoveit2_mover")
    group = ReentrantCallbackGroup()
    latest = {}
    node.create_subscription(JointState, "joint_states", lambda msg: latest.update(zip(msg.name, msg.position)), 10,
                             callback_group=group)
    moveit2 = MoveIt2(node=node, joint_names=JOINTS, base_link_name="panda_link0", end_effector_name="panda_link8",
                      group_name="panda_arm", callback_group=group, use_move_group_action=args.move_group_action)
    moveit2.allowed_planning_time = 5.0
    moveit2.max_velocity = args.max_velocity
    executor = MultiThreadedExecutor(2)
    executor.add_node(node)
    spinner = threading.Thread(target=executor.spin, daemon=True)
    spinner.start()
    # pymoveit2 sends a goal only once its action client has matched the server (else: "not yet available")
    client = getattr(moveit2, "_MoveIt2__move_action_client" if args.move_group_action
                     else "_execute_trajectory_action_client")
    wait_until(client.server_is_ready, f"{client._action_name} at pymoveit2's client")
    wait_until(lambda: all(joint in latest for joint in JOINTS), "joint_states")
    start = [latest[joint] for joint in JOINTS]
    report("start", start)
    moveit2.move_to_configuration(args.goal, timeout_sec=WAIT_S)
    if args.cancel_after:
        wait_until(lambda: max(abs(latest[j] - s) for j, s in zip(JOINTS, start)) > 1e-3, "the arm to move")
        time.sleep(args.cancel_after)
        moveit2.cancel_execution()
    report("executed", moveit2.wait_until_executed(timeout_sec=WAIT_S))
    report("final", at_rest(latest))
    time.sleep(0.5)
    report("final again", [latest[joint] for joint in JOINTS])
    executor.shutdown(timeout_sec=2.0)  # the spinning thread ends before the context does
    spinner.join(2.0)
    moveit2.destroy()
    node.destroy_node()
    rclpy.try_shutdown()


if __name__ == "__main__":
    main()
