"""The typed containers the IK kernels take: NamedTuples of arrays and scalars.

Inside compiled code a NamedTuple is a struct; an array read out of one is reference-counted like any
array variable, so kernels read the fields they use once, outside their loops. At the boundary from
Python a NamedTuple costs: numba types it from its class and field names on every call (about 0.15 us
per field), a plain tuple from a cached fingerprint. So Python hands each container to a kernel as
``packed(container)`` (nested plain tuples, same order), and the kernel turns it back with
``as_solver_tables``, ``as_search_bounds`` or ``as_chain_tables`` (which accept the NamedTuple too) or
unpacks it.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..compiled import compiled_kernel


class ChainTables(NamedTuple):
    """The chains from the base to each tip, concatenated (layout: ``model.chain_kernels``).

    Tip k's chain is rows ``tip_table[k] = (segment_start, joint_start, joint_count)`` of ``segments``
    and ``joint_info``; joint_info column 1 indexes the problem's joint vector q.
    """

    segments: np.ndarray  # (S, SEGMENT_WIDTH) float64
    joint_info: np.ndarray  # (J, 2) int64
    tip_table: np.ndarray  # (t, 3) int64


class SearchSettings(NamedTuple):
    """How one local search iterates (from ``SolverParameters``; types exact: int or float)."""

    max_iterations: int
    position_tolerance: float  # [m]
    orientation_tolerance: float  # [rad]
    damping: float
    max_step: float  # largest joint change of one iteration [rad or m]
    nullspace_gain: float
    method: int  # steps.METHOD_*
    stall_iterations: int  # 0: never abandon a search as stalled
    stall_ratio: float


class SolverTables(NamedTuple):
    """Everything a search needs that a solver set-up fixes once."""

    chains: ChainTables
    weights: np.ndarray  # (t, 6): position rows along base x, y, z; rotation rows about target x, y, z
    joint_weights: np.ndarray  # (n,): larger moves a joint more readily
    preferred: np.ndarray  # (n,): posture the pseudo-inverse's null-space motion pulls toward
    is_revolute: np.ndarray  # (n,) bool: revolute joints are wrapped by whole turns
    settings: SearchSettings


class SearchBounds(NamedTuple):
    """Joint bounds of one search [rad or m]: solutions stay in [lower, upper]; random restarts are drawn
    uniformly in [sample_lower, sample_upper] (finite)."""

    lower: np.ndarray
    upper: np.ndarray
    sample_lower: np.ndarray
    sample_upper: np.ndarray


class Starts(NamedTuple):
    """Where the local searches of one multi-start search begin."""

    seed: np.ndarray  # (n,) [rad or m]: the first start if use_seed; solutions are wrapped near it
    use_seed: bool
    unit_starts: np.ndarray  # (pool, n) unit-cube samples, scaled into the sampling box
    first: int  # the pool row of the first random start
    count: int  # random starts (rows first, first + 1, ... modulo the pool)


class FkScratch(NamedTuple):
    """Scratch of one chain's pose and Jacobian (m: the longest chain's joint count)."""

    R: np.ndarray  # (3, 3) tip rotation
    p: np.ndarray  # (3,) tip position
    axes_world: np.ndarray  # (m, 3)
    origins_world: np.ndarray  # (m, 3)
    rot_error: np.ndarray  # (3,)
    R_error: np.ndarray  # (3, 3)


class Workspace(NamedTuple):
    """Scratch arrays of ``local_search``, allocated once per multi-start search (rows = 6 t)."""

    e: np.ndarray  # (rows,) task error, then weighted
    J: np.ndarray  # (rows, n) Jacobian, then weighted
    fk: FkScratch
    A: np.ndarray  # (n, n) normal matrix of one solve
    JtJ: np.ndarray  # (n, n)
    g: np.ndarray  # (n,) gradient J^T W e
    rhs: np.ndarray  # (n,)
    blocked: np.ndarray  # (n,) bool: joints the step leaves alone
    dq: np.ndarray  # (n,) step
    sqrt_w: np.ndarray  # (rows,) square roots of the task weights
    history: np.ndarray  # (max_iterations + 1,) cost per iteration


def packed(container: tuple) -> tuple:
    """``container`` (a NamedTuple, possibly nested) as plain tuples: the form kernels take from Python."""
    return tuple(packed(value) if isinstance(value, tuple) else value for value in container)


@compiled_kernel(inline="always")
def as_chain_tables(chains):
    """A ChainTables from one or from its packed form."""
    return ChainTables(chains[0], chains[1], chains[2])


@compiled_kernel(inline="always")
def as_solver_tables(solver):
    """A SolverTables from one or from its packed form."""
    return SolverTables(as_chain_tables(solver[0]), solver[1], solver[2], solver[3], solver[4],
                        SearchSettings(*solver[5]))


@compiled_kernel(inline="always")
def as_search_bounds(bounds):
    """A SearchBounds from one or from its packed form."""
    return SearchBounds(bounds[0], bounds[1], bounds[2], bounds[3])


@compiled_kernel(inline="always")
def longest_chain(chains):
    """The largest joint count of the chains (at least 1)."""
    m_max = 1
    for k in range(chains.tip_table.shape[0]):
        m_max = max(m_max, chains.tip_table[k, 2])
    return m_max


@compiled_kernel(inline="always")
def new_fk_scratch(chains):
    """A FkScratch for the chains of ``chains``."""
    m_max = longest_chain(chains)
    return FkScratch(np.empty((3, 3)), np.empty(3), np.empty((m_max, 3)), np.empty((m_max, 3)), np.empty(3),
                     np.empty((3, 3)))


@compiled_kernel(inline="always")
def new_workspace(n, solver):
    """A Workspace for ``local_search`` on a joint vector of n values."""
    tips = solver.chains.tip_table.shape[0]
    rows = 6 * tips
    sqrt_w = np.empty(rows)
    for k in range(tips):
        for i in range(6):
            sqrt_w[6 * k + i] = np.sqrt(solver.weights[k, i])
    return Workspace(np.empty(rows), np.zeros((rows, n)), new_fk_scratch(solver.chains), np.empty((n, n)),
                     np.empty((n, n)), np.empty(n), np.empty(n), np.zeros(n, dtype=np.bool_), np.empty(n), sqrt_w,
                     np.empty(solver.settings.max_iterations + 1))
