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

Where no singular value is below the cut-off (``_cutoff``), inv(S) is 1/S and the answer is the plain
pseudo-inverse's: it is solved through the LQ decomposition B = [L 0] H^T (``_lq``, ``_lq_solve``: six Householder
reflectors, a 6x6 triangular inverse), a fraction of the SVD's work. The singular values are those of L, each at
least 1 / ||L^-1||_F: when that bound proves them all at least twice the cut-off, the SVD is not made (``work``
keeps the Jacobian, ``decompose`` makes the SVD when it is asked for); otherwise the SVD is made, and where it
finds them all at or above the cut-off the answer is still solved through L (one answer per state, whichever
way it was proven). Each sweep takes the 15 pairs of rows
in five rounds of three disjoint pairs (a round-robin order): the three rotations of a round are independent, so
the processor overlaps their square roots and divisions instead of waiting on each in turn.

One call is one compiled function of six arrays, allocating nothing but its two 3x3 FK scratch matrices:

``params`` (``params_size(n, m)``, float64, built by ``pack_params``): the settings (SETTINGS_SIZE: ALPHA, EPS,
DAMPING, DAMPING_THRESHOLD, LIMIT_GAIN, HAS_OPT_POS (1 or 0), RANK (the rank of J away from singularities: the
singular values beyond it are structural, e.g. on a 5-joint arm or with a zero task weight, and never make an
answer degraded), MAX_SWEEPS, then the square roots of the six task weights from TASK_WEIGHTS on), then the
joint table (4, n): opt_pos, weights, lower and upper limits (``joint_table(params, n)``), then the chain's
``segments`` (m + 1, SEGMENT_WIDTH) (``chain_kernels``).

``work`` (``work_size(n, m)``, float64): the decomposition the call leaves, unsorted (``svd_parts``): S (6,) the
singular values, Q (6, 6) whose row k is the left singular vector of S[k], B (6, n) whose row k is S[k] times the
right one; then scratch; its last element 1 when B is decomposed, 0 when B is still the (task-weighted) Jacobian.
"""
from __future__ import annotations

import numpy as np
from numba import prange

from ..compiled import compiled_kernel
from ..model.chain_kernels import SEGMENT_WIDTH, chain_jacobian_from_pose, chain_pose

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
#: The answer is solved through the LQ decomposition (``_lq``) only where no singular value is below the cut-off
#: (``_cutoff``), which is at least this (a cut-off of 0 still leaves ill-conditioned Jacobians to the SVD) ...
FAST_PATH_MIN_SINGULAR = 1e-6
#: ... and only with this many Jacobi sweeps allowed (fewer may not converge: the SVD is always made, as KDL's).
FAST_PATH_MIN_SWEEPS = 16
#: The 15 pairs of six rows as five rounds of three disjoint pairs (each row once per round).
ROUNDS = ((0, 1, 2, 3, 4, 5), (0, 2, 1, 4, 3, 5), (0, 3, 1, 5, 2, 4), (0, 4, 1, 3, 2, 5), (0, 5, 1, 2, 3, 4))
_ROUNDS = np.array(ROUNDS, dtype=np.int64)


def params_size(n: int, m: int) -> int:
    """The length of ``params`` for n variables and m joints."""
    return SETTINGS_SIZE + 4 * n + (m + 1) * SEGMENT_WIDTH


def work_size(n: int, m: int) -> int:
    """The length of ``work`` for n variables and m joints."""
    return 54 + 7 * n + 6 * m + 6 * n + 48 + 1


def pack_params(segments: np.ndarray, n: int) -> np.ndarray:
    """A zeroed ``params`` array for a chain of ``segments`` and n variables, its segments filled in."""
    params = np.zeros(params_size(n, len(segments) - 1))
    params[SETTINGS_SIZE + 4 * n:] = segments.ravel()
    return params


@compiled_kernel(inline="always", error_model="numpy")
def joint_table(params, n):
    """The (4, n) joint table inside ``params`` (a view)."""
    return params[SETTINGS_SIZE:SETTINGS_SIZE + 4 * n].reshape((4, n))


@compiled_kernel(inline="always", error_model="numpy")
def _segments(params, n, m):
    start = SETTINGS_SIZE + 4 * n
    return params[start:start + (m + 1) * SEGMENT_WIDTH].reshape((m + 1, SEGMENT_WIDTH))


@compiled_kernel(inline="always", error_model="numpy")
def svd_parts(work, n):
    """(S (6,), Q (6, 6), B (6, n)): views of the decomposition in ``work`` (module docstring)."""
    return work[:6], work[6:42].reshape((6, 6)), work[42:42 + 6 * n].reshape((6, n))


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


@compiled_kernel(inline="always", error_model="numpy")
def _rotation(S, i, j, g, negligible):
    """(c, s) of the Jacobi rotation making rows i and j orthogonal (their squared norms S[i], S[j] updated),
    or (1, 0) when they already are (or one holds a zero singular value)."""
    a = S[i]
    b = S[j]
    tolerance = ORTHOGONALITY_TOLERANCE * ORTHOGONALITY_TOLERANCE
    if min(a, b) <= negligible or not g * g > tolerance * a * b:
        return 1.0, 0.0
    zeta = (b - a) / (2.0 * g)
    t = (1.0 if zeta >= 0.0 else -1.0) / (abs(zeta) + np.sqrt(1.0 + zeta * zeta))
    c = 1.0 / np.sqrt(1.0 + t * t)
    S[i] = a - t * g
    S[j] = b + t * g
    return c, c * t


@compiled_kernel(error_model="numpy")
def jacobi_rows(B, Q, S, max_sweeps):
    """Rows of B (6, n) made orthogonal in place by rotations accumulated in Q (6, 6): afterwards ``Q B0 = B``,
    S (6,) the row norms. Returns 0, or SVD_MAX_ITERATIONS when not orthogonal after ``max_sweeps`` sweeps (or B
    is not finite; Q, B and S are then where the sweeps stopped)."""
    for i in range(6):
        for j in range(6):
            Q[i, j] = 1.0 if i == j else 0.0
    # A row this small is round-off of a zero singular value: rotating it against another never ends.
    total = 0.0
    for k in range(6):
        total += _row_dot(B, k, B, k)
    negligible = NEGLIGIBLE_ROW * NEGLIGIBLE_ROW * total
    rotated = True
    for _ in range(max_sweeps):
        for k in range(6):
            S[k] = _row_dot(B, k, B, k)  # squared norms, kept up to date through the sweep
        rotated = False
        for r in range(5):
            i0, j0, i1, j1, i2, j2 = (_ROUNDS[r, 0], _ROUNDS[r, 1], _ROUNDS[r, 2], _ROUNDS[r, 3], _ROUNDS[r, 4],
                                      _ROUNDS[r, 5])
            # The three pairs are disjoint: their rotations are computed before any is applied.
            c0, s0 = _rotation(S, i0, j0, _row_dot(B, i0, B, j0), negligible)
            c1, s1 = _rotation(S, i1, j1, _row_dot(B, i1, B, j1), negligible)
            c2, s2 = _rotation(S, i2, j2, _row_dot(B, i2, B, j2), negligible)
            if s0 != 0.0:
                _rotate_rows(B, i0, j0, c0, s0)
                _rotate_rows(Q, i0, j0, c0, s0)
                rotated = True
            if s1 != 0.0:
                _rotate_rows(B, i1, j1, c1, s1)
                _rotate_rows(Q, i1, j1, c1, s1)
                rotated = True
            if s2 != 0.0:
                _rotate_rows(B, i2, j2, c2, s2)
                _rotate_rows(Q, i2, j2, c2, s2)
                rotated = True
        if not rotated:
            break
    total = 0.0
    for k in range(6):
        S[k] = np.sqrt(_row_dot(B, k, B, k))
        total += S[k]
    return 0 if not rotated and np.isfinite(total) else SVD_MAX_ITERATIONS


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
def _null_space_velocity(q, table, settings, z):
    """z <- KDL's null-space velocity toward opt_pos (when given) plus the pull from the joint limits."""
    n = q.shape[0]
    for i in range(n):
        z[i] = 0.0
    if settings[HAS_OPT_POS] > 0.0:
        g = 0.0
        A = 0.0
        for i in range(n):
            d = q[i] - table[OPT_POS, i]
            w = table[WEIGHTS, i]
            g += 0.5 * d * d * w
            A += d * d * w * w
        if A > NULL_SPACE_MIN_NORM:
            for i in range(n):
                z[i] = -2.0 * settings[ALPHA] * g * table[WEIGHTS, i] * (q[i] - table[OPT_POS, i]) / A
    gain = settings[LIMIT_GAIN]
    if gain > 0.0:
        for i in range(n):
            half = 0.5 * (table[UPPER, i] - table[LOWER, i])
            if np.isfinite(half) and half > 0.0:
                z[i] -= gain * (q[i] - 0.5 * (table[LOWER, i] + table[UPPER, i])) / half


@compiled_kernel(inline="always", error_model="numpy")
def _reflect(W, k, tau, x):
    """x <- H_k x, H_k = I - tau_k v v^T the Householder reflector whose v is row k of W from column k on."""
    n = x.shape[0]
    dot = 0.0
    for c in range(k, n):
        dot += W[k, c] * x[c]
    dot *= tau[k]
    for c in range(k, n):
        x[c] -= dot * W[k, c]


@compiled_kernel(inline="always", error_model="numpy")
def _cutoff(settings):
    """The singular value below which the answer is not the plain pseudo-inverse's: EPS (truncated), or
    DAMPING_THRESHOLD with the damping on (damped); at least FAST_PATH_MIN_SINGULAR."""
    cutoff = max(settings[EPS], FAST_PATH_MIN_SINGULAR)
    if settings[DAMPING] > 0.0:
        cutoff = max(cutoff, settings[DAMPING_THRESHOLD])
    return cutoff


@compiled_kernel(inline="always", error_model="numpy")
def _lq(B, W, tau, Linv):
    """The LQ decomposition of B (6, n), n >= 6, by Householder reflectors: B = [L 0] (H_0 ... H_5)^T with L
    (6, 6) lower triangular, and L^-1. W (6, n) <- the reflectors' vectors (row k from column k on) and L's
    entries below the diagonal; tau (12,) <- the reflectors' factors, then L's diagonal; Linv (6, 6) <- L^-1.
    Returns ||L^-1||_F^2 (the singular values of B, those of L, are each at least 1 / ||L^-1||_F), inf when L
    is singular."""
    n = B.shape[1]
    for r in range(6):
        for c in range(n):
            W[r, c] = B[r, c]
    for k in range(6):
        norm2 = 0.0
        for c in range(k, n):
            norm2 += W[k, c] * W[k, c]
        if not norm2 > 0.0:
            return np.inf
        norm = np.sqrt(norm2)
        x0 = W[k, k]
        # v = x - alpha e_0 with alpha of the sign opposite to x_0: no cancellation; ||v||^2 = 2 norm (norm + |x_0|)
        alpha = -norm if x0 >= 0.0 else norm
        W[k, k] = x0 - alpha
        tau[k] = 1.0 / (norm * (norm + abs(x0)))
        tau[6 + k] = alpha
        for r in range(k + 1, 6):
            _reflect(W, k, tau, W[r])
    frobenius2 = 0.0
    for j in range(6):  # L^-1 column by column (forward substitution)
        Linv[j, j] = 1.0 / tau[6 + j]
        frobenius2 += Linv[j, j] * Linv[j, j]
        for i in range(j + 1, 6):
            total = 0.0
            for k in range(j, i):
                total += W[i, k] * Linv[k, j]
            Linv[i, j] = -total / tau[6 + i]
            frobenius2 += Linv[i, j] * Linv[i, j]
    return frobenius2 if np.isfinite(frobenius2) else np.inf


@compiled_kernel(inline="always", error_model="numpy")
def _lq_solve(W, tau, Linv, twist, settings, z, qdot):
    """qdot <- pinv(B) (task-weighted twist) + (I - P) z from ``_lq`` of B (P the projection on B's row space):
    pinv(B) = H_0 ... H_5 [L^-1; 0] and (I - P) z = H_0 ... H_5 [0; (H_5 ... H_0 z)[6:]]. z is used up."""
    for k in range(6):
        _reflect(W, k, tau, z)
    for i in range(6):
        total = 0.0
        for j in range(i + 1):
            total += Linv[i, j] * settings[TASK_WEIGHTS + j] * twist[j]
        z[i] = total
    for k in range(5, -1, -1):
        _reflect(W, k, tau, z)
    for i in range(z.shape[0]):
        qdot[i] = z[i]


@compiled_kernel(inline="always", error_model="numpy")
def _weighted_jacobian(q, segments, joint_info, settings, work, start, B):
    """B <- the task-weighted Jacobian at ``q``, the chain's pose laid out in ``work`` from ``start``; returns where
    that layout ends."""
    m = joint_info.shape[0]
    axes_world = work[start:start + 3 * m].reshape((m, 3))
    origins_world = work[start + 3 * m:start + 6 * m].reshape((m, 3))
    start += 6 * m
    R = work[start:start + 9].reshape((3, 3))
    p = work[start + 9:start + 12]
    chain_pose(q, segments, joint_info, R, p, axes_world, origins_world)
    chain_jacobian_from_pose(p, joint_info, segments[:m, 15], axes_world, origins_world, B)
    for r in range(6):
        weight = settings[TASK_WEIGHTS + r]
        for c in range(B.shape[1]):
            B[r, c] *= weight
    return start + 12


@compiled_kernel(error_model="numpy")
def velocity_ik(q, twist, joint_info, params, qdot, work):
    """qdot (n,) <- the joint velocities for ``twist`` (6,) at ``q`` (n,); work <- the task-weighted Jacobian and,
    unless it is proven well conditioned (then ``decompose`` makes the SVD on demand), its SVD (module
    docstring). ``joint_info``'s variable column indexes q. Returns E_NOERROR,
    E_DEGRADED (more singular values below EPS than 6 - RANK), E_SVD_FAILED (qdot zero) or NON_FINITE_INPUT."""
    n = q.shape[0]
    m = joint_info.shape[0]
    for i in range(n):
        qdot[i] = 0.0
    if not (np.isfinite(q.sum()) and np.isfinite(twist.sum())):
        return NON_FINITE_INPUT
    settings = params[:SETTINGS_SIZE]
    table = joint_table(params, n)
    segments = _segments(params, n, m)
    S, Q, B = svd_parts(work, n)
    start = 42 + 6 * n
    z = work[start:start + n]
    start = _weighted_jacobian(q, segments, joint_info, settings, work, start + n, B)
    W = work[start:start + 6 * n].reshape((6, n))
    start += 6 * n
    tau = work[start:start + 12]
    Linv = work[start + 12:start + 48].reshape((6, 6))
    _null_space_velocity(q, table, settings, z)
    # Where no singular value is below the cut-off, the answer is the plain pseudo-inverse's, solved through the
    # LQ decomposition; when the bound of ``_lq`` proves it, without the SVD (made on demand by ``decompose``).
    plain = n >= 6 and settings[RANK] >= 6 and settings[MAX_SWEEPS] >= FAST_PATH_MIN_SWEEPS
    cutoff = _cutoff(settings)
    frobenius2 = _lq(B, W, tau, Linv) if plain else np.inf
    if frobenius2 * (4.0 * cutoff * cutoff) <= 1.0:
        _lq_solve(W, tau, Linv, twist, settings, z, qdot)
        work[work.shape[0] - 1] = 0.0  # B is the Jacobian, not yet decomposed
        return E_NOERROR
    work[work.shape[0] - 1] = 1.0
    if jacobi_rows(B, Q, S, int(settings[MAX_SWEEPS])) != 0:
        return E_SVD_FAILED
    if frobenius2 < np.inf and S.min() >= cutoff:
        _lq_solve(W, tau, Linv, twist, settings, z, qdot)
        return E_NOERROR
    cut = 0
    for k in range(6):
        s = S[k]
        if abs(s) < settings[EPS]:
            cut += 1
        if not s > 0.0:
            continue
        # B's row k is s times the right singular vector k; Q's row k is the left one.
        along = 0.0
        for r in range(6):
            along += Q[k, r] * settings[TASK_WEIGHTS + r] * twist[r]
        toward = 0.0
        for i in range(n):
            toward += B[k, i] * z[i]
        scale = _inverse(s, settings) / s
        along *= scale
        toward *= scale
        for i in range(n):
            qdot[i] += B[k, i] * along
            z[i] -= B[k, i] * toward
    for i in range(n):
        qdot[i] += z[i]
    return E_DEGRADED if cut > 6 - settings[RANK] else E_NOERROR


@compiled_kernel(error_model="numpy")
def condition_number(q, joint_info, params, work):
    """The largest over the smallest singular value of the (task-weighted) Jacobian at ``q`` (n,), inf when the
    smallest is 0, NaN when q is not finite or the SVD does not converge. ``work`` as ``velocity_ik``'s (its
    decomposition is overwritten: not the solver's own)."""
    n = q.shape[0]
    m = joint_info.shape[0]
    if not np.isfinite(q.sum()):
        return np.nan
    settings = params[:SETTINGS_SIZE]
    segments = _segments(params, n, m)
    S, Q, B = svd_parts(work, n)
    _weighted_jacobian(q, segments, joint_info, settings, work, 42 + 7 * n, B)
    if jacobi_rows(B, Q, S, int(settings[MAX_SWEEPS])) != 0:
        return np.nan
    smallest = S.min()
    return S.max() / smallest if smallest > 0.0 else np.inf


@compiled_kernel(error_model="numpy")
def decompose(work, n, max_sweeps):
    """The SVD of the Jacobian a well-conditioned ``velocity_ik`` call left in ``work`` (the one the call would
    have made), unless it is already there; 0 or SVD_MAX_ITERATIONS."""
    if work[work.shape[0] - 1] != 0.0:
        return 0
    S, Q, B = svd_parts(work, n)
    work[work.shape[0] - 1] = 1.0
    return jacobi_rows(B, Q, S, max_sweeps)


@compiled_kernel(parallel=True, error_model="numpy")
def velocity_ik_batch(Q, twists, joint_info, params, qdot, codes):
    """qdot[b], codes[b] <- ``velocity_ik`` of Q[b] (B, n) and twists[b] (B, 6), over the cores."""
    size = 103 + 13 * Q.shape[1] + 6 * joint_info.shape[0]
    for b in prange(Q.shape[0]):
        work = np.empty(size)
        codes[b] = velocity_ik(Q[b], twists[b], joint_info, params, qdot[b], work)
