"""``transport.actions.serve_action`` in-process, on the node's executor, when publishing a goal's status fails
(RCLError, as Fast DDS refuses a write now and then on a loaded machine): a goal accepted still executes and its
client gets its result; a goal whose end could not be published still answers its result as filled. And when rmw
does not send an answer (its client's reader not matched yet: RCL_RET_TIMEOUT from rcl_action, which rclpy only
warns of), it is sent again: the goal's acceptance, its result, a cancel's answer."""
from __future__ import annotations

import itertools
import threading
import time

import pytest
import rclpy
from action_msgs.msg import GoalStatus
from moveit_msgs.action import ExecuteTrajectory
from moveit_msgs.msg import MoveItErrorCodes
from rclpy.action import ActionClient
from rclpy.executors import MultiThreadedExecutor, SingleThreadedExecutor
from rclpy.impl.implementation_singleton import rclpy_implementation

from kinematics_py.errors import ErrorCode
from kinematics_py.ros.transport.actions import moveit_error_code, serve_action
from kinematics_py.ros.transport.executor import NodeExecutor

pytestmark = pytest.mark.ros

#: Each test's action of its own: a server of an earlier test that a new client still sees (its removal not yet
#: announced) would take its goal requests, and the new server would never see them.
ACTIONS = (f"/goal_keeping_test_{index}/execute_trajectory" for index in itertools.count())
#: A bound on the wait for a result, not a latency: a goal left hanging never ends.
RESULT_TIMEOUT_S = 60.0
RCLError = rclpy_implementation.RCLError
PUBLISH_FAILURE = "Failed publish goal status array: cannot publish data (injected)"
#: rcl_ret_t values (rcl/types.h).
RCL_RET_ERROR, RCL_RET_TIMEOUT = 1, 2


class Server:
    """serve_action on a node of its own context, spun by a NodeExecutor (or rclpy's ``executor_type``) on a
    thread."""

    def __init__(self, execution, action: str, executor_type=None):
        self.context = rclpy.Context()
        rclpy.init(context=self.context)
        self.node = rclpy.create_node("goal_keeping_server", context=self.context)
        self.executor = (NodeExecutor(2, 1, lambda _entity: False, self.node.get_logger(), context=self.context)
                         if executor_type is None else executor_type(context=self.context))
        self.executor.add_node(self.node)
        self.server = serve_action(self.node, ExecuteTrajectory, action, execution, None, moveit_error_code("test"))
        self.thread = threading.Thread(target=self.executor.spin, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.executor.shutdown()
        self.server.destroy()  # (destroy_node leaves a node's action servers and clients)
        self.node.destroy_node()
        rclpy.shutdown(context=self.context)


class Client:
    """An ExecuteTrajectory client in a context of its own."""

    def __init__(self, action: str):
        self.context = rclpy.Context()
        rclpy.init(context=self.context)
        self.node = rclpy.create_node("goal_keeping_client", context=self.context)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)
        self.client = ActionClient(self.node, ExecuteTrajectory, action)
        assert self.client.wait_for_server(timeout_sec=RESULT_TIMEOUT_S)

    def result(self):
        """(status, error_code) of a goal sent, once it ended."""
        return self.result_of(self.accepted_goal())

    def accepted_goal(self):
        """The handle of a goal sent and accepted."""
        sent = self.client.send_goal_async(ExecuteTrajectory.Goal())
        self.executor.spin_until_future_complete(sent, timeout_sec=RESULT_TIMEOUT_S)
        assert sent.done() and sent.result().accepted, "the goal was not accepted"
        return sent.result()

    def result_of(self, goal_handle):
        """(status, error_code) of the goal, once it ended."""
        ended = goal_handle.get_result_async()
        self.executor.spin_until_future_complete(ended, timeout_sec=RESULT_TIMEOUT_S)
        assert ended.done(), f"no result within {RESULT_TIMEOUT_S} s: the goal was left hanging"
        return ended.result().status, ended.result().result.error_code

    def close(self) -> None:
        self.client.destroy()
        self.node.destroy_node()
        rclpy.shutdown(context=self.context)


@pytest.fixture
def serving():
    """``serving(execution)``: a Server of ``execution`` and a Client of it."""
    started = []

    def start(execution, executor_type=None):
        action = next(ACTIONS)
        started.extend([Server(execution, action, executor_type), Client(action)])
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


def fail_first(requests, times: int, code: int = RCL_RET_TIMEOUT) -> list:
    """``requests`` (an ``ActionIO``) does not send its first ``times`` answers, rcl_action returning ``code`` as
    it does when rmw did not send one (RCL_RET_TIMEOUT: the client's reader not matched within rmw's wait); the
    list returned counts the tries."""
    tries, send_now = [], requests.send_now

    def refusing(request_id, c_message):
        tries.append(True)
        if len(tries) <= times:
            return code
        return send_now(request_id, c_message)
    requests.send_now = refusing
    return tries


@pytest.mark.parametrize("executor_type", [None, MultiThreadedExecutor], ids=["NodeExecutor", "rclpy-executor"])
def test_a_goal_acceptance_rmw_did_not_send_is_sent_again(serving, executor_type):
    """rclpy logged such an answer and dropped it: the goal neither answered nor executed, its client waiting."""
    ran = []
    server, client = serving(executed(ran), executor_type)
    tries = fail_first(server.server.requests["goal"], 3)
    status, code = client.result()
    assert (status, code.val) == (GoalStatus.STATUS_SUCCEEDED, MoveItErrorCodes.SUCCESS), code.message
    assert ran == [True] and len(tries) == 4


def test_a_result_rmw_did_not_send_is_sent_again(serving):
    """(rcl_action's error code for an answer the writer could not write, its history full.)"""
    server, client = serving(executed([]))
    tries = fail_first(server.server.requests["result"], 3, RCL_RET_ERROR)
    status, code = client.result()
    assert (status, code.val) == (GoalStatus.STATUS_SUCCEEDED, MoveItErrorCodes.SUCCESS), code.message
    assert len(tries) == 4


def test_a_cancel_answer_rmw_did_not_send_is_sent_again(serving):
    """The goal runs until its cancel is requested; the cancel's answer names it, and the goal ends canceled."""
    def until_cancelled(_goal_handle, _result, stop):
        deadline = time.monotonic() + RESULT_TIMEOUT_S
        while not stop() and time.monotonic() < deadline:
            time.sleep(0.01)
        return ErrorCode.PREEMPTED, stop() or "never cancelled"
    server, client = serving(until_cancelled)
    tries = fail_first(server.server.requests["cancel"], 2)
    goal_handle = client.accepted_goal()
    cancelled = goal_handle.cancel_goal_async()
    client.executor.spin_until_future_complete(cancelled, timeout_sec=RESULT_TIMEOUT_S)
    assert cancelled.done(), "the cancel request was not answered"
    canceling = [bytes(goal.goal_id.uuid) for goal in cancelled.result().goals_canceling]
    assert canceling == [bytes(goal_handle.goal_id.uuid)]
    status, code = client.result_of(goal_handle)
    assert (status, code.message) == (GoalStatus.STATUS_CANCELED, "cancelled by its client")
    assert len(tries) == 3
