"""``LatestWins``: work handed to one background thread, where only the newest item of each kind is kept.

A producer (a service handler, a dragged gizmo) only stores a reference and notifies: it never waits for the
work, and however fast it offers, at most one item per kind is pending (memory stays bounded).
"""
from __future__ import annotations

import threading
import traceback
from collections.abc import Callable, Hashable


class LatestWins:
    """Runs ``handle(kind, item)`` on a daemon thread for the newest item offered of each kind, oldest kind first;
    ``idle`` (if given) is called every ``idle_period`` [s] while nothing is offered."""

    def __init__(self, handle: Callable[[Hashable, object], None], name: str, *,
                 idle: Callable[[], None] | None = None, idle_period: float = 0.5, log=None):
        self._handle, self._idle, self._idle_period, self._log = handle, idle, idle_period, log
        self._pending: dict[Hashable, object] = {}
        self._condition = threading.Condition()
        self._closed = False
        #: Items handled so far (for tests and benches).
        self.handled = 0
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def offer(self, kind: Hashable, item: object) -> None:
        """Keep ``item`` as the newest of ``kind`` (replacing one not yet handled); returns at once."""
        with self._condition:
            self._pending.pop(kind, None)  # re-inserted last: kinds are handled in the order they were offered
            self._pending[kind] = item
            self._condition.notify()

    def wait_idle(self, timeout: float) -> bool:
        """Wait until nothing is pending and the thread is between items; False if ``timeout`` [s] passed."""
        with self._condition:
            return self._condition.wait_for(lambda: not self._pending and not self._busy, timeout)

    _busy = False

    def _run(self) -> None:
        while True:
            with self._condition:
                self._busy = False
                self._condition.notify_all()
                if not self._condition.wait_for(lambda: self._pending or self._closed, self._idle_period):
                    item = None
                else:
                    if self._closed:
                        return
                    kind = next(iter(self._pending))
                    item = (kind, self._pending.pop(kind))
                self._busy = True
            try:
                if item is None:
                    if self._idle is not None:
                        self._idle()
                else:
                    self._handle(*item)
                    self.handled += 1
            except Exception as error:  # the thread outlives a bad item: it says so and goes on
                message = f"viewer update failed: {error!r}\n{traceback.format_exc()}"
                if self._log is not None:
                    self._log(message)

    def close(self, timeout: float = 2.0) -> None:
        with self._condition:
            self._closed = True
            self._condition.notify_all()
        if threading.current_thread() is not self._thread:
            self._thread.join(timeout)
