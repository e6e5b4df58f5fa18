"""The Pose value type and conversions between poses and 4x4 transforms."""
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from ..errors import PoseError
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


def pose_problem(position: tuple[float, ...], orientation: tuple[float, ...]) -> str | None:
    """Why a pose's values cannot be used, or None: the one rule set of single poses and batches."""
    if len(position) != 3 or len(orientation) != 4:
        return f"a pose needs 3 position and 4 quaternion values; got {position} and {orientation}"
    if not all(map(math.isfinite, position + orientation)):
        return f"pose values must be finite; got position {position}, orientation {orientation}"
    if math.hypot(*orientation) < MINIMUM_QUATERNION_NORM:
        return f"orientation quaternion {orientation} is zero: it describes no rotation"
    return None


def _unreadable(pose) -> str:
    return f"cannot read a pose from {pose!r}: expected position (x, y, z) and orientation (x, y, z, w)"


def _array_problem(T: np.ndarray) -> str | None:
    if T.shape != (4, 4) or not np.isfinite(T).all():
        return f"a pose array must be a finite 4x4 transform; got shape {T.shape}"
    return None


def transform_from_any_pose(pose) -> np.ndarray:
    """4x4 transform of a pose (see ``pose_values``) or a 4x4 array; PoseError if unusable (see ``pose_problem``).

    A quaternion that is not of unit length is normalised (as MoveIt does); a (near) zero one is refused.
    """
    if isinstance(pose, np.ndarray):
        problem = _array_problem(pose)
        if problem is not None:
            raise PoseError(problem)
        return pose.astype(float)
    try:
        position, orientation = pose_values(pose)
    except (AttributeError, TypeError, ValueError):
        raise PoseError(_unreadable(pose)) from None
    problem = pose_problem(position, orientation)
    if problem is not None:
        raise PoseError(problem)
    return transform_from_pose(position, orientation)


def transforms_from_poses(poses) -> tuple[np.ndarray, dict[int, str]]:
    """(N, 4, 4) transforms of N poses and {index: reason} for the unusable ones (identity there), by the
    rules of ``transform_from_any_pose``; the rotations of many poses are computed at once.
    """
    if isinstance(poses, np.ndarray):
        T = np.array(poses, dtype=float).reshape(-1, 4, 4)
        bad = {int(i): _array_problem(T[i]) for i in np.flatnonzero(~np.isfinite(T).all(axis=(1, 2)))}
        T[list(bad)] = np.eye(4)
        return T, bad
    values = np.zeros((len(poses), 7))
    values[:, 6] = 1.0  # the identity where a pose is unusable
    bad = {}
    for i, pose in enumerate(poses):
        try:
            position, orientation = pose_values(pose)
        except (AttributeError, TypeError, ValueError):
            bad[i] = _unreadable(pose)
            continue
        problem = pose_problem(position, orientation)
        if problem is None:
            values[i] = position + orientation
        else:
            bad[i] = problem
    T = np.tile(np.eye(4), (len(values), 1, 1))
    T[:, :3, :3] = rotations_from_quaternions(values[:, 3:])
    T[:, :3, 3] = values[:, :3]
    return T, bad
