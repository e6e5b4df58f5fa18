"""CPU slots for IK searches, given by earliest deadline; a search lends its slot to a more urgent one.

Every IK request holds a ``SearchTicket`` with its deadline (arrival + timeout, ``time.monotonic()``). At most
``slots`` tickets compute at once; the others wait, by priority: first the searches that have computed less
than ``LONG_SEARCH_S`` (most IK requests end well within it), then the long ones (a pose out of reach searches
until its deadline), each kind earliest deadline first. So a client's requests are never held up by long
searches, not even by those of a client that is gone (killed with its searches in flight). A computing search
calls ``checkpoint`` between two compiled calls (its ``ik.budget.Budget``): when a waiting ticket comes first,
the slot goes to it and the search waits for its turn again. ``checkpoint`` returns True (the search ends) once
the ticket's stop time has passed or the ticket is cancelled, so no answer waits past its deadline for CPU time,
and a ticket whose deadline passes while it waits is told so at once.

A search stops before its deadline by the answer reserve: how long the answers of searches stopped by their
stop time took to be ready after it (the failure diagnosis, the answer's message) plus how long requests took
to reach the node (``request_transit``: the answer takes about as long back to the client), a high quantile of
the last ones of each (answer times apart for each kind of request: collision-aware ones take longer). A
search may run into its reserve, so that short budgets keep searching on a quiet machine (where the reserve is
about a millisecond), while the reserve left is at least a share of its budget, and by
``LATENESS_ALLOWANCE_S`` at most: so an answer reaches its client by the deadline, or that little after it.
When the reserve is longer than the time left (a saturated machine), the search ends at once: TIMED_OUT, on
time, rather than a late answer (measured under the soak's mixed load: docs/benchmarks.md).

``close`` cancels every ticket (the node is stopping): waiting ones are told at once, computing ones end at
their next checkpoint. ROS-free except for being used by ``ros/``.
"""
from __future__ import annotations

import heapq
import itertools
import math
import threading
import time
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from enum import Enum

from ...parameters import ParameterError

#: Slot time [s] after which a search counts as long: it then waits behind every shorter one.
LONG_SEARCH_S = 0.1
#: Answer and transit times remembered, and the quantile of each the answer reserve covers.
ANSWER_TIMES_KEPT = 64
ANSWER_RESERVE_QUANTILE = 0.95
#: A search may run into its answer reserve while the reserve left is at least this share of its budget
#: (deadline - arrival at the scheduler), and by LATENESS_ALLOWANCE_S [s] at most.
MAX_ANSWER_RESERVE_SHARE = 0.25
LATENESS_ALLOWANCE_S = 0.001
#: Why the tickets of a closed scheduler are cancelled.
SHUTTING_DOWN = "kinematics_node is shutting down"


class RecentQuantile:
    """The ``ANSWER_RESERVE_QUANTILE`` of the last ``ANSWER_TIMES_KEPT`` durations recorded [s] (0 before any)."""

    def __init__(self):
        self._recent: deque[float] = deque(maxlen=ANSWER_TIMES_KEPT)
        self.value = 0.0

    def record(self, seconds: float) -> None:
        self._recent.append(max(seconds, 0.0))
        ranked = sorted(self._recent)
        self.value = ranked[int(ANSWER_RESERVE_QUANTILE * (len(ranked) - 1))]


class Admission(Enum):
    """How a ticket's wait for a slot ended."""

    GRANTED = "granted"
    EXPIRED = "expired"  # its deadline passed while it waited
    CANCELLED = "cancelled"  # the scheduler was closed


@dataclass(eq=False)
class SearchTicket:
    """One request's place in the scheduler."""

    #: ``time.monotonic()`` by which the answer is due [s].
    deadline: float
    #: ``time.monotonic()`` at which its search ends [s]: the deadline less the answer reserve.
    stop_at: float = math.inf
    #: Whether ``checkpoint`` ended the search because its stop time had passed.
    stopped: bool = False
    #: Tickets ahead of this one (computing or waiting) when it arrived.
    ahead: int = 0
    #: Who asked (``rcl_service_io.TakenRequest.client``; None: unknown).
    client: object = None
    cancelled: bool = False
    #: Why it was cancelled (SHUTTING_DOWN, or ``cancel_clients``'s reason).
    cancel_reason: str = SHUTTING_DOWN
    holding: bool = False
    waiting: bool = False
    #: Slot time [s] used before the current slot, and when the current one was given (``time.monotonic()``).
    computed: float = 0.0
    granted_at: float = 0.0
    wake: threading.Condition | None = field(default=None, repr=False)

    def remaining(self) -> float:
        """Time left until the deadline [s] (negative once it has passed)."""
        return self.deadline - time.monotonic()

    def priority(self, now: float) -> tuple[bool, float]:
        """Smaller first: short searches before long ones, then the earliest deadline."""
        computed = self.computed + (now - self.granted_at if self.holding else 0.0)
        return computed >= LONG_SEARCH_S, self.deadline


class SearchScheduler:
    """Gives ``slots`` CPU slots to IK searches by earliest deadline (see the module docstring)."""

    def __init__(self, slots: int):
        if slots < 1:
            raise ParameterError(f"slots must be >= 1; got {slots}")
        self.slots = slots
        self._lock = threading.Lock()
        self._free = slots
        self._waiting: list[tuple[float, int, SearchTicket]] = []  # heap of (deadline, arrival order, ticket)
        self._order = itertools.count()
        self._tickets: set[SearchTicket] = set()
        self._closed = False
        self._answer_times: dict[str, RecentQuantile] = {}  # by kind of answer
        self._transit_times = RecentQuantile()

    @property
    def closed(self) -> bool:
        return self._closed

    def answer_reserve(self, kind: str = "") -> float:
        """Time [s] a search whose answer is of ``kind`` stops before its deadline, to build its answer and
        send it (see the module docstring)."""
        answer_times = self._answer_times.get(kind)
        return (0.0 if answer_times is None else answer_times.value) + self._transit_times.value

    def load(self) -> tuple[int, int]:
        """(computing, waiting) tickets."""
        with self._lock:
            return self.slots - self._free, sum(1 for *_, ticket in self._waiting if ticket.waiting)

    @contextmanager
    def ticket(self, deadline: float, transit: float = 0.0, kind: str = "",
               client: object = None) -> Iterator[SearchTicket]:
        """A ticket for one request, released (its slot given on) when the block ends. ``transit`` [s]: how long
        the request took to reach the node, when known (0: unknown). ``kind``: answers whose building takes
        times of their own (e.g. collision-aware searches, which explain a failure), reserved for apart.
        ``client``: who asked (``cancel_clients``)."""
        ticket = SearchTicket(deadline, client=client, wake=threading.Condition(self._lock))
        with self._lock:
            if transit > 0.0:
                self._transit_times.record(transit)
            budget = max(deadline - time.monotonic(), 0.0)
            reserve = self.answer_reserve(kind)
            kept = min(reserve, max(MAX_ANSWER_RESERVE_SHARE * budget, reserve - LATENESS_ALLOWANCE_S))
            ticket.stop_at = deadline - kept
            ticket.ahead = len(self._tickets)
            ticket.cancelled = self._closed
            self._tickets.add(ticket)
        try:
            yield ticket
        finally:
            with self._lock:
                if ticket.stopped:
                    self._answer_times.setdefault(kind, RecentQuantile()).record(time.monotonic() - ticket.stop_at)
                self._tickets.discard(ticket)
                ticket.waiting = False
                if ticket.holding:
                    ticket.holding = False
                    self._free += 1
                    self._grant()

    def admit(self, ticket: SearchTicket) -> Admission:
        """Wait until ``ticket`` holds a slot, its stop time passes (EXPIRED: its answer is then due, less the
        answer reserve) or the scheduler closes."""
        with self._lock:
            if ticket.holding:
                return Admission.GRANTED
            if ticket.cancelled:
                return Admission.CANCELLED
            return self._wait_for_slot(ticket)

    def checkpoint(self, ticket: SearchTicket) -> bool:
        """Between two compiled calls of ``ticket``'s search: True ends the search (stop time passed or
        cancelled). When a waiting ticket comes first, the slot is lent to it first (until the stop time at most)."""
        now = time.monotonic()
        if ticket.cancelled:
            return True
        if now >= ticket.stop_at:
            ticket.stopped = True
            return True
        with self._lock:
            head = self._first_waiting()
            if head is None or self._waiting[0][0] >= ticket.priority(now):
                return False
            ticket.computed += now - ticket.granted_at
            ticket.holding = False
            self._free += 1
            self._grant()
            if self._wait_for_slot(ticket) == Admission.GRANTED:
                return False
            ticket.stopped = not ticket.cancelled
            return True

    def clients(self) -> set:
        """The clients of the tickets held (known ones)."""
        with self._lock:
            return {ticket.client for ticket in self._tickets if ticket.client is not None}

    def cancel_clients(self, clients, reason: str) -> int:
        """Cancel the tickets of ``clients`` (gone: nobody would get their answers), saying ``reason``; how many."""
        with self._lock:
            cancelled = [ticket for ticket in self._tickets if ticket.client in clients and not ticket.cancelled]
            for ticket in cancelled:
                ticket.cancelled, ticket.cancel_reason = True, reason
                ticket.wake.notify()
        return len(cancelled)

    def close(self) -> None:
        """Cancel every ticket, now and to come."""
        with self._lock:
            self._closed = True
            for ticket in self._tickets:
                ticket.cancelled = True
                ticket.wake.notify()

    # ------------------------------------------------------------------ under the lock
    def _wait_for_slot(self, ticket: SearchTicket) -> Admission:
        """Wait for a slot until the ticket's stop time at most: EXPIRED after it."""
        ticket.waiting = True
        heapq.heappush(self._waiting, (ticket.priority(time.monotonic()), next(self._order), ticket))
        self._grant()
        while not ticket.holding:
            if ticket.cancelled:
                ticket.waiting = False
                return Admission.CANCELLED
            remaining = ticket.stop_at - time.monotonic()
            if remaining <= 0:
                ticket.waiting = False
                return Admission.EXPIRED
            ticket.wake.wait(remaining)
        return Admission.GRANTED

    def _first_waiting(self) -> SearchTicket | None:
        while self._waiting and (not self._waiting[0][2].waiting or self._waiting[0][2].cancelled):
            heapq.heappop(self._waiting)  # expired or cancelled while waiting
        return self._waiting[0][2] if self._waiting else None

    def _grant(self) -> None:
        while self._free > 0:
            ticket = self._first_waiting()
            if ticket is None:
                return
            heapq.heappop(self._waiting)
            ticket.waiting = False
            ticket.holding = True
            ticket.granted_at = time.monotonic()
            self._free -= 1
            ticket.wake.notify()
