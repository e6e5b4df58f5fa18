"""Real arms near a closed-form family: the nearest ideal arm, solved in closed form, its branches polished onto the
real chain.

Calibrated and real URDFs move joint origins by fractions of a millimetre and turn axes by fractions of a
milliradian, so axes meant to meet or be parallel miss by that much and the exact families no longer apply. Within
``FamilyTolerance`` of a family, the chain is solved as its nearest ideal arm: the axes meant to be parallel share
their mean direction, the lines meant to meet pass through their least-squares meeting point (``idealize``). Every
branch of that arm is then polished onto the real chain by Newton steps on the real chain's FK (``polish``), checked
by the same FK as every closed-form solution, and deduplicated: the real arm's branches, found in one compiled call.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ...compiled import compiled_kernel
from ...geometry.kernels import rotation_vector
from ...model.chain_kernels import chain_jacobian_from_pose, chain_pose
from ..steps import cholesky_solve
from .subproblems import dot

#: Default largest angle [rad] an axis may be turned, and distance [m] a line moved, to reach the nearest ideal arm.
NEAR_FAMILY_ANGLE = 5e-3
NEAR_FAMILY_DISTANCE = 5e-3
#: Newton steps polishing one branch; each one squares the error (1 mm -> 1e-6 -> 1e-12 m) away from singularities;
#: near one (a start SINGULAR_STEP off a merged pair) it takes up to about ten.
POLISH_STEPS = 12
#: A polish stops once the chain's FK is this near the target [m], [rad] (far below the solutions' tolerances).
POLISH_TOLERANCE = 1e-12
#: Damping of the polish's normal equations, relative to their largest diagonal entry (a step stays bounded near
#: singular configurations).
POLISH_DAMPING = 1e-12
#: The largest joint change [rad] of one polish step: near a singularity the steps stay local.
POLISH_MAX_STEP = 0.1
#: How far [rad] outside its limits a joint of the ideal arm's branch may lie and still be polished (the real one may
#: lie inside).
POLISH_LIMIT_SLACK = 1e-2


@dataclass(frozen=True)
class FamilyTolerance:
    """How far a chain may be from a closed-form family to be solved as its nearest ideal arm: an axis turned by at
    most ``angle`` [rad], a line moved by at most ``distance`` [m] (0, 0: exact families only)."""

    angle: float = NEAR_FAMILY_ANGLE
    distance: float = NEAR_FAMILY_DISTANCE

    @classmethod
    def of_parameters(cls, params) -> FamilyTolerance:
        """From the solver parameters closed_form_angle_tolerance and closed_form_distance_tolerance."""
        return cls(params.closed_form_angle_tolerance, params.closed_form_distance_tolerance)

    @property
    def exact_only(self) -> bool:
        return self.angle <= 0.0 and self.distance <= 0.0

    def __str__(self) -> str:
        return f"{self.angle * 1e3:.3g} mrad and {self.distance * 1e3:.3g} mm"


#: The tolerance of the parameters' defaults.
DEFAULT_TOLERANCE = FamilyTolerance()


@dataclass(frozen=True)
class Deviation:
    """How far a chain is from its nearest ideal arm: the largest angle [rad] an axis was turned and distance [m] a
    line was moved, and bounds of how far the two arms' tip poses can differ at equal joint values (``position``
    [m], ``rotation`` [rad])."""

    angle: float
    distance: float
    position: float
    rotation: float

    @classmethod
    def of(cls, turned: np.ndarray, moved: np.ndarray, size: float) -> Deviation:
        """From each joint's axis turn [rad] and line move [m] (6,), and the arm's size [m] (no point of the arm is
        farther from any axis): a rotation about a line moved by d and turned by a moves any point within r of it by
        at most 2 (d + a r), and turns by at most 2 a; the errors of the joints add up."""
        return cls(float(turned.max()), float(moved.max()), float(2.0 * np.sum(moved + turned * size)),
                   float(2.0 * np.sum(turned)))

    @property
    def exact(self) -> bool:
        return self.angle == 0.0 and self.distance == 0.0

    def __str__(self) -> str:
        return (f"the nearest ideal arm: axes turned by up to {self.angle * 1e3:.3g} mrad and lines moved by up to "
                f"{self.distance * 1e3:.3g} mm; its branches polished onto the chain")


@compiled_kernel
def meeting_point(axes, points, first, count, out):
    """out <- the point nearest, in least squares, the lines of joints first .. first + count - 1 (through
    ``points[k]`` along the unit ``axes[k]``); False (out untouched) when the lines are all parallel."""
    A = np.zeros((3, 3))
    b = np.zeros(3)
    for k in range(first, first + count):
        for i in range(3):
            for j in range(3):
                projector = (1.0 if i == j else 0.0) - axes[k, i] * axes[k, j]
                A[i, j] += projector
                b[i] += projector * points[k, j]
    scale = A[0, 0] + A[1, 1] + A[2, 2]
    determinant = (A[0, 0] * (A[1, 1] * A[2, 2] - A[1, 2] * A[2, 1]) - A[0, 1] * (A[1, 0] * A[2, 2] - A[1, 2] * A[2, 0])
                   + A[0, 2] * (A[1, 0] * A[2, 1] - A[1, 1] * A[2, 0]))
    if not abs(determinant) > 1e-18 * scale ** 3:  # parallel lines (or NaN): no meeting point
        return False
    for c in range(3):  # Cramer's rule: A is symmetric 3 x 3
        M = A.copy()
        M[:, c] = b
        out[c] = (M[0, 0] * (M[1, 1] * M[2, 2] - M[1, 2] * M[2, 1]) - M[0, 1] * (M[1, 0] * M[2, 2] - M[1, 2] * M[2, 0])
                  + M[0, 2] * (M[1, 0] * M[2, 1] - M[1, 1] * M[2, 0])) / determinant
    return True


@compiled_kernel
def idealize(axes, points, ideal_sets, turned, moved):
    """In place, the nearest arm of the family ``ideal_sets`` names (int64 (6,): first joint and count of the axes
    meeting at the wrist point, of those meeting at the shoulder point, of the parallel ones; count 0: none): the
    parallel axes take their mean direction (each keeping its sign), the meeting lines pass through their meeting
    point. ``turned`` (6,) [rad] and ``moved`` (6,) [m] <- how far each axis turned and each line moved. False when
    the meeting lines do not meet (parallel)."""
    turned[:] = 0.0
    moved[:] = 0.0
    first, count = ideal_sets[4], ideal_sets[5]
    if count > 0:
        mean = np.zeros(3)
        for k in range(first, first + count):
            mean += math.copysign(1.0, dot(axes[k], axes[first])) * axes[k]
        mean /= math.sqrt(dot(mean, mean))
        for k in range(first, first + count):
            direction = math.copysign(1.0, dot(axes[k], mean)) * mean
            turned[k] = math.acos(min(1.0, dot(direction, axes[k])))
            axes[k] = direction
    point = np.empty(3)
    for s in range(2):
        first, count = ideal_sets[2 * s], ideal_sets[2 * s + 1]
        if count == 0:
            continue
        if not meeting_point(axes, points, first, count, point):
            return False
        for k in range(first, first + count):
            offset = point - points[k]
            along = dot(offset, axes[k])
            moved[k] = max(moved[k], math.sqrt(max(0.0, dot(offset, offset) - along * along)))
            points[k] = point
    return True


@compiled_kernel
def polish(q, T, segments, joint_info, R, p, axes_world, origins_world):
    """Newton steps from ``q`` (in place) toward the pose ``T`` (4, 4) on the chain (compiled tables; 6 variables),
    at most POLISH_STEPS, until its FK is within POLISH_TOLERANCE; R, p (the FK), axes_world and origins_world are
    scratch, left at the last q's FK. False when a value is not finite."""
    m = joint_info.shape[0]
    multipliers = segments[:m, 15].copy()
    J = np.empty((6, 6))
    A = np.empty((6, 6))
    e = np.empty(6)
    g = np.empty(6)
    dq = np.empty(6)
    R_error = np.empty((3, 3))
    rotation = np.empty(3)
    for step in range(POLISH_STEPS + 1):
        if not chain_pose(q, segments, joint_info, R, p, axes_world, origins_world):
            return False
        for i in range(3):
            e[i] = T[i, 3] - p[i]
            for j in range(3):  # R_error = R_target R^T: the rotation still to make, in the base frame
                R_error[i, j] = T[i, 0] * R[j, 0] + T[i, 1] * R[j, 1] + T[i, 2] * R[j, 2]
        rotation_vector(R_error, rotation)
        e[3:6] = rotation
        if max(abs(e[0]), abs(e[1]), abs(e[2]), abs(e[3]), abs(e[4]), abs(e[5])) <= POLISH_TOLERANCE:
            return True
        if step == POLISH_STEPS:
            return True
        chain_jacobian_from_pose(p, joint_info, multipliers, axes_world, origins_world, J)
        largest = 0.0
        for i in range(6):
            g[i] = 0.0
            for r in range(6):
                g[i] += J[r, i] * e[r]
            for j in range(6):
                total = 0.0
                for r in range(6):
                    total += J[r, i] * J[r, j]
                A[i, j] = total
            largest = max(largest, A[i, i])
        for i in range(6):
            A[i, i] += POLISH_DAMPING * largest + 1e-300
        if not cholesky_solve(A, g, dq):
            return True
        largest = 0.0
        for i in range(6):
            largest = max(largest, abs(dq[i]))
        shrink = min(1.0, POLISH_MAX_STEP / largest) if largest > 0.0 else 1.0
        for i in range(6):
            q[i] += shrink * dq[i]
    return True
