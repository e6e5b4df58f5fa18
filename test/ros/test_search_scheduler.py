"""The node's SearchScheduler (earliest deadline first, lending between kernel calls, expiry, close), the search
loop's budget it works through (ik.budget.Budget), and compute_ik's TIMED_OUT answers from it. No DDS here:
threads in this process."""
from __future__ import annotations

import logging
import threading
import time

import pytest
from moveit_msgs.msg import MoveItErrorCodes
from moveit_msgs.srv import GetPositionIK
from robots import UR5_UNREACHABLE_POSITION

from kinematics_py import KinematicsPlugin, Pose
from kinematics_py.collision.checker import CollisionChecker
from kinematics_py.errors import ErrorCode
from kinematics_py.ik.budget import UNBOUNDED, Budget
from kinematics_py.model.srdf import SemanticModel
from kinematics_py.robot_setup import SetupInputs, build_robot_setup
from kinematics_py.robots import bundled_robot_path
from kinematics_py.ros.services.ik_service import compute_ik
from kinematics_py.ros.services.request_context import RequestContext, ServiceTools
from kinematics_py.ros.serving_state import ServiceSettings, ServingState
from kinematics_py.ros.transport.request_transit import TRUSTED_TRANSIT_S, arrival_of, transit_of
from kinematics_py.ros.transport.search_scheduler import (
    LATENESS_ALLOWANCE_S,
    LONG_SEARCH_S,
    MAX_ANSWER_RESERVE_SHARE,
    Admission,
    SearchScheduler,
)

#: Generous bound [s] for a thread to notice a change (a loaded machine).
NOTICE_S = 2.0


def in_thread(target):
    result = {}
    thread = threading.Thread(target=lambda: result.setdefault("value", target()), daemon=True)
    thread.start()
    return thread, result


def waiting_in_thread(scheduler: SearchScheduler, target):
    """``in_thread(target)``, returned once ``target``'s ticket waits behind the one computing."""
    thread, result = in_thread(target)
    while scheduler.load() != (1, 1):
        time.sleep(0.001)
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

        thread, _ = waiting_in_thread(scheduler, urgent)
        assert scheduler.checkpoint(long_search) is False  # lent, then given back once the urgent one ended
        assert served.is_set() and long_search.holding
        thread.join(NOTICE_S)


def test_a_long_search_lends_its_slot_to_a_fresh_one_even_with_a_later_deadline():
    """Searches past LONG_SEARCH_S (e.g. a client's, killed with them in flight) never hold up other requests."""
    scheduler = SearchScheduler(1)
    with scheduler.ticket(time.monotonic() + 30) as long_search:
        scheduler.admit(long_search)
        thread, result = waiting_in_thread(scheduler, lambda: _admitted(scheduler, 60))
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


def test_a_waiting_ticket_expires_at_its_stop_time_so_that_its_answer_is_not_late():
    scheduler = SearchScheduler(1)
    with scheduler.ticket(time.monotonic() + 60, transit=0.04):  # a reserve of 40 ms learned
        pass
    with scheduler.ticket(time.monotonic() + 60) as holder:
        scheduler.admit(holder)
        with scheduler.ticket(time.monotonic() + 0.2) as late:
            assert late.deadline - late.stop_at == pytest.approx(0.04)
            assert scheduler.admit(late) == Admission.EXPIRED
            assert late.stop_at <= time.monotonic() < late.deadline + NOTICE_S


def test_a_checkpoint_ends_the_search_at_its_deadline():
    scheduler = SearchScheduler(2)
    with scheduler.ticket(time.monotonic() + 0.05) as ticket:
        scheduler.admit(ticket)
        assert scheduler.checkpoint(ticket) is False
        time.sleep(0.06)
        assert scheduler.checkpoint(ticket) is True


def test_searches_stop_before_their_deadline_by_the_time_answers_took_to_build():
    scheduler = SearchScheduler(1)
    with scheduler.ticket(time.monotonic() + 0.02) as ticket:
        scheduler.admit(ticket)
        assert ticket.stop_at == ticket.deadline  # nothing measured yet
        time.sleep(0.03)
        assert scheduler.checkpoint(ticket) is True
        time.sleep(0.05)  # building the answer after the search stopped
    assert 0.05 <= scheduler.answer_reserve() < 0.05 + NOTICE_S
    with scheduler.ticket(time.monotonic() + 60) as ticket:
        assert ticket.deadline - ticket.stop_at == scheduler.answer_reserve()
        scheduler.admit(ticket)
        assert scheduler.checkpoint(ticket) is False
    with scheduler.ticket(time.monotonic() + 0.1) as short:  # a search takes LATENESS_ALLOWANCE_S of it at most
        assert short.deadline - short.stop_at == pytest.approx(scheduler.answer_reserve() - LATENESS_ALLOWANCE_S)
    reserve = scheduler.answer_reserve()
    with scheduler.ticket(time.monotonic() + 60) as ticket:  # a search ending within its time is no measure
        scheduler.admit(ticket)
        time.sleep(0.01)
    assert scheduler.answer_reserve() == reserve


def test_searches_also_keep_the_time_requests_took_to_arrive_for_their_answer_to_go_back():
    scheduler = SearchScheduler(1)
    for transit in (0.001, 0.002, 0.004):
        with scheduler.ticket(time.monotonic() + 60, transit=transit):
            pass
    assert scheduler.answer_reserve() == pytest.approx(0.002)  # the 95 % quantile of three, by rank
    with scheduler.ticket(time.monotonic() + 60) as ticket:  # unknown transit: none recorded
        assert ticket.deadline - ticket.stop_at == pytest.approx(0.002)


def test_a_transit_counts_only_from_a_plausible_source_timestamp():
    class Header:
        def __init__(self, ago_s):
            self.source_timestamp = 0 if ago_s is None else time.time_ns() - int(ago_s * 1e9)

    assert 0.002 <= transit_of(Header(0.002)) < 0.002 + TRUSTED_TRANSIT_S
    assert transit_of(Header(None)) == 0.0  # no source timestamp
    assert transit_of(Header(-1.0)) == 0.0  # the client's clock is ahead
    assert transit_of(Header(5.0)) == 0.0  # behind by more than a delivery takes: a clock skew
    assert transit_of(object()) == 0.0
    before = time.monotonic()
    arrival = arrival_of(Header(0.002))
    assert 0.002 <= arrival.transit < 0.002 + TRUSTED_TRANSIT_S and before <= arrival.taken_at <= time.monotonic()


def test_a_search_that_lent_its_slot_ends_at_its_stop_time_if_it_does_not_get_it_back():
    scheduler = SearchScheduler(1)

    def urgent_and_slow():  # comes first (earlier deadline), then keeps the slot past the other's deadline
        with scheduler.ticket(time.monotonic() + 0.2) as ticket:
            scheduler.admit(ticket)
            time.sleep(0.6)

    with scheduler.ticket(time.monotonic() + 0.3) as computing:
        scheduler.admit(computing)
        thread, _ = waiting_in_thread(scheduler, urgent_and_slow)
        assert scheduler.checkpoint(computing) is True
        assert computing.stopped and computing.stop_at <= time.monotonic() < computing.stop_at + NOTICE_S
    thread.join(NOTICE_S)


def test_a_budget_tells_searches_the_callers_deadline():
    assert UNBOUNDED.time_left() == float("inf") and not UNBOUNDED.should_stop()
    assert 9 < Budget(lambda: False, time.monotonic() + 10).time_left() <= 10


def test_close_cancels_waiting_and_computing_tickets_and_later_ones():
    scheduler = SearchScheduler(1)
    with scheduler.ticket(time.monotonic() + 60) as computing:
        scheduler.admit(computing)
        thread, result = waiting_in_thread(scheduler, lambda: _admitted(scheduler, 60))
        scheduler.close()
        thread.join(NOTICE_S)
        assert result["value"] == Admission.CANCELLED
        assert scheduler.checkpoint(computing) is True
    assert _admitted(scheduler, 60) == Admission.CANCELLED


def test_cancel_clients_cancels_the_waiting_and_computing_tickets_of_those_clients_alone():
    scheduler = SearchScheduler(1)
    with scheduler.ticket(time.monotonic() + 60, client="gone") as computing, \
            scheduler.ticket(time.monotonic() + 60, client="staying") as other:
        scheduler.admit(computing)
        thread, result = waiting_in_thread(scheduler, lambda: _admitted(scheduler, 60, "gone"))
        assert scheduler.clients() == {"gone", "staying"}
        assert scheduler.cancel_clients({"gone", "unknown"}, "client gone") == 2
        thread.join(NOTICE_S)
        assert result["value"] == Admission.CANCELLED
        assert scheduler.checkpoint(computing) is True and computing.cancel_reason == "client gone"
        assert not other.cancelled and scheduler.cancel_clients({"gone"}, "again") == 0


def _admitted(scheduler: SearchScheduler, budget: float, client: object = None) -> Admission:
    with scheduler.ticket(time.monotonic() + budget, client=client) as ticket:
        return scheduler.admit(ticket)


@pytest.fixture(scope="module")
def ur5():
    plugin = KinematicsPlugin()
    assert plugin.initialize(bundled_robot_path("ur5").read_text(), "ur_manipulator",
                             robot_description_semantic=bundled_robot_path("ur5", "srdf").read_text())
    return plugin


@pytest.mark.parametrize("avoid_collisions", [False, True])
def test_the_budgets_stop_hook_ends_a_search_between_kernel_calls(ur5, avoid_collisions):
    """A 10 s search of an unreachable pose ends when the budget's hook says so, and its collision-aware
    follow-up search (which explains failures) does not run past it either."""
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
    result = ur5.searchPositionIK(unreachable, [0.0] * 6, timeout=10.0, avoid_collisions=avoid_collisions,
                                  collision_checker=checker, budget=Budget(should_stop))
    elapsed = time.monotonic() - started
    assert result.error_code == ErrorCode.NO_IK_SOLUTION, result.message
    assert elapsed < 0.1 + NOTICE_S
    assert len(calls) > 10
    assert ur5.searchPositionIK(unreachable, [0.0] * 6, timeout=0.05).error_code == ErrorCode.NO_IK_SOLUTION


# ---------------------------------------------------------------- compute_ik on the scheduler (in-process)
@pytest.fixture(scope="module")
def ur5_serving():
    setup = build_robot_setup(SetupInputs(bundled_robot_path("ur5").read_text(),
                                          bundled_robot_path("ur5", "srdf").read_text()))
    return ServingState(ServiceSettings(10.0, "error")).with_setup(setup)


def _compute_ik(serving: ServingState, scheduler: SearchScheduler, timeout: float, arrived: float):
    request = GetPositionIK.Request()
    request.ik_request.group_name = "ur_manipulator"
    position = request.ik_request.pose_stamped.pose.position
    position.x, position.y, position.z = UR5_UNREACHABLE_POSITION  # the search would take its whole timeout
    request.ik_request.pose_stamped.pose.orientation.w = 1.0
    request.ik_request.timeout.nanosec = int(timeout * 1e9)
    tools = ServiceTools(logging.getLogger("test"), None, None, "test", scheduler)
    return compute_ik(request, GetPositionIK.Response(), RequestContext(serving, {}, tools, arrived)).error_code


def test_compute_ik_whose_deadline_passes_before_it_gets_a_slot_is_timed_out(ur5_serving):
    """The one slot is held throughout (a search that never reaches a checkpoint): a 0.2 s request waits for it
    and is answered TIMED_OUT at its deadline, saying its budget counted from its arrival."""
    scheduler = SearchScheduler(1)
    timeout = 0.2
    with scheduler.ticket(time.monotonic() + 60) as holder:
        assert scheduler.admit(holder) == Admission.GRANTED
        arrived = time.monotonic()
        code = _compute_ik(ur5_serving, scheduler, timeout, arrived)
        elapsed = time.monotonic() - arrived
    assert code.val == MoveItErrorCodes.TIMED_OUT, code.message
    assert "counted from when the request was sent" in code.message and "1 other IK request(s)" in code.message
    assert timeout <= elapsed < timeout + NOTICE_S


def test_compute_ik_taken_after_its_deadline_is_timed_out_without_searching(ur5_serving):
    """A request that waited in the node longer than its timeout before its handler ran (a free slot now)."""
    scheduler = SearchScheduler(1)
    started = time.monotonic()
    code = _compute_ik(ur5_serving, scheduler, 0.2, arrived=started - 1.0)
    assert code.val == MoveItErrorCodes.TIMED_OUT, code.message
    assert time.monotonic() - started < NOTICE_S


def test_answers_of_each_kind_are_reserved_for_apart():
    scheduler = SearchScheduler(1)
    with scheduler.ticket(time.monotonic() + 0.01, kind="avoid_collisions") as ticket:
        scheduler.admit(ticket)
        time.sleep(0.02)
        assert scheduler.checkpoint(ticket) is True
        time.sleep(0.03)  # a collision-aware answer explaining its failure
    assert 0.03 <= scheduler.answer_reserve("avoid_collisions") < 0.03 + NOTICE_S
    assert scheduler.answer_reserve() == 0.0  # plain requests' answers: nothing measured
    with scheduler.ticket(time.monotonic() + 60) as plain:
        assert plain.stop_at == plain.deadline
    with scheduler.ticket(time.monotonic() + 60, kind="avoid_collisions") as avoiding:
        assert avoiding.deadline - avoiding.stop_at == scheduler.answer_reserve("avoid_collisions")


def test_a_short_budget_keeps_searching_for_a_share_of_its_reserve():
    scheduler = SearchScheduler(1)
    reserve = LATENESS_ALLOWANCE_S + 0.001
    with scheduler.ticket(time.monotonic() + 60, transit=reserve):  # a reserve learned
        pass
    budget = (reserve - LATENESS_ALLOWANCE_S / 2) / MAX_ANSWER_RESERVE_SHARE  # its share: more than the allowance
    before = time.monotonic()
    deadline = before + budget
    with scheduler.ticket(deadline) as ticket:
        after = time.monotonic()
        # the budget the scheduler saw lies between these two (a loaded machine may pass time in between)
        kept = [min(reserve, max(MAX_ANSWER_RESERVE_SHARE * (deadline - moment), reserve - LATENESS_ALLOWANCE_S))
                for moment in (after, before)]
        assert kept[0] - 1e-9 <= ticket.deadline - ticket.stop_at <= kept[1] + 1e-9
        assert kept[1] == pytest.approx(MAX_ANSWER_RESERVE_SHARE * budget)  # the share, not the allowance
    with scheduler.ticket(time.monotonic() + 0.001) as tiny:  # the search may make its answer that much late
        assert tiny.deadline - tiny.stop_at == pytest.approx(reserve - LATENESS_ALLOWANCE_S)
