"""How long a service request was under way before the node took it: from its DDS source timestamp.

A client's timeout starts when it sends the request, so the node counts an IK request's budget from then,
not from when it took it, and expects its answer to take about as long to arrive as the request did.
rclpy hands a service callback the request only; the header taken with it (rmw_service_info_t) carries the
client's source timestamp (system clock, ns). ``NodeExecutor`` takes the search services' requests itself and
runs their callbacks inside ``request_transit(seconds, taken_at)``; ``current_transit()`` reads it (0
elsewhere), ``current_take_time()`` when the node took the request (a request taken beside another one may
wait for its thread: that wait counts too).

A transit is trusted between 0 and ``TRUSTED_TRANSIT_S``: outside, the clocks of the client's and the node's
machines differ (or the request waited in DDS behind ``max_concurrent_ik_requests``), and counting it would
cut the budget by a clock error, so the budget then starts when the node took the request.
"""
from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

#: Largest transit [s] counted; longer is a clock skew between machines, not a DDS delivery.
TRUSTED_TRANSIT_S = 0.05

_TRANSIT: ContextVar[tuple[float, float | None]] = ContextVar("kinematics_py_request_transit", default=(0.0, None))


def transit_of(header) -> float:
    """Seconds between the client's source timestamp in ``header`` and now, or 0 when unknown or untrusted."""
    source_ns = getattr(header, "source_timestamp", 0)
    if not source_ns:
        return 0.0
    transit = (time.time_ns() - source_ns) * 1e-9
    return transit if 0.0 <= transit <= TRUSTED_TRANSIT_S else 0.0


@contextmanager
def request_transit(seconds: float, taken_at: float | None = None) -> Iterator[None]:
    """Within the block (one callback), ``current_transit()`` is ``seconds`` and ``current_take_time()`` is
    ``taken_at`` (``time.monotonic()``)."""
    token = _TRANSIT.set((seconds, taken_at))
    try:
        yield
    finally:
        _TRANSIT.reset(token)


def current_transit() -> float:
    """The transit [s] of the request whose callback runs in this thread (0 when unknown)."""
    return _TRANSIT.get()[0]


def current_take_time() -> float | None:
    """``time.monotonic()`` when the node took the request whose callback runs in this thread (None: unknown)."""
    return _TRANSIT.get()[1]
