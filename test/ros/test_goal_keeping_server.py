"""``transport.actions.serve_action`` in-process, on the node's executor, when publishing a goal's status fails
(RCLError, as Fast DDS refuses a write now and then on a loaded machine): a goal accepted still executes and its
client gets its result; a goal whose end could not be published still answers its result as filled."""
from __future__ import annotations

import threading

import pytest
import rclpy
from action_msgs.msg import GoalStatus
from moveit_msgs.action import ExecuteTrajectory
from moveit_msgs.msg import MoveItErrorCodes
from rclpy.action import ActionClient
from rclpy.executors import SingleThreadedExecutor
from rclpy.impl.implementation_singleton import rclpy_implementation

from kinematics_py.errors import ErrorCode
from kinematics_py.ros.transport.actions import moveit_error_code, serve_action
from kinematics_py.ros.transport.executor import NodeExecutor

pytestmark = pytest.mark.ros

ACTION = "/goal_keeping_test/execute_trajectory"
#: A bound on the wait for a result, not a latency: a goal left hanging never ends.
RESULT_TIMEOUT_S = 60.0
RCLError = rclpy_implementation.RCLError
PUBLISH_FAILURE = "Failed publish goal status array: cannot publish data (injected)"


class Server:
    """serve_action on a node of its own context, spun by a NodeExecutor on a thread."""

    def __init__(self, execution):
        self.context = rclpy.Context()
        rclpy.init(context=self.context)
        self.node = rclpy.create_node("goal_keeping_server", context=self.context)
        self.executor = NodeExecutor(2, 1, lambda _entity: False, self.node.get_logger(), context=self.context)
        self.executor.add_node(self.node)
        self.server = serve_action(self.node, ExecuteTrajectory, ACTION, execution, None, moveit_error_code("test"))
        self.thread = threading.Thread(target=self.executor.spin, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.executor.shutdown()
        self.node.destroy_node()
        rclpy.shutdown(context=self.context)


class Client:
    """An ExecuteTrajectory client in a context of its own."""

    def __init__(self):
        self.context = rclpy.Context()
        rclpy.init(context=self.context)
        self.node = rclpy.create_node("goal_keeping_client", context=self.context)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)
        self.client = ActionClient(self.node, ExecuteTrajectory, ACTION)
        assert self.client.wait_for_server(timeout_sec=RESULT_TIMEOUT_S)

    def result(self):
        """(status, error_code) of a goal sent, once it ended."""
        sent = self.client.send_goal_async(ExecuteTrajectory.Goal())
        self.executor.spin_until_future_complete(sent, timeout_sec=RESULT_TIMEOUT_S)
        assert sent.done() and sent.result().accepted, "the goal was not accepted"
        ended = sent.result().get_result_async()
        self.executor.spin_until_future_complete(ended, timeout_sec=RESULT_TIMEOUT_S)
        assert ended.done(), f"no result within {RESULT_TIMEOUT_S} s: the goal was left hanging"
        return ended.result().status, ended.result().result.error_code

    def close(self) -> None:
        self.node.destroy_node()
        rclpy.shutdown(context=self.context)


@pytest.fixture
def serving():
    """``serving(execution)``: a Server of ``execution`` and a Client of it."""
    started = []

    def start(execution):
        started.extend([Server(execution), Client()])
        return started[0], started[1]
    yield start
    for each in reversed(started):
        each.close()


def executed(ran: list):
    def execution(_goal_handle, _result, _stop):
        ran.append(True)
        return ErrorCode.SUCCESS, "executed"
    return execution


def test_a_goal_whose_accepted_status_was_not_published_executes_all_the_same(serving):
    """rclpy publishes the status array once it answered "accepted", then hands the goal on: the failure is
    injected at that point (the callback it hands the goal to raises, the goal still ACCEPTED)."""
    ran = []
    server, client = serving(executed(ran))

    def publish_failure(_goal_handle):
        raise RCLError(PUBLISH_FAILURE)
    server.server.register_handle_accepted_callback(publish_failure)
    status, code = client.result()
    assert (status, code.val) == (GoalStatus.STATUS_SUCCEEDED, MoveItErrorCodes.SUCCESS), code.message
    assert ran == [True]


def test_a_goal_whose_end_was_not_published_answers_its_result(serving):
    """The goal's end (succeed) changes its state, then publishing the status array fails."""
    def execution(goal_handle, _result, _stop):
        succeed = goal_handle.succeed

        def succeed_unpublished():
            succeed()
            raise RCLError(PUBLISH_FAILURE)
        goal_handle.succeed = succeed_unpublished
        return ErrorCode.SUCCESS, "executed"
    _server, client = serving(execution)
    status, code = client.result()
    assert (status, code.val) == (GoalStatus.STATUS_SUCCEEDED, MoveItErrorCodes.SUCCESS), code.message
    assert code.message == "executed"
