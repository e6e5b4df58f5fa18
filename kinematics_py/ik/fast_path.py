"""The lean path of a plain IK request to a 6R arm with a closed form: one compiled call, a few lines of Python.

A plain request (solve mode "speed", no callbacks, consistency limits, options, collision checks, a valid or no
timeout) to a closed-form arm whose own FK check is as strict as the solver's thresholds is answered by
``ClosedFormSolver.nearest``: the pose and seed checked, every branch solved, the nearest in-limit one verified by
the chain's FK, all in one compiled call; the result is the one ``solve`` gives. Whatever that call does not answer
(a pose that is neither a ``Pose`` nor a float64 (4, 4) array, a seed it cannot take, bad values, no branch reaching
the pose, a nearer branch just missing it near a singularity) goes to ``solve``, which answers or reports it.
"""
from __future__ import annotations

import time
from typing import TYPE_CHECKING

import numpy as np

from ..errors import ErrorCode
from ..geometry.poses import Pose, PoseError, transform_from_any_pose
from .analytic import closed_form_applies, closed_form_check_suffices, closed_form_message_suffix
from .results import IKResult

if TYPE_CHECKING:
    from .state import GroupSetup

_SUCCESS = ErrorCode.SUCCESS
_FLOAT64 = np.float64
_NDARRAY = np.ndarray
_clock = time.perf_counter


class ClosedFormFastPath:
    """``fast_path(T_base_tip, seed)`` -> the IKResult of a plain request, or None (then ``solve`` answers)."""

    __slots__ = ("_nearest", "_message_suffix")

    def __init__(self, setup: GroupSetup):
        self._nearest = setup.closed_form.nearest
        self._message_suffix = closed_form_message_suffix(setup)

    def __call__(self, T_base_tip, seed) -> IKResult | None:
        if type(T_base_tip) is Pose:
            try:
                T_base_tip = transform_from_any_pose(T_base_tip)
            except PoseError:
                return None
        elif type(T_base_tip) is not _NDARRAY:
            return None
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


def fast_path_of(setup: GroupSetup) -> ClosedFormFastPath | None:
    """The lean path of ``setup``'s plain requests, or None where plain requests need the general path (no closed
    form, redundant joints, another solve mode, or thresholds tighter than the closed form's own check)."""
    params = setup.solver.params
    if closed_form_applies(setup) and params.solve_mode == "speed" and closed_form_check_suffices(params):
        return ClosedFormFastPath(setup)
    return None
