"""Requests of the node's services that do not search (compute_fk, check_state_validity, the planning scene
services, query_planner_interface), cheap ones first.

rclpy answers a service's requests in the order it takes them: a client's burst of expensive requests (compute_fk
for thousands of links, a scene of thousands of objects) made every other client's cheap request wait behind all
of it, also once that client was gone (its answers then go nowhere). ``CheapFirstQueue`` runs the requests on
the executor's pool: those whose estimated cost (``request_cost``, in answered poses or scene objects) is at most
CHEAP_COST in arrival order, before the expensive ones, which run one at a time, in arrival order. A cheap
request so always finds a thread, and shares the GIL with at most one expensive request. Every request taken is
run (none is dropped), and no expensive request waits for more than the cheap requests queued before it.

Which client sent a request is not known here (rclpy's request header has its sequence number only, not the
client's GUID): the order is by cost, not per client.
"""
from __future__ import annotations

import collections
import threading
from collections.abc import Callable

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


class CheapFirstQueue:
    """Callables with a cost, run on ``submit_to_pool`` (at most ``threads`` of them at once): cheap ones first in
    arrival order, expensive ones in arrival order, EXPENSIVE_AT_ONCE of those at a time."""

    def __init__(self, threads: int, submit_to_pool: Callable[[Callable[[], None]], None]):
        self._threads, self._submit = max(1, threads), submit_to_pool
        self._lock = threading.Lock()
        self._cheap: collections.deque = collections.deque()
        self._expensive: collections.deque = collections.deque()
        self._running = 0
        self._expensive_running = 0

    @property
    def waiting(self) -> int:
        """Callables submitted and not started."""
        return len(self._cheap) + len(self._expensive)

    def submit(self, cost: int, work: Callable[[], None]) -> None:
        with self._lock:
            (self._cheap if cost <= CHEAP_COST else self._expensive).append(work)
            started = self._take_startable()
        for item in started:
            self._submit(item)

    def _take_startable(self) -> list[Callable[[], None]]:
        """The callables to start now (lock held), each wrapped to start the next ones when it ends."""
        started = []
        while self._running < self._threads:
            if self._expensive and self._expensive_running < EXPENSIVE_AT_ONCE:
                work, expensive = self._expensive.popleft(), True
                self._expensive_running += 1
            elif self._cheap:
                work, expensive = self._cheap.popleft(), False
            else:
                break
            self._running += 1
            started.append(self._running_then_next(work, expensive))
        return started

    def _running_then_next(self, work: Callable[[], None], expensive: bool) -> Callable[[], None]:
        def run() -> None:
            try:
                work()
            finally:
                with self._lock:
                    self._running -= 1
                    self._expensive_running -= expensive
                    started = self._take_startable()
                for item in started:
                    self._submit(item)
        return run
