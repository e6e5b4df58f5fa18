"""The node's SearchScheduler (earliest deadline first, lending between kernel calls, expiry, close) and the search
loop's stop hook it works through (ik.search.stop_hook). No DDS here: threads in this process."""
from __future__ import annotations

import threading
import time

import pytest
from robots import UR5_UNREACHABLE_POSITION

from kinematics_py import KinematicsPlugin, Pose
from kinematics_py.collision.checker import CollisionChecker
from kinematics_py.errors import ErrorCode
from kinematics_py.ik.search import stop_hook
from kinematics_py.model.srdf import SemanticModel
from kinematics_py.robots import bundled_robot_path
from kinematics_py.ros.search_scheduler import LONG_SEARCH_S, Admission, SearchScheduler

#: Generous bound [s] for a thread to notice a change (a loaded machine).
NOTICE_S = 2.0


def in_thread(target):
    result = {}
    thread = threading.Thread(target=lambda: result.setdefault("value", target()), daemon=True)
    thread.start()
    return thread, result


def test_slots_go_to_the_earliest_deadline():
    scheduler = SearchScheduler(1)
    now = time.monotonic()
    order = []
    with scheduler.ticket(now + 60) as holder:
        assert scheduler.admit(holder) == Admission.GRANTED
        threads = []
        for deadline in (now + 30, now + 10, now + 20):
            def wait(deadline=deadline):
                with scheduler.ticket(deadline) as ticket:
                    assert scheduler.admit(ticket) == Admission.GRANTED
                    order.append(deadline - now)
            threads.append(in_thread(wait)[0])
        while scheduler.load() != (1, 3):
            time.sleep(0.01)
    for thread in threads:
        thread.join(NOTICE_S)
    assert order == [10, 20, 30]


def test_a_checkpoint_lends_the_slot_to_an_earlier_deadline_and_gets_it_back():
    scheduler = SearchScheduler(1)
    now = time.monotonic()
    with scheduler.ticket(now + 60) as long_search:
        scheduler.admit(long_search)
        assert scheduler.checkpoint(long_search) is False  # nobody waits: keeps computing
        served = threading.Event()

        def urgent():
            with scheduler.ticket(time.monotonic() + 30) as ticket:
                assert scheduler.admit(ticket) == Admission.GRANTED
                served.set()

        thread, _ = in_thread(urgent)
        while scheduler.load() != (1, 1):
            time.sleep(0.01)
        assert scheduler.checkpoint(long_search) is False  # lent, then given back once the urgent one ended
        assert served.is_set() and long_search.holding
        thread.join(NOTICE_S)


def test_a_long_search_lends_its_slot_to_a_fresh_one_even_with_a_later_deadline():
    """Searches past LONG_SEARCH_S (e.g. a client's, killed with them in flight) never hold up other requests."""
    scheduler = SearchScheduler(1)
    with scheduler.ticket(time.monotonic() + 30) as long_search:
        scheduler.admit(long_search)
        thread, result = in_thread(lambda: _admitted(scheduler, 60))
        while scheduler.load() != (1, 1):
            time.sleep(0.01)
        assert scheduler.checkpoint(long_search) is False and thread.is_alive()  # still short: keeps the slot
        time.sleep(LONG_SEARCH_S)
        assert scheduler.checkpoint(long_search) is False  # lent to the fresh one, given back when it ended
        thread.join(NOTICE_S)
        assert result["value"] == Admission.GRANTED


def test_a_ticket_whose_deadline_passes_while_waiting_expires_at_its_deadline():
    scheduler = SearchScheduler(1)
    with scheduler.ticket(time.monotonic() + 60) as holder:
        scheduler.admit(holder)
        with scheduler.ticket(time.monotonic() + 0.2) as late:
            started = time.monotonic()
            assert scheduler.admit(late) == Admission.EXPIRED
            assert 0.15 <= time.monotonic() - started < 0.2 + NOTICE_S
        assert scheduler.checkpoint(holder) is False


def test_a_checkpoint_ends_the_search_at_its_deadline():
    scheduler = SearchScheduler(2)
    with scheduler.ticket(time.monotonic() + 0.05) as ticket:
        scheduler.admit(ticket)
        assert scheduler.checkpoint(ticket) is False
        time.sleep(0.06)
        assert scheduler.checkpoint(ticket) is True


def test_close_cancels_waiting_and_computing_tickets_and_later_ones():
    scheduler = SearchScheduler(1)
    with scheduler.ticket(time.monotonic() + 60) as computing:
        scheduler.admit(computing)
        thread, result = in_thread(lambda: _admitted(scheduler, 60))
        while scheduler.load() != (1, 1):
            time.sleep(0.01)
        scheduler.close()
        thread.join(NOTICE_S)
        assert result["value"] == Admission.CANCELLED
        assert scheduler.checkpoint(computing) is True
    assert _admitted(scheduler, 60) == Admission.CANCELLED


def _admitted(scheduler: SearchScheduler, budget: float) -> Admission:
    with scheduler.ticket(time.monotonic() + budget) as ticket:
        return scheduler.admit(ticket)


@pytest.fixture(scope="module")
def ur5():
    plugin = KinematicsPlugin()
    assert plugin.initialize(bundled_robot_path("ur5").read_text(), "ur_manipulator",
                             robot_description_semantic=bundled_robot_path("ur5", "srdf").read_text())
    return plugin


@pytest.mark.parametrize("avoid_collisions", [False, True])
def test_the_stop_hook_ends_searches_of_its_thread_between_kernel_calls(ur5, avoid_collisions):
    """A 10 s search of an unreachable pose ends when the hook says so, and its collision-aware follow-up search
    (which explains failures) does not run past it either."""
    model = ur5.robot_model
    checker = CollisionChecker(model, SemanticModel.from_srdf_string(bundled_robot_path("ur5", "srdf").read_text(),
                                                                     model)) if avoid_collisions else None
    unreachable = Pose(UR5_UNREACHABLE_POSITION, (0.0, 0.0, 0.0, 1.0))
    stop_at = time.monotonic() + 0.1
    calls = []

    def should_stop():
        calls.append(time.monotonic())
        return calls[-1] >= stop_at

    started = time.monotonic()
    with stop_hook(should_stop):
        result = ur5.searchPositionIK(unreachable, [0.0] * 6, timeout=10.0, avoid_collisions=avoid_collisions,
                                      collision_checker=checker)
    elapsed = time.monotonic() - started
    assert result.error_code == ErrorCode.NO_IK_SOLUTION, result.message
    assert elapsed < 0.1 + NOTICE_S
    assert len(calls) > 10
    assert ur5.searchPositionIK(unreachable, [0.0] * 6, timeout=0.05).error_code == ErrorCode.NO_IK_SOLUTION
