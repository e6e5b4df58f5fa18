"""The floor of a service round trip: a bare rclpy server answering compute_fk (GetPositionFK) and compute_ik
(GetPositionIK) at once with an empty SUCCESS, spun by rclpy's SingleThreadedExecutor, under a namespace.

    .venv/bin/python bench/bare_server.py --namespace /bench_bare

bench/service_latency.py calls it the same way as kinematics_node, so the difference is the node's own work.
"""
from __future__ import annotations

import argparse
import contextlib

import rclpy
from moveit_msgs.msg import MoveItErrorCodes
from moveit_msgs.srv import GetPositionFK, GetPositionIK
from rclpy.executors import ExternalShutdownException


def _succeed(_request, response):
    response.error_code.val = MoveItErrorCodes.SUCCESS
    return response


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--namespace", required=True)
    options = parser.parse_args()
    rclpy.init()
    node = rclpy.create_node("bare_server", namespace=options.namespace)
    node.create_service(GetPositionFK, "compute_fk", _succeed)
    node.create_service(GetPositionIK, "compute_ik", _succeed)
    with contextlib.suppress(KeyboardInterrupt, ExternalShutdownException):
        rclpy.spin(node)


if __name__ == "__main__":
    main()
