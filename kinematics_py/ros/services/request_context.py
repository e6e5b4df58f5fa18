"""What a service handler gets for one request, and how a handler's outcome becomes a MoveIt error code.

A handler is ``handler(request, response, context) -> response``; ``context`` holds the one ServingState the
request is answered from, the joint positions last published, when the request was sent and arrived, and the
node's tools
(logger, clock, TF, the IK search scheduler, the planning processes).
"""
from __future__ import annotations

import time
import traceback
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from ...errors import ErrorCode, RequestError
from ...ik.budget import Budget
from ...planning.processes import PlanningProcesses
from ...robot_setup import RobotSetup
from ..frames import ModelFrames, TransformSource
from ..messages.conversions import error_code_msg
from ..messages.robot_state import joint_values
from ..node_parameters import NODE_NAME
from ..serving_state import ServingState
from ..transport.search_scheduler import Admission, SearchScheduler


@dataclass(frozen=True)
class ServiceTools:
    """What handlers use of the node: its logger and clock, TF, its name (the answers' source), the scheduler of
    IK searches and the planning processes (None: plans run on the node's threads)."""

    logger: Any
    clock: Any
    transforms: TransformSource
    source: str
    scheduler: SearchScheduler
    planning: PlanningProcesses | None = None
    #: joint -> {key: value} of MoveIt's joint_limits.yaml parameters given to the node
    joint_limit_overrides: Callable[[], Mapping[str, Mapping[str, object]]] = dict
    #: key -> value of Pilz's pilz_cartesian_limits.yaml parameters given to the node ({}: Pilz's documented values)
    cartesian_limits: Callable[[], Mapping[str, object]] = dict
    #: The keys of the messages ``info_once`` has logged.
    _said: set = field(default_factory=set, init=False, compare=False, repr=False)

    def info_once(self, key: str, message: Callable[[], str]) -> None:
        """Log ``message()`` the first time ``key`` is given. rclpy's ``once=True`` looks its caller's source up
        (inspect, realpath) on every call: 0.2-0.7 ms, on every plan answered."""
        if key not in self._said:
            self._said.add(key)
            self.logger.info(message())


@dataclass(frozen=True)
class RequestContext:
    """One request's view of the node; never changes."""

    state: ServingState
    #: joint -> position last published on joint_states
    positions: Mapping[str, float]
    tools: ServiceTools
    #: ``time.monotonic()`` when the node took the request [s].
    arrived: float = field(default_factory=time.monotonic)
    #: How long the request was under way before that [s] (``request_transit``; 0 when unknown).
    transit: float = 0.0
    #: Who sent it (``request_transit.Arrival.client``; None: unknown).
    client: object = None

    @property
    def sent(self) -> float:
        """``time.monotonic()`` when the client sent the request, as far as known [s]: the start of its budget."""
        return self.arrived - self.transit

    @property
    def setup(self) -> RobotSetup:
        """The robot set-up, or RequestError(FAILURE) saying why there is none."""
        setup = self.state.setup
        if setup is None:
            raise RequestError(ErrorCode.FAILURE, self.state.problem)
        return setup

    @property
    def frames(self) -> ModelFrames:
        return ModelFrames(self.setup, self.tools.transforms)

    def joint_values(self, robot_state=None) -> dict[str, Any]:
        """Every movable joint's value: joint_states overlaid by ``robot_state`` (see robot_state.joint_values)."""
        return joint_values(self.setup, self.positions, robot_state)

    def stamp(self):
        return self.tools.clock.now().to_msg()


@dataclass
class SearchSlot:
    """A request's CPU slot while it is held: ``budget`` for the core's searches; ``outcome``, set by the holder,
    is quoted when the slot is cancelled."""

    budget: Budget
    outcome: str = ""


@contextmanager
def scheduled(context: RequestContext, deadline: float, *, kind: str = "") -> Iterator[SearchSlot]:
    """A slot of the node's search scheduler for this request, until ``deadline`` (``time.monotonic()`` [s]):
    TIMED_OUT when the deadline passes before it is granted, PREEMPTED when it is cancelled (the node stopping,
    the client gone) before or while the request holds it."""
    scheduler = context.tools.scheduler
    with scheduler.ticket(deadline, transit=context.transit, kind=kind, client=context.client) as ticket:
        admission = scheduler.admit(ticket)
        if admission == Admission.EXPIRED or (admission == Admission.GRANTED and ticket.remaining() <= 0):
            raise RequestError(ErrorCode.TIMED_OUT, f"the timeout ({(deadline - context.sent) * 1e3:.3g} ms, counted "
                                                    f"from when the request was sent) ran out before its search "
                                                    f"could start ({ticket.ahead} other IK request(s) in the node when "
                                                    f"it arrived)")
        if admission != Admission.GRANTED:
            raise RequestError(ErrorCode.PREEMPTED, ticket.cancel_reason)
        slot = SearchSlot(Budget(lambda: scheduler.checkpoint(ticket), ticket.stop_at))
        yield slot
        if ticket.cancelled:
            raise RequestError(ErrorCode.PREEMPTED, f"{ticket.cancel_reason}: {slot.outcome}" if slot.outcome
                               else ticket.cancel_reason)


#: Fills a response; returns the success message or (code, message).
Handler = Callable[[Any, Any, RequestContext], "str | tuple[ErrorCode, str]"]


def answer_with_error_code(handler: Handler, request, response, context: RequestContext):
    """``response`` filled by ``handler`` and its error_code set: every failure becomes an error code and a
    message, never a traceback to the client or a dead node."""
    try:
        message = handler(request, response, context)
        code = ErrorCode.SUCCESS
        if isinstance(message, tuple):
            code, message = message
    except RequestError as error:
        code, message = error.code, str(error)
    except Exception as error:
        context.tools.logger.error(f"internal error answering {type(request).__name__}: {error!r}\n"
                                   f"{traceback.format_exc()}")
        code, message = ErrorCode.FAILURE, f"internal error in {NODE_NAME}: {error!r}"
    response.error_code = error_code_msg(code, message, context.tools.source)
    return response
