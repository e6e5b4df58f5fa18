"""Compiled (numba) rotation and transform primitives: the one copy of each formula in the package.

Every kernel writes into an output array the caller owns (no allocation), so the kinematics kernels of
``model`` and ``collision`` (and ``ik``) compile them into their own loops; ``transforms`` wraps them
for numpy callers. Rotations are 3x3 (a 4x4 or 3x4 output gets its upper-left 3x3 written); rigid
transforms are 4x4 ``T_a_b`` (pose of frame b in frame a). Angles in [rad], lengths in [m].
"""
from __future__ import annotations

import numpy as np

from ..compiled import compiled_kernel

#: Below this rotation angle [rad] the rotation vector is read from the skew part alone (sin(angle) ~ angle).
SMALL_ANGLE = 1e-7
#: Within this of pi [rad] the skew part vanishes: the axis comes from the symmetric part instead.
NEAR_PI = 1e-4


@compiled_kernel(inline="always")
def rotation_about_axis_into(ax, ay, az, angle, R):
    """R[:3, :3] <- the rotation of ``angle`` about the unit axis (ax, ay, az) (Rodrigues' formula)."""
    c = np.cos(angle)
    s = np.sin(angle)
    v = 1.0 - c
    R[0, 0] = c + ax * ax * v
    R[0, 1] = ax * ay * v - az * s
    R[0, 2] = ax * az * v + ay * s
    R[1, 0] = ay * ax * v + az * s
    R[1, 1] = c + ay * ay * v
    R[1, 2] = ay * az * v - ax * s
    R[2, 0] = az * ax * v - ay * s
    R[2, 1] = az * ay * v + ax * s
    R[2, 2] = c + az * az * v


@compiled_kernel(inline="always")
def rotation_from_rpy_into(roll, pitch, yaw, R):
    """R[:3, :3] <- the URDF roll-pitch-yaw rotation: fixed axes, Rz(yaw) @ Ry(pitch) @ Rx(roll)."""
    cr = np.cos(roll)
    sr = np.sin(roll)
    cp = np.cos(pitch)
    sp = np.sin(pitch)
    cy = np.cos(yaw)
    sy = np.sin(yaw)
    R[0, 0] = cy * cp
    R[0, 1] = cy * sp * sr - sy * cr
    R[0, 2] = cy * sp * cr + sy * sr
    R[1, 0] = sy * cp
    R[1, 1] = sy * sp * sr + cy * cr
    R[1, 2] = sy * sp * cr - cy * sr
    R[2, 0] = -sp
    R[2, 1] = cp * sr
    R[2, 2] = cp * cr


@compiled_kernel(inline="always")
def rotation_vector(R, out):
    """out (3,) <- log(R) as a rotation vector: axis * angle, angle in [0, pi] [rad]."""
    cos_angle = (R[0, 0] + R[1, 1] + R[2, 2] - 1.0) * 0.5
    cos_angle = min(1.0, max(-1.0, cos_angle))
    angle = np.arccos(cos_angle)
    sx = R[2, 1] - R[1, 2]
    sy = R[0, 2] - R[2, 0]
    sz = R[1, 0] - R[0, 1]
    if angle < SMALL_ANGLE:
        out[0] = 0.5 * sx
        out[1] = 0.5 * sy
        out[2] = 0.5 * sz
    elif np.pi - angle < NEAR_PI:
        # The axis is the column k of R + I with the largest diagonal entry, signed like the skew part.
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


@compiled_kernel(inline="always")
def compose_into(T_a_b, T_b_c, T_a_c):
    """T_a_c (4x4) <- T_a_b @ T_b_c for rigid transforms (their last rows are taken as 0 0 0 1)."""
    for i in range(3):
        a0 = T_a_b[i, 0]
        a1 = T_a_b[i, 1]
        a2 = T_a_b[i, 2]
        for j in range(3):
            T_a_c[i, j] = a0 * T_b_c[0, j] + a1 * T_b_c[1, j] + a2 * T_b_c[2, j]
        T_a_c[i, 3] = a0 * T_b_c[0, 3] + a1 * T_b_c[1, 3] + a2 * T_b_c[2, 3] + T_a_b[i, 3]
    T_a_c[3, 0] = 0.0
    T_a_c[3, 1] = 0.0
    T_a_c[3, 2] = 0.0
    T_a_c[3, 3] = 1.0


@compiled_kernel(inline="always")
def set_identity(T):
    """T (square) <- the identity."""
    for i in range(T.shape[0]):
        for j in range(T.shape[1]):
            T[i, j] = 1.0 if i == j else 0.0
