"""``transport.actions._Stop``: why an action goal should stop, from its cancel request and the action's clients in
the node's ROS graph (a stand-in node whose subscriber count the test sets, and a clock it moves)."""
import pytest

pytest.importorskip("rclpy")

from kinematics_py.ros.transport.actions import CLIENT_DISCOVERY_S, CLIENTS_CHECK_S, _Stop  # noqa: E402

pytestmark = pytest.mark.ros


class Graph:
    """count_subscribers as a node answers it: ``subscribers`` on the action's feedback topic."""

    def __init__(self):
        self.subscribers, self.asked = 0, []

    def count_subscribers(self, topic: str) -> int:
        self.asked.append(topic)
        return self.subscribers


class Goal:
    is_cancel_requested = False


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def stop_of(graph: Graph, clock: Clock, goal=None) -> _Stop:
    return _Stop(graph, "/ns/execute_trajectory", goal or Goal(), clock)


def test_a_client_not_yet_discovered_is_not_gone():
    """No subscriber yet when the goal begins (its client's feedback subscription not discovered, the client
    before it already left the graph): the goal runs on, then its client appears."""
    graph, clock = Graph(), Clock()
    stop = stop_of(graph, clock)
    while clock.now < 100.0 + CLIENT_DISCOVERY_S - CLIENTS_CHECK_S:
        assert stop() == ""
        clock.advance(CLIENTS_CHECK_S)
    graph.subscribers = 1
    clock.advance(CLIENTS_CHECK_S)
    assert stop() == ""
    assert graph.asked and set(graph.asked) == {"/ns/execute_trajectory/_action/feedback"}


def test_a_client_seen_then_gone_stops_the_goal_at_the_next_check():
    graph, clock = Graph(), Clock()
    graph.subscribers = 1
    stop = stop_of(graph, clock)
    assert stop() == ""
    graph.subscribers = 0
    assert stop() == ""  # within CLIENTS_CHECK_S of the last look: the graph is not asked
    clock.advance(CLIENTS_CHECK_S)
    reason = stop()
    assert "its client is gone" in reason and "/ns/execute_trajectory" in reason, reason


def test_a_client_never_seen_is_gone_after_the_discovery_time():
    graph, clock = Graph(), Clock()
    stop = stop_of(graph, clock)
    assert stop() == ""
    clock.advance(CLIENT_DISCOVERY_S)
    assert "its client is gone" in stop()


def test_a_cancel_request_stops_the_goal_whatever_the_graph():
    graph, clock, goal = Graph(), Clock(), Goal()
    graph.subscribers = 1
    goal.is_cancel_requested = True
    assert stop_of(graph, clock, goal)() == "cancelled by its client"
