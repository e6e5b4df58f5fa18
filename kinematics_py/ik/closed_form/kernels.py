"""One compiled call per pose: every branch of a closed-form family, each as the representative nearest the
seed inside the joint limits, checked by the chain's own forward kinematics, distinct, nearest first.

``solve_pose`` takes the target ``T_base_tip`` (4, 4), the seed (6,), the packed ``geometry`` (see
``families``), ``config`` (int64: family, arrangement of axes 1-3, 1 if the chain is solved reversed),
the chain's compiled ``segments`` and ``joint_info`` (see ``model.chain_kernels``) and its limits; it writes
up to MAX_BRANCHES solutions to ``out_q`` (MAX_BRANCHES, 6) and their branch codes to ``out_codes``, and
returns how many. ``solve_poses`` does the same for a batch, in parallel over the poses.
"""
from __future__ import annotations

import math

import numpy as np
from numba import prange

from ...compiled import compiled_kernel
from ...model.chain_kernels import chain_pose
from ..kernels import LIMIT_SLACK
from .families import MAX_BRANCHES, TIP_ROTATION_ROW, row, solve_spherical_wrist, solve_three_parallel
from .subproblems import dot

SPHERICAL_WRIST = 1
THREE_PARALLEL = 2
#: A solution is accepted when the chain's FK reaches the target within these [m], [rad].
POSITION_TOLERANCE = 1e-5
ROTATION_TOLERANCE = 1e-5
#: Two solutions closer than this in every joint, modulo 2 pi [rad], are the same one.
DUPLICATE_TOLERANCE = 1e-6
TWO_PI = 2.0 * math.pi


@compiled_kernel(inline="always")
def _nearest_in_limits(theta, seed, lower, upper):
    """The value theta + 2 pi k nearest ``seed`` inside [lower, upper] (NaN if there is none)."""
    # Float (not int) rounding: infinite limits (continuous joints) give infinite bounds on k.
    k_low = np.ceil((lower - LIMIT_SLACK - theta) / TWO_PI)
    k_high = np.floor((upper + LIMIT_SLACK - theta) / TWO_PI)
    if k_low > k_high:
        return math.nan
    k = min(max(np.rint((seed - theta) / TWO_PI), k_low), k_high)
    return min(max(theta + TWO_PI * k, lower), upper)


@compiled_kernel(inline="always")
def _wrapped(angle):
    return angle - TWO_PI * np.rint(angle / TWO_PI)


@compiled_kernel(inline="always")
def _reaches(T, R, p):
    """True when the pose (R, p) is within the tolerances of the target T."""
    position_error = math.sqrt((p[0] - T[0, 3]) ** 2 + (p[1] - T[1, 3]) ** 2 + (p[2] - T[2, 3]) ** 2)
    difference = 0.0
    for i in range(3):
        for j in range(3):
            difference += (R[i, j] - T[i, j]) ** 2
    # |R - T|_F = 2 sqrt(2) sin(angle / 2): about sqrt(2) * angle for small angles.
    return position_error <= POSITION_TOLERANCE and math.sqrt(0.5 * difference) <= ROTATION_TOLERANCE


@compiled_kernel(inline="always")
def _target_for_family(T, geometry, reversed_chain):
    """(R_target R0^T as tuple rows, target position), for the reversed chain when ``reversed_chain``."""
    if reversed_chain:
        r = ((T[0, 0], T[1, 0], T[2, 0]), (T[0, 1], T[1, 1], T[2, 1]), (T[0, 2], T[1, 2], T[2, 2]))
        p = (-(r[0][0] * T[0, 3] + r[0][1] * T[1, 3] + r[0][2] * T[2, 3]),
             -(r[1][0] * T[0, 3] + r[1][1] * T[1, 3] + r[1][2] * T[2, 3]),
             -(r[2][0] * T[0, 3] + r[2][1] * T[1, 3] + r[2][2] * T[2, 3]))
    else:
        r = ((T[0, 0], T[0, 1], T[0, 2]), (T[1, 0], T[1, 1], T[1, 2]), (T[2, 0], T[2, 1], T[2, 2]))
        p = (T[0, 3], T[1, 3], T[2, 3])
    R0_0 = row(geometry, TIP_ROTATION_ROW)
    R0_1 = row(geometry, TIP_ROTATION_ROW + 1)
    R0_2 = row(geometry, TIP_ROTATION_ROW + 2)
    R = ((dot(r[0], R0_0), dot(r[0], R0_1), dot(r[0], R0_2)),
         (dot(r[1], R0_0), dot(r[1], R0_1), dot(r[1], R0_2)),
         (dot(r[2], R0_0), dot(r[2], R0_1), dot(r[2], R0_2)))
    return R, p


@compiled_kernel
def raw_branches(T, seed, geometry, config, raw, codes):
    """Every branch's angles in chain order (not wrapped, not checked) -> count; see ``families``."""
    reversed_chain = config[2] == 1
    family_seed = seed[::-1].copy() if reversed_chain else seed
    R, p = _target_for_family(T, geometry, reversed_chain)
    if config[0] == SPHERICAL_WRIST:
        n = solve_spherical_wrist(geometry, config[1], R, p, family_seed, raw, codes)
    else:
        n = solve_three_parallel(geometry, R, p, family_seed, raw, codes)
    if reversed_chain:
        for b in range(n):
            for j in range(3):
                swapped = raw[b, j]
                raw[b, j] = raw[b, 5 - j]
                raw[b, 5 - j] = swapped
    return n


@compiled_kernel
def solve_pose(T, seed, geometry, config, segments, joint_info, lower, upper, out_q, out_codes):
    """Every distinct in-limit branch reaching ``T``, nearest the seed first -> count (see module docstring)."""
    raw = np.empty((MAX_BRANCHES, 6))
    codes = np.empty(MAX_BRANCHES, dtype=np.int64)
    n_raw = raw_branches(T, seed, geometry, config, raw, codes)
    m = joint_info.shape[0]
    R_fk = np.empty((3, 3))
    p_fk = np.empty(3)
    axes_world = np.empty((m, 3))
    origins_world = np.empty((m, 3))
    q = np.empty(6)
    distances = np.empty(MAX_BRANCHES)
    count = 0
    for b in range(n_raw):
        inside = True
        for j in range(6):
            q[j] = _nearest_in_limits(raw[b, j], seed[j], lower[j], upper[j])
            inside = inside and not math.isnan(q[j])
        if not inside or not chain_pose(q, segments, joint_info, R_fk, p_fk, axes_world, origins_world):
            continue
        if not _reaches(T, R_fk, p_fk):
            continue
        duplicate = False
        for a in range(count):
            largest = 0.0
            for j in range(6):
                largest = max(largest, abs(_wrapped(out_q[a, j] - q[j])))
            duplicate = duplicate or largest < DUPLICATE_TOLERANCE
        if duplicate:
            continue
        distance = 0.0
        for j in range(6):
            distance += (q[j] - seed[j]) ** 2
        # Insertion into the list sorted by distance to the seed.
        slot = count
        while slot > 0 and distances[slot - 1] > distance:
            out_q[slot] = out_q[slot - 1]
            out_codes[slot] = out_codes[slot - 1]
            distances[slot] = distances[slot - 1]
            slot -= 1
        out_q[slot] = q
        out_codes[slot] = codes[b]
        distances[slot] = distance
        count += 1
    return count


@compiled_kernel(parallel=True)
def solve_poses(Ts, seeds, geometry, config, segments, joint_info, lower, upper, out_q, out_codes, counts):
    """``solve_pose`` for every pose of ``Ts`` (N, 4, 4) with its seed (N, 6), in parallel; writes out_q
    (N, MAX_BRANCHES, 6), out_codes (N, MAX_BRANCHES) and counts (N,)."""
    for i in prange(Ts.shape[0]):
        counts[i] = solve_pose(Ts[i], seeds[i], geometry, config, segments, joint_info, lower, upper,
                               out_q[i], out_codes[i])
