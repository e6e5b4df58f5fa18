"""kinematics_node's answers stay consistent with one robot while its robot, its parameters and its scene change
under load.

8 callers (client processes with several threads, over DDS) call compute_ik and compute_fk back to back for the
bundled UR5 or panda at random, checking every answer against the one robot it names
(processes/stress_client.py); meanwhile this test switches the node between the two robots, sets solver
parameters (accepted for the served group, refused for the other), max_ik_timeout, and adds and removes a
world object. Nothing may crash, hang or answer with an internal error.
"""
from __future__ import annotations

import itertools
import json
import time
from collections import Counter

import pytest
from moveit_msgs.msg import CollisionObject, MoveItErrorCodes
from node_harness import (
    PROCESSES,
    NodeUnderTest,
    fk_request,
    ik_request,
    pose_msg,
    serving_node,
    start_node,
    ur5_parameters,
    wait_for,
)
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from robots import UR5_UNREACHABLE_POSITION
from shape_msgs.msg import SolidPrimitive
from std_msgs.msg import String

from kinematics_py.geometry.transforms import make_transform
from kinematics_py.robots import bundled_robot_path

CLIENT_PROCESSES = 2
THREADS_PER_CLIENT = 4
#: How long the callers call while the node changes [s] (after the clients' start-up).
DURATION_S = 20.0
CLIENT_STARTUP_S = 8.0
GROUPS = {"ur5": "ur_manipulator", "panda": "panda_arm"}
#: Time the node serves each robot before the next switch [s]: several answers of each kind.
DWELL_S = 1.0
LATCHED_QOS = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL)


def kinematics(group: str, name: str) -> str:
    return f"robot_description_kinematics.{group}.{name}"


def descriptions(robot: str) -> dict[str, str]:
    return {"robot_description": bundled_robot_path(robot).read_text(encoding="utf-8"),
            "robot_description_semantic": bundled_robot_path(robot, "srdf").read_text(encoding="utf-8")}


def far_box(operation) -> CollisionObject:
    """A box no link of either robot reaches."""
    msg = CollisionObject(id="far_box", operation=operation, pose=pose_msg(make_transform(None, (5.0, 5.0, 5.0))))
    msg.primitives = [SolidPrimitive(type=SolidPrimitive.BOX, dimensions=[0.2, 0.2, 0.2])]
    msg.primitive_poses = [pose_msg(make_transform(None, (0.0, 0.0, 0.0)))]
    return msg


def change_everything(node, until: float) -> Counter:
    """Switch robots and change parameters and the scene until ``until``; counts what was done."""
    done = Counter()
    scene = node.node.create_publisher(CollisionObject, f"{node.namespace}/collision_object", 100)
    try:
        for step, robot in zip(itertools.count(), itertools.cycle(("panda", "ur5"))):
            if time.time() >= until:
                break
            result = node.set_parameters_atomically(**descriptions(robot))
            assert result.successful, result.reason
            done["robot switches"] += 1
            group, other = GROUPS[robot], GROUPS["ur5" if robot == "panda" else "panda"]
            switched = time.monotonic()
            timeout_s = 0.05 + 0.01 * (step % 3)
            (accepted,) = node.set_parameters(**{kinematics(group, "kinematics_solver_timeout"): timeout_s})
            assert accepted.successful, accepted.reason
            (refused,) = node.set_parameters(**{kinematics(other, "solve_mode"): "distance"})
            assert not refused.successful and "defines no group" in refused.reason, refused.reason
            (timeout,) = node.set_parameters(max_ik_timeout=5.0 + step % 2)
            assert timeout.successful, timeout.reason
            scene.publish(far_box(CollisionObject.ADD if step % 2 == 0 else CollisionObject.REMOVE))
            done["parameter changes"] += 3
            time.sleep(max(0.0, DWELL_S - (time.monotonic() - switched)))
    finally:
        node.node.destroy_publisher(scene)
    return done


@pytest.fixture
def node(python_processes, tmp_path):
    kinematics_yaml = ur5_parameters()["robot_description_kinematics"]
    parameters = ur5_parameters(robot_description_kinematics={
        **kinematics_yaml, "panda_arm": {"kinematics_solver_timeout": 0.05}})
    with serving_node(python_processes, tmp_path, parameters, "stress_node") as node:
        yield node


def test_answers_stay_consistent_with_one_robot_while_everything_changes(node, python_processes):
    until = time.time() + CLIENT_STARTUP_S + DURATION_S
    clients = [python_processes.start(PROCESSES / "stress_client.py", "--namespace", node.namespace, "--until",
                                      str(until), "--threads", str(THREADS_PER_CLIENT), "--seed", str(index),
                                      name=f"stress_client_{index}") for index in range(CLIENT_PROCESSES)]
    time.sleep(CLIENT_STARTUP_S / 2)
    done = change_everything(node, until)
    counts, failures = Counter(), []
    for client in clients:
        client.finish(60.0)
        assert client.popen.returncode == 0, client.output()
        summary = json.loads(client.stdout())
        counts.update(summary["counts"])
        failures += summary["failures"]
    print(dict(done), dict(counts))
    assert not failures, failures
    assert done["robot switches"] >= 6, done
    for robot in GROUPS:  # each robot was served and answered while the callers were calling
        assert counts[f"ik {robot} solved"] > 0 and counts[f"fk {robot} answered"] > 0, counts
        assert counts[f"fk default {robot}"] > 0, counts
    node.assert_alive()
    log = node.process.output()
    assert "internal error" not in log and "Traceback" not in log, log[-5000:]


# ------------------------------------------------------------------------------------------ the last change wins
RACE_ROUNDS = 8
ROUND_WAIT_S = 20.0


def ur5_with_marker(marker: str) -> str:
    """The bundled UR5 with a link ``marker`` fixed to tool0: a description whose use compute_fk shows."""
    urdf = bundled_robot_path("ur5").read_text(encoding="utf-8")
    extra = (f'<link name="{marker}"/><joint name="{marker}_joint" type="fixed"><parent link="tool0"/>'
             f'<child link="{marker}"/></joint></robot>')
    return urdf[:urdf.rindex("</robot>")] + extra


def test_a_description_and_a_parameter_changing_together_both_take_effect(python_processes, tmp_path):
    """Each round publishes a new robot_description on its topic while a solver parameter is being set: the node
    ends serving both, whichever it handled first (a set-up validated before the new description arrived must not
    be served after it)."""
    parameters = {key: value for key, value in ur5_parameters().items() if key != "robot_description"}
    process, namespace = start_node(python_processes, tmp_path, parameters, "race_node")
    node = NodeUnderTest(process, namespace)
    description = node.node.create_publisher(String, f"{namespace}/robot_description", LATCHED_QOS)
    timeout_parameter = kinematics("ur_manipulator", "kinematics_solver_timeout")
    unreachable = ik_request("ur_manipulator", make_transform(None, UR5_UNREACHABLE_POSITION))
    try:
        description.publish(String(data=ur5_with_marker("marker_0")))
        node.wait_serving("marker_0")
        for round_index in range(1, RACE_ROUNDS + 1):
            marker, timeout_ms = f"marker_{round_index}", 20 + round_index
            future = node.set_parameters_async(**{timeout_parameter: timeout_ms / 1000})
            description.publish(String(data=ur5_with_marker(marker)))
            (result,) = node.result(future)
            assert result.successful, result.reason

            def serves_both(marker=marker, timeout_ms=timeout_ms) -> bool:
                fk = node.fk(fk_request([marker]))
                ik = node.ik(unreachable)
                return fk.error_code.val == MoveItErrorCodes.SUCCESS and f"{timeout_ms:.1f} ms" in ik.error_code.message
            wait_for(serves_both, ROUND_WAIT_S, f"round {round_index}: {marker} with a {timeout_ms} ms timeout",
                     process)
        node.assert_alive()
    finally:
        node.close()
