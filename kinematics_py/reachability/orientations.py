"""The tool orientations a reachability map tries at every voxel.

``sphere_orientations(directions, rolls)``: ``directions`` tool-axis directions spread evenly over the
sphere (a Fibonacci lattice), each with ``rolls`` rotations about the tool axis, evenly spaced over a turn.
The tool axis is the tip frame's z axis (the approach direction of ROS tool frames): in rotation
``R_base_tip`` its third column is the direction.
"""
from __future__ import annotations

import math

import numpy as np

from ..errors import KinematicsError
from ..geometry.transforms import rotations_from_quaternions


def fibonacci_directions(count: int) -> np.ndarray:
    """(count, 3) unit vectors spread evenly over the sphere (first +z-most, last -z-most)."""
    k = np.arange(count) + 0.5
    z = 1.0 - 2.0 * k / count
    azimuth = math.pi * (1.0 + math.sqrt(5.0)) * k
    radius = np.sqrt(np.clip(1.0 - z * z, 0.0, None))
    return np.column_stack([radius * np.cos(azimuth), radius * np.sin(azimuth), z])


def frames_along(directions: np.ndarray) -> np.ndarray:
    """(N, 3, 3) rotations whose z axis is each direction (x axis: the base's x or y made orthogonal)."""
    z = directions / np.linalg.norm(directions, axis=1, keepdims=True)
    helper = np.where(np.abs(z[:, :1]) < 0.9, [[1.0, 0.0, 0.0]], [[0.0, 1.0, 0.0]])
    x = helper - np.sum(helper * z, axis=1, keepdims=True) * z
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    return np.stack([x, np.cross(z, x), z], axis=2)


def sphere_orientations(directions: int, rolls: int) -> np.ndarray:
    """(directions * rolls, 3, 3) rotations R_base_tip: direction-major, then roll about the tool z axis."""
    if directions < 1 or rolls < 1:
        raise KinematicsError(f"directions and rolls must be >= 1; got {directions} and {rolls}")
    angles = 2.0 * math.pi * np.arange(rolls) / rolls
    R_roll = np.zeros((rolls, 3, 3))
    R_roll[:, 0, 0] = R_roll[:, 1, 1] = np.cos(angles)
    R_roll[:, 1, 0] = np.sin(angles)
    R_roll[:, 0, 1] = -np.sin(angles)
    R_roll[:, 2, 2] = 1.0
    frames = frames_along(fibonacci_directions(directions))
    return np.einsum("dij,rjk->drik", frames, R_roll).reshape(-1, 3, 3)


def orientations_from_quaternions(quaternions_xyzw) -> np.ndarray:
    """(K, 3, 3) rotations from a given list of quaternions (x, y, z, w); raises naming a bad one."""
    q = np.asarray(quaternions_xyzw, dtype=float)
    if q.ndim != 2 or q.shape[1] != 4 or len(q) == 0 or not np.isfinite(q).all():
        raise KinematicsError(f"orientations must be a non-empty list of finite quaternions (x, y, z, w); got "
                              f"an array of shape {q.shape}")
    try:
        return rotations_from_quaternions(q)
    except ValueError as error:
        raise KinematicsError(f"orientations: {error}") from None
