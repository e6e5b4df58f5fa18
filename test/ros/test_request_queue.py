"""FairQueue: cheap requests run before expensive ones, which run one at a time; the clients take turns, each
client's requests in arrival order; a gone client's waiting requests are discarded, every other request runs;
request_cost reads the size of a request; Resender sends again the answers rmw did not send."""
from __future__ import annotations

import threading
import time

import pytest
from moveit_msgs.msg import AttachedCollisionObject, CollisionObject
from moveit_msgs.srv import ApplyPlanningScene, GetPositionFK, GetStateValidity, QueryPlannerInterfaces

from kinematics_py.ros.transport import rcl_service_io
from kinematics_py.ros.transport.executor import DaemonPool
from kinematics_py.ros.transport.rcl_service_io import Delivery, Resender, ServiceIO
from kinematics_py.ros.transport.request_queue import CHEAP_COST, FairQueue, QueuedRequest, request_cost

WAIT_S = 30.0


class Recorder:
    """Requests that record when they start and, when blocking, wait for ``release``."""

    def __init__(self):
        self.release, self.order, self.lock = threading.Event(), [], threading.Lock()
        self.done: dict[str, threading.Event] = {}

    def request(self, client: str, name: str, *, cost: int | None = 1, blocking: bool = False,
                measured: int = 1) -> QueuedRequest:
        done = self.done[name] = threading.Event()

        def run():
            with self.lock:
                self.order.append(name)
            if blocking:
                self.release.wait(WAIT_S)
            done.set()
        return QueuedRequest(client, run, cost=cost, measure=lambda: measured)

    def wait(self, *names: str) -> bool:
        return all(self.done[name].wait(WAIT_S) for name in names)


def _queue(threads: int) -> tuple[FairQueue, DaemonPool]:
    pool = DaemonPool(threads, "test_queue", lambda error: None)
    return FairQueue(threads, pool.submit), pool


def test_cheap_requests_pass_expensive_ones_which_run_one_at_a_time():
    queue, pool = _queue(3)
    record = Recorder()
    for name in ("big 1", "big 2", "big 3"):
        queue.submit(record.request("a", name, cost=CHEAP_COST + 1, blocking=True))
    queue.submit(record.request("b", "small 1"))
    queue.submit(record.request("b", "small 2"))
    assert record.wait("small 1", "small 2")  # while big 1 still runs
    assert "big 1" in record.order and "big 2" not in record.order  # one expensive request at a time
    record.release.set()
    assert record.wait("big 1", "big 2", "big 3")
    assert [name for name in record.order if name.startswith("big")] == ["big 1", "big 2", "big 3"]
    assert pool.wait_idle(WAIT_S) and queue.waiting == 0


def test_clients_take_turns_each_clients_requests_in_arrival_order():
    queue, pool = _queue(1)
    record = Recorder()
    queue.submit(record.request("busy", "busy 0", blocking=True))  # holds the only thread
    for index in range(1, 6):
        queue.submit(record.request("busy", f"busy {index}"))
    queue.submit(record.request("other", "other 1"))
    queue.submit(record.request("third", "third 1"))
    queue.submit(record.request("other", "other 2"))
    record.release.set()
    assert record.wait(*record.done) and pool.wait_idle(WAIT_S)
    assert record.order == ["busy 0", "busy 1", "other 1", "third 1", "busy 2", "other 2", "busy 3", "busy 4",
                            "busy 5"]


def test_a_gone_clients_waiting_requests_are_discarded_and_the_others_run():
    queue, pool = _queue(1)
    record = Recorder()
    discarded = []
    queue.submit(record.request("gone", "gone 0", blocking=True))  # already running: it ends as it would
    for index in range(1, 4):
        request = record.request("gone", f"gone {index}", cost=None if index == 3 else 1)
        request.discard = lambda index=index: discarded.append(index)
        queue.submit(request)
    queue.submit(record.request("alive", "alive 1"))
    assert queue.clients_waiting() == {"gone", "alive"}
    assert queue.drop_clients({"gone", "unknown"}) == 3
    assert sorted(discarded) == [1, 2, 3] and queue.clients_waiting() == {"alive"}
    record.release.set()
    assert record.wait("gone 0", "alive 1") and pool.wait_idle(WAIT_S)
    assert record.order == ["gone 0", "alive 1"] and queue.waiting == 0


def test_a_request_found_expensive_once_read_waits_for_the_running_expensive_one():
    queue, pool = _queue(3)
    record = Recorder()
    queue.submit(record.request("a", "big", cost=CHEAP_COST + 1, blocking=True))
    queue.submit(record.request("b", "read big", cost=None, measured=CHEAP_COST + 1))
    queue.submit(record.request("c", "read small", cost=None, measured=1))
    assert record.wait("read small")
    assert "read big" not in record.order  # back in line until the expensive request running ends
    record.release.set()
    assert record.wait("big", "read big") and pool.wait_idle(WAIT_S)
    assert record.order.index("read big") > record.order.index("big")


def test_request_cost_counts_what_a_request_asks_for():
    assert request_cost(GetPositionFK.Request(fk_link_names=["tool0"] * 500)) == 501
    scene = ApplyPlanningScene.Request()
    scene.scene.world.collision_objects = [CollisionObject(id=f"box_{i}") for i in range(100)]
    scene.scene.robot_state.attached_collision_objects = [AttachedCollisionObject()] * 3
    assert request_cost(scene) == 104
    validity = GetStateValidity.Request()
    validity.robot_state.attached_collision_objects = [AttachedCollisionObject()] * 2
    assert request_cost(validity) == 3
    assert request_cost(QueryPlannerInterfaces.Request()) == 1


class ScriptedService:
    """A ServiceIO stand-in whose sends go as ``outcomes`` say, per request (then SENT)."""

    name = "/scripted"
    describe = staticmethod(ServiceIO.describe)

    def __init__(self, outcomes: dict):
        self.outcomes = {name: list(steps) for name, steps in outcomes.items()}
        self.sent, self.tries = [], []

    def send(self, taken, response):
        self.tries.append(response)
        steps = self.outcomes.get(response, [])
        delivery = steps.pop(0) if steps else Delivery.SENT
        if delivery is Delivery.SENT:
            self.sent.append(response)
        return delivery, "" if delivery is Delivery.SENT else "scripted"


class Logged:
    def __init__(self):
        self.errors, self.warnings, self.debug_messages = [], [], []

    def debug(self, text, **_throttle):
        self.debug_messages.append(text)

    def error(self, text):
        self.errors.append(text)

    def warning(self, text, **_throttle):
        self.warnings.append(text)


def _taken(number: int):
    return type("Taken", (), {"sequence_number": number, "client": b"c" * 16})()


@pytest.mark.parametrize("late_after_s", [0.0, 3600.0], ids=["late", "in-time"])
def test_answers_rmw_did_not_send_are_sent_again_until_they_are(monkeypatch, late_after_s):
    monkeypatch.setattr(rcl_service_io, "LATE_ANSWER_S", late_after_s)
    io = ScriptedService({"a": [Delivery.NOT_WRITTEN, Delivery.NOT_WRITTEN],
                          "b": [Delivery.CLIENT_NOT_MATCHED], "c": []})
    logged = Logged()
    resender = Resender(logged)
    try:
        for number, name in enumerate("abc"):
            resender.send(io, _taken(number), name)
        deadline = time.monotonic() + WAIT_S
        while len(io.sent) < 3 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert sorted(io.sent) == ["a", "b", "c"] and resender.retried == 2 and resender.undelivered == 0
        assert [io.tries.count(name) for name in "abc"] == [3, 2, 1]
        # A retry is ordinary (debug); only an answer later than LATE_ANSWER_S is a warning.
        assert logged.debug_messages and logged.errors == []
        if late_after_s:
            assert resender.late == 0 and logged.warnings == []
        else:
            assert resender.late == 2 and all("late" in text for text in logged.warnings)
    finally:
        resender.close()


def test_an_answer_never_sent_is_given_up_after_its_time_and_logged(monkeypatch):
    monkeypatch.setattr(rcl_service_io, "RESEND_FOR_S", 0.2)
    io = ScriptedService({"stuck": [Delivery.CLIENT_NOT_MATCHED] * 10_000})
    logged = Logged()
    resender = Resender(logged)
    try:
        resender.send(io, _taken(7), "stuck")
        deadline = time.monotonic() + WAIT_S
        while resender.undelivered == 0 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert resender.undelivered == 1 and resender.waiting == 0 and io.sent == []
        assert "request 7" in logged.errors[0] and "not delivered" in logged.errors[0]
    finally:
        resender.close()


def test_a_small_request_runs_on_the_calling_thread_only_when_the_queue_is_idle():
    queue, pool = _queue(2)
    record = Recorder()
    threads = []

    def request(name: str, cost: int | None, blocking: bool = False) -> QueuedRequest:
        queued = record.request("a", name, cost=cost, blocking=blocking)
        run = queued.run
        queued.run = lambda: (threads.append((name, threading.current_thread())), run())
        return queued
    assert queue.run_here_if_idle(request("here", 1), 8)
    assert threads == [("here", threading.current_thread())]
    assert not queue.run_here_if_idle(request("too costly", 9), 8)
    assert not queue.run_here_if_idle(request("unknown cost", None), 8)
    queue.submit(request("busy", 1, blocking=True))
    assert not queue.run_here_if_idle(request("behind busy", 1), 8)  # the queue is not idle
    record.release.set()
    assert record.wait("here", "busy") and pool.wait_idle(WAIT_S)
    assert "too costly" not in record.order and "behind busy" not in record.order  # left to the caller
