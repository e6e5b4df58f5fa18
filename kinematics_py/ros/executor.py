"""The node's executor: IK requests on threads of their own, everything else on a pool IK never occupies.

rclpy's MultiThreadedExecutor runs every callback on one pool: with IK searches on every thread, FK, state
validity, parameter sets and topic updates wait behind them. ``NodeExecutor`` dispatches the callbacks of the
IK services (``is_search``) to one pool, whose threads mostly wait for a search slot
(``search_scheduler``), and every other callback to another. The spinning thread takes the services' requests
itself, with their header (rclpy would drop it: it gives IK callbacks the request's ``Arrival``,
``request_transit``): an IK service's every waiting request, each answered on a search thread of its own (up to
the search pool's size; further ones wait in DDS until a search ends); another service's requests one per pass
of the wait loop (a large one takes milliseconds to deserialize: an IK request waits for one at most), into a
queue that runs them on the other pool cheap ones first (``request_queue``). rclpy's own handler for a request
ran the take on a pool thread and woke the wait loop twice more, each pass rebuilding the wait set in Python.
A callback waiting for a pool thread is dispatched once (rclpy's own executors dispatch it again on every pass
of their wait loop). Both pools use daemon threads, so a callback still running when the node stops never holds
up the process's exit; a callback's exception is logged, never left unretrieved.
"""
from __future__ import annotations

import inspect
import queue
import threading
from collections.abc import Callable, Collection

from rclpy.exceptions import InvalidHandle
from rclpy.executors import (
    ConditionReachedException,
    Executor,
    ExternalShutdownException,
    ShutdownException,
    TimeoutException,
)

from .request_queue import CheapFirstQueue, request_cost
from .request_transit import arrival_of

#: rclpy (Kilted and later) takes a service request in ``Executor._take_service``, which returns the coroutine
#: answering it; older rclpy splits that into ``_execute_service``, and there the requests' transit stays 0.
TAKES_SERVICE_REQUESTS_AS_COROUTINES = hasattr(Executor, "_take_service") and not hasattr(Executor,
                                                                                         "_execute_service")


class DaemonPool:
    """Up to ``threads`` daemon threads running submitted callables in order (a thread is started whenever more
    work is outstanding than there are threads; threads are kept). ``on_done()`` runs after each callable, once
    it no longer counts as outstanding (``has_room`` already says so)."""

    def __init__(self, threads: int, name: str, on_error: Callable[[BaseException], None],
                 on_done: Callable[[], None] = lambda: None):
        self._limit, self._name, self._on_error, self._on_done = threads, name, on_error, on_done
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
    def has_room(self) -> bool:
        """Whether fewer callables are outstanding than the pool has threads at most."""
        return self._outstanding < self._limit

    @property
    def outstanding(self) -> int:
        """Callables submitted and not finished."""
        return self._outstanding

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
            self._on_done()


class NodeExecutor(Executor):
    """Executes the callbacks of the IK services (``is_search(entity)``) on ``search_threads`` threads and
    every other callback on ``threads`` threads; the requests of the services ``is_queued(entity)`` there cheap
    ones first (``request_queue``)."""

    def __init__(self, threads: int, search_threads: int, is_search: Callable[[object], bool], logger,
                 *, is_queued: Callable[[object], bool] = lambda _entity: False, context=None):
        super().__init__(context=context)
        self._is_search, self._is_queued = is_search, is_queued
        self._logger = logger
        self.pool = DaemonPool(threads, "callbacks", self._log_error)
        self.search_pool = DaemonPool(search_threads, "ik_requests", self._log_error, self._release_held)
        self.requests = CheapFirstQueue(threads, self.pool.submit)
        self._stopping = threading.Event()
        #: Search services not waited for while the search pool is full.
        self._held: list = []
        self._held_lock = threading.Lock()

    def spin(self) -> None:
        """Execute callbacks until ``stop_spinning``, a shutdown of the executor or of its context."""
        while self.context.ok() and not self._is_shutdown and not self._stopping.is_set():
            self.spin_once()

    def stop_spinning(self) -> None:
        """Make ``spin`` return (callbacks already dispatched keep running)."""
        self._stopping.set()
        self.wake()

    def spin_once(self, timeout_sec: float | None = None) -> None:
        try:
            handler, entity, _ = self.wait_for_ready_callbacks(timeout_sec, None, self._stopping.is_set)
        except (ShutdownException, TimeoutException, ExternalShutdownException, ConditionReachedException):
            return
        entries = self._take_from_task_list(handler)
        if entity is not None and TAKES_SERVICE_REQUESTS_AS_COROUTINES and (
                self._is_queued(entity) or self._is_search(entity)):
            # rclpy's handler would take one request on a pool thread and then wake this loop twice (for
            # nothing: the service is waited for again from the next pass); the node's services' requests are
            # taken here instead, all those waiting, and the handler is dropped
            _drop(handler)
            if self._is_queued(entity):  # one per pass: a large request takes milliseconds to deserialize
                taken = _take_request(entity)
                if taken is not None:
                    self.requests.submit(request_cost(taken[0]), _answering(entity, *taken))
                entity._executor_event = False
                return
            self._take_searches(entity)
            return
        pool = self.search_pool if entity is not None and self._is_search(entity) else self.pool
        pool.submit(lambda: self._run(handler, entries))

    def _take_searches(self, srv) -> None:
        """The search service's waiting requests, each answered on a search thread of its own, as many as the
        search pool has room for; the rest wait in DDS (the service is not waited for) until a search ends."""
        while self.search_pool.has_room:
            taken = _take_request(srv)
            if taken is None:
                srv._executor_event = False
                return
            self.search_pool.submit(_answering(srv, *taken))
        with self._held_lock:
            self._held.append(srv)
        if self.search_pool.has_room:  # a search ended meanwhile
            self._release_held()

    def _release_held(self) -> None:
        """Wait for the held search services again (after each search request: the pool has room then)."""
        if not self._held:
            return
        with self._held_lock:
            held, self._held = self._held, []
        for srv in held:
            srv._executor_event = False
        if held:
            self.wake()

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


def _drop(handler) -> None:
    """Close a handler task never to be run (its coroutine would warn that it was never awaited)."""
    coroutine = getattr(handler, "_handler", None)
    if inspect.iscoroutine(coroutine):
        coroutine.close()


def _take_request(srv) -> tuple | None:
    """(request, header) of ``srv``'s next waiting request, or None (none, or the service was destroyed)."""
    try:
        with srv.handle:
            request, header = srv.handle.service_take_request(srv.srv_type.Request)
    except InvalidHandle:  # the node is stopping
        return None
    return None if header is None else (request, header)


def _answering(srv, request, header) -> Callable[[], None]:
    """Answers ``request``, taken now, through ``srv``'s callback, called with the request's arrival as its
    third argument (``request_transit.Arrival``)."""
    arrival = arrival_of(header)

    def answer() -> None:
        response = srv.callback(request, srv.srv_type.Response(), arrival)
        srv.send_response(response, header)
    return answer


def entities_among(services: Collection) -> Callable[[object], bool]:
    """``is_search`` or ``is_queued`` for NodeExecutor: whether a ready entity is one of ``services``."""
    handles = frozenset(id(service) for service in services)
    return lambda entity: id(entity) in handles
