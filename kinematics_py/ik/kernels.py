"""Compiled IK searches: whole local searches from many starts, one call, no Python per iteration.

The task error is ``task_error``'s, the steps are ``steps``'; the containers (SolverTables,
SearchBounds, Starts, Workspace) are ``kernel_data``'s. Kernels called from Python take them packed
(``kernel_data.packed``).
"""
from __future__ import annotations

import numpy as np
from numba import prange

from ..compiled import compiled_kernel
from .kernel_data import (
    ChainTables,
    SearchBounds,
    SearchSettings,
    SolverTables,
    Starts,
    as_search_bounds,
    as_solver_tables,
    new_workspace,
)
from .steps import (
    METHOD_LEVENBERG_MARQUARDT,
    METHOD_PSEUDO_INVERSE,
    cholesky_solve,
    jacobian_transpose_step,
    pseudo_inverse_step,
)
from .task_error import task_error_and_jacobian, weighted_cost, within_tolerance

#: A search this close (half squared error) is never abandoned as stalled: near a joint limit the last
#: digits can come slowly, and restarting would throw the nearly found solution away.
STALL_EXEMPT_BELOW_COST = 1e-6
#: Restarts near the best configuration begin once a search came this close (half squared error).
PERTURB_BELOW_COST = 1e-4
#: Half-width [rad or m] of the box around the best configuration those restarts are drawn from.
PERTURB_RADIUS = 0.3
#: Slack [rad or m] on the joint limits: a value this far outside still counts as within them (verification
#: here, limit diagnostics, the closed form, the node's state validity).
LIMIT_SLACK = 1e-9
TWO_PI = 2.0 * np.pi
#: Relative slack on the tolerances when verifying a solution.
VERIFY_TOLERANCE_SLACK = 1e-6

#: Result codes of a single local search.
CONVERGED = 1
NOT_CONVERGED = 0
NON_FINITE = -1


@compiled_kernel(inline="always")
def _stalled(history, iteration, cost, settings):
    """The cost fell by less than ``stall_ratio`` over the last ``stall_iterations`` iterations."""
    return (settings.stall_iterations > 0 and iteration >= settings.stall_iterations
            and cost > STALL_EXEMPT_BELOW_COST
            and cost > settings.stall_ratio * history[iteration - settings.stall_iterations])


@compiled_kernel
def local_search(q, solver, targets, bounds, ws):
    """Iterate from ``q`` (modified in place, kept within [bounds.lower, bounds.upper]) until the pose is reached.

    ``ws`` comes from ``new_workspace``. Returns (status, cost, iterations); status is CONVERGED,
    NOT_CONVERGED or NON_FINITE.

    Notes:
        The weighting, the Levenberg-Marquardt step (the default method) and the step itself stay in this
        loop: as compiled helpers taking arrays (inlined or not; numba counts references to array arguments
        at each call) they made the whole search 8-10% slower on the bundled UR5 and Panda. The other
        methods' steps are helpers (``steps``).
    """
    # Fields are read once: an array read out of a container is reference-counted at each read.
    chains, weights, joint_weights, preferred, settings = (solver.chains, solver.weights, solver.joint_weights,
                                                           solver.preferred, solver.settings)
    segments, joint_info, tip_table = chains
    lower, upper = bounds.lower, bounds.upper
    e, J, (R, p, axes_world, origins_world, rot_error, R_error), A, JtJ, g, rhs, blocked, dq, sqrt_w, history = ws
    rows, n = J.shape
    cost = np.inf
    for iteration in range(settings.max_iterations + 1):
        if not task_error_and_jacobian(q, segments, joint_info, tip_table, targets, e, J, R, p, axes_world,
                                       origins_world, rot_error, R_error, True):
            return NON_FINITE, np.inf, iteration
        cost = weighted_cost(e, weights)
        if within_tolerance(e, weights, settings.position_tolerance, settings.orientation_tolerance):
            return CONVERGED, cost, iteration
        if iteration == settings.max_iterations:
            break
        history[iteration] = cost
        if _stalled(history, iteration, cost, settings):
            return NOT_CONVERGED, cost, iteration
        # Weighted residual and Jacobian: Jw = W^1/2 J, ew = W^1/2 e. A joint whose range is empty
        # (locked) gets a zero column, so the step leaves it alone instead of being clipped away.
        for r in range(rows):
            e[r] *= sqrt_w[r]
            for c in range(n):
                J[r, c] = J[r, c] * sqrt_w[r] if upper[c] > lower[c] else 0.0
        if settings.method == METHOD_LEVENBERG_MARQUARDT:
            # J^T W J and J^T W e once; then solve with the joints held at a bound they are pushed
            # against removed from the step (a small active set), so the others compensate.
            lam = cost + settings.damping
            for i in range(n):
                s = 0.0
                for r in range(rows):
                    s += J[r, i] * e[r]
                g[i] = s
                for j in range(i + 1):
                    s = 0.0
                    for r in range(rows):
                        s += J[r, i] * J[r, j]
                    JtJ[i, j] = s
                    JtJ[j, i] = s
            for i in range(n):
                blocked[i] = not upper[i] > lower[i]
            for _ in range(n + 1):
                for i in range(n):
                    for j in range(n):
                        A[i, j] = 0.0 if blocked[i] or blocked[j] else JtJ[i, j]
                    A[i, i] += lam / joint_weights[i]
                    rhs[i] = 0.0 if blocked[i] else g[i]
                if not cholesky_solve(A, rhs, dq):
                    return NON_FINITE, cost, iteration
                newly_blocked = False
                for i in range(n):
                    if not blocked[i] and ((q[i] <= lower[i] and dq[i] < 0.0) or (q[i] >= upper[i] and dq[i] > 0.0)):
                        blocked[i] = True
                        newly_blocked = True
                if not newly_blocked:
                    break
        elif settings.method == METHOD_PSEUDO_INVERSE:
            pseudo_inverse_step(q, joint_weights, preferred, settings.nullspace_gain, e, J, dq)
        else:
            jacobian_transpose_step(joint_weights, e, J, g, dq)
        # The step, scaled down so that no joint moves more than max_step, then clipped to the bounds.
        largest = 0.0
        for i in range(n):
            largest = max(largest, abs(dq[i]))
        scale = settings.max_step / largest if largest > settings.max_step else 1.0
        for i in range(n):
            q[i] = min(upper[i], max(lower[i], q[i] + scale * dq[i]))
    return NOT_CONVERGED, cost, settings.max_iterations


@compiled_kernel(inline="always")
def _start(q, row, bounds, near, near_best):
    """q <- the unit-cube sample ``row`` scaled into the sampling box, or, with ``near_best``, into the box of
    half-width PERTURB_RADIUS around ``near``; clipped to the bounds."""
    lower, upper, sample_lower, sample_upper = bounds
    for i in range(q.shape[0]):
        if near_best:
            value = near[i] + (2.0 * row[i] - 1.0) * PERTURB_RADIUS
        else:
            value = sample_lower[i] + row[i] * (sample_upper[i] - sample_lower[i])
        q[i] = min(upper[i], max(lower[i], value))


@compiled_kernel
def multi_start_search(solver, targets, bounds, starts, q_out, best_cost_so_far):
    """Local searches from ``starts.seed`` (if ``use_seed``), then from pool rows first, first+1, ...
    (``count`` of them, modulo the pool) scaled into the sampling box, until one converges.

    A converged configuration is wrapped near the seed and verified before it is accepted.
    Once a search has come close (cost below PERTURB_BELOW_COST), every other start is instead a
    random point within PERTURB_RADIUS of the best configuration so far: targets near the joint limits
    are often reached from there when uniform restarts rarely land close enough.
    ``q_out`` holds, on entry, the best configuration of earlier calls when ``best_cost_so_far`` is finite.
    Returns (starts used, found, cost, total iterations): with ``found``, q_out holds the verified
    solution; otherwise the lowest-cost configuration reached.
    """
    solver = as_solver_tables(solver)
    bounds = as_search_bounds(bounds)
    seed, use_seed, unit_starts, first, count = starts
    n = seed.shape[0]
    pool_size = unit_starts.shape[0]
    q = np.empty(n)
    best_cost = best_cost_so_far
    total_iterations = 0
    offset = 1 if use_seed else 0
    ws = new_workspace(n, solver)
    lower, upper = bounds.lower, bounds.upper
    for s in range(count + offset):
        if s < offset:
            for i in range(n):
                q[i] = min(upper[i], max(lower[i], seed[i]))
        else:
            index = first + s - offset
            _start(q, unit_starts[index % pool_size], bounds, q_out, best_cost < PERTURB_BELOW_COST and index % 2 == 1)
        status, cost, iterations = local_search(q, solver, targets, bounds, ws)
        total_iterations += iterations
        if status == CONVERGED:
            wrap_near(q, seed, solver.is_revolute, lower, upper)
            if reaches_target(q, solver, targets, bounds, ws):
                q_out[:] = q
                return s + 1, True, cost, total_iterations
        if status != NON_FINITE and cost < best_cost:
            best_cost = cost
            q_out[:] = q
    return count + offset, False, best_cost, total_iterations


@compiled_kernel(inline="always")
def nearest_in_limits(theta, reference, lower, upper):
    """The value theta + 2 pi k [rad] nearest ``reference`` inside [lower, upper] (LIMIT_SLACK allowed, then
    clipped to them), or NaN if there is none."""
    # Float (not int) rounding: infinite limits (continuous joints) give infinite bounds on k.
    k_low = np.ceil((lower - LIMIT_SLACK - theta) / TWO_PI)
    k_high = np.floor((upper + LIMIT_SLACK - theta) / TWO_PI)
    if k_low > k_high:
        return np.nan
    k = min(max(np.rint((reference - theta) / TWO_PI), k_low), k_high)
    return min(max(theta + TWO_PI * k, lower), upper)


@compiled_kernel
def wrap_near(q, reference, is_revolute, lower, upper):
    """Shift revolute joints of q (in place) by whole turns to lie nearest ``reference`` within the limits
    (a joint with no whole-turn equivalent inside them is left as it is)."""
    for i in range(q.shape[0]):
        if is_revolute[i]:
            value = nearest_in_limits(q[i], reference[i], lower[i], upper[i])
            if not np.isnan(value):
                q[i] = value


@compiled_kernel
def reaches_target(q, solver, targets, bounds, ws):
    """q is finite, inside the bounds and within tolerance of every target on the weighted axes.

    Uses ws.e and ws.fk as scratch.
    """
    lower, upper = bounds.lower, bounds.upper
    for i in range(q.shape[0]):
        if not (lower[i] - LIMIT_SLACK <= q[i] <= upper[i] + LIMIT_SLACK):
            return False
    segments, joint_info, tip_table = solver.chains
    R, p, axes_world, origins_world, rot_error, R_error = ws.fk
    if not task_error_and_jacobian(q, segments, joint_info, tip_table, targets, ws.e, ws.J, R, p, axes_world,
                                   origins_world, rot_error, R_error, False):
        return False
    settings = solver.settings
    return within_tolerance(ws.e, solver.weights, settings.position_tolerance * (1.0 + VERIFY_TOLERANCE_SLACK),
                            settings.orientation_tolerance * (1.0 + VERIFY_TOLERANCE_SLACK))


@compiled_kernel(parallel=True, nogil=False)
def batch_search(solver, bounds, all_targets, seeds, unit_starts, max_starts, q_out, found, costs):
    """One multi-start search per target set (all_targets (B, t, 4, 4)), spread over the CPU cores
    (``solver`` and ``bounds`` packed).

    Each search starts from seeds[b] (also its preferred posture), then from up to ``max_starts - 1``
    pool rows beginning at a pose-dependent offset. ``found[b]`` marks verified solutions (wrapped near
    their seed).
    """
    # A parallel loop takes arrays, scalars and tuples of scalars, not containers of arrays: the packed
    # containers are taken apart out here and rebuilt per search.
    (segments, joint_info, tip_table), weights, joint_weights, _, is_revolute, settings = solver
    lower, upper, sample_lower, sample_upper = bounds
    pool_size = unit_starts.shape[0]
    for b in prange(all_targets.shape[0]):
        seeded = SolverTables(ChainTables(segments, joint_info, tip_table), weights, joint_weights, seeds[b],
                              is_revolute, SearchSettings(*settings))
        starts = Starts(seeds[b], True, unit_starts, (b * 7919) % pool_size, max_starts - 1)
        _, found[b], costs[b], _ = multi_start_search(
            seeded, all_targets[b], SearchBounds(lower, upper, sample_lower, sample_upper), starts, q_out[b], np.inf)
