"""Call moveit_msgs/srv/GetPositionFK over DDS and print the responses as JSON on stdout.

Sends two requests: two links with a frame and joint positions, then one with no links.
Exit codes: 0 done, 2 service not found within --wait, 3 a call got no answer within --call-timeout.
"""
import argparse
import json
import sys
import time

import rclpy
from moveit_msgs.srv import GetPositionFK
from rclpy.node import Node


def requests():
    with_links = GetPositionFK.Request()
    with_links.header.frame_id = "world"
    with_links.fk_link_names = ["shoulder_link", "tool0"]
    with_links.robot_state.joint_state.name = ["joint_1", "joint_2"]
    with_links.robot_state.joint_state.position = [0.25, 0.5]
    return [with_links, GetPositionFK.Request()]


def as_dict(response: GetPositionFK.Response, round_trip_s: float) -> dict:
    return {
        "fk_link_names": list(response.fk_link_names),
        "frame_ids": [pose.header.frame_id for pose in response.pose_stamped],
        "positions": [[pose.pose.position.x, pose.pose.position.y, pose.pose.position.z]
                      for pose in response.pose_stamped],
        "error_code": response.error_code.val,
        "message": response.error_code.message,
        "source": response.error_code.source,
        "round_trip_ms": 1e3 * round_trip_s,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--service", required=True)
    parser.add_argument("--wait", type=float, default=15.0, help="wait_for_service timeout [s]")
    parser.add_argument("--call-timeout", type=float, default=10.0, help="[s]")
    args = parser.parse_args()

    rclpy.init()
    node = Node("fk_client")
    try:
        client = node.create_client(GetPositionFK, args.service)
        if not client.wait_for_service(timeout_sec=args.wait):
            print(f"service {args.service} not found within {args.wait} s", file=sys.stderr)
            return 2
        results = []
        for request in requests():
            start = time.perf_counter()
            future = client.call_async(request)
            rclpy.spin_until_future_complete(node, future, timeout_sec=args.call_timeout)
            if not future.done():
                print(f"no answer within {args.call_timeout} s", file=sys.stderr)
                return 3
            results.append(as_dict(future.result(), time.perf_counter() - start))
        print(json.dumps(results))
        return 0
    finally:
        node.destroy_node()
        rclpy.try_shutdown()


if __name__ == "__main__":
    sys.exit(main())
