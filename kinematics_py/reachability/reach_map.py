"""``ReachabilityMap``: a computed map, saved to and loaded from one .npz file, and the questions it answers."""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import KinematicsError
from ..geometry.poses import transform_from_any_pose
from .grid import VoxelGrid

#: Written into every file; a file of another version is refused with the reason.
FORMAT_VERSION = 1


@dataclass(frozen=True)
class PoseAnswer:
    """Whether the map holds a pose: the voxel containing its position (-1: outside the grid), the map
    orientation nearest to its rotation and the angle [rad] between them; ``reachable`` is that voxel's bit."""

    reachable: bool
    voxel: int
    orientation: int
    angle: float


@dataclass(eq=False)
class ReachabilityMap:
    """Per voxel of ``grid``: which of the K ``orientations`` (K, 3, 3) the tip reaches with its origin at the
    voxel centre (``reachable`` (V, K) bool), the best manipulability among them (``manipulability`` (V,),
    0 where none), the joint values of that best solution (``solutions`` (V, dof) [rad or m], NaN where none)
    and which orientation it was (``best_orientation`` (V,), -1 where none). ``metadata``: robot, frames,
    joint names, solver, collision settings, timings."""

    grid: VoxelGrid
    orientations: np.ndarray
    reachable: np.ndarray
    manipulability: np.ndarray
    solutions: np.ndarray
    best_orientation: np.ndarray
    metadata: dict[str, Any] = field(default_factory=dict)

    @property
    def index(self) -> np.ndarray:
        """The reachability index per voxel (V,): how many orientations are reachable."""
        return self.reachable.sum(axis=1)

    @property
    def fraction(self) -> np.ndarray:
        """The reachability index as a fraction of the orientations tried (V,), in [0, 1]."""
        return self.index / len(self.orientations)

    def same_as(self, other: ReachabilityMap) -> bool:
        """True when both maps hold identical arrays, bit for bit (metadata aside)."""
        return self.grid == other.grid and all(
            np.array_equal(getattr(self, name), getattr(other, name), equal_nan=name == "solutions")
            for name in ("orientations", "reachable", "manipulability", "solutions", "best_orientation"))

    # ------------------------------------------------------------------ queries
    def is_reachable(self, pose) -> PoseAnswer:
        """The map's answer for a tip pose in the base frame (a 4x4 transform, ``Pose`` or geometry_msgs Pose)."""
        T = transform_from_any_pose(pose)
        voxel = int(self.grid.voxel_of(T[:3, 3])[0])
        cosines = (np.einsum("kij,ij->k", self.orientations, T[:3, :3]) - 1.0) / 2.0
        nearest = int(np.argmax(cosines))
        angle = float(np.arccos(np.clip(cosines[nearest], -1.0, 1.0)))
        return PoseAnswer(voxel >= 0 and bool(self.reachable[voxel, nearest]), voxel, nearest, angle)

    def best_voxels(self, count: int = 10, min_fraction: float = 0.0) -> list[dict[str, Any]]:
        """Up to ``count`` voxels ranked by reachability index, then manipulability, each with at least
        ``min_fraction`` of the orientations reachable: voxel number, centre [m], index, fraction, manipulability."""
        index = self.index
        order = np.lexsort((-self.manipulability, -index))
        order = order[(index[order] > 0) & (self.fraction[order] >= min_fraction)][:count]
        centres = self.grid.centres(order)
        return [{"voxel": int(v), "centre": centres[k].tolist(), "index": int(index[v]),
                 "fraction": float(self.fraction[v]), "manipulability": float(self.manipulability[v])}
                for k, v in enumerate(order)]

    def summary(self) -> str:
        """One paragraph: grid, orientations, how much is reachable, the solver and the timings."""
        index, meta = self.index, self.metadata
        reached = int(np.count_nonzero(index))
        text = (f"{meta.get('robot', 'robot')} {meta.get('base_frame', '')} -> {meta.get('tip_frame', '')}: "
                f"{self.grid.shape} voxels of {self.grid.resolution} m x {len(self.orientations)} orientations; "
                f"{reached} voxels reachable ({reached / self.grid.size:.1%}), "
                f"{int(index.sum())} of {self.reachable.size} poses")
        if "seconds" in meta:
            text += (f"; {meta['seconds']:.2f} s, {meta['queries'] / meta['seconds']:,.0f} queries/s, "
                     f"{meta['share_outside_ik']:.0%} outside the IK ({meta.get('solver', '')})")
        return text

    # ------------------------------------------------------------------ files
    def save(self, path) -> Path:
        """Write the map to ``path`` (.npz, compressed; the reachable bits packed)."""
        path = Path(path)
        with path.open("wb") as file:
            np.savez_compressed(
                file, format_version=FORMAT_VERSION, grid_lower=np.array(self.grid.lower),
                grid_resolution=self.grid.resolution, grid_shape=np.array(self.grid.shape),
                orientations=self.orientations, reachable_bits=np.packbits(self.reachable, axis=1),
                manipulability=self.manipulability, solutions=self.solutions,
                best_orientation=self.best_orientation, metadata=json.dumps(self.metadata))
        return path

    @classmethod
    def load(cls, path) -> ReachabilityMap:
        """Read a map written by ``save``; KinematicsError saying what is wrong with any other file."""
        try:
            with np.load(path, allow_pickle=False) as data:
                version = int(data["format_version"])
                if version != FORMAT_VERSION:
                    raise KinematicsError(f"{path}: reachability map format {version}; this version reads "
                                          f"{FORMAT_VERSION}")
                grid = VoxelGrid(tuple(data["grid_lower"].tolist()), float(data["grid_resolution"]),
                                 tuple(int(n) for n in data["grid_shape"]))
                orientations = data["orientations"]
                reachable = np.unpackbits(data["reachable_bits"], axis=1, count=len(orientations)).astype(bool)
                return cls(grid, orientations, reachable, data["manipulability"], data["solutions"],
                           data["best_orientation"], json.loads(str(data["metadata"])))
        except (OSError, KeyError, ValueError) as error:
            raise KinematicsError(f"{path} is not a readable reachability map: {error}") from None
