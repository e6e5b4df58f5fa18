"""The inverse question: where to put the robot so that it reaches a set of target poses.

``base_candidates`` lays candidate base poses on a grid in the world (x, y steps at one height, several yaw
angles); ``score_base_placements`` solves the IK of every target from every candidate in one batch and
counts, per candidate, how many targets are reachable within the joint limits (kinematics only: no
collision checking).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..errors import KinematicsError
from ..geometry.poses import transforms_from_poses
from .compute import RobotSource, chunk_tools


@dataclass(frozen=True)
class PlacementScores:
    """``T_world_bases`` (C, 4, 4) candidates; ``reachable`` (C, M): which of the M targets each reaches."""

    T_world_bases: np.ndarray
    reachable: np.ndarray

    @property
    def counts(self) -> np.ndarray:
        """(C,) how many targets each candidate reaches."""
        return self.reachable.sum(axis=1)

    def best(self, count: int = 5) -> list[dict]:
        """Up to ``count`` candidates, most targets reached first: index, position [m], yaw [rad], targets reached."""
        order = np.argsort(-self.counts, kind="stable")[:count]
        return [{"candidate": int(c), "position": self.T_world_bases[c, :3, 3].tolist(),
                 "yaw": float(math.atan2(self.T_world_bases[c, 1, 0], self.T_world_bases[c, 0, 0])),
                 "reached": int(self.counts[c]), "targets": int(self.reachable.shape[1])} for c in order]


def base_candidates(x_range: tuple[float, float], y_range: tuple[float, float], step: float, z: float = 0.0,
                    yaws: int = 1) -> np.ndarray:
    """(C, 4, 4) base poses T_world_base: x and y from the ranges [m] in steps of ``step`` [m] (ends included),
    at height ``z`` [m], each turned about the world's z axis by ``yaws`` angles evenly spaced over a turn."""
    if not (step > 0.0 and math.isfinite(step)) or yaws < 1 or x_range[1] < x_range[0] or y_range[1] < y_range[0]:
        raise KinematicsError(f"base candidates need ranges (low, high) with low <= high, a step > 0 [m] and yaws "
                              f">= 1; got x {x_range}, y {y_range}, step {step}, yaws {yaws}")
    xs = np.arange(x_range[0], x_range[1] + step / 2, step)
    ys = np.arange(y_range[0], y_range[1] + step / 2, step)
    angles = 2 * math.pi * np.arange(yaws) / yaws
    X, Y, A = (grid.ravel() for grid in np.meshgrid(xs, ys, angles, indexing="ij"))
    T = np.tile(np.eye(4), (len(X), 1, 1))
    T[:, 0, 0] = T[:, 1, 1] = np.cos(A)
    T[:, 1, 0], T[:, 0, 1] = np.sin(A), -np.sin(A)
    T[:, 0, 3], T[:, 1, 3], T[:, 2, 3] = X, Y, z
    return T


def score_base_placements(robot: RobotSource, targets, T_world_bases: np.ndarray, solver: str = "auto") -> \
        PlacementScores:
    """For tip poses ``targets`` in the world (M poses or an (M, 4, 4) array) and base candidates (C, 4, 4):
    which targets each candidate reaches (see ``PlacementScores``)."""
    T_world_targets, bad = transforms_from_poses(targets)
    if bad:
        index, reason = next(iter(bad.items()))
        raise KinematicsError(f"target {index} is not a usable pose: {reason}")
    bases = np.asarray(T_world_bases, dtype=float).reshape(-1, 4, 4)
    ik = chunk_tools(robot, solver, False, "", "").ik
    R_bw = np.swapaxes(bases[:, :3, :3], 1, 2)
    T_base_targets = np.zeros((len(bases), len(T_world_targets), 4, 4))
    T_base_targets[..., :3, :3] = np.einsum("cij,mjk->cmik", R_bw, T_world_targets[:, :3, :3])
    T_base_targets[..., :3, 3] = np.einsum("cij,cmj->cmi", R_bw, T_world_targets[None, :, :3, 3] -
                                           bases[:, None, :3, 3])
    T_base_targets[..., 3, 3] = 1.0
    _, counts = ik.solve(T_base_targets.reshape(-1, 4, 4))
    return PlacementScores(bases, (counts > 0).reshape(len(bases), len(T_world_targets)))
