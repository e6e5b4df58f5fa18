"""Values spread over joint ranges, for any finite limits (a URDF may write +-1.7e308 for 'no limit')."""
from __future__ import annotations

import numpy as np


def spread(low, high, fractions):
    """low + fractions * (high - low) (arrays broadcast), without the overflow of (high - low) near 1e308."""
    fractions = np.asarray(fractions, dtype=float)
    return low * (1.0 - fractions) + high * fractions


def uniform(rng: np.random.Generator, low, high, shape) -> np.ndarray:
    """``rng.uniform(low, high, shape)`` for any finite low and high (numpy's raises OverflowError beyond 1e308)."""
    return spread(np.asarray(low, dtype=float), np.asarray(high, dtype=float), rng.random(shape))
