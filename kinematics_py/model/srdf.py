"""SRDF (robot_description_semantic): planning groups, named states, end effectors, disabled collisions."""
from __future__ import annotations

import os
from dataclasses import dataclass, field

from ..errors import KinematicsError, SrdfError, UnknownGroupError
from .robot_model import RobotModel
from .safe_xml import XmlSafetyError, parse_xml


@dataclass(frozen=True)
class Group:
    """A planning group resolved against the robot model.

    ``joint_names``: the group's movable joints (mimic included), parent-first. ``base_link`` and
    ``tip_link`` are set when the group is a serial chain (given as ``<chain>`` or joints forming one).
    """

    name: str
    joint_names: tuple[str, ...]
    link_names: tuple[str, ...]
    base_link: str | None = None
    tip_link: str | None = None
    subgroups: tuple[str, ...] = ()

    @property
    def is_chain(self) -> bool:
        return self.base_link is not None


@dataclass(frozen=True)
class EndEffector:
    name: str
    parent_link: str
    group: str
    parent_group: str | None = None


@dataclass(frozen=True)
class VirtualJoint:
    name: str
    type: str
    parent_frame: str
    child_link: str


@dataclass
class SemanticModel:
    """Everything an SRDF says about a robot, with every name checked against the robot model."""

    robot_name: str
    groups: dict[str, Group] = field(default_factory=dict)
    #: group -> state name -> joint -> value [rad] or [m]
    group_states: dict[str, dict[str, dict[str, float]]] = field(default_factory=dict)
    end_effectors: dict[str, EndEffector] = field(default_factory=dict)
    #: Link pairs never checked against each other, as frozensets; reasons in ``disabled_collision_reasons``.
    disabled_collisions: set[frozenset[str]] = field(default_factory=set)
    disabled_collision_reasons: dict[frozenset[str], str] = field(default_factory=dict)
    virtual_joints: tuple[VirtualJoint, ...] = ()
    passive_joints: tuple[str, ...] = ()

    @classmethod
    def from_srdf_file(cls, path: str | os.PathLike, robot_model: RobotModel) -> SemanticModel:
        try:
            with open(path, encoding="utf-8") as file:
                text = file.read()
        except OSError as error:
            raise SrdfError(f"cannot read SRDF file {os.fspath(path)!r}: {error.strerror}") from None
        return cls.from_srdf_string(text, robot_model)

    @classmethod
    def from_srdf_string(cls, srdf_xml: str, robot_model: RobotModel) -> SemanticModel:
        try:
            root = parse_xml(srdf_xml)
        except XmlSafetyError as error:
            raise SrdfError(f"invalid SRDF: {error}") from None
        if root.tag != "robot":
            raise SrdfError(f"invalid SRDF: the root element is <{root.tag}>, expected <robot>")
        return _SrdfReader(root, robot_model).read()

    def group(self, name: str) -> Group:
        """The group called ``name``; UnknownGroupError lists the defined groups."""
        try:
            return self.groups[name]
        except KeyError:
            raise UnknownGroupError(name, self.groups, "the SRDF") from None

    def is_collision_disabled(self, link_a: str, link_b: str) -> bool:
        return frozenset((link_a, link_b)) in self.disabled_collisions

    def chain_ends(self, group_name: str) -> tuple[str, list[str]]:
        """(base link, tip links) of a group for IK: its chain, or the chains of its subgroups if they share one
        base. UnknownGroupError, or KinematicsError saying why the group is no chain."""
        group = self.group(group_name)
        if group.is_chain:
            return group.base_link, [group.tip_link]
        if not group.subgroups:
            raise KinematicsError(f"group {group_name!r} is not a serial chain (joints {list(group.joint_names)})")
        ends = [self.chain_ends(subgroup) for subgroup in group.subgroups]
        bases = {base for base, _ in ends}
        if len(bases) != 1:
            raise KinematicsError(f"group {group_name!r} is not a serial chain and its subgroups start at different "
                                  f"base links {sorted(bases)}")
        return bases.pop(), [tip for _, tips in ends for tip in tips]


class _SrdfReader:
    def __init__(self, root, model: RobotModel):
        self.root = root
        self.model = model
        self.group_elements = {}
        for element in root.findall("group"):
            name = self._attribute(element, "name")
            if name in self.group_elements:
                raise SrdfError(f"group {name!r} is defined twice")
            self.group_elements[name] = element
        self.groups: dict[str, Group] = {}

    def read(self) -> SemanticModel:
        for name in self.group_elements:
            self._resolve_group(name, ())
        semantic = SemanticModel(robot_name=self.root.get("name", ""), groups=self.groups)
        self._read_group_states(semantic)
        self._read_end_effectors(semantic)
        self._read_disabled_collisions(semantic)
        semantic.virtual_joints = tuple(
            VirtualJoint(self._attribute(e, "name"), self._attribute(e, "type"),
                         self._attribute(e, "parent_frame"), self._checked_link(e, "child_link", "virtual_joint"))
            for e in self.root.findall("virtual_joint")
        )
        semantic.passive_joints = tuple(
            self._checked_joint(e, "name", "passive_joint") for e in self.root.findall("passive_joint")
        )
        return semantic

    @staticmethod
    def _attribute(element, name: str) -> str:
        value = element.get(name)
        if not value:
            raise SrdfError(f"<{element.tag}> lacks the required attribute {name!r}")
        return value

    def _checked_link(self, element, attribute: str, context: str) -> str:
        link = self._attribute(element, attribute)
        try:
            self.model.check_link(link)
        except KinematicsError as error:
            raise SrdfError(f"{context}: {error}") from None
        return link

    def _checked_joint(self, element, attribute: str, context: str) -> str:
        joint = self._attribute(element, attribute)
        if joint not in self.model.joints:
            raise SrdfError(f"{context}: unknown joint {joint!r}; valid joints are {sorted(self.model.joints)}")
        return joint

    def _resolve_group(self, name: str, visiting: tuple[str, ...]) -> Group:
        if name in self.groups:
            return self.groups[name]
        if name in visiting:
            raise SrdfError(f"groups include each other in a cycle: {' -> '.join(visiting + (name,))}")
        element = self.group_elements[name]
        context = f"group {name!r}"
        joints, links, chains, subgroups = [], [], [], []
        for child in element:
            if child.tag == "chain":
                base = self._checked_link(child, "base_link", context)
                tip = self._checked_link(child, "tip_link", context)
                try:
                    path = self.model.joint_path(base, tip)
                except KinematicsError as error:
                    raise SrdfError(f"{context}: {error}") from None
                chains.append((base, tip))
                joints += [joint.name for joint in path]
                links += [joint.child for joint in path]
            elif child.tag == "joint":
                joint = self._checked_joint(child, "name", context)
                joints.append(joint)
                links.append(self.model.joints[joint].child)
            elif child.tag == "link":
                link = self._checked_link(child, "name", context)
                links.append(link)
                parent_joint = self.model.parent_joint(link)
                if parent_joint is not None:
                    joints.append(parent_joint.name)
            elif child.tag == "group":
                subgroup = self._attribute(child, "name")
                if subgroup not in self.group_elements:
                    raise SrdfError(f"{context}: unknown subgroup {subgroup!r}; groups are "
                                    f"{sorted(self.group_elements)}")
                resolved = self._resolve_group(subgroup, visiting + (name,))
                subgroups.append(subgroup)
                joints += resolved.joint_names
                links += resolved.link_names
        joint_set, link_set = set(joints), set(links)
        movable = tuple(j for j in self.model.joint_names if j in joint_set)
        ordered_links = tuple(link for link in self.model.link_names if link in link_set)
        base, tip = chains[0] if len(chains) == 1 and not subgroups else self._inferred_chain(movable, ordered_links)
        group = Group(name, movable, ordered_links, base, tip, tuple(subgroups))
        self.groups[name] = group
        return group

    def _inferred_chain(self, movable: tuple[str, ...], links: tuple[str, ...]) -> tuple[str | None, str | None]:
        """(base, tip) when the group's joints are exactly the movable joints of one serial chain."""
        if not movable:
            return None, None
        base = self.model.joints[movable[0]].parent
        for tip in reversed(links):
            try:
                path = self.model.joint_path(base, tip)
            except KinematicsError:
                continue
            if tuple(j.name for j in path if j.is_movable) == movable:
                return base, tip
        return None, None

    def _read_group_states(self, semantic: SemanticModel) -> None:
        for element in self.root.findall("group_state"):
            name = self._attribute(element, "name")
            group_name = self._attribute(element, "group")
            if group_name not in self.groups:
                raise SrdfError(f"group_state {name!r}: unknown group {group_name!r}; groups are {sorted(self.groups)}")
            values = {}
            for joint_element in element.findall("joint"):
                joint = self._checked_joint(joint_element, "name", f"group_state {name!r}")
                text = self._attribute(joint_element, "value").split()
                try:
                    numbers = [float(v) for v in text]
                except ValueError:
                    raise SrdfError(f"group_state {name!r}: joint {joint!r} value {text!r} is not a number") from None
                values[joint] = numbers[0] if len(numbers) == 1 else numbers
            semantic.group_states.setdefault(group_name, {})[name] = values

    def _read_end_effectors(self, semantic: SemanticModel) -> None:
        for element in self.root.findall("end_effector"):
            name = self._attribute(element, "name")
            context = f"end_effector {name!r}"
            group = self._attribute(element, "group")
            parent_group = element.get("parent_group") or None
            for group_name in filter(None, (group, parent_group)):
                if group_name not in self.groups:
                    raise SrdfError(f"{context}: unknown group {group_name!r}; groups are {sorted(self.groups)}")
            semantic.end_effectors[name] = EndEffector(
                name, self._checked_link(element, "parent_link", context), group, parent_group)

    def _read_disabled_collisions(self, semantic: SemanticModel) -> None:
        for element in self.root.findall("disable_collisions"):
            pair = frozenset((self._checked_link(element, "link1", "disable_collisions"),
                              self._checked_link(element, "link2", "disable_collisions")))
            semantic.disabled_collisions.add(pair)
            semantic.disabled_collision_reasons[pair] = element.get("reason", "")
