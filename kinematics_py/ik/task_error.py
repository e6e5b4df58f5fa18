"""Compiled task error of an IK problem: how far each tip is from its target, and its Jacobian.

A problem has t tips sharing one joint vector q (n,) (chains: ``kernel_data.ChainTables``). Task error
of tip k (6,): position error ``p_target - p`` [m] in the base frame, then the rotation vector [rad]
taking the current orientation to the target, expressed in the *target* frame so that weights on
rotation rows mean "about the target's x, y, z axes". ``weights`` (t, 6) multiply the squared errors;
a zero weight frees that axis.
"""
from __future__ import annotations

import numpy as np

from ..compiled import compiled_kernel
from ..geometry.kernels import rotation_vector
from ..model.chain_kernels import chain_jacobian_from_pose, chain_pose
from .kernel_data import as_chain_tables, new_fk_scratch


@compiled_kernel(inline="always")
def _rotate_jacobian_into_target(T, Jk):
    """Rotation rows of one tip's Jacobian, from the base frame into the target frame."""
    for c in range(Jk.shape[1]):
        wx = Jk[3, c]
        wy = Jk[4, c]
        wz = Jk[5, c]
        Jk[3, c] = T[0, 0] * wx + T[1, 0] * wy + T[2, 0] * wz
        Jk[4, c] = T[0, 1] * wx + T[1, 1] * wy + T[2, 1] * wz
        Jk[5, c] = T[0, 2] * wx + T[1, 2] * wy + T[2, 2] * wz


@compiled_kernel
def task_error_and_jacobian(q, segments, joint_info, tip_table, targets, e, J, R, p, axes_world, origins_world,
                            rot_error, R_error, want_jacobian):
    """Fill e (6t,) and, if asked, J (6t, n). Returns False if q has a non-finite value.

    The chains are a ChainTables' fields, the scratch (R to R_error) a FkScratch's.

    Notes:
        Arrays, not the containers: this runs every iteration, and an array read out of a container in a
        compiled function is reference-counted there (taking ChainTables and FkScratch apart here made the
        whole search 4-5% slower on the bundled UR5 and Panda).
    """
    for k in range(tip_table.shape[0]):
        s0 = tip_table[k, 0]
        j0 = tip_table[k, 1]
        m = tip_table[k, 2]
        segs = segments[s0:s0 + m + 1]
        info = joint_info[j0:j0 + m]
        if not chain_pose(q, segs, info, R, p, axes_world, origins_world):
            return False
        T = targets[k]
        r = 6 * k
        for i in range(3):
            e[r + i] = T[i, 3] - p[i]
        # R_err = R_target @ R^T (base frame); its log, then expressed in the target frame.
        for i in range(3):
            for j in range(3):
                R_error[i, j] = T[i, 0] * R[j, 0] + T[i, 1] * R[j, 1] + T[i, 2] * R[j, 2]
        rotation_vector(R_error, rot_error)
        for i in range(3):
            e[r + 3 + i] = T[0, i] * rot_error[0] + T[1, i] * rot_error[1] + T[2, i] * rot_error[2]
        if want_jacobian:
            Jk = J[r:r + 6]
            chain_jacobian_from_pose(p, info, segs[:m, 15], axes_world, origins_world, Jk)
            _rotate_jacobian_into_target(T, Jk)
    return True


@compiled_kernel(inline="always")
def within_tolerance(e, weights, position_tolerance, orientation_tolerance):
    """Every tip's weighted position and rotation errors (norms over the weighted axes) are within tolerance."""
    for k in range(weights.shape[0]):
        r = 6 * k
        position = 0.0
        rotation = 0.0
        for i in range(3):
            if weights[k, i] > 0.0:
                position += e[r + i] * e[r + i]
            if weights[k, 3 + i] > 0.0:
                rotation += e[r + 3 + i] * e[r + 3 + i]
        if (position > position_tolerance * position_tolerance
                or rotation > orientation_tolerance * orientation_tolerance):
            return False
    return True


@compiled_kernel(inline="always")
def weighted_cost(e, weights):
    """Half the weighted squared task error."""
    total = 0.0
    for k in range(weights.shape[0]):
        for i in range(6):
            total += weights[k, i] * e[6 * k + i] * e[6 * k + i]
    return 0.5 * total


@compiled_kernel
def task_error(q, chains, targets, e):
    """Fill e (6t,) with the task error at q (no Jacobian; ``chains`` may be packed). False if q is not finite."""
    chains = as_chain_tables(chains)
    segments, joint_info, tip_table = chains
    R, p, axes_world, origins_world, rot_error, R_error = new_fk_scratch(chains)
    return task_error_and_jacobian(q, segments, joint_info, tip_table, targets, e, np.empty((0, q.shape[0])), R, p,
                                   axes_world, origins_world, rot_error, R_error, False)
