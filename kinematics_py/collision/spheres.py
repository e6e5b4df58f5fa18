"""Spheres that contain a link's collision geometry, generated from the URDF's shapes (primitives and meshes).

Containment is by construction, not by fitting: every shape is bounded by a convex polytope (a box's own faces,
a cylinder or cone inside a circumscribed 16-gon prism, a sphere inside a circumscribed polyhedron, a mesh inside
its convex hull; a flat mesh inside its bounding box), the shape's bounding box is cut into cubic cells, and every
cell that may meet the polytope is kept (a cell is dropped only when one face plane has the whole cell
beyond it). The kept cells cover the geometry. Spheres are then placed greedily, each centred on the deepest cell
not yet covered (depth: the distance to the nearest dropped cell) and reaching about PROTRUSION beyond that depth;
every cell ends inside a sphere (its farthest corner within the radius), so the spheres cover the geometry, its
inside included (an obstacle inside a link is found, as the exact checker finds it).

Each shape of a link is covered on its own (its spheres as thick as it, not as a union of overlapping shapes); a
shape needing more than MAX_SPHERES_PER_SHAPE spheres is covered again with a larger protrusion. Spheres are cached
per shape set (the ``Placed`` values of a checker's links).
"""
from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from .geometry import Box, Cone, Cylinder, GeometryError, Mesh, Placed, Sphere, convex_hull, local_bounds

#: Cells that cover a shape: CELLS_PER_AXIS along its longest side, but no smaller than MIN_CELL [m].
CELLS_PER_AXIS = 24
MIN_CELL = 0.002
#: Most spheres per shape (beyond it, the shape is covered again with 1.5 times the protrusion).
MAX_SPHERES_PER_SHAPE = 16
#: How far a sphere reaches beyond the geometry [m]: its radius less how deep its centre lies (the distance to the
#: nearest dropped cell).
PROTRUSION = 0.015
#: Side planes of the prism circumscribing a cylinder or cone.
CYLINDER_SIDES = 16
_DIRECTIONS = np.array([(x, y, z) for x in (-1, 0, 1) for y in (-1, 0, 1) for z in (-1, 0, 1)
                        if (x, y, z) != (0, 0, 0)], dtype=float)
#: 26 unit directions (faces, edges and corners of a cube): a sphere lies inside the planes at its radius along them.
SPHERE_NORMALS = _DIRECTIONS / np.linalg.norm(_DIRECTIONS, axis=1, keepdims=True)


class SphereModelError(GeometryError):
    """Collision geometry that spheres cannot be generated for (a shape type without a bounding polytope)."""


@dataclass(frozen=True, eq=False)
class LinkSpheres:
    """Spheres in a link's frame that contain all its collision shapes: ``centers`` (K, 3) [m], ``radii`` (K,) [m]."""

    centers: np.ndarray
    radii: np.ndarray

    def contains(self, points: np.ndarray, tolerance: float = 1e-9) -> np.ndarray:
        """(N,) bool: which points (N, 3) in the link frame lie in at least one of the spheres."""
        gaps = np.linalg.norm(points[:, None, :] - self.centers[None], axis=2) - self.radii[None]
        return (gaps <= tolerance).any(axis=1)


def shape_polytope(placed: Placed) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(normals (F, 3), offsets (F,), corners (V, 3)) in the frame ``placed`` is posed in: the half-spaces
    ``normals @ x <= offsets`` whose intersection contains the shape, and points whose bounding box contains it."""
    shape = placed.shape
    if isinstance(shape, Box):
        half = np.asarray(shape.size) / 2
        normals, offsets = np.vstack([np.eye(3), -np.eye(3)]), np.concatenate([half, half])
    elif isinstance(shape, (Cylinder, Cone)):
        angles = 2 * math.pi * np.arange(CYLINDER_SIDES) / CYLINDER_SIDES
        sides = np.stack([np.cos(angles), np.sin(angles), np.zeros(CYLINDER_SIDES)], axis=1)
        normals = np.vstack([sides, [(0, 0, 1), (0, 0, -1)]])
        offsets = np.concatenate([np.full(CYLINDER_SIDES, shape.radius), np.full(2, shape.length / 2)])
    elif isinstance(shape, Sphere):
        normals, offsets = SPHERE_NORMALS, np.full(len(SPHERE_NORMALS), shape.radius)
    elif isinstance(shape, Mesh):
        normals, offsets = _hull_planes(shape)
    else:
        raise SphereModelError(f"no spheres for a {type(shape).__name__}: link shapes are boxes, spheres, "
                               f"cylinders, cones and meshes")
    center, half = local_bounds(shape)
    corners = center + half * np.array([(x, y, z) for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)])
    R, t = placed.T_frame_shape[:3, :3], placed.T_frame_shape[:3, 3]
    normals_out = normals @ R.T
    return normals_out, offsets + normals_out @ t, corners @ R.T + t


def _hull_planes(mesh: Mesh) -> tuple[np.ndarray, np.ndarray]:
    """The face planes of a mesh's convex hull (its bounding box's for a flat mesh), outward normals."""
    try:
        hull = convex_hull(mesh)
    except GeometryError:
        center, half = local_bounds(mesh)
        return np.vstack([np.eye(3), -np.eye(3)]), np.concatenate([center + half, half - center])
    a, b, c = (hull.vertices[hull.triangles[:, k]] for k in range(3))
    normals = np.cross(b - a, c - a)
    lengths = np.linalg.norm(normals, axis=1)
    keep = lengths > 1e-12
    normals, a = normals[keep] / lengths[keep, None], a[keep]
    inward = np.einsum("ij,ij->i", normals, a - hull.vertices.mean(axis=0)) < 0
    normals[inward] *= -1
    return normals, np.einsum("ij,ij->i", normals, a)


def covering_cells(shapes: Sequence[Placed]) -> tuple[np.ndarray, np.ndarray, float]:
    """(kept (N, 3), dropped (M, 3), edge): centres of the cubic cells, on a grid two cells wider than the shapes'
    bounding box on every side, that may meet one of the shapes' polytopes (their union contains every shape), and
    of the others."""
    polytopes = [shape_polytope(placed) for placed in shapes]
    corners = np.vstack([corners for _, _, corners in polytopes])
    low, high = corners.min(axis=0), corners.max(axis=0)
    edge = max(MIN_CELL, float((high - low).max()) / CELLS_PER_AXIS)
    axes = [low[i] + edge * (np.arange(-2, math.ceil((high[i] - low[i]) / edge - 1e-9) + 2) + 0.5) for i in range(3)]
    centers = np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1).reshape(-1, 3)
    kept = np.zeros(len(centers), dtype=bool)
    for normals, offsets, _ in polytopes:
        reach = edge / 2 * np.abs(normals).sum(axis=1)  # how far a cell's corner reaches along each normal
        kept |= (centers @ normals.T - reach <= offsets + 1e-12).all(axis=1)
    return centers[kept], centers[~kept], edge


def _greedy_spheres(points: np.ndarray, depth: np.ndarray, half_diagonal: float,
                    protrusion: float) -> tuple[np.ndarray, np.ndarray]:
    """(centres, radii): spheres centred on the deepest cell not yet covered, each reaching ``protrusion`` beyond
    its centre's depth, until every cell lies inside one; each radius then shrinks to the farthest corner of the
    cells it was the first to cover."""
    owner = np.full(len(points), -1)
    centers = []
    while (owner < 0).any():
        i = int(np.argmax(np.where(owner < 0, depth, -np.inf)))
        reach = np.linalg.norm(points - points[i], axis=1) + half_diagonal
        owner[(owner < 0) & (reach <= max(depth[i] + protrusion, 2 * half_diagonal))] = len(centers)
        centers.append(points[i])
    centers = np.array(centers)
    radii = np.array([float(np.linalg.norm(points[owner == k] - centers[k], axis=1).max()) + half_diagonal
                      for k in range(len(centers))])
    return centers, radii


def link_spheres(shapes: Sequence[Placed], max_spheres: int = MAX_SPHERES_PER_SHAPE) -> LinkSpheres:
    """Spheres containing ``shapes`` (posed in one link's frame), each shape covered on its own (a sphere about as
    thick as the shape, not as the union of overlapping shapes): see the module docstring."""
    parts = [_shape_spheres(placed, max_spheres) for placed in shapes]
    return LinkSpheres(np.vstack([centers for centers, _ in parts]), np.concatenate([radii for _, radii in parts]))


def _shape_spheres(placed: Placed, max_spheres: int) -> tuple[np.ndarray, np.ndarray]:
    from scipy.spatial import cKDTree

    points, outside, edge = covering_cells([placed])
    half_diagonal = edge * math.sqrt(3) / 2
    depth = cKDTree(outside).query(points)[0]  # distance from each cell to the nearest dropped one
    protrusion = PROTRUSION
    while True:
        centers, radii = _greedy_spheres(points, depth, half_diagonal, protrusion)
        if len(radii) <= max_spheres:
            return centers, radii
        protrusion *= 1.5


@functools.lru_cache(maxsize=16)
def _cached_spheres(items: tuple[tuple[str, tuple[Placed, ...]], ...]) -> Mapping[str, LinkSpheres]:
    return {link: link_spheres(shapes) for link, shapes in items}


def robot_spheres(link_geometry: Mapping[str, Sequence[Placed]]) -> Mapping[str, LinkSpheres]:
    """link -> its spheres, for every link with geometry (``CollisionChecker.link_geometry``); computed once per
    set of shapes (``Placed`` values compare by identity, so a checker's geometry is one cache entry)."""
    return _cached_spheres(tuple((link, tuple(shapes)) for link, shapes in link_geometry.items() if shapes))
