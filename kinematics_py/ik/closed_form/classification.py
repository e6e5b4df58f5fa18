"""Which closed-form family a 6R chain belongs to, read from its joint axes at zero.

The chain is written as a product of exponentials: joint k rotates by its value about the line through
``points[k]`` along ``axes[k]`` (base frame, all joints at zero, axis signs folded in), then the tip pose
at zero ``T_zero``. Two axes are parallel when their directions differ by less than ANGLE_TOLERANCE [rad];
lines meet when they pass within RELATIVE_DISTANCE_TOLERANCE times the arm's size of one point, which
survives the rounding of real URDFs (millimetre values written to 4-6 digits).
"""
from __future__ import annotations

import enum
import re
from dataclasses import dataclass, field

import numpy as np

from ...model import chain_kernels as ck
from ...model.chain import Chain
from . import families as fam
from .kernels import SPHERICAL_WRIST, THREE_PARALLEL

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
    """A 6R chain at zero: ``axes`` (6, 3) unit, ``points`` (6, 3) [m] one on each axis, ``T_zero`` (4, 4)."""

    axes: np.ndarray
    points: np.ndarray
    T_zero: np.ndarray
    distance_tolerance: float = field(init=False)

    def __post_init__(self):
        corners = np.vstack([np.zeros(3), self.points, self.T_zero[:3, 3]])
        size = float(np.sum(np.linalg.norm(np.diff(corners, axis=0), axis=1)))
        object.__setattr__(self, "distance_tolerance", RELATIVE_DISTANCE_TOLERANCE * max(size, SMALLEST_ARM_SIZE))

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
        return ChainGeometry(-(self.axes @ R0)[::-1].copy(), ((self.points - p0) @ R0)[::-1].copy(), T_zero)

    def parallel(self, i: int, j: int) -> bool:
        return float(np.linalg.norm(np.cross(self.axes[i], self.axes[j]))) < ANGLE_TOLERANCE

    def meeting_point(self, joints: tuple[int, ...]) -> np.ndarray | None:
        """The point where the axes of ``joints`` meet, or None (least squares; directions not all parallel)."""
        projectors = [np.eye(3) - np.outer(self.axes[k], self.axes[k]) for k in joints]
        A = sum(projectors)
        if np.linalg.svd(A, compute_uv=False)[-1] < ANGLE_TOLERANCE:
            return None
        point = np.linalg.solve(A, sum(P @ self.points[k] for P, k in zip(projectors, joints)))
        return point if self.farthest_axis(point, joints) < self.distance_tolerance else None

    def farthest_axis(self, point: np.ndarray, joints: tuple[int, ...]) -> float:
        """The largest distance [m] from ``point`` to the axes of ``joints``."""
        return max(float(np.linalg.norm(np.cross(self.axes[k], point - self.points[k]))) for k in joints)


@dataclass(frozen=True)
class Classification:
    """A chain's closed-form family: ``name`` says which, for logs; ``packed`` and ``config`` feed the kernels."""

    family: ClosedFormFamily
    name: str
    geometry: ChainGeometry
    packed: np.ndarray
    config: np.ndarray


def classify_chain(chain_or_model, base_link: str | None = None, tip_link: str | None = None) -> Classification | None:
    """The closed-form family of a chain (a Chain, or a RobotModel with base and tip links), or None."""
    return classification_report(chain_or_model, base_link, tip_link)[0]


def classification_report(chain_or_model, base_link: str | None = None,
                          tip_link: str | None = None) -> tuple[Classification | None, str]:
    """(classification or None, a sentence for the log naming the family found or why none applies)."""
    chain = chain_or_model if isinstance(chain_or_model, Chain) else chain_or_model.chain(base_link, tip_link)
    unsuitable = _unsuitable_joints(chain)
    if unsuitable:
        return None, f"no closed form for {chain!r}: {unsuitable}"
    classification, reason = classify_geometry(ChainGeometry.of_chain(chain))
    return classification, f"{'no closed form' if classification is None else 'closed form'} for {chain!r}: {reason}"


def classify_geometry(geometry: ChainGeometry) -> tuple[Classification | None, str]:
    """(classification or None, the family's name or why none applies) of a 6R chain's geometry at zero."""
    reasons = []
    for reversed_chain, candidate in ((False, geometry), (True, geometry.reversed())):
        for attempt in (_spherical_wrist, _three_parallel):
            found, reason = attempt(candidate)
            if found is None:
                reasons.append(_renumbered(reason, reversed_chain))
                continue
            family, case, name, packed = found
            name = _renumbered(name, reversed_chain)
            config = np.array([family.value, case, int(reversed_chain)], dtype=np.int64)
            return Classification(family, name, geometry, packed, config), name
    return None, "; ".join(dict.fromkeys(reasons))


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
    return (ClosedFormFamily.SPHERICAL_WRIST, case, name, _packed(g, wrist, shoulder)), ""


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
    return (ClosedFormFamily.THREE_PARALLEL, 0, name, _packed(g, wrist, wrist)), ""


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
