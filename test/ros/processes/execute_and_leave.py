"""Send one execute_trajectory goal (--joints from --positions, 60 s still), say ``accepted`` once the node accepted
it, then wait to be stopped (SIGTERM: rclpy's handler shuts the context down, and the client leaves the graph). A
result that arrives before is printed (``result <status> <error code> <message>``), for the test's failure message."""
import argparse
import contextlib
import time

import rclpy
from builtin_interfaces.msg import Duration
from moveit_msgs.action import ExecuteTrajectory
from rclpy.action import ActionClient
from rclpy.executors import ExternalShutdownException
from trajectory_msgs.msg import JointTrajectoryPoint


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--action", required=True)
    parser.add_argument("--joints", required=True, nargs="+")
    parser.add_argument("--positions", required=True, nargs="+", type=float)
    args = parser.parse_args()
    rclpy.init()
    node = rclpy.create_node("execute_and_leave")
    client = ActionClient(node, ExecuteTrajectory, args.action)
    with contextlib.suppress(KeyboardInterrupt, ExternalShutdownException):
        assert client.wait_for_server(timeout_sec=60.0)
        goal = ExecuteTrajectory.Goal()
        goal.trajectory.joint_trajectory.joint_names = args.joints
        goal.trajectory.joint_trajectory.points = [
            JointTrajectoryPoint(positions=args.positions, time_from_start=Duration(sec=sec)) for sec in (0, 60)]
        sent = client.send_goal_async(goal)
        rclpy.spin_until_future_complete(node, sent, timeout_sec=60.0)
        handle = sent.result()
        print("accepted" if handle is not None and handle.accepted else "refused", flush=True)
        if handle is not None and handle.accepted:
            handle.get_result_async().add_done_callback(lambda done: print(
                "result", done.result().status, done.result().result.error_code.val,
                done.result().result.error_code.message, flush=True))
        while rclpy.ok():
            rclpy.spin_once(node, timeout_sec=0.1)
            time.sleep(0.01)
    rclpy.try_shutdown()


if __name__ == "__main__":
    main()
