"""Requests waiting for a thread of the node, shared fairly between clients: cheap ones first, the clients in turn.

rclpy answers a service's requests in the order it takes them: one client's burst (compute_fk for thousands of
links, thousands of IK requests) made every other client's request wait behind all of it, also once that client
was gone (its answers then go nowhere). ``FairQueue`` runs ``QueuedRequest``s on a pool of ``threads``:

- cheap requests (estimated cost, ``request_cost``, at most CHEAP_COST) before expensive ones, which run
  EXPENSIVE_AT_ONCE at a time: a cheap request always finds a thread, and shares the GIL with at most that many
  expensive ones;
- within each kind, the clients in turn (round robin), each client's own requests in arrival order: a client's
  queue, however long, delays another client's request by one of its requests at most;
- a request whose cost is not known when it is queued (a message that must be read first) counts as cheap until a
  thread has read it; an expensive one then goes back to the front of its client's expensive requests.

``drop_clients`` discards the waiting requests of clients that are gone (their answers could no longer be
delivered): a gone client costs nothing more than its requests already running. Every other request queued
runs. The client is the rmw's identity of the requesting client (``rcl_service_io.TakenRequest.client``).
"""
from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Collection
from dataclasses import dataclass, field

#: Largest estimated cost of a cheap request (see ``request_cost``).
CHEAP_COST = 64
#: Expensive requests running at once.
EXPENSIVE_AT_ONCE = 1


def request_cost(request) -> int:
    """An estimate of what answering ``request`` costs, in poses or objects answered (1 for a small request)."""
    links = getattr(request, "fk_link_names", None)
    if links is not None:
        return 1 + len(links)
    scene = getattr(request, "scene", None)
    if scene is not None:  # ApplyPlanningScene: its objects, attached objects and octomap
        world = scene.world
        return (1 + len(world.collision_objects) + len(scene.robot_state.attached_collision_objects) +
                len(world.octomap.octomap.data) // 1024 +
                sum(len(shape.triangles) for item in world.collision_objects for shape in item.meshes) // 256)
    state = getattr(request, "robot_state", None)
    if state is not None and hasattr(state, "attached_collision_objects"):
        return 1 + len(state.attached_collision_objects)
    return 1


@dataclass(eq=False)
class QueuedRequest:
    """A request waiting for a thread."""

    #: Who sent it (any hashable; the same for all of one client's requests).
    client: object
    #: Answers it (on a pool thread).
    run: Callable[[], None]
    #: Its estimated cost (``request_cost``), or None until ``measure`` has read it.
    cost: int | None = 1
    #: Its cost, read on a pool thread when ``cost`` is None.
    measure: Callable[[], int] = lambda: 1
    #: Frees what it holds when it will not run (its client gone).
    discard: Callable[[], None] = lambda: None
    expensive: bool = field(default=False, init=False)


class _Turns:
    """Waiting requests by client; ``pop`` takes the next client's oldest and sends that client to the back."""

    def __init__(self):
        self._by_client: dict[object, deque[QueuedRequest]] = {}  # insertion order: the clients' turns
        self.count = 0

    def push(self, request: QueuedRequest, *, first: bool = False) -> None:
        waiting = self._by_client.setdefault(request.client, deque())
        waiting.appendleft(request) if first else waiting.append(request)
        self.count += 1

    def pop(self) -> QueuedRequest:
        client = next(iter(self._by_client))
        waiting = self._by_client.pop(client)
        request = waiting.popleft()
        if waiting:
            self._by_client[client] = waiting
        self.count -= 1
        return request

    def remove(self, client) -> list[QueuedRequest]:
        removed = list(self._by_client.pop(client, ()))
        self.count -= len(removed)
        return removed

    def clients(self) -> set:
        return set(self._by_client)


class FairQueue:
    """Requests run on ``submit_to_pool`` (at most ``threads`` at once), as the module docstring says."""

    def __init__(self, threads: int, submit_to_pool: Callable[[Callable[[], None]], None]):
        self._threads, self._submit = max(1, threads), submit_to_pool
        self._lock = threading.Lock()
        self._cheap, self._expensive = _Turns(), _Turns()
        self._running = 0
        self._expensive_running = 0

    @property
    def waiting(self) -> int:
        """Requests submitted and not started."""
        return self._cheap.count + self._expensive.count

    def clients_waiting(self) -> set:
        """The clients with requests waiting."""
        with self._lock:
            return self._cheap.clients() | self._expensive.clients()

    def submit(self, request: QueuedRequest) -> None:
        with self._lock:
            self._queue(request)
            started = self._take_startable()
        self._start(started)

    def run_here_if_idle(self, request: QueuedRequest, most_cost: int) -> bool:
        """Run ``request`` on the calling thread when it costs ``most_cost`` at most and nothing runs or waits
        (True); otherwise leave it (False). A pool thread's start is a wake-up away, and the calling thread would
        hold the GIL meanwhile: for a small request on an idle node that was half its time in the node."""
        with self._lock:
            if self._running or self.waiting or request.cost is None or request.cost > most_cost:
                return False
            self._running += 1
        self._run(request)
        return True

    def drop_clients(self, clients: Collection) -> int:
        """Discard the waiting requests of ``clients``; how many there were."""
        with self._lock:
            dropped = [request for client in clients for turns in (self._cheap, self._expensive)
                       for request in turns.remove(client)]
        for request in dropped:
            request.discard()
        return len(dropped)

    def _queue(self, request: QueuedRequest, *, first: bool = False) -> None:
        expensive = request.cost is not None and request.cost > CHEAP_COST
        (self._expensive if expensive else self._cheap).push(request, first=first)

    def _take_startable(self) -> list[QueuedRequest]:
        """The requests to start now (lock held), counted as running."""
        started = []
        while self._running < self._threads:
            if self._expensive.count and self._expensive_running < EXPENSIVE_AT_ONCE:
                request = self._expensive.pop()
                request.expensive = True
                self._expensive_running += 1
            elif self._cheap.count:
                request = self._cheap.pop()
            else:
                break
            self._running += 1
            started.append(request)
        return started

    def _start(self, requests: list[QueuedRequest]) -> None:
        for request in requests:
            self._submit(lambda request=request: self._run(request))

    def _run(self, request: QueuedRequest) -> None:
        try:
            if request.cost is None:
                request.cost = request.measure()
                if request.cost > CHEAP_COST:
                    with self._lock:
                        if self._expensive_running >= EXPENSIVE_AT_ONCE:  # back in line, first of its client's
                            self._queue(request, first=True)
                            return
                        request.expensive = True
                        self._expensive_running += 1
            request.run()
        finally:
            with self._lock:
                self._running -= 1
                if request.expensive:
                    request.expensive = False
                    self._expensive_running -= 1
                started = self._take_startable()
            self._start(started)
