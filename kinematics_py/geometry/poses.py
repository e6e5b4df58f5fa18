"""The Pose value type and conversions between poses and 4x4 transforms."""
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from ..errors import KinematicsError
from .transforms import quaternion_from_rotation, rotations_from_quaternions, transform_from_pose

#: Quaternions shorter than this carry no orientation and are refused.
MINIMUM_QUATERNION_NORM = 1e-6


class Pose(NamedTuple):
    """A pose: position (x, y, z) [m] and orientation quaternion (x, y, z, w), as geometry_msgs/Pose."""

    position: tuple[float, float, float] = (0.0, 0.0, 0.0)
    orientation: tuple[float, float, float, float] = (0.0, 0.0, 0.0, 1.0)

    @classmethod
    def from_transform(cls, T: np.ndarray) -> Pose:
        return cls(tuple(T[:3, 3].tolist()), tuple(quaternion_from_rotation(T[:3, :3]).tolist()))


class PoseError(KinematicsError, ValueError):
    """A pose that cannot be used: not finite, or a quaternion without orientation."""


def pose_values(pose) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """(position, quaternion xyzw) of a Pose, a geometry_msgs/Pose-like object, or a PoseStamped-like object."""
    if hasattr(pose, "pose") and not hasattr(pose, "position"):
        pose = pose.pose
    position, orientation = pose.position, pose.orientation
    if hasattr(position, "x"):
        position = (position.x, position.y, position.z)
    if hasattr(orientation, "w"):
        orientation = (orientation.x, orientation.y, orientation.z, orientation.w)
    return tuple(map(float, position)), tuple(map(float, orientation))


def transform_from_any_pose(pose) -> np.ndarray:
    """4x4 transform of a pose (see ``pose_values``) or a 4x4 array; PoseError if unusable.

    A quaternion that is not of unit length is normalised (as MoveIt does); a (near) zero one is refused.
    """
    if isinstance(pose, np.ndarray):
        if pose.shape != (4, 4) or not np.isfinite(pose).all():
            raise PoseError(f"a pose array must be a finite 4x4 transform; got shape {pose.shape}")
        return pose.astype(float)
    try:
        position, orientation = pose_values(pose)
    except (AttributeError, TypeError, ValueError):
        raise PoseError(f"cannot read a pose from {pose!r}: expected position (x, y, z) and "
                        f"orientation (x, y, z, w)") from None
    if len(position) != 3 or len(orientation) != 4:
        raise PoseError(f"a pose needs 3 position and 4 quaternion values; got {position} and {orientation}")
    if not all(map(math.isfinite, position + orientation)):
        raise PoseError(f"pose values must be finite; got position {position}, orientation {orientation}")
    if math.hypot(*orientation) < MINIMUM_QUATERNION_NORM:
        raise PoseError(f"orientation quaternion {orientation} is zero: it describes no rotation")
    return transform_from_pose(position, orientation)


def transforms_from_poses(poses) -> tuple[np.ndarray, dict[int, str]]:
    """(N, 4, 4) transforms of N poses and {index: reason} for the unusable ones (identity there).

    Vectorised for many poses: the batch IK entry point converts 1,000s at once.
    """
    if isinstance(poses, np.ndarray):
        T = np.array(poses, dtype=float).reshape(-1, 4, 4)
        bad = {int(i): "pose values must be finite" for i in np.flatnonzero(~np.isfinite(T).all(axis=(1, 2)))}
        T[list(bad)] = np.eye(4)
        return T, bad
    values = np.full((len(poses), 7), np.nan)
    bad = {}
    for i, pose in enumerate(poses):
        try:
            position, orientation = pose_values(pose)
            values[i] = position + orientation
        except (AttributeError, TypeError, ValueError):
            bad[i] = f"cannot read a pose from {pose!r}"
    norms = np.linalg.norm(values[:, 3:], axis=1)
    for i in np.flatnonzero(~np.isfinite(values).all(axis=1)):
        bad.setdefault(int(i), f"pose values must be finite; got {tuple(values[i])}")
    for i in np.flatnonzero(np.isfinite(norms) & (norms < MINIMUM_QUATERNION_NORM)):
        bad.setdefault(int(i), f"orientation quaternion {tuple(values[i, 3:])} is zero: it describes no rotation")
    values[list(bad)] = (0, 0, 0, 0, 0, 0, 1)
    T = np.tile(np.eye(4), (len(values), 1, 1))
    T[:, :3, :3] = rotations_from_quaternions(values[:, 3:])
    T[:, :3, 3] = values[:, :3]
    return T, bad
