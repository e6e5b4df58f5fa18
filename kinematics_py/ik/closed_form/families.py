"""Every branch of the closed-form families, compiled (numba): raw joint angles before limits and checks.

The chain is described by its product of exponentials at zero: ``T_base_tip(theta) = e1 e2 ... e6 T0``
where ``ek`` rotates by ``theta_k`` about the line through ``P_k`` with unit direction ``h_k`` (base frame,
joint signs folded into ``h_k``). ``geometry`` (float64, (GEOMETRY_ROWS, 3)) packs it, rows named below.

Each solver writes up to MAX_BRANCHES rows of angles into ``raw`` and the branch code of each (which root
of each subproblem it took; equal codes name the same posture) into ``codes``, and returns how many.
Angles are not wrapped nor checked: ``kernels`` does that. Undetermined angles (singular poses) take the
seed's value, passed in ``seed``.
"""
from __future__ import annotations

import math

import numpy as np

from ...compiled import compiled_kernel
from .subproblems import (
    add,
    dot,
    matrix_transpose_vector,
    matrix_vector,
    perpendicular,
    rotate,
    sub,
    subproblem1,
    subproblem2,
    subproblem3,
    subproblem4,
    subproblem4_directions,
)

MAX_BRANCHES = 8
#: geometry rows: 0-5 axis directions h_k, 6-11 a point P_k on each axis, then these:
WRIST_POINT_ROW = 12  # spherical wrist: where axes 4-6 meet; three parallel: where axes 5 and 6 meet
SHOULDER_POINT_ROW = 13  # where the intersecting pair of the positioning axes meets (if it does)
NORMAL_TO_H6_ROW = 14  # a unit vector perpendicular to h6
NORMAL_TO_H2_ROW = 15  # a unit vector perpendicular to h2
TIP_ROTATION_ROW = 16  # rows 16-18: the rotation of T0 (rows of the matrix)
TIP_POSITION_ROW = 19  # the translation of T0
GEOMETRY_ROWS = 20

#: How the positioning axes 1-3 of a spherical-wrist arm are arranged (config[1]).
AXES_12_INTERSECT = 0
AXES_23_INTERSECT = 1
AXES_12_PARALLEL = 2
AXES_23_PARALLEL = 3


@compiled_kernel(inline="always")
def row(geometry, index):
    return (geometry[index, 0], geometry[index, 1], geometry[index, 2])


@compiled_kernel(inline="always")
def rotate_back_123(geometry, theta1, theta2, theta3, v):
    """``(rot1 rot2 rot3)^T v`` with ``rotk = rot(h_k, theta_k)``."""
    v = rotate(row(geometry, 0), -theta1, v)
    v = rotate(row(geometry, 1), -theta2, v)
    return rotate(row(geometry, 2), -theta3, v)


@compiled_kernel(inline="always")
def moved_about(geometry, joint, theta, point):
    """``point`` rotated by ``theta`` about the axis of ``joint`` (the line through P_joint along h_joint)."""
    origin = row(geometry, 6 + joint)
    return add(origin, rotate(row(geometry, joint), theta, sub(point, origin)))


@compiled_kernel
def position_arm(geometry, case, W0, W_t, seed, arm, arm_codes):
    """The angles (theta1, theta2, theta3) moving the wrist centre from ``W0`` to ``W_t`` -> rows of ``arm``
    (4, 3) and their count, for the arrangement ``case`` of axes 1-3. ``arm_codes`` gets each row's code
    2 * (root of the outer subproblem) + (root of the inner one), the same whatever the counts."""
    h1 = row(geometry, 0)
    h2 = row(geometry, 1)
    h3 = row(geometry, 2)
    P1 = row(geometry, 6)
    P2 = row(geometry, 7)
    P3 = row(geometry, 8)
    O = row(geometry, SHOULDER_POINT_ROW)
    n = 0
    if case == AXES_12_INTERSECT:
        reach = math.sqrt(dot(sub(W_t, O), sub(W_t, O)))
        t3a, t3b, count3 = subproblem3(h3, sub(W0, P3), sub(O, P3), reach, seed[2])
        for i in range(count3):
            theta3 = t3a if i == 0 else t3b
            w3 = moved_about(geometry, 2, theta3, W0)
            m1a, t2a, m1b, t2b, count = subproblem2(h1, h2, sub(W_t, O), sub(w3, O), -seed[0], seed[1])
            for j in range(count):
                arm[n, 0] = -(m1a if j == 0 else m1b)
                arm[n, 1] = t2a if j == 0 else t2b
                arm[n, 2] = theta3
                arm_codes[n] = 2 * i + j
                n += 1
    elif case == AXES_23_INTERSECT:
        reach = math.sqrt(dot(sub(W0, O), sub(W0, O)))
        m1a, m1b, count1 = subproblem3(h1, sub(W_t, P1), sub(O, P1), reach, -seed[0])
        for i in range(count1):
            theta1 = -(m1a if i == 0 else m1b)
            w1 = moved_about(geometry, 0, -theta1, W_t)
            m2a, t3a, m2b, t3b, count = subproblem2(h2, h3, sub(w1, O), sub(W0, O), -seed[1], seed[2])
            for j in range(count):
                arm[n, 0] = theta1
                arm[n, 1] = -(m2a if j == 0 else m2b)
                arm[n, 2] = t3a if j == 0 else t3b
                arm_codes[n] = 2 * i + j
                n += 1
    elif case == AXES_12_PARALLEL:
        t3a, t3b, count3 = subproblem4(h1, h3, sub(W0, P3), dot(h1, sub(W_t, P3)), seed[2])
        for i in range(count3):
            theta3 = t3a if i == 0 else t3b
            w3 = moved_about(geometry, 2, theta3, W0)
            n = _planar_pair(h1, h2, P1, P2, w3, W_t, seed[0], seed[1], theta3, False, arm, arm_codes, n, 2 * i)
    else:
        m1a, m1b, count1 = subproblem4(h2, h1, sub(W_t, P1), dot(h2, sub(W0, P1)), -seed[0])
        for i in range(count1):
            theta1 = -(m1a if i == 0 else m1b)
            w1 = moved_about(geometry, 0, -theta1, W_t)
            n = _planar_pair(h2, h3, P2, P3, W0, w1, seed[1], seed[2], theta1, True, arm, arm_codes, n, 2 * i)
    return n


@compiled_kernel(inline="always")
def _planar_pair(ha, hb, Pa, Pb, start, goal, seed_a, seed_b, other, other_first, arm, arm_codes, n, code):
    """Angles (a, b) about two parallel axes with ``rot_a rot_b start = goal`` (a about the line (Pa, ha),
    b about (Pb, hb)), written after ``other`` (the third angle) into ``arm`` from row ``n``, with the codes
    ``code`` + (root of b)."""
    reach = math.sqrt(dot(perpendicular(ha, sub(goal, Pa)), perpendicular(ha, sub(goal, Pa))))
    tba, tbb, count = subproblem3(hb, perpendicular(ha, sub(start, Pb)), perpendicular(ha, sub(Pa, Pb)), reach,
                                  seed_b)
    for j in range(count):
        theta_b = tba if j == 0 else tbb
        moved = add(Pb, rotate(hb, theta_b, sub(start, Pb)))
        theta_a = subproblem1(ha, sub(moved, Pa), sub(goal, Pa), seed_a)
        first_column = 1 if other_first else 0
        arm[n, first_column] = theta_a
        arm[n, first_column + 1] = theta_b
        arm[n, 0 if other_first else 2] = other
        arm_codes[n] = code + j
        n += 1
    return n


@compiled_kernel(inline="always")
def spherical_wrist(geometry, M_h6, M_x6, seed, raw, codes, n, code):
    """The wrist angles (theta4, theta5, theta6) with ``rot4 rot5 rot6 = M`` (given by M h6 and M x6), about
    axes 4-6 that meet; appended to rows of ``raw`` whose first three angles are set. Returns the new n."""
    h4 = row(geometry, 3)
    h5 = row(geometry, 4)
    h6 = row(geometry, 5)
    x6 = row(geometry, NORMAL_TO_H6_ROW)
    t5a, t5b, count = subproblem4_directions(h4, h5, h6, M_h6, seed[4])
    first = n
    for j in range(count):
        theta5 = t5a if j == 0 else t5b
        theta4 = subproblem1(h4, rotate(h5, theta5, h6), M_h6, seed[3])
        back = rotate(h5, -theta5, rotate(h4, -theta4, M_x6))
        theta6 = subproblem1(h6, x6, back, seed[5])
        if j > 0:
            for k in range(3):
                raw[n, k] = raw[first, k]
        raw[n, 3] = theta4
        raw[n, 4] = theta5
        raw[n, 5] = theta6
        codes[n] = 2 * code + j
        n += 1
    return n


@compiled_kernel
def solve_spherical_wrist(geometry, case, R, p_t, seed, raw, codes):
    """Every branch of a 6R arm whose axes 4-6 meet; ``R`` = R_target R0^T (tuple rows), ``p_t`` the target
    position. Returns the number of rows written to ``raw``."""
    W0 = row(geometry, WRIST_POINT_ROW)
    p0 = row(geometry, TIP_POSITION_ROW)
    W_t = add(p_t, matrix_vector(R, sub(W0, p0)))
    R_h6 = matrix_vector(R, row(geometry, 5))
    R_x6 = matrix_vector(R, row(geometry, NORMAL_TO_H6_ROW))
    arm = np.empty((4, 3))
    arm_codes = np.empty(4, dtype=np.int64)
    count = position_arm(geometry, case, W0, W_t, seed, arm, arm_codes)
    n = 0
    for i in range(count):
        for k in range(3):
            raw[n, k] = arm[i, k]
        M_h6 = rotate_back_123(geometry, arm[i, 0], arm[i, 1], arm[i, 2], R_h6)
        M_x6 = rotate_back_123(geometry, arm[i, 0], arm[i, 1], arm[i, 2], R_x6)
        n = spherical_wrist(geometry, M_h6, M_x6, seed, raw, codes, n, arm_codes[i])
    return n


@compiled_kernel
def solve_three_parallel(geometry, R, p_t, seed, raw, codes):
    """Every branch of a 6R arm whose axes 2-4 are parallel and axes 5 and 6 meet (UR type)."""
    h1 = row(geometry, 0)
    h2 = row(geometry, 1)
    h3 = row(geometry, 2)
    h5 = row(geometry, 4)
    h6 = row(geometry, 5)
    P1 = row(geometry, 6)
    P2 = row(geometry, 7)
    P3 = row(geometry, 8)
    P4 = row(geometry, 9)
    Q0 = row(geometry, WRIST_POINT_ROW)
    x2 = row(geometry, NORMAL_TO_H2_ROW)
    sign3 = 1.0 if dot(h3, h2) > 0.0 else -1.0
    sign4 = 1.0 if dot(row(geometry, 3), h2) > 0.0 else -1.0
    Q_t = add(p_t, matrix_vector(R, sub(Q0, row(geometry, TIP_POSITION_ROW))))
    R_h6 = matrix_vector(R, h6)
    # Rotations about the parallel axes 2-4 keep components along h2: one equation in theta1 alone.
    m1a, m1b, count1 = subproblem4(h2, h1, sub(Q_t, P1), dot(h2, sub(Q0, P1)), -seed[0])
    n = 0
    for i in range(count1):
        theta1 = -(m1a if i == 0 else m1b)
        t5a, t5b, count5 = subproblem4_directions(h2, h5, h6, rotate(h1, -theta1, R_h6), seed[4])
        for j in range(count5):
            theta5 = t5a if j == 0 else t5b
            h2_in_tip = matrix_transpose_vector(R, rotate(h1, theta1, h2))
            theta6 = subproblem1(h6, h2_in_tip, rotate(h5, -theta5, h2), seed[5])
            R234_x2 = rotate(h1, -theta1, matrix_vector(R, rotate(h6, -theta6, rotate(h5, -theta5, x2))))
            theta234 = subproblem1(h2, x2, R234_x2, seed[1] + sign3 * seed[2] + sign4 * seed[3])
            # Where axis 4's point P4 is after theta2, theta3: the wrist point minus its swing about axis 4.
            Y = add(P1, rotate(h1, -theta1, sub(Q_t, P1)))
            Z = sub(Y, rotate(h2, theta234, sub(Q0, P4)))
            reach = math.sqrt(dot(perpendicular(h2, sub(Z, P2)), perpendicular(h2, sub(Z, P2))))
            t3a, t3b, count3 = subproblem3(h3, perpendicular(h2, sub(P4, P3)), perpendicular(h2, sub(P2, P3)), reach,
                                           seed[2])
            for k in range(count3):
                theta3 = t3a if k == 0 else t3b
                moved_P4 = add(P3, rotate(h3, theta3, sub(P4, P3)))
                theta2 = subproblem1(h2, sub(moved_P4, P2), sub(Z, P2), seed[1])
                raw[n, 0] = theta1
                raw[n, 1] = theta2
                raw[n, 2] = theta3
                raw[n, 3] = sign4 * (theta234 - theta2 - sign3 * theta3)
                raw[n, 4] = theta5
                raw[n, 5] = theta6
                codes[n] = 4 * i + 2 * j + k
                n += 1
    return n
