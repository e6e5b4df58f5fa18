"""Re-checking a computed map independently, on a random sample of its voxels.

Reachable voxels: the stored best solution, put through the chain's forward kinematics, must place the tip at
the voxel centre with the stored orientation (within the IK's pose thresholds, ``ReachIK.pose_tolerance``),
inside the joint limits. Unreachable poses (a voxel and an
orientation whose bit is 0): a long numerical search (``KinematicsPlugin``'s batch IK with many random starts,
not the solver that made the map) must find no solution, or, in a collision-checked map, only colliding ones.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..geometry.transforms import pose_error
from .compute import MapSpec, chunk_tools
from .ik_adapter import ReachIK
from .reach_map import ReachabilityMap

#: Random starts per pose of the search for unreachable poses (the map's numerical solver uses 32).
SEARCH_STARTS = 2048


@dataclass
class VerificationReport:
    """What was re-checked and what disagreed: ``fk_failures`` (voxel, position error [m], rotation error [rad])
    and ``found_unreachable`` (voxel, orientation, joint values) are empty when the map holds up."""

    reachable_checked: int = 0
    unreachable_checked: int = 0
    worst_position_error: float = 0.0
    worst_rotation_error: float = 0.0
    fk_failures: list = field(default_factory=list)
    found_unreachable: list = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.fk_failures and not self.found_unreachable

    def summary(self) -> str:
        return (f"{self.reachable_checked} reachable voxels re-checked by FK (worst error "
                f"{self.worst_position_error:.2g} m, {self.worst_rotation_error:.2g} rad; {len(self.fk_failures)} "
                f"failed), {self.unreachable_checked} unreachable poses searched with {SEARCH_STARTS} starts each "
                f"({len(self.found_unreachable)} solved)")


def verify_map(reach_map: ReachabilityMap, spec: MapSpec, sample: int = 100, seed: int = 0,
               search_starts: int = SEARCH_STARTS) -> VerificationReport:
    """Re-check up to ``sample`` reachable voxels and ``sample`` unreachable poses of a map made from ``spec``."""
    rng = np.random.default_rng(seed)
    tools = chunk_tools(spec.robot, spec.solver, spec.collisions, spec.scene_yaml, spec.scene_dir)
    chain, report = tools.ik.chain, VerificationReport()
    position_tolerance, rotation_tolerance = tools.ik.pose_tolerance
    reached = np.flatnonzero(reach_map.index > 0)
    for voxel in rng.choice(reached, min(sample, len(reached)), replace=False):
        T_expected = _pose(reach_map, voxel, reach_map.best_orientation[voxel])
        q = reach_map.solutions[voxel]
        errors = pose_error(T_expected, chain.forward_kinematics(q))
        report.reachable_checked += 1
        report.worst_position_error = max(report.worst_position_error, errors[0])
        report.worst_rotation_error = max(report.worst_rotation_error, errors[1])
        if errors[0] > position_tolerance or errors[1] > rotation_tolerance or not chain.within_limits(q):
            report.fk_failures.append((int(voxel), *errors))
    voxels, orientations = np.nonzero(~reach_map.reachable)
    picked = rng.choice(len(voxels), min(sample, len(voxels)), replace=False)
    if len(picked):
        searcher = ReachIK(tools.ik.plugin, "numerical", search_starts)
        targets = np.stack([_pose(reach_map, voxels[k], orientations[k]) for k in picked])
        seeds = rng.uniform(np.maximum(chain.lower, -np.pi), np.minimum(chain.upper, np.pi), (len(picked), chain.dof))
        solutions, counts = searcher.solve(targets, seeds)
        for k, q, count in zip(picked, solutions[:, 0], counts):
            colliding = tools.checker is not None and count and tools.checker.check_batch(
                q[None], joint_names=chain.joint_names)[0]
            if count and not colliding:
                report.found_unreachable.append((int(voxels[k]), int(orientations[k]), q.tolist()))
        report.unreachable_checked = len(picked)
    return report


def _pose(reach_map: ReachabilityMap, voxel: int, orientation: int) -> np.ndarray:
    T = np.eye(4)
    T[:3, :3] = reach_map.orientations[orientation]
    T[:3, 3] = reach_map.grid.centres(np.array([voxel]))[0]
    return T
