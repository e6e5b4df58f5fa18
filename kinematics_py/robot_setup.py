"""The robot set-up a kinematics node serves, built from URDF, SRDF and kinematics.yaml settings (ROS-free).

``build_robot_setup(SetupInputs) -> RobotSetup`` is a pure function: it parses the descriptions, sets up one
``KinematicsPlugin`` per served group and the robot's collision checker, and returns them in an immutable
``RobotSetup`` together with the log lines that describe what was built (the caller prints them once it
serves the set-up, and drops them when it only validated a change). It raises ``SetupError`` with the
reason when the inputs give no usable robot. It runs in two steps, which a caller may separate:
``prepare_robot_setup`` decides (quickly, linear in the description's size) whether the inputs are usable,
``complete_robot_setup`` adds the collision world (mesh files, bounding-volume trees: the slow part), and never
fails.

Which groups are served: with an SRDF, the groups that have solver settings (``configured_groups``), or
every SRDF group when none has; without an SRDF, one group ``group_name`` from ``base_frame`` to
``tip_frames``. A group that cannot be served is listed in ``RobotSetup.unavailable`` with the reason.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any

from .collision.checker import CollisionChecker
from .collision.geometry import robot_collision_geometry
from .collision.scene import PlanningScene
from .errors import KinematicsError
from .ik.plugin import KinematicsPlugin
from .model.robot_model import RobotModel
from .model.srdf import SemanticModel
from .model.urdf import DescriptionLimits
from .parameters import KINEMATICS_NAMESPACE


class SetupError(KinematicsError):
    """A robot description (or SRDF) that gives no usable robot set-up."""


@dataclass(frozen=True)
class LogLine:
    """One line for the node's log: ``level`` is "info", "warning" or "error"."""

    level: str
    text: str


@dataclass(frozen=True)
class SetupInputs:
    """Everything a robot set-up is built from; equal inputs build equal set-ups."""

    urdf: str
    srdf: str = ""
    #: Where the URDF and SRDF came from ("parameter" or "topic"), for the messages.
    urdf_source: str = "parameter"
    srdf_source: str = "parameter"
    #: The group served without an SRDF: name, base link and tip links.
    group_name: str = "arm"
    base_frame: str = ""
    tip_frames: tuple[str, ...] = ()
    #: Groups given solver settings; with an SRDF only these are served (every SRDF group when empty).
    configured_groups: frozenset[str] = frozenset()
    #: group -> the solver parameters set for it (name -> value); the others take their defaults.
    group_parameters: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    #: The largest description accepted (links, joints, bytes, triangles of a link's meshes).
    limits: DescriptionLimits = DescriptionLimits()
    #: True: an SRDF that does not fit the URDF makes the inputs unusable (it is the change being made);
    #: False: the set-up is built without it and the error is logged.
    srdf_required: bool = field(default=False, compare=False)


@dataclass(frozen=True, eq=False)
class CollisionWorld:
    """The robot's collision checker (URDF collision geometry, adjacent and SRDF-disabled pairs left out) on an
    empty scene, to be bound to a scene with ``checker.for_scene``; None, with the reason in ``problem``, when
    the robot's collision geometry cannot be loaded."""

    checker: CollisionChecker | None
    problem: str = ""


@dataclass(frozen=True, eq=False)
class RobotSetup:
    """Everything built from one set of inputs; immutable, replaced as a whole."""

    inputs: SetupInputs
    model: RobotModel
    semantic: SemanticModel | None
    #: group -> its plugin, for every served group
    groups: Mapping[str, KinematicsPlugin]
    #: group -> why it is not served
    unavailable: Mapping[str, str]
    #: Frames identical to the model frame: "" and the parent frames of fixed SRDF virtual joints.
    model_frame_aliases: frozenset[str]
    #: None only in a set-up from ``prepare_robot_setup``, not yet completed (never served).
    collision: CollisionWorld | None
    #: What was built, for the log.
    log: tuple[LogLine, ...] = ()

    @property
    def model_frame(self) -> str:
        return self.model.root_link

    @property
    def srdf(self) -> str:
        """The SRDF text in use ("" without one, also when the given one did not fit the URDF)."""
        return self.inputs.srdf if self.semantic is not None else ""

    @property
    def joint_names(self) -> tuple[str, ...]:
        """Single-DOF joints, as every answered RobotState lists them."""
        return self.model.single_dof_joint_names


def build_robot_setup(inputs: SetupInputs, previous: RobotSetup | None = None) -> RobotSetup:
    """The set-up of ``inputs``; SetupError says why there can be none. The robot model and collision world of
    ``previous`` are reused when built from the same URDF (and SRDF). ``prepare_robot_setup`` then
    ``complete_robot_setup``."""
    return complete_robot_setup(prepare_robot_setup(inputs, previous), previous)


def prepare_robot_setup(inputs: SetupInputs, previous: RobotSetup | None = None) -> RobotSetup:
    """Everything that decides whether ``inputs`` are usable (model, SRDF, the groups' plugins), without the
    collision world (``collision`` is None until ``complete_robot_setup``); SetupError says why there can be no
    set-up. Linear in the description's size; a description over ``inputs.limits`` is refused before parsing."""
    log: list[LogLine] = []
    if not inputs.urdf:
        raise SetupError("robot_description is empty")
    same_urdf = previous is not None and previous.inputs.urdf == inputs.urdf and previous.inputs.limits == \
        inputs.limits
    try:
        model = previous.model if same_urdf else RobotModel.from_urdf_string(inputs.urdf, inputs.limits)
    except KinematicsError as error:
        raise SetupError(f"robot_description (from the {inputs.urdf_source}) is not a usable URDF: {error}") from None
    semantic = _semantic_model(inputs, model, log)
    log.append(LogLine("info", f"robot {model.name!r} (URDF from the {inputs.urdf_source}): {len(model.link_names)} "
                               f"links, {len(model.single_dof_joint_names)} single-DOF joints "
                               f"{_first(model.single_dof_joint_names)}, model frame {model.root_link!r}; " +
                               (f"SRDF from the {inputs.srdf_source} with groups {sorted(semantic.groups)}"
                                if semantic else "no SRDF")))
    groups, unavailable = _plugins(inputs, model, semantic, log)
    aliases = {""} | {joint.parent_frame for joint in (semantic.virtual_joints if semantic else ())
                      if joint.type == "fixed" and joint.child_link == model.root_link}
    return RobotSetup(inputs, model, semantic, MappingProxyType(groups), MappingProxyType(unavailable),
                      frozenset(aliases), None, tuple(log))


def complete_robot_setup(prepared: RobotSetup, previous: RobotSetup | None = None) -> RobotSetup:
    """``prepared`` (from ``prepare_robot_setup``) with its collision world: the robot's collision geometry
    loaded (meshes read, hulls and bounding-volume trees built, kernels loaded), or why it cannot be. Never
    raises SetupError: a robot without usable collision geometry is served without collision checking. The
    collision world of ``previous`` is reused when built from the same URDF, SRDF and limits."""
    if prepared.collision is not None:
        return prepared
    if previous is not None and previous.collision is not None and previous.model is prepared.model and \
            previous.srdf == prepared.srdf:
        return replace(prepared, collision=previous.collision)
    log = list(prepared.log)
    collision = _collision_world(prepared.model, prepared.semantic, prepared.inputs.limits, log)
    return replace(prepared, collision=collision, log=tuple(log))


def _first(names: tuple[str, ...], count: int = 20) -> str:
    """The first ``count`` names as a list, "..." for the rest (a log line stays short for any robot)."""
    return str(list(names[:count]))[:-1] + (", ...]" if len(names) > count else "]")


def _semantic_model(inputs: SetupInputs, model: RobotModel, log: list[LogLine]) -> SemanticModel | None:
    """The SRDF's semantic model, or None without a usable SRDF."""
    if not inputs.srdf:
        return None
    try:
        return SemanticModel.from_srdf_string(inputs.srdf, model)
    except KinematicsError as error:
        message = (f"robot_description_semantic (from the {inputs.srdf_source}) does not fit robot {model.name!r}: "
                   f"{error}")
        if inputs.srdf_required:
            raise SetupError(message) from None
        log.append(LogLine("error", message + "; continuing without an SRDF"))
        return None


def _group_ends(inputs: SetupInputs, semantic: SemanticModel | None,
                log: list[LogLine]) -> dict[str, tuple[str, list[str]] | str]:
    """group -> (base link, tip links), or the reason it cannot be served, for every group to serve."""
    if semantic is None:
        group, base, tips = inputs.group_name, inputs.base_frame, list(inputs.tip_frames)
        return {group: (base, tips) if base and tips else
                f"no SRDF, and base_frame/tip_frame are not both set for group {group!r}"}
    wanted = inputs.configured_groups or set(semantic.groups)
    ends: dict[str, tuple[str, list[str]] | str] = {}
    for group in sorted(wanted):
        if group not in semantic.groups:
            ends[group] = (f"{KINEMATICS_NAMESPACE}.{group}.* is configured but the SRDF defines no group {group!r} "
                           f"(SRDF groups: {sorted(semantic.groups)})")
            continue
        try:
            ends[group] = semantic.chain_ends(group)
        except KinematicsError as error:
            ends[group] = str(error)
    not_configured = sorted(set(semantic.groups) - wanted)
    if not_configured:
        log.append(LogLine("info", f"SRDF groups {not_configured} have no {KINEMATICS_NAMESPACE} entry: not served"))
    return ends


def _plugins(inputs: SetupInputs, model: RobotModel, semantic: SemanticModel | None,
             log: list[LogLine]) -> tuple[dict[str, KinematicsPlugin], dict[str, str]]:
    """(group -> initialised plugin, group -> why it is not served)."""
    groups, unavailable = {}, {}
    for group, ends in _group_ends(inputs, semantic, log).items():
        # A group the user asked for is an error; an SRDF group nobody configured (a gripper) is not.
        level = "error" if semantic is None or group in inputs.configured_groups else "info"
        if isinstance(ends, str):
            unavailable[group] = ends
            log.append(LogLine(level, f"group {group!r} NOT served: {ends}"))
            continue
        parameters = dict(inputs.group_parameters.get(group, {}))
        plugin = KinematicsPlugin()
        # The models already built, not their texts: the plugin parses nothing again.
        if not plugin.initialize(model, group, ends[0], ends[1], robot_description_semantic=semantic,
                                 parameters=parameters):
            unavailable[group] = plugin.last_error
            log.append(LogLine(level, f"group {group!r} NOT served: {plugin.last_error}"))
            continue
        groups[group] = plugin
        settings = ", ".join(f"{name}={list(value) if isinstance(value, tuple) else value!r}"
                             for name, value in sorted(parameters.items())) or "none"
        log.append(LogLine("info", f"group {group!r}: base {plugin.getBaseFrame()!r}, tips {plugin.getTipFrames()}, "
                                   f"joints {_first(tuple(plugin.getJointNames()))}; {KINEMATICS_NAMESPACE}.{group}: "
                                   f"{settings} set, defaults for the rest"))
    return groups, unavailable


def _collision_world(model: RobotModel, semantic: SemanticModel | None, limits: DescriptionLimits,
                     log: list[LogLine]) -> CollisionWorld:
    """A checker of the robot's URDF collision geometry on an empty scene, or the reason there can be none."""
    try:
        geometry = robot_collision_geometry(model.urdf_xml, max_mesh_triangles=limits.max_mesh_triangles)
        checker = CollisionChecker(model, semantic, PlanningScene(model), geometry=geometry)
    except (KinematicsError, ImportError) as error:  # GeometryError, MeshLoadError; coal missing
        world = CollisionWorld(None, f"its collision geometry cannot be loaded: {error}")
    else:
        if checker.link_geometry:
            checker.is_colliding(None)  # load the compiled kernels now rather than in the first request:
            checker.shape_poses(None)  # the placement of every shape too (contacts)
            log.append(LogLine("info", f"collision checking: {len(checker.link_geometry)} links with collision "
                                       f"geometry, {len(checker.disabled_pairs)} link pairs never checked (adjacent "
                                       f"or SRDF)"))
            return CollisionWorld(checker)
        world = CollisionWorld(None, "the robot description has no <collision> geometry")
    log.append(LogLine("warning", f"collision checking unavailable for robot {model.name!r}: {world.problem}; "
                                  f"avoid_collisions follows collision_checking_unavailable_policy"))
    return world
