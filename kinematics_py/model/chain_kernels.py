"""Compiled (numba) forward kinematics and geometric Jacobians of serial chains.

A chain is flattened once into two arrays (see ``Chain``):

``segments``: float64, shape (m + 1, SEGMENT_WIDTH). Row i < m describes movable joint i from base to
tip: the fixed transform from the previous joint frame to this joint's frame (rotation row-major in
columns 0-8, translation in 9-11), the joint axis in its own frame (12-14), and the mimic factors
(15: multiplier, 16: offset) so that the joint value is ``multiplier * q[variable] + offset``.
Row m holds the fixed transform from the last joint frame to the tip (columns 0-11).

``joint_info``: int64, shape (m, 2): column 0 the motion type (PRISMATIC, REVOLUTE about a general
axis, or REVOLUTE_X/Y/Z about a coordinate axis, which is cheaper), column 1 the index of the chain
variable that drives the joint.

Every kernel returns False, leaving its outputs partly written, when a joint value is not finite.
``ik.kernels`` compiles these functions into its own kernels; ``compiled_kernel`` keeps their caches in step.
"""
from __future__ import annotations

import numpy as np

from ..compiled import compiled_kernel
from ..geometry.kernels import rotation_about_axis_into

REVOLUTE = 1
PRISMATIC = 2
REVOLUTE_X = 3
REVOLUTE_Y = 4
REVOLUTE_Z = 5
SEGMENT_WIDTH = 17


@compiled_kernel(inline="always")
def _apply_fixed(R, p, row, scratch):
    """R, p <- (R, p) composed with the fixed transform stored in ``row``."""
    for i in range(3):
        p[i] += R[i, 0] * row[9] + R[i, 1] * row[10] + R[i, 2] * row[11]
    for i in range(3):
        a0 = R[i, 0]
        a1 = R[i, 1]
        a2 = R[i, 2]
        for j in range(3):
            scratch[i, j] = a0 * row[j] + a1 * row[3 + j] + a2 * row[6 + j]
    for i in range(3):
        for j in range(3):
            R[i, j] = scratch[i, j]


@compiled_kernel(inline="always")
def _apply_rotation(R, local, scratch):
    for i in range(3):
        a0 = R[i, 0]
        a1 = R[i, 1]
        a2 = R[i, 2]
        for j in range(3):
            scratch[i, j] = a0 * local[0, j] + a1 * local[1, j] + a2 * local[2, j]
    for i in range(3):
        for j in range(3):
            R[i, j] = scratch[i, j]


@compiled_kernel
def chain_pose(q, segments, joint_info, R, p, axes_world, origins_world):
    """Pose of the tip (R, p written in place) and, per joint, its world axis and origin.

    Returns False if a joint value is not finite.
    """
    scratch = np.empty((3, 3))
    local = np.empty((3, 3))
    for i in range(3):
        p[i] = 0.0
        for j in range(3):
            R[i, j] = 1.0 if i == j else 0.0
    m = joint_info.shape[0]
    for k in range(m):
        row = segments[k]
        _apply_fixed(R, p, row, scratch)
        value = q[joint_info[k, 1]]
        if not np.isfinite(value):
            return False
        value = row[15] * value + row[16]
        ax = row[12]
        ay = row[13]
        az = row[14]
        for i in range(3):
            axes_world[k, i] = R[i, 0] * ax + R[i, 1] * ay + R[i, 2] * az
            origins_world[k, i] = p[i]
        motion = joint_info[k, 0]
        if motion == PRISMATIC:
            for i in range(3):
                p[i] += axes_world[k, i] * value
        elif motion == REVOLUTE:
            rotation_about_axis_into(ax, ay, az, value, local)
            _apply_rotation(R, local, scratch)
        else:
            # About coordinate axis k: only the columns a = k+1 and b = k+2 (cyclic) of R mix.
            a = (motion - REVOLUTE_X + 1) % 3
            b = (motion - REVOLUTE_X + 2) % 3
            c = np.cos(value)
            s = np.sin(value)
            for i in range(3):
                ra = R[i, a]
                rb = R[i, b]
                R[i, a] = c * ra + s * rb
                R[i, b] = c * rb - s * ra
    _apply_fixed(R, p, segments[m], scratch)
    return True


@compiled_kernel
def chain_jacobian_from_pose(p, joint_info, multipliers, axes_world, origins_world, J):
    """Geometric Jacobian (6, n), rows (v, w), reference point ``p`` (the tip), base frame."""
    J[:, :] = 0.0
    for k in range(joint_info.shape[0]):
        col = joint_info[k, 1]
        s = multipliers[k]
        wx = axes_world[k, 0]
        wy = axes_world[k, 1]
        wz = axes_world[k, 2]
        if joint_info[k, 0] != PRISMATIC:
            rx = p[0] - origins_world[k, 0]
            ry = p[1] - origins_world[k, 1]
            rz = p[2] - origins_world[k, 2]
            J[0, col] += s * (wy * rz - wz * ry)
            J[1, col] += s * (wz * rx - wx * rz)
            J[2, col] += s * (wx * ry - wy * rx)
            J[3, col] += s * wx
            J[4, col] += s * wy
            J[5, col] += s * wz
        else:
            J[0, col] += s * wx
            J[1, col] += s * wy
            J[2, col] += s * wz


@compiled_kernel(inline="always")
def _store_transform(R, p, T):
    """T (4, 4) <- the homogeneous transform of rotation R and translation p."""
    for i in range(3):
        for j in range(3):
            T[i, j] = R[i, j]
        T[i, 3] = p[i]
        T[3, i] = 0.0
    T[3, 3] = 1.0


@compiled_kernel
def forward_kinematics_batch(Q, segments, joint_info, T_out, J_out):
    """T_out[b] = T_base_tip(Q[b]) for every row of Q (shape (B, n)) and, when J_out has B rows (not 0),
    J_out[b] (6, n) the geometric Jacobian at Q[b]. False if any value is not finite."""
    m = joint_info.shape[0]
    axes_world = np.empty((m, 3))
    origins_world = np.empty((m, 3))
    multipliers = segments[:m, 15].copy()
    R = np.empty((3, 3))
    p = np.empty(3)
    want_jacobian = J_out.shape[0] > 0
    for b in range(Q.shape[0]):
        if not chain_pose(Q[b], segments, joint_info, R, p, axes_world, origins_world):
            return False
        _store_transform(R, p, T_out[b])
        if want_jacobian:
            chain_jacobian_from_pose(p, joint_info, multipliers, axes_world, origins_world, J_out[b])
    return True
