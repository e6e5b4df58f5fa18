"""Paths in the viewer: a Cartesian path or a planned motion as joint configurations, played with a timeline
slider, the tip's trace drawn, and where and why the path stopped.

``ShownPath`` is what any path gives (``from_cartesian_path``, ``from_motion_plan``); the layer calls
``show_configuration(joint values)`` for the frame the slider is at.
"""
from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np

from .scene_nodes import NodeGroup

#: Most frames a path is played with (longer paths are played on an even selection of their points).
MAX_DISPLAY_FRAMES = 2_000
TRACE_COLOR = (255, 140, 0)
REQUESTED_COLOR = (160, 160, 160)
STOP_COLOR = (200, 0, 200)
PLAY_PERIOD_S = 0.04


@dataclass(frozen=True, eq=False)
class ShownPath:
    """A path to play: ``positions`` (points, joints) of ``joint_names``; ``stop_reason`` "" when it is complete;
    ``T_base_requested`` (points, 4, 4) the link poses asked for, in the base frame (Cartesian paths)."""

    label: str
    joint_names: tuple[str, ...]
    positions: np.ndarray
    stop_reason: str = ""
    fraction: float = 1.0
    T_base_requested: np.ndarray | None = None

    @classmethod
    def from_cartesian_path(cls, path, label: str = "Cartesian path") -> ShownPath:
        """A ``planning.cartesian_path.CartesianPath``."""
        return cls(label, tuple(path.joint_names), np.asarray(path.positions, dtype=float), path.stop_reason,
                   float(path.fraction), np.asarray(path.T_base_link, dtype=float))

    @classmethod
    def from_motion_plan(cls, plan, label: str = "planned motion") -> ShownPath:
        """A ``planning.motion.MotionPlan``: its trajectory, or on failure the reason (and no frames)."""
        positions = np.asarray(plan.positions, dtype=float)
        if positions.ndim != 2 or positions.shape[1] != len(plan.joint_names):
            positions = np.empty((0, len(plan.joint_names)))
        reason = "" if plan.success else f"{plan.error_code.name}: {plan.message}"
        return cls(label, tuple(plan.joint_names), positions, reason, 1.0 if plan.success else 0.0)


class PathLayer:
    """The timeline of the path shown last (one at a time: a new path replaces the old one)."""

    def __init__(self, server, show_configuration: Callable[[Mapping[str, float]], None],
                 tip_position: Callable[[Mapping[str, float]], np.ndarray | None]):
        self._scene, self._show, self._tip_position = server.scene, show_configuration, tip_position
        self._nodes = NodeGroup()
        self._lock = threading.Lock()
        self.path: ShownPath | None = None
        self._frames = np.empty(0, dtype=np.int64)
        with server.gui.add_folder("Path"):
            self._summary = server.gui.add_markdown("No path yet.")
            self.slider = server.gui.add_slider("frame", min=0, max=1, step=1, initial_value=0, disabled=True)
            self._play = server.gui.add_checkbox("play", initial_value=False)
        self.slider.on_update(lambda _event: self.show_frame(int(self.slider.value)))
        self._stop = threading.Event()
        self._player = threading.Thread(target=self._play_loop, name="viewer-path-player", daemon=True)
        self._player.start()

    def show(self, path: ShownPath) -> None:
        with self._lock:
            self._nodes.clear()
            self.path = path
            self._frames = np.unique(np.linspace(0, len(path.positions) - 1, min(len(path.positions),
                                                                                 MAX_DISPLAY_FRAMES)).round()
                                     .astype(np.int64)) if len(path.positions) else np.empty(0, dtype=np.int64)
        self._summary.content = self._describe(path)
        count = len(self._frames)
        self.slider.max = max(count - 1, 1)
        self.slider.disabled = count == 0
        self._draw_trace(path)
        if count:
            self.slider.value = 0
            self.show_frame(0)

    def _describe(self, path: ShownPath) -> str:
        text = f"**{path.label}**: {len(path.positions)} points"
        if len(path.positions) > len(self._frames) > 0:
            text += f" (played on {len(self._frames)} of them)"
        if path.T_base_requested is not None:
            text += f", {100 * path.fraction:.1f} % of the requested path"
        if path.stop_reason:
            text += f"\n\n**Stopped**: {path.stop_reason}"
        return text

    def _draw_trace(self, path: ShownPath) -> None:
        names = path.joint_names
        tips = [self._tip_position(dict(zip(names, path.positions[k]))) for k in self._frames]
        tips = np.array([tip for tip in tips if tip is not None], dtype=np.float32)
        if len(tips) >= 2:
            segments = np.stack([tips[:-1], tips[1:]], axis=1)
            self._nodes.add(self._scene.add_line_segments("/path/trace", segments, colors=TRACE_COLOR,
                                                          thickness=0.01))
        if path.T_base_requested is not None and len(path.T_base_requested) >= 2:
            requested = path.T_base_requested[:, :3, 3].astype(np.float32)
            segments = np.stack([requested[:-1], requested[1:]], axis=1)
            self._nodes.add(self._scene.add_line_segments("/path/requested", segments, colors=REQUESTED_COLOR,
                                                          thickness=0.003))
        if path.stop_reason and len(tips):
            self._nodes.add(self._scene.add_icosphere("/path/stop", radius=0.02, color=STOP_COLOR,
                                                      position=tuple(tips[-1])))
            self._nodes.add(self._scene.add_label("/path/stop_label", f"stopped: {path.stop_reason[:120]}",
                                                  position=tuple(tips[-1] + (0.0, 0.0, 0.05))))

    def show_frame(self, index: int) -> None:
        """Show the robot at frame ``index`` of the slider."""
        with self._lock:
            path, frames = self.path, self._frames
        if path is None or not len(frames):
            return
        point = frames[min(max(index, 0), len(frames) - 1)]
        self._show(dict(zip(path.joint_names, path.positions[point].tolist())))

    def _play_loop(self) -> None:
        while not self._stop.wait(PLAY_PERIOD_S):
            if self._play.value and len(self._frames) > 1:
                self.slider.value = (int(self.slider.value) + 1) % len(self._frames)

    def remove(self) -> None:
        self._stop.set()
        self._nodes.clear()
