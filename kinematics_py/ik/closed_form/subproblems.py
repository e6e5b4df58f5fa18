"""Paden-Kahan subproblems 1-4 and the 3-vector algebra they need, compiled (numba), allocation-free.

Vectors are 3-tuples of floats (numba keeps them in registers), rotations ``rot(k, theta)`` are about a
unit axis ``k`` through the origin (right-hand rule). Each subproblem returns its candidate angles and how
many there are; when the exact problem has no solution the least-squares one is returned (the caller's
forward-kinematics check rejects it if it is not a solution). When an angle is undetermined (a vector on
the rotation axis) the subproblem returns the caller's ``fallback`` angle: every angle is a solution then,
and the caller passes the seed's value so that the answer is the one nearest the seed.
"""
from __future__ import annotations

import math

from ...compiled import compiled_kernel

#: Below this squared length [m^2 or 1] a vector counts as lying on the rotation axis: any angle then moves
#: it by less than 1e-9 m, far below the verification tolerance, so the fallback angle is as good as any.
DEGENERATE_SQUARED_NORM = 1e-18


@compiled_kernel(inline="always")
def dot(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


@compiled_kernel(inline="always")
def cross(a, b):
    return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])


@compiled_kernel(inline="always")
def add(a, b):
    return (a[0] + b[0], a[1] + b[1], a[2] + b[2])


@compiled_kernel(inline="always")
def sub(a, b):
    return (a[0] - b[0], a[1] - b[1], a[2] - b[2])


@compiled_kernel(inline="always")
def scale(s, a):
    return (s * a[0], s * a[1], s * a[2])


@compiled_kernel(inline="always")
def perpendicular(k, v):
    """The component of ``v`` perpendicular to the unit vector ``k``."""
    return sub(v, scale(dot(k, v), k))


@compiled_kernel(inline="always")
def rotate(k, theta, v):
    """``rot(k, theta) v`` (Rodrigues' formula)."""
    c = math.cos(theta)
    s = math.sin(theta)
    kxv = cross(k, v)
    along = dot(k, v) * (1.0 - c)
    return (c * v[0] + s * kxv[0] + along * k[0],
            c * v[1] + s * kxv[1] + along * k[1],
            c * v[2] + s * kxv[2] + along * k[2])


@compiled_kernel(inline="always")
def matrix_vector(M, v):
    """``M v`` for a matrix given as a tuple of three row tuples."""
    return (dot(M[0], v), dot(M[1], v), dot(M[2], v))


@compiled_kernel(inline="always")
def matrix_transpose_vector(M, v):
    """``M^T v`` for a matrix given as a tuple of three row tuples."""
    return (M[0][0] * v[0] + M[1][0] * v[1] + M[2][0] * v[2],
            M[0][1] * v[0] + M[1][1] * v[1] + M[2][1] * v[2],
            M[0][2] * v[0] + M[1][2] * v[1] + M[2][2] * v[2])


@compiled_kernel(inline="always")
def subproblem1(k, p, q, fallback):
    """Subproblem 1: the angle theta that brings ``rot(k, theta) p`` nearest ``q`` (exact when both lie on
    the same circle about ``k``). ``fallback`` when ``p`` or ``q`` lies on the axis."""
    p_perp = perpendicular(k, p)
    q_perp = perpendicular(k, q)
    if dot(p_perp, p_perp) < DEGENERATE_SQUARED_NORM or dot(q_perp, q_perp) < DEGENERATE_SQUARED_NORM:
        return fallback
    return math.atan2(dot(k, cross(p_perp, q_perp)), dot(p_perp, q_perp))


@compiled_kernel(inline="always")
def subproblem4(h, k, p, d, fallback):
    """Subproblem 4: the angles theta with ``h . rot(k, theta) p = d`` -> (theta_a, theta_b, count).

    count is 2, or 1 when the two coincide or the equation has no solution (then theta_a is the
    least-squares angle); both angles are ``fallback`` when every angle gives the same value."""
    p_perp = perpendicular(k, p)
    a = dot(h, p_perp)
    b = dot(h, cross(k, p))
    rhs = d - dot(k, p) * dot(h, k)
    radius = math.hypot(a, b)
    if radius * radius < DEGENERATE_SQUARED_NORM:
        return fallback, fallback, 1
    phase = math.atan2(b, a)
    ratio = rhs / radius
    if ratio >= 1.0:
        return phase, phase, 1
    if ratio <= -1.0:
        return phase + math.pi, phase + math.pi, 1
    half_width = math.acos(ratio)
    return phase + half_width, phase - half_width, 2


@compiled_kernel(inline="always")
def subproblem3(k, p, q, d, fallback):
    """Subproblem 3: the angles theta with ``|q - rot(k, theta) p| = d`` -> (theta_a, theta_b, count), as
    ``subproblem4`` (least squares when out of reach)."""
    along = dot(k, sub(q, p))
    d_perp_squared = d * d - along * along
    p_perp = perpendicular(k, p)
    q_perp = perpendicular(k, q)
    target = 0.5 * (dot(q_perp, q_perp) + dot(p_perp, p_perp) - d_perp_squared)
    return subproblem4(q_perp, k, p_perp, target, fallback)


@compiled_kernel(inline="always")
def subproblem2(k1, k2, p1, p2, fallback1, fallback2):
    """Subproblem 2: the angle pairs with ``rot(k1, theta1) p1 = rot(k2, theta2) p2`` ->
    (theta1_a, theta2_a, theta1_b, theta2_b, count); ``k1`` and ``k2`` are not parallel.

    The common image x = alpha k1 + beta k2 + gamma (k1 x k2) keeps each vector's component along its
    axis and its length; gamma = +-sqrt(...) gives the two pairs (one, least squares, when out of reach)."""
    c = dot(k1, k2)
    normal = cross(k1, k2)
    sin_squared = dot(normal, normal)
    a1 = dot(k1, p1)
    a2 = dot(k2, p2)
    alpha = (a1 - c * a2) / sin_squared
    beta = (a2 - c * a1) / sin_squared
    radius_squared = 0.5 * (dot(p1, p1) + dot(p2, p2))
    in_plane = alpha * alpha + beta * beta + 2.0 * alpha * beta * c
    gamma_squared = (radius_squared - in_plane) / sin_squared
    base = add(scale(alpha, k1), scale(beta, k2))
    count = 2
    if gamma_squared <= 0.0:
        gamma_squared = 0.0
        count = 1
    gamma = math.sqrt(gamma_squared)
    x_a = add(base, scale(gamma, normal))
    x_b = sub(base, scale(gamma, normal))
    # rot(k1, theta1) p1 = x  <=>  theta1 = SP1(k1, p1 -> x); likewise theta2 = SP1(k2, p2 -> x).
    return (subproblem1(k1, p1, x_a, fallback1), subproblem1(k2, p2, x_a, fallback2),
            subproblem1(k1, p1, x_b, fallback1), subproblem1(k2, p2, x_b, fallback2), count)


@compiled_kernel(inline="always")
def _angle_between(u, v):
    """The angle [rad] between two vectors, accurate near 0 and pi (unlike acos of the dot product)."""
    return math.atan2(math.sqrt(dot(cross(u, v), cross(u, v))), dot(u, v))


@compiled_kernel(inline="always")
def subproblem4_directions(h, k, p, target, fallback):
    """Subproblem 4 for unit vectors, accurate near the singular (tangent) case: the angles theta with
    ``angle(h, rot(k, theta) p) = angle(h, target)`` -> (theta_a, theta_b, count) as ``subproblem4``.

    By the spherical law of cosines, with a = angle(k, h), b = angle(k, p), alpha = angle(h, target) and
    theta0 the angle bringing p nearest h: sin^2((theta - theta0) / 2) = sin((alpha + a - b) / 2)
    sin((alpha - a + b) / 2) / (sin a sin b). Every term is an accurate angle, so theta keeps its precision
    when the two roots nearly coincide (a wrist nearly straight), where the plain form's acos loses half
    the digits.
    """
    a = _angle_between(k, h)
    b = _angle_between(k, p)
    product = math.sin(a) * math.sin(b)
    if product * product < DEGENERATE_SQUARED_NORM:
        return fallback, fallback, 1
    theta0 = subproblem1(k, p, h, fallback)
    alpha = _angle_between(h, target)
    half_sine_squared = math.sin(0.5 * (alpha + a - b)) * math.sin(0.5 * (alpha - a + b)) / product
    if half_sine_squared <= 0.0:
        return theta0, theta0, 1
    if half_sine_squared >= 1.0:
        return theta0 + math.pi, theta0 + math.pi, 1
    half_width = 2.0 * math.asin(math.sqrt(half_sine_squared))
    return theta0 + half_width, theta0 - half_width, 2
