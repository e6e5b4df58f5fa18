"""The ``make run`` demo: the node on a bundled robot, and a client calling compute_fk, compute_ik,
check_state_validity, compute_cartesian_path (``demo_cartesian``) and plan_kinematic_path (``demo_motion``), with
obstacles published on collision_object for the collision-aware calls.

    python -m kinematics_py.ros.demo --start-node          # start the node, demo, keep it running
    python -m kinematics_py.ros.demo --start-node --once   # ... and stop everything afterwards
    python -m kinematics_py.ros.demo                       # only the client, against a running node
    python -m kinematics_py.ros.demo --start-node --namespace /demo   # the node's services and topics under /demo
    python -m kinematics_py.ros.demo --start-node --viewer-port 8080  # and its page in the browser

With ``--start-node`` it starts ``kinematics_node`` with ``config/kinematics.yaml`` and ``simulate_controllers``
(the plan is executed: the arm moves in the viewer, the next plan starting where it stopped) and a description
publisher: robot_state_publisher if installed (plus ``description_publisher --semantic-only`` for the
SRDF), else ``kinematics_py.ros.topics.description_publisher``. Unless ROS_AUTOMATIC_DISCOVERY_RANGE is set, it is
set to LOCALHOST, so the demo's DDS traffic stays on this machine.
"""
from __future__ import annotations

import argparse
import math
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import yaml
from moveit_msgs.msg import CollisionObject, MoveItErrorCodes
from moveit_msgs.srv import GetStateValidity
from rclpy.duration import Duration
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy

from ...errors import error_code_name
from ...geometry.transforms import make_transform, rotation_about_axis
from ...model.robot_model import RobotModel
from ...model.srdf import SemanticModel
from ...robots import BUNDLED_ROBOTS, bundled_robot_path
from .cartesian import cartesian_demo
from .client import KinematicsClient, box_object, fk_request, ik_request, state_validity_request
from .motion import motion_demo
from .servo import servo_demo, servo_parameters

GROUPS = {"ur5": "ur_manipulator", "panda": "panda_arm"}
SERVICES_SHOWN = ("compute_ik", "solve_ik", "compute_fk", "compute_cartesian_path")
STOP_GRACE_S = 5.0
DESCRIPTION_PUBLISHER = "kinematics_py.ros.topics.description_publisher"
#: As the node subscribes to collision_object (and move_group publishes it): reliable, not latched.
SCENE_QOS = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.VOLATILE)
#: Per robot: a configuration (the group's joints in order) and the link of it that the demo's obstacle surrounds.
OBSTACLE_SCENES = {"ur5": ((0.3, -1.2, 1.5, -1.9, -1.57, 0.0), "forearm_link"),
                   "panda": ((0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785), "panda_link4")}
OBSTACLE_ID = "obstacle"
OBSTACLE_SIZE = 0.15
#: How long the demo waits for the node to take the obstacle [s], and how often it publishes it meanwhile.
SCENE_WAIT_S = 30.0
SCENE_REPUBLISH_S = 0.5
#: Timeouts of the collision-aware IK calls [s]: a search for a pose reachable only in collision uses all of it.
COLLISION_IK_TIMEOUT_S = 0.5
GOAL_IN_COLLISION_TIMEOUT_S = 0.2


def percentile_ms(samples: Sequence[float], q: float) -> float:
    return float(np.percentile(np.asarray(samples) * 1e3, q))


# ------------------------------------------------------------------------------------------- start-up
def config_file(name: str) -> Path:
    """A file of this package's config/ folder: the source tree's if run from one, else the installed one."""
    source = Path(__file__).resolve().parents[2] / "config" / name
    if source.exists():
        return source
    from ament_index_python.packages import get_package_share_directory

    return Path(get_package_share_directory("kinematics_py")) / "config" / name


def kinematics_parameters_file(kinematics_yaml: Path | None, directory: Path) -> Path:
    """A ROS parameter file for kinematics_node: MoveIt's kinematics.yaml under robot_description_kinematics."""
    parameters = {}
    if kinematics_yaml is not None:
        parameters["robot_description_kinematics"] = yaml.safe_load(kinematics_yaml.read_text(encoding="utf-8"))
    path = directory / "kinematics_node.params.yaml"
    path.write_text(yaml.safe_dump({"kinematics_node": {"ros__parameters": parameters}}), encoding="utf-8")
    return path


def _robot_state_publisher() -> Path | None:
    try:
        from ament_index_python.packages import get_package_prefix

        executable = Path(get_package_prefix("robot_state_publisher")) / "lib" / "robot_state_publisher" / \
            "robot_state_publisher"
    except (ImportError, LookupError, OSError):  # no ament index, or no robot_state_publisher in it
        return None
    return executable if executable.exists() else None


def start_stack(robot: str, log_dir: Path, namespace: str = "", viewer_port: int = 0,
                servo: bool = False) -> dict[str, subprocess.Popen]:
    """Start the description publisher(s) and kinematics_node (in ``namespace``, default the root; serving its page
    on ``viewer_port`` unless 0; servoing with ``servo``); their output goes to ``log_dir``."""
    kinematics_yaml = config_file("kinematics.yaml") if robot == "ur5" else None
    commands = []
    rsp = _robot_state_publisher()
    if rsp is not None:
        urdf = bundled_robot_path(robot).read_text(encoding="utf-8")
        rsp_params = log_dir / "robot_state_publisher.params.yaml"
        rsp_params.write_text(yaml.safe_dump({"robot_state_publisher": {"ros__parameters": {
            "robot_description": urdf}}}), encoding="utf-8")
        commands.append(("robot_state_publisher", [str(rsp), "--ros-args", "--params-file", str(rsp_params)]))
        commands.append(("description_publisher", [sys.executable, "-m", DESCRIPTION_PUBLISHER,
                                                   "--robot", robot, "--semantic-only"]))
    else:
        commands.append(("description_publisher", [sys.executable, "-m", DESCRIPTION_PUBLISHER,
                                                   "--robot", robot]))
    params = kinematics_parameters_file(kinematics_yaml, log_dir)
    node_command = [sys.executable, "-m", "kinematics_py.ros.node", "--ros-args", "--params-file", str(params),
                    "-p", f"viewer_port:={viewer_port}"]
    if servo:  # the demo plays the controller: it republishes the servo's commands on joint_states
        servo_params = log_dir / "servo.params.yaml"
        servo_params.write_text(yaml.safe_dump({"/**": {"ros__parameters": servo_parameters(robot)}}))
        node_command += ["--params-file", str(servo_params)]
    else:  # the node's simulated controller executes the demo's plan
        node_command += ["-p", "simulate_controllers:=true"]
    commands.append(("kinematics_node", node_command))
    if namespace:
        commands = [(name, command + ([] if "--ros-args" in command else ["--ros-args"]) + ["-r", f"__ns:={namespace}"])
                    for name, command in commands]
    children = {}
    for name, command in commands:
        with open(log_dir / f"{name}.log", "wb") as log:
            children[name] = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
    return children


def stop_stack(children: Mapping[str, subprocess.Popen]) -> None:
    for child in children.values():
        if child.poll() is None:
            child.send_signal(signal.SIGINT)
    deadline = time.monotonic() + STOP_GRACE_S
    for child in children.values():
        try:
            child.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()


# ------------------------------------------------------------------------------------------- the demo
def run_demo(client: KinematicsClient, robot: str, calls: int) -> bool:
    """Print FK and IK answers and latencies; True if every answer is as expected."""
    model = RobotModel.from_urdf_file(bundled_robot_path(robot))
    semantic = SemanticModel.from_srdf_file(bundled_robot_path(robot, "srdf"), model)
    group = semantic.group(GROUPS[robot])
    tip, joints = group.tip_link, group.joint_names
    chain = model.chain(group.base_link, tip)
    rng = np.random.default_rng(7)
    lower, upper = np.maximum(chain.lower, -np.pi), np.minimum(chain.upper, np.pi)
    seed = dict(zip(joints, (lower + upper) / 2))
    ok = _fk_in_named_states(client, semantic, group.name, tip)
    ok &= _ik_of_random_poses(client, chain, group.name, seed, rng.uniform(lower, upper, (3, chain.dof)))
    ok &= _ik_in_the_tip_frame(client, semantic, group.name, tip)
    ok &= _refused_request(client)
    ok &= collision_demo(client, robot, model, group.name, tip, joints)
    ok &= cartesian_demo(client, robot, model, group.name, tip, joints)
    return ok & _round_trips(client, chain, group.name, seed, rng.uniform(lower, upper, (calls, chain.dof)))


def _timed_call(client: KinematicsClient, service_client, request):
    """(the answer, the round trip [s])."""
    start = time.perf_counter()
    response = client.call(service_client, request)
    return response, time.perf_counter() - start


def _shown(what: str, response, elapsed: float, expected: int = MoveItErrorCodes.SUCCESS, detail: str = "") -> bool:
    """Print an answer's code, round trip and ``detail`` (its message unless SUCCESS with a detail); True if its
    code is ``expected``."""
    code = response.error_code.val
    text = detail if code == MoveItErrorCodes.SUCCESS and detail else response.error_code.message
    print(f"  {what}: {error_code_name(code)} in {elapsed * 1e3:.2f} ms: {text}")
    return code == expected


def _fk_in_named_states(client: KinematicsClient, semantic: SemanticModel, group: str, tip: str) -> bool:
    print(f"compute_fk of {tip!r} (group {group!r}) in the SRDF's named states:")
    ok = True
    for state, values in semantic.group_states.get(group, {}).items():
        response, elapsed = _timed_call(client, client.fk_client, fk_request([tip], values))
        detail = ""
        if response.pose_stamped:
            pose = response.pose_stamped[0]
            p, o = pose.pose.position, pose.pose.orientation
            detail = (f"position [{p.x:.4f}, {p.y:.4f}, {p.z:.4f}] m, orientation (xyzw) "
                      f"[{o.x:.4f}, {o.y:.4f}, {o.z:.4f}, {o.w:.4f}] in {pose.header.frame_id!r}")
        ok &= _shown(f"{state:>6}", response, elapsed, detail=detail)
    return ok


def _ik_of_random_poses(client: KinematicsClient, chain, group: str, seed: Mapping[str, float],
                        configurations: np.ndarray) -> bool:
    """compute_ik of the tip poses of ``configurations`` (n, dof) from ``seed``; the answers' FK checked."""
    print(f"compute_ik of {chain.tip_link!r} for poses of random configurations (seed: the middle of the joint "
          f"ranges):")
    ok = True
    for index, q in enumerate(configurations):
        T_base_tip = chain.forward_kinematics(q)
        response, elapsed = _timed_call(client, client.ik_client, ik_request(group, T_base_tip, seed=seed))
        detail = ""
        if response.error_code.val == MoveItErrorCodes.SUCCESS:
            solution = dict(zip(response.solution.joint_state.name, response.solution.joint_state.position))
            reached = chain.forward_kinematics([solution[name] for name in chain.joint_names])
            detail = (f"joints {np.round([solution[j] for j in seed], 3).tolist()}; FK of the answer is "
                      f"{np.linalg.norm(reached[:3, 3] - T_base_tip[:3, 3]):.1e} m from the target")
        ok &= _shown(f"pose {index + 1}", response, elapsed, detail=detail)
    return ok


def _tip_goal() -> np.ndarray:
    """T_tip_goal: 5 cm along and 0.3 rad about the tip's x axis."""
    return make_transform(rotation_about_axis(np.array([1.0, 0.0, 0.0]), 0.3), (0.0, 0.0, 0.05))


def _ik_in_the_tip_frame(client: KinematicsClient, semantic: SemanticModel, group: str, tip: str) -> bool:
    """compute_ik of a pose given in the tip's own frame, from the group's first named state."""
    states = semantic.group_states[group]
    home = {name: float(value) for name, value in states[next(iter(states))].items()}
    response, elapsed = _timed_call(client, client.ik_client, ik_request(group, _tip_goal(), frame=tip, seed=home))
    return _shown(f"5 cm along and 0.3 rad about the tip's axes (pose in frame {tip!r})", response, elapsed)


def _refused_request(client: KinematicsClient) -> bool:
    print("a request the node refuses, with the reason:")
    response, elapsed = _timed_call(client, client.ik_client, ik_request("no_such_group", _tip_goal()))
    return _shown("unknown group", response, elapsed, MoveItErrorCodes.INVALID_GROUP_NAME)


def _round_trips(client: KinematicsClient, chain, group: str, seed: Mapping[str, float],
                 configurations: np.ndarray) -> bool:
    """compute_ik and compute_fk once per configuration; their round trips' percentiles printed. True if every
    IK request was solved."""
    fk_times, ik_times, solved = [], [], 0
    for index, T_base_tip in enumerate(chain.forward_kinematics(configurations)):
        response, elapsed = _timed_call(client, client.ik_client, ik_request(group, T_base_tip, seed=seed))
        ik_times.append(elapsed)
        if response.error_code.val == MoveItErrorCodes.SUCCESS:
            solved += 1
        else:
            _shown(f"round trip pose {index + 1}", response, elapsed)
        fk_times.append(_timed_call(client, client.fk_client, fk_request([chain.tip_link], seed))[1])
    calls = len(configurations)
    print(f"round trip over {calls} calls each (this client, DDS on this machine): "
          f"compute_fk p50 {percentile_ms(fk_times, 50):.2f} ms, p99 {percentile_ms(fk_times, 99):.2f} ms; "
          f"compute_ik p50 {percentile_ms(ik_times, 50):.2f} ms, p99 {percentile_ms(ik_times, 99):.2f} ms "
          f"({solved}/{calls} random reachable poses solved)")
    return solved == calls


# ------------------------------------------------------------------------------------------- collisions
@dataclass(frozen=True)
class _Obstacle:
    """The demo's obstacle: a cube around ``link`` of configuration ``q_a`` (the group's joints), its centre
    [m] in ``frame`` (the model's root); ``poses`` the links' poses in configuration A."""

    q_a: dict[str, float]
    link: str
    centre: np.ndarray
    frame: str
    poses: Mapping[str, np.ndarray]


def collision_demo(client: KinematicsClient, robot: str, model: RobotModel, group: str, tip: str,
                   joints: Sequence[str]) -> bool:
    """Publish a cube around a link of a known configuration A, then: check_state_validity of A (contacts),
    compute_ik of A's tip pose without and with avoid_collisions (A itself; a collision-free other answer), and
    of a pose with the tip inside the cube (GOAL_IN_COLLISION); remove the cube. True if every answer is as
    expected."""
    values, link = OBSTACLE_SCENES[robot]
    q_a = dict(zip(joints, values))
    poses = model.link_poses(q_a)
    obstacle = _Obstacle(q_a, link, poses[link][:3, 3], model.root_link, poses)
    print(f"collision-aware requests, with an obstacle on topic {client.prefix}collision_object:")
    validity = client.client(GetStateValidity, f"{client.prefix}check_state_validity")
    publisher = client.node.create_publisher(CollisionObject, f"{client.prefix}collision_object", SCENE_QOS)
    try:
        if not client.wait_until_answering(validity, GetStateValidity.Request(), SCENE_WAIT_S):
            return _reported("check_state_validity", False, f"no answer within {SCENE_WAIT_S} s")
        if not _obstacle_taken(client, validity, publisher, obstacle):
            return False
        ok = True
        for avoid in (False, True):
            ok &= _ik_of_a(client, validity, model, group, tip, obstacle, avoid)
        ok &= _ik_inside_the_obstacle(client, group, tip, obstacle)
        return ok & motion_demo(client, group, joints, q_a)
    finally:
        publisher.publish(CollisionObject(id=OBSTACLE_ID, operation=CollisionObject.REMOVE))
        publisher.wait_for_all_acked(Duration(seconds=1.0))  # delivered before the publisher goes
        print(f"  removed {OBSTACLE_ID!r}")
        client.node.destroy_publisher(publisher)
        client.node.destroy_client(validity)


def _reported(what: str, good: bool, text: str) -> bool:
    print(f"  {what}: {text}" + ("" if good else "  <-- NOT as expected"))
    return good


def _outcome(response, elapsed: float) -> str:
    return f"{error_code_name(response.error_code.val)} in {elapsed * 1e3:.1f} ms"


def _touches_obstacle(response) -> bool:
    return any(OBSTACLE_ID in (c.contact_body_1, c.contact_body_2) for c in response.contacts)


def _obstacle_taken(client: KinematicsClient, validity, publisher, obstacle: _Obstacle) -> bool:
    """Publish the obstacle until a check of A touches it (the node applies it asynchronously); report that
    check's contacts. True if A is found invalid."""
    message = box_object(OBSTACLE_ID, OBSTACLE_SIZE, make_transform(None, obstacle.centre), obstacle.frame)
    deadline, published, response, elapsed = time.monotonic() + SCENE_WAIT_S, -math.inf, None, 0.0
    while time.monotonic() < deadline:
        if time.monotonic() - published >= SCENE_REPUBLISH_S and publisher.get_subscription_count() > 0:
            publisher.publish(message)
            published = time.monotonic()
        response, elapsed = _timed_call(client, validity, state_validity_request(obstacle.q_a))
        if _touches_obstacle(response):
            break
        time.sleep(0.05)
    print(f"  published {OBSTACLE_ID!r}: a {OBSTACLE_SIZE} m cube around {obstacle.link!r} of configuration A = "
          f"{list(obstacle.q_a.values())}, centre {np.round(obstacle.centre, 3).tolist()} m in {obstacle.frame!r}")
    if response is None or not _touches_obstacle(response):
        return _reported("check_state_validity of A", False,
                         f"the node did not take the obstacle within {SCENE_WAIT_S} s")
    depths: dict[str, list[float]] = {}
    for c in response.contacts:
        depths.setdefault(f"{c.contact_body_1} - {c.contact_body_2}", []).append(c.depth)
    contacts = ", ".join(f"{pair} ({len(d)}, up to {max(d) * 1e3:.0f} mm deep)" for pair, d in depths.items())
    return _reported("check_state_validity of A", not response.valid,
                     f"{'valid' if response.valid else 'invalid'} in {elapsed * 1e3:.1f} ms, "
                     f"{len(response.contacts)} contacts: {contacts}")


def _ik_of_a(client: KinematicsClient, validity, model: RobotModel, group: str, tip: str, obstacle: _Obstacle,
             avoid: bool) -> bool:
    """compute_ik of A's tip pose: A itself without avoid_collisions; with it, another answer that
    check_state_validity finds valid."""
    seed = {name: value + 0.05 for name, value in obstacle.q_a.items()}
    response, elapsed = _timed_call(client, client.ik_client, ik_request(
        group, obstacle.poses[tip], link=tip, frame=obstacle.frame, seed=seed, timeout=COLLISION_IK_TIMEOUT_S,
        avoid_collisions=avoid))
    what = f"compute_ik of A's {tip!r} pose, avoid_collisions={str(avoid).lower()}"
    if response.error_code.val != MoveItErrorCodes.SUCCESS:
        return _reported(what, False, f"{_outcome(response, elapsed)}: {response.error_code.message}")
    solution = dict(zip(response.solution.joint_state.name, response.solution.joint_state.position))
    q = {name: solution[name] for name in obstacle.q_a}
    distance = np.linalg.norm(model.link_poses(q)[obstacle.link][:3, 3] - obstacle.centre)
    text = f"{_outcome(response, elapsed)}: joints {np.round(list(q.values()), 3).tolist()}, {obstacle.link!r} " \
           f"{distance:.2f} m from the obstacle's centre"
    if not avoid:
        return _reported(what, True, text + (" (configuration A, in the obstacle)" if distance < OBSTACLE_SIZE / 2
                                             else ""))
    check = client.call(validity, state_validity_request(q))
    differs = max(abs(q[name] - obstacle.q_a[name]) for name in q) > 0.1
    verdict = "valid" if check.valid else "invalid: " + ", ".join(
        f"{c.contact_body_1} - {c.contact_body_2}" for c in check.contacts)
    return _reported(what, check.valid and differs, f"{text}; check_state_validity of the answer: {verdict}")


def _ik_inside_the_obstacle(client: KinematicsClient, group: str, tip: str, obstacle: _Obstacle) -> bool:
    """compute_ik with the tip inside the obstacle and avoid_collisions: GOAL_IN_COLLISION, naming it."""
    T_frame_inside = make_transform(rotation_about_axis(np.array([1.0, 0.0, 0.0]), math.pi), obstacle.centre)
    response, elapsed = _timed_call(client, client.ik_client, ik_request(
        group, T_frame_inside, link=tip, frame=obstacle.frame, seed=obstacle.q_a,
        timeout=GOAL_IN_COLLISION_TIMEOUT_S, avoid_collisions=True))
    message = response.error_code.message
    return _reported(f"compute_ik with {tip!r} inside the obstacle, avoid_collisions=true",
                     response.error_code.val == MoveItErrorCodes.GOAL_IN_COLLISION
                     and (f" - {OBSTACLE_ID}" in message or f"{OBSTACLE_ID} - " in message),
                     f"{_outcome(response, elapsed)}: {message}")


# ------------------------------------------------------------------------------------------- the command
def _wait_until_group_served(client: KinematicsClient, group: str, deadline: float) -> bool:
    """True once compute_ik knows ``group`` (the SRDF may arrive after the URDF, which compute_fk needs alone)."""
    request = ik_request(group, np.eye(4), timeout=0.001)
    while time.monotonic() < deadline:
        if client.call(client.ik_client, request).error_code.val != MoveItErrorCodes.INVALID_GROUP_NAME:
            return True
        time.sleep(0.1)
    return False


def _viewer_address(node_log: Path, wait: float) -> str:
    """The address of the node's page, from its log line ``viewer: <address>`` (waited for up to ``wait`` [s])."""
    deadline = time.monotonic() + wait
    while True:
        for line in node_log.read_text(errors="replace").splitlines():
            if "]: viewer: " in line:
                return line.split("]: viewer: ", 1)[1].split()[0]
        if time.monotonic() > deadline:
            return f"not served (see {node_log})"
        time.sleep(0.2)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--start-node", action="store_true", help="start kinematics_node and a description "
                        "publisher for the robot first")
    parser.add_argument("--once", action="store_true", help="with --start-node: stop everything after the demo "
                        "instead of leaving the node running until Ctrl-C")
    parser.add_argument("--robot", default="ur5", choices=BUNDLED_ROBOTS)
    parser.add_argument("--namespace", default="", help="the node's namespace (with --start-node: where it is "
                        "started; default the root: /compute_ik, ...)")
    parser.add_argument("--viewer-port", type=int, default=0, help="with --start-node: the node serves its page in "
                        "the browser on this port (docs/viewer.md; default 0: no page)")
    parser.add_argument("--servo", action="store_true", help="with --start-node: the node servos the robot; "
                        "jog it (instead of the service calls)")
    parser.add_argument("--calls", type=int, default=200, help="calls per service for the latency figures")
    parser.add_argument("--wait", type=float, default=120.0, help="how long to wait for the node [s] (its first "
                        "start compiles the solver, about a minute)")
    return parser


def main(argv: list[str] | None = None) -> int:
    options = _parser().parse_args(argv)
    children: dict[str, subprocess.Popen] = {}
    signal.signal(signal.SIGTERM, signal.default_int_handler)  # as Ctrl-C: the started node is stopped too
    os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    log_dir = None
    try:
        if options.start_node:
            log_dir = Path(tempfile.mkdtemp(prefix="kinematics_py-run-"))
            children = start_stack(options.robot, log_dir, options.namespace, options.viewer_port, options.servo)
            print(f"started kinematics_node and the description publisher for {options.robot} "
                  f"(ROS_DOMAIN_ID={os.environ.get('ROS_DOMAIN_ID', '0')}, discovery "
                  f"{os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE']}; logs in {log_dir})")
        client = KinematicsClient(options.namespace, node_name="kinematics_demo_client")
        try:
            if not _node_ready(client, options, log_dir):
                return 1
            ok = servo_demo(client, options.robot) if options.servo else run_demo(client, options.robot, options.calls)
        finally:
            client.close()
        if children and not options.once:
            _keep_running(children, client.prefix, log_dir)
        return 0 if ok else 1
    finally:
        stop_stack(children)


def _node_ready(client: KinematicsClient, options, log_dir: Path | None) -> bool:
    """Wait until the node serves the demo's group; say how long that took and, if this demo started it (its log
    in ``log_dir``), what the node said about the group (and where its page is)."""
    group = GROUPS[options.robot]
    tip = SemanticModel.from_srdf_file(bundled_robot_path(options.robot, "srdf"), RobotModel.from_urdf_file(
        bundled_robot_path(options.robot))).group(group).tip_link
    start = time.monotonic()
    if not (client.wait_until_serving(tip, options.wait) and
            _wait_until_group_served(client, group, start + options.wait)):
        print(f"the node did not serve group {group!r} within {options.wait} s"
              + (f"; see {log_dir}" if log_dir else " (is kinematics_node running?)"), file=sys.stderr)
        return False
    print(f"node ready after {time.monotonic() - start:.1f} s")
    if log_dir is not None:
        node_log = (log_dir / "kinematics_node.log").read_text(errors="replace").splitlines()
        said = ("]: group '", "]: collision checking")
        print("kinematics_node says:", *(line.split("]: ", 1)[-1] for line in node_log
                                         if any(text in line for text in said)), sep="\n  ")
        if options.viewer_port:
            print(f"the node's page: {_viewer_address(log_dir / 'kinematics_node.log', options.wait)}")
    return True


def _keep_running(children: Mapping[str, subprocess.Popen], prefix: str, log_dir: Path) -> None:
    """Until Ctrl-C, or until a started process exits (said if with an error)."""
    services = ", ".join(f"{prefix or '/'}{name}" for name in SERVICES_SHOWN)
    print(f"kinematics_node keeps running (services {services}); Ctrl-C stops it")
    try:
        while all(child.poll() is None for child in children.values()):
            time.sleep(0.5)
        failed = [name for name, child in children.items() if child.returncode]
        if failed:
            print(f"{failed} exited with an error; stopping (logs in {log_dir})", file=sys.stderr)
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    sys.exit(main())
