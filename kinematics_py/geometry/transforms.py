"""Rigid transforms as 4x4 numpy arrays (rotations, RPY and rotation vectors computed by ``kernels``).

Conventions used everywhere in kinematics_py:
- ``T_a_b`` is the pose of frame b expressed in frame a (maps points from b to a).
- Quaternions are ordered (x, y, z, w), as in geometry_msgs.
- Roll-pitch-yaw follows URDF: fixed axes, R = Rz(yaw) @ Ry(pitch) @ Rx(roll).
- Lengths in [m], angles in [rad].
"""
from __future__ import annotations

import math

import numpy as np

from ..errors import PoseError
from . import kernels

#: Quaternions shorter than this carry no orientation: the transforms refuse them (PoseError).
NO_ORIENTATION_NORM = 1e-12


def rotation_from_rpy(roll: float, pitch: float, yaw: float) -> np.ndarray:
    """3x3 rotation from URDF roll-pitch-yaw [rad]."""
    R = np.empty((3, 3))
    kernels.rotation_from_rpy_into(float(roll), float(pitch), float(yaw), R)
    return R


def rotation_about_axis(axis: np.ndarray, angle: float) -> np.ndarray:
    """3x3 rotation of ``angle`` [rad] about the unit vector ``axis`` (Rodrigues)."""
    x, y, z = axis
    R = np.empty((3, 3))
    kernels.rotation_about_axis_into(float(x), float(y), float(z), float(angle), R)
    return R


def make_transform(rotation: np.ndarray | None = None, translation=(0.0, 0.0, 0.0)) -> np.ndarray:
    """4x4 homogeneous transform from a 3x3 rotation (identity if None) and a translation [m]."""
    T = np.eye(4)
    if rotation is not None:
        T[:3, :3] = rotation
    T[:3, 3] = translation
    return T


def transform_from_xyz_rpy(xyz, rpy) -> np.ndarray:
    """4x4 transform from a URDF ``<origin xyz rpy>``."""
    return make_transform(rotation_from_rpy(*rpy), xyz)


def _quaternion_matrix_rows(x, y, z, w):
    """Rows of the rotation matrix of a unit quaternion; works on floats and on arrays alike."""
    return (
        (1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)),
        (2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)),
        (2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)),
    )


def unit_quaternions(quaternions_xyzw: np.ndarray) -> np.ndarray:
    """(N, 4) unit quaternions (x, y, z, w) of (N, 4) finite, non-zero ones of any magnitude.

    Where the squared norms overflow or underflow, each quaternion is divided by its largest component first,
    so (0, 0, 0, 1e200) normalises too. PoseError names the first quaternion that is not finite or shorter
    than ``NO_ORIENTATION_NORM``.
    """
    q = np.asarray(quaternions_xyzw, dtype=float).reshape(-1, 4)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore", under="ignore"):
        squared = np.einsum("ij,ij->i", q, q)
        if np.all((squared >= NO_ORIENTATION_NORM ** 2) & (squared < np.inf)):  # the common case
            return q / np.sqrt(squared)[:, None]
        largest = np.abs(q).max(axis=1, initial=0.0)
        scaled = q / largest[:, None]
        scaled_norms = np.sqrt(np.einsum("ij,ij->i", scaled, scaled))
        usable = np.isfinite(q).all(axis=1) & (largest * scaled_norms >= NO_ORIENTATION_NORM)
    if not usable.all():
        raise PoseError(f"quaternion {tuple(q[~usable][0].tolist())} has no orientation (zero or non-finite)")
    return scaled / scaled_norms[:, None]


def rotations_from_quaternions(quaternions_xyzw: np.ndarray) -> np.ndarray:
    """(N, 3, 3) rotations from (N, 4) quaternions (x, y, z, w), each normalised first (``unit_quaternions``)."""
    rows = _quaternion_matrix_rows(*unit_quaternions(quaternions_xyzw).T)
    return np.stack([np.stack(row, axis=-1) for row in rows], axis=1)


def quaternion_from_rotation(rotation: np.ndarray) -> np.ndarray:
    """Unit quaternion (x, y, z, w) with w >= 0 from a 3x3 rotation matrix."""
    R = np.asarray(rotation, dtype=float)
    trace = R[0, 0] + R[1, 1] + R[2, 2]
    if trace > 0.0:
        s = 2.0 * np.sqrt(trace + 1.0)
        q = [(R[2, 1] - R[1, 2]) / s, (R[0, 2] - R[2, 0]) / s, (R[1, 0] - R[0, 1]) / s, 0.25 * s]
    elif R[0, 0] > R[1, 1] and R[0, 0] > R[2, 2]:
        s = 2.0 * np.sqrt(1.0 + R[0, 0] - R[1, 1] - R[2, 2])
        q = [0.25 * s, (R[0, 1] + R[1, 0]) / s, (R[0, 2] + R[2, 0]) / s, (R[2, 1] - R[1, 2]) / s]
    elif R[1, 1] > R[2, 2]:
        s = 2.0 * np.sqrt(1.0 + R[1, 1] - R[0, 0] - R[2, 2])
        q = [(R[0, 1] + R[1, 0]) / s, 0.25 * s, (R[1, 2] + R[2, 1]) / s, (R[0, 2] - R[2, 0]) / s]
    else:
        s = 2.0 * np.sqrt(1.0 + R[2, 2] - R[0, 0] - R[1, 1])
        q = [(R[0, 2] + R[2, 0]) / s, (R[1, 2] + R[2, 1]) / s, 0.25 * s, (R[1, 0] - R[0, 1]) / s]
    q = np.array(q)
    q /= np.linalg.norm(q)
    return -q if q[3] < 0 else q


def unit_quaternion(x: float, y: float, z: float, w: float) -> tuple[float, float, float, float]:
    """The unit quaternion of a finite, non-zero (x, y, z, w) of any magnitude (see ``unit_quaternions``)."""
    squared = x * x + y * y + z * z + w * w
    if NO_ORIENTATION_NORM ** 2 <= squared < math.inf:  # the common case (False for NaN)
        norm = math.sqrt(squared)
        return x / norm, y / norm, z / norm, w / norm
    largest = max(abs(x), abs(y), abs(z), abs(w))
    if math.isfinite(largest) and not math.isnan(x + y + z + w) and largest > 0.0:  # max() may skip a NaN
        sx, sy, sz, sw = x / largest, y / largest, z / largest, w / largest
        scaled_norm = math.sqrt(sx * sx + sy * sy + sz * sz + sw * sw)
        if largest * scaled_norm >= NO_ORIENTATION_NORM:
            return sx / scaled_norm, sy / scaled_norm, sz / scaled_norm, sw / scaled_norm
    raise PoseError(f"quaternion {(x, y, z, w)} has no orientation (zero or non-finite)")


def transform_from_pose(position, orientation_xyzw) -> np.ndarray:
    """4x4 transform from a position [m] and a quaternion (x, y, z, w) (normalised first, ``unit_quaternion``)."""
    rows = _quaternion_matrix_rows(*unit_quaternion(*map(float, orientation_xyzw)))
    px, py, pz = position
    return np.array([*rows[0], px, *rows[1], py, *rows[2], pz, 0.0, 0.0, 0.0, 1.0]).reshape(4, 4)


def invert_transform(T: np.ndarray) -> np.ndarray:
    """Inverse of a rigid 4x4 transform."""
    R = T[:3, :3]
    return make_transform(R.T, -R.T @ T[:3, 3])


def rotation_log(rotation: np.ndarray) -> np.ndarray:
    """Rotation vector (axis * angle [rad], angle in [0, pi]) of a 3x3 rotation matrix."""
    log = np.empty(3)
    kernels.rotation_vector(np.ascontiguousarray(rotation, dtype=float), log)  # one compiled signature for any layout
    return log


def pose_error(T_target: np.ndarray, T_actual: np.ndarray) -> tuple[float, float]:
    """(position error [m], rotation error [rad]) between two 4x4 poses in the same frame."""
    position_error = float(np.linalg.norm(T_target[:3, 3] - T_actual[:3, 3]))
    rotation_error = float(np.linalg.norm(rotation_log(T_target[:3, :3].T @ T_actual[:3, :3])))
    return position_error, rotation_error
