"""7-joint chains in closed form: one joint locked at a value, the six others solved as a 6R chain of a closed-form
family (``classification``), every branch, for many values of the locked joint in one compiled call.

Locking joint k at theta turns its motion into a fixed transform. The chain's compiled table is kept, with that
row's multiplier set to 0 and its offset to theta (times the axis sign), and the six other joints renumbered 0-5:
the chain's own FK (``model.chain_kernels``) then checks every branch, as ``kernels.solve_pose`` does for 6R
chains. The 6R geometry at zero (axes, points, tip pose) depends on theta: ``locked_geometry`` rebuilds it per
value for the family found at initialize. A joint qualifies when, classified at one value of its range, the closed
form solves configurations back from their poses at SAMPLED_VALUES values spread over the range, zero included.
The joints found are kept per chain (``redundant_chain``): initializing the same arm again costs nothing.
"""
from __future__ import annotations

import math
import re
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

import numpy as np

from ...compiled import compiled_kernel
from ...errors import ChainError
from ...model import chain_kernels as ck
from ...model import ranges
from ...model.chain import Chain
from . import families as fam
from .classification import ChainGeometry, Classification, classify_geometry
from .kernels import solve_pose
from .near_ideal import DEFAULT_TOLERANCE, FamilyTolerance, idealize, meeting_point

#: Chain descriptions whose ``RedundantChain`` is kept.
KEPT_CHAINS = 32
_KEPT: dict[tuple, RedundantChain] = {}
_KEPT_LOCK = threading.Lock()
#: Values of the locked joint at which its 6R family must hold (spread over the range; zero added).
SAMPLED_VALUES = 13
#: Configurations solved back from their poses per sampled value, and how near the configuration must be found [rad].
ROUND_TRIPS = 2
ROUND_TRIP_TOLERANCE = 1e-4
#: Configurations over which the self-motion is sampled to choose the joint to lock.
SELF_MOTION_SAMPLES = 32
#: The fraction of a step by which the sampled values are shifted off the range's ends and round numbers.
SAMPLE_SHIFT = 0.381966


@compiled_kernel(inline="always")
def _unit_normal(axis, out):
    """out <- a unit vector perpendicular to ``axis`` (as ``classification._unit_normal``)."""
    other = np.zeros(3)
    other[np.argmin(np.abs(axis))] = 1.0
    out[0] = axis[1] * other[2] - axis[2] * other[1]
    out[1] = axis[2] * other[0] - axis[0] * other[2]
    out[2] = axis[0] * other[1] - axis[1] * other[0]
    out /= math.sqrt(out[0] ** 2 + out[1] ** 2 + out[2] ** 2)


@compiled_kernel
def locked_geometry(segments, joint_info, locked, sign, value, config, ideal_sets, geometry):
    """The packed 6R geometry (``families``) of the six free joints with joint ``locked`` at ``value`` [rad] ->
    ``geometry`` (of their nearest ideal arm when config[3] is 1: ``near_ideal``); writes the value into ``segments``
    (the locked table). ``ideal_sets`` (int64, 6): the first joint and count of the axes meeting at the wrist
    point, then at the shoulder point (count 0: the wrist point), then of the parallel ones (``near_ideal``). False
    when the axes meant to meet are parallel at this value (no geometry)."""
    segments[locked, 16] = sign * value
    m = joint_info.shape[0]
    R = np.empty((3, 3))
    p = np.empty(3)
    axes_all = np.empty((m, 3))
    points_all = np.empty((m, 3))
    ck.chain_pose(np.zeros(6), segments, joint_info, R, p, axes_all, points_all)
    axes = np.empty((6, 3))
    points = np.empty((6, 3))
    j = 0
    for k in range(m):
        if k != locked:
            axes[j] = axes_all[k] * segments[k, 15]
            points[j] = points_all[k]
            j += 1
    R0 = R.copy()
    p0 = p.copy()
    if config[2] == 1:  # solved reversed: the chain from tip to base (``ChainGeometry.reversed``)
        R0 = R.T.copy()
        forward_axes, forward_points = axes.copy(), points.copy()
        for i in range(3):
            p0[i] = -(R0[i, 0] * p[0] + R0[i, 1] * p[1] + R0[i, 2] * p[2])
        for k in range(6):
            for i in range(3):
                axes[k, i] = -(R[0, i] * forward_axes[5 - k, 0] + R[1, i] * forward_axes[5 - k, 1]
                               + R[2, i] * forward_axes[5 - k, 2])
                points[k, i] = (R[0, i] * (forward_points[5 - k, 0] - p[0])
                                + R[1, i] * (forward_points[5 - k, 1] - p[1])
                                + R[2, i] * (forward_points[5 - k, 2] - p[2]))
    if config[3] == 1 and not idealize(axes, points, ideal_sets, np.empty(6), np.empty(6)):
        return False
    geometry[0:6] = axes
    geometry[6:12] = points
    if not meeting_point(axes, points, ideal_sets[0], ideal_sets[1], geometry[fam.WRIST_POINT_ROW]):
        return False
    if ideal_sets[3] > 0:
        if not meeting_point(axes, points, ideal_sets[2], ideal_sets[3], geometry[fam.SHOULDER_POINT_ROW]):
            return False
    else:
        geometry[fam.SHOULDER_POINT_ROW] = geometry[fam.WRIST_POINT_ROW]
    _unit_normal(axes[5], geometry[fam.NORMAL_TO_H6_ROW])
    _unit_normal(axes[1], geometry[fam.NORMAL_TO_H2_ROW])
    geometry[fam.TIP_ROTATION_ROW:fam.TIP_ROTATION_ROW + 3] = R0
    geometry[fam.TIP_POSITION_ROW] = p0
    return True


@compiled_kernel
def solve_locked_values(T, seed, values, segments, joint_info, locked, sign, config, ideal_sets, lower, upper,
                        wanted, out_q, out_codes, counts, failed):
    """For each of ``values`` of the locked joint, ``kernels.solve_pose`` of the six free joints (``seed``, limits:
    theirs) -> out_q[v] (MAX_BRANCHES, 6), out_codes[v], counts[v] and failed[v] (its near misses; none where the
    family's geometry does not exist at that value)."""
    table = segments.copy()
    geometry = np.empty((fam.GEOMETRY_ROWS, 3))
    for v in range(values.shape[0]):
        counts[v], failed[v] = 0, 0
        if locked_geometry(table, joint_info, locked, sign, values[v], config, ideal_sets, geometry):
            counts[v], failed[v] = solve_pose(T, seed, geometry, config, table, joint_info, lower, upper, wanted,
                                              out_q[v], out_codes[v])


class LockedJointSolver:
    """Every branch of a 7-joint chain with joint ``locked`` at given values: for each value, the in-limit branches
    of the six others (each joint's whole-turn equivalent nearest the seed), checked by the chain's FK, distinct,
    nearest the seed first, as ``ClosedFormSolver``. Solutions are 7-vectors, the locked joint at its value."""

    def __init__(self, chain: Chain, locked: int, classification: Classification):
        self.chain = chain
        self.locked = locked
        self.classification = classification
        self.free = np.array([k for k in range(chain.dof) if k != locked])
        self.tables = locked_tables(chain, locked)
        self._arguments = (*self.tables, locked, float(chain.compiled[0][locked, 15]), classification.config,
                           classification.ideal_sets,
                           np.ascontiguousarray(chain.lower[self.free]), np.ascontiguousarray(chain.upper[self.free]))

    @property
    def joint_name(self) -> str:
        return self.chain.joint_names[self.locked]

    @property
    def name(self) -> str:
        """E.g. 'iiwa_joint_3 locked: spherical wrist (axes 5-7 meet), axes 1 and 2 intersect' (the chain's
        joint numbers)."""
        numbers = [int(k) + 1 for k in self.free]
        renumbered = re.sub(r"(\d)(-| and )(\d)", lambda m: f"{numbers[int(m[1]) - 1]}{m[2]}{numbers[int(m[3]) - 1]}",
                            self.classification.name)
        deviation = "" if self.classification.exact else f", within {self.classification.deviation}"
        return f"{self.joint_name} locked: {renumbered}{deviation}"

    def solve_values(self, T_base_tip: np.ndarray, seed: np.ndarray, values: np.ndarray, wanted: int = fam.MAX_BRANCHES
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """For ``values`` (V,) [rad] of the locked joint: (solutions (V, MAX_BRANCHES, 7), branch codes
        (V, MAX_BRANCHES), counts (V,), near misses (V,)); row v holds counts[v] solutions (all, or the ``wanted``
        nearest the seed (7,)), then unused rows, and its failed[v] near misses in its last rows (see
        ``kernels.solve_pose``). T_base_tip (4, 4) and seed float64, contiguous."""
        values = np.ascontiguousarray(values, dtype=np.float64)
        n = len(values)
        free_q = np.empty((n, fam.MAX_BRANCHES, 6))
        codes = np.empty((n, fam.MAX_BRANCHES), dtype=np.int64)
        counts = np.empty(n, dtype=np.int64)
        failed = np.empty(n, dtype=np.int64)
        solve_locked_values(T_base_tip, np.ascontiguousarray(seed[self.free]), values, *self._arguments, wanted,
                            free_q, codes, counts, failed)
        q = np.empty((n, fam.MAX_BRANCHES, self.chain.dof))
        q[:, :, self.free] = free_q
        q[:, :, self.locked] = values[:, None]
        return q, codes, counts, failed

    def solve(self, T_base_tip, seed, value: float) -> np.ndarray:
        """Every in-limit solution (k, 7) reaching ``T_base_tip`` with the locked joint at ``value``, nearest the
        seed first."""
        q, _, counts, _ = self.solve_values(np.ascontiguousarray(T_base_tip, dtype=np.float64),
                                            np.asarray(seed, dtype=np.float64), np.array([value]))
        return q[0, :counts[0]]


def locked_tables(chain: Chain, locked: int) -> tuple[np.ndarray, np.ndarray]:
    """(segments, joint_info) of ``chain`` with joint ``locked`` fixed (multiplier 0, offset 0 until a value is
    written) and the other joints driven by variables 0-5 (see ``model.chain_kernels``)."""
    segments, joint_info = chain.compiled
    segments = segments.copy()
    segments[locked, 15:17] = 0.0
    joint_info = joint_info.copy()
    free = [k for k in range(joint_info.shape[0]) if k != locked]
    joint_info[free, 1] = np.arange(len(free))
    joint_info[locked, 1] = 0
    return np.ascontiguousarray(segments), np.ascontiguousarray(joint_info)


def locked_geometry_of(chain: Chain, locked: int, value: float) -> ChainGeometry:
    """The 6R geometry at zero of the six free joints, joint ``locked`` at ``value`` [rad] (numpy, for the
    classification)."""
    segments, joint_info = locked_tables(chain, locked)
    segments[locked, 16] = chain.compiled[0][locked, 15] * value
    m = joint_info.shape[0]
    R, p = np.empty((3, 3)), np.empty(3)
    axes, points = np.empty((m, 3)), np.empty((m, 3))
    ck.chain_pose(np.zeros(6), segments, joint_info, R, p, axes, points)
    free = [k for k in range(m) if k != locked]
    T_zero = np.eye(4)
    T_zero[:3, :3], T_zero[:3, 3] = R, p
    return ChainGeometry((axes * segments[:m, 15:16])[free], points[free], T_zero)


def sampled_values(chain: Chain, joint: int) -> np.ndarray:
    """SAMPLED_VALUES values spread over joint's range (continuous: a turn), off its ends, and zero if inside."""
    low = chain.lower[joint] if np.isfinite(chain.lower[joint]) else -math.pi
    high = chain.upper[joint] if np.isfinite(chain.upper[joint]) else math.pi
    values = ranges.spread(low, high, (np.arange(SAMPLED_VALUES) + SAMPLE_SHIFT) / SAMPLED_VALUES)
    return np.append(values, 0.0) if low <= 0.0 <= high else values


def locked_joint_report(chain: Chain, locked: int, tolerance: FamilyTolerance = DEFAULT_TOLERANCE
                        ) -> tuple[LockedJointSolver | None, str]:
    """(the solver with joint ``locked`` locked, or None; a sentence for the log saying which family or why not).

    The family is classified at the first sampled value (an exact one, or the nearest ideal arm of one within
    ``tolerance``); at every sampled value, configurations are then solved back from their poses (the closed form
    holds there only if each is found again)."""
    name = chain.joint_names[locked]
    values = sampled_values(chain, locked)
    classification, reason = classify_geometry(locked_geometry_of(chain, locked, values[0]), tolerance)
    if classification is None:
        return None, f"{name} locked at {values[0]:.3g} rad: no closed form ({reason})"
    solver = LockedJointSolver(chain, locked, classification)
    rng = np.random.default_rng(0)
    lower = np.where(np.isfinite(chain.lower), chain.lower, -math.pi)
    upper = np.where(np.isfinite(chain.upper), chain.upper, math.pi)
    for value in values:
        for q in ranges.uniform(rng, lower, upper, (ROUND_TRIPS, chain.dof)):
            q[locked] = value
            solutions = solver.solve(chain.forward_kinematics(q), q, value)
            if not len(solutions) or np.abs(solutions - q).max(axis=1).min() > ROUND_TRIP_TOLERANCE:
                there, reason = classify_geometry(locked_geometry_of(chain, locked, value))
                return None, (f"{name} locked: the closed form found at {values[0]:.3g} rad "
                              f"({classification.name}) does not hold at {value:.3g} rad (there: "
                              f"{reason if there is None else there.name})")
    return solver, ""


@dataclass(frozen=True)
class RedundantChain:
    """A 7-joint chain's closed forms with one joint locked: per joint whose locking leaves one, its solver; the
    joint to lock when none is set (None without solvers); a sentence for the log (which joints, or why none)."""

    solvers: Mapping[int, LockedJointSolver]
    default_joint: int | None
    report: str

    def for_redundant_joints(self, redundant_joints: tuple[int, ...]) -> LockedJointSolver | None:
        """The solver for the redundant joints set (none: the default joint's), None if they have none."""
        if not redundant_joints:
            return self.solvers.get(self.default_joint)
        return self.solvers.get(redundant_joints[0]) if len(redundant_joints) == 1 else None


def redundant_chain(chain: Chain, tolerance: FamilyTolerance = DEFAULT_TOLERANCE) -> RedundantChain:
    """The ``RedundantChain`` of a chain (families within ``tolerance``); kept per chain description (joints, tables,
    limits) and tolerance: initializing the same arm again costs nothing."""
    segments, joint_info = chain.compiled
    key = (repr(chain), segments.tobytes(), joint_info.tobytes(), chain.lower.tobytes(), chain.upper.tobytes(),
           tolerance)
    with _KEPT_LOCK:
        found = _KEPT.get(key)
    if found is None:
        found = _redundant_chain(chain, tolerance)
        with _KEPT_LOCK:
            if len(_KEPT) >= KEPT_CHAINS:
                _KEPT.clear()
            _KEPT[key] = found
    return found


def _redundant_chain(chain: Chain, tolerance: FamilyTolerance) -> RedundantChain:
    unsuitable = _unsuitable_joints(chain)
    if unsuitable:
        return RedundantChain({}, None, f"no closed form with a joint locked for {chain!r}: {unsuitable}")
    solvers, reasons = {}, []
    for joint in range(chain.dof):
        solver, reason = locked_joint_report(chain, joint, tolerance)
        if solver is None:
            reasons.append(reason)
        else:
            solvers[joint] = solver
    if not solvers:
        return RedundantChain({}, None, f"no closed form with any one joint of {chain!r} locked: " + "; ".join(reasons))
    default = default_locked_joint(chain, solvers)
    others = [solver.joint_name for joint, solver in solvers.items() if joint != default]
    return RedundantChain(MappingProxyType(solvers), default, (
        f"closed form with {solvers[default].name} (the redundant joint unless setRedundantJoints names another"
        f"{'; these work too: ' + ', '.join(others) if others else ''})"))


def default_locked_joint(chain: Chain, solvers: Mapping[int, LockedJointSolver]) -> int:
    """The joint to lock when none is set: among ``solvers``' joints, the one the arm's self-motion moves most
    (the median over SELF_MOTION_SAMPLES configurations of its share of the Jacobian's null vector), so that its
    values spread the solutions along the redundancy (the KUKA iiwa's joint 3, the Panda's joint 7)."""
    rng = np.random.default_rng(0)
    lower = np.where(np.isfinite(chain.lower), chain.lower, -math.pi)
    upper = np.where(np.isfinite(chain.upper), chain.upper, math.pi)
    shares = []
    for q in ranges.uniform(rng, lower, upper, (SELF_MOTION_SAMPLES, chain.dof)):
        null = np.abs(np.linalg.svd(chain.jacobian(q))[2][-1])
        shares.append(null / null.max())
    moved = np.median(shares, axis=0)
    return max(solvers, key=lambda joint: (moved[joint], -joint))


def for_chain(chain: Chain, locked: int, tolerance: FamilyTolerance = DEFAULT_TOLERANCE) -> LockedJointSolver:
    """The solver of ``chain`` with joint ``locked`` locked; raises ChainError saying why there is none."""
    unsuitable = _unsuitable_joints(chain)
    solver, reason = (None, unsuitable) if unsuitable else locked_joint_report(chain, locked, tolerance)
    if solver is None:
        raise ChainError(f"no closed form for {chain!r}: {reason}")
    return solver


def _unsuitable_joints(chain: Chain) -> str:
    segments, joint_info = chain.compiled
    if chain.dof != 7 or joint_info.shape[0] != 7:
        return f"a joint locked leaves 6 only of 7 joints; the chain has {chain.dof} variables"
    if not np.all(chain.is_revolute):
        return "the closed forms need revolute joints only"
    if not (np.array_equal(joint_info[:, 1], np.arange(7)) and np.all(np.abs(segments[:7, 15]) == 1.0)
            and np.all(segments[:7, 16] == 0.0)):
        return "the closed forms do not handle mimic joints"
    return ""
