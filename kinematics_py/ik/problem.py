"""An IK problem (chains from one base to one or more tips) and a solver set-up for it, ready for the kernels."""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from ..model.chain import Chain
from ..model.robot_model import RobotModel
from ..parameters import METHODS, ParameterError, SolverParameters
from .kernel_data import ChainTables, SearchSettings, SolverTables, packed
from .task_error import task_error

#: Iterations of one Jacobian-transpose search at least (it converges linearly, not quadratically).
JACOBIAN_TRANSPOSE_MIN_ITERATIONS = 20000
#: Random restarts drawn once per solver (fewer for many joints: the pool holds RESTART_POOL_VALUES values at
#: most, and RESTART_POOL_MIN_SIZE restarts at least); a search that needs more draws them afresh.
RESTART_POOL_SIZE = 4096
RESTART_POOL_VALUES = 8 * RESTART_POOL_SIZE
RESTART_POOL_MIN_SIZE = 64


@dataclass(frozen=True, eq=False)
class IkProblem:
    """The chains from one base link to one or more tips, sharing the joint vector ``variable_names``."""

    base_link: str
    tip_links: tuple[str, ...]
    chains: tuple[Chain, ...]
    variable_names: tuple[str, ...]
    lower: np.ndarray
    upper: np.ndarray
    is_continuous: np.ndarray
    is_revolute: np.ndarray
    chain_tables: ChainTables

    @classmethod
    def build(cls, model: RobotModel, base_link: str, tip_links: Sequence[str]) -> IkProblem:
        chains = tuple(model.chain(base_link, tip) for tip in tip_links)
        on_chains = {name for chain in chains for name in chain.joint_names}
        names = tuple(name for name in model.joint_names if name in on_chains)
        per_variable = {}
        for chain in chains:
            for i, name in enumerate(chain.joint_names):
                per_variable[name] = (chain.lower[i], chain.upper[i], chain.is_continuous[i], chain.is_revolute[i])
        columns = np.array([per_variable[name] for name in names], dtype=float).reshape(-1, 4)
        return cls(base_link, tuple(tip_links), chains, names, columns[:, 0].copy(), columns[:, 1].copy(),
                   columns[:, 2].astype(bool), columns[:, 3].astype(bool), _chain_tables(chains, names))

    @property
    def dof(self) -> int:
        return len(self.variable_names)

    @cached_property
    def has_continuous_joints(self) -> bool:
        return bool(self.is_continuous.any())

    @property
    def middle(self) -> np.ndarray:
        """The middle of every joint's range (0 for continuous joints)."""
        bounded = np.isfinite(self.lower) & np.isfinite(self.upper)
        middle = np.zeros(self.dof)
        middle[bounded] = (self.lower[bounded] + self.upper[bounded]) / 2
        return middle

    def task_errors(self, q: np.ndarray, targets: np.ndarray) -> np.ndarray:
        """(t, 2): per tip, (position error [m], rotation error [rad]) on every axis, unweighted."""
        e = self._task_error(q, targets)
        if e is None:
            return np.full((len(self.tip_links), 2), np.inf)
        return np.linalg.norm(e.reshape(-1, 2, 3), axis=2)

    def weighted_errors(self, q: np.ndarray, targets: np.ndarray, weights: np.ndarray) -> np.ndarray:
        """(t, 2): per tip, position and rotation error norms over the axes with non-zero weight."""
        e = self._task_error(q, targets)
        if e is None:
            return np.full((len(self.tip_links), 2), np.inf)
        return np.linalg.norm(np.where(weights.reshape(-1) > 0.0, e, 0.0).reshape(-1, 2, 3), axis=2)

    def _task_error(self, q: np.ndarray, targets: np.ndarray) -> np.ndarray | None:
        e = np.empty(6 * len(self.tip_links))
        if not task_error(np.ascontiguousarray(q, dtype=float), packed(self.chain_tables), targets, e):
            return None
        return e

    @cached_property
    def chain_columns(self) -> tuple[np.ndarray, ...]:
        """Per chain, the indices into ``variable_names`` of its joints."""
        index = {name: i for i, name in enumerate(self.variable_names)}
        return tuple(np.array([index[name] for name in chain.joint_names], dtype=np.int64) for chain in self.chains)

    def jacobian(self, q: np.ndarray) -> np.ndarray:
        """Stacked geometric Jacobians (6t, n) of every tip w.r.t. the problem's variables."""
        blocks = []
        for chain, columns in zip(self.chains, self.chain_columns):
            J = np.zeros((6, self.dof))
            J[:, columns] = chain.jacobian(q[columns])
            blocks.append(J)
        return np.vstack(blocks)


def _chain_tables(chains: Sequence[Chain], names: Sequence[str]) -> ChainTables:
    """The compiled chains concatenated, their joints renumbered into ``names``."""
    index = {name: i for i, name in enumerate(names)}
    segments, joint_info, table = [], [], []
    segment_row = joint_row = 0
    for chain in chains:
        chain_segments, chain_info = chain.compiled
        info = chain_info.copy()
        info[:, 1] = [index[chain.joint_names[v]] for v in chain_info[:, 1]]
        segments.append(chain_segments)
        joint_info.append(info)
        table.append((segment_row, joint_row, len(info)))
        segment_row += len(chain_segments)
        joint_row += len(info)
    return ChainTables(np.ascontiguousarray(np.concatenate(segments)),
                       np.ascontiguousarray(np.concatenate(joint_info).reshape(-1, 2)),
                       np.array(table, dtype=np.int64).reshape(-1, 3))


def task_weights(params: SolverParameters, tips: int) -> np.ndarray:
    """(t, 6) weights on the task error rows: position along base x, y, z; rotation about target x, y, z."""
    rotation_scale = 0.0 if params.position_only_ik else params.rotation_scale
    row = np.concatenate([np.asarray(params.position_axis_weights) * params.position_scale,
                          np.asarray(params.orientation_axis_weights) * rotation_scale])
    return np.tile(row, (tips, 1)).astype(float)


def search_settings(params: SolverParameters) -> SearchSettings:
    """The kernels' settings. The Jacobian transpose converges linearly, so its searches run at least
    JACOBIAN_TRANSPOSE_MIN_ITERATIONS iterations and are never cut short as stalled."""
    transpose = params.method == "jacobian_transpose"
    return SearchSettings(
        max_iterations=int(max(params.max_iterations, JACOBIAN_TRANSPOSE_MIN_ITERATIONS) if transpose
                           else params.max_iterations),
        position_tolerance=float(params.position_threshold),
        orientation_tolerance=float(params.orientation_threshold),
        damping=float(params.damping),
        max_step=float(params.max_step),
        nullspace_gain=float(params.nullspace_gain),
        method=METHODS.index(params.method),
        stall_iterations=0 if transpose else int(params.stall_iterations),
        stall_ratio=float(params.stall_ratio))


def per_joint(values: Sequence[float], default: np.ndarray, name: str, problem: IkProblem) -> np.ndarray:
    if len(values) == 0:
        return default
    if len(values) != problem.dof:
        raise ParameterError(f"{name} needs {problem.dof} values for joints {list(problem.variable_names)}; "
                         f"got {len(values)}")
    return np.asarray(values, dtype=float)


def restart_pool_size(dof: int) -> int:
    """Rows of a ``dof``-joint solver's restart pool (see RESTART_POOL_SIZE)."""
    return max(RESTART_POOL_MIN_SIZE, min(RESTART_POOL_SIZE, RESTART_POOL_VALUES // max(dof, 1)))


def sampling_box(problem: IkProblem, lower: np.ndarray, upper: np.ndarray, seed: np.ndarray):
    """(low, high) of random restarts: continuous joints within half a turn of the seed, others in their limits."""
    if not problem.has_continuous_joints:
        return lower, upper
    return np.where(np.isfinite(lower), lower, seed - math.pi), np.where(np.isfinite(upper), upper, seed + math.pi)


class SearchTiming:
    """The latest time [s] of one local search of a set-up (0: none yet), updated by each of its searches so
    that even a search's first compiled call fits its time. Mutable on purpose; a float write is thread-safe."""

    __slots__ = ("seconds_per_start",)

    def __init__(self):
        self.seconds_per_start = 0.0

    def observe(self, seconds: float, starts: int) -> None:
        """A compiled call took ``seconds`` for ``starts`` local searches: quick to follow a slower robot or
        target, slow to forget one (halved per call)."""
        self.seconds_per_start = max(seconds / max(starts, 1), 0.5 * self.seconds_per_start)


@dataclass(frozen=True, eq=False)
class SolverSetup:
    """A problem with its parameters and everything derived from them once, ready for the kernels."""

    problem: IkProblem
    params: SolverParameters
    weights: np.ndarray
    joint_weights: np.ndarray
    preferred: np.ndarray
    #: (RESTART_POOL_SIZE, n) unit-cube samples; row i is the i-th random restart of every search.
    restarts: np.ndarray
    #: The kernels' SolverTables, packed.
    tables: tuple
    #: How long one local search takes (``SearchTiming``): the one part every search updates.
    timing: SearchTiming

    @classmethod
    def build(cls, problem: IkProblem, params: SolverParameters) -> SolverSetup:
        weights = task_weights(params, len(problem.tip_links))
        joint_weights = per_joint(params.joint_weights, np.ones(problem.dof), "joint_weights", problem)
        preferred = per_joint(params.preferred_posture, problem.middle, "preferred_posture", problem)
        tables = SolverTables(problem.chain_tables, weights, joint_weights, preferred, problem.is_revolute,
                              search_settings(params))
        return cls(problem, params, weights, joint_weights, preferred,
                   np.random.default_rng(params.random_seed).random((restart_pool_size(problem.dof), problem.dof)),
                   packed(tables), SearchTiming())

    def bounds(self, lower: np.ndarray, upper: np.ndarray, seed: np.ndarray) -> tuple:
        """The kernels' SearchBounds of a search within [lower, upper] from ``seed``, packed (its fields in order)."""
        if not self.problem.has_continuous_joints:
            return lower, upper, lower, upper
        return (lower, upper, *sampling_box(self.problem, lower, upper, seed))
