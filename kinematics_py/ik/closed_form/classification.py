"""Which closed-form family a 6R chain belongs to, read from its joint axes at zero.

The chain is written as a product of exponentials: joint k rotates by its value about the line through
``points[k]`` along ``axes[k]`` (base frame, all joints at zero, axis signs folded in), then the tip pose
at zero ``T_zero``. Two axes are parallel when their directions differ by less than ANGLE_TOLERANCE [rad];
lines meet when they pass within RELATIVE_DISTANCE_TOLERANCE times the arm's size of one point, which
survives the rounding of real URDFs (millimetre values written to 4-6 digits). A chain no exact family takes but
one does within a ``FamilyTolerance`` (calibrated arms, small offsets) is solved as the nearest ideal arm of that
family, its branches polished onto the chain (``near_ideal``).
"""
from __future__ import annotations

import enum
import math
import re
from dataclasses import dataclass, replace

import numpy as np

from ...model import chain_kernels as ck
from ...model.chain import Chain
from . import families as fam
from .kernels import SPHERICAL_WRIST, THREE_PARALLEL
from .near_ideal import DEFAULT_TOLERANCE, Deviation, FamilyTolerance, idealize, meeting_point

ANGLE_TOLERANCE = 1e-6
RELATIVE_DISTANCE_TOLERANCE = 1e-6
#: The size [m] below which an arm counts as this size for the distance tolerance.
SMALLEST_ARM_SIZE = 0.1


class ClosedFormFamily(enum.Enum):
    """A closed-form family; its value is the kernel's family code."""

    SPHERICAL_WRIST = SPHERICAL_WRIST
    THREE_PARALLEL = THREE_PARALLEL


@dataclass(frozen=True)
class ChainGeometry:
    """A 6R chain at zero: ``axes`` (6, 3) unit, ``points`` (6, 3) [m] one on each axis, ``T_zero`` (4, 4); axes
    within ``angle_tolerance`` [rad] are parallel, lines within ``distance_tolerance`` [m] of a point meet there (by
    default the exact tolerances of the module docstring)."""

    axes: np.ndarray
    points: np.ndarray
    T_zero: np.ndarray
    angle_tolerance: float = ANGLE_TOLERANCE
    distance_tolerance: float = math.nan

    def __post_init__(self):
        if math.isnan(self.distance_tolerance):
            distance = RELATIVE_DISTANCE_TOLERANCE * max(self.size, SMALLEST_ARM_SIZE)
            object.__setattr__(self, "distance_tolerance", distance)

    @property
    def size(self) -> float:
        """The length [m] of the path from the base through each joint's point to the tip."""
        corners = np.vstack([np.zeros(3), self.points, self.T_zero[:3, 3]])
        return float(np.sum(np.linalg.norm(np.diff(corners, axis=0), axis=1)))

    def within(self, tolerance: FamilyTolerance) -> ChainGeometry:
        """This geometry with tolerances no tighter than ``tolerance``'s."""
        return replace(self, angle_tolerance=max(self.angle_tolerance, tolerance.angle),
                       distance_tolerance=max(self.distance_tolerance, tolerance.distance))

    @classmethod
    def of_chain(cls, chain: Chain) -> ChainGeometry:
        segments, joint_info = chain.compiled
        m = joint_info.shape[0]
        R, p = np.empty((3, 3)), np.empty(3)
        axes, points = np.empty((m, 3)), np.empty((m, 3))
        ck.chain_pose(np.zeros(chain.dof), segments, joint_info, R, p, axes, points)
        T_zero = np.eye(4)
        T_zero[:3, :3], T_zero[:3, 3] = R, p
        return cls(axes * segments[:m, 15:16], points, T_zero)

    def reversed(self) -> ChainGeometry:
        """The chain from tip to base: joint k of it is joint 5 - k, solving for T^-1 (see ``kernels``)."""
        R0, p0 = self.T_zero[:3, :3], self.T_zero[:3, 3]
        T_zero = np.eye(4)
        T_zero[:3, :3], T_zero[:3, 3] = R0.T, -R0.T @ p0
        return ChainGeometry(-(self.axes @ R0)[::-1].copy(), ((self.points - p0) @ R0)[::-1].copy(), T_zero,
                             self.angle_tolerance, self.distance_tolerance)

    def parallel(self, i: int, j: int) -> bool:
        return float(np.linalg.norm(np.cross(self.axes[i], self.axes[j]))) < self.angle_tolerance

    def meeting_point(self, joints: tuple[int, ...]) -> np.ndarray | None:
        """The point where the axes of ``joints`` (consecutive) meet, or None (least squares; directions not all
        parallel)."""
        A = sum(np.eye(3) - np.outer(self.axes[k], self.axes[k]) for k in joints)
        point = np.empty(3)
        if np.linalg.svd(A, compute_uv=False)[-1] < ANGLE_TOLERANCE or \
                not meeting_point(self.axes, self.points, joints[0], len(joints), point):
            return None
        return point if self.farthest_axis(point, joints) < self.distance_tolerance else None

    def farthest_axis(self, point: np.ndarray, joints: tuple[int, ...]) -> float:
        """The largest distance [m] from ``point`` to the axes of ``joints``."""
        return max(float(np.linalg.norm(np.cross(self.axes[k], point - self.points[k]))) for k in joints)


@dataclass(frozen=True)
class Classification:
    """A chain's closed-form family: ``name`` says which, for logs; ``packed`` (the family's geometry: the chain's, or
    its nearest ideal arm's) and ``config`` feed the kernels; ``ideal_sets`` names the axes meeting and parallel
    (``near_ideal.idealize``); ``deviation`` says how far the chain is from ``packed``'s arm (zero: exact)."""

    family: ClosedFormFamily
    name: str
    geometry: ChainGeometry
    packed: np.ndarray
    config: np.ndarray
    ideal_sets: np.ndarray
    deviation: Deviation

    @property
    def exact(self) -> bool:
        return self.deviation.exact

    @property
    def description(self) -> str:
        """The family's name, and how far the chain is from it when it is not exact (for logs)."""
        return self.name if self.exact else f"{self.name}, within {self.deviation}"


def classify_chain(chain_or_model, base_link: str | None = None, tip_link: str | None = None,
                   tolerance: FamilyTolerance = DEFAULT_TOLERANCE) -> Classification | None:
    """The closed-form family of a chain (a Chain, or a RobotModel with base and tip links), or None."""
    return classification_report(chain_or_model, base_link, tip_link, tolerance)[0]


def classification_report(chain_or_model, base_link: str | None = None, tip_link: str | None = None,
                          tolerance: FamilyTolerance = DEFAULT_TOLERANCE) -> tuple[Classification | None, str]:
    """(classification or None, a sentence for the log naming the family found, how far the chain is from it, or
    why none applies)."""
    chain = chain_or_model if isinstance(chain_or_model, Chain) else chain_or_model.chain(base_link, tip_link)
    unsuitable = _unsuitable_joints(chain)
    if unsuitable:
        return None, f"no closed form for {chain!r}: {unsuitable}"
    classification, reason = classify_geometry(ChainGeometry.of_chain(chain), tolerance)
    return classification, f"{'no closed form' if classification is None else 'closed form'} for {chain!r}: {reason}"


def classify_geometry(geometry: ChainGeometry, tolerance: FamilyTolerance = DEFAULT_TOLERANCE
                      ) -> tuple[Classification | None, str]:
    """(classification or None, the family's name or why none applies) of a 6R chain's geometry at zero: an exact
    family, else the nearest ideal arm of a family within ``tolerance``."""
    classification, reasons = _first_family(geometry, None)
    if classification is None and not tolerance.exact_only:
        classification, _ = _first_family(geometry.within(tolerance), geometry)
        if classification is None:
            reasons += f" (nor within {tolerance} of one)"
    return classification, reasons if classification is None else classification.description


def _first_family(geometry: ChainGeometry, real: ChainGeometry | None) -> tuple[Classification | None, str]:
    """The first family ``geometry`` belongs to at its tolerances (the chain, or ``real``'s nearest ideal arm of it
    when ``real`` is given), or None and why none."""
    reasons = []
    for reversed_chain, candidate in ((False, geometry), (True, geometry.reversed())):
        for attempt in (_spherical_wrist, _three_parallel):
            found, reason = attempt(candidate)
            if found is not None and real is not None:
                found, reason = _nearest_ideal_arm(candidate, attempt, found)
            if found is None:
                reasons.append(_renumbered(reason, reversed_chain))
                continue
            (family, case, name, packed, ideal_sets), deviation = found
            config = np.array([family.value, case, int(reversed_chain), int(not deviation.exact)], dtype=np.int64)
            return Classification(family, _renumbered(name, reversed_chain), real or geometry, packed, config,
                                  ideal_sets, deviation), ""
    return None, "; ".join(dict.fromkeys(reasons))


def _nearest_ideal_arm(candidate: ChainGeometry, attempt, found):
    """((the family match of ``candidate``'s nearest ideal arm), its Deviation), or (None, why not)."""
    (_, _, _, _, ideal_sets), _ = found
    axes, points = candidate.axes.copy(), candidate.points.copy()
    turned, moved = np.empty(6), np.empty(6)
    ideal = idealize(axes, points, ideal_sets, turned, moved) and ChainGeometry(axes, points, candidate.T_zero.copy())
    exact, reason = attempt(ideal) if ideal else (None, "the axes meant to meet are parallel")
    if exact is None:
        return None, f"its nearest ideal arm is of no family: {reason}"
    return (exact[0], Deviation.of(turned, moved, candidate.size)), ""


def _unsuitable_joints(chain: Chain) -> str:
    segments, joint_info = chain.compiled
    if chain.dof != 6 or joint_info.shape[0] != 6:
        return f"the closed forms need 6 joints, the chain has {chain.dof} variables and {joint_info.shape[0]} joints"
    if not np.all(chain.is_revolute):
        return "the closed forms need revolute joints only"
    if not (np.array_equal(joint_info[:, 1], np.arange(6)) and np.all(np.abs(segments[:6, 15]) == 1.0)
            and np.all(segments[:6, 16] == 0.0)):
        return "the closed forms do not handle mimic joints"
    return ""


def _spherical_wrist(g: ChainGeometry):
    """Axes 4-6 meet, and axes 1-3 have an intersecting or a parallel pair."""
    wrist = g.meeting_point((3, 4, 5))
    if wrist is None or g.parallel(3, 4) or g.parallel(4, 5):
        return None, "axes 4-6 do not meet at one point"
    cases = []
    if not g.parallel(0, 1) and (shoulder := g.meeting_point((0, 1))) is not None \
            and g.farthest_axis(shoulder, (2,)) > g.distance_tolerance:
        cases.append((fam.AXES_12_INTERSECT, shoulder, "axes 1 and 2 intersect"))
    if g.parallel(1, 2) and not g.parallel(0, 1):
        cases.append((fam.AXES_23_PARALLEL, wrist, "axes 2 and 3 are parallel"))
    if not g.parallel(1, 2) and (elbow := g.meeting_point((1, 2))) is not None \
            and g.farthest_axis(elbow, (0,)) > g.distance_tolerance:
        cases.append((fam.AXES_23_INTERSECT, elbow, "axes 2 and 3 intersect"))
    if g.parallel(0, 1) and not g.parallel(0, 2):
        cases.append((fam.AXES_12_PARALLEL, wrist, "axes 1 and 2 are parallel"))
    if not cases:
        return None, "axes 4-6 meet but no two of axes 1-3 intersect or are parallel"
    case, shoulder, arrangement = cases[0]
    name = f"spherical wrist (axes 4-6 meet), {arrangement}"
    sets = [3, 3, *_SHOULDER_SETS.get(case, (0, 0)), *_PARALLEL_SETS.get(case, (0, 0))]
    return _match(ClosedFormFamily.SPHERICAL_WRIST, case, name, _packed(g, wrist, shoulder), sets), ""


def _three_parallel(g: ChainGeometry):
    """Axes 2-4 parallel, axes 5 and 6 meet (UR type)."""
    if not (g.parallel(1, 2) and g.parallel(1, 3)):
        return None, "axes 2-4 are not parallel"
    if g.parallel(0, 1) or g.parallel(1, 4) or g.parallel(4, 5):
        return None, "axes 2-4 are parallel but so are axes 1 and 2, 2 and 5 or 5 and 6"
    wrist = g.meeting_point((4, 5))
    if wrist is None:
        return None, "axes 2-4 are parallel but axes 5 and 6 do not meet"
    name = "three parallel axes (2-4), axes 5 and 6 intersect"
    return _match(ClosedFormFamily.THREE_PARALLEL, 0, name, _packed(g, wrist, wrist), [4, 2, 0, 0, 1, 3]), ""


#: Per arrangement of axes 1-3: the first joint and count of the axes meeting at the shoulder point, and of the
#: parallel ones (``near_ideal.idealize``).
_SHOULDER_SETS = {fam.AXES_12_INTERSECT: (0, 2), fam.AXES_23_INTERSECT: (1, 2)}
_PARALLEL_SETS = {fam.AXES_12_PARALLEL: (0, 2), fam.AXES_23_PARALLEL: (1, 2)}
_EXACT = Deviation(0.0, 0.0, 0.0, 0.0)


def _match(family: ClosedFormFamily, case: int, name: str, packed: np.ndarray, ideal_sets: list[int]):
    sets = np.array(ideal_sets, dtype=np.int64)
    sets.flags.writeable = False
    return (family, case, name, packed, sets), _EXACT


def _packed(g: ChainGeometry, wrist: np.ndarray, shoulder: np.ndarray) -> np.ndarray:
    packed = np.zeros((fam.GEOMETRY_ROWS, 3))
    packed[0:6] = g.axes
    packed[6:12] = g.points
    packed[fam.WRIST_POINT_ROW] = wrist
    packed[fam.SHOULDER_POINT_ROW] = shoulder
    packed[fam.NORMAL_TO_H6_ROW] = _unit_normal(g.axes[5])
    packed[fam.NORMAL_TO_H2_ROW] = _unit_normal(g.axes[1])
    packed[fam.TIP_ROTATION_ROW:fam.TIP_ROTATION_ROW + 3] = g.T_zero[:3, :3]
    packed[fam.TIP_POSITION_ROW] = g.T_zero[:3, 3]
    packed.flags.writeable = False
    return packed


def _unit_normal(axis: np.ndarray) -> np.ndarray:
    other = np.eye(3)[int(np.argmin(np.abs(axis)))]
    normal = np.cross(axis, other)
    return normal / np.linalg.norm(normal)


def _renumbered(text: str, reversed_chain: bool) -> str:
    """Name the axes of the reversed chain by their numbers in the chain (k -> 7 - k; texts name axis pairs)."""
    if not reversed_chain:
        return text
    return re.sub(r"(\d)(-| and )(\d)", lambda m: f"{7 - int(m[3])}{m[2]}{7 - int(m[1])}", text)
