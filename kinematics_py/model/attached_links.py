"""Links rigidly attached to a group's tips, and a pose given for such a link turned into its tip's pose.

A pose target may name any link that the group's joints do not move relative to a tip (a tool flange, a gripper,
a finger held still by joints outside the group): the group reaches it by reaching the matching tip pose. This is
the one place that mapping is made, for IK requests, Cartesian paths and plan goals alike.
"""
from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

import numpy as np

from ..errors import KinematicsError
from ..geometry.transforms import invert_transform
from .robot_model import RobotModel


class NotAttachedError(KinematicsError):
    """A link that is not a tip of the group, nor rigidly attached to one; the message names the tips."""


def attached_tips(model: RobotModel, group_joints: Collection[str], tips: Sequence[str]) -> dict[str, str]:
    """link -> the tip no joint of the group moves relative to it (joints outside the group hold still): the
    links reached from a tip without crossing a joint the group moves. A tip maps to itself; a link attached
    to several tips, to the first of them."""
    group_joints = set(group_joints)

    def moves_with_group(joint) -> bool:
        return joint.is_movable and (joint.name in group_joints or
                                     (joint.mimic is not None and joint.mimic.joint in group_joints))

    neighbours: dict[str, list[str]] = {}
    for joint in model.joints.values():
        if not moves_with_group(joint):
            neighbours.setdefault(joint.parent, []).append(joint.child)
            neighbours.setdefault(joint.child, []).append(joint.parent)
    attached = {tip: tip for tip in tips}
    for tip in tips:
        reached, frontier = {tip}, [tip]
        while frontier:
            for link in neighbours.get(frontier.pop(), ()):
                if link not in reached:
                    reached.add(link)
                    frontier.append(link)
                    attached.setdefault(link, tip)
    return attached


def tip_of_link(table: Mapping[str, str], model: RobotModel, group: str, tips: Sequence[str], link: str) -> str:
    """The tip ``link`` is, or is rigidly attached to (``table``: ``attached_tips``); UnknownLinkError for a link
    the robot does not have, NotAttachedError (naming the tips) for one the group moves relative to its tips."""
    tip = table.get(link)
    if tip is None:
        model.check_link(link)
        raise NotAttachedError(f"link {link!r} is neither a tip of group {group!r} {list(tips)} nor rigidly "
                               f"attached to one")
    return tip


def tip_pose_from_link_pose(T_frame_link: np.ndarray, link: str, tip: str,
                            T_model_links: Mapping[str, np.ndarray]) -> np.ndarray:
    """T_frame_tip (4, 4) of the tip when ``link``, rigidly attached to it, is at ``T_frame_link`` (4, 4);
    ``T_model_links`` places the robot's links in any one state (only link and tip's relative pose is read)."""
    if link == tip:
        return T_frame_link
    return T_frame_link @ invert_transform(T_model_links[link]) @ T_model_links[tip]
