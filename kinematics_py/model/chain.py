"""A serial chain between two links of a robot, flattened for the compiled kinematics."""
from __future__ import annotations

import math

import numpy as np

from ..errors import ChainError, JointValueError
from . import chain_kernels as ck
from .urdf import SINGLE_DOF_JOINT_TYPES, JointSpec


class Chain:
    """The joints from ``base_link`` to ``tip_link``; its variables are ``joint_names``.

    Variables are the independent (non-mimic) joints on the chain in order from base to tip, followed
    by the masters of mimic joints on the chain that are not on it themselves. Mimic joints move with
    their master, so their Jacobian columns are folded into the master's.

    Joint arrays have shape ``(*batch, n)`` with ``n = len(joint_names)``; values in [rad] or [m].
    """

    def __init__(self, base_link: str, tip_link: str, path: list[JointSpec], joints_by_name: dict[str, JointSpec]):
        self.base_link = base_link
        self.tip_link = tip_link
        for joint in path:
            if joint.type in ("floating", "planar"):
                raise ChainError(
                    f"joint {joint.name!r} between {base_link!r} and {tip_link!r} is {joint.type}: "
                    f"an IK chain may only hold revolute, continuous, prismatic and fixed joints"
                )
        movable = [joint for joint in path if joint.type in SINGLE_DOF_JOINT_TYPES]
        variables = [joint for joint in movable if joint.mimic is None]
        names = [joint.name for joint in variables]
        for joint in movable:
            if joint.mimic is not None and joint.mimic.joint not in names:
                names.append(joint.mimic.joint)
        self.joint_names: tuple[str, ...] = tuple(names)
        variables = [joints_by_name[name] for name in names]
        #: Joint limits [rad] or [m], shape (n,); continuous joints have infinite limits.
        self.lower = _read_only([joint.lower for joint in variables])
        self.upper = _read_only([joint.upper for joint in variables])
        self.is_continuous = _read_only([joint.type == "continuous" for joint in variables])
        #: True for revolute and continuous joints (values that wrap every 2 pi).
        self.is_revolute = _read_only([joint.type in ("revolute", "continuous") for joint in variables])
        self._segments, self._joint_info = _flatten(path, self.joint_names)
        self._no_jacobian = np.empty((0, 6, self.dof))

    @property
    def dof(self) -> int:
        """Number of chain variables."""
        return len(self.joint_names)

    @property
    def compiled(self) -> tuple[np.ndarray, np.ndarray]:
        """(segments, joint_info): the flat description the compiled kernels take (``chain_kernels``)."""
        return self._segments, self._joint_info

    def forward_kinematics(self, q) -> np.ndarray:
        """``T_base_tip`` for joint values ``q`` of shape (*batch, n) -> (*batch, 4, 4)."""
        Q, batch_shape = self._joint_batch(q)
        T = np.empty((Q.shape[0], 4, 4))
        if not ck.forward_kinematics_batch(Q, self._segments, self._joint_info, T, self._no_jacobian):
            raise self._non_finite(Q)
        return T.reshape(batch_shape + (4, 4))

    def jacobian(self, q) -> np.ndarray:
        """Geometric Jacobian (*batch, 6, n) in the base frame at the tip origin, rows (vx, vy, vz, wx, wy, wz)."""
        return self.forward_kinematics_and_jacobian(q)[1]

    def forward_kinematics_and_jacobian(self, q) -> tuple[np.ndarray, np.ndarray]:
        """(``T_base_tip``, Jacobian) in one pass; shapes as in the two methods."""
        Q, batch_shape = self._joint_batch(q)
        T = np.empty((Q.shape[0], 4, 4))
        J = np.empty((Q.shape[0], 6, self.dof))
        if not ck.forward_kinematics_batch(Q, self._segments, self._joint_info, T, J):
            raise self._non_finite(Q)
        return T.reshape(batch_shape + (4, 4)), J.reshape(batch_shape + (6, self.dof))

    def within_limits(self, q, tolerance: float = 0.0) -> np.ndarray:
        """True where every joint of ``q`` (*batch, n) is inside [lower - tol, upper + tol]."""
        q = np.asarray(q, dtype=float)
        return np.all((q >= self.lower - tolerance) & (q <= self.upper + tolerance), axis=-1)

    def _joint_batch(self, q) -> tuple[np.ndarray, tuple[int, ...]]:
        Q = np.asarray(q, dtype=np.float64)
        if Q.ndim == 0 or Q.shape[-1] != self.dof:
            raise JointValueError(
                f"chain {self.base_link!r} -> {self.tip_link!r} takes {self.dof} joint values "
                f"{list(self.joint_names)}; got an array of shape {Q.shape}"
            )
        batch_shape = Q.shape[:-1]
        return np.ascontiguousarray(Q.reshape(math.prod(batch_shape), self.dof)), batch_shape

    def _non_finite(self, Q: np.ndarray) -> JointValueError:
        bad = sorted({self.joint_names[j] for j in np.argwhere(~np.isfinite(Q))[:, 1]})
        return JointValueError(f"joint values must be finite; not finite for {bad}")

    def __repr__(self) -> str:
        return f"Chain({self.base_link!r} -> {self.tip_link!r}, joints={list(self.joint_names)})"


def _flatten(path: list[JointSpec], variable_names: tuple[str, ...]) -> tuple[np.ndarray, np.ndarray]:
    """Fold fixed joints into their neighbours: one segment row per movable joint plus the tip row."""
    variable_index = {name: i for i, name in enumerate(variable_names)}
    rows, info = [], []
    T_accumulated = np.eye(4)
    for joint in path:
        T_accumulated = T_accumulated @ joint.T_parent_joint
        if joint.type == "fixed":
            continue
        mimic = joint.mimic
        multiplier, offset = (mimic.multiplier, mimic.offset) if mimic else (1.0, 0.0)
        master = mimic.joint if mimic else joint.name
        axis, motion = joint.axis, ck.PRISMATIC
        if joint.type in ("revolute", "continuous"):
            axis, motion, sign = _revolute_motion(joint.axis)
            multiplier, offset = sign * multiplier, sign * offset
        rows.append(_segment_row(T_accumulated, axis, multiplier, offset))
        info.append((motion, variable_index[master]))
        T_accumulated = np.eye(4)
    rows.append(_segment_row(T_accumulated, np.zeros(3), 0.0, 0.0))
    joint_info = np.array(info, dtype=np.int64).reshape(-1, 2)
    return np.ascontiguousarray(rows, dtype=np.float64), joint_info


_UNIT_AXES = ((1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0))


def _revolute_motion(axis: np.ndarray) -> tuple[np.ndarray, int, float]:
    """(axis, motion type, sign): a rotation about -x, -y or -z is one about +x, +y, +z by the negated angle."""
    components = tuple(axis.tolist())
    for unit, motion in zip(_UNIT_AXES, (ck.REVOLUTE_X, ck.REVOLUTE_Y, ck.REVOLUTE_Z)):
        for sign in (1.0, -1.0):
            if components == tuple(sign * value for value in unit):
                return np.array(unit), motion, sign
    return axis, ck.REVOLUTE, 1.0


def _segment_row(T: np.ndarray, axis: np.ndarray, multiplier: float, offset: float) -> np.ndarray:
    row = np.empty(ck.SEGMENT_WIDTH)
    row[0:9] = T[:3, :3].ravel()
    row[9:12] = T[:3, 3]
    row[12:15] = axis
    row[15] = multiplier
    row[16] = offset
    return row


def _read_only(array: np.ndarray) -> np.ndarray:
    array = np.array(array)
    array.flags.writeable = False
    return array
