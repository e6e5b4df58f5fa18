"""World meshes for tests: the surfaces of boxes as one triangle mesh."""
from __future__ import annotations

import numpy as np
import trimesh

from kinematics_py.collision.geometry import Mesh


def boxes_mesh(boxes) -> Mesh:
    """One mesh of the surfaces of ``boxes`` ((centre, size) [m] each; 12 triangles a box): not convex when there
    are several."""
    parts = [trimesh.creation.box(extents=size, transform=trimesh.transformations.translation_matrix(centre))
             for centre, size in boxes]
    offsets = np.cumsum([0] + [len(part.vertices) for part in parts[:-1]])
    return Mesh(np.vstack([part.vertices for part in parts]),
                np.vstack([part.faces + offset for part, offset in zip(parts, offsets)]))
