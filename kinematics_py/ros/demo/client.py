"""A client of kinematics_node's services (or any node serving MoveIt's compute_ik / compute_fk), and builders
of their requests.

    client = KinematicsClient("/my_namespace")
    client.wait_for_services(10.0)
    response = client.call(client.ik_client, ik_request("ur_manipulator", T_base_tool0, seed={...}))
"""
from __future__ import annotations

import time
from collections.abc import Mapping, Sequence

import numpy as np
import rclpy
from geometry_msgs.msg import Pose
from moveit_msgs.action import ExecuteTrajectory
from moveit_msgs.msg import (
    CollisionObject,
    Constraints,
    JointConstraint,
    MoveItErrorCodes,
    OrientationConstraint,
    PositionConstraint,
)
from moveit_msgs.srv import GetCartesianPath, GetMotionPlan, GetPositionFK, GetPositionIK, GetStateValidity
from rclpy.action import ActionClient
from rclpy.executors import SingleThreadedExecutor
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from shape_msgs.msg import SolidPrimitive

from ..messages.conversions import pose_msg_from_transform

#: Every service answer goes to every client of the service, and the client's DDS layer picks out its own.
#: With the default history (the last 10), a client that falls behind while many others are served can lose
#: its own answer among theirs; keeping all of them until taken avoids that.
CLIENT_QOS = QoSProfile(history=HistoryPolicy.KEEP_ALL, reliability=ReliabilityPolicy.RELIABLE,
                        durability=DurabilityPolicy.VOLATILE)
#: How long a ping waits for its answer before it is sent again [s].
PING_TIMEOUT_S = 1.0
#: How long ``execute`` looks for the node's execute_trajectory action before it takes it as not served [s].
EXECUTION_DISCOVERY_S = 3.0


class KinematicsClient:
    """Blocking calls to the node's services from a node of its own (its own rclpy context).

    ``namespace`` is where the services live ("" for /compute_ik, /compute_fk); ``domain_id`` the ROS domain (default:
    ROS_DOMAIN_ID).
    """

    def __init__(self, namespace: str = "", node_name: str = "kinematics_client", args: list[str] | None = None,
                 domain_id: int | None = None):
        self._context = rclpy.Context()
        rclpy.init(args=args, context=self._context, domain_id=domain_id)
        self.node = rclpy.create_node(node_name, context=self._context)
        self._executor = SingleThreadedExecutor(context=self._context)
        self._executor.add_node(self.node)
        self.prefix = namespace.rstrip("/") + "/" if namespace else ""
        self.ik_client = self.client(GetPositionIK, f"{self.prefix}compute_ik")
        self.fk_client = self.client(GetPositionFK, f"{self.prefix}compute_fk")

    def client(self, service_type, name: str):
        return self.node.create_client(service_type, name, qos_profile=CLIENT_QOS)

    def wait_for_services(self, timeout: float) -> bool:
        """True once compute_ik and compute_fk answer (an empty request, refused at once) within ``timeout`` [s]."""
        deadline = time.monotonic() + timeout
        return all(self.wait_until_answering(client, request, max(0.0, deadline - time.monotonic()))
                   for client, request in ((self.ik_client, GetPositionIK.Request()),
                                           (self.fk_client, GetPositionFK.Request())))

    def wait_until_answering(self, client, request, timeout: float) -> bool:
        """True once ``client``'s service answers ``request`` within ``timeout`` [s].

        Notes:
            A service can be discovered before its answers can reach this client; a request sent in that
            gap goes unanswered. Sending a harmless request until one is answered closes the gap.
        """
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not client.wait_for_service(timeout_sec=remaining):
                return False
            try:
                self.call(client, request, timeout=min(PING_TIMEOUT_S, max(0.01, remaining)))
                return True
            except TimeoutError:
                continue

    def call(self, client, request, timeout: float = 10.0):
        """The response, or TimeoutError after ``timeout`` [s]."""
        future = client.call_async(request)
        self.spin_until(future, timeout)
        if not future.done():
            client.remove_pending_request(future)
            raise TimeoutError(f"no answer from {client.srv_name} within {timeout} s")
        return future.result()

    def spin_once(self, timeout: float) -> None:
        """Process this client's callbacks ready within ``timeout`` [s] (one at most)."""
        self._executor.spin_once(timeout_sec=timeout)

    def spin_until(self, future, timeout: float) -> None:
        """Process this client's callbacks until ``future`` is done or ``timeout`` [s] has passed."""
        self._executor.spin_until_future_complete(future, timeout_sec=timeout)

    def wait_until_serving(self, link: str, timeout: float) -> bool:
        """True once compute_fk answers SUCCESS for ``link`` (the robot is loaded) within ``timeout`` [s]."""
        deadline = time.monotonic() + timeout
        if not self.wait_for_services(timeout):
            return False
        while (remaining := deadline - time.monotonic()) > 0:
            try:
                if self.call(self.fk_client, fk_request([link]), remaining).error_code.val == MoveItErrorCodes.SUCCESS:
                    return True
            except TimeoutError:  # a loaded machine, or the node busy building a robot set-up
                return False
            time.sleep(0.05)
        return False

    def execute(self, trajectory, timeout: float):
        """The result of execute_trajectory (moveit_msgs/action/ExecuteTrajectory) for ``trajectory`` (a
        RobotTrajectory), or None when the node serves no execution (no controllers configured or simulated)."""
        client = ActionClient(self.node, ExecuteTrajectory, f"{self.prefix}execute_trajectory")
        try:
            if not client.wait_for_server(timeout_sec=EXECUTION_DISCOVERY_S):
                return None
            sent = client.send_goal_async(ExecuteTrajectory.Goal(trajectory=trajectory))
            self.spin_until(sent, timeout)
            handle = sent.result() if sent.done() else None
            if handle is None or not handle.accepted:
                raise TimeoutError("execute_trajectory did not accept the goal")
            result = handle.get_result_async()
            self.spin_until(result, timeout)
            if not result.done():
                raise TimeoutError(f"execute_trajectory did not end within {timeout} s")
            return result.result().result
        finally:
            client.destroy()

    def close(self) -> None:
        self._executor.shutdown()
        self.node.destroy_node()
        self._context.try_shutdown()


def fk_request(links: Sequence[str], joints: Mapping[str, float] | None = None, frame: str = ""):
    request = GetPositionFK.Request(fk_link_names=list(links))
    request.header.frame_id = frame
    if joints:
        request.robot_state.joint_state.name = list(joints)
        request.robot_state.joint_state.position = [float(v) for v in joints.values()]
    return request


def ik_request(group: str, T_frame_link: np.ndarray, link: str = "", frame: str = "",
               seed: Mapping[str, float] | None = None, timeout: float = 0.0, avoid_collisions: bool = False):
    request = GetPositionIK.Request()
    ik = request.ik_request
    ik.group_name, ik.ik_link_name, ik.avoid_collisions = group, link, avoid_collisions
    ik.pose_stamped.header.frame_id = frame
    ik.pose_stamped.pose = pose_msg_from_transform(T_frame_link)
    if seed:
        ik.robot_state.joint_state.name = list(seed)
        ik.robot_state.joint_state.position = [float(v) for v in seed.values()]
    ik.timeout.sec = int(timeout)
    ik.timeout.nanosec = int(round((timeout - int(timeout)) * 1e9))
    return request


def cartesian_path_request(group: str, waypoints: Sequence[np.ndarray], max_step: float, start: Mapping[str, float],
                           frame: str = "", link: str = "", avoid_collisions: bool = True):
    """A GetCartesianPath request: ``link`` (default: the group's tip) through ``waypoints`` (T_frame_link) from
    ``start`` (joint values; the others from the node's current state)."""
    request = GetCartesianPath.Request(group_name=group, link_name=link, max_step=float(max_step),
                                       avoid_collisions=avoid_collisions)
    request.header.frame_id = frame
    request.waypoints = [pose_msg_from_transform(T) for T in waypoints]
    request.start_state.joint_state.name = list(start)
    request.start_state.joint_state.position = [float(v) for v in start.values()]
    return request


def motion_plan_request(group: str, goals: Sequence[Constraints], start: Mapping[str, float],
                        planning_time: float = 5.0, planner_id: str = ""):
    """A GetMotionPlan request from ``start`` (joint values over the node's current state) to any one of
    ``goals`` (moveit_msgs/Constraints, e.g. ``joint_goal`` or ``pose_goal``)."""
    request = GetMotionPlan.Request()
    plan = request.motion_plan_request
    plan.group_name, plan.planner_id, plan.allowed_planning_time = group, planner_id, float(planning_time)
    plan.num_planning_attempts = 1
    plan.goal_constraints = list(goals)
    plan.start_state.is_diff = True
    plan.start_state.joint_state.name = list(start)
    plan.start_state.joint_state.position = [float(v) for v in start.values()]
    return request


def joint_goal(joints: Mapping[str, float], tolerance: float = 1e-3) -> Constraints:
    """Goal constraints holding every joint of ``joints`` at its value (within +-``tolerance``)."""
    return Constraints(joint_constraints=[JointConstraint(joint_name=name, position=float(value),
                                                          tolerance_above=tolerance, tolerance_below=tolerance,
                                                          weight=1.0) for name, value in joints.items()])


def pose_goal(link: str, T_frame_link: np.ndarray, frame: str, position_tolerance: float = 1e-3,
              orientation_tolerance: float = 1e-3) -> Constraints:
    """Goal constraints holding ``link`` at ``T_frame_link``: its origin in a sphere of ``position_tolerance``
    [m], its orientation within ``orientation_tolerance`` [rad] per axis."""
    pose = pose_msg_from_transform(T_frame_link)
    position = PositionConstraint(link_name=link, weight=1.0)
    position.header.frame_id = frame
    position.constraint_region.primitives = [SolidPrimitive(type=SolidPrimitive.SPHERE,
                                                            dimensions=[position_tolerance])]
    position.constraint_region.primitive_poses = [Pose(position=pose.position)]
    orientation = OrientationConstraint(link_name=link, orientation=pose.orientation, weight=1.0,
                                        absolute_x_axis_tolerance=orientation_tolerance,
                                        absolute_y_axis_tolerance=orientation_tolerance,
                                        absolute_z_axis_tolerance=orientation_tolerance)
    orientation.header.frame_id = frame
    return Constraints(position_constraints=[position], orientation_constraints=[orientation])


def state_validity_request(joints: Mapping[str, float], group: str = ""):
    request = GetStateValidity.Request(group_name=group)
    request.robot_state.joint_state.name = list(joints)
    request.robot_state.joint_state.position = [float(v) for v in joints.values()]
    return request


def box_object(object_id: str, size: float, T_frame_box: np.ndarray, frame: str) -> CollisionObject:
    """An ADD of a cube ``size`` [m] across at ``T_frame_box``."""
    msg = CollisionObject(id=object_id, operation=CollisionObject.ADD)
    msg.header.frame_id = frame
    msg.pose = pose_msg_from_transform(T_frame_box)
    msg.primitives = [SolidPrimitive(type=SolidPrimitive.BOX, dimensions=[size] * 3)]
    msg.primitive_poses = [Pose()]
    return msg
