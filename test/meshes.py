"""World meshes and point clouds for tests: the surfaces of boxes as one triangle mesh, or points drawn on them."""
from __future__ import annotations

import numpy as np
import trimesh

from kinematics_py.collision.geometry import Mesh


def boxes_mesh(boxes) -> Mesh:
    """One mesh of the surfaces of ``boxes`` ((centre, size) [m] each; 12 triangles a box): not convex when there
    are several."""
    surfaces = _surfaces(boxes)
    return Mesh(np.asarray(surfaces.vertices), np.asarray(surfaces.faces))


def boxes_cloud(boxes, count: int, seed: int, noise: float = 0.003) -> np.ndarray:
    """(count, 3) points [m] drawn on the surfaces of ``boxes`` (as ``boxes_mesh``) with normal noise of ``noise``
    [m]: what a depth sensor reports."""
    points = trimesh.sample.sample_surface(_surfaces(boxes), count, seed=seed)[0]
    return points + np.random.default_rng(seed).normal(0.0, noise, points.shape)


def _surfaces(boxes) -> trimesh.Trimesh:
    parts = [trimesh.creation.box(extents=size, transform=trimesh.transformations.translation_matrix(centre))
             for centre, size in boxes]
    return trimesh.util.concatenate(parts)
