"""``transport.controller_clients.ControllerClients._gone``: when a controller counts as gone mid-execution, from its
action server in the ROS graph and its joints' last times on joint_states (stand-ins for both, times the test sets);
and that it outranks the goal-answer deadline (``_send``); a goal given up unanswered is cancelled."""
from types import SimpleNamespace

import pytest

pytest.importorskip("rclpy")

from kinematics_py.ros.transport.controller_clients import (  # noqa: E402
    JOINT_STATES_SILENCE_S,
    ControllerClients,
)

pytestmark = pytest.mark.ros

STARTED = 100.0


def clients(heard: dict[str, float]) -> ControllerClients:
    """ControllerClients whose joint_states were last heard at ``heard`` (joint -> monotonic time)."""
    made = ControllerClients.__new__(ControllerClients)
    made._positions = SimpleNamespace(heard=heard)
    return made


def running(server_ready: bool = True) -> list:
    """One controller moving joints a and b, its goal not answered yet."""
    return [SimpleNamespace(controller=SimpleNamespace(name="arm_controller"), result=None, goal=None,
                            part=SimpleNamespace(joint_names=["a", "b"]),
                            client=SimpleNamespace(server_is_ready=lambda: server_ready))]


def test_joints_still_on_joint_states_and_a_server_in_the_graph_are_not_gone():
    now = STARTED + 3.0
    assert clients({"a": now - 0.01, "b": now - 0.02})._gone(running(), STARTED, now) == ""


def test_a_server_that_left_the_graph_is_gone():
    now = STARTED + 0.2
    gone = clients({"a": now, "b": now})._gone(running(server_ready=False), STARTED, now)
    assert "arm_controller" in gone and "action server left" in gone


def test_joints_silent_since_the_start_are_gone():
    now = STARTED + JOINT_STATES_SILENCE_S + 0.3
    gone = clients({"a": STARTED - 0.1, "b": now})._gone(running(), STARTED, now)
    assert "['a']" in gone and "joint_states" in gone


def test_joints_first_heard_after_the_start_then_silent_are_gone():
    """A controller (or driver) whose joint_states reached the node only after the execution started, e.g. under
    load or just launched, is still noticed when they stop."""
    first_heard = STARTED + 0.4
    now = first_heard + JOINT_STATES_SILENCE_S + 0.1
    gone = clients({"a": first_heard, "b": first_heard})._gone(running(), STARTED, now)
    assert "['a', 'b']" in gone


def test_joints_silent_long_before_the_start_tell_nothing():
    """Joints published by something else long gone (or never) do not make a controller gone."""
    now = STARTED + 2.0
    assert clients({"a": STARTED - 5.0})._gone(running(), STARTED, now) == ""


class NeverAnswered:
    """A goal's future that is not done (until the test answers it: ``answer``)."""

    def __init__(self):
        self.callbacks = []

    def done(self) -> bool:
        return False

    def add_done_callback(self, callback) -> None:
        self.callbacks.append(callback)

    def answer(self, accepted: bool) -> list:
        """The cancels the done callbacks send for a goal ``accepted`` (or not) at last."""
        cancels = []
        handle = SimpleNamespace(accepted=accepted, cancel_goal_async=lambda: cancels.append("cancel"))
        for callback in self.callbacks:
            callback(SimpleNamespace(result=lambda: handle))
        return cancels


def goal_client(server_is_ready, answer: NeverAnswered, cancelled: list):
    """A GoalClient stand-in: its goal's id is "goal", its answer ``answer``; cancels by id go to ``cancelled``."""
    return SimpleNamespace(server_is_ready=server_is_ready, send_goal_with_id=lambda goal: ("goal", answer),
                           cancel_by_id=cancelled.append)


def test_a_controller_gone_has_the_last_word_at_the_goal_answer_deadline(monkeypatch):
    """When the answer deadline and the server leaving the graph fall due together (a busy machine), the goal ends
    "gone", not "did not answer": the deadline here has passed at the first look."""
    from trajectory_msgs.msg import JointTrajectory as JointTrajectoryMsg

    from kinematics_py.ros.transport import controller_clients

    monkeypatch.setattr(controller_clients, "GOAL_RESPONSE_WAIT_S", -1.0)
    monkeypatch.setattr(controller_clients, "joint_trajectory_msg", lambda part, header: JointTrajectoryMsg())
    looks = []

    def server_is_ready() -> bool:  # seen when the goal is sent, gone after
        looks.append(True)
        return len(looks) == 1

    entry, cancelled = running()[0], []
    entry.client = goal_client(server_is_ready, NeverAnswered(), cancelled)
    outcome = clients({})._send([entry], header=None)
    assert "gone" in outcome.message and "before answering the goal" in outcome.message, outcome.message
    assert outcome.wait_for_cancel is False
    assert cancelled == [], "no cancel to a server gone"


@pytest.mark.parametrize("accepted_late", [True, False])
def test_a_goal_given_up_unanswered_is_cancelled_by_its_id_and_again_if_accepted_late(monkeypatch, accepted_late):
    """Its acceptance may have been lost, or may come after the deadline: the controller must not run it."""
    from trajectory_msgs.msg import JointTrajectory as JointTrajectoryMsg

    from kinematics_py.ros.transport import controller_clients

    monkeypatch.setattr(controller_clients, "GOAL_RESPONSE_WAIT_S", -1.0)
    monkeypatch.setattr(controller_clients, "joint_trajectory_msg", lambda part, header: JointTrajectoryMsg())
    entry, cancelled, answer = running()[0], [], NeverAnswered()
    entry.client = goal_client(lambda: True, answer, cancelled)
    outcome = clients({})._send([entry], header=None)
    assert "did not answer the goal" in outcome.message, outcome.message
    assert cancelled == ["goal"]
    assert answer.answer(accepted_late) == (["cancel"] if accepted_late else [])


def test_a_rejected_goal_gets_no_cancel(monkeypatch):
    """An answer that is in needs no cancel by id: a rejection none at all."""
    from trajectory_msgs.msg import JointTrajectory as JointTrajectoryMsg

    from kinematics_py.ros.transport import controller_clients

    monkeypatch.setattr(controller_clients, "joint_trajectory_msg", lambda part, header: JointTrajectoryMsg())
    cancels = []
    handle = SimpleNamespace(accepted=False, cancel_goal_async=lambda: cancels.append("cancel"))
    rejected = SimpleNamespace(done=lambda: True, result=lambda: handle,
                               add_done_callback=lambda callback: callback(rejected))
    entry, cancelled = running()[0], []
    entry.client = goal_client(lambda: True, rejected, cancelled)
    outcome = clients({})._send([entry], header=None)
    assert "rejected" in outcome.message, outcome.message
    assert cancelled == [] and cancels == []
