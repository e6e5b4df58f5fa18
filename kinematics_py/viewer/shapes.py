"""Shapes as triangle meshes for display: the robot's links (URDF visuals, else their collision geometry), scene
objects, and the colours they are drawn in.

Every shape becomes ``(vertices (n, 3) [m], faces (m, 3))`` in its own frame; a mesh of more than
MAX_DISPLAY_TRIANGLES triangles is drawn as its convex hull (``DisplayMesh.note`` says so). Octrees (octomap,
point clouds) are not meshes: the world layer draws their voxels as instanced cubes.
"""
from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from ..collision.geometry import (
    Box,
    Cone,
    Cylinder,
    GeometryError,
    Mesh,
    Placed,
    Plane,
    Sphere,
    convex_hull,
    robot_link_shapes,
)
from ..model.safe_xml import XmlSafetyError, parse_xml

#: Most triangles one shape is drawn with; larger meshes are drawn as their convex hull.
MAX_DISPLAY_TRIANGLES = 200_000
#: Half the edge [m] of the square drawn for an (infinite) plane.
PLANE_HALF_EDGE = 2.0
#: RGB colours (0-255).
LINK_COLOR = (120, 150, 200)
COLLIDING_COLOR = (230, 20, 20)
OBJECT_COLOR = (90, 170, 90)
ATTACHED_COLOR = (170, 110, 200)


@dataclass(frozen=True, eq=False)
class DisplayMesh:
    """One shape to draw: triangles in the frame ``T_frame_shape`` places in its link's or object's frame."""

    vertices: np.ndarray
    faces: np.ndarray
    T_frame_shape: np.ndarray
    color: tuple[int, int, int]
    #: What was changed for display ("" when nothing was).
    note: str = ""


def triangles(shape) -> tuple[np.ndarray, np.ndarray]:
    """(vertices, faces) of a Box, Sphere, Cylinder, Cone, Mesh or Plane, in the shape's frame."""
    import trimesh

    if isinstance(shape, Box):
        mesh = trimesh.creation.box(extents=shape.size)
    elif isinstance(shape, Sphere):
        mesh = trimesh.creation.icosphere(subdivisions=2, radius=shape.radius)
    elif isinstance(shape, Cylinder):
        mesh = trimesh.creation.cylinder(radius=shape.radius, height=shape.length, sections=32)
    elif isinstance(shape, Cone):
        mesh = trimesh.creation.cone(radius=shape.radius, height=shape.length, sections=32)
        mesh.apply_translation((0.0, 0.0, -shape.length / 2.0))  # centred, apex at +length/2
    elif isinstance(shape, Mesh):
        return np.asarray(shape.vertices, dtype=np.float32), np.asarray(shape.triangles, dtype=np.uint32)
    elif isinstance(shape, Plane):
        return _plane_square(shape)
    else:
        raise GeometryError(f"cannot draw a {type(shape).__name__}")
    return np.asarray(mesh.vertices, dtype=np.float32), np.asarray(mesh.faces, dtype=np.uint32)


def _plane_square(plane: Plane) -> tuple[np.ndarray, np.ndarray]:
    """A square of the plane ``a x + b y + c z + d = 0`` around its point nearest the origin."""
    normal = np.asarray(plane.coefficients[:3], dtype=float)
    length = np.linalg.norm(normal)
    normal, offset = normal / length, plane.coefficients[3] / length
    u = np.cross(normal, (1.0, 0.0, 0.0) if abs(normal[0]) < 0.9 else (0.0, 1.0, 0.0))
    u /= np.linalg.norm(u)
    v = np.cross(normal, u)
    centre = -offset * normal
    corners = [centre + PLANE_HALF_EDGE * (su * u + sv * v) for su, sv in ((-1, -1), (1, -1), (1, 1), (-1, 1))]
    return np.asarray(corners, dtype=np.float32), np.array([[0, 1, 2], [0, 2, 3], [0, 2, 1], [0, 3, 2]],
                                                           dtype=np.uint32)


def display_mesh(placed: Placed, color: tuple[int, int, int]) -> DisplayMesh:
    """``placed`` as a DisplayMesh; meshes over MAX_DISPLAY_TRIANGLES as their convex hull."""
    shape, note = placed.shape, ""
    if isinstance(shape, Mesh) and len(shape.triangles) > MAX_DISPLAY_TRIANGLES:
        try:
            hull = convex_hull(shape)
            note = f"{len(shape.triangles)} triangles drawn as their convex hull ({len(hull.triangles)})"
            shape = hull
        except GeometryError:  # flat: drawn as it is
            pass
    vertices, faces = triangles(shape)
    return DisplayMesh(vertices, faces, np.asarray(placed.T_frame_shape, dtype=float), color, note)


def link_meshes(urdf_xml: str, collision_geometry: Mapping[str, tuple[Placed, ...]], *,
                base_dir: str | os.PathLike | None = None) -> tuple[dict[str, list[DisplayMesh]], str]:
    """(link -> the meshes that draw it, a note): each link's ``<visual>`` shapes in their material colours;
    links without visuals (or a URDF whose visuals cannot be read: the note says why) drawn by their collision
    geometry."""
    note = ""
    try:
        visuals = robot_link_shapes(urdf_xml, "visual", base_dir=base_dir)
        colors = visual_colors(urdf_xml)
    except GeometryError as error:
        visuals, colors, note = {}, {}, f"visual geometry not shown ({error}); links drawn by their collision shapes"
    meshes = {link: [display_mesh(placed, color) for placed, color in zip(shapes, colors.get(link, ()))]
              for link, shapes in visuals.items()}
    for link, shapes in collision_geometry.items():
        if link not in meshes:
            meshes[link] = [display_mesh(placed, LINK_COLOR) for placed in shapes]
    return meshes, note


def visual_colors(urdf_xml: str) -> dict[str, list[tuple[int, int, int]]]:
    """link -> the colour of each of its ``<visual>`` elements: its material's rgba (inline, or a named
    material of the robot), else LINK_COLOR."""
    try:
        root = parse_xml(urdf_xml)
    except XmlSafetyError as error:
        raise GeometryError(f"invalid robot description: {error}") from None
    named = {material.get("name", ""): _rgb(material) for material in root.findall("material")}
    colors = {}
    for link in root.findall("link"):
        entries = []
        for visual in link.findall("visual"):
            material = visual.find("material")
            color = None if material is None else (_rgb(material) or named.get(material.get("name", "")))
            entries.append(color or LINK_COLOR)
        colors[link.get("name", "")] = entries
    return colors


def _rgb(material) -> tuple[int, int, int] | None:
    element = material.find("color")
    if element is None:
        return None
    try:
        values = [float(v) for v in element.get("rgba", "").split()]
    except ValueError:
        return None
    if len(values) != 4 or not all(np.isfinite(values)):
        return None
    return tuple(int(round(255 * min(max(v, 0.0), 1.0))) for v in values[:3])
