"""The robot in the viewer: one frame per link (posed by forward kinematics), its visual meshes and, as a toggle,
its collision geometry; links (and attached objects) named in a collision drawn red."""
from __future__ import annotations

from collections.abc import Iterable, Mapping

import numpy as np

from ..robot_setup import RobotSetup
from .scene_nodes import NodeGroup, add_display_mesh, recoloured, wxyz_position
from .shapes import LINK_COLOR, display_mesh, link_meshes

#: Root of the robot's scene nodes.
ROBOT_ROOT = "/robot"


class RobotLayer:
    """Draws ``setup``'s robot on a viser ``scene``; ``show(link_poses)`` moves it, ``highlight`` colours links.
    ``base_dir``: the URDF's folder, for mesh paths relative to it."""

    def __init__(self, scene, setup: RobotSetup, *, base_dir=None, show_collision: bool = False):
        self._scene = scene
        self.setup = setup
        self._nodes = NodeGroup()
        checker = setup.collision.checker if setup.collision is not None else None
        collision_geometry = checker.link_geometry if checker is not None else {}
        meshes, self.note = link_meshes(setup.model.urdf_xml, collision_geometry, base_dir=base_dir)
        if checker is None and setup.collision is not None and setup.collision.problem:
            self.note = " ".join(filter(None, [self.note, f"collision geometry: {setup.collision.problem}"]))
        notes = sorted({mesh.note for items in meshes.values() for mesh in items if mesh.note})
        self.note = " ".join(filter(None, [self.note, *notes]))
        self._frames = {link: self._nodes.add(scene.add_frame(f"{ROBOT_ROOT}/{link}", show_axes=False))
                        for link in setup.model.link_names}
        #: link -> (mesh handle, its own colour) of every visual mesh
        self._visuals: dict[str, list[tuple[object, tuple[int, int, int]]]] = {}
        for link, items in meshes.items():
            self._visuals[link] = [(self._nodes.add(add_display_mesh(scene, f"{ROBOT_ROOT}/{link}/visual_{k}", mesh)),
                                    mesh.color) for k, mesh in enumerate(items)]
        self._collision = [self._nodes.add(add_display_mesh(
            scene, f"{ROBOT_ROOT}/{link}/collision_{k}", display_mesh(placed, LINK_COLOR), wireframe=True,
            color=(250, 160, 40), visible=show_collision))
            for link, shapes in collision_geometry.items() for k, placed in enumerate(shapes)]
        self.highlighted: frozenset[str] = frozenset()
        self._shown: dict[str, np.ndarray] = {}

    @property
    def links(self) -> tuple[str, ...]:
        return tuple(self._frames)

    def show(self, link_poses: Mapping[str, np.ndarray]) -> None:
        """Move every link frame to its pose in the model frame (``RobotModel.link_poses``)."""
        for link, frame in self._frames.items():
            T = link_poses.get(link)
            if T is not None and not np.array_equal(T, self._shown.get(link)):  # a message only for links that moved
                frame.wxyz, frame.position = wxyz_position(T)
                self._shown[link] = T

    def show_collision_geometry(self, visible: bool) -> None:
        for handle in self._collision:
            handle.visible = visible

    def highlight(self, links: Iterable[str]) -> None:
        """Draw ``links`` red (the others in their own colours)."""
        self.highlighted = recoloured(self._visuals, self.highlighted, links)

    def remove(self) -> None:
        self._nodes.clear()
        self._visuals, self._collision, self._frames = {}, [], {}
