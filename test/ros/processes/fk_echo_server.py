"""Serve moveit_msgs/srv/GetPositionFK with a stand-in that echoes the request.

One pose per requested link: frame = request header frame, x = index of the link,
z = sum of the request's joint positions. Exits by itself after --lifetime seconds. With --report-transit it is
served as kinematics_node serves IK (NodeExecutor, as a search service) and the message ends with the request's
transit as the callback saw it (its ``Arrival``, kinematics_py.ros.transport.request_transit).
"""
import argparse
import time

import rclpy
from geometry_msgs.msg import PoseStamped
from moveit_msgs.msg import MoveItErrorCodes
from moveit_msgs.srv import GetPositionFK
from rclpy.executors import ExternalShutdownException
from rclpy.node import Node

from kinematics_py.ros.transport.executor import NodeExecutor, entities_among

SOURCE = "fk_echo_server"


def echo_fk(request: GetPositionFK.Request, response: GetPositionFK.Response):
    response.error_code.source = SOURCE
    if not request.fk_link_names:
        response.error_code.val = MoveItErrorCodes.INVALID_LINK_NAME
        response.error_code.message = "fk_link_names is empty"
        return response
    joint_sum = float(sum(request.robot_state.joint_state.position))
    for index, _link in enumerate(request.fk_link_names):
        pose = PoseStamped()
        pose.header.frame_id = request.header.frame_id
        pose.pose.position.x = float(index)
        pose.pose.position.z = joint_sum
        pose.pose.orientation.w = 1.0
        response.pose_stamped.append(pose)
    response.fk_link_names = list(request.fk_link_names)
    response.error_code.val = MoveItErrorCodes.SUCCESS
    response.error_code.message = f"echoed {len(request.fk_link_names)} links"
    return response


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--service", required=True)
    parser.add_argument("--lifetime", type=float, default=60.0, help="[s]")
    parser.add_argument("--report-transit", action="store_true")
    args = parser.parse_args()

    rclpy.init()
    node = Node("fk_echo_server")
    executor = None
    if args.report_transit:
        def callback(request, response, arrival):
            response = echo_fk(request, response)
            response.error_code.message += f"; transit {arrival.transit:.9f} s"
            return response
        service = node.create_service(GetPositionFK, args.service, callback)
        executor = NodeExecutor(2, 2, entities_among([service]), node.get_logger())
        executor.add_node(node)
    else:
        node.create_service(GetPositionFK, args.service, echo_fk)
    print(f"serving {args.service}", flush=True)
    deadline = time.monotonic() + args.lifetime
    try:
        while rclpy.ok() and time.monotonic() < deadline:
            if executor is None:
                rclpy.spin_once(node, timeout_sec=0.1)
            else:
                executor.spin_once(timeout_sec=0.1)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        node.destroy_node()
        rclpy.try_shutdown()


if __name__ == "__main__":
    main()
