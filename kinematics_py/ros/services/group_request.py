"""What every request on a planning group starts from, built once per request: the group's plugin, the robot's
state (the request's robot_state over joint_states), its link poses, where the group's base frame is, and the
request's collision checker and checks. The services read it; none of them repeats this set-up.
"""
from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np
from geometry_msgs.msg import Quaternion, Vector3

from ...collision.checker import CollisionChecker
from ...errors import ErrorCode, PoseError, RequestError, UnknownLinkError
from ...geometry.transforms import invert_transform, quaternion_from_rotation, rotations_from_quaternions
from ...ik.plugin import KinematicsPlugin
from ...model.attached_links import NotAttachedError
from ...robot_setup import RobotSetup
from ...state_check import StateCheck
from ..messages.constraints import request_constraints
from ..messages.robot_state import LinkPoses
from .request_collisions import request_checker
from .request_context import RequestContext


def group_plugin(setup: RobotSetup, group: str) -> KinematicsPlugin:
    """The plugin of a served group; INVALID_GROUP_NAME naming the served groups (and why a group is not)."""
    plugin = setup.groups.get(group)
    if plugin is None:
        reason = setup.unavailable.get(group)
        detail = f"group {group!r} is not served: {reason}" if reason else f"unknown group {group!r}"
        raise RequestError(ErrorCode.INVALID_GROUP_NAME, f"{detail}; served groups are {sorted(setup.groups)}")
    return plugin


@dataclass(frozen=True, eq=False)
class GroupRequest:
    """One request's group and state; ``T_base_model`` (4, 4) places the model frame in the group's base frame."""

    context: RequestContext
    setup: RobotSetup
    plugin: KinematicsPlugin
    #: every joint's value: joint_states overlaid by the request's robot_state
    values: Mapping[str, Any]
    poses: LinkPoses
    #: the request's robot_state message (its attached objects shape the collision checker)
    robot_state: Any

    @classmethod
    def of(cls, context: RequestContext, group: str, robot_state) -> GroupRequest:
        setup = context.setup
        plugin = group_plugin(setup, group)
        values = context.joint_values(robot_state)
        return cls(context, setup, plugin, values, LinkPoses(setup.model, values), robot_state)

    @cached_property
    def joint_names(self) -> tuple[str, ...]:
        return tuple(self.plugin.getJointNames())

    @cached_property
    def q(self) -> np.ndarray:
        """(n,) the group's joint values in ``joint_names`` order."""
        return np.array([self.values[name] for name in self.joint_names], dtype=float)

    @cached_property
    def T_base_model(self) -> np.ndarray:
        return self.context.frames.T_base_model(self.plugin.getBaseFrame(), self.poses)

    def T_base_frame(self, frame_id: str) -> np.ndarray:
        """(4, 4) ``frame_id`` in the group's base frame: a robot link at this state, else through TF."""
        return self.T_base_model @ self.context.frames.T_model_frame(frame_id, self.poses)

    @cached_property
    def _scene(self):
        """The request's planning scene (its robot_state's attached objects applied), where tool frames are."""
        checker = self.checker(True)[0] if self.context.state.checker is not None else None
        return checker.scene if checker is not None else self.context.state.scene

    def attached_frame(self, name: str, code: ErrorCode = ErrorCode.INVALID_LINK_NAME) -> tuple[str, np.ndarray] | None:
        """(link, T_link_frame (4, 4)) of MoveIt's runtime tool frames: an attached object ``object_id`` or its
        subframe ``object_id/subframe``; None for a robot link or another name; ``code`` for an unknown subframe."""
        if name in self.setup.model.link_names or self._scene is None:
            return None
        object_id, _, subframe = name.partition("/")
        attached = self._scene.attached_objects.get(object_id)
        if attached is None:
            return None
        T_link_frame = np.asarray(attached.object.T_parent_object, dtype=float)
        if subframe:
            if subframe not in attached.object.subframes:
                raise RequestError(code, f"attached object {object_id!r} has no subframe {subframe!r}; its subframes "
                                         f"are {sorted(attached.object.subframes)}")
            T_link_frame = T_link_frame @ attached.object.subframes[subframe]
        return attached.link, T_link_frame

    def T_tip_frame(self, name: str, code: ErrorCode = ErrorCode.INVALID_LINK_NAME,
                    what: str = "IK link") -> tuple[str, np.ndarray]:
        """(tip, T_tip_frame (4, 4)): where a link rigidly attached to a tip, an attached object or its subframe
        is in the tip's frame at this state (the tool frame of a pose target)."""
        tip = self.tip(name, code, what)
        return tip, invert_transform(self.tip_target(np.eye(4), name, tip))

    def tip(self, link: str, code: ErrorCode = ErrorCode.INVALID_LINK_NAME, what: str = "IK link") -> str:
        """The tip ``link`` is, or is rigidly attached to (an attached object's frame: its link); ``code`` with the
        reason for any other link."""
        frame = self.attached_frame(link, code)
        link = frame[0] if frame is not None else link
        try:
            return self.plugin.attached_tip(link)
        except UnknownLinkError:
            raise RequestError(code, f"unknown {what} {link!r}; group {self.plugin.getGroupName()!r} solves for "
                                     f"tips {self.plugin.getTipFrames()} and links rigidly attached to them") from None
        except NotAttachedError as error:
            raise RequestError(code, f"{what}: {error}") from None

    def tip_target(self, T_base_link: np.ndarray, link: str, tip: str) -> np.ndarray:
        """(4, 4) T_base_tip reaching ``T_base_link`` with ``link`` (``tip(link)`` is ``tip``; an attached object's
        frame: the pose is that frame's, solved for the link it is attached to)."""
        frame = self.attached_frame(link)
        if frame is not None:
            link, T_link_frame = frame
            T_base_link = T_base_link @ invert_transform(T_link_frame)
        return T_base_link if link == tip else self.plugin.tip_target(T_base_link, link, self.poses)

    def checker(self, wanted: bool) -> tuple[CollisionChecker | None, str]:
        """(the request's collision checker or None, the note for the answer): see ``request_checker``; built once
        per request (its scene also holds the request's tool frames)."""
        return self._collisions if wanted else (None, "")

    @cached_property
    def _collisions(self) -> tuple[CollisionChecker | None, str]:
        return request_checker(self.context, True, self.robot_state, self.values)

    def _frames_resolved(self, constraints_msg):
        """``constraints_msg`` with the constraints on attached objects' frames made constraints on their links, as
        MoveIt's ResolveConstraintFrames does: the position's target point offset and the orientation carried
        through the frame's pose in its link (a copy; the message itself when there is none)."""
        links = [c.link_name for c in (*constraints_msg.position_constraints, *constraints_msg.orientation_constraints)]
        if not any(self.attached_frame(link, ErrorCode.INVALID_GOAL_CONSTRAINTS) for link in links):
            return constraints_msg
        resolved = copy.deepcopy(constraints_msg)
        for position in resolved.position_constraints:
            frame = self.attached_frame(position.link_name, ErrorCode.INVALID_GOAL_CONSTRAINTS)
            if frame is not None:
                offset = position.target_point_offset
                point = frame[1][:3, :3] @ [offset.x, offset.y, offset.z] + frame[1][:3, 3]
                position.link_name = frame[0]
                position.target_point_offset = Vector3(x=point[0], y=point[1], z=point[2])
        for orientation in resolved.orientation_constraints:
            frame = self.attached_frame(orientation.link_name, ErrorCode.INVALID_GOAL_CONSTRAINTS)
            if frame is not None:
                x, y, z, w = quaternion_from_rotation(_rotation(orientation) @ frame[1][:3, :3].T)
                orientation.link_name, orientation.orientation = frame[0], Quaternion(x=x, y=y, z=z, w=w)
        return resolved

    def state_check(self, constraints_msg=None, *, collisions: bool = False,
                    violation_code: ErrorCode = ErrorCode.GOAL_CONSTRAINTS_VIOLATED, prefix: str = "") -> StateCheck:
        """The check of the group's configurations: ``constraints_msg`` (moveit_msgs/Constraints, its frames
        placed at this state) and collisions when asked; the other joints at this state."""
        constraints = None
        if constraints_msg is not None:
            constraints = request_constraints(self.setup, self.context.frames, self._frames_resolved(constraints_msg),
                                              self.poses)
        return StateCheck(self.joint_names, dict(self.values), constraints or None, collisions, violation_code,
                          prefix)


def _rotation(orientation_constraint) -> np.ndarray:
    """(3, 3) the desired orientation of an OrientationConstraint; INVALID_GOAL_CONSTRAINTS when it has none."""
    q = orientation_constraint.orientation
    try:
        return rotations_from_quaternions(np.array([[q.x, q.y, q.z, q.w]]))[0]
    except PoseError as error:
        link = orientation_constraint.link_name
        raise RequestError(ErrorCode.INVALID_GOAL_CONSTRAINTS, f"orientation constraint of {link!r}: {error}") from None
