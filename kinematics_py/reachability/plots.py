"""Pictures of a reachability map: heat-map slices through the workspace and a 3-D view, as PNG files.

Needs matplotlib (the reach extra, requirements/reach.txt); drawn off-screen (the Agg backend). Colour: the
reachability index as a fraction of the orientations tried (0: white, unreachable; 1: every orientation).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from ..errors import KinematicsError
from .reach_map import ReachabilityMap

AXES = ("x", "y", "z")
COLOUR_MAP = "viridis"


def _pyplot():
    try:
        import matplotlib
    except ImportError:
        raise KinematicsError("the pictures need matplotlib: pip install -r requirements/reach.txt") from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def save_slices(reach_map: ReachabilityMap, path, axis: str = "z", count: int = 6) -> Path:
    """One PNG with ``count`` slices across ``axis`` ('x', 'y' or 'z'), evenly spaced through the grid, each
    a heat map of the reachability index of one voxel layer."""
    if axis not in AXES:
        raise KinematicsError(f"unknown slice axis {axis!r}; axes are {list(AXES)}")
    plt = _pyplot()
    grid, a = reach_map.grid, AXES.index(axis)
    fraction = reach_map.fraction.reshape(grid.shape)
    layers = np.unique(np.linspace(0, grid.shape[a] - 1, min(count, grid.shape[a])).round().astype(int))
    u, v = [k for k in range(3) if k != a]
    extent = [grid.lower[u], grid.lower[u] + grid.shape[u] * grid.resolution,
              grid.lower[v], grid.lower[v] + grid.shape[v] * grid.resolution]
    columns = min(3, len(layers))
    rows = -(-len(layers) // columns)
    figure, axes = plt.subplots(rows, columns, figsize=(4.2 * columns, 3.8 * rows), squeeze=False,
                                layout="constrained")
    masked = np.ma.masked_equal(fraction, 0.0)
    image = None
    for plot, layer in zip(axes.flat, layers):
        image = plot.imshow(np.take(masked, layer, axis=a).T, origin="lower", extent=extent, cmap=COLOUR_MAP,
                            vmin=0.0, vmax=1.0, interpolation="nearest")
        plot.set_title(f"{axis} = {grid.lower[a] + (layer + 0.5) * grid.resolution:.3f} m")
        plot.set_xlabel(f"{AXES[u]} [m]")
        plot.set_ylabel(f"{AXES[v]} [m]")
    for plot in list(axes.flat)[len(layers):]:
        plot.axis("off")
    figure.colorbar(image, ax=axes, label="reachable orientations (fraction)")
    figure.suptitle(_title(reach_map))
    return _save(plt, figure, path)


def save_3d_view(reach_map: ReachabilityMap, path, min_fraction: float = 0.0, cutaway: bool = True) -> Path:
    """One PNG of the reachable voxels (at least ``min_fraction`` of the orientations) as points in 3-D;
    ``cutaway`` leaves out the half with y above the grid's middle, to show the inside."""
    plt = _pyplot()
    centres = reach_map.grid.centres()
    middle_y = reach_map.grid.lower[1] + reach_map.grid.shape[1] * reach_map.grid.resolution / 2
    shown = (reach_map.index > 0) & (reach_map.fraction >= min_fraction)
    if cutaway:
        shown &= centres[:, 1] <= middle_y
    shown = np.flatnonzero(shown)
    centres = centres[shown]
    figure = plt.figure(figsize=(7.5, 6.5))
    plot = figure.add_subplot(projection="3d")
    points = plot.scatter(*centres.T, c=reach_map.fraction[shown], cmap=COLOUR_MAP, vmin=0.0, vmax=1.0,
                          s=max(2.0, 600.0 / max(1, len(shown)) ** 0.5), alpha=0.6, depthshade=True)
    plot.set_xlabel("x [m]")
    plot.set_ylabel("y [m]")
    plot.set_zlabel("z [m]")
    plot.set_box_aspect(reach_map.grid.shape)
    figure.colorbar(points, ax=plot, shrink=0.7, label="reachable orientations (fraction)")
    plot.set_title(_title(reach_map))
    return _save(plt, figure, path)


def _title(reach_map: ReachabilityMap) -> str:
    meta = reach_map.metadata
    return (f"{meta.get('robot', '')} {meta.get('base_frame', '')} -> {meta.get('tip_frame', '')}, "
            f"{reach_map.grid.resolution} m, {len(reach_map.orientations)} orientations")


def _save(plt, figure, path) -> Path:
    path = Path(path)
    figure.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(figure)
    return path
