"""kinematics_node shares its threads between clients and forgets the ones that are gone (issue 23), over real
DDS: a client's burst of expensive requests delays another client's by one or two of them, not by all; the
waiting requests of a client that has ended are dropped and its IK searches cancelled; a client's first request,
sent as soon as the service is discovered, is answered."""
from __future__ import annotations

import re
import time

import pytest
from moveit_msgs.msg import MoveItErrorCodes
from node_harness import (
    CALL_TIMEOUT_S,
    KinematicsClient,
    fk_request,
    ik_request,
    module_processes,  # noqa: F401 (fixture)
    serving_node,
    ur5_parameters,
    wait_for,
)
from robots import UR5_UNREACHABLE_POSITION

from kinematics_py.geometry.transforms import make_transform

#: Names per expensive compute_fk request (each takes tens of milliseconds to answer), and how many a busy
#: client sends at once.
BURST_LINKS = 40_000
BURST_REQUESTS = 40
#: Budget of the searches of the client that leaves [s]: longer than the test, however loaded the machine.
LONG_IK_S = 120.0
#: Expensive compute_fk requests the client that leaves has in flight.
LEAVING_BURST = 12
#: How long after sending its burst the other client sends its request [s]: time for the burst to reach the
#: node, which then works on it for seconds.
BURST_UNDER_WAY_S = 0.5
#: Expensive requests of the busy client still waiting when the other client sends its own, at least (below
#: that, the test cannot tell fair turns from first in, first out).
STILL_WAITING = 8


@pytest.fixture(scope="module")
def ur5(module_processes, tmp_path_factory):  # noqa: F811
    parameters = ur5_parameters(max_fk_links=BURST_LINKS, max_ik_timeout=LONG_IK_S)
    with serving_node(module_processes, tmp_path_factory.mktemp("ur5"), parameters, "ur5_clients_node") as node:
        yield node


@pytest.fixture
def other_client(ur5):
    client = KinematicsClient(ur5.namespace, node_name="pytest_other_client")
    try:
        assert client.wait_for_services(CALL_TIMEOUT_S)
        yield client
    finally:
        client.close()


def _stamp(response) -> float:
    """When the node answered (the stamp of its first pose) [s since the epoch]."""
    stamp = response.pose_stamped[0].header.stamp
    return stamp.sec + stamp.nanosec * 1e-9


def test_a_clients_burst_of_expensive_requests_delays_another_clients_by_one_or_two(ur5, other_client):
    busy = ur5.client
    burst = [busy.fk_client.call_async(fk_request(["tool0"] * BURST_LINKS)) for _ in range(BURST_REQUESTS)]
    time.sleep(BURST_UNDER_WAY_S)  # the node is working on the burst (its answers wait in the busy client's DDS)
    sent_at = time.time()  # the node stamps its answers with this machine's clock
    own = other_client.fk_client.call_async(fk_request(["tool0"] * 100))  # expensive too (> CHEAP_COST)
    other_client.spin_until(own, CALL_TIMEOUT_S)
    for future in burst:
        busy.spin_until(future, 120.0)
    assert own.result().error_code.val == MoveItErrorCodes.SUCCESS and len(own.result().pose_stamped) == 100
    assert all(len(future.result().pose_stamped) == BURST_LINKS for future in burst)
    answered_at = sorted(_stamp(future.result()) for future in burst)
    waiting_then = sum(stamp > sent_at for stamp in answered_at)
    assert waiting_then >= STILL_WAITING, "the burst ended too soon to tell (answered faster than expected)"
    answered_meanwhile = sum(sent_at < stamp < _stamp(own.result()) for stamp in answered_at)
    print(f"burst requests answered between the other client's request and its answer: {answered_meanwhile} of "
          f"{waiting_then} still waiting")
    # first in, first out, every request of the burst still waiting would have come first
    assert answered_meanwhile <= 3, f"{answered_meanwhile} of the {waiting_then} waiting burst requests came first"


def _dropped_and_cancelled(output: str) -> tuple[int, int] | None:
    found = re.findall(r"client\(s\) gone: (\d+) waiting request\(s\) dropped, (\d+) search\(es\) cancelled", output)
    return tuple(map(sum, zip(*((int(a), int(b)) for a, b in found)))) if found else None


def test_a_gone_clients_waiting_requests_are_dropped_and_its_searches_cancelled(ur5, other_client):
    leaving = KinematicsClient(ur5.namespace, node_name="pytest_leaving_client")
    try:
        assert leaving.wait_for_services(CALL_TIMEOUT_S)
        unreachable = make_transform(None, UR5_UNREACHABLE_POSITION)
        searches = [leaving.ik_client.call_async(ik_request("ur_manipulator", unreachable, timeout=LONG_IK_S))
                    for _ in range(4)]
        burst = [leaving.fk_client.call_async(fk_request(["tool0"] * BURST_LINKS)) for _ in range(LEAVING_BURST)]
        leaving.spin_until(burst[0], CALL_TIMEOUT_S)
        assert burst[0].done() and not any(future.done() for future in searches)
    finally:
        leaving.close()  # its requests still waiting or searching
    def all_forgotten():  # its IK and FK clients may leave the graph in different checks: counts add up
        counts = _dropped_and_cancelled(ur5.process.output())
        # its 4 searches (never answered: unreachable, 120 s) cancelled, or dropped when the node had not started
        # them yet; its FK burst dropped where still waiting, but the node may answer all of it before it sees the
        # client go (a CI run under load: 3 dropped, 1 cancelled, the burst answered)
        return counts is not None and counts[1] <= 4 and counts[0] + counts[1] >= 4
    wait_for(all_forgotten, CALL_TIMEOUT_S, "the node to drop the gone client's waiting requests and cancel its "
             "searches", ur5.process)
    print("\n".join(line[:160] for line in ur5.process.output().splitlines() if "client(s) gone" in line))
    response = other_client.call(other_client.fk_client, fk_request(["tool0"]), CALL_TIMEOUT_S)
    assert response.error_code.val == MoveItErrorCodes.SUCCESS


def test_a_new_clients_first_request_sent_on_discovery_is_answered(ur5):
    """A service is discovered before its answers can reach a new client (the node's answer writer has not
    matched the client's reader yet); the node sends such an answer again until it is matched."""
    for index in range(10):
        client = KinematicsClient(ur5.namespace, node_name=f"pytest_new_client_{index}")
        try:
            assert client.fk_client.wait_for_service(timeout_sec=CALL_TIMEOUT_S)
            future = client.fk_client.call_async(fk_request(["tool0"]))  # no ping first
            client.spin_until(future, CALL_TIMEOUT_S)
            assert future.done(), f"client {index}: no answer within {CALL_TIMEOUT_S} s"
            assert future.result().error_code.val == MoveItErrorCodes.SUCCESS
        finally:
            client.close()
