"""pymoveit2 against kinematics_node, unchanged: FK, IK, collision objects, attach / detach, allowed
collisions, clearing the scene, a Cartesian plan and collision-free motion plans to a joint goal and to a pose
goal around a box, on the bundled UR5.

    .venv/bin/pip install pymoveit2            # PyPI; the venv already has moveit_msgs and control_msgs
    .venv/bin/kinematics_node --ros-args --params-file config/ur5_node.yaml &   # or: make run
    .venv/bin/python examples/with_pymoveit2.py

Each step prints one line, ``<what>: <JSON>``, with what the node's scene or answer shows after it.
test/ros/test_pymoveit2.py runs this script against a node in its own process.
"""
from __future__ import annotations

import json
import sys
import time
from threading import Thread

import rclpy
import trimesh
from moveit_msgs.msg import PlanningSceneComponents
from moveit_msgs.srv import GetPlanningScene, GetStateValidity
from pymoveit2 import MoveIt2
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.executors import MultiThreadedExecutor
from rclpy.node import Node

JOINTS = ["shoulder_pan_joint", "shoulder_lift_joint", "elbow_joint", "wrist_1_joint", "wrist_2_joint",
          "wrist_3_joint"]
START = [0.3, -1.2, 1.5, -1.9, -1.57, 0.0]  # elbow up, the tool low in front of the robot
GOAL = [-1.5, -1.2, 1.5, -1.9, -1.57, 0.0]  # the same arm turned to the right
BOX_SIZE = 0.15  # a cube at the tool halfway between START and GOAL: the straight joint motion hits it
PLANNING_TIME_S = 5.0
UPRIGHT = (0.0, 0.0, 0.0, 1.0)
WAIT_S = 30.0
SERVICES = ("compute_fk", "compute_ik", "compute_cartesian_path", "get_planning_scene", "apply_planning_scene",
            "check_state_validity", "plan_kinematic_path")


def report(what: str, value) -> None:
    print(f"{what}: {json.dumps(value)}", flush=True)


def wait_until(condition, what: str):
    """Poll ``condition`` until it returns something truthy (topics arrive a moment after they are sent)."""
    deadline = time.monotonic() + WAIT_S
    while not (value := condition()):
        if time.monotonic() > deadline:
            sys.exit(f"timed out waiting for {what}")
        time.sleep(0.1)
    return value


def node_ready(node: Node) -> bool:
    """Whether kinematics_node's services are discovered and it listens to the scene topics (pymoveit2 waits
    only briefly for a service, and a message published before the subscriber is discovered is lost)."""
    namespace = node.get_namespace().rstrip("/")
    services = {name for name, _ in node.get_service_names_and_types()}
    return all(f"{namespace}/{name}" in services for name in SERVICES) and \
        node.count_subscribers("collision_object") > 0 and node.count_subscribers("attached_collision_object") > 0


class Scene:
    """What the node's planning scene holds (get_planning_scene) and whether a state is valid in it."""

    def __init__(self, node: Node, callback_group):
        self._get = node.create_client(GetPlanningScene, "get_planning_scene", callback_group=callback_group)
        self._validity = node.create_client(GetStateValidity, "check_state_validity", callback_group=callback_group)

    def _call(self, client, request):
        client.wait_for_service(timeout_sec=WAIT_S)
        future = client.call_async(request)
        wait_until(future.done, f"an answer from {client.srv_name}")
        return future.result()

    def world(self) -> list[str]:
        request = GetPlanningScene.Request()
        request.components.components = PlanningSceneComponents.WORLD_OBJECT_NAMES
        return sorted(o.id for o in self._call(self._get, request).scene.world.collision_objects)

    def attached(self) -> list[str]:
        request = GetPlanningScene.Request()
        request.components.components = PlanningSceneComponents.ROBOT_STATE_ATTACHED_OBJECTS
        scene = self._call(self._get, request).scene
        return sorted(a.object.id for a in scene.robot_state.attached_collision_objects)

    def valid(self, positions: list[float]) -> bool:
        request = GetStateValidity.Request(group_name="ur_manipulator")
        request.robot_state.joint_state.name, request.robot_state.joint_state.position = JOINTS, positions
        return self._call(self._validity, request).valid


def main() -> None:
    rclpy.init()
    node = Node("with_pymoveit2")
    callback_group = ReentrantCallbackGroup()
    moveit2 = MoveIt2(node=node, joint_names=JOINTS, base_link_name="base_link", end_effector_name="tool0",
                      group_name="ur_manipulator", callback_group=callback_group)
    executor = MultiThreadedExecutor(2)
    executor.add_node(node)
    spinning = Thread(target=executor.spin, daemon=True)
    spinning.start()
    scene = Scene(node, callback_group)
    wait_until(lambda: node_ready(node), "kinematics_node's services and scene topics")

    tool = moveit2.compute_fk(joint_state=START, timeout_sec=WAIT_S)
    position = [tool.pose.position.x, tool.pose.position.y, tool.pose.position.z]
    orientation = [tool.pose.orientation.x, tool.pose.orientation.y, tool.pose.orientation.z, tool.pose.orientation.w]
    report("fk tool0", position)
    solution = moveit2.compute_ik(position=position, quat_xyzw=orientation, start_joint_state=START, timeout_sec=WAIT_S)
    report("ik", dict(zip(solution.name, solution.position)))

    moveit2.add_collision_box("table", size=(1.2, 1.2, 0.04), position=(0.0, 0.0, -0.1), quat_xyzw=UPRIGHT)
    moveit2.add_collision_sphere("ball", radius=0.05, position=(-0.6, 0.4, 0.3), quat_xyzw=UPRIGHT)
    moveit2.add_collision_cylinder("post", height=0.5, radius=0.03, position=(-0.6, -0.4, 0.25), quat_xyzw=UPRIGHT)
    moveit2.add_collision_mesh(None, "rock", mesh=trimesh.creation.icosphere(radius=0.05),
                               position=(-0.5, 0.0, 0.6), quat_xyzw=UPRIGHT)
    moveit2.add_collision_box("obstacle", size=(0.1, 0.1, 0.1), position=position, quat_xyzw=UPRIGHT)  # at the tool
    added = {"table", "ball", "post", "rock", "obstacle"}
    wait_until(lambda: added <= set(scene.world()), f"the world objects {sorted(added)}")
    report("world", scene.world())
    report("start valid with the obstacle", scene.valid(START))

    moveit2.attach_collision_object("obstacle", link_name="tool0", touch_links=["wrist_3_link"])
    report("attached", wait_until(scene.attached, "the obstacle attached"))
    report("world after attach", scene.world())
    moveit2.detach_collision_object("obstacle")
    wait_until(lambda: not scene.attached(), "the obstacle detached")
    report("world after detach", scene.world())

    wait_until(moveit2.allow_collisions("obstacle", True).done, "allow_collisions")
    report("start valid with collisions allowed", scene.valid(START))

    wait_until(moveit2.clear_all_collision_objects().done, "clear_all_collision_objects")
    report("world after clear", scene.world())

    lower = [position[0], position[1], position[2] - 0.05]
    trajectory = moveit2.plan(position=lower, quat_xyzw=orientation, cartesian=True, start_joint_state=START,
                              timeout_sec=WAIT_S)
    report("cartesian points", len(trajectory.points) if trajectory else 0)

    middle = moveit2.compute_fk(joint_state=[(a + b) / 2 for a, b in zip(START, GOAL)], timeout_sec=WAIT_S).pose
    box = [middle.position.x, middle.position.y, middle.position.z]
    moveit2.add_collision_box("box", size=(BOX_SIZE,) * 3, position=box, quat_xyzw=UPRIGHT)
    wait_until(lambda: "box" in scene.world(), "the box")
    report("box", box)
    moveit2.allowed_planning_time = PLANNING_TIME_S
    motion = moveit2.plan(joint_positions=GOAL, start_joint_state=START, timeout_sec=WAIT_S)
    report("joint goal plan", [list(point.positions) for point in motion.points] if motion else [])
    goal = moveit2.compute_fk(joint_state=GOAL, timeout_sec=WAIT_S).pose
    goal_position = [goal.position.x, goal.position.y, goal.position.z]
    goal_orientation = [goal.orientation.x, goal.orientation.y, goal.orientation.z, goal.orientation.w]
    motion = moveit2.plan(position=goal_position, quat_xyzw=goal_orientation, start_joint_state=START,
                          timeout_sec=WAIT_S)
    report("pose goal", goal_position + goal_orientation)
    report("pose goal plan", [list(point.positions) for point in motion.points] if motion else [])
    executor.shutdown(timeout_sec=2.0)  # the spinning thread ends before the context does (else: abort at exit)
    spinning.join(2.0)
    moveit2.destroy()
    node.destroy_node()
    rclpy.try_shutdown()


if __name__ == "__main__":
    main()
