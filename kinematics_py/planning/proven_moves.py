"""A plan's joint moves densified, timed and proven free in one compiled call.

``straight_timing.timed_moves`` densifies and times the moves, ``proof_blocks.block_proof`` proves their points and
the states between them free on the spheres; called one after the other from Python, the arrays passed between them
and the proof's set-up cost about as much as the proof itself on a Panda's plan (0.1 ms). ``motion`` times its joint
paths so and hands the proof to the final check (``sphere_proof.checked_path``), which asks the exact checker about
what the spheres leave unproven, as it does for a proof of its own.
"""
from __future__ import annotations

import numpy as np

from ..compiled import compiled_kernel
from .path_check import PathCheck
from .proof_blocks import block_proof
from .sphere_proof import SPHERE_HALVINGS, kernel_bundle, proof_bound, usable_table
from .straight_timing import timed_joint_moves, timed_moves
from .time_parameterization import JointLimits, TimedPath


@compiled_kernel
def _timed_proof(waypoints, resolution, max_velocities, max_accelerations, reach, halvings, bound, inputs):
    """``timed_moves``' arrays, then the points (and steps) ``block_proof`` proves free and the states it checked
    (``inputs``: the chain, its table and a workspace, ``sphere_proof.kernel_bundle``)."""
    positions, times, velocities, accelerations = timed_moves(waypoints, resolution, max_velocities,
                                                              max_accelerations)
    points = np.zeros(positions.shape[0], dtype=np.bool_)
    steps = np.zeros(positions.shape[0] - 1, dtype=np.bool_)
    checked = block_proof(positions, reach, halvings, bound, inputs.frames, inputs.table, inputs.work, points, steps)
    return positions, times, velocities, accelerations, points, steps, checked


def proven_joint_moves(check: PathCheck, waypoints: np.ndarray, limits: JointLimits,
                       resolution: float) -> tuple[np.ndarray, TimedPath, tuple[np.ndarray, np.ndarray] | None]:
    """(positions, timing, proof) of the straight joint moves through ``waypoints`` (k, joints), as
    ``timed_joint_moves`` answers them; ``proof``: (points, steps) the spheres prove free, as
    ``sphere_proof.sphere_proof`` answers for ``check``, or None where the spheres cannot be used (or the pairs no
    joint of the group moves are not known free: ``PathCheck.fixed_pairs_free``)."""
    found = usable_table(check)
    if found is None:
        return *timed_joint_moves(waypoints, limits, resolution), None
    positions, times, velocities, accelerations, points, steps, checked = _timed_proof(
        np.ascontiguousarray(waypoints, dtype=float), resolution, np.asarray(limits.max_velocities, dtype=float),
        np.asarray(limits.max_accelerations, dtype=float), found.growth_reach, SPHERE_HALVINGS,
        proof_bound(check, found.table), kernel_bundle(check, found.table))
    check.states_checked += checked
    return positions, TimedPath(times, velocities, accelerations), (points, steps)
