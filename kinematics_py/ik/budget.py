"""A caller's limits on a search: when it must end and how it asks one to stop.

Every search takes a ``Budget`` besides its own timeout. The ROS node passes one per request (its deadline,
and a hook its scheduler uses to pause or cancel the search); library callers usually pass none.
"""
from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass


def _never() -> bool:
    return False


@dataclass(frozen=True)
class Budget:
    """What bounds a search from outside.

    ``should_stop()`` is called between two compiled calls; True ends the search as its own timeout would.
    It may block (e.g. while a scheduler lends the CPU to a more urgent search). ``deadline``
    (``time.monotonic()`` [s], or inf) is when ``should_stop`` will end the search: no compiled call is sized
    to run past it.
    """

    should_stop: Callable[[], bool] = _never
    deadline: float = math.inf

    def time_left(self) -> float:
        """Time [s] until ``deadline`` (inf without one)."""
        return self.deadline - time.monotonic()


#: No limit beyond the search's own timeout.
UNBOUNDED = Budget()
