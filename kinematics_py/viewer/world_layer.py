"""The planning scene in the viewer: world objects, objects attached to links (they move with them), octomap and
point-cloud voxels, and the contacts of an invalid state; colliding objects drawn red.

Large scenes are thinned for display: at most MAX_DISPLAY_VOXELS voxels of an octree are drawn (an even
selection), and ``note`` says what was left out.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from ..collision.octree import Octree
from ..collision.report import Contact
from ..collision.scene import PlanningScene
from .robot_layer import ROBOT_ROOT
from .scene_nodes import NodeGroup, add_display_mesh, recoloured, wxyz_position
from .shapes import ATTACHED_COLOR, OBJECT_COLOR, display_mesh, triangles

WORLD_ROOT = "/world"
#: Most voxels drawn per octree (octomap, point cloud).
MAX_DISPLAY_VOXELS = 20_000
VOXEL_COLOR = (110, 110, 120)
CONTACT_COLOR = (255, 200, 0)
#: Objects are drawn a little transparent: what collides inside them stays visible.
OBJECT_OPACITY = 0.8
#: Radius [m] of a contact's marker.
CONTACT_RADIUS = 0.012


def thinned(count: int, limit: int) -> np.ndarray:
    """Indices of an even selection of at most ``limit`` of ``count`` items (all of them when they fit)."""
    if count <= limit:
        return np.arange(count)
    return np.linspace(0, count - 1, limit).round().astype(np.int64)


class WorldLayer:
    """Draws a planning scene's objects; ``highlight`` colours objects, ``show_contacts`` marks contacts."""

    def __init__(self, scene_api):
        self._scene = scene_api
        self._nodes = NodeGroup()
        self._contacts = NodeGroup()
        #: object id -> (mesh handle, its own colour) of every drawn shape
        self._objects: dict[str, list[tuple[object, tuple[int, int, int]]]] = {}
        self.highlighted: frozenset[str] = frozenset()
        self.note = ""
        self.scene_version: tuple[int, int] | None = None

    def show(self, scene: PlanningScene) -> None:
        """Draw ``scene`` (replacing what was drawn before)."""
        self._nodes.clear()
        self._objects, self.highlighted, notes = {}, frozenset(), []
        colors = scene.settings.object_colors
        for object_id, item in scene.world_objects.items():
            color = _rgb(colors.get(object_id), OBJECT_COLOR)
            self._draw(f"{WORLD_ROOT}/{_safe(object_id)}", object_id, item.T_parent_object, item.shapes, color, notes)
        for object_id, attached in scene.attached_objects.items():
            color = _rgb(colors.get(object_id), ATTACHED_COLOR)
            self._draw(f"{ROBOT_ROOT}/{attached.link}/attached/{_safe(object_id)}", object_id,
                       attached.object.T_parent_object, attached.object.shapes, color, notes)
        self.note = " ".join(notes)
        self.scene_version = (id(scene), scene.version)

    def _draw(self, name: str, object_id: str, T_parent_object: np.ndarray, shapes, color, notes: list[str]) -> None:
        wxyz, position = wxyz_position(T_parent_object)
        self._nodes.add(self._scene.add_frame(name, wxyz=wxyz, position=position, show_axes=False))
        drawn = self._objects.setdefault(object_id, [])
        for k, placed in enumerate(shapes):
            if isinstance(placed.shape, Octree):
                drawn.append((self._nodes.add(self._voxels(f"{name}/voxels_{k}", placed, object_id, notes)),
                              VOXEL_COLOR))
                continue
            mesh = display_mesh(placed, color)
            if mesh.note:
                notes.append(f"{object_id}: {mesh.note}.")
            drawn.append((self._nodes.add(add_display_mesh(self._scene, f"{name}/shape_{k}", mesh,
                                                           opacity=OBJECT_OPACITY)), color))

    def _voxels(self, name: str, placed, object_id: str, notes: list[str]):
        octree = placed.shape
        centres = octree.centers
        keep = thinned(len(centres), MAX_DISPLAY_VOXELS)
        if len(keep) < len(centres):
            notes.append(f"{object_id}: {len(keep)} of its {len(centres)} voxels drawn.")
        T = np.asarray(placed.T_frame_shape, dtype=float)
        points = centres[keep] @ T[:3, :3].T + T[:3, 3]
        vertices, faces = triangles_of_cube(octree.resolution)
        wxyz, _ = wxyz_position(T)
        return self._scene.add_batched_meshes_simple(
            name, vertices, faces, batched_wxyzs=np.tile(wxyz, (len(points), 1)),
            batched_positions=points.astype(np.float32), batched_colors=VOXEL_COLOR, lod="off")

    def highlight(self, bodies: Iterable[str]) -> None:
        """Draw the objects among ``bodies`` red (the others in their own colours)."""
        self.highlighted = recoloured(self._objects, self.highlighted, bodies)

    def show_contacts(self, contacts: Sequence[Contact]) -> None:
        """Mark each contact's position (in the planning frame) with a small sphere and its normal."""
        self._contacts.clear()
        if not contacts:
            return
        positions = np.array([contact.position for contact in contacts], dtype=np.float32)
        self._contacts.add(self._scene.add_point_cloud(
            "/contacts/points", positions, colors=CONTACT_COLOR, point_size=2 * CONTACT_RADIUS, point_shape="circle"))
        normals = np.array([contact.normal for contact in contacts], dtype=np.float32)
        segments = np.stack([positions, positions + 0.08 * normals], axis=1)
        self._contacts.add(self._scene.add_line_segments("/contacts/normals", segments, colors=CONTACT_COLOR,
                                                         thickness=0.004))

    def remove(self) -> None:
        self._nodes.clear()
        self._contacts.clear()
        self._objects, self.highlighted, self.scene_version = {}, frozenset(), None


def triangles_of_cube(edge: float) -> tuple[np.ndarray, np.ndarray]:
    from ..collision.geometry import Box

    return triangles(Box((edge, edge, edge)))


def _rgb(rgba, default: tuple[int, int, int]) -> tuple[int, int, int]:
    if rgba is None:
        return default
    return tuple(int(round(255 * min(max(float(v), 0.0), 1.0))) for v in rgba[:3])


def _safe(object_id: str) -> str:
    """An object id as one scene-tree name part (viser's names are paths)."""
    return object_id.replace("/", "_") or "_"
