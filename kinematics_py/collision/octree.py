"""Voxel obstacles: an octree's occupied voxels as one collision shape, from an OctoMap stream or a point cloud.

An ``Octree`` is a set of occupied cubes of edge ``resolution`` [m] on OctoMap's grid (``octomap_format``), in
its own frame; every occupied voxel is an obstacle. The exact checker tests its voxels as boxes (``boxes``, under
their ``bounds_tree``, in ``convex_kernels``), the collision backend as coal's octree (contacts, pairs the kernels
leave undecided). A planning scene places it like any shape: the octomap of a planning scene message is the world
object ``OCTOMAP_ID``, and ``PlanningScene.add_point_cloud`` makes one from an (N, 3) point cloud.
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from .geometry import MAX_SIZE, GeometryError, coordinate_problem
from .octomap_format import KEY_OFFSET, TREE_DEPTH, binary_stream, key_centers, keys_of_points, occupied_keys

#: The world object holding a planning scene's octomap (MoveIt's name; no collision object may use it).
OCTOMAP_ID = "<octomap>"


@dataclass(frozen=True, eq=False)
class Octree:
    """Occupied voxels: cubes of edge ``resolution`` [m] with OctoMap keys ``keys`` ((n, 3) ints, read-only),
    in the octree's own frame. Build one with ``from_stream`` or ``from_points``."""

    keys: np.ndarray
    resolution: float

    def __post_init__(self):
        resolution = _resolution(self.resolution)
        keys = np.array(self.keys, dtype=np.int64).reshape(-1, 3)
        if len(keys) == 0:
            raise GeometryError("an octree needs at least one occupied voxel")
        if keys.min() < 0 or keys.max() >= 2 * KEY_OFFSET:
            raise GeometryError(f"octree keys must lie within [0, {2 * KEY_OFFSET - 1}]")
        keys.setflags(write=False)
        object.__setattr__(self, "keys", keys)
        object.__setattr__(self, "resolution", resolution)
        low, high = self.local_bounds()
        problem = coordinate_problem(np.stack([low - high, low + high]), "octree voxels")
        if problem is not None:
            raise GeometryError(problem)

    @classmethod
    def from_stream(cls, data: bytes, binary: bool, resolution: float, tree_id: str = "OcTree") -> Octree:
        """The occupied voxels of an OctoMap stream (octomap_msgs/Octomap ``data``); OctomapFormatError or
        GeometryError say what is wrong."""
        return cls(occupied_keys(data, binary, tree_id), resolution)

    @classmethod
    def from_points(cls, points, resolution: float, clip_box=None) -> Octree:
        """The voxels of ``resolution`` [m] holding at least one of ``points`` ((N, 3) [m]); points that are not
        finite are dropped, and with ``clip_box`` = (lower corner, upper corner) only the points inside that
        axis-aligned box are kept (both in the points' frame)."""
        resolution = _resolution(resolution)
        points = np.asarray(points, dtype=float)
        if points.ndim != 2 or points.shape[1] != 3:
            raise GeometryError(f"a point cloud must have shape (N, 3); got {points.shape}")
        points = points[np.isfinite(points).all(axis=1)]
        if clip_box is not None:
            lower, upper = (np.asarray(corner, dtype=float).reshape(3) for corner in clip_box)
            if not (np.isfinite(lower).all() and np.isfinite(upper).all() and (lower <= upper).all()):
                raise GeometryError(f"clip_box must be (lower corner, upper corner) with lower <= upper; got "
                                    f"{clip_box!r}")
            points = points[((points >= lower) & (points <= upper)).all(axis=1)]
        if len(points) == 0:
            raise GeometryError("no finite point of the point cloud lies inside the clip box" if clip_box is not None
                                else "the point cloud has no finite point")
        reach = KEY_OFFSET * resolution
        if np.abs(points).max() >= reach:
            raise GeometryError(f"point cloud coordinates must lie within +-{reach:g} m (2^{TREE_DEPTH - 1} voxels "
                                f"of {resolution:g} m); got {np.abs(points).max():g}")
        return cls(np.unique(keys_of_points(points, resolution), axis=0), resolution)

    @functools.cached_property
    def centers(self) -> np.ndarray:
        """(n, 3) voxel centres [m]."""
        return key_centers(self.keys, self.resolution)

    @functools.cached_property
    def boxes(self) -> tuple[np.ndarray, np.ndarray]:
        """The occupied voxels as disjoint boxes whose union is theirs: (lower corners, upper corners) ((n, 3) [m]
        each, in the octree's frame). Runs of voxels along x become one box, then boxes alike but for their y
        (their z) that meet along it: a flat surface is a few boxes, not thousands of voxels."""
        lower, extent = self.keys.copy(), np.ones_like(self.keys)
        for axis in range(3):
            lower, extent = _merged_along(lower, extent, axis)
        return (lower - KEY_OFFSET) * self.resolution, (lower + extent - KEY_OFFSET) * self.resolution

    def local_bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """(centre, half extents) [m] of the box around every occupied voxel."""
        low = (self.keys.min(axis=0) - KEY_OFFSET) * self.resolution
        high = (self.keys.max(axis=0) + 1 - KEY_OFFSET) * self.resolution
        return (low + high) / 2, (high - low) / 2

    def binary_stream(self) -> bytes:
        """These voxels as OctoMap's binary stream (octomap_msgs/Octomap ``data`` with ``binary: true``)."""
        return binary_stream(self.keys)

    def __len__(self) -> int:
        return len(self.keys)


def _merged_along(lower: np.ndarray, extent: np.ndarray, axis: int) -> tuple[np.ndarray, np.ndarray]:
    """Disjoint boxes of voxel keys (lower corners, extents (n, 3) ints) with each run of boxes that have the same
    lower corner and extent on the other two axes and meet along ``axis`` made one box."""
    others = [a for a in range(3) if a != axis]
    order = np.lexsort((lower[:, axis], *(extent[:, a] for a in others), *(lower[:, a] for a in others)))
    lower, extent = lower[order], extent[order]
    same_row = (lower[1:, others] == lower[:-1, others]).all(axis=1) & \
        (extent[1:, others] == extent[:-1, others]).all(axis=1)
    meets = same_row & (lower[1:, axis] == lower[:-1, axis] + extent[:-1, axis])
    starts = np.flatnonzero(np.concatenate([[True], ~meets]))
    merged_lower, merged_extent = lower[starts], extent[starts]
    merged_extent[:, axis] = np.add.reduceat(extent[:, axis], starts)
    return merged_lower, merged_extent


def _resolution(value) -> float:
    resolution = float(value) if isinstance(value, (int, float, np.floating)) else math.nan
    if not (math.isfinite(resolution) and 0.0 < resolution <= MAX_SIZE):
        raise GeometryError(f"octree resolution must be finite, > 0 and at most {MAX_SIZE:g} [m]; got {value!r}")
    return resolution
