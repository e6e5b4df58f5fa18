"""The lean path of a plain IK request to a 6R arm with a closed form: one compiled call, a few lines of Python.

A plain request (solve mode "speed", no callbacks, consistency limits, options, collision checks, a valid or
no timeout) to an arm whose closed form is exact (``GroupSetup.closed_form_is_exact``) is answered by
``ClosedFormSolver.nearest``: pose and seed checked, every branch solved, the nearest in-limit one verified by
the chain's FK, all in one compiled call; the result is the one ``solve`` gives. Whatever that call does not
answer (a seed it cannot take, bad values, no branch reaching the pose, a nearer branch just missing it near a
singularity) goes to ``solve``, which answers or reports it.
"""
from __future__ import annotations

import time

import numpy as np

from ...errors import ErrorCode
from ..results import IKResult
from .solver import ClosedFormSolver

_SUCCESS = ErrorCode.SUCCESS
_FLOAT64 = np.float64
_NDARRAY = np.ndarray
_clock = time.perf_counter


class ClosedFormFastPath:
    """``fast_path(T_base_tip, seed)`` -> the IKResult of a plain request, or None (then ``solve`` answers).

    ``T_base_tip`` is an ndarray (the compiled call refuses any but a float64 (4, 4) one); ``seed`` anything
    ``np.array`` reads.
    """

    __slots__ = ("_nearest", "_message_suffix")

    def __init__(self, closed_form: ClosedFormSolver):
        self._nearest = closed_form.nearest
        self._message_suffix = f" ms (closed form, {closed_form.name}: the branch nearest the seed)"

    def __call__(self, T_base_tip: np.ndarray, seed) -> IKResult | None:
        if type(seed) is not _NDARRAY:
            try:
                seed = np.array(seed, dtype=_FLOAT64)
            except (TypeError, ValueError):
                return None
        started = _clock()
        q = self._nearest(T_base_tip, seed)
        if q is None:
            return None
        message = f"solved in {(_clock() - started) * 1e3:.3f}{self._message_suffix}"
        # Every field in order, without the keyword handling of IKResult's __new__ (a third of the time).
        return tuple.__new__(IKResult, (True, list(q), _SUCCESS, message, False, (q,), None))
