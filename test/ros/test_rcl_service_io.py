"""Requests taken and answered through rcl (rcl_service_io) and clients looked up in the graph
(client_presence), over real DDS between two rclpy contexts: each client has an identity of its own, the same
for all its requests; a compute_fk request's names are counted in C; a taken request becomes its Python message
or is discarded; an answer reaches its client; a client that ends is gone from the graph."""
from __future__ import annotations

import contextlib
import threading
import time

import pytest
import rclpy
from moveit_msgs.srv import GetPositionFK
from rclpy.executors import SingleThreadedExecutor

from kinematics_py.ros.transport.client_presence import ClientPresence, service_topics
from kinematics_py.ros.transport.rcl_service_io import Delivery, ServiceIO, ServiceIOError, fk_link_count

WAIT_S = 20.0


class Clients:
    """Client nodes in a context of their own, spun on a thread."""

    def __init__(self):
        self.context = rclpy.Context()
        rclpy.init(context=self.context)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.nodes = []
        threading.Thread(target=self._spin, daemon=True).start()

    def _spin(self):
        with contextlib.suppress(Exception):  # the context shut down
            self.executor.spin()

    def client(self, name: str, service: str):
        node = rclpy.create_node(name, context=self.context)
        self.nodes.append(node)
        self.executor.add_node(node)
        client = node.create_client(GetPositionFK, service)
        assert client.wait_for_service(timeout_sec=WAIT_S)
        return node, client

    def close(self):
        self.executor.shutdown()
        for node in self.nodes:
            node.destroy_node()
        rclpy.shutdown(context=self.context)


@pytest.fixture
def server_and_clients():
    context = rclpy.Context()
    rclpy.init(context=context)
    server = rclpy.create_node("rcl_service_io_server", context=context)
    service = server.create_service(GetPositionFK, "rcl_io_fk", lambda request, response: response)
    clients = Clients()
    try:
        yield server, ServiceIO(service), clients
    finally:
        clients.close()
        server.destroy_node()
        rclpy.shutdown(context=context)


def _take(io: ServiceIO, count: int) -> list:
    taken, deadline = [], time.monotonic() + WAIT_S
    while len(taken) < count and time.monotonic() < deadline:
        request = io.take()
        if request is None:
            time.sleep(0.01)
        else:
            taken.append(request)
    assert len(taken) == count, f"took {len(taken)} of {count} requests"
    return taken


def test_requests_carry_their_clients_identity_and_are_answered(server_and_clients):
    server, io, clients = server_and_clients
    _, first = clients.client("rcl_io_client_a", "rcl_io_fk")
    _, second = clients.client("rcl_io_client_b", "rcl_io_fk")
    futures = [first.call_async(GetPositionFK.Request(fk_link_names=["a"] * 3)),
               first.call_async(GetPositionFK.Request(fk_link_names=["a"] * 1234)),
               second.call_async(GetPositionFK.Request(fk_link_names=["b"]))]
    taken = sorted(_take(io, 3), key=fk_link_count_of)
    assert [fk_link_count(request.c_message) for request in taken] == [1, 3, 1234]  # read in C
    b, a_small, a_large = taken
    assert a_small.client == a_large.client != b.client and len(b.client) == 16
    assert a_large.sequence_number == a_small.sequence_number + 1
    assert a_small.source_timestamp > 0
    message = a_large.message()
    assert message.fk_link_names == ["a"] * 1234 and a_large.c_message is None and a_large.message() is message
    b.discard()
    assert b.c_message is None
    with pytest.raises(ServiceIOError, match="discarded"):
        b.message()
    for request in (a_small, a_large):
        response = GetPositionFK.Response(fk_link_names=[f"{len(request.message().fk_link_names)}"])
        assert io.send(request, response) == (Delivery.SENT, "")
    deadline = time.monotonic() + WAIT_S
    while not (futures[0].done() and futures[1].done()) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert [future.result().fk_link_names for future in futures[:2]] == [["3"], ["1234"]]
    with pytest.raises(ServiceIOError, match="GetPositionFK response"):
        io.send(a_small, GetPositionFK.Request())


def fk_link_count_of(request) -> int:
    return fk_link_count(request.c_message)


def test_a_client_that_ends_is_gone_from_the_graph(server_and_clients):
    server, io, clients = server_and_clients
    presence = ClientPresence(server, ["/rcl_io_fk"])
    staying_node, staying = clients.client("rcl_io_staying", "rcl_io_fk")
    leaving_node, leaving = clients.client("rcl_io_leaving", "rcl_io_fk")
    staying.call_async(GetPositionFK.Request(fk_link_names=["s"]))
    leaving.call_async(GetPositionFK.Request(fk_link_names=["l"]))
    by_name = {request.message().fk_link_names[0]: request.client for request in _take(io, 2)}
    deadline = time.monotonic() + WAIT_S
    while not {by_name["s"], by_name["l"]} <= presence.present() and time.monotonic() < deadline:
        time.sleep(0.05)
    presence.note(by_name["l"])
    assert presence.gone(by_name.values()) == set()  # both listed: seen
    leaving_node.destroy_client(leaving)
    deadline = time.monotonic() + WAIT_S
    gone = set()
    while not gone and time.monotonic() < deadline:
        time.sleep(0.05)
        gone = presence.gone(by_name.values())
    assert gone == {by_name["l"]}
    assert presence.gone({b"never seen client"}) == set()  # an identity never listed is never taken for gone
    assert service_topics("compute_ik") == ("rq/compute_ikRequest", "rr/compute_ikReply")
