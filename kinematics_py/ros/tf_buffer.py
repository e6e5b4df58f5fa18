"""A transform buffer that answers like tf2's BufferCore, for the node's own /tf listener (no ROS imports).

Semantics kept from tf2 (so an answer does not depend on whether tf2_ros is installed):

- every frame keeps its transforms of the last ``cache_time_s`` (10 s, tf2_ros.Buffer's default), counted
  from the newest transform of that frame; older data arriving late is dropped, exact repeats are ignored;
  static transforms (/tf_static) hold at every time;
- ``lookup_latest(target, source)`` is tf2's ``lookupTransform(target, source, Time())``: the chain is
  evaluated at the latest time every transform of it has data for (static ones and stamp 0 do not count),
  interpolated between neighbouring transforms (linear in translation, slerp in rotation);
- the errors name the problem as tf2 does: a frame that "does not exist", two frames without "a connection",
  and "extrapolation into the past" when the chain's common time is older than a frame's cache (a frame
  published once under a link that keeps moving: answered while the link's cache reaches back to it, an error
  after ``cache_time_s``).
"""
from __future__ import annotations

import bisect
import threading

import numpy as np

from ..errors import KinematicsError
from ..geometry.transforms import invert_transform, quaternion_from_rotation, transform_from_pose

#: tf2_ros.Buffer's default cache time [s].
DEFAULT_CACHE_TIME_S = 10.0
#: Longest chain of parents followed before a frame tree is declared cyclic (tf2's MAX_GRAPH_DEPTH).
MAX_FRAME_DEPTH = 1000


class FrameLookupError(KinematicsError):
    """A transform between two frames is not known (tf2's LookupException, ConnectivityException or
    ExtrapolationException)."""


class _FrameCache:
    """One frame's transforms to its parent, oldest first: (stamp [ns], parent, T_parent_frame)."""

    def __init__(self):
        self.stamps: list[int] = []
        self.entries: list[tuple[str, np.ndarray]] = []

    def insert(self, stamp_ns: int, parent: str, T: np.ndarray, cache_time_ns: int) -> None:
        if self.stamps and stamp_ns < self.stamps[-1] - cache_time_ns:
            return  # older than the cache reaches: tf2 drops it
        index = bisect.bisect_right(self.stamps, stamp_ns)
        for same in range(bisect.bisect_left(self.stamps, stamp_ns), index):
            if self.entries[same][0] == parent and np.array_equal(self.entries[same][1], T):
                return  # an exact repeat
        self.stamps.insert(index, stamp_ns)
        self.entries.insert(index, (parent, T))
        oldest_kept = bisect.bisect_left(self.stamps, self.stamps[-1] - cache_time_ns)
        del self.stamps[:oldest_kept], self.entries[:oldest_kept]

    @property
    def latest(self) -> tuple[int, str]:
        return self.stamps[-1], self.entries[-1][0]

    def at(self, stamp_ns: int, frame: str) -> tuple[str, np.ndarray]:
        """(parent, T_parent_frame) at ``stamp_ns`` (0: the latest); FrameLookupError where tf2 would
        extrapolate."""
        stamps = self.stamps
        if stamp_ns == 0 or stamp_ns == stamps[-1]:
            return self.entries[-1]
        if len(stamps) == 1:
            raise FrameLookupError(f"Lookup would require extrapolation at time {_seconds(stamp_ns)}, but only "
                                   f"time {_seconds(stamps[0])} is in the buffer of frame "
                                   f"[{frame}]")
        if stamp_ns > stamps[-1]:
            raise FrameLookupError(f"Lookup would require extrapolation into the future. Requested time "
                                   f"{_seconds(stamp_ns)} but the latest data is at time {_seconds(stamps[-1])} "
                                   f"(frame [{frame}])")
        if stamp_ns < stamps[0]:
            raise FrameLookupError(f"Lookup would require extrapolation into the past. Requested time "
                                   f"{_seconds(stamp_ns)} but the earliest data is at time {_seconds(stamps[0])} "
                                   f"(frame [{frame}])")
        newer = bisect.bisect_left(stamps, stamp_ns)
        if stamps[newer] == stamp_ns:
            return self.entries[newer]
        (parent, T_older), (newer_parent, T_newer) = self.entries[newer - 1], self.entries[newer]
        if parent != newer_parent:
            return parent, T_older
        fraction = (stamp_ns - stamps[newer - 1]) / (stamps[newer] - stamps[newer - 1])
        return parent, interpolate_transform(T_older, T_newer, fraction)


class TransformBuffer:
    """Transforms of every frame over the last ``cache_time_s``; thread-safe."""

    def __init__(self, cache_time_s: float = DEFAULT_CACHE_TIME_S):
        self._cache_time_ns = int(cache_time_s * 1e9)
        self._lock = threading.Lock()
        self._dynamic: dict[str, _FrameCache] = {}
        #: child frame -> (parent frame, T_parent_child), valid at every time
        self._static: dict[str, tuple[str, np.ndarray]] = {}
        #: every frame ever named (tf2 forgets none)
        self._known: set[str] = set()

    def set_transform(self, parent: str, child: str, stamp_ns: int, T_parent_child: np.ndarray,
                      static: bool = False) -> None:
        with self._lock:
            self._known.update((parent, child))
            if static:
                self._dynamic.pop(child, None)
                self._static[child] = (parent, T_parent_child)
                return
            self._static.pop(child, None)
            self._dynamic.setdefault(child, _FrameCache()).insert(stamp_ns, parent, T_parent_child,
                                                                  self._cache_time_ns)

    def frames(self) -> set[str]:
        with self._lock:
            return set(self._known)

    def lookup_latest(self, target_frame: str, source_frame: str) -> np.ndarray:
        """``T_target_source`` at the latest common time of the chain (tf2's lookupTransform at Time())."""
        with self._lock:
            for role, frame in (("target_frame", target_frame), ("source_frame", source_frame)):
                if frame not in self._known:
                    raise FrameLookupError(f'"{frame}" passed to lookupTransform argument {role} does not exist. ')
            if target_frame == source_frame:
                return np.eye(4)
            source_chain, target_chain = self._chain(source_frame), self._chain(target_frame)
            common = next((frame for frame in source_chain if frame in target_chain), None)
            if common is None:
                raise FrameLookupError(f"Could not find a connection between '{target_frame}' and '{source_frame}' "
                                       f"because they are not part of the same tree. Tf has two or more "
                                       f"unconnected trees.")
            below_common = [*source_chain[:source_chain.index(common)], *target_chain[:target_chain.index(common)]]
            latest = [self._dynamic[frame].latest[0] for frame in below_common if frame in self._dynamic]
            stamp_ns = min((stamp for stamp in latest if stamp != 0), default=0)
            try:
                T_common_source = self._to_ancestor(source_chain, common, stamp_ns)
                T_common_target = self._to_ancestor(target_chain, common, stamp_ns)
            except FrameLookupError as error:
                raise FrameLookupError(f"{error}, when looking up transform from frame [{source_frame}] to frame "
                                       f"[{target_frame}]") from None
        return invert_transform(T_common_target) @ T_common_source

    def _parent(self, frame: str) -> str | None:
        if frame in self._static:
            return self._static[frame][0]
        cache = self._dynamic.get(frame)
        return cache.latest[1] if cache else None

    def _chain(self, frame: str) -> list[str]:
        """``frame`` and its ancestors (by their latest parents), nearest first."""
        chain = [frame]
        parent = self._parent(frame)
        while parent is not None and parent not in chain and len(chain) < MAX_FRAME_DEPTH:
            chain.append(parent)
            parent = self._parent(parent)
        return chain

    def _to_ancestor(self, chain: list[str], ancestor: str, stamp_ns: int) -> np.ndarray:
        """``T_ancestor_frame`` for chain[0] at ``stamp_ns``."""
        T = np.eye(4)
        for frame in chain[:chain.index(ancestor)]:
            _, T_parent_frame = self._static[frame] if frame in self._static else \
                self._dynamic[frame].at(stamp_ns, frame)
            T = T_parent_frame @ T
        return T


def interpolate_transform(T_a: np.ndarray, T_b: np.ndarray, fraction: float) -> np.ndarray:
    """The transform ``fraction`` of the way from ``T_a`` to ``T_b``: linear in translation, slerp in rotation."""
    q_a, q_b = quaternion_from_rotation(T_a[:3, :3]), quaternion_from_rotation(T_b[:3, :3])
    cos_angle = float(q_a @ q_b)
    if cos_angle < 0.0:
        q_b, cos_angle = -q_b, -cos_angle
    if cos_angle > 1.0 - 1e-12:
        q = q_a + fraction * (q_b - q_a)
    else:
        angle = np.arccos(cos_angle)
        q = (np.sin((1.0 - fraction) * angle) * q_a + np.sin(fraction * angle) * q_b) / np.sin(angle)
    position = T_a[:3, 3] + fraction * (T_b[:3, 3] - T_a[:3, 3])
    return transform_from_pose(position, q)


def _seconds(stamp_ns: int) -> str:
    return f"{stamp_ns / 1e9:.6f}"
