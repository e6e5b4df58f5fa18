"""The node's start beside a description publisher that started first (as under ``ros2 launch``, and as
robot_state_publisher publishes): the latched robot_description always reaches it, however late it subscribes
and however loaded the machine; a message no wake-up of the executor delivers is taken by the wait check;
without any publisher, robot_state_publisher's robot_description parameter serves, and the waiting node says
what it waits for."""
from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import rclpy
import yaml
from node_harness import KinematicsClient, kinematics_node_script, wait_for
from std_msgs.msg import String

from kinematics_py.robots import bundled_robot_path
from kinematics_py.ros.topics.description_topics import (
    DESCRIPTION_QOS,
    SRDF,
    STATE_PUBLISHER,
    STATE_PUBLISHER_PARAMETER,
    URDF,
    WAIT_LOG_S,
    DescriptionTopics,
)

PUBLISHER_SCRIPT = Path(sys.prefix) / "bin" / "kinematics_description_publisher"
#: 20 starts of a node after its description was published, NODES_AT_ONCE after each of STARTS / NODES_AT_ONCE
#: publishers, beside a process that keeps a CPU busy.
STARTS = 20
NODES_AT_ONCE = 4
#: How long one node may take to serve its robot [s]: far beyond a start (seconds, under load), far below the
#: two minutes the node once waited for a description it never took.
SERVE_WITHIN_S = 90.0
PUBLISHED = "publishing robot 'ur5'"
WAIT_CHECK_TAKE = "taken from the reader by the wait check"


def _namespace(name: str) -> str:
    return f"/kinematics_test_{os.getpid()}_{name}"


def _start_publisher(processes, namespace: str, name: str, *args: str):
    return processes.start(PUBLISHER_SCRIPT, *args, "--ros-args", "-r", f"__ns:={namespace}", name=name)


def _start_node(processes, namespace: str, name: str, *ros_args: str):
    return processes.start(kinematics_node_script(), "--ros-args", "-r", f"__ns:={namespace}", *ros_args, name=name)


def _wave(processes, first: int) -> list[str]:
    """A publisher started, then, once it has published, NODES_AT_ONCE nodes (0.1 s apart, each in a namespace of
    its own, its description topics remapped to the publisher's); every node must serve compute_fk for tool0.
    The nodes' logs."""
    published_in = _namespace(f"startup_publisher_{first}")
    publisher = _start_publisher(processes, published_in, f"publisher_{first}", "--robot", "ur5")
    wait_for(lambda: PUBLISHED in publisher.output(), SERVE_WITHIN_S, "the description to be published", publisher)
    nodes = {}
    for index in range(first, first + NODES_AT_ONCE):
        namespace = _namespace(f"startup_{index}")
        nodes[namespace] = _start_node(processes, namespace, f"node_{index}", *(
            argument for topic in (URDF, SRDF) for argument in ("-r", f"{topic}:={published_in}/{topic}")))
        time.sleep(0.1)
    logs = []
    for namespace, node in nodes.items():
        client = KinematicsClient(namespace, node_name="startup_client")
        try:
            served = client.wait_until_serving("tool0", SERVE_WITHIN_S)
        finally:
            client.close()
        assert served, f"node {namespace} never served its robot\n{node.output()}"
        logs.append(node.output())
        processes.stop(node)
    processes.stop(publisher)
    return logs


def test_a_description_published_before_the_node_starts_always_reaches_it(python_processes):
    burner = python_processes.start("-c", "while True: pass", name="cpu_burner")
    try:
        logs = [log for first in range(0, STARTS, NODES_AT_ONCE) for log in _wave(python_processes, first)]
    finally:
        python_processes.stop(burner)
    assert len(logs) == STARTS
    assert all("(URDF from the topic)" in log for log in logs)  # no parameter was given
    print(f"{sum(WAIT_CHECK_TAKE in log for log in logs)} of {STARTS} nodes took their description by the wait "
          f"check")


def test_without_a_publisher_the_node_says_what_it_waits_for_and_takes_the_state_publishers_parameter(
        python_processes, tmp_path):
    namespace = _namespace("state_publisher_parameter")
    node_parameters = tmp_path / "node.params.yaml"
    node_parameters.write_text(yaml.safe_dump({"/**": {"ros__parameters": {
        SRDF: bundled_robot_path("ur5", "srdf").read_text(encoding="utf-8")}}}), encoding="utf-8")
    node = _start_node(python_processes, namespace, "waiting_node", "--params-file", str(node_parameters))
    said = wait_for(lambda: [line for line in node.output().splitlines() if "no robot yet" in line],
                    SERVE_WITHIN_S + WAIT_LOG_S, "the node to say what it waits for", node)
    assert f"waiting for {namespace}/{URDF} (0 publisher(s), nothing received)" in said[0]
    assert f"{namespace}/{STATE_PUBLISHER}/get_parameters (no such service)" in said[0]

    # robot_state_publisher's stand-in: the URDF as its robot_description parameter, nothing on the topic
    state_publisher_parameters = tmp_path / "state_publisher.params.yaml"
    state_publisher_parameters.write_text(yaml.safe_dump({"/**": {"ros__parameters": {
        URDF: bundled_robot_path("ur5").read_text(encoding="utf-8")}}}), encoding="utf-8")
    python_processes.start(PUBLISHER_SCRIPT, "--semantic-only", "--ros-args", "--params-file",
                           str(state_publisher_parameters), "-r", f"__ns:={namespace}", "-r",
                           f"__node:={STATE_PUBLISHER}", name="state_publisher_stand_in")
    client = KinematicsClient(namespace, node_name="startup_client")
    try:
        assert client.wait_until_serving("tool0", SERVE_WITHIN_S), node.output()
        assert client.node.count_publishers(f"{namespace}/{URDF}") == 0
    finally:
        client.close()
    assert f"{URDF} from {namespace}/{STATE_PUBLISHER}/get_parameters" in node.output()
    assert f"robot 'ur5' (URDF from the {STATE_PUBLISHER_PARAMETER})" in node.output()


def test_the_wait_check_takes_a_description_no_executor_delivered():
    """The waiting node's subscription is never spun: only the wait check can take what its reader holds."""
    namespace = _namespace("wait_check")
    contexts = [rclpy.Context(), rclpy.Context()]
    for context in contexts:
        rclpy.init(context=context)
    publisher_node = rclpy.create_node("latched_description", namespace=namespace, context=contexts[0])
    waiting_node = rclpy.create_node("waiting_node", namespace=namespace, context=contexts[1])
    try:
        publisher_node.create_publisher(String, URDF, DESCRIPTION_QOS).publish(String(data="<robot name='r'/>"))
        received: dict[str, str] = {}
        topics = DescriptionTopics(waiting_node, lambda texts, source: received.update(
            {which: f"{text} from the {source}" for which, text in texts.items()}), lambda which: which not in received)
        wait_for(lambda: topics.check() or received, SERVE_WITHIN_S, "the wait check to take the description")
        assert received == {URDF: "<robot name='r'/> from the topic"}
        topics.check()  # the URDF came and no one offers an SRDF: nothing more to wait for
        assert not topics.waiting
    finally:
        for node, context in zip((publisher_node, waiting_node), contexts):
            node.destroy_node()
            rclpy.shutdown(context=context)
