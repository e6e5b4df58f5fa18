"""The kinematic tree of a robot: link poses for any joint values, and serial chains for IK."""
from __future__ import annotations

import math
import os
from collections.abc import Mapping

import numpy as np

from ..errors import ChainError, JointValueError, UnknownJointError, UnknownLinkError
from . import tree_kernels
from .chain import Chain
from .kinematic_tree import MOTION, KinematicTree, joint_axes
from .urdf import (
    JOINT_VALUE_COUNT,
    SINGLE_DOF_JOINT_TYPES,
    DescriptionLimits,
    JointSpec,
    RobotDescription,
    description_from_urdf_file,
    description_from_urdf_string,
    urdf_string_from_xacro_file,
)


class RobotModel:
    """A robot's links and joints from its URDF.

    Joint values are given as a mapping joint name -> value: a float [rad] or [m] for revolute,
    continuous and prismatic joints; (x, y, z, roll, pitch, yaw) for a floating joint; (x, y, theta)
    for a planar joint, x and y along two axes of the plane normal to the joint axis. As a state vector
    (``state_vector``), the same values in ``variable_names`` order (see ``KinematicTree``).
    """

    def __init__(self, description: RobotDescription, urdf_xml: str = ""):
        self.description = description
        self.urdf_xml = urdf_xml
        self.name = description.name
        self.root_link: str = description.root_link
        #: Every link, parent-first.
        self.link_names: tuple[str, ...] = description.link_names
        #: Every joint by name (fixed ones included).
        self.joints: dict[str, JointSpec] = {joint.name: joint for joint in description.joints}
        #: Movable joints (mimic joints included), parent-first.
        self.joint_names: tuple[str, ...] = tuple(j.name for j in description.joints if j.is_movable)
        #: Movable joints that do not mimic another joint, parent-first.
        self.independent_joint_names: tuple[str, ...] = tuple(
            j.name for j in description.joints if j.is_movable and j.mimic is None
        )
        #: Revolute, continuous and prismatic joints (mimic included), parent-first.
        self.single_dof_joint_names: tuple[str, ...] = tuple(
            j.name for j in description.joints if j.type in SINGLE_DOF_JOINT_TYPES
        )
        #: The whole tree flattened for the compiled FK (``link_poses``, the collision checker).
        self.tree = KinematicTree(description)
        self._parent_joint = {joint.child: joint for joint in description.joints}
        self._chains: dict[tuple[str, str], Chain] = {}
        #: Single-DOF joints' default values (``default_joint_value``), computed once: every request reads them.
        self._single_dof_defaults = {name: float(np.clip(0.0, self.joints[name].lower, self.joints[name].upper))
                                     for name in self.joint_names if self.joints[name].type in SINGLE_DOF_JOINT_TYPES}

    @classmethod
    def from_urdf_string(cls, urdf_xml: str, limits: DescriptionLimits | None = None) -> RobotModel:
        """The model of URDF text; UrdfError says what is wrong (also a description over ``limits``)."""
        return cls(description_from_urdf_string(urdf_xml, limits), urdf_xml)

    @classmethod
    def from_urdf_file(cls, path: str | os.PathLike) -> RobotModel:
        description = description_from_urdf_file(path)
        with open(path, encoding="utf-8") as file:
            return cls(description, file.read())

    @classmethod
    def from_xacro_file(cls, path: str | os.PathLike, mappings: dict[str, str] | None = None) -> RobotModel:
        return cls.from_urdf_string(urdf_string_from_xacro_file(path, mappings))

    def parent_joint(self, link: str) -> JointSpec | None:
        """The joint whose child is ``link`` (None for the root link)."""
        self.check_link(link)
        return self._parent_joint.get(link)

    def check_link(self, link: str) -> None:
        if link not in self._parent_joint and link != self.root_link:
            raise UnknownLinkError(link, self.link_names, f"robot {self.name!r}")

    def check_joint(self, joint: str) -> None:
        if joint not in self.joints or not self.joints[joint].is_movable:
            raise UnknownJointError(joint, self.joint_names, f"robot {self.name!r} (movable joints)")

    def joint_path(self, base_link: str, tip_link: str) -> list[JointSpec]:
        """Joints from ``base_link`` down to ``tip_link``; ChainError unless base is an ancestor of tip."""
        self.check_link(base_link)
        self.check_link(tip_link)
        path, link = [], tip_link
        while link != base_link:
            joint = self._parent_joint.get(link)
            if joint is None:
                ancestors = [tip_link] + [j.parent for j in reversed(path)]
                raise ChainError(
                    f"base link {base_link!r} is not an ancestor of tip link {tip_link!r}; "
                    f"the tip's ancestors are {ancestors}"
                )
            path.append(joint)
            link = joint.parent
        return path[::-1]

    def chain(self, base_link: str, tip_link: str) -> Chain:
        """The serial chain from ``base_link`` to ``tip_link`` (cached; chains are immutable)."""
        key = (base_link, tip_link)
        if key not in self._chains:
            self._chains[key] = Chain(base_link, tip_link, self.joint_path(base_link, tip_link), self.joints)
        return self._chains[key]

    def default_joint_value(self, joint: str):
        """Zero, clamped into the joint's limits (zeros for floating and planar joints)."""
        default = self._single_dof_defaults.get(joint)
        if default is not None:
            return default
        return np.zeros(JOINT_VALUE_COUNT[self.joints[joint].type])

    def resolve_joint_values(self, joint_positions: Mapping[str, object] | None = None) -> dict[str, object]:
        """Every movable joint's value: given ones checked, missing ones defaulted, mimic joints derived.

        Mimic joints always follow their master: a value given for one is checked, then replaced (a
        joint_states message from a real robot lists them too).
        """
        values = {name: self.default_joint_value(name) for name in self.joint_names}
        for name, value in (joint_positions or {}).items():
            self.check_joint(name)
            values[name] = self._checked_value(name, value)
        for name in self.joint_names:
            mimic = self.joints[name].mimic
            if mimic is not None:
                values[name] = mimic.multiplier * values[mimic.joint] + mimic.offset
        return values

    @property
    def variable_names(self) -> tuple[str, ...]:
        """Names of the values of a state vector (``KinematicTree.variable_names``)."""
        return self.tree.variable_names

    def state_vector(self, joint_positions: Mapping[str, object] | None = None,
                     base: np.ndarray | None = None) -> np.ndarray:
        """A state vector: ``base`` (default: ``tree.default``, every value at zero clamped into its limits) with
        the given joints' values written over it. Values are checked as in ``resolve_joint_values``; a mimic
        joint's value is checked, then left out (it follows its master)."""
        q = (self.tree.default if base is None else base).copy()
        slots = self.tree.slots
        for name, value in (joint_positions or {}).items():
            self.check_joint(name)
            value = self._checked_value(name, value)
            if name in slots:
                q[slots[name]] = value
        return q

    def _checked_value(self, name: str, value):
        joint_type = self.joints[name].type
        count = JOINT_VALUE_COUNT[joint_type]
        if count == 1 and isinstance(value, (float, int)) and math.isfinite(value):
            return float(value)
        try:
            array = np.asarray(value, dtype=float)
        except (TypeError, ValueError):
            raise JointValueError(f"joint {name!r} value {value!r} is not a number") from None
        expected_shape = () if count == 1 else (count,)
        if array.shape != expected_shape and not (count == 1 and array.shape == (1,)):
            raise JointValueError(
                f"joint {name!r} ({joint_type}) takes {count} value(s); got {value!r}"
            )
        if not np.isfinite(array).all():
            raise JointValueError(f"joint {name!r} value must be finite; got {value!r}")
        return float(array.reshape(-1)[0]) if count == 1 else array

    def link_poses(self, joint_positions: Mapping[str, object] | None = None) -> dict[str, np.ndarray]:
        """``T_root_link`` (4x4) of every link for the given joint values (see class docstring)."""
        return dict(zip(self.link_names, self.tree.link_poses(self.state_vector(joint_positions))))


def joint_motion(joint: JointSpec, value) -> np.ndarray:
    """Transform from a joint's frame to its child link's frame for ``value`` (as ``link_poses`` takes it)."""
    T = np.empty((4, 4))
    tree_kernels.joint_motion(MOTION[joint.type], joint_axes(joint), np.atleast_1d(np.asarray(value, dtype=float)), T)
    return T
