"""An IK request as the caller gave it, and the checks that turn its parts into arrays (RequestError on bad input)."""
from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from ..errors import ErrorCode, RequestError
from ..geometry.poses import Pose, PoseError, transform_from_any_pose
from .options import KinematicsQueryOptions

if TYPE_CHECKING:
    from .state import GroupSetup

#: The options of a request that gives none.
DEFAULT_OPTIONS = KinematicsQueryOptions()


class IkRequest(NamedTuple):
    """The arguments of one searchPositionIK / getPositionIK call (see KinematicsPlugin.searchPositionIK)."""

    ik_pose: Any
    seed: Sequence[float]
    timeout: float | None = None
    consistency_limits: Sequence[float] | None = None
    solution_callback: Callable | None = None
    cost_function: Callable | None = None
    options: KinematicsQueryOptions | None = None
    #: One local search from the seed, no random restarts (getPositionIK).
    local_only: bool = False


def all_finite(values: np.ndarray) -> bool:
    """Whether every value is finite: one sum (a NaN or infinity makes it non-finite), then, only if the sum
    overflowed, element by element."""
    return math.isfinite(np.add.reduce(values, axis=None)) or bool(np.isfinite(values).all())


def target_transforms(setup: GroupSetup, ik_pose) -> np.ndarray:
    """(t, 4, 4) ``T_base_tip`` targets from one pose or a list with one pose per tip."""
    if type(ik_pose) is np.ndarray and ik_pose.shape == (4, 4) and ik_pose.dtype == np.float64 \
            and len(setup.tip_frames) == 1 and all_finite(ik_pose):
        return np.ascontiguousarray(ik_pose).reshape(1, 4, 4)  # the common case, without the general reader
    poses = list(ik_pose) if isinstance(ik_pose, (list, tuple)) and not isinstance(ik_pose, Pose) else [ik_pose]
    if not poses:
        raise RequestError(ErrorCode.INVALID_GOAL_CONSTRAINTS, "no target pose given")
    if len(poses) != len(setup.tip_frames):
        raise RequestError(ErrorCode.INVALID_LINK_NAME,
                           f"{len(poses)} pose(s) given for {len(setup.tip_frames)} tip frame(s) "
                           f"{list(setup.tip_frames)}: give one pose per tip")
    try:
        if len(poses) == 1:
            return transform_from_any_pose(poses[0])[None]
        return np.array([transform_from_any_pose(pose) for pose in poses])
    except PoseError as error:
        raise RequestError(ErrorCode.INVALID_GOAL_CONSTRAINTS, f"invalid target pose: {error}") from None


def joint_vector(setup: GroupSetup, values, what: str) -> np.ndarray:
    """``values`` as a finite vector with one value per joint of the group."""
    names = setup.solver.problem.variable_names
    try:
        q = np.asarray(values, dtype=float)
    except (TypeError, ValueError):
        raise RequestError(ErrorCode.INVALID_ROBOT_STATE, f"{what} must be numbers; got {values!r}") from None
    if q.shape != (len(names),):
        raise RequestError(ErrorCode.INVALID_ROBOT_STATE,
                           f"{what} needs {len(names)} values for joints {list(names)}; got shape {q.shape}")
    if not all_finite(q):
        bad = [names[i] for i in np.flatnonzero(~np.isfinite(q))]
        raise RequestError(ErrorCode.INVALID_ROBOT_STATE, f"{what} has non-finite values for {bad}")
    return q


def consistency_window(setup: GroupSetup, consistency_limits) -> np.ndarray | None:
    """The consistency limits as a vector (>= 0), or None if none were given."""
    if consistency_limits is None or len(consistency_limits) == 0:
        return None
    limits = joint_vector(setup, consistency_limits, "consistency_limits")
    if np.any(limits < 0):
        raise RequestError(ErrorCode.INVALID_ROBOT_STATE, "consistency_limits must be >= 0")
    return limits


def search_time(timeout, default: float) -> float:
    """``timeout`` [s] checked, or ``default`` if it is None."""
    if timeout is None:
        return default
    try:
        value = float(timeout)
    except (TypeError, ValueError):
        raise RequestError(ErrorCode.FAILURE, f"timeout must be a number of seconds; got {timeout!r}") from None
    if not math.isfinite(value) or value < 0:
        raise RequestError(ErrorCode.FAILURE, f"timeout must be finite and >= 0 seconds; got {timeout!r}")
    return value
