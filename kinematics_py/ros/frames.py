"""Frames for the node: TF lookups ``lookup(target, source) -> T_target_source`` (4x4), and ``ModelFrames``,
which places any frame in a robot set-up's model frame.

``create_transform_source`` uses tf2_ros (Buffer + TransformListener) where it is importable. Where it
is not (ROS 2 from PyPI wheels has no tf2_ros), ``TfMessageListener`` subscribes to ``/tf`` and
``/tf_static`` (tf2_msgs/TFMessage) itself and answers the same lookups from the latest transform of
every frame.

Notes:
    The fallback keeps one transform per child frame, the latest received, and does no interpolation
    in time: a lookup gives the newest known chain of transforms, as tf2's "time 0" lookup does when
    every frame is updated together.
"""
from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from typing import Protocol

import numpy as np
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from tf2_msgs.msg import TFMessage

from ..collision.scene import PlanningScene, SceneError
from ..errors import ErrorCode, KinematicsError, RequestError
from ..geometry.transforms import invert_transform
from ..robot_setup import RobotSetup
from .conversions import transform_from_transform_msg

#: Longest chain of parents followed before a frame tree is declared cyclic.
MAX_FRAME_DEPTH = 1000
TF_QOS = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.VOLATILE)
TF_STATIC_QOS = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE,
                           durability=DurabilityPolicy.TRANSIENT_LOCAL)


class FrameLookupError(KinematicsError):
    """A transform between two frames is not known."""


class TransformSource(Protocol):
    """Answers ``lookup(target_frame, source_frame)`` with ``T_target_source`` or raises FrameLookupError."""

    backend: str

    def lookup(self, target_frame: str, source_frame: str) -> np.ndarray: ...


class ModelFrames:
    """Frames of one robot set-up, placed in its model frame: the model frame and its aliases (identity), robot
    links (placed by a robot state's link poses), anything else through TF."""

    def __init__(self, setup: RobotSetup, transforms: TransformSource):
        self._setup, self._transforms = setup, transforms

    def is_model_frame(self, frame: str) -> bool:
        return frame in self._setup.model_frame_aliases or frame == self._setup.model_frame

    def T_model_frame(self, frame: str, link_poses: Mapping[str, np.ndarray]) -> np.ndarray:
        """``T_model_frame``; RequestError(FRAME_TRANSFORM_FAILURE) for a frame TF does not know either."""
        setup = self._setup
        frame = _frame(frame)
        if self.is_model_frame(frame):
            return np.eye(4)
        if frame in setup.model.link_names:
            return link_poses[frame]
        try:
            return self._transforms.lookup(setup.model_frame, frame)
        except FrameLookupError as error:
            raise RequestError(ErrorCode.FRAME_TRANSFORM_FAILURE,
                               f"cannot transform frame {frame!r} into the model frame {setup.model_frame!r}: "
                               f"{error}") from None

    def scene_resolver(self, scene: PlanningScene) -> Callable[[str], tuple[str, np.ndarray | None]]:
        """Resolves an object's frame_id into (a frame ``scene`` knows, ``T_model_frame`` or None): the model frame
        (and its aliases), robot links, objects and their subframes as the scene knows them; any other frame
        through TF. SceneError for a frame nobody knows."""
        setup = self._setup

        def resolve(frame_id: str) -> tuple[str, np.ndarray | None]:
            frame = _frame(frame_id)
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
        return transform_from_transform_msg(stamped.transform)


class TfMessageListener:
    """The latest transform of every frame from ``/tf`` and ``/tf_static`` (tf2_msgs/TFMessage)."""

    backend = "tf2_msgs listener (tf2_ros not importable)"

    def __init__(self, node: Node, callback_group=None):
        self._lock = threading.Lock()
        #: child frame -> (parent frame, T_parent_child)
        self._parents: dict[str, tuple[str, np.ndarray]] = {}
        self._subscriptions = [
            node.create_subscription(TFMessage, "/tf", self.add_message, TF_QOS, callback_group=callback_group),
            node.create_subscription(TFMessage, "/tf_static", self.add_message, TF_STATIC_QOS,
                                     callback_group=callback_group),
        ]

    def add_message(self, message: TFMessage) -> None:
        edges = {}
        for stamped in message.transforms:
            child, parent = _frame(stamped.child_frame_id), _frame(stamped.header.frame_id)
            if child and parent and child != parent:
                try:
                    edges[child] = (parent, transform_from_transform_msg(stamped.transform))
                except ValueError:
                    continue  # a transform with a zero or non-finite rotation is unusable
        with self._lock:
            self._parents.update(edges)

    def frames(self) -> set[str]:
        with self._lock:
            return set(self._parents) | {parent for parent, _ in self._parents.values()}

    def lookup(self, target_frame: str, source_frame: str) -> np.ndarray:
        target_frame, source_frame = _frame(target_frame), _frame(source_frame)
        if target_frame == source_frame:
            return np.eye(4)
        with self._lock:
            source_path = self._path_to_root(source_frame)
            target_path = self._path_to_root(target_frame)
        common = next((frame for frame in source_path if frame in target_path), None)
        if common is None:
            known = sorted(self.frames())
            missing = [f for f in (source_frame, target_frame) if f not in known]
            reason = (f"frame(s) {missing} unknown to TF" if missing
                      else f"{source_frame!r} and {target_frame!r} are not connected in the TF tree")
            raise FrameLookupError(f"cannot transform from {source_frame!r} to {target_frame!r}: {reason}; "
                                   f"known frames are {known[:40]}")
        T_common_source = source_path[common]
        T_common_target = target_path[common]
        return invert_transform(T_common_target) @ T_common_source

    def _path_to_root(self, frame: str) -> dict[str, np.ndarray]:
        """{ancestor: T_ancestor_frame} for ``frame`` and every ancestor, nearest first."""
        path = {frame: np.eye(4)}
        T = np.eye(4)
        while frame in self._parents and len(path) < MAX_FRAME_DEPTH:
            parent, T_parent_frame = self._parents[frame]
            if parent in path:
                break  # a cycle: stop at the first repeated frame
            T = T_parent_frame @ T
            path[parent] = T
            frame = parent
        return path


def _frame(name: str) -> str:
    """tf2 frame ids carry no leading slash."""
    return name.lstrip("/")
