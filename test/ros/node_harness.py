"""Shared by the test_node_* modules (no tests here): start kinematics_node in its own process, build requests.

Each node runs in a namespace of its own (named with the run's pid), so services and topics of one test module
never reach another's node, nor those of a foreign program on the domain; the session's ROS isolation (loopback
discovery, own domain id, log folder) comes from conftest.py.
"""
from __future__ import annotations

import contextlib
import itertools
import math
import os
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path

import numpy as np
import pytest
import yaml
from conftest import ChildProcess, PythonProcesses

from kinematics_py.model.robot_model import RobotModel
from kinematics_py.robots import bundled_robot_path
from kinematics_py.ros.demo.client import KinematicsClient, fk_request, ik_request  # noqa: F401
from kinematics_py.ros.messages.conversions import pose_msg_from_transform as pose_msg  # noqa: F401

REPO = Path(__file__).resolve().parents[2]
TREE_URDF = REPO / "test" / "data" / "urdf" / "tree.urdf"
PROCESSES = Path(__file__).parent / "processes"
#: The first node of a fresh checkout compiles the solver (numba) before it serves.
#: The bundled UR5 as the node serves it with ur5_parameters: its group, model and the group's joints in order.
UR5_GROUP = "ur_manipulator"
UR5_MODEL = RobotModel.from_urdf_string(bundled_robot_path("ur5").read_text())
UR5_JOINTS = ("shoulder_pan_joint", "shoulder_lift_joint", "elbow_joint", "wrist_1_joint", "wrist_2_joint",
              "wrist_3_joint")
NODE_READY_TIMEOUT_S = 240.0
CALL_TIMEOUT_S = 30.0
_namespaces = itertools.count(1)


def kinematics_node_script() -> Path:
    """The installed console script (proves the entry point works)."""
    script = Path(sys.prefix) / "bin" / "kinematics_node"
    if not script.exists():
        pytest.fail(f"{script} is missing: reinstall the project (scripts/setup_venv.sh test)")
    return script


def start_node(processes: PythonProcesses, directory: Path, parameters: Mapping, name: str,
               script: Path | None = None) -> tuple[ChildProcess, str]:
    """Start kinematics_node (or ``script``, which runs it) with ``parameters`` in a fresh namespace; returns
    (process, namespace)."""
    namespace = f"/kinematics_test_{os.getpid()}_{next(_namespaces)}"
    params_file = directory / f"{name}.params.yaml"
    params_file.write_text(yaml.safe_dump({"/**": {"ros__parameters": dict(parameters)}}), encoding="utf-8")
    process = processes.start(script or kinematics_node_script(), "--ros-args", "--params-file", str(params_file),
                              "-r", f"__ns:={namespace}", name=name)
    return process, namespace


@contextlib.contextmanager
def serving_node(processes: PythonProcesses, directory: Path, parameters: Mapping, name: str, tip: str = "tool0",
                 client_class: type = None, script: Path | None = None):
    """A node started with ``parameters`` (by ``script``, default kinematics_node), its client (``client_class``,
    default NodeUnderTest) once it serves IK for ``tip``; on exit the node must still be alive, and is closed."""
    process, namespace = start_node(processes, directory, parameters, name, script)
    node = (client_class or NodeUnderTest)(process, namespace)
    try:
        node.wait_serving(tip)
        yield node
        node.assert_alive()
    finally:
        node.close()


#: How long joint values must stay unchanged to count as at rest [s].
REST_S = 0.3


def wait_at_rest(read: Callable[[], np.ndarray], timeout: float, what: str) -> np.ndarray:
    """The values ``read`` returns once two reads REST_S apart agree (1e-9): an arm that was stopped, with its last
    joint_states through, however late they arrive on a busy machine; fail after ``timeout`` [s]."""
    last = read()
    def settled():
        nonlocal last
        time.sleep(REST_S)
        now, previous = read(), last
        last = now
        return np.allclose(now, previous, rtol=0.0, atol=1e-9)
    wait_for(settled, timeout, what, interval=0.0)
    return last


def wait_for(condition: Callable[[], object], timeout: float, what: str, process: ChildProcess | None = None,
             interval: float = 0.05):
    """Poll ``condition`` until it returns a truthy value (returned) or fail after ``timeout`` [s]."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if process is not None and process.popen.poll() is not None:
            pytest.fail(f"{process.name} exited while waiting for {what}\n{process.output()}")
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {timeout} s waiting for {what}" +
                        (f"\n{process.output()}" if process is not None else ""))
        time.sleep(interval)


def accepted_goal(client: KinematicsClient, action_client, goal, feedback: list, timeout: float):
    """The handle of ``goal`` sent by ``action_client``, once accepted; its feedback states appended to
    ``feedback``."""
    future = action_client.send_goal_async(goal, feedback_callback=lambda msg: feedback.append(msg.feedback.state))
    client.spin_until(future, timeout)
    assert future.done(), f"no answer to the goal within {timeout} s"
    handle = future.result()
    assert handle.accepted, "the goal was rejected"
    return handle


def goal_result(client: KinematicsClient, handle, timeout: float):
    """(status, result) of a goal once it ended."""
    future = handle.get_result_async()
    client.spin_until(future, timeout)
    assert future.done(), f"no result within {timeout} s (the goal's status: {handle.status})"
    return future.result().status, future.result().result


class NodeUnderTest:
    """A running node and a client of it in this process (its own rclpy context)."""

    def __init__(self, process: ChildProcess, namespace: str, domain_id: int | None = None):
        self.process = process
        self.namespace = namespace
        self.client = KinematicsClient(namespace, node_name="pytest_client", domain_id=domain_id)
        self.node = self.client.node
        self._solve_ik = None
        self._state_validity = None
        self._parameter_clients = {}
        #: (what, wait) of what a test module uses: ``wait(timeout)`` is true once it is ready (``wait_serving``).
        self._ready_before_use: list[tuple[str, Callable[[float], object]]] = []

    def answering_before_use(self, client, request) -> None:
        """``wait_serving`` waits until ``client``'s service answers ``request`` too."""
        self._ready_before_use.append((f"{client.srv_name} answering", lambda timeout: self.client.wait_until_answering(
            client, request, timeout)))

    def server_before_use(self, action_client, name: str) -> None:
        """``wait_serving`` waits until the action ``name`` has a server for ``action_client`` too."""
        self._ready_before_use.append((f"the {name} action's server",
                                       lambda timeout: action_client.wait_for_server(timeout_sec=timeout)))

    def publisher_before_use(self, topic: str, what: str) -> None:
        """``wait_serving`` waits until ``topic`` has a publisher too."""
        self._ready_before_use.append((what, lambda timeout: wait_for(
            lambda: self.node.count_publishers(topic) > 0, timeout, what)))

    def wait_serving(self, link: str, timeout: float = NODE_READY_TIMEOUT_S) -> None:
        """Wait until compute_fk serves ``link``, then until what the module uses is ready (``answering_before_use``,
        ``server_before_use``, ``publisher_before_use``): a node still starting on a busy machine is neither
        answering nor discovered, so none of it is waited for with a call's timeout from the node's launch."""
        wait_for(lambda: self.client.wait_until_serving(link, timeout=1.0), timeout,
                 f"compute_fk to serve {link!r}", self.process)
        for what, ready in self._ready_before_use:
            assert ready(CALL_TIMEOUT_S), f"{what}: not within {CALL_TIMEOUT_S} s of the node serving"

    def fk(self, request):
        return self.client.call(self.client.fk_client, request, CALL_TIMEOUT_S)

    def ik(self, request):
        return self.client.call(self.client.ik_client, request, CALL_TIMEOUT_S)

    def solve_ik(self, request):
        from moveit_msgs.srv import GetPositionIK

        if self._solve_ik is None:
            # The default service QoS, as MoveIt's srv_kinematics_plugin uses.
            self._solve_ik = self.node.create_client(GetPositionIK, f"{self.namespace}/solve_ik")
            assert self.client.wait_until_answering(self._solve_ik, GetPositionIK.Request(), CALL_TIMEOUT_S)
        return self.client.call(self._solve_ik, request, CALL_TIMEOUT_S)

    def state_validity(self, request):
        """An answer of the node's check_state_validity (moveit_msgs/srv/GetStateValidity)."""
        from moveit_msgs.srv import GetStateValidity

        if self._state_validity is None:
            self._state_validity = self.client.client(GetStateValidity, f"{self.namespace}/check_state_validity")
            assert self.client.wait_until_answering(self._state_validity, GetStateValidity.Request(), CALL_TIMEOUT_S)
        return self.client.call(self._state_validity, request, CALL_TIMEOUT_S)

    def set_parameters(self, **values):
        """Set the node's parameters one by one (dotted names via ``**{"a.b": v}``); returns the
        SetParametersResults."""
        from rcl_interfaces.srv import SetParameters

        return self._parameter_call(SetParameters, "set_parameters", values).results

    def set_parameters_atomically(self, **values):
        """Set the node's parameters all at once, or none; returns the SetParametersResult."""
        from rcl_interfaces.srv import SetParametersAtomically

        return self._parameter_call(SetParametersAtomically, "set_parameters_atomically", values).result

    def set_parameters_async(self, **values):
        """Send a set_parameters request; ``result(future)`` waits for its SetParametersResults."""
        from rcl_interfaces.srv import SetParameters

        return self._parameter_client(SetParameters, "set_parameters").call_async(
            self._parameters_request(SetParameters, values))

    def result(self, future, timeout: float = 120.0):
        """The answer of an async call (see set_parameters_async); fails the test after ``timeout`` [s]."""
        self.client.spin_until(future, timeout)
        assert future.done(), f"no answer within {timeout} s"
        return future.result().results

    def _parameter_call(self, service_type, service: str, values):
        return self.client.call(self._parameter_client(service_type, service),
                                self._parameters_request(service_type, values), 120.0)

    def _parameter_client(self, service_type, service: str):
        if service not in self._parameter_clients:
            client = self.client.client(service_type, f"{self.namespace}/kinematics_node/{service}")
            assert self.client.wait_until_answering(client, service_type.Request(), CALL_TIMEOUT_S)
            self._parameter_clients[service] = client
        return self._parameter_clients[service]

    @staticmethod
    def _parameters_request(service_type, values):
        from rclpy.parameter import Parameter

        return service_type.Request(parameters=[Parameter(name, value=value).to_parameter_msg()
                                                for name, value in values.items()])

    def assert_alive(self) -> None:
        assert self.process.popen.poll() is None, f"the node exited\n{self.process.output()}"

    def close(self) -> None:
        self.client.close()


def state_validity_request(joints: Mapping[str, float] | None = None, group: str = ""):
    """A GetStateValidity request for these joint values (the others from the node's current state)."""
    from moveit_msgs.srv import GetStateValidity

    request = GetStateValidity.Request(group_name=group)
    if joints:
        request.robot_state.joint_state.name = list(joints)
        request.robot_state.joint_state.position = [float(v) for v in joints.values()]
    return request


def ur5_parameters(**extra) -> dict:
    """The bundled UR5 with config/kinematics.yaml under robot_description_kinematics."""
    return {
        "robot_description": bundled_robot_path("ur5").read_text(encoding="utf-8"),
        "robot_description_semantic": bundled_robot_path("ur5", "srdf").read_text(encoding="utf-8"),
        "robot_description_kinematics": yaml.safe_load((REPO / "config" / "kinematics.yaml").read_text()),
        **extra,
    }



@pytest.fixture(scope="module")
def module_processes(tmp_path_factory):
    processes = PythonProcesses(tmp_path_factory.mktemp("node"))
    try:
        yield processes
    finally:
        processes.stop_all()


def pose_error(T_a: np.ndarray, T_b: np.ndarray) -> tuple[float, float]:
    """(position error [m], rotation angle [rad]) between two transforms."""
    R = T_a[:3, :3].T @ T_b[:3, :3]
    angle = math.acos(float(np.clip((np.trace(R) - 1) / 2, -1.0, 1.0)))
    return float(np.linalg.norm(T_a[:3, 3] - T_b[:3, 3])), angle


def poses_close(T_a: np.ndarray, T_b: np.ndarray, position_tolerance: float, rotation_tolerance: float) -> bool:
    position_error, rotation_error = pose_error(T_a, T_b)
    return position_error <= position_tolerance and rotation_error <= rotation_tolerance


def transform_of_pose_stamped(pose_stamped) -> np.ndarray:
    from kinematics_py.geometry.poses import transform_from_any_pose

    return transform_from_any_pose(pose_stamped.pose)


def solution_values(response) -> dict[str, float]:
    state = response.solution.joint_state
    return dict(zip(state.name, state.position))
