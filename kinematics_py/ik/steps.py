"""Compiled step methods of a local IK search: each turns the weighted residual e_w = W^1/2 e and Jacobian
J_w = W^1/2 J into a joint step dq.

Methods (``SearchSettings.method``): METHOD_LEVENBERG_MARQUARDT with error-dependent damping (Sugihara:
lambda = E + damping, E = half the weighted squared error; its step is in ``kernels.local_search``, which
solves with ``cholesky_solve``), METHOD_PSEUDO_INVERSE (SVD pseudo-inverse, optional null-space motion
toward a preferred posture), METHOD_JACOBIAN_TRANSPOSE (Buss' step length). Per-joint weights (n,):
larger moves a joint more readily.
"""
from __future__ import annotations

import numpy as np

from ..compiled import compiled_kernel

#: Order of ``parameters.METHODS``.
METHOD_LEVENBERG_MARQUARDT = 0
METHOD_PSEUDO_INVERSE = 1
METHOD_JACOBIAN_TRANSPOSE = 2


@compiled_kernel
def cholesky_solve(A, b, out):
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


@compiled_kernel(inline="always")
def pseudo_inverse_step(q, joint_weights, preferred, nullspace_gain, e, J, dq):
    """dq <- the joint-weighted pseudo-inverse step for the weighted residual e and Jacobian J, plus the
    null-space pull toward ``preferred``."""
    rows, n = J.shape
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


@compiled_kernel(inline="always")
def jacobian_transpose_step(joint_weights, e, J, g, dq):
    """dq <- the Jacobian transpose step with Buss' step length alpha = <e, J J^T e> / |J J^T e|^2 (g: scratch)."""
    rows, n = J.shape
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


