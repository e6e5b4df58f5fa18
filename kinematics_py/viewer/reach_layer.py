"""A reachability map in the viewer: its reached voxels as cubes coloured by the fraction of orientations
reached (red: few, green: all), with a slice plane that shows one layer of voxels along x, y or z.

At most MAX_DISPLAY_VOXELS voxels are drawn (an even selection; the note says so).
"""
from __future__ import annotations

import numpy as np

from .scene_nodes import NodeGroup
from .world_layer import thinned, triangles_of_cube

MAX_DISPLAY_VOXELS = 30_000
AXES = ("all", "x", "y", "z")


def fraction_colors(fraction: np.ndarray) -> np.ndarray:
    """(n, 3) uint8 RGB of fractions in [0, 1]: red (0) through yellow to green (1)."""
    f = np.clip(np.asarray(fraction, dtype=float), 0.0, 1.0)[:, None]
    low, middle, high = np.array([220, 40, 30]), np.array([240, 210, 40]), np.array([40, 190, 70])
    colors = np.where(f < 0.5, low + (middle - low) * (2 * f), middle + (high - middle) * (2 * f - 1))
    return colors.round().astype(np.uint8)


class ReachLayer:
    """The map shown last; the slice axis and position are GUI controls."""

    def __init__(self, server, T_model_base=lambda frame: np.eye(4)):
        self._scene = server.scene
        self._T_model_base = T_model_base
        self._nodes = NodeGroup()
        self.map = None
        self.note = ""
        with server.gui.add_folder("Reachability map", expand_by_default=False):
            self._summary = server.gui.add_markdown("No map yet.")
            self._axis = server.gui.add_dropdown("slice axis", options=AXES, initial_value="all")
            self._slice = server.gui.add_slider("slice", min=0, max=1, step=1, initial_value=0)
        self._axis.on_update(lambda _event: self._draw())
        self._slice.on_update(lambda _event: self._draw())

    def show(self, reach_map) -> None:
        """Draw ``reach_map`` (a ``reachability.ReachabilityMap``) in the frame of its base."""
        self.map = reach_map
        self._draw()

    def set_slice(self, axis: str, index: int) -> None:
        self._axis.value = axis
        self._slice.value = index

    def _draw(self) -> None:
        self._nodes.clear()
        reach_map = self.map
        if reach_map is None:
            return
        fraction = reach_map.fraction
        voxels = np.flatnonzero(fraction > 0)
        axis = self._axis.value
        if axis != "all":
            dimension = "xyz".index(axis)
            self._slice.max = max(reach_map.grid.shape[dimension] - 1, 1)
            layer = np.unravel_index(voxels, reach_map.grid.shape)[dimension]
            voxels = voxels[layer == min(int(self._slice.value), reach_map.grid.shape[dimension] - 1)]
        keep = voxels[thinned(len(voxels), MAX_DISPLAY_VOXELS)]
        self.note = f"{len(keep)} of {len(voxels)} voxels drawn." if len(keep) < len(voxels) else ""
        self._summary.content = " ".join(filter(None, [
            f"{reach_map.grid.size} voxels, {len(np.flatnonzero(fraction > 0))} reached, "
            f"{len(reach_map.orientations)} orientations each; colour: fraction reached (red 0, green 1).",
            self.note]))
        if not len(keep):
            return
        T = self._T_model_base(reach_map.metadata.get("base_frame", ""))
        centres = reach_map.grid.centres(keep) @ T[:3, :3].T + T[:3, 3]
        vertices, faces = triangles_of_cube(0.8 * reach_map.grid.resolution)
        self._nodes.add(self._scene.add_batched_meshes_simple(
            "/reach/voxels", vertices, faces, batched_wxyzs=np.tile((1.0, 0.0, 0.0, 0.0), (len(keep), 1)),
            batched_positions=centres.astype(np.float32), batched_colors=fraction_colors(fraction[keep]),
            lod="off", opacity=0.8 if axis == "all" else None))

    def remove(self) -> None:
        self._nodes.clear()
