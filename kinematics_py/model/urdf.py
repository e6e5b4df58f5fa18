"""URDF (and xacro) text -> a frozen table of links and joints, sorted parent-first."""
from __future__ import annotations

import math
import os
import xml.etree.ElementTree as ElementTree
from collections import Counter
from dataclasses import dataclass, replace

import numpy as np

from ..errors import UrdfError
from ..geometry.transforms import transform_from_xyz_rpy
from ..parameters import NODE_SPECS_BY_NAME
from .safe_xml import XmlSafetyError, check_xml

MOVABLE_JOINT_TYPES = ("revolute", "continuous", "prismatic", "floating", "planar")
JOINT_TYPES = MOVABLE_JOINT_TYPES + ("fixed",)
SINGLE_DOF_JOINT_TYPES = ("revolute", "continuous", "prismatic")
#: Number of values a joint of each type takes in ``RobotModel.link_poses``.
JOINT_VALUE_COUNT = {"revolute": 1, "continuous": 1, "prismatic": 1, "fixed": 0, "floating": 6, "planar": 3}


@dataclass(frozen=True)
class MimicSpec:
    """``value = multiplier * value(joint) + offset``; ``joint`` is never itself a mimic joint."""

    joint: str
    multiplier: float = 1.0
    offset: float = 0.0


@dataclass(frozen=True, eq=False)
class JointSpec:
    """One URDF joint. Limits in [rad] or [m]; continuous joints have infinite limits."""

    name: str
    type: str
    parent: str
    child: str
    T_parent_joint: np.ndarray
    axis: np.ndarray
    lower: float
    upper: float
    velocity: float
    mimic: MimicSpec | None = None

    @property
    def is_movable(self) -> bool:
        return self.type != "fixed"


@dataclass(frozen=True)
class RobotDescription:
    """Links and joints of a URDF, joints sorted parent-first (a parent's joint before its children's)."""

    name: str
    root_link: str
    link_names: tuple[str, ...]
    joints: tuple[JointSpec, ...]


@dataclass(frozen=True)
class DescriptionLimits:
    """The largest robot description accepted (the node's max_description_bytes, max_links, max_joints and
    max_mesh_triangles parameters): a larger one is refused with UrdfError before it is parsed into a model.
    ``max_mesh_triangles`` bounds the triangles of one link's collision meshes (``collision.geometry``)."""

    max_bytes: int = NODE_SPECS_BY_NAME["max_description_bytes"].default
    max_links: int = NODE_SPECS_BY_NAME["max_links"].default
    max_joints: int = NODE_SPECS_BY_NAME["max_joints"].default
    max_mesh_triangles: int = NODE_SPECS_BY_NAME["max_mesh_triangles"].default


def description_from_urdf_string(urdf_xml: str, limits: DescriptionLimits | None = None) -> RobotDescription:
    """Parse URDF text. Raises UrdfError naming what is wrong, also a description over ``limits``. Time and
    memory are linear in the text's size."""
    if not isinstance(urdf_xml, str) or not urdf_xml.strip():
        raise UrdfError("the robot description is empty: expected URDF XML text")
    limits = limits or DescriptionLimits()
    size = len(urdf_xml.encode("utf-8")) if len(urdf_xml) * 4 > limits.max_bytes else len(urdf_xml)
    if size > limits.max_bytes:
        raise UrdfError(f"the robot description has {size} bytes, more than max_description_bytes = "
                        f"{limits.max_bytes}")
    try:
        children = check_xml(urdf_xml)
    except XmlSafetyError as error:
        raise UrdfError(f"invalid robot description: {error}") from None
    for tag, limit in (("link", limits.max_links), ("joint", limits.max_joints)):
        if children[tag] > limit:
            raise UrdfError(f"the robot description has {children[tag]} <{tag}> elements, more than max_{tag}s = "
                            f"{limit}")
    root = ElementTree.fromstring(urdf_xml)  # safe: check_xml refused DTDs and entities
    if root.tag != "robot":
        raise UrdfError(f"invalid URDF: the root element is <{root.tag}>, expected <robot>")
    return _description(root)


def description_from_urdf_file(path: str | os.PathLike) -> RobotDescription:
    try:
        with open(path, encoding="utf-8") as file:
            text = file.read()
    except OSError as error:
        raise UrdfError(f"cannot read URDF file {os.fspath(path)!r}: {error.strerror}") from None
    return description_from_urdf_string(text)


def urdf_string_from_xacro_file(path: str | os.PathLike, mappings: dict[str, str] | None = None) -> str:
    """Expand a xacro file (with ``mappings`` as xacro arguments) into URDF text."""
    if not os.path.isfile(path):
        raise UrdfError(f"cannot read xacro file {os.fspath(path)!r}: no such file")
    import xacro

    try:
        document = xacro.process_file(os.fspath(path), mappings=dict(mappings or {}))
    except Exception as error:  # xacro raises XacroException, XML and name errors
        raise UrdfError(f"xacro failed on {os.fspath(path)!r}: {error}") from None
    return document.toprettyxml(indent="  ")


def _description(robot: ElementTree.Element) -> RobotDescription:
    """The description of a URDF's ``<robot>`` element: its ``<link>`` and ``<joint>`` children (everything else,
    such as ``<transmission>`` or ``<gazebo>``, is not kinematics). One pass over the elements, no copies."""
    robot_name = robot.get("name", "")
    link_names = [_attribute(element, "name", "a <link>") for element in robot.iterfind("link")]
    if not link_names:
        raise UrdfError(f"robot {robot_name!r} has no links")
    joints = [_joint_spec(element) for element in robot.iterfind("joint")]
    for what, names in (("link", link_names), ("joint", [joint.name for joint in joints])):
        duplicates = sorted(name for name, count in Counter(names).items() if count > 1)
        if duplicates:
            raise UrdfError(f"duplicate {what} names: {duplicates}")

    known_links = set(link_names)
    joints_by_child: dict[str, JointSpec] = {}
    for joint in joints:
        for role, link in (("parent", joint.parent), ("child", joint.child)):
            if link not in known_links:
                raise UrdfError(f"joint {joint.name!r} names unknown {role} link {link!r}")
        if joint.child in joints_by_child:
            raise UrdfError(
                f"link {joint.child!r} has two parent joints: {joints_by_child[joint.child].name!r} and {joint.name!r}"
            )
        joints_by_child[joint.child] = joint

    roots = [name for name in link_names if name not in joints_by_child]
    if len(roots) != 1:
        raise UrdfError(f"a URDF needs exactly one root link (a link that is no joint's child); found {roots}")
    children: dict[str, list[JointSpec]] = {}
    for joint in joints_by_child.values():
        children.setdefault(joint.parent, []).append(joint)

    ordered_links, ordered_joints = [roots[0]], []
    for link in ordered_links:  # breadth-first: the list grows while it is walked
        for joint in children.get(link, ()):
            ordered_joints.append(joint)
            ordered_links.append(joint.child)
    if len(ordered_links) != len(link_names):
        unreachable = sorted(known_links - set(ordered_links))
        raise UrdfError(f"links not connected to root {roots[0]!r} (a cycle?): {unreachable}")

    ordered_joints = _resolve_mimic_chains(ordered_joints)
    return RobotDescription(robot_name, roots[0], tuple(ordered_links), tuple(ordered_joints))


def _joint_spec(element: ElementTree.Element) -> JointSpec:
    """A ``<joint>`` element as a JointSpec (URDF defaults: origin and rpy zero, axis (1, 0, 0), lower and upper
    0, multiplier 1, offset 0)."""
    name = _attribute(element, "name", "a <joint>")
    joint_type = element.get("type")
    if joint_type not in JOINT_TYPES:
        raise UrdfError(f"joint {name!r} has unsupported type {joint_type!r}; supported types are {list(JOINT_TYPES)}")
    context = f"joint {name!r}"
    parent, child = (_attribute(_child(element, tag, context), "link", f"{context}: <{tag}>")
                     for tag in ("parent", "child"))
    origin = element.find("origin")
    xyz = _numbers(origin, "xyz", 3, (0.0, 0.0, 0.0), context)
    rpy = _numbers(origin, "rpy", 3, (0.0, 0.0, 0.0), context)
    T_parent_joint = transform_from_xyz_rpy(xyz, rpy)
    axis = np.array(_numbers(element.find("axis"), "xyz", 3, (1.0, 0.0, 0.0), context), dtype=float)
    norm = np.linalg.norm(axis)
    if joint_type in MOVABLE_JOINT_TYPES and joint_type != "floating" and not (np.isfinite(norm) and norm > 1e-9):
        raise UrdfError(f"joint {name!r} has a zero axis {tuple(axis)}")
    axis = axis / norm if norm > 1e-9 else axis
    if not (np.isfinite(T_parent_joint).all() and np.isfinite(axis).all()):
        raise UrdfError(f"joint {name!r} has a non-finite origin or axis")

    lower, upper, velocity = -math.inf, math.inf, math.inf
    limit = element.find("limit")
    if joint_type in ("revolute", "prismatic"):
        if limit is None:
            raise UrdfError(f"{joint_type} joint {name!r} has no <limit> element")
        (lower,), (upper,) = (_numbers(limit, bound, 1, (0.0,), context) for bound in ("lower", "upper"))
        if not lower <= upper:
            raise UrdfError(f"joint {name!r} has lower limit {lower} above upper limit {upper}")
    if limit is not None and limit.get("velocity") is not None and joint_type in SINGLE_DOF_JOINT_TYPES:
        (velocity,) = _numbers(limit, "velocity", 1, (math.inf,), context)

    mimic = None
    mimic_element = element.find("mimic")
    if mimic_element is not None:
        if joint_type not in SINGLE_DOF_JOINT_TYPES:
            raise UrdfError(f"joint {name!r} of type {joint_type!r} cannot mimic another joint")
        (multiplier,) = _numbers(mimic_element, "multiplier", 1, (1.0,), context)
        (offset,) = _numbers(mimic_element, "offset", 1, (0.0,), context)
        mimic = MimicSpec(_attribute(mimic_element, "joint", f"{context}: <mimic>"), multiplier, offset)
    return JointSpec(name, joint_type, parent, child, T_parent_joint, axis, lower, upper, velocity, mimic)


def _attribute(element: ElementTree.Element, attribute: str, what: str) -> str:
    value = element.get(attribute)
    if not value:
        raise UrdfError(f"invalid URDF: {what} lacks its {attribute!r} attribute")
    return value


def _child(element: ElementTree.Element, tag: str, what: str) -> ElementTree.Element:
    child = element.find(tag)
    if child is None:
        raise UrdfError(f"invalid URDF: {what} has no <{tag}> element")
    return child


def _numbers(element: ElementTree.Element | None, attribute: str, count: int, default: tuple[float, ...],
             what: str) -> tuple[float, ...]:
    """The ``count`` numbers of an attribute (``default`` when the element or the attribute is missing)."""
    text = None if element is None else element.get(attribute)
    if text is None:
        return default
    try:
        values = tuple(float(value) for value in text.split())
    except ValueError:
        values = ()
    if len(values) != count:
        raise UrdfError(f"invalid URDF: {what}: <{element.tag} {attribute}> must be {count} number(s); got {text!r}")
    return values


def _resolve_mimic_chains(joints: list[JointSpec]) -> list[JointSpec]:
    """Point every mimic joint at a non-mimic master, composing multipliers and offsets."""
    by_name = {joint.name: joint for joint in joints}
    resolved = []
    for joint in joints:
        mimic = joint.mimic
        seen = {joint.name}
        while mimic is not None:
            master = by_name.get(mimic.joint)
            if master is None:
                raise UrdfError(f"joint {joint.name!r} mimics unknown joint {mimic.joint!r}")
            if master.type not in SINGLE_DOF_JOINT_TYPES:
                raise UrdfError(f"joint {joint.name!r} mimics joint {master.name!r} of type {master.type!r}")
            if master.mimic is None:
                break
            if master.name in seen:
                raise UrdfError(f"mimic joints form a cycle through {sorted(seen)}")
            seen.add(master.name)
            mimic = MimicSpec(master.mimic.joint, mimic.multiplier * master.mimic.multiplier,
                              mimic.multiplier * master.mimic.offset + mimic.offset)
        if mimic is not joint.mimic:
            joint = replace(joint, mimic=mimic)
        resolved.append(joint)
    return resolved
