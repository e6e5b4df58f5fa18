"""The node's executor: IK requests on threads of their own, everything else on a pool IK never occupies.

rclpy's MultiThreadedExecutor runs every callback on one pool: with IK searches on every thread, FK, state
validity, parameter sets and topic updates wait behind them. ``NodeExecutor`` dispatches the callbacks of the
IK services (``is_search``) to one pool, whose threads mostly wait for a search slot
(``search_scheduler``), and every other callback to another. The spinning thread takes the services' requests
itself, in C (``rcl_service_io``: the client's identity and the header's times kept, the Python message built
on the thread that answers it), every request waiting, into a ``FairQueue`` per pool (``request_queue``): cheap
requests first, the clients in turn, so that no client's burst, nor the queue of a client that is gone, holds up
another client's request. IK callbacks get the request's ``Arrival`` (``request_transit``). Answers go out
through rcl too; one rmw did not send is sent again (``rcl_service_io.Resender``) instead of being lost. rclpy's
own handler for a request ran the take on a pool thread and woke the wait loop twice more, each pass rebuilding
the wait set in Python. A callback waiting for a pool thread is dispatched once (rclpy's own executors dispatch it
again on every pass of their wait loop). Both pools use daemon threads, so a callback still running when the node
stops never holds up the process's exit; a callback's exception is logged, never left unretrieved.
"""
from __future__ import annotations

import contextlib
import inspect
import queue
import threading
import time
from collections.abc import Callable, Collection

from moveit_msgs.msg import MoveItErrorCodes
from moveit_msgs.srv import GetPositionFK
from rclpy.executors import (
    ConditionReachedException,
    Executor,
    ExternalShutdownException,
    ShutdownException,
    TimeoutException,
)

from .rcl_service_io import Resender, ServiceIO, ServiceIOError, TakenRequest, fk_link_count
from .request_queue import FairQueue, QueuedRequest, request_cost
from .request_transit import arrival_of

#: Requests of one service taken in one pass of the wait loop at most, and for how long [s] at most (a
#: 10,000-name compute_fk request takes 0.7 ms to deserialize: a client streaming them kept one pass taking for
#: 90 ms, while the other services' requests waited).
TAKEN_PER_PASS = 64
TAKING_PER_PASS_S = 0.002
#: A request of the other services costing this much at most (``request_queue.request_cost``, known before its
#: message is read: compute_fk's link names) is answered by the spinning thread itself when the pool is idle.
ANSWERED_HERE_COST = 8

#: rclpy (Kilted and later) takes a service request in ``Executor._take_service``, which returns the coroutine
#: answering it; older rclpy splits that into ``_execute_service``, and there the requests' transit stays 0.
TAKES_SERVICE_REQUESTS_AS_COROUTINES = hasattr(Executor, "_take_service") and not hasattr(Executor,
                                                                                         "_execute_service")


class DaemonPool:
    """Up to ``threads`` daemon threads running submitted callables in order (a thread is started whenever more
    work is outstanding than there are threads; threads are kept)."""

    def __init__(self, threads: int, name: str, on_error: Callable[[BaseException], None]):
        self._limit, self._name, self._on_error = threads, name, on_error
        self._queue: queue.SimpleQueue = queue.SimpleQueue()
        self._lock = threading.Condition()
        self._threads = 0
        #: Callables submitted and not finished (queued or running).
        self._outstanding = 0

    def submit(self, work: Callable[[], None]) -> None:
        with self._lock:
            self._outstanding += 1
            if self._outstanding > self._threads and self._threads < self._limit:
                self._threads += 1
                threading.Thread(target=self._serve, name=f"{self._name}_{self._threads}", daemon=True).start()
        self._queue.put(work)

    @property
    def outstanding(self) -> int:
        """Callables submitted and not finished."""
        return self._outstanding

    @contextlib.contextmanager
    def waiting_long(self):
        """While a callback of this pool waits for long (an action's execution: seconds), the pool may start one
        thread more, so that the callbacks it waits for (a controller's answer) never wait for its thread."""
        with self._lock:
            self._limit += 1
            start = self._outstanding > self._threads
            if start:
                self._threads += 1
        if start:
            threading.Thread(target=self._serve, name=f"{self._name}_{self._threads}", daemon=True).start()
        try:
            yield
        finally:
            with self._lock:
                self._limit -= 1

    def wait_idle(self, timeout: float) -> bool:
        """True once no submitted callable is queued or running (within ``timeout`` [s])."""
        with self._lock:
            return self._lock.wait_for(lambda: self._outstanding == 0, timeout)

    def _serve(self) -> None:
        while True:
            work = self._queue.get()
            try:
                work()
            except BaseException as error:  # never a dead worker
                self._on_error(error)
            with self._lock:
                self._outstanding -= 1
                self._lock.notify_all()


class NodeExecutor(Executor):
    """Executes the callbacks of the IK services (``is_search(entity)``) on ``search_threads`` threads and
    every other callback on ``threads`` threads; the requests of the node's services (``is_search`` or
    ``is_queued``) are taken here and wait for those threads in a ``FairQueue`` each (``request_queue``)."""

    def __init__(self, threads: int, search_threads: int, is_search: Callable[[object], bool], logger,
                 *, is_queued: Callable[[object], bool] = lambda _entity: False, context=None):
        super().__init__(context=context)
        self._is_search, self._is_queued = is_search, is_queued
        self._logger = logger
        self.pool = DaemonPool(threads, "callbacks", self._log_error)
        self.search_pool = DaemonPool(search_threads, "ik_requests", self._log_error)
        #: The other services' requests waiting for a pool thread, cheap ones first, clients in turn.
        self.requests = FairQueue(threads, self.pool.submit)
        #: The search services' requests waiting for a search thread, clients in turn.
        self.searches = FairQueue(search_threads, self.search_pool.submit)
        #: Sends the answers, again those rmw did not send at once.
        self.resends = Resender(logger)
        self._stopping = threading.Event()
        self._service_io: dict[int, ServiceIO] = {}
        #: Called with each request taken, before it is queued (its service's ServiceIO and the TakenRequest).
        self.on_taken: Callable[[ServiceIO, TakenRequest], None] = lambda _io, _taken: None
        #: The answer of a request refused before its message is read (e.g. compute_fk over max_fk_links), or None.
        self.refusal_unread: Callable[[ServiceIO, TakenRequest], object | None] = lambda _io, _taken: None

    def spin(self) -> None:
        """Execute callbacks until ``stop_spinning``, a shutdown of the executor or of its context."""
        while self.context.ok() and not self._is_shutdown and not self._stopping.is_set():
            self.spin_once()

    def stop_spinning(self) -> None:
        """Make ``spin`` return (callbacks already dispatched keep running)."""
        self._stopping.set()
        self.resends.close()
        self.wake()

    def spin_once(self, timeout_sec: float | None = None) -> None:
        try:
            handler, entity, _ = self.wait_for_ready_callbacks(timeout_sec, None, self._stopping.is_set)
        except (ShutdownException, TimeoutException, ExternalShutdownException, ConditionReachedException):
            return
        entries = self._take_from_task_list(handler)
        if entity is not None and TAKES_SERVICE_REQUESTS_AS_COROUTINES and (
                self._is_queued(entity) or self._is_search(entity)):
            # rclpy's handler would take one request on a pool thread (building its Python message there, GIL
            # held) and then wake this loop twice; the node's services' requests are taken here instead, in C,
            # all those waiting, and the handler is dropped
            _drop(handler)
            self._take_requests(entity)
            return
        pool = self.search_pool if entity is not None and self._is_search(entity) else self.pool
        pool.submit(lambda: self._run(handler, entries))

    def service_io(self, srv) -> ServiceIO:
        """The ServiceIO of one of the node's services."""
        io = self._service_io.get(id(srv))
        if io is None:
            io = self._service_io[id(srv)] = ServiceIO(srv)
        return io

    def drop_clients(self, clients) -> int:
        """Discard the waiting requests of ``clients`` (gone: their answers can no longer be delivered)."""
        return self.requests.drop_clients(clients) + self.searches.drop_clients(clients)

    def clients_waiting(self) -> set:
        """The clients with requests waiting for a thread."""
        return self.requests.clients_waiting() | self.searches.clients_waiting()

    def _take_requests(self, srv) -> None:
        """Every request waiting in DDS for ``srv`` (TAKEN_PER_PASS, TAKING_PER_PASS_S at most), into its fair
        queue. Taking one costs its deserialization in C only (the GIL released): its Python message is built on
        the thread that answers it."""
        io = self.service_io(srv)
        search = self._is_search(srv)
        queue = self.searches if search else self.requests
        until = time.monotonic() + TAKING_PER_PASS_S
        for _ in range(TAKEN_PER_PASS):
            if time.monotonic() > until:  # a client streaming large requests: the other services' turn
                break
            try:
                taken = io.take()
            except ServiceIOError as error:
                self._log_error(error)
                taken = None
            if taken is None:
                break
            self.on_taken(io, taken)
            refusal = self.refusal_unread(io, taken)
            if refusal is not None:
                taken.discard()
                queue.submit(QueuedRequest(taken.client, lambda taken=taken, refusal=refusal:
                                           self.resends.send(io, taken, refusal)))
                continue
            request = _queued(io, taken, self._answering(io, taken), search)
            if search or not queue.run_here_if_idle(request, ANSWERED_HERE_COST):
                queue.submit(request)
        srv._executor_event = False  # waited for again: more may wait, taken next pass (others' between)

    def _answering(self, io: ServiceIO, taken: TakenRequest) -> Callable[[], None]:
        """Answers ``taken`` through its service's callback, called with the request's arrival as its third
        argument (``request_transit.Arrival``), and sends the answer (again later while its client is not
        matched)."""
        arrival = arrival_of(taken)

        def answer() -> None:
            srv = io.service
            try:
                response = srv.callback(taken.message(), srv.srv_type.Response(), arrival)
            except Exception as error:  # every request taken is answered
                self._log_error(error)
                response = failure_response(srv.srv_type, f"internal error: {error!r}")
            self.resends.send(io, taken, response)
        return answer

    def _take_from_task_list(self, handler) -> list:
        """Remove ``handler`` from rclpy's list of tasks in progress; its entries there.

        rclpy yields every task of that list that is not executing on each pass of its wait loop: a task
        dispatched but not yet started by a pool thread would be dispatched again and again, the spinning thread
        never waiting (three dispatches in four were such repeats under the soak's mixed load), and holding the
        GIL the pool threads need to start."""
        with self._tasks_lock:
            entries = [entry for entry in self._tasks if entry[0] is handler]
            self._tasks = [entry for entry in self._tasks if entry[0] is not handler]
        return entries

    def _run(self, handler, entries: list) -> None:
        handler()
        if not handler.done():  # a coroutine callback awaiting: rclpy resumes it from its list, as before
            with self._tasks_lock:
                self._tasks.extend(entries)
            self.wake()
            return
        error = handler.exception()  # retrieved: never "exception was never retrieved" at exit
        if error is not None:
            self._log_error(error)

    def _log_error(self, error: BaseException) -> None:
        if self._stopping.is_set() or self._is_shutdown or not self.context.ok():
            return  # a callback interrupted by the node's end (e.g. answering on a destroyed service)
        self._logger.error(f"callback failed: {error!r}")


def _queued(io: ServiceIO, taken: TakenRequest, answer: Callable[[], None], search: bool) -> QueuedRequest:
    """``taken`` as a FairQueue entry: a compute_fk request's cost read in C (its names counted), another's once
    its message is built (on the thread that answers it); IK requests are all alike."""
    if search:
        return QueuedRequest(taken.client, answer, discard=taken.discard)
    if io.service.srv_type is GetPositionFK:
        return QueuedRequest(taken.client, answer, cost=1 + fk_link_count(taken.c_message), discard=taken.discard)
    return QueuedRequest(taken.client, answer, cost=None, measure=lambda: _cost_of(taken), discard=taken.discard)


def failure_response(srv_type, message: str):
    """A ``srv_type`` answer saying FAILURE (its MoveIt error code, where it has one) with ``message``."""
    response = srv_type.Response()
    if hasattr(response, "error_code"):
        response.error_code = MoveItErrorCodes(val=MoveItErrorCodes.FAILURE, message=message)
    return response


def _cost_of(taken: TakenRequest) -> int:
    try:
        return request_cost(taken.message())
    except Exception:  # an unreadable message: its answer says so, as cheaply as any
        return 1


def _drop(handler) -> None:
    """Close a handler task never to be run (its coroutine would warn that it was never awaited)."""
    coroutine = getattr(handler, "_handler", None)
    if inspect.iscoroutine(coroutine):
        coroutine.close()


def entities_among(services: Collection) -> Callable[[object], bool]:
    """``is_search`` or ``is_queued`` for NodeExecutor: whether a ready entity is one of ``services``."""
    handles = frozenset(id(service) for service in services)
    return lambda entity: id(entity) in handles
