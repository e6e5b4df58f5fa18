"""The steps of a straight joint motion checked at a resolution: one rule for the path checks in Python, the compiled
sphere checks of a motion and the densified trajectory."""
from __future__ import annotations

import math

from ..compiled import compiled_kernel

#: A joint change of exactly k resolutions takes k steps, not k + 1, whatever the rounding of the division.
ROUNDING_SLACK = 1e-9


@compiled_kernel(inline="always")
def straight_steps(q_from, q_to, resolution):
    """The number of steps (>= 1) of the straight motion from ``q_from`` to ``q_to`` (1-D arrays) that keeps every
    joint's change per step within ``resolution``."""
    largest = 0.0
    for i in range(q_from.shape[0]):
        largest = max(largest, abs(q_to[i] - q_from[i]))
    return max(1, int(math.ceil(largest / resolution - ROUNDING_SLACK)))
