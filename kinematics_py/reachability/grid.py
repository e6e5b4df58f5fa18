"""The voxel grid of a reachability map: an axis-aligned box in the base frame cut into cubes."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import KinematicsError

#: The most voxels a grid may have (a 1 mm grid over a 2 m cube is 8e9: a typo, not a map).
MAX_VOXELS = 50_000_000


@dataclass(frozen=True)
class VoxelGrid:
    """``shape`` (nx, ny, nz) cubes of edge ``resolution`` [m]; voxel (i, j, k) is centred at
    ``lower + (i, j, k + 0.5) * resolution`` [m] in the base frame. Voxels are numbered x-major (C order)."""

    lower: tuple[float, float, float]
    resolution: float
    shape: tuple[int, int, int]

    @classmethod
    def covering(cls, box_lower, box_upper, resolution: float) -> VoxelGrid:
        """The grid of cubes of ``resolution`` [m] covering the box [lower, upper] [m], centred on it."""
        lower, upper = np.asarray(box_lower, dtype=float), np.asarray(box_upper, dtype=float)
        if not (np.isfinite(resolution) and resolution > 0.0):
            raise KinematicsError(f"resolution must be finite and > 0 [m]; got {resolution!r}")
        if lower.shape != (3,) or upper.shape != (3,) or not (np.isfinite(lower).all() and np.isfinite(upper).all()
                                                              and np.all(upper > lower)):
            raise KinematicsError(f"the workspace box needs 3 finite lower values below 3 upper values [m]; got "
                                  f"{lower.tolist()} and {upper.tolist()}")
        shape = np.maximum(np.ceil((upper - lower) / resolution - 1e-9), 1).astype(int)
        if int(np.prod(shape.astype(float))) > MAX_VOXELS:
            raise KinematicsError(f"a {resolution} m grid over this box has {shape.tolist()} voxels, more than "
                                  f"{MAX_VOXELS}: use a coarser resolution or a smaller box")
        start = (lower + upper) / 2.0 - shape * resolution / 2.0
        return cls(tuple(start.tolist()), float(resolution), tuple(shape.tolist()))

    @property
    def size(self) -> int:
        return int(np.prod(self.shape))

    def centres(self, voxels: np.ndarray | slice = slice(None)) -> np.ndarray:
        """(n, 3) centres [m] of the given voxel numbers (default: all)."""
        numbers = np.arange(self.size)[voxels]
        ijk = np.column_stack(np.unravel_index(numbers, self.shape))
        return np.asarray(self.lower) + (ijk + 0.5) * self.resolution

    def voxel_of(self, points) -> np.ndarray:
        """Voxel numbers (n,) of points (n, 3) [m]; -1 for points outside the grid."""
        points = np.atleast_2d(np.asarray(points, dtype=float))
        ijk = np.floor((points - np.asarray(self.lower)) / self.resolution).astype(np.int64)
        inside = np.all((ijk >= 0) & (ijk < np.asarray(self.shape)), axis=1)
        numbers = np.full(len(points), -1, dtype=np.int64)
        numbers[inside] = np.ravel_multi_index(tuple(ijk[inside].T), self.shape)
        return numbers
