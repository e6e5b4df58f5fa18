"""Compiled (numba) forward kinematics of the whole kinematic tree: every link's pose for a state vector.

The one whole-tree FK of the package: ``RobotModel.link_poses`` and the collision checker both run it.
The tree is flattened once per robot into a ``TreeTable`` (built by ``KinematicTree``), one row per
joint, parent-first, so a joint's parent link is placed before the joint is. A state vector ``q`` holds
every independent joint's values: one for a revolute, continuous or prismatic joint [rad] or [m]; six
for a floating joint (x, y, z [m], roll, pitch, yaw [rad]); three for a planar joint (x, y [m] along the
plane's two axes, theta [rad] about its normal). A mimic joint reads its master's value:
``multiplier * q[first_variable] + offset``.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..compiled import compiled_kernel
from ..geometry.kernels import compose_into, rotation_about_axis_into, rotation_from_rpy_into, set_identity

#: Motion of a joint (``TreeTable.motion``).
FIXED = 0
REVOLUTE = 1  # revolute and continuous
PRISMATIC = 2
FLOATING = 3
PLANAR = 4


class TreeTable(NamedTuple):
    """A robot's joints flattened for ``tree_link_poses``: row k is the k-th joint, parent-first.

    ``axes[k]`` holds the joint axis (row 0, the plane's normal for a planar joint) and, for a planar
    joint, the plane's two in-plane unit axes along which x and y move (rows 1 and 2).

    Kernels called from Python take it as is or as the plain tuple of its arrays (``tuple(table)``), which
    numba dispatches about 1 us faster per call.
    """

    parent_link: np.ndarray  # (J,) int64, index into the link list (root link 0)
    child_link: np.ndarray  # (J,) int64
    motion: np.ndarray  # (J,) int64, FIXED ... PLANAR
    first_variable: np.ndarray  # (J,) int64, the joint's (a mimic joint's master's) first value in q; -1 if fixed
    multiplier: np.ndarray  # (J,) float64, mimic factor (1 for the other joints)
    offset: np.ndarray  # (J,) float64, mimic offset (0 for the other joints)
    T_parent_joint: np.ndarray  # (J, 4, 4) float64, the joint frame in its parent link's frame
    axes: np.ndarray  # (J, 3, 3) float64, in the joint frame


@compiled_kernel(inline="always")
def joint_motion_into(motion, axes, q, first, multiplier, offset, T):
    """T (4x4) <- the child link's frame in the joint's frame for the values in ``q`` from ``first`` on."""
    set_identity(T)
    if motion == REVOLUTE:
        rotation_about_axis_into(axes[0, 0], axes[0, 1], axes[0, 2], multiplier * q[first] + offset, T)
    elif motion == PRISMATIC:
        value = multiplier * q[first] + offset
        for i in range(3):
            T[i, 3] = axes[0, i] * value
    elif motion == FLOATING:
        rotation_from_rpy_into(q[first + 3], q[first + 4], q[first + 5], T)
        for i in range(3):
            T[i, 3] = q[first + i]
    elif motion == PLANAR:
        rotation_about_axis_into(axes[0, 0], axes[0, 1], axes[0, 2], q[first + 2], T)
        for i in range(3):
            T[i, 3] = q[first] * axes[1, i] + q[first + 1] * axes[2, i]


@compiled_kernel(inline="always")
def _place_child(k, q, tree, poses, joint_pose, motion):
    """poses[child of joint k] <- its T_root_link, from its parent link's (placed before it)."""
    child = poses[tree.child_link[k]]
    if tree.motion[k] == FIXED:
        compose_into(poses[tree.parent_link[k]], tree.T_parent_joint[k], child)
    else:
        compose_into(poses[tree.parent_link[k]], tree.T_parent_joint[k], joint_pose)
        joint_motion_into(tree.motion[k], tree.axes[k], q, tree.first_variable[k], tree.multiplier[k],
                          tree.offset[k], motion)
        compose_into(joint_pose, motion, child)


@compiled_kernel(inline="always")
def place_links(q, tree, poses):
    """poses[link] (4x4) <- T_root_link of every link for one state vector ``q`` (``tree`` a TreeTable)."""
    joint_pose = np.empty((4, 4))
    motion = np.empty((4, 4))
    set_identity(poses[0])
    for k in range(tree.parent_link.shape[0]):
        _place_child(k, q, tree, poses, joint_pose, motion)


@compiled_kernel(inline="always")
def joints_placing(tree, links):
    """(J,) bool: the joints whose child links are among ``links`` (L,) bool marks or their ancestors (the joints
    ``place_some_links`` needs to place those links)."""
    needed = links.copy()
    joints = np.zeros(tree.parent_link.shape[0], dtype=np.bool_)
    for k in range(tree.parent_link.shape[0] - 1, -1, -1):  # (a joint comes after its parent link's joint)
        if needed[tree.child_link[k]]:
            joints[k] = True
            needed[tree.parent_link[k]] = True
    return joints


@compiled_kernel(inline="always")
def place_some_links(q, tree, poses, joints):
    """``place_links`` for the child links of the joints ``joints`` marks (``joints_placing``) alone: the other rows
    of ``poses`` are left as they were."""
    joint_pose = np.empty((4, 4))
    motion = np.empty((4, 4))
    set_identity(poses[0])
    for k in range(tree.parent_link.shape[0]):
        if joints[k]:
            _place_child(k, q, tree, poses, joint_pose, motion)


@compiled_kernel
def tree_link_poses(q, tree, poses):
    """poses[link] (4x4) <- T_root_link of every link for one state vector ``q``."""
    place_links(q, TreeTable(*tree), poses)


@compiled_kernel
def tree_link_poses_batch(Q, tree, poses):
    """poses[n, link] (4x4) <- T_root_link of every link for every state vector Q[n]."""
    tree = TreeTable(*tree)
    for n in range(Q.shape[0]):
        place_links(Q[n], tree, poses[n])


@compiled_kernel
def joint_motion(motion, axes, q, T):
    """T (4x4) <- one joint's motion for its own values ``q`` (a numpy entry point to ``joint_motion_into``)."""
    joint_motion_into(motion, axes, q, 0, 1.0, 0.0, T)
