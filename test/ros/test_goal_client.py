"""``transport.goal_client.GoalClient`` in-process (an rclpy action server and the client in contexts of their
own, the client's node spun on a thread as the node's executor spins it, goals sent from another thread):

- the future of a goal's answer completes even when the answer is taken while rclpy's own ``send_goal_async`` would
  still be registering it (that window widened here: it is where a loaded CI run lost a controller's acceptance);
- ``cancel_by_id`` cancels a goal whose acceptance the client never looked at."""
from __future__ import annotations

import itertools
import threading
import time

import pytest
import rclpy
import rclpy.action.client as rclpy_action_client
from action_msgs.msg import GoalStatus
from control_msgs.action import FollowJointTrajectory
from rclpy.action import ActionServer, CancelResponse
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.executors import MultiThreadedExecutor

from kinematics_py.ros.transport.goal_client import GoalClient

pytestmark = pytest.mark.ros

ACTIONS = (f"/goal_client_test_{index}/follow_joint_trajectory" for index in itertools.count())
#: A bound on waits, not a latency.
WAIT_S = 30.0
#: How long rclpy's goal registration is held up after its request went out [s]: far longer than an answer takes.
HELD_UP_S = 0.3


class Spun:
    """A node in a context of its own, spun by a MultiThreadedExecutor on a thread."""

    def __init__(self, name: str):
        self.context = rclpy.Context()
        rclpy.init(context=self.context)
        self.node = rclpy.create_node(name, context=self.context)
        self.executor = MultiThreadedExecutor(4, context=self.context)
        self.executor.add_node(self.node)
        threading.Thread(target=self.executor.spin, daemon=True).start()

    def close(self) -> None:
        self.executor.shutdown()
        self.node.destroy_node()
        rclpy.shutdown(context=self.context)


@pytest.fixture
def action():
    """(action name, the server's goal handles by goal id): a server that runs each goal until it is cancelled."""
    name, handles, released = next(ACTIONS), {}, threading.Event()
    server_side = Spun("goal_client_test_server")

    def execute(handle):
        handles[bytes(handle.goal_id.uuid)] = handle
        while not handle.is_cancel_requested:
            if released.wait(0.005):
                handle.abort()
                return FollowJointTrajectory.Result()
        handle.canceled()
        return FollowJointTrajectory.Result()

    server = ActionServer(server_side.node, FollowJointTrajectory, name, execute_callback=execute,
                          cancel_callback=lambda _handle: CancelResponse.ACCEPT,
                          callback_group=ReentrantCallbackGroup())
    yield name, handles
    released.set()
    server.destroy()
    server_side.close()


@pytest.fixture
def client_side():
    spun = Spun("goal_client_test_client")
    yield spun
    spun.close()


def wait_for(condition, what: str) -> None:
    deadline = time.monotonic() + WAIT_S
    while not condition():
        assert time.monotonic() < deadline, f"{what}: not within {WAIT_S} s"
        time.sleep(0.01)


def test_a_goal_s_answer_taken_while_rclpy_would_still_register_it_completes_its_future(action, client_side,
                                                                                     monkeypatch):
    name, _handles = action
    client = GoalClient(client_side.node, FollowJointTrajectory, name)
    assert client.wait_for_server(timeout_sec=WAIT_S)
    sender = threading.current_thread()

    class HeldUpFuture(rclpy_action_client.Future):
        """rclpy's send_goal_async makes its futures with this: the sender is held up after each."""

        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            if threading.current_thread() is sender:
                time.sleep(HELD_UP_S)

    monkeypatch.setattr(rclpy_action_client, "Future", HeldUpFuture)
    sent = client.send_goal_async(FollowJointTrajectory.Goal())
    wait_for(sent.done, "the goal's answer")
    assert sent.result().accepted


def test_cancel_by_id_cancels_a_goal_whose_acceptance_the_client_never_looked_at(action, client_side):
    name, handles = action
    client = GoalClient(client_side.node, FollowJointTrajectory, name)
    assert client.wait_for_server(timeout_sec=WAIT_S)
    goal_id, _unread = client.send_goal_with_id(FollowJointTrajectory.Goal())
    wait_for(lambda: bytes(goal_id.uuid) in handles, "the goal executing at the server")
    cancelled = client.cancel_by_id(goal_id)
    wait_for(cancelled.done, "the cancel's answer")
    assert [goal.goal_id.uuid.tolist() for goal in cancelled.result().goals_canceling] == \
        [goal_id.uuid.tolist()]
    handle = handles[bytes(goal_id.uuid)]
    wait_for(lambda: handle.status == GoalStatus.STATUS_CANCELED, "the goal canceled")
