"""Compiled differential IK: joint velocities from a tip twist by a truncated (or damped) SVD pseudo-inverse.

The semantics are those of KDL's ``ChainIkSolverVel_pinv_nso`` (``ik.velocity`` says where they differ): with
``J = U diag(S) V^T`` (the Jacobian at the tip origin, base frame, rows (vx, vy, vz, wx, wy, wz)),

    qdot = V diag(inv(S)) U^T twist + (I - P) z,      P = V diag(S * inv(S)) V^T

where ``inv(s)`` is ``1/s``, or 0 below ``eps`` (KDL's truncation), or ``s / (s^2 + lambda^2 (1 - (s/t)^2))``
below a threshold t with the damping on, and ``z`` the null-space velocity: KDL's ``-2 alpha g(q) w (q - opt_pos)
/ A`` (g = 1/2 sum w_i (q_i - opt_pos_i)^2, A = sum w_i^2 (q_i - opt_pos_i)^2, none when A <= 1e-9) plus the
optional pull of each bounded joint toward the middle of its range. The SVD is one-sided Jacobi (Hestenes) on
the six rows of J: exact to round-off in a few sweeps, no LAPACK call, and no structurally zero singular value
on redundant arms (the thin SVD: six singular values, V of shape (n, 6)).

``joint_table`` (4, n): opt_pos, weights, lower and upper limits. ``settings`` (SETTINGS_SIZE): ALPHA, EPS,
DAMPING, DAMPING_THRESHOLD, LIMIT_GAIN, HAS_OPT_POS (1 or 0), RANK (the rank of J away from singularities: the
singular values beyond it are structural, e.g. on a 5-joint arm or with a zero task weight, and never make an
answer degraded), MAX_SWEEPS, then the square roots of the six task weights from TASK_WEIGHTS on.
``svd`` (6, 7 + n): column 0 the singular values (descending), columns 1-6 U, columns 7 on the rows of V^T.
"""
from __future__ import annotations

import numpy as np
from numba import prange

from ..compiled import compiled_kernel
from ..model.chain_kernels import chain_jacobian_from_pose, chain_pose

ALPHA, EPS, DAMPING, DAMPING_THRESHOLD, LIMIT_GAIN, HAS_OPT_POS, RANK, MAX_SWEEPS, TASK_WEIGHTS = range(9)
SETTINGS_SIZE = TASK_WEIGHTS + 6
OPT_POS, WEIGHTS, LOWER, UPPER = range(4)

#: KDL's SolverI codes that the solver answers with.
E_DEGRADED = 1
E_NOERROR = 0
E_SVD_FAILED = -8
#: Not an answer: q or the twist is not finite (the caller raises, naming them).
NON_FINITE_INPUT = -100
#: What KDL's SVD answers when it ran out of iterations (``svd_eigen_HH``); 0 when it converged.
SVD_MAX_ITERATIONS = -2
#: KDL's threshold on A below which no null-space term is added.
NULL_SPACE_MIN_NORM = 1e-9
#: Rows whose cosine is below this are orthogonal: the Jacobi sweeps stop.
ORTHOGONALITY_TOLERANCE = 1e-15
#: A row whose norm is below this times the matrix's (Frobenius) holds a zero singular value.
NEGLIGIBLE_ROW = 1e-15


@compiled_kernel(inline="always", error_model="numpy")
def _row_dot(A, i, C, j):
    """A[i] . C[j] (a loop: np.dot would call BLAS, costly on six numbers)."""
    total = 0.0
    for r in range(A.shape[1]):
        total += A[i, r] * C[j, r]
    return total


@compiled_kernel(inline="always", error_model="numpy")
def _rotate_rows(A, i, j, c, s):
    for r in range(A.shape[1]):
        a = A[i, r]
        b = A[j, r]
        A[i, r] = c * a - s * b
        A[j, r] = s * a + c * b


@compiled_kernel(error_model="numpy")
def jacobi_rows(B, Q, S, max_sweeps):
    """Rows of B (m, n) made orthogonal in place by rotations accumulated in Q (m, m): afterwards ``Q B0 = B``,
    S (m,) the row norms. Returns 0, or SVD_MAX_ITERATIONS when not orthogonal after ``max_sweeps`` sweeps (or B
    is not finite)."""
    m, n = B.shape
    for i in range(m):
        for j in range(m):
            Q[i, j] = 1.0 if i == j else 0.0
    # A row this small is round-off of a zero singular value: rotating it against another never ends.
    total = 0.0
    for k in range(m):
        total += _row_dot(B, k, B, k)
    negligible = NEGLIGIBLE_ROW * NEGLIGIBLE_ROW * total
    for _ in range(max_sweeps):
        for k in range(m):
            S[k] = _row_dot(B, k, B, k)  # squared norms, kept up to date through the sweep
        rotated = False
        for i in range(m - 1):
            for j in range(i + 1, m):
                a = S[i]
                b = S[j]
                g = _row_dot(B, i, B, j)
                if min(a, b) <= negligible or not abs(g) > ORTHOGONALITY_TOLERANCE * np.sqrt(a * b):
                    continue
                rotated = True
                zeta = (b - a) / (2.0 * g)
                t = (1.0 if zeta >= 0.0 else -1.0) / (abs(zeta) + np.sqrt(1.0 + zeta * zeta))
                c = 1.0 / np.sqrt(1.0 + t * t)
                _rotate_rows(B, i, j, c, c * t)
                _rotate_rows(Q, i, j, c, c * t)
                S[i] = a - t * g
                S[j] = b + t * g
        if not rotated:
            for k in range(m):
                S[k] = np.sqrt(_row_dot(B, k, B, k))
            return 0 if np.isfinite(S.sum()) else SVD_MAX_ITERATIONS
    return SVD_MAX_ITERATIONS


@compiled_kernel(inline="always", error_model="numpy")
def _inverse(s, settings):
    """The inverted singular value: damped below DAMPING_THRESHOLD with the damping on, else KDL's truncation."""
    damping = settings[DAMPING]
    threshold = settings[DAMPING_THRESHOLD]
    if damping > 0.0:
        if s < threshold:
            fade = s / threshold
            return s / (s * s + damping * damping * (1.0 - fade * fade))
        return 1.0 / s
    return 0.0 if abs(s) < settings[EPS] else 1.0 / s


@compiled_kernel(inline="always", error_model="numpy")
def _null_space_velocity(q, joint_table, settings, z):
    """z <- KDL's null-space velocity toward opt_pos (when given) plus the pull from the joint limits."""
    n = q.shape[0]
    z[:] = 0.0
    if settings[HAS_OPT_POS] > 0.0:
        g = 0.0
        A = 0.0
        for i in range(n):
            d = q[i] - joint_table[OPT_POS, i]
            w = joint_table[WEIGHTS, i]
            g += 0.5 * d * d * w
            A += d * d * w * w
        if A > NULL_SPACE_MIN_NORM:
            for i in range(n):
                z[i] = -2.0 * settings[ALPHA] * g * joint_table[WEIGHTS, i] * (q[i] - joint_table[OPT_POS, i]) / A
    gain = settings[LIMIT_GAIN]
    if gain > 0.0:
        for i in range(n):
            half = 0.5 * (joint_table[UPPER, i] - joint_table[LOWER, i])
            if np.isfinite(half) and half > 0.0:
                z[i] -= gain * (q[i] - 0.5 * (joint_table[LOWER, i] + joint_table[UPPER, i])) / half


@compiled_kernel(inline="always", error_model="numpy")
def _weighted_jacobian(q, segments, joint_info, settings, B):
    """B (6, n) <- the Jacobian at q, row r scaled by the root of task weight r. False if q is not finite."""
    m = joint_info.shape[0]
    axes_world = np.empty((m, 3))
    origins_world = np.empty((m, 3))
    R = np.empty((3, 3))
    p = np.empty(3)
    if not chain_pose(q, segments, joint_info, R, p, axes_world, origins_world):
        return False
    chain_jacobian_from_pose(p, joint_info, segments[:m, 15], axes_world, origins_world, B)
    for r in range(6):
        for c in range(B.shape[1]):
            B[r, c] *= settings[TASK_WEIGHTS + r]
    return True


@compiled_kernel(error_model="numpy")
def velocity_ik(q, twist, segments, joint_info, joint_table, settings, qdot, svd):
    """qdot (n,) <- the joint velocities for ``twist`` (6,) at ``q`` (n,); svd <- the task-weighted Jacobian's
    SVD (module docstring). ``joint_info``'s variable column indexes q. Returns E_NOERROR, E_DEGRADED (more
    singular values below EPS than 6 - RANK), E_SVD_FAILED (qdot zero) or NON_FINITE_INPUT."""
    n = q.shape[0]
    qdot[:] = 0.0
    if not (np.isfinite(q.sum()) and np.isfinite(twist.sum())):
        return NON_FINITE_INPUT
    B = np.empty((6, n))
    Q = np.empty((6, 6))
    S = np.empty(6)
    _weighted_jacobian(q, segments, joint_info, settings, B)
    if jacobi_rows(B, Q, S, int(settings[MAX_SWEEPS])) != 0:
        return E_SVD_FAILED
    inverse = np.empty(6)
    cut = 0
    for k in range(6):
        inverse[k] = _inverse(S[k], settings)
        if abs(S[k]) < settings[EPS]:
            cut += 1
        # B's row k is S[k] times the right singular vector k; Q's row k is the left one.
        along = 0.0
        for r in range(6):
            along += Q[k, r] * settings[TASK_WEIGHTS + r] * twist[r]
        along *= inverse[k] / S[k] if S[k] > 0.0 else 0.0
        for i in range(n):
            qdot[i] += B[k, i] * along
    z = np.empty(n)
    _null_space_velocity(q, joint_table, settings, z)
    for k in range(6):
        if S[k] > 0.0:
            along = 0.0
            for i in range(n):
                along += B[k, i] * z[i]
            along *= inverse[k] / S[k]
            for i in range(n):
                z[i] -= B[k, i] * along
    for i in range(n):
        qdot[i] += z[i]
    _store_svd(B, Q, S, svd)
    return E_DEGRADED if cut > 6 - settings[RANK] else E_NOERROR


@compiled_kernel(inline="always", error_model="numpy")
def _store_svd(B, Q, S, svd):
    """svd <- (S, U, V^T) with the singular values descending."""
    order = np.argsort(-S)
    for k in range(6):
        row = order[k]
        s = S[row]
        svd[k, 0] = s
        for r in range(6):
            svd[r, 1 + k] = Q[row, r]
        for i in range(B.shape[1]):
            svd[k, 7 + i] = B[row, i] / s if s > 0.0 else 0.0


@compiled_kernel(parallel=True, error_model="numpy")
def velocity_ik_batch(Q, twists, segments, joint_info, joint_table, settings, qdot, codes):
    """qdot[b], codes[b] <- ``velocity_ik`` of Q[b] (B, n) and twists[b] (B, 6), over the cores."""
    for b in prange(Q.shape[0]):
        svd = np.empty((6, 7 + Q.shape[1]))
        codes[b] = velocity_ik(Q[b], twists[b], segments, joint_info, joint_table, settings, qdot[b], svd)
