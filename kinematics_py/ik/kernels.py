"""Compiled IK searches: whole local searches from many starts, one call, no Python per iteration.

A problem has t tips sharing one joint vector q (n,). Tip k's chain is rows
``tip_table[k] = (segment_start, joint_start, joint_count)`` of the concatenated ``segments`` /
``joint_info`` arrays (layout in ``compiled_kinematics``; joint_info column 1 indexes q).

Task error of tip k (6,): position error ``p_target - p`` [m] in the base frame, then the rotation
vector [rad] taking the current orientation to the target, expressed in the *target* frame so that
weights on rotation rows mean "about the target's x, y, z axes". ``weights`` (t, 6) multiply the
squared errors; a zero weight frees that axis.

Step methods (``method``): 0 Levenberg-Marquardt with error-dependent damping (Sugihara: lambda =
E + damping, E = half the weighted squared error), 1 SVD pseudo-inverse (+ optional null-space
motion toward a preferred posture), 2 Jacobian transpose (Buss' step length).
Per-joint weights ``joint_weights`` (n,): larger moves a joint more readily.
"""
from __future__ import annotations

import numpy as np
from numba import prange

from ..compiled import compiled_kernel
from ..model.chain_kernels import chain_jacobian_from_pose, chain_pose

METHOD_LEVENBERG_MARQUARDT = 0
METHOD_PSEUDO_INVERSE = 1
METHOD_JACOBIAN_TRANSPOSE = 2

# Layout of the float ``settings`` vector.
S_MAX_ITERATIONS = 0
S_POSITION_TOLERANCE = 1
S_ORIENTATION_TOLERANCE = 2
S_DAMPING = 3
S_MAX_STEP = 4
S_NULLSPACE_GAIN = 5
S_METHOD = 6
S_STALL_ITERATIONS = 7
S_STALL_RATIO = 8
SETTINGS_SIZE = 9

#: A search this close (half squared error) is never abandoned as stalled: near a joint limit the last
#: digits can come slowly, and restarting would throw the nearly found solution away.
STALL_EXEMPT_BELOW_COST = 1e-6
#: Restarts near the best configuration begin once a search came this close (half squared error).
PERTURB_BELOW_COST = 1e-4
#: Half-width [rad or m] of the box around the best configuration those restarts are drawn from.
PERTURB_RADIUS = 0.3

#: Result codes of a single local search.
CONVERGED = 1
NOT_CONVERGED = 0
NON_FINITE = -1


@compiled_kernel(inline="always")
def _rotation_vector(R, out):
    """out <- log(R) as a rotation vector (axis * angle)."""
    cos_angle = (R[0, 0] + R[1, 1] + R[2, 2] - 1.0) * 0.5
    cos_angle = min(1.0, max(-1.0, cos_angle))
    angle = np.arccos(cos_angle)
    sx = R[2, 1] - R[1, 2]
    sy = R[0, 2] - R[2, 0]
    sz = R[1, 0] - R[0, 1]
    if angle < 1e-7:
        out[0] = 0.5 * sx
        out[1] = 0.5 * sy
        out[2] = 0.5 * sz
    elif np.pi - angle < 1e-4:
        k = 0
        if R[1, 1] > R[k, k]:
            k = 1
        if R[2, 2] > R[k, k]:
            k = 2
        scale = 1.0 / np.sqrt(2.0 * (1.0 + R[k, k]))
        ax = R[0, k] * scale
        ay = R[1, k] * scale
        az = R[2, k] * scale
        if k == 0:
            ax += scale
        elif k == 1:
            ay += scale
        else:
            az += scale
        if ax * sx + ay * sy + az * sz < 0.0:
            ax, ay, az = -ax, -ay, -az
        norm = np.sqrt(ax * ax + ay * ay + az * az)
        out[0] = angle * ax / norm
        out[1] = angle * ay / norm
        out[2] = angle * az / norm
    else:
        f = angle / (2.0 * np.sin(angle))
        out[0] = f * sx
        out[1] = f * sy
        out[2] = f * sz



@compiled_kernel
def task_error_and_jacobian(q, segments, joint_info, tip_table, targets, e, J, R, p, axes_world, origins_world,
                            rot_error, R_error, want_jacobian):
    """Fill e (6t,) and, if asked, J (6t, n). Returns False if q has a non-finite value."""
    n_tips = tip_table.shape[0]
    for k in range(n_tips):
        s0 = tip_table[k, 0]
        j0 = tip_table[k, 1]
        m = tip_table[k, 2]
        segs = segments[s0:s0 + m + 1]
        info = joint_info[j0:j0 + m]
        if not chain_pose(q, segs, info, R, p, axes_world, origins_world):
            return False
        T = targets[k]
        r = 6 * k
        for i in range(3):
            e[r + i] = T[i, 3] - p[i]
        # R_err = R_target @ R^T (base frame); its log, then expressed in the target frame.
        for i in range(3):
            for j in range(3):
                R_error[i, j] = T[i, 0] * R[j, 0] + T[i, 1] * R[j, 1] + T[i, 2] * R[j, 2]
        _rotation_vector(R_error, rot_error)
        for i in range(3):
            e[r + 3 + i] = T[0, i] * rot_error[0] + T[1, i] * rot_error[1] + T[2, i] * rot_error[2]
        if want_jacobian:
            Jk = J[r:r + 6]
            chain_jacobian_from_pose(p, info, segs[:m, 15], axes_world, origins_world, Jk)
            for c in range(J.shape[1]):
                wx = Jk[3, c]
                wy = Jk[4, c]
                wz = Jk[5, c]
                Jk[3, c] = T[0, 0] * wx + T[1, 0] * wy + T[2, 0] * wz
                Jk[4, c] = T[0, 1] * wx + T[1, 1] * wy + T[2, 1] * wz
                Jk[5, c] = T[0, 2] * wx + T[1, 2] * wy + T[2, 2] * wz
    return True


@compiled_kernel(inline="always")
def _within_tolerance(e, weights, position_tolerance, orientation_tolerance):
    """Every tip's weighted position and rotation errors (norms over the weighted axes) are within tolerance."""
    for k in range(weights.shape[0]):
        r = 6 * k
        position = 0.0
        rotation = 0.0
        for i in range(3):
            if weights[k, i] > 0.0:
                position += e[r + i] * e[r + i]
            if weights[k, 3 + i] > 0.0:
                rotation += e[r + 3 + i] * e[r + 3 + i]
        if position > position_tolerance * position_tolerance or rotation > orientation_tolerance * orientation_tolerance:
            return False
    return True


@compiled_kernel(inline="always")
def _cost(e, weights):
    total = 0.0
    for k in range(weights.shape[0]):
        for i in range(6):
            total += weights[k, i] * e[6 * k + i] * e[6 * k + i]
    return 0.5 * total


@compiled_kernel
def _cholesky_solve(A, b, out):
    """Solve A x = b for symmetric positive definite A (n, n), overwriting A; False if not SPD."""
    n = A.shape[0]
    for j in range(n):
        s = A[j, j]
        for k in range(j):
            s -= A[j, k] * A[j, k]
        if s <= 0.0:
            return False
        d = np.sqrt(s)
        A[j, j] = d
        for i in range(j + 1, n):
            s = A[i, j]
            for k in range(j):
                s -= A[i, k] * A[j, k]
            A[i, j] = s / d
    for i in range(n):
        s = b[i]
        for k in range(i):
            s -= A[i, k] * out[k]
        out[i] = s / A[i, i]
    for i in range(n - 1, -1, -1):
        s = out[i]
        for k in range(i + 1, n):
            s -= A[k, i] * out[k]
        out[i] = s / A[i, i]
    return True


@compiled_kernel
def search_workspace(n, tip_table, weights, settings):
    """Scratch arrays for ``local_search``, allocated once per multi-start search."""
    rows = 6 * tip_table.shape[0]
    m_max = 1
    for k in range(tip_table.shape[0]):
        m_max = max(m_max, tip_table[k, 2])
    sqrt_w = np.empty(rows)
    for k in range(tip_table.shape[0]):
        for i in range(6):
            sqrt_w[6 * k + i] = np.sqrt(weights[k, i])
    return (np.empty(rows), np.zeros((rows, n)), np.empty((3, 3)), np.empty(3), np.empty((m_max, 3)),
            np.empty((m_max, 3)), np.empty(3), np.empty((3, 3)), np.empty((n, n)), np.empty((n, n)), np.empty(n),
            np.empty(n), np.zeros(n, dtype=np.bool_), np.empty(n), sqrt_w,
            np.empty(int(settings[S_MAX_ITERATIONS]) + 1))


@compiled_kernel
def local_search(q, segments, joint_info, tip_table, targets, weights, lower, upper, joint_weights,
                 preferred, settings, workspace):
    """Iterate from ``q`` (modified in place, kept within [lower, upper]) until the pose is reached.

    ``workspace`` comes from ``search_workspace``. Returns (status, cost, iterations); status is
    CONVERGED, NOT_CONVERGED or NON_FINITE.
    """
    n = q.shape[0]
    rows = 6 * tip_table.shape[0]
    (e, J, R, p, axes_world, origins_world, rot_error, R_error, A, JtJ, g, rhs, blocked, dq, sqrt_w,
     history) = workspace

    max_iterations = int(settings[S_MAX_ITERATIONS])
    position_tolerance = settings[S_POSITION_TOLERANCE]
    orientation_tolerance = settings[S_ORIENTATION_TOLERANCE]
    damping = settings[S_DAMPING]
    max_step = settings[S_MAX_STEP]
    nullspace_gain = settings[S_NULLSPACE_GAIN]
    method = int(settings[S_METHOD])
    stall_iterations = int(settings[S_STALL_ITERATIONS])
    stall_ratio = settings[S_STALL_RATIO]

    cost = np.inf
    for iteration in range(max_iterations + 1):
        if not task_error_and_jacobian(q, segments, joint_info, tip_table, targets, e, J, R, p, axes_world,
                                       origins_world, rot_error, R_error, True):
            return NON_FINITE, np.inf, iteration
        cost = _cost(e, weights)
        if _within_tolerance(e, weights, position_tolerance, orientation_tolerance):
            return CONVERGED, cost, iteration
        if iteration == max_iterations:
            break
        history[iteration] = cost
        if (stall_iterations > 0 and iteration >= stall_iterations and cost > STALL_EXEMPT_BELOW_COST
                and cost > stall_ratio * history[iteration - stall_iterations]):
            return NOT_CONVERGED, cost, iteration
        # Weighted residual and Jacobian: Jw = W^1/2 J, ew = W^1/2 e. A joint whose range is empty
        # (locked) gets a zero column, so the step leaves it alone instead of being clipped away.
        for r in range(rows):
            e[r] *= sqrt_w[r]
            for c in range(n):
                J[r, c] = J[r, c] * sqrt_w[r] if upper[c] > lower[c] else 0.0
        if method == METHOD_LEVENBERG_MARQUARDT:
            # J^T W J and J^T W e once; then solve with the joints held at a bound they are pushed
            # against removed from the step (a small active set), so the others compensate.
            lam = cost + damping
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
                if not _cholesky_solve(A, rhs, dq):
                    return NON_FINITE, cost, iteration
                newly_blocked = False
                for i in range(n):
                    if not blocked[i] and ((q[i] <= lower[i] and dq[i] < 0.0) or (q[i] >= upper[i] and dq[i] > 0.0)):
                        blocked[i] = True
                        newly_blocked = True
                if not newly_blocked:
                    break
        elif method == METHOD_PSEUDO_INVERSE:
            Js = J.copy()
            for c in range(n):
                s = np.sqrt(joint_weights[c])
                for r in range(rows):
                    Js[r, c] *= s
            pinv = np.linalg.pinv(Js, 1e-10)
            for i in range(n):
                s = 0.0
                for r in range(rows):
                    s += pinv[i, r] * e[r]
                dq[i] = s
            if nullspace_gain > 0.0:
                # (I - Js^+ Js) applied to the scaled pull toward the preferred posture.
                pull = np.empty(n)
                for i in range(n):
                    pull[i] = nullspace_gain * (preferred[i] - q[i]) / np.sqrt(joint_weights[i])
                proj = Js @ pull
                back = pinv @ proj
                for i in range(n):
                    dq[i] += pull[i] - back[i]
            for i in range(n):
                dq[i] *= np.sqrt(joint_weights[i])
        else:
            # Jacobian transpose with Buss' step length alpha = <e, J J^T e> / |J J^T e|^2.
            for i in range(n):
                s = 0.0
                for r in range(rows):
                    s += J[r, i] * e[r]
                g[i] = s * joint_weights[i]
            numerator = 0.0
            denominator = 0.0
            for r in range(rows):
                s = 0.0
                for c in range(n):
                    s += J[r, c] * g[c]
                numerator += e[r] * s
                denominator += s * s
            alpha = numerator / denominator if denominator > 0.0 else 0.0
            for i in range(n):
                dq[i] = alpha * g[i]
        largest = 0.0
        for i in range(n):
            largest = max(largest, abs(dq[i]))
        scale = max_step / largest if largest > max_step else 1.0
        for i in range(n):
            value = q[i] + scale * dq[i]
            q[i] = min(upper[i], max(lower[i], value))
    return NOT_CONVERGED, cost, max_iterations


@compiled_kernel
def multi_start_search(seed, use_seed, unit_starts, first, count, sample_lower, sample_upper, segments, joint_info,
                       tip_table, targets, weights, lower, upper, joint_weights, preferred, is_revolute, settings,
                       q_out, best_cost_so_far):
    """Local searches from ``seed`` (if ``use_seed``), then from rows first, first+1, ... (``count`` of them,
    modulo the pool) of ``unit_starts`` scaled into [sample_lower, sample_upper], until one converges.

    A converged configuration is wrapped near the seed and verified before it is accepted.
    Once a search has come close (cost below PERTURB_BELOW_COST), every other start is instead a
    random point within PERTURB_RADIUS of the best configuration so far: targets near the joint limits
    are often reached from there when uniform restarts rarely land close enough.
    ``q_out`` holds, on entry, the best configuration of earlier calls when ``best_cost_so_far`` is finite.
    Returns (starts used, found, cost, total iterations): with ``found``, q_out holds the verified
    solution; otherwise the lowest-cost configuration reached.
    """
    n = seed.shape[0]
    pool_size = unit_starts.shape[0]
    q = np.empty(n)
    best_cost = best_cost_so_far
    total_iterations = 0
    offset = 1 if use_seed else 0
    workspace = search_workspace(n, tip_table, weights, settings)
    for s in range(count + offset):
        if s < offset:
            for i in range(n):
                q[i] = min(upper[i], max(lower[i], seed[i]))
        else:
            row = unit_starts[(first + s - offset) % pool_size]
            near_best = best_cost < PERTURB_BELOW_COST and (first + s - offset) % 2 == 1
            for i in range(n):
                if near_best:
                    value = q_out[i] + (2.0 * row[i] - 1.0) * PERTURB_RADIUS
                else:
                    value = sample_lower[i] + row[i] * (sample_upper[i] - sample_lower[i])
                q[i] = min(upper[i], max(lower[i], value))
        status, cost, iterations = local_search(q, segments, joint_info, tip_table, targets, weights, lower, upper,
                                                joint_weights, preferred, settings, workspace)
        total_iterations += iterations
        if status == CONVERGED:
            wrap_near(q, seed, is_revolute, lower, upper)
            if reaches_target(q, segments, joint_info, tip_table, targets, weights, lower, upper,
                              settings[S_POSITION_TOLERANCE], settings[S_ORIENTATION_TOLERANCE]):
                q_out[:] = q
                return s + 1, True, cost, total_iterations
        if status != NON_FINITE and cost < best_cost:
            best_cost = cost
            q_out[:] = q
    return count + offset, False, best_cost, total_iterations


@compiled_kernel
def wrap_near(q, reference, is_revolute, lower, upper):
    """Shift revolute joints of q (in place) by whole turns to lie nearest ``reference`` within the limits."""
    two_pi = 2.0 * np.pi
    for i in range(q.shape[0]):
        if not is_revolute[i]:
            continue
        turns = np.round((reference[i] - q[i]) / two_pi)
        for candidate in (turns, turns - 1.0, turns + 1.0, 0.0):
            value = q[i] + two_pi * candidate
            if lower[i] - 1e-9 <= value <= upper[i] + 1e-9:
                q[i] = min(upper[i], max(lower[i], value))
                break


@compiled_kernel
def reaches_target(q, segments, joint_info, tip_table, targets, weights, lower, upper, position_tolerance,
                   orientation_tolerance):
    """q is finite, inside [lower, upper] and within tolerance of every target on the weighted axes."""
    for i in range(q.shape[0]):
        if not (lower[i] - 1e-9 <= q[i] <= upper[i] + 1e-9):
            return False
    e = np.empty(6 * tip_table.shape[0])
    if not task_error(q, segments, joint_info, tip_table, targets, e):
        return False
    return _within_tolerance(e, weights, position_tolerance * (1.0 + 1e-6), orientation_tolerance * (1.0 + 1e-6))


@compiled_kernel(parallel=True, nogil=False)
def batch_search(all_targets, seeds, unit_starts, sample_lower, sample_upper, segments, joint_info, tip_table,
                 weights, lower, upper, joint_weights, is_revolute, settings, max_starts, q_out, found, costs):
    """One multi-start search per target set (all_targets (B, t, 4, 4)), spread over the CPU cores.

    Each search starts from seeds[b], then from up to ``max_starts - 1`` pool rows beginning at a
    pose-dependent offset. ``found[b]`` marks verified solutions (wrapped near their seed).
    """
    pool_size = unit_starts.shape[0]
    for b in prange(all_targets.shape[0]):
        _, found[b], costs[b], _ = multi_start_search(
            seeds[b], True, unit_starts, (b * 7919) % pool_size, max_starts - 1, sample_lower, sample_upper,
            segments, joint_info, tip_table, all_targets[b], weights, lower, upper, joint_weights, seeds[b],
            is_revolute, settings, q_out[b], np.inf)


@compiled_kernel
def task_error(q, segments, joint_info, tip_table, targets, e):
    """Fill e (6t,) with the task error at q (no Jacobian). Returns False if q is not finite."""
    m_max = 1
    for k in range(tip_table.shape[0]):
        m_max = max(m_max, tip_table[k, 2])
    J = np.empty((0, q.shape[0]))
    return task_error_and_jacobian(q, segments, joint_info, tip_table, targets, e, J, np.empty((3, 3)), np.empty(3),
                                   np.empty((m_max, 3)), np.empty((m_max, 3)), np.empty(3), np.empty((3, 3)), False)
