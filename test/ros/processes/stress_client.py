"""A stress client: --threads callers, each with a client of its own, calling compute_ik and compute_fk back to
back until --until (epoch seconds) for the bundled UR5 or panda at random, while the node's robot changes
between them. Every answer is checked against the one robot it names; JSON summary on stdout.

Checks (a failure is recorded with the answer):

- compute_ik for a pose of a random configuration, seeded next to it: SUCCESS names exactly the joints of the
  asked robot and its FK (that robot's model) reaches the target; otherwise only the answers of a node serving
  the other robot (INVALID_GROUP_NAME, INVALID_ROBOT_STATE naming the asked robot's joints) or of a search that
  found nothing in time (NO_IK_SOLUTION, TIMED_OUT; GOAL_IN_COLLISION with avoid_collisions).
- compute_fk of two links at a random configuration: SUCCESS with that robot's poses, or INVALID_ROBOT_STATE
  naming its joints.
- compute_fk of both robots' tips without a robot state: INVALID_LINK_NAME answering exactly one of them, with
  its pose in that robot's default state.
"""
import argparse
import json
import sys
import threading
import time
from collections import Counter

import numpy as np
from moveit_msgs.msg import MoveItErrorCodes

from kinematics_py.geometry.poses import transform_from_any_pose
from kinematics_py.model.robot_model import RobotModel
from kinematics_py.model.srdf import SemanticModel
from kinematics_py.robots import bundled_robot_path
from kinematics_py.ros.demo.client import KinematicsClient, fk_request, ik_request

GROUPS = {"ur5": "ur_manipulator", "panda": "panda_arm"}
#: A link of each robot between base and tip, answered beside the tip.
MIDDLE_LINKS = {"ur5": "forearm_link", "panda": "panda_link4"}
IK_TOLERANCE = (2e-5, 2e-5)  # [m, rad]
FK_TOLERANCE = (1e-9, 1e-7)
IK_TIMEOUT_S = 1.0
CALL_TIMEOUT_S = 30.0
WAIT_S = 60.0
SEARCH_FAILURES = (MoveItErrorCodes.NO_IK_SOLUTION, MoveItErrorCodes.TIMED_OUT)


class Robot:
    def __init__(self, name: str):
        self.name = name
        self.model = RobotModel.from_urdf_file(bundled_robot_path(name))
        group = SemanticModel.from_srdf_file(bundled_robot_path(name, "srdf"), self.model).group(GROUPS[name])
        chain = self.model.chain(group.base_link, group.tip_link)
        self.group, self.tip, self.joints = group.name, group.tip_link, tuple(chain.joint_names)
        self.lower, self.upper = np.maximum(chain.lower, -np.pi), np.minimum(chain.upper, np.pi)

    def link_poses(self, values):
        return self.model.link_poses(values)


class Inconsistent(Exception):
    pass


def pose_errors(T_a, T_b):
    R = T_a[:3, :3].T @ T_b[:3, :3]
    return float(np.linalg.norm(T_a[:3, 3] - T_b[:3, 3])), float(np.arccos(np.clip((np.trace(R) - 1) / 2, -1, 1)))


def check_pose(T_answer, T_expected, tolerance, what: str) -> None:
    position_error, rotation_error = pose_errors(T_answer, T_expected)
    if position_error > tolerance[0] or rotation_error > tolerance[1]:
        raise Inconsistent(f"{what}: off by {position_error:.2e} m, {rotation_error:.2e} rad")


def names_own_joints(message: str, robot: Robot) -> bool:
    """An INVALID_ROBOT_STATE answer of a node serving the other robot: it names joints of ``robot``."""
    return "unknown joints" in message and any(repr(name) in message for name in robot.joints)


def ik_call(client, robot: Robot, rng) -> str:
    values = dict(zip(robot.joints, rng.uniform(robot.lower, robot.upper)))
    target = robot.link_poses(values)[robot.tip]
    avoid = bool(rng.random() < 0.25)
    seed = {name: value + 0.05 for name, value in values.items()}
    response = client.call(client.ik_client, ik_request(robot.group, target, seed=seed, timeout=IK_TIMEOUT_S,
                                                        avoid_collisions=avoid), CALL_TIMEOUT_S)
    code, message = response.error_code.val, response.error_code.message
    if code == MoveItErrorCodes.SUCCESS:
        state = response.solution.joint_state
        if tuple(state.name) != robot.model.single_dof_joint_names:
            raise Inconsistent(f"compute_ik {robot.group}: the answer names joints {list(state.name)}")
        reached = robot.link_poses(dict(zip(state.name, state.position)))[robot.tip]
        check_pose(reached, target, IK_TOLERANCE, f"compute_ik {robot.group}")
        return f"ik {robot.name} solved"
    if code == MoveItErrorCodes.INVALID_GROUP_NAME or (code == MoveItErrorCodes.INVALID_ROBOT_STATE and
                                                       names_own_joints(message, robot)):
        return f"ik {robot.name} other robot"
    if code in SEARCH_FAILURES or (avoid and code == MoveItErrorCodes.GOAL_IN_COLLISION):
        return f"ik {robot.name} not found"
    raise Inconsistent(f"compute_ik {robot.group}: {code} {message}")


def fk_call(client, robot: Robot, rng) -> str:
    values = dict(zip(robot.joints, rng.uniform(robot.lower, robot.upper)))
    links = [robot.tip, MIDDLE_LINKS[robot.name]]
    response = client.call(client.fk_client, fk_request(links, values), CALL_TIMEOUT_S)
    code, message = response.error_code.val, response.error_code.message
    if code == MoveItErrorCodes.SUCCESS:
        if list(response.fk_link_names) != links:
            raise Inconsistent(f"compute_fk {robot.name}: answered links {list(response.fk_link_names)}")
        expected = robot.link_poses(values)
        for link, pose in zip(links, response.pose_stamped):
            check_pose(transform_from_any_pose(pose.pose), expected[link], FK_TOLERANCE, f"compute_fk {link}")
        return f"fk {robot.name} answered"
    if code == MoveItErrorCodes.INVALID_ROBOT_STATE and names_own_joints(message, robot):
        return f"fk {robot.name} other robot"
    raise Inconsistent(f"compute_fk {robot.name}: {code} {message}")


def default_state_fk_call(client, robots: dict) -> str:
    tips = {robot.tip: robot for robot in robots.values()}
    response = client.call(client.fk_client, fk_request(list(tips)), CALL_TIMEOUT_S)
    answered = list(response.fk_link_names)
    if response.error_code.val != MoveItErrorCodes.INVALID_LINK_NAME or len(answered) != 1 or \
            answered[0] not in tips or len(response.pose_stamped) != 1:
        raise Inconsistent(f"compute_fk of {list(tips)}: {response.error_code.val} {response.error_code.message}, "
                           f"answered {answered}")
    robot = tips[answered[0]]
    check_pose(transform_from_any_pose(response.pose_stamped[0].pose), robot.link_poses({})[robot.tip],
               FK_TOLERANCE, f"compute_fk of {robot.tip} in the default state")
    return f"fk default {robot.name}"


def caller(client: KinematicsClient, seed: int, until: float, robots: dict, summary: dict,
           lock: threading.Lock) -> None:
    rng = np.random.default_rng(seed)
    counts, failures = Counter(), []
    if not client.wait_for_services(WAIT_S):
        failures.append(f"services not found within {WAIT_S} s")
    while not failures and time.time() < until:
        robot = robots[("ur5", "panda")[rng.integers(2)]]
        kind = rng.integers(3)
        try:
            label = ik_call(client, robot, rng) if kind == 0 else fk_call(client, robot, rng) if kind == 1 \
                else default_state_fk_call(client, robots)
            counts[label] += 1
        except (Inconsistent, TimeoutError) as error:
            failures.append(str(error))
    with lock:
        summary["counts"].update(counts)
        summary["failures"] += failures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--namespace", required=True)
    parser.add_argument("--until", type=float, required=True, help="[s since the epoch]")
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--seed", type=int, default=0)
    options = parser.parse_args()
    robots = {name: Robot(name) for name in GROUPS}
    summary, lock = {"counts": Counter(), "failures": []}, threading.Lock()
    # Each caller has a client of its own (its own rclpy context), created here in the main thread.
    clients = [KinematicsClient(options.namespace, node_name=f"stress_client_{options.seed}_{index}")
               for index in range(options.threads)]
    threads = [threading.Thread(target=caller, args=(client, 1000 * options.seed + index, options.until, robots,
                                                     summary, lock)) for index, client in enumerate(clients)]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        for client in clients:
            client.close()
    print(json.dumps({"counts": dict(summary["counts"]), "failures": summary["failures"][:20]}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
