"""An IK request as the caller gave it (``IkRequest``) and as the searches take it (``ParsedRequest``: checked
arrays, built once by ``parse_request``; RequestError on bad input)."""
from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from ..errors import ErrorCode, RequestError, Verdict
from ..geometry.poses import Pose, PoseError, transform_from_any_pose
from .budget import UNBOUNDED, Budget
from .options import KinematicsQueryOptions

if TYPE_CHECKING:
    from .group_setup import GroupSetup, PluginState

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
    #: The caller's deadline and stop hook.
    budget: Budget = UNBOUNDED


class ParsedRequest(NamedTuple):
    """One request checked and turned into arrays, once: what every search strategy and the diagnosis of a
    failure take. The callbacks take the joint vector as an ndarray."""

    setup: GroupSetup
    #: (t, 4, 4) ``T_base_tip``, one per tip.
    targets: np.ndarray
    #: (n,) [rad or m]
    seed: np.ndarray
    #: The search's own time [s].
    timeout: float
    #: (n,) the consistency limits around the seed (>= 0), or None.
    limits: np.ndarray | None
    options: KinematicsQueryOptions
    local_only: bool
    budget: Budget
    #: q -> bool, ErrorCode or Verdict (``search.verdict_of``), or None.
    is_valid: Callable[[np.ndarray], bool | ErrorCode | Verdict] | None
    #: q -> the cost to minimise, or None.
    cost_function: Callable[[np.ndarray], float] | None
    #: joint index -> the discretization step [rad or m] of the redundant joints.
    step_of: Callable[[int], float]

    @property
    def plain(self) -> bool:
        """No callbacks, consistency limits or options, and solve mode "speed"."""
        return (self.is_valid is None and self.cost_function is None and self.limits is None
                and (self.options is DEFAULT_OPTIONS or self.options == DEFAULT_OPTIONS)
                and self.setup.solver.params.solve_mode == "speed")


def parse_request(state: PluginState, request: IkRequest) -> ParsedRequest:
    """``request`` checked against the set-up of ``state``, as arrays; RequestError says what is wrong."""
    setup = state.require_setup()
    return ParsedRequest(setup, target_transforms(setup, request.ik_pose),
                         joint_vector(setup, request.seed, "ik_seed_state"),
                         search_time(request.timeout, state.default_timeout),
                         consistency_window(setup, request.consistency_limits), request.options or DEFAULT_OPTIONS,
                         request.local_only, request.budget,
                         None if request.solution_callback is None else _validity_callback(request),
                         None if request.cost_function is None else _cost_callback(request), state.discretization)


def _validity_callback(request: IkRequest):
    """q -> the request's solution_callback(ik_pose, solution as a list)."""
    callback, ik_pose = request.solution_callback, request.ik_pose

    def is_valid(q: np.ndarray) -> bool | ErrorCode | Verdict:
        return callback(ik_pose, q.tolist())

    return is_valid


def _cost_callback(request: IkRequest):
    """q -> the request's cost_function(ik_pose, solution as a list)."""
    cost_function, ik_pose = request.cost_function, request.ik_pose

    def cost(q: np.ndarray) -> float:
        return cost_function(ik_pose, q.tolist())

    return cost


def invalid_pose(error: PoseError) -> RequestError:
    return RequestError(ErrorCode.INVALID_GOAL_CONSTRAINTS, f"invalid target pose: {error}")


def all_finite(values: np.ndarray) -> bool:
    """Whether every value is finite: one sum (a NaN or infinity makes it non-finite), then, only if the sum
    overflowed, element by element."""
    return math.isfinite(np.add.reduce(values, axis=None)) or bool(np.isfinite(values).all())


def target_transforms(setup: GroupSetup, ik_pose) -> np.ndarray:
    """(t, 4, 4) ``T_base_tip`` targets from one pose, a list with one pose per tip, or a (t, 4, 4) array."""
    if type(ik_pose) is np.ndarray and ik_pose.shape == (4, 4) and ik_pose.dtype == np.float64 \
            and len(setup.tip_frames) == 1 and all_finite(ik_pose):
        return np.ascontiguousarray(ik_pose).reshape(1, 4, 4)  # the common case, without the general reader
    if type(ik_pose) is np.ndarray and ik_pose.shape == (len(setup.tip_frames), 4, 4) and ik_pose.dtype == np.float64 \
            and all_finite(ik_pose):
        return np.ascontiguousarray(ik_pose)  # (t, 4, 4): one target per tip, as an IkQuery holds them
    stacked = isinstance(ik_pose, (list, tuple)) and not isinstance(ik_pose, Pose) or \
        isinstance(ik_pose, np.ndarray) and ik_pose.ndim == 3
    poses = list(ik_pose) if stacked else [ik_pose]
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
        raise invalid_pose(error) from None


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
