"""Frames for the node: TF lookups ``lookup(target, source) -> T_target_source`` (4x4), and ``ModelFrames``,
which places any frame in a robot set-up's model frame.

``create_transform_source`` uses tf2_ros (Buffer + TransformListener) where it is importable. Where it
is not (ROS 2 from PyPI wheels has no tf2_ros), ``TfMessageListener`` subscribes to ``/tf`` and
``/tf_static`` (tf2_msgs/TFMessage) itself into a ``tf_buffer.TransformBuffer``, which answers as tf2 does:
both look up at the latest common time of the chain, with the same 10 s cache and the same errors (a
transform too old for the rest of its chain is "extrapolation into the past" on both).
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Protocol

import numpy as np
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from tf2_msgs.msg import TFMessage

from ..collision.scene import PlanningScene, SceneError
from ..errors import ErrorCode, RequestError
from ..geometry.transforms import invert_transform
from ..robot_setup import RobotSetup
from .messages.conversions import normalized_frame_id, transform_from_transform_msg
from .tf_buffer import FrameLookupError, TransformBuffer

TF_QOS = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.VOLATILE)
TF_STATIC_QOS = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE,
                           durability=DurabilityPolicy.TRANSIENT_LOCAL)


class TransformSource(Protocol):
    """Answers ``lookup(target_frame, source_frame)`` with ``T_target_source`` or raises FrameLookupError."""

    backend: str

    def lookup(self, target_frame: str, source_frame: str) -> np.ndarray: ...


class ModelFrames:
    """Frames of one robot set-up, placed in its model frame: the model frame and its aliases (identity: "" and
    the parent frame of a fixed SRDF virtual joint), robot links (placed by a robot state's link poses), anything
    else through TF, also the parent frame of a planar or floating virtual joint (its value is the TF transform
    parent frame -> root link, as MoveIt's current state monitor reads it)."""

    def __init__(self, setup: RobotSetup, transforms: TransformSource):
        self._setup, self._transforms = setup, transforms

    def is_model_frame(self, frame: str) -> bool:
        return frame in self._setup.model_frame_aliases or frame == self._setup.model_frame

    def T_base_model(self, base: str, link_poses: Mapping[str, np.ndarray]) -> np.ndarray:
        """(4, 4) the model frame in the frame of robot link ``base`` (a group's base) at the state of
        ``link_poses``: the one place a group's base frame is placed."""
        return np.eye(4) if base == self._setup.model_frame else invert_transform(link_poses[base])

    def T_model_frame(self, frame: str, link_poses: Mapping[str, np.ndarray]) -> np.ndarray:
        """``T_model_frame``; RequestError(FRAME_TRANSFORM_FAILURE) for a frame TF does not know either."""
        setup = self._setup
        frame = normalized_frame_id(frame)
        if self.is_model_frame(frame):
            return np.eye(4)
        if frame in setup.model.link_names:
            return link_poses[frame]
        try:
            return self._transforms.lookup(setup.model_frame, frame)
        except FrameLookupError as error:
            raise RequestError(ErrorCode.FRAME_TRANSFORM_FAILURE,
                               f"cannot transform frame {frame!r} into the model frame {setup.model_frame!r}"
                               f"{self._virtual_joint_note(frame)}: {error}") from None

    def _virtual_joint_note(self, frame: str) -> str:
        """Why TF is asked for ``frame`` when it is the parent frame of a planar or floating SRDF virtual joint."""
        semantic = self._setup.semantic
        joint = next((joint for joint in (semantic.virtual_joints if semantic else ()) if joint.parent_frame == frame
                      and joint.child_link == self._setup.model_frame), None)
        return "" if joint is None else (
            f" ({frame!r} is the parent frame of the SRDF's {joint.type} virtual joint {joint.name!r}: its value is "
            f"read from TF, {frame!r} -> {joint.child_link!r}, as MoveIt's current state monitor does)")

    def scene_resolver(self, scene: PlanningScene) -> Callable[[str], tuple[str, np.ndarray | None]]:
        """Resolves an object's frame_id into (a frame ``scene`` knows, ``T_model_frame`` or None): the model frame
        (and its aliases), robot links, objects and their subframes as the scene knows them; any other frame
        through TF. SceneError for a frame nobody knows."""
        setup = self._setup

        def resolve(frame_id: str) -> tuple[str, np.ndarray | None]:
            frame = normalized_frame_id(frame_id)
            if not frame:
                return "", None
            if self.is_model_frame(frame):
                return setup.model_frame, None
            try:
                scene.frame_transform(frame)
                return frame, None
            except SceneError:
                pass
            try:
                return setup.model_frame, self._transforms.lookup(setup.model_frame, frame)
            except FrameLookupError as error:
                raise SceneError(f"unknown frame {frame!r}: not the model frame {setup.model_frame!r}, a robot link, "
                                 f"an object or subframe (objects: {sorted(scene.world_objects)}), nor known to TF "
                                 f"({error})") from None
        return resolve


def create_transform_source(node: Node, callback_group=None) -> TransformSource:
    """tf2_ros when importable, else the node's own /tf and /tf_static listener."""
    try:
        import tf2_ros  # noqa: F401
    except ImportError:
        return TfMessageListener(node, callback_group)
    return Tf2RosTransforms(node)


class Tf2RosTransforms:
    """A tf2_ros Buffer filled by a TransformListener on ``node``."""

    backend = "tf2_ros"

    def __init__(self, node: Node):
        import tf2_ros

        self._tf2_ros = tf2_ros
        self._buffer = tf2_ros.Buffer()
        self._listener = tf2_ros.TransformListener(self._buffer, node, spin_thread=False)

    def lookup(self, target_frame: str, source_frame: str) -> np.ndarray:
        from rclpy.time import Time

        try:
            stamped = self._buffer.lookup_transform(target_frame, source_frame, Time())
        except self._tf2_ros.TransformException as error:
            raise FrameLookupError(str(error)) from None
        try:
            return transform_from_transform_msg(stamped.transform)
        except ValueError as error:  # tf2 keeps what it is sent, NaN included
            raise FrameLookupError(f"TF's transform from {source_frame!r} to {target_frame!r} is unusable: "
                                   f"{error}") from None


class TfMessageListener:
    """``/tf`` and ``/tf_static`` (tf2_msgs/TFMessage) into a TransformBuffer, looked up as tf2_ros does."""

    backend = "the node's own /tf listener (tf2_ros not importable)"

    def __init__(self, node: Node, callback_group=None):
        self._buffer = TransformBuffer()
        self._subscriptions = [
            node.create_subscription(TFMessage, "/tf", self.add_message, TF_QOS, callback_group=callback_group),
            node.create_subscription(TFMessage, "/tf_static", lambda message: self.add_message(message, static=True),
                                     TF_STATIC_QOS, callback_group=callback_group),
        ]

    def add_message(self, message: TFMessage, static: bool = False) -> None:
        for stamped in message.transforms:
            child, parent = normalized_frame_id(stamped.child_frame_id), normalized_frame_id(stamped.header.frame_id)
            if not child or not parent or child == parent:
                continue  # tf2 refuses these
            try:
                T_parent_child = transform_from_transform_msg(stamped.transform)
            except ValueError:
                continue  # a transform with a zero or non-finite rotation is unusable
            stamp = stamped.header.stamp
            self._buffer.set_transform(parent, child, stamp.sec * 1_000_000_000 + stamp.nanosec, T_parent_child,
                                       static)

    def frames(self) -> set[str]:
        return self._buffer.frames()

    def lookup(self, target_frame: str, source_frame: str) -> np.ndarray:
        return self._buffer.lookup_latest(normalized_frame_id(target_frame), normalized_frame_id(source_frame))
