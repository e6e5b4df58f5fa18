"""A robot's whole kinematic tree as state vectors, flattened once for the compiled whole-tree FK."""
from __future__ import annotations

import numpy as np

from . import tree_kernels as tk
from .urdf import JOINT_VALUE_COUNT, JointSpec, RobotDescription

#: Suffixes of the variable names ``<joint>/<suffix>`` of a multi-DOF joint's values, in their order.
VARIABLE_SUFFIXES = {"floating": ("x", "y", "z", "roll", "pitch", "yaw"), "planar": ("x", "y", "theta")}
#: ``TreeTable.motion`` of each URDF joint type.
MOTION = {"fixed": tk.FIXED, "revolute": tk.REVOLUTE, "continuous": tk.REVOLUTE, "prismatic": tk.PRISMATIC,
          "floating": tk.FLOATING, "planar": tk.PLANAR}


class KinematicTree:
    """Every independent (non-mimic) movable joint's values in one state vector, and the tree's ``TreeTable``.

    ``variable_names``: one per value, parent-first: a revolute, continuous or prismatic joint's own name;
    ``<joint>/x, y, z, roll, pitch, yaw`` for a floating joint and ``<joint>/x, y, theta`` for a planar one
    (see ``tree_kernels`` for their meaning and units). Mimic joints have no values: they follow their master.
    Immutable once built.
    """

    def __init__(self, description: RobotDescription):
        link_index = {name: i for i, name in enumerate(description.link_names)}
        names: list[str] = []
        lower: list[float] = []
        upper: list[float] = []
        #: joint -> the slice of its values in a state vector (independent movable joints only).
        self.slots: dict[str, slice] = {}
        for joint in description.joints:
            if not joint.is_movable or joint.mimic is not None:
                continue
            self.slots[joint.name] = slice(len(names), len(names) + JOINT_VALUE_COUNT[joint.type])
            if joint.type in VARIABLE_SUFFIXES:
                names += [f"{joint.name}/{suffix}" for suffix in VARIABLE_SUFFIXES[joint.type]]
                lower += [-np.inf] * len(VARIABLE_SUFFIXES[joint.type])
                upper += [np.inf] * len(VARIABLE_SUFFIXES[joint.type])
            else:
                names.append(joint.name)
                lower.append(joint.lower)
                upper.append(joint.upper)
        self.variable_names: tuple[str, ...] = tuple(names)
        self.variable_index: dict[str, int] = {name: i for i, name in enumerate(names)}
        #: Limits of every value [rad] or [m]; infinite for continuous, floating and planar joints.
        self.lower = np.array(lower, dtype=float)
        self.upper = np.array(upper, dtype=float)
        #: Every value at zero, clamped into its limits.
        self.default = np.clip(np.zeros(len(names)), self.lower, self.upper)
        for array in (self.lower, self.upper, self.default):
            array.flags.writeable = False
        self.link_count = len(description.link_names)
        self.table = _flatten(description.joints, link_index, self.slots)
        #: ``table`` as a plain tuple, for calls from Python (see ``TreeTable``).
        self.table_arrays = tuple(self.table)

    @property
    def size(self) -> int:
        """Number of values in a state vector."""
        return len(self.variable_names)

    def link_poses(self, q: np.ndarray) -> np.ndarray:
        """(links, 4, 4): T_root_link of every link (in ``RobotDescription.link_names`` order) for one state."""
        poses = np.empty((self.link_count, 4, 4))
        tk.tree_link_poses(np.asarray(q, dtype=float), self.table_arrays, poses)
        return poses

    def link_poses_batch(self, Q: np.ndarray) -> np.ndarray:
        """(N, links, 4, 4): T_root_link of every link for each of N states (N, size)."""
        Q = np.ascontiguousarray(Q, dtype=float)
        poses = np.empty((len(Q), self.link_count, 4, 4))
        tk.tree_link_poses_batch(Q, self.table_arrays, poses)
        return poses


def joint_axes(joint: JointSpec) -> np.ndarray:
    """(3, 3): the joint axis (row 0) and, for a planar joint, the plane's x and y axes (rows 1, 2); joint frame."""
    axes = np.zeros((3, 3))
    axes[0] = joint.axis
    if joint.type == "planar":
        axes[1:] = plane_axes(joint.axis)
    return axes


def plane_axes(normal: np.ndarray) -> np.ndarray:
    """(2, 3): two unit axes spanning the plane normal to ``normal``: x and y of the joint frame for a z normal."""
    reference = np.array([1.0, 0.0, 0.0]) if abs(normal[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    u = reference - (reference @ normal) * normal
    u /= np.linalg.norm(u)
    return np.array([u, np.cross(normal, u)])


def _flatten(joints: tuple[JointSpec, ...], link_index: dict[str, int], slots: dict[str, slice]) -> tk.TreeTable:
    first, multiplier, offset = [], [], []
    for joint in joints:
        mimic = joint.mimic
        master = mimic.joint if mimic is not None else joint.name
        first.append(slots[master].start if joint.is_movable else -1)
        multiplier.append(mimic.multiplier if mimic is not None else 1.0)
        offset.append(mimic.offset if mimic is not None else 0.0)
    count = len(joints)
    return tk.TreeTable(
        parent_link=np.array([link_index[joint.parent] for joint in joints], dtype=np.int64).reshape(count),
        child_link=np.array([link_index[joint.child] for joint in joints], dtype=np.int64).reshape(count),
        motion=np.array([MOTION[joint.type] for joint in joints], dtype=np.int64).reshape(count),
        first_variable=np.array(first, dtype=np.int64).reshape(count),
        multiplier=np.array(multiplier, dtype=float).reshape(count),
        offset=np.array(offset, dtype=float).reshape(count),
        T_parent_joint=np.array([joint.T_parent_joint for joint in joints], dtype=float).reshape(count, 4, 4),
        axes=np.array([joint_axes(joint) for joint in joints], dtype=float).reshape(count, 3, 3),
    )
