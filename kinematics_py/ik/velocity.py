"""Joint velocities from a Cartesian twist of a group's tip: KDL's ``ChainIkSolverVel_pinv_nso``, in Python.

``VelocityIKSolver(plugin)`` answers ``cart_to_jnt(q, twist)`` with the numbers of KDL's solver on the same chain
(checked against Debian's PyKDL 1.5.1 in test/ik/test_velocity.py) and its error codes, except where KDL's are
not useful (measured with PyKDL 1.5.1):

- KDL's _nso solver answers 0 even where it zeroed a singular value; here that is ``E_DEGRADED`` (+1), as the
  plain ``ChainIkSolverVel_pinv`` reports its singular answers. A 7-joint arm's seventh singular value is always
  zero: only those within the Jacobian's rank count.
- KDL built without ``opt_pos`` and ``weights`` answers -4 (size mismatch) to every call; here the defaults work:
  no null-space term until ``opt_pos`` is set, weights of 1.
- Bad input (wrong lengths, non-finite values, an unknown tip) raises ``VelocityIKError`` or ``JointValueError``
  naming what is valid, instead of a negative code.
- ``maxiter`` bounds the sweeps of the SVD (one-sided Jacobi; KDL's counts QR iterations): a decomposition that
  does not converge within it answers ``E_SVD_FAILED`` with zero velocities, as KDL's does.
- Where no singular value is below the cut-off (``eps``, or the damping threshold with the damping on), the
  answer is the plain pseudo-inverse's, solved through the LQ decomposition of the Jacobian (Householder);
  where ``1 / ||L^-1||_F`` proves it (nearly every state away from a singularity) the SVD is not made at all,
  and ``svd_result`` makes it when read (``velocity_kernels``). Same numbers, 0.4-0.8x KDL's time per call
  (docs/benchmarks.md).

Beyond KDL (``VelocityIKOptions``, all off by default): damped least squares near singularities, a pull away
from the joint limits in the null space, task-space weights, and ``cart_to_jnt_batch`` over many states in one
compiled call on every core.

A solver holds its last SVD (``svd_result``), as KDL's does: use one solver per thread.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from enum import IntEnum
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from ..compiled import PARALLEL_KERNEL_LOCK
from ..errors import JointValueError, KinematicsError, UnknownLinkError
from . import velocity_kernels as vk

if TYPE_CHECKING:
    from .plugin import KinematicsPlugin

#: Twist components, in order: linear velocity of the tip origin [m/s], angular velocity [rad/s], base frame.
TWIST_AXES = ("vx", "vy", "vz", "wx", "wy", "wz")


class VelocityIKError(KinematicsError, ValueError):
    """A twist, setting or option the velocity solver cannot use; the message says what is valid."""


class VelocityIKCode(IntEnum):
    """KDL's SolverI codes that ``cart_to_jnt`` answers with."""

    E_DEGRADED = vk.E_DEGRADED
    E_NOERROR = vk.E_NOERROR
    E_SVD_FAILED = vk.E_SVD_FAILED


@dataclass(frozen=True)
class VelocityIKOptions:
    """What the solver does beyond KDL; the defaults do none of it.

    ``damping`` [-] (lambda, > 0 turns it on): below ``damping_threshold`` each singular value s is inverted as
    s / (s^2 + lambda^2 (1 - (s / threshold)^2)) instead of being cut off at ``eps``, so the velocities stay
    bounded and continuous through a singularity (variable damping, as Nakamura and Hanafusa; 1 / s above).
    ``joint_limit_gain`` [rad/s]: a null-space velocity of each bounded joint toward the middle of its range,
    ``-gain * (q - middle) / half_range`` (the whole gain at a limit). ``task_weights`` (6,) >= 0, in
    TWIST_AXES order: the twist components are matched in the least-squares sense weighted by these (0 drops a
    component, e.g. the rotation about z); None weighs them alike, as KDL.
    """

    damping: float = 0.0
    damping_threshold: float = 0.05
    joint_limit_gain: float = 0.0
    task_weights: tuple[float, ...] | None = None

    def __post_init__(self):
        for name in ("damping", "damping_threshold", "joint_limit_gain"):
            value = getattr(self, name)
            if not (isinstance(value, (int, float)) and math.isfinite(value) and value >= 0):
                raise VelocityIKError(f"VelocityIKOptions.{name} must be a finite number >= 0; got {value!r}")
        if self.damping > 0 and self.damping_threshold <= 0:
            raise VelocityIKError("VelocityIKOptions.damping_threshold must be > 0 when damping is on; got "
                                  f"{self.damping_threshold!r}")
        if self.task_weights is not None:
            weights = _vector(self.task_weights, 6, f"VelocityIKOptions.task_weights {TWIST_AXES}")
            if (weights < 0).any() or not weights.any():
                raise VelocityIKError(f"VelocityIKOptions.task_weights {TWIST_AXES} must be >= 0, not all 0; "
                                      f"got {weights.tolist()}")
            object.__setattr__(self, "task_weights", tuple(weights.tolist()))


class VelocityIKResult(NamedTuple):
    """``joint_velocities`` (n,) [rad/s or m/s] in the group's joint order; ``error`` a ``VelocityIKCode``."""

    joint_velocities: np.ndarray
    error: VelocityIKCode


_CODES = {int(code): code for code in VelocityIKCode}
# The hot path's names, bound once (cart_to_jnt is called per servo period and in users' loops).
_as_floats, _empty, _FLOAT, _TWIST_SHAPE = np.ascontiguousarray, np.empty, np.float64, (6,)
_velocity_ik = vk.velocity_ik
#: Builds a VelocityIKResult without the Python-level ``__new__`` of a NamedTuple (the same object).
_new_tuple = tuple.__new__


@dataclass(frozen=True)
class VelocityIKBatch:
    """``joint_velocities`` (B, n) and ``errors`` (B,) (``VelocityIKCode`` values) of ``cart_to_jnt_batch``."""

    joint_velocities: np.ndarray
    errors: np.ndarray


@dataclass(frozen=True)
class SVDResult:
    """The last call's decomposition of the (task-weighted) Jacobian, ``J = U diag(S) V^T`` (the thin SVD).

    ``code`` is KDL's ``getSVDResult()``: 0, or -2 when the SVD ran out of iterations. ``singular_values`` (6,)
    descending, ``U`` (6, 6), ``V`` (n, 6). (KDL's has n singular values, the seventh of a 7-joint arm always 0.)
    """

    code: int
    singular_values: np.ndarray
    U: np.ndarray
    V: np.ndarray


class VelocityIKSolver:
    """KDL's ``ChainIkSolverVel_pinv_nso`` over an initialised ``KinematicsPlugin``'s group.

    ``opt_pos`` (n,) the joint values the null-space motion moves toward (None: no null-space term),
    ``weights`` (n,) >= 0 their weights (None: 1 each), ``eps`` the singular value below which it is cut off,
    ``maxiter`` the SVD's sweeps, ``alpha`` the null-space gain. ``tip`` is one of the group's tips (default:
    its first). Twists are KDL's: the linear velocity of the tip origin and the angular velocity, both in the
    group's base frame (``TWIST_AXES``).
    """

    def __init__(self, plugin: KinematicsPlugin, opt_pos=None, weights=None, eps: float = 1e-5,
                 maxiter: int = 150, alpha: float = 0.25, *, tip: str | None = None,
                 options: VelocityIKOptions | None = None):
        setup = plugin.group_setup
        problem = setup.problem
        tips = problem.tip_links
        tip = tips[0] if tip is None else tip
        if tip not in tips:
            raise UnknownLinkError(tip, tips, f"the tips of group {setup.group_name!r}")
        self.joint_names: tuple[str, ...] = problem.variable_names
        self.tip = tip
        self.base = problem.base_link
        chain = problem.chains[tips.index(tip)]
        segments, joint_info = chain.compiled
        index = {name: i for i, name in enumerate(self.joint_names)}
        self._joint_info = joint_info.copy()
        self._joint_info[:, 1] = [index[chain.joint_names[v]] for v in joint_info[:, 1]]
        self.options = VelocityIKOptions() if options is None else options
        if not isinstance(self.options, VelocityIKOptions):
            raise VelocityIKError(f"options must be a VelocityIKOptions; got {type(options).__name__}")
        if not (isinstance(eps, (int, float)) and math.isfinite(eps) and eps >= 0):
            raise VelocityIKError(f"eps must be a finite number >= 0; got {eps!r}")
        if isinstance(maxiter, bool) or not isinstance(maxiter, (int, np.integer)) or maxiter < 1:
            raise VelocityIKError(f"maxiter must be an integer >= 1; got {maxiter!r}")
        self.eps = float(eps)
        self.maxiter = int(maxiter)
        n = len(self.joint_names)
        self._n = n
        task = np.ones(6) if self.options.task_weights is None else np.asarray(self.options.task_weights)
        # One array holds the settings, the joint table and the chain: the compiled call takes six arrays.
        self._params = vk.pack_params(segments, n)
        self._settings = self._params[:vk.SETTINGS_SIZE]
        self._settings[[vk.EPS, vk.DAMPING, vk.DAMPING_THRESHOLD, vk.LIMIT_GAIN, vk.RANK, vk.MAX_SWEEPS]] = (
            self.eps, self.options.damping, self.options.damping_threshold, self.options.joint_limit_gain,
            min(n, int(np.count_nonzero(task))), self.maxiter)
        self._settings[vk.TASK_WEIGHTS:] = np.sqrt(task)
        self._joint_table = self._params[vk.SETTINGS_SIZE:vk.SETTINGS_SIZE + 4 * n].reshape(4, n)
        self._joint_table[vk.LOWER], self._joint_table[vk.UPPER] = problem.lower, problem.upper
        self.alpha = alpha
        self.weights = weights
        self.opt_pos = opt_pos
        self._work = np.zeros(vk.work_size(n, len(self._joint_info)))
        self._work[-1] = 1.0  # no Jacobian to decompose before the first call: svd_result is zeros
        self._condition_work: np.ndarray | None = None
        self._svd_code = 0

    # ------------------------------------------------------------------ settings (KDL's getters and setters)
    @property
    def opt_pos(self) -> np.ndarray | None:
        """Joint values (n,) the null-space motion moves toward, or None (no null-space term)."""
        return self._joint_table[vk.OPT_POS].copy() if self._settings[vk.HAS_OPT_POS] else None

    @opt_pos.setter
    def opt_pos(self, values) -> None:
        if values is None:
            self._settings[vk.HAS_OPT_POS] = 0.0
            return
        self._joint_table[vk.OPT_POS] = self.checked_joints(values, "opt_pos")
        self._settings[vk.HAS_OPT_POS] = 1.0

    @property
    def weights(self) -> np.ndarray:
        """Weights (n,) of the joints in the null-space cost (KDL's ``weights``)."""
        return self._joint_table[vk.WEIGHTS].copy()

    @weights.setter
    def weights(self, values) -> None:
        weights = np.ones(len(self.joint_names)) if values is None else self.checked_joints(values, "weights")
        if (weights < 0).any():
            raise VelocityIKError(f"weights must be >= 0, one per joint of {list(self.joint_names)}; "
                                  f"got {weights.tolist()}")
        self._joint_table[vk.WEIGHTS] = weights

    @property
    def alpha(self) -> float:
        """The null-space gain (KDL's ``alpha``)."""
        return float(self._settings[vk.ALPHA])

    @alpha.setter
    def alpha(self, value: float) -> None:
        if not (isinstance(value, (int, float)) and math.isfinite(value)):
            raise VelocityIKError(f"alpha must be a finite number; got {value!r}")
        self._settings[vk.ALPHA] = value

    @property
    def svd_result(self) -> SVDResult:
        """The last ``cart_to_jnt`` call's SVD (copies); zeros before the first. After ``E_SVD_FAILED``, the
        unfinished decomposition where the sweeps stopped. A call at a well-conditioned state solves without it:
        it is made here, on the first read, as the call would have made it."""
        n = self._n
        if vk.decompose(self._work, n, self.maxiter) != 0:
            self._svd_code = vk.SVD_MAX_ITERATIONS
        S, Q, B = self._work[:6], self._work[6:42].reshape(6, 6), self._work[42:42 + 6 * n].reshape(6, n)
        order = np.argsort(-S, kind="stable")
        S = S[order]
        positive = S > 0.0
        V = np.zeros((n, 6))
        V[:, positive] = (B[order][positive] / S[positive, None]).T
        return SVDResult(self._svd_code, S, Q[order].T.copy(), V)

    # ------------------------------------------------------------------ solving
    def cart_to_jnt(self, q, twist) -> VelocityIKResult:
        """Joint velocities (n,) making the tip move with ``twist`` (6,) at joint values ``q`` (n,)."""
        try:
            q = _as_floats(q, dtype=_FLOAT)
            twist = _as_floats(twist, dtype=_FLOAT)
        except (TypeError, ValueError):
            q, twist = self.checked_joints(q, "q"), _vector(twist, 6, f"twist {TWIST_AXES}")
        n = self._n
        if q.shape != (n,) or twist.shape != _TWIST_SHAPE:
            self.checked_joints(q, "q")
            _vector(twist, 6, f"twist {TWIST_AXES}")
        qdot = _empty(n)
        code = _velocity_ik(q, twist, self._joint_info, self._params, qdot, self._work)
        if code < 0:
            if code == vk.NON_FINITE_INPUT:
                self.checked_joints(q, "q")
                _vector(twist, 6, f"twist {TWIST_AXES}")
            self._svd_code = vk.SVD_MAX_ITERATIONS
        else:
            self._svd_code = 0
        return _new_tuple(VelocityIKResult, (qdot, _CODES[code]))

    def condition_number(self, q) -> float:
        """The largest over the smallest singular value of the (task-weighted) Jacobian at ``q`` (n,): inf at a
        singularity (a zero singular value; on an arm of fewer than six joints, everywhere). One compiled call;
        ``svd_result`` is left as it was."""
        q = self.checked_joints(q, "q")
        if self._condition_work is None:
            self._condition_work = np.zeros(len(self._work))
        value = vk.condition_number(q, self._joint_info, self._params, self._condition_work)
        if math.isnan(value):
            raise VelocityIKError(f"the SVD did not converge within maxiter={self.maxiter} sweeps at q={q.tolist()}")
        return value

    def cart_to_jnt_batch(self, Q, twists) -> VelocityIKBatch:
        """``cart_to_jnt`` of every row of Q (B, n) and twists (B, 6) in one compiled call, on every core
        (``svd_result`` is left as it was)."""
        n = len(self.joint_names)
        Q = _array(Q, "Q")
        twists = _array(twists, "twists")
        if Q.ndim != 2 or Q.shape[1] != n or twists.shape != (len(Q), 6):
            raise VelocityIKError(f"Q must be (B, {n}) (joints {list(self.joint_names)}) and twists (B, 6) "
                                  f"{TWIST_AXES}; got {Q.shape} and {twists.shape}")
        bad_rows = np.flatnonzero(~(np.isfinite(Q).all(axis=1) & np.isfinite(twists).all(axis=1)))
        if len(bad_rows):
            raise VelocityIKError(f"Q and twists must be finite; not finite in rows {bad_rows[:10].tolist()}")
        qdot = np.empty_like(Q)
        codes = np.empty(len(Q), dtype=np.int64)
        with PARALLEL_KERNEL_LOCK:
            vk.velocity_ik_batch(Q, twists, self._joint_info, self._params, qdot, codes)
        return VelocityIKBatch(qdot, codes)

    def checked_joints(self, values, what: str) -> np.ndarray:
        """``values`` as a float array (n,) of finite joint values; JointValueError naming the joints if not."""
        array = _array(values, what)
        if array.shape != (len(self.joint_names),):
            raise JointValueError(f"{what} takes {len(self.joint_names)} values, one per joint of "
                                  f"{list(self.joint_names)}; got shape {array.shape}")
        if not np.isfinite(array).all():
            bad = [self.joint_names[i] for i in np.flatnonzero(~np.isfinite(array))]
            raise JointValueError(f"{what} must be finite; not finite for {bad}")
        return array

    def __repr__(self) -> str:
        return f"VelocityIKSolver({self.base!r} -> {self.tip!r}, joints={list(self.joint_names)})"


def _array(values, what: str) -> np.ndarray:
    try:
        return np.ascontiguousarray(values, dtype=np.float64)
    except (TypeError, ValueError) as error:
        raise VelocityIKError(f"{what} must be numbers: {error}") from None


def _vector(values, size: int, what: str) -> np.ndarray:
    array = _array(values, what)
    if array.shape != (size,) or not np.isfinite(array).all():
        raise VelocityIKError(f"{what} takes {size} finite numbers; got {array.tolist()!r}")
    return array
