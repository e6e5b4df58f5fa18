"""Small helpers over viser's scene: poses from 4x4 transforms, meshes drawn from DisplayMesh values, and a set of
scene nodes replaced as a whole (the viewer's memory stays bounded however often a layer is redrawn)."""
from __future__ import annotations

from collections.abc import Iterable, Mapping

import numpy as np

from ..geometry.transforms import quaternion_from_rotation
from .shapes import COLLIDING_COLOR, DisplayMesh


def wxyz_position(T: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """viser's (w, x, y, z) quaternion and position of a 4x4 transform."""
    x, y, z, w = quaternion_from_rotation(np.asarray(T, dtype=float)[:3, :3])
    return np.array([w, x, y, z]), np.asarray(T, dtype=float)[:3, 3].copy()


def add_display_mesh(scene, name: str, mesh: DisplayMesh, **options):
    """``mesh`` as a viser mesh node ``name`` (posed in its parent frame by ``mesh.T_frame_shape``)."""
    wxyz, position = wxyz_position(mesh.T_frame_shape)
    return scene.add_mesh_simple(name, mesh.vertices, mesh.faces, color=options.pop("color", mesh.color), wxyz=wxyz,
                                 position=position, **options)


def recoloured(drawn: Mapping[str, list[tuple[object, tuple[int, int, int]]]], shown: frozenset[str],
               bodies: Iterable[str]) -> frozenset[str]:
    """Draw the ``bodies`` among ``drawn`` (name -> its (handle, own colour) pairs) red and the others of ``shown``
    (red until now) in their own colours; returns the bodies now red. Only handles whose colour changes are sent."""
    red = frozenset(body for body in bodies if body in drawn)
    for body in red ^ shown:
        for handle, color in drawn[body]:
            color = COLLIDING_COLOR if body in red else color
            if hasattr(handle, "batched_colors"):  # instanced voxels
                handle.batched_colors = np.array(color, dtype=np.uint8)
            else:
                handle.color = color
    return red


class NodeGroup:
    """Scene nodes drawn together and removed together (``clear``) before the next drawing."""

    def __init__(self):
        self._handles = []

    def add(self, handle):
        self._handles.append(handle)
        return handle

    def extend(self, handles: Iterable) -> None:
        self._handles.extend(handles)

    def clear(self) -> None:
        handles, self._handles = self._handles, []
        for handle in reversed(handles):  # children (added after their parents) first
            handle.remove()

    def __len__(self) -> int:
        return len(self._handles)
