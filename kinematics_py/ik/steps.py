"""Compiled step methods of a local IK search: each turns the weighted residual into a joint step ``ws.dq``.

Before a step, ``weigh`` makes the Workspace's e and J the weighted residual and Jacobian
(e_w = W^1/2 e, J_w = W^1/2 J). Methods (``SearchSettings.method``): METHOD_LEVENBERG_MARQUARDT with
error-dependent damping (Sugihara: lambda = E + damping, E = half the weighted squared error),
METHOD_PSEUDO_INVERSE (SVD pseudo-inverse, optional null-space motion toward a preferred posture),
METHOD_JACOBIAN_TRANSPOSE (Buss' step length). Per-joint weights (n,): larger moves a joint more readily.
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
def weigh(ws, lower, upper):
    """e and J of ``ws`` weighted by the task weights. A joint whose range is empty (locked) gets a zero
    column, so the step leaves it alone instead of being clipped away."""
    e, J, sqrt_w = ws.e, ws.J, ws.sqrt_w
    for r in range(J.shape[0]):
        e[r] *= sqrt_w[r]
        for c in range(J.shape[1]):
            J[r, c] = J[r, c] * sqrt_w[r] if upper[c] > lower[c] else 0.0


@compiled_kernel(inline="always")
def _normal_equations(ws):
    """ws.JtJ <- J^T J and ws.g <- J^T e (weighted)."""
    e, J, JtJ, g = ws.e, ws.J, ws.JtJ, ws.g
    rows, n = J.shape
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


@compiled_kernel(inline="always")
def levenberg_marquardt_step(q, lower, upper, joint_weights, lam, ws):
    """ws.dq <- the damped least-squares step with damping ``lam``; False if the system is not solvable.

    J^T W J and J^T W e once; then solve with the joints held at a bound they are pushed against removed
    from the step (a small active set), so the others compensate.
    """
    n = q.shape[0]
    A, JtJ, g, rhs, blocked, dq = ws.A, ws.JtJ, ws.g, ws.rhs, ws.blocked, ws.dq
    _normal_equations(ws)
    for i in range(n):
        blocked[i] = not upper[i] > lower[i]
    for _ in range(n + 1):
        for i in range(n):
            for j in range(n):
                A[i, j] = 0.0 if blocked[i] or blocked[j] else JtJ[i, j]
            A[i, i] += lam / joint_weights[i]
            rhs[i] = 0.0 if blocked[i] else g[i]
        if not cholesky_solve(A, rhs, dq):
            return False
        newly_blocked = False
        for i in range(n):
            if not blocked[i] and ((q[i] <= lower[i] and dq[i] < 0.0) or (q[i] >= upper[i] and dq[i] > 0.0)):
                blocked[i] = True
                newly_blocked = True
        if not newly_blocked:
            break
    return True


@compiled_kernel(inline="always")
def pseudo_inverse_step(q, joint_weights, preferred, nullspace_gain, ws):
    """ws.dq <- the joint-weighted pseudo-inverse step, plus the null-space pull toward ``preferred``."""
    e, J, dq = ws.e, ws.J, ws.dq
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
def jacobian_transpose_step(joint_weights, ws):
    """ws.dq <- the Jacobian transpose step with Buss' step length alpha = <e, J J^T e> / |J J^T e|^2."""
    e, J, g, dq = ws.e, ws.J, ws.g, ws.dq
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


@compiled_kernel(inline="always")
def apply_step(q, dq, lower, upper, max_step):
    """q <- q + dq, scaled down so that no joint moves more than ``max_step``, clipped to [lower, upper]."""
    largest = 0.0
    for i in range(q.shape[0]):
        largest = max(largest, abs(dq[i]))
    scale = max_step / largest if largest > max_step else 1.0
    for i in range(q.shape[0]):
        value = q[i] + scale * dq[i]
        q[i] = min(upper[i], max(lower[i], value))
