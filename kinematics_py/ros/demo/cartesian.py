"""The ``make run`` demo's Cartesian paths: compute_cartesian_path along a straight line, then the same line with
a wall in its way, which the path stops before, saying which bodies would collide."""
from __future__ import annotations

import math
import time
from collections.abc import Sequence

import numpy as np
from moveit_msgs.msg import CollisionObject, MoveItErrorCodes
from moveit_msgs.srv import GetCartesianPath
from rclpy.duration import Duration
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy

from ...errors import error_code_name
from ...geometry.transforms import make_transform
from ...model.robot_model import RobotModel
from .client import KinematicsClient, box_object, cartesian_path_request

#: Per robot: the start configuration (the group's joints in order) of the demo's line.
LINE_STARTS = {"ur5": (0.0, -1.2, 1.5, -1.9, -1.57, 0.0), "panda": (0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785)}
LINE = np.array([0.0, 0.3, 0.0])  # [m] in the model frame
MAX_STEP = 0.01
WALL_ID = "wall"
WALL_SIZE = 0.1
#: Where the wall stands along the line (fraction of it).
WALL_AT = 2 / 3
SCENE_QOS = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.VOLATILE)
SCENE_WAIT_S = 30.0
CALL_TIMEOUT_S = 30.0


def cartesian_demo(client: KinematicsClient, robot: str, model: RobotModel, group: str, tip: str,
                   joints: Sequence[str]) -> bool:
    """Show a complete line and its stop before a wall; True if both answers are as expected."""
    start = dict(zip(joints, LINE_STARTS[robot]))
    T_start = model.link_poses(start)[tip]
    T_goal = T_start.copy()
    T_goal[:3, 3] += LINE
    request = cartesian_path_request(group, [T_goal], MAX_STEP, start)
    service = client.client(GetCartesianPath, f"{client.prefix}compute_cartesian_path")
    publisher = client.node.create_publisher(CollisionObject, f"{client.prefix}collision_object", SCENE_QOS)
    print(f"compute_cartesian_path: {tip!r} {np.linalg.norm(LINE):.2f} m along {LINE.tolist()} (model frame) in "
          f"steps of {MAX_STEP * 100:g} cm, avoid_collisions, from {list(LINE_STARTS[robot])}; shown in RViz on "
          f"{client.prefix}display_planned_path:")
    ok = True
    try:
        if not client.wait_until_answering(service, GetCartesianPath.Request(), SCENE_WAIT_S):
            print(f"  no answer from compute_cartesian_path within {SCENE_WAIT_S} s  <-- NOT as expected")
            return False
        began = time.perf_counter()
        response = client.call(service, request, CALL_TIMEOUT_S)
        ok &= _show("free line", response, time.perf_counter() - began, model, start, tip, T_start, complete=True)

        wall = box_object(WALL_ID, WALL_SIZE, make_transform(None, T_start[:3, 3] + WALL_AT * LINE), model.root_link)
        deadline, published = time.monotonic() + SCENE_WAIT_S, -math.inf
        while time.monotonic() < deadline:  # the node takes the wall asynchronously: until the path stops
            if time.monotonic() - published >= 0.5:
                publisher.publish(wall)
                published = time.monotonic()
            began = time.perf_counter()
            response = client.call(service, request, CALL_TIMEOUT_S)
            if response.fraction < 1.0:
                break
        print(f"  published {WALL_ID!r}: a {WALL_SIZE} m cube {WALL_AT:.0%} of the way along the line")
        ok &= _show("line into the wall", response, time.perf_counter() - began, model, start, tip, T_start,
                    complete=False)
        ok &= WALL_ID in response.error_code.message
    finally:
        publisher.publish(CollisionObject(id=WALL_ID, operation=CollisionObject.REMOVE))
        publisher.wait_for_all_acked(Duration(seconds=1.0))
        print(f"  removed {WALL_ID!r}")
        client.node.destroy_publisher(publisher)
        client.node.destroy_client(service)
    return ok




def _show(what: str, response, elapsed: float, model: RobotModel, start: dict, tip: str, T_start: np.ndarray,
          complete: bool) -> bool:
    """Print an answer: code, fraction, points, duration, largest distance of a point from the line."""
    trajectory = response.solution.joint_trajectory
    points = trajectory.points
    good = response.error_code.val == MoveItErrorCodes.SUCCESS and bool(points) and \
        (response.fraction == 1.0) == complete
    deviation = 0.0
    for point in points:
        p = model.link_poses({**start, **dict(zip(trajectory.joint_names, point.positions))})[tip][:3, 3]
        offset = p - T_start[:3, 3]
        deviation = max(deviation, float(np.linalg.norm(offset - np.dot(offset, LINE) / np.dot(LINE, LINE) * LINE)))
    duration = (points[-1].time_from_start.sec + points[-1].time_from_start.nanosec * 1e-9) if points else 0.0
    print(f"  {what}: {error_code_name(response.error_code.val)} in {elapsed * 1e3:.1f} ms, fraction "
          f"{response.fraction:.3f}, {len(points)} points timed over {duration:.2f} s, every point within "
          f"{deviation * 1e6:.1f} um of the line; {response.error_code.message}"
          + ("" if good else "  <-- NOT as expected"))
    return good
