"""How long a service request was under way before the node took it: from its DDS source timestamp.

A client's timeout starts when it sends the request, so the node counts an IK request's budget from then,
not from when it took it, and expects its answer to take about as long to arrive as the request did.
rclpy hands a service callback the request only; the header taken with it (rmw_service_info_t) carries the
client's source timestamp (system clock, ns). ``NodeExecutor`` takes the search services' requests itself and
calls their callbacks with a third argument, the request's ``Arrival``: its transit and when the node took it
(a request taken beside another one may wait for its thread: that wait counts too).

A transit is trusted between 0 and ``TRUSTED_TRANSIT_S``: outside, the clocks of the client's and the node's
machines differ (or the request waited in DDS behind ``max_concurrent_ik_requests``), and counting it would
cut the budget by a clock error, so the budget then starts when the node took the request.
"""
from __future__ import annotations

import time
from typing import NamedTuple

#: Largest transit [s] counted; longer is a clock skew between machines, not a DDS delivery.
TRUSTED_TRANSIT_S = 0.05


class Arrival(NamedTuple):
    """How a service request reached the node."""

    #: How long it was under way [s] (0 when unknown or untrusted).
    transit: float
    #: ``time.monotonic()`` when the node took it.
    taken_at: float
    #: Who sent it (``rcl_service_io.TakenRequest.client``; None: unknown).
    client: object = None


def transit_of(header) -> float:
    """Seconds between the client's source timestamp in ``header`` and now, or 0 when unknown or untrusted."""
    source_ns = getattr(header, "source_timestamp", 0)
    if not source_ns:
        return 0.0
    transit = (time.time_ns() - source_ns) * 1e-9
    return transit if 0.0 <= transit <= TRUSTED_TRANSIT_S else 0.0


def arrival_of(header) -> Arrival:
    """The arrival of a request taken now with ``header`` (a TakenRequest or rclpy's header)."""
    return Arrival(transit_of(header), time.monotonic(), getattr(header, "client", None))
