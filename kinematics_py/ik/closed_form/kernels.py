"""One compiled call per pose: every branch of a closed-form family, each as the representative nearest the
seed inside the joint limits, checked by the chain's own forward kinematics, distinct, nearest first.

``solve_pose`` takes the target ``T_base_tip`` (4, 4), the seed (6,), the packed ``geometry`` (see
``families``), ``config`` (int64: family, arrangement of axes 1-3, 1 if the chain is solved reversed, 1 if the
geometry is the nearest ideal arm of the chain, whose branches are polished onto it: see ``near_ideal``),
the chain's compiled ``segments`` and ``joint_info`` (see ``model.chain_kernels``), its limits and how many
solutions are ``wanted`` (nearest the seed; MAX_BRANCHES for all); it writes up to that many solutions to
``out_q`` (MAX_BRANCHES, 6) and their branch codes to ``out_codes``, and returns how many (and how many
nearer branches narrowly missed the pose, for a polish). ``solve_poses`` does the same for a batch, in parallel
over the poses. ``nearest_solution`` is the plugin's lean path: the nearest branch of one pose, its inputs checked
in the same call, the chain and family packed into one array (``pack_model``) so that the call's dispatch is short.
"""
from __future__ import annotations

import math

import numpy as np
from numba import prange

from ...compiled import compiled_kernel
from ...model.chain_kernels import SEGMENT_WIDTH, chain_jacobian_from_pose, chain_pose
from ..kernels import TWO_PI, nearest_in_limits
from .families import (
    GEOMETRY_ROWS,
    MAX_BRANCHES,
    TIP_ROTATION_ROW,
    row,
    solve_spherical_wrist,
    solve_three_parallel,
)
from .near_ideal import POLISH_LIMIT_SLACK, polish
from .subproblems import dot

SPHERICAL_WRIST = 1
THREE_PARALLEL = 2
#: A solution is accepted when the chain's FK reaches the target within these [m], [rad].
POSITION_TOLERANCE = 1e-5
ROTATION_TOLERANCE = 1e-5
#: A candidate missing the target by less than this [m] and [rad] (but more than the tolerances) is worth a
#: numerical polish; farther ones are least-squares answers of subproblems without a solution.
NEAR_MISS = 1e-2
#: Two solutions closer than this in every joint, modulo 2 pi [rad], are the same one.
DUPLICATE_TOLERANCE = 1e-6
#: Near a singular branch of a nearest ideal arm (``polished_branches``): a polish that moves a joint farther than
#: SINGULAR_DISTANCE [rad] also tries the mirror image; one that stalls starts again SINGULAR_STEP [rad] to either
#: side. The real arm's pair lies about sqrt(2 d / L) apart for a deviation d on a link L (0.5 mm on 0.4 m: 0.05 rad).
SINGULAR_DISTANCE = 5e-3
SINGULAR_STEP = 0.05


@compiled_kernel(inline="always")
def _wrapped(angle):
    return angle - TWO_PI * np.rint(angle / TWO_PI)


@compiled_kernel(inline="always")
def _reaches(T, R, p, position_tolerance, rotation_tolerance):
    """True when the pose (R, p) is within the tolerances [m], [rad] of the target T."""
    position_error = math.sqrt((p[0] - T[0, 3]) ** 2 + (p[1] - T[1, 3]) ** 2 + (p[2] - T[2, 3]) ** 2)
    difference = 0.0
    for i in range(3):
        for j in range(3):
            difference += (R[i, j] - T[i, j]) ** 2
    # |R - T|_F = 2 sqrt(2) sin(angle / 2): about sqrt(2) * angle for small angles.
    return position_error <= position_tolerance and math.sqrt(0.5 * difference) <= rotation_tolerance


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


@compiled_kernel(inline="always")
def _repeats(found, count, q):
    """Whether ``q`` is one of the first ``count`` rows of ``found`` (within DUPLICATE_TOLERANCE modulo 2 pi)."""
    for a in range(count):
        largest = 0.0
        for j in range(6):
            largest = max(largest, abs(_wrapped(found[a, j] - q[j])))
        if largest < DUPLICATE_TOLERANCE:
            return True
    return False


@compiled_kernel(inline="always")
def _polished_in_limits(q, T, seed, segments, joint_info, lower, upper, R, p, axes_world, origins_world):
    """``near_ideal.polish`` of q (in place) onto the chain reaches T, and each joint has a representative within
    the limits (taken nearest the seed; R, p: the FK of q)."""
    if not polish(q, T, segments, joint_info, R, p, axes_world, origins_world) or \
            not _reaches(T, R, p, POSITION_TOLERANCE, ROTATION_TOLERANCE):
        return False
    for j in range(6):
        q[j] = nearest_in_limits(q[j], seed[j], lower[j], upper[j])
        if math.isnan(q[j]):
            return False
    return True


#: ``polished_branches``'s answer when no polish reached the pose.
NOT_POLISHED = -1


@compiled_kernel(inline="always")
def _kept_if_new(q, found, count):
    """Store ``q`` in ``found[count]`` unless it is one of the rows before; 1 if stored, else 0."""
    if _repeats(found, count, q):
        return 0
    found[count] = q
    return 1


@compiled_kernel
def polished_branches(q, T, seed, segments, joint_info, lower, upper, found, count, room, R, p, axes_world,
                      origins_world):
    """A branch of a chain's nearest ideal arm (q (6,)) polished onto the chain: the solutions not among the first
    ``count`` rows of ``found`` written after them (at most ``room``) -> how many (0: found already), or NOT_POLISHED
    (none reaches the pose; R, p: the FK of q, unchanged).

    Near a singularity two branches of the ideal arm merge (the arm stretched, the wrist straight) while the real
    arm's pair stays apart by about the square root of the deviation: a polish then moves far from the branch (more
    than SINGULAR_DISTANCE), and its mirror image across the branch is polished too; a polish that stalls at the
    merged point starts again SINGULAR_STEP to either side along the Jacobian's least singular direction, where the
    pair lies."""
    start = q.copy()
    trial = q.copy()
    added = 0
    reached = False
    if _polished_in_limits(trial, T, seed, segments, joint_info, lower, upper, R, p, axes_world, origins_world):
        reached = True
        added += _kept_if_new(trial, found, count)
        moved = 0.0
        for j in range(6):
            moved = max(moved, abs(_wrapped(trial[j] - start[j])))
        if moved > SINGULAR_DISTANCE and added < room:
            for j in range(6):
                trial[j] = start[j] - _wrapped(trial[j] - start[j])
            if _polished_in_limits(trial, T, seed, segments, joint_info, lower, upper, R, p, axes_world,
                                   origins_world):
                added += _kept_if_new(trial, found, count + added)
    else:
        chain_pose(start, segments, joint_info, R, p, axes_world, origins_world)
        J = np.empty((6, 6))
        chain_jacobian_from_pose(p, joint_info, segments[:joint_info.shape[0], 15].copy(), axes_world,
                                 origins_world, J)
        least = np.linalg.svd(J)[2][5]
        for side in (1.0, -1.0):
            if added >= room:
                break
            for j in range(6):
                trial[j] = start[j] + side * SINGULAR_STEP * least[j]
            if _polished_in_limits(trial, T, seed, segments, joint_info, lower, upper, R, p, axes_world,
                                   origins_world):
                reached = True
                added += _kept_if_new(trial, found, count + added)
    if added == 2:  # nearest the seed first
        first = 0.0
        second = 0.0
        for j in range(6):
            first += (found[count, j] - seed[j]) ** 2
            second += (found[count + 1, j] - seed[j]) ** 2
        if second < first:
            for j in range(6):
                found[count, j], found[count + 1, j] = found[count + 1, j], found[count, j]
    if not reached:
        chain_pose(start, segments, joint_info, R, p, axes_world, origins_world)
        return NOT_POLISHED
    return added


@compiled_kernel
def solve_pose(T, seed, geometry, config, segments, joint_info, lower, upper, wanted, out_q, out_codes):
    """The ``wanted`` distinct in-limit branches reaching ``T`` nearest the seed (all: MAX_BRANCHES), nearest
    first -> (count, failed) (see module docstring). Branches are checked by FK nearest first, until ``wanted``
    pass; the ``failed`` nearer ones that missed the pose by less than NEAR_MISS are in the last rows of out_q and
    out_codes."""
    raw = np.empty((MAX_BRANCHES, 6))
    raw_codes = np.empty(MAX_BRANCHES, dtype=np.int64)
    n_raw = raw_branches(T, seed, geometry, config, raw, raw_codes)
    # Each branch's in-limit representative nearest the seed (in place: a NaN distance when a joint has none), and
    # the branches' order by distance to the seed (insertion sort, stable).
    order = np.empty(MAX_BRANCHES, dtype=np.int64)
    distances = np.empty(MAX_BRANCHES)
    polishing = config[3] == 1
    slack = POLISH_LIMIT_SLACK if polishing else 0.0
    n = 0
    for b in range(n_raw):
        distance = 0.0
        for j in range(6):
            raw[b, j] = nearest_in_limits(raw[b, j], seed[j], lower[j] - slack, upper[j] + slack)
            distance += (raw[b, j] - seed[j]) ** 2
        if math.isnan(distance):
            continue
        slot = n
        while slot > 0 and distances[slot - 1] > distance:
            order[slot] = order[slot - 1]
            distances[slot] = distances[slot - 1]
            slot -= 1
        order[slot] = b
        distances[slot] = distance
        n += 1
    if n == 0:
        return 0, 0
    m = joint_info.shape[0]
    R_fk = np.empty((3, 3))
    p_fk = np.empty(3)
    axes_world = np.empty((m, 3))
    origins_world = np.empty((m, 3))
    count = 0
    failed = 0
    for c in range(n):
        if count >= wanted:
            break
        candidate = raw[order[c]]
        if not chain_pose(candidate, segments, joint_info, R_fk, p_fk, axes_world, origins_world):
            continue
        if polishing and _reaches(T, R_fk, p_fk, NEAR_MISS, NEAR_MISS):
            added = polished_branches(candidate, T, seed, segments, joint_info, lower, upper, out_q, count,
                                      MAX_BRANCHES - failed - count, R_fk, p_fk, axes_world, origins_world)
            if added != NOT_POLISHED:
                for k in range(added):
                    out_codes[count + k] = raw_codes[order[c]]
                count += added
                continue
        if not _reaches(T, R_fk, p_fk, POSITION_TOLERANCE, ROTATION_TOLERANCE):
            if _reaches(T, R_fk, p_fk, NEAR_MISS, NEAR_MISS) and count + failed < MAX_BRANCHES:
                # Kept, from the last row up, for a numerical polish: near a singularity the fallback angle of
                # an undetermined subproblem can leave a real branch just short of the pose. (A polished branch of
                # a nearest ideal arm may add two solutions: the rows left bound the near misses kept.)
                failed += 1
                out_q[MAX_BRANCHES - failed] = candidate
                out_codes[MAX_BRANCHES - failed] = raw_codes[order[c]]
            continue
        if not _repeats(out_q, count, candidate):
            out_q[count] = candidate
            out_codes[count] = raw_codes[order[c]]
            count += 1
    return count, failed


@compiled_kernel(parallel=True)
def solve_poses(Ts, seeds, geometry, config, segments, joint_info, lower, upper, wanted, out_q, out_codes, counts):
    """``solve_pose`` for every pose of ``Ts`` (N, 4, 4) with its seed (N, 6), in parallel; writes out_q
    (N, MAX_BRANCHES, 6), out_codes (N, MAX_BRANCHES) and counts (N,)."""
    for i in prange(Ts.shape[0]):
        counts[i] = solve_pose(Ts[i], seeds[i], geometry, config, segments, joint_info, lower, upper, wanted,
                               out_q[i], out_codes[i])[0]


def pack_model(geometry: np.ndarray, config: np.ndarray, segments: np.ndarray, lower: np.ndarray,
               upper: np.ndarray) -> np.ndarray:
    """``nearest_solution``'s ``model`` (float64, (m + 1 + GEOMETRY_ROWS + 1, SEGMENT_WIDTH)) for a chain of m
    joints: the chain's ``segments`` (rows 0..m), the family ``geometry`` (next GEOMETRY_ROWS rows, columns 0-2),
    then one row: lower limits (columns 0-5), upper limits (6-11), ``config`` (12-15)."""
    m = segments.shape[0] - 1
    model = np.zeros((m + 1 + GEOMETRY_ROWS + 1, SEGMENT_WIDTH))
    model[:m + 1] = segments
    model[m + 1:m + 1 + GEOMETRY_ROWS, :3] = geometry
    model[-1, 0:6] = lower
    model[-1, 6:12] = upper
    model[-1, 12:16] = config
    return model


@compiled_kernel
def nearest_solution(T, seed, model, joint_info):
    """The distinct in-limit branch nearest ``seed`` (6,) reaching ``T`` (4, 4), as ``solve_pose`` with wanted = 1,
    ``model`` from ``pack_model`` -> (True, the solution as a 6-tuple [rad]); (False, zeros) when T is not a finite
    (4, 4), the seed not 6 finite values, no branch reaches T, or a nearer candidate narrowly missed it (the
    caller's general path answers those)."""
    unusable = (False, (0.0, 0.0, 0.0, 0.0, 0.0, 0.0))
    if T.shape[0] != 4 or T.shape[1] != 4 or seed.shape[0] != 6:
        return unusable
    for i in range(4):
        for j in range(4):
            if not math.isfinite(T[i, j]):
                return unusable
    for j in range(6):
        if not math.isfinite(seed[j]):
            return unusable
    m = joint_info.shape[0]
    last = model.shape[0] - 1
    config = (int(model[last, 12]), int(model[last, 13]), int(model[last, 14]), int(model[last, 15]))
    q = np.empty((MAX_BRANCHES, 6))
    codes = np.empty(MAX_BRANCHES, dtype=np.int64)
    count, failed = solve_pose(T, seed, model[m + 1:last], config, model[:m + 1], joint_info, model[last, 0:6],
                               model[last, 6:12], 1, q, codes)
    if count == 0 or failed:
        return unusable
    return True, (q[0, 0], q[0, 1], q[0, 2], q[0, 3], q[0, 4], q[0, 5])
