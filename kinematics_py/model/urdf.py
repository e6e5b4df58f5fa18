"""URDF (and xacro) text -> a frozen table of links and joints, sorted parent-first."""
from __future__ import annotations

import io
import logging
import math
import os
from collections import Counter
from contextlib import redirect_stderr
from dataclasses import dataclass, replace

import numpy as np

from ..errors import UrdfError
from ..geometry.transforms import transform_from_xyz_rpy
from ..parameters import NODE_SPECS_BY_NAME
from .safe_xml import XmlSafetyError, check_xml

_log = logging.getLogger(__name__)

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
    memory grow about linearly with the text's size."""
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
    from urdf_parser_py.urdf import URDF

    warnings = io.StringIO()
    try:
        with redirect_stderr(warnings):
            robot = URDF.from_xml_string(_kinematic_elements(urdf_xml))
    except Exception as error:  # urdf_parser_py raises assorted exception types
        raise UrdfError(f"invalid URDF: {error}") from None
    for line in warnings.getvalue().splitlines():
        _log.debug("urdf_parser_py: %s", line)
    return _description_from_parsed(robot)


def _kinematic_elements(urdf_xml: str) -> bytes:
    """The URDF without the elements the kinematics never read (the ``<robot>``'s children other than ``<link>``
    and ``<joint>``, such as ``<material>``, ``<transmission>`` or ``<gazebo>``, and the links' ``<visual>``), so
    that urdf_parser_py does not refuse a robot for, say, a texture without a file name. ``urdf_xml`` passed
    :func:`check_xml` (no DTDs or entities). With lxml, urdf_parser_py's own XML library (5x faster here than
    ElementTree, whose serialisation is Python)."""
    from lxml import etree

    robot = etree.fromstring(urdf_xml.encode("utf-8"), etree.XMLParser(resolve_entities=False, no_network=True))
    if robot.tag != "robot":
        raise UrdfError(f"invalid URDF: the root element is <{robot.tag}>, expected <robot>")
    for element in [child for child in robot if child.tag not in ("link", "joint")] + robot.findall("link/visual"):
        element.getparent().remove(element)
    return etree.tostring(robot)


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


def _description_from_parsed(robot) -> RobotDescription:
    link_names = [link.name for link in robot.links]
    if not link_names:
        raise UrdfError(f"robot {robot.name!r} has no links")
    for what, names in (("link", link_names), ("joint", [joint.name for joint in robot.joints])):
        duplicates = sorted(name for name, count in Counter(names).items() if count > 1)
        if duplicates:
            raise UrdfError(f"duplicate {what} names: {duplicates}")

    known_links = set(link_names)
    joints_by_child: dict[str, JointSpec] = {}
    for urdf_joint in robot.joints:
        joint = _joint_spec(urdf_joint)
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
    return RobotDescription(robot.name or "", roots[0], tuple(ordered_links), tuple(ordered_joints))


def _joint_spec(urdf_joint) -> JointSpec:
    name, joint_type = urdf_joint.name, urdf_joint.type
    if joint_type not in JOINT_TYPES:
        raise UrdfError(f"joint {name!r} has unsupported type {joint_type!r}; supported types are {list(JOINT_TYPES)}")
    origin = urdf_joint.origin
    xyz = origin.xyz if origin is not None and origin.xyz is not None else (0.0, 0.0, 0.0)
    rpy = origin.rpy if origin is not None and origin.rpy is not None else (0.0, 0.0, 0.0)
    T_parent_joint = transform_from_xyz_rpy(xyz, rpy)
    axis = np.array(urdf_joint.axis if urdf_joint.axis is not None else (1.0, 0.0, 0.0), dtype=float)
    if not (np.isfinite(T_parent_joint).all() and np.isfinite(axis).all()):
        raise UrdfError(f"joint {name!r} has a non-finite origin or axis: xyz {_floats(xyz)}, rpy {_floats(rpy)}, "
                        f"axis {_floats(axis)}")
    # Scaled by its largest component first: the norm of a huge axis (1e300 0 0) would overflow.
    largest = float(np.max(np.abs(axis)))
    norm = float(np.linalg.norm(axis / largest)) * largest if largest > 0.0 else 0.0
    if joint_type in MOVABLE_JOINT_TYPES and joint_type != "floating" and not norm > 1e-9:
        raise UrdfError(f"joint {name!r} has a zero axis {_floats(axis)}")
    axis = axis / largest / (norm / largest) if norm > 1e-9 else axis

    lower, upper, velocity = -math.inf, math.inf, math.inf
    limit = urdf_joint.limit
    if joint_type in ("revolute", "prismatic"):
        if limit is None:
            raise UrdfError(f"{joint_type} joint {name!r} has no <limit> element")
        lower, upper = float(limit.lower or 0.0), float(limit.upper or 0.0)
        if math.isnan(lower) or math.isnan(upper):
            raise UrdfError(f"joint {name!r} has a NaN limit: lower {lower}, upper {upper}")
        if not lower <= upper:
            raise UrdfError(f"joint {name!r} has lower limit {lower} above upper limit {upper}")
    if limit is not None and limit.velocity is not None and joint_type in SINGLE_DOF_JOINT_TYPES:
        velocity = float(limit.velocity)

    mimic = None
    if urdf_joint.mimic is not None:
        if joint_type not in SINGLE_DOF_JOINT_TYPES:
            raise UrdfError(f"joint {name!r} of type {joint_type!r} cannot mimic another joint")
        multiplier = urdf_joint.mimic.multiplier
        offset = urdf_joint.mimic.offset
        mimic = MimicSpec(
            urdf_joint.mimic.joint,
            1.0 if multiplier is None else float(multiplier),
            0.0 if offset is None else float(offset),
        )
    return JointSpec(name, joint_type, urdf_joint.parent, urdf_joint.child, T_parent_joint, axis,
                     lower, upper, velocity, mimic)


def _floats(values) -> tuple[float, ...]:
    """Values as plain floats, for messages (not numpy's reprs)."""
    return tuple(float(v) for v in values)


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
