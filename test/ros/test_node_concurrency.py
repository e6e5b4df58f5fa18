"""kinematics_node serves requests concurrently: a slow IK search does not hold up FK, and several client
processes at once all get correct answers."""
from __future__ import annotations

import json
import time

import numpy as np
import pytest
from moveit_msgs.msg import MoveItErrorCodes
from node_harness import (
    CALL_TIMEOUT_S,
    PROCESSES,
    KinematicsClient,
    fk_request,
    ik_request,
    module_processes,  # noqa: F401 (fixture)
    serving_node,
    ur5_parameters,
)
from robots import UR5_UNREACHABLE_POSITION

from kinematics_py.geometry.transforms import make_transform
from kinematics_py.parameters import NODE_SPECS_BY_NAME

CLIENTS = 8
REQUESTS_PER_CLIENT = 100
#: Budget of the searches FK is called beside [s]: time for many FK answers however loaded the machine.
SLOW_IK_S = 6.0
#: FK answers that must come while the searches run (the node answers hundreds a second; bench/soak.py measures
#: FK latency under IK load).
FK_DURING_IK = 10
CLIENT_RUN_TIMEOUT_S = 180.0


@pytest.fixture(scope="module")
def ur5(module_processes, tmp_path_factory):  # noqa: F811
    with serving_node(module_processes, tmp_path_factory.mktemp("ur5"), ur5_parameters(),
                      "ur5_concurrency_node") as node:
        yield node


def test_slow_ik_searches_do_not_block_fk(ur5):
    """FK is answered while two IK searches run (a node serving one request at a time would answer it after them)."""
    unreachable = ik_request("ur_manipulator", make_transform(None, UR5_UNREACHABLE_POSITION), timeout=SLOW_IK_S)
    slow = [ur5.client.ik_client.call_async(unreachable) for _ in range(2)]
    fk_while_searching = 0
    while fk_while_searching < FK_DURING_IK and not any(future.done() for future in slow):
        response = ur5.fk(fk_request(["tool0"]))
        assert response.error_code.val == MoveItErrorCodes.SUCCESS
        fk_while_searching += not any(future.done() for future in slow)
    assert fk_while_searching == FK_DURING_IK, f"only {fk_while_searching} FK answers before an IK answer"
    ur5.client.spin_until(slow[0], SLOW_IK_S + 30.0)
    ur5.client.spin_until(slow[1], SLOW_IK_S + 30.0)
    assert all(future.result().error_code.val == MoveItErrorCodes.NO_IK_SOLUTION for future in slow)


def test_concurrent_clients_all_get_correct_answers(ur5, python_processes):
    clients = [python_processes.start(PROCESSES / "ik_load_client.py", "--namespace", ur5.namespace,
                                      "--requests", str(REQUESTS_PER_CLIENT), "--seed", str(index),
                                      name=f"load_client_{index}") for index in range(CLIENTS)]
    deadline = time.monotonic() + CLIENT_RUN_TIMEOUT_S
    for client in clients:
        client.finish(max(1.0, deadline - time.monotonic()))
    summaries = []
    for client in clients:
        assert client.popen.returncode == 0, client.output()
        summaries.append(json.loads(client.stdout()))
    for summary in summaries:
        assert summary["failures"] == [], summary
        assert summary["ik_ok"] == summary["fk_ok"] == REQUESTS_PER_CLIENT
    assert sum(s["ik_ok"] for s in summaries) == CLIENTS * REQUESTS_PER_CLIENT
    print(f"IK p50 per client under load [ms]: {np.round([s['ik_p50_ms'] for s in summaries], 2).tolist()}")
    ur5.assert_alive()


#: compute_fk requests of 1000 names each (max_fk_links by default), sent at once before a one-link request.
HEAVY_FK_REQUESTS = 60
#: Names of the compute_fk request that keeps the node's expensive lane busy meanwhile: the node works on it for
#: about a second, the client sends those requests in a tenth of that or less.
HOLDING_FK_LINKS = 200_000
DEFAULT_MAX_FK_LINKS = NODE_SPECS_BY_NAME["max_fk_links"].default


def _stamp(response) -> float:
    """When the node computed the answer (the stamp of its first pose) [s since the epoch]."""
    stamp = response.pose_stamped[0].header.stamp
    return stamp.sec + stamp.nanosec * 1e-9


def test_a_small_fk_request_passes_a_burst_of_large_ones(ur5):
    """The node runs cheap requests before expensive ones, and expensive ones one at a time (request_queue): a
    one-link FK sent after a burst of 1000-link FK requests is answered before any of them while an expensive
    request runs (first in, first out, it would be answered after nearly all of them).

    The node answers large requests as they arrive: a burst sent to an idle node is partly answered before its
    last request arrives, as much as the client is slower than the node. So the burst is sent while the node works
    on a request for HOLDING_FK_LINKS links (max_fk_links raised meanwhile) from another client: its cost read as it
    is taken (the names counted in C), it starts on the expensive lane at once, and the answer of a one-link
    request that client sends after it (taken after it) tells that it runs. The node works on it far longer than
    this client takes to send the burst and the small request (printed, with the node's stamps). The other client
    is closed without taking that request's answer (hundreds of thousands of poses: seconds to build in Python)."""
    holder = KinematicsClient(ur5.namespace, node_name="pytest_holding_client")
    try:
        assert holder.wait_for_services(CALL_TIMEOUT_S)
        assert all(result.successful for result in ur5.set_parameters(max_fk_links=HOLDING_FK_LINKS))
        holder.fk_client.call_async(fk_request(["tool0"] * HOLDING_FK_LINKS))
        started = holder.call(holder.fk_client, fk_request(["tool0"]), CALL_TIMEOUT_S)  # the holding one runs
        sent_at = time.monotonic()
        heavy = [ur5.client.fk_client.call_async(fk_request(["tool0"] * 1000)) for _ in range(HEAVY_FK_REQUESTS)]
        small = ur5.client.fk_client.call_async(fk_request(["tool0"]))
        sent_s = time.monotonic() - sent_at
        ur5.client.spin_until(small, 60.0)
        answered_before = sum(future.done() for future in heavy)
        for future in heavy:
            ur5.client.spin_until(future, 60.0)
    finally:
        holder.close()
        assert all(result.successful for result in ur5.set_parameters(max_fk_links=DEFAULT_MAX_FK_LINKS))
    assert started.error_code.val == small.result().error_code.val == MoveItErrorCodes.SUCCESS
    assert all(len(future.result().pose_stamped) == 1000 for future in heavy)
    # the node's stamps (when it computed each answer): the holding request ran from before the one-link request
    # of its client until the burst's first
    held_s = min(_stamp(future.result()) for future in heavy) - _stamp(started)
    small_s = _stamp(small.result()) - _stamp(started)
    print(f"the {HOLDING_FK_LINKS}-link request held the expensive lane {held_s:.3f} s after its client's one-link "
          f"request, the small request was answered {small_s:.3f} s into that; the client sent the burst and the "
          f"small request in {sent_s:.3f} s")
    # first in, first out on the pool's threads, the small request would start after all but the last few
    assert answered_before == 0, (f"{answered_before} large requests answered first (the lane held {held_s:.3f} s, "
                                  f"the small request answered {small_s:.3f} s into that)")


def test_a_fk_request_for_more_links_than_max_fk_links_is_refused_with_the_reason(ur5):
    response = ur5.fk(fk_request(["tool0"] * 1001))
    assert response.error_code.val == MoveItErrorCodes.FAILURE
    assert "max_fk_links=1000" in response.error_code.message and not response.pose_stamped
