"""Spheres that contain a link's collision geometry, generated from the URDF's shapes (primitives and meshes).

Containment is by construction, not by sampling: a sphere shape is its own sphere; every other shape is bounded by
a convex polytope (a box itself, a cylinder inside a circumscribed FIT_SIDES-gon prism, a cone inside a
circumscribed pyramid, a mesh inside its convex hull; a flat mesh inside its bounding box), in axes of its own (a
mesh's or its hull's principal axes, whichever box is smaller). A grid of equal cells over the polytope's box cuts
it into convex pieces, and each piece gets a ball containing its vertices, found exactly (``sphere_cells``): the
balls contain the shape, its inside included (an obstacle inside a link is found, as the exact checker finds it).
Slabs along a cylinder, cubes of a box's thickness across a plate, follow from the choice of grid: of grids of
about cubic cells, the coarsest first, the one whose balls have the least total volume (a finer grid only when it
saves REFINE_GAIN of it; at most MAX_SPHERES_PER_SHAPE cells).

A link's spheres are its shapes' (each shape covered on its own, its spheres as thick as it), less those whose
piece lies in another sphere of the link (overlapping shapes at a joint); ``LinkSpheres.bound_*`` is one coarser
sphere containing the link's shapes. A fine fit (``fine``: for links whose spheres touch another link's where their
geometry does not, ``sphere_refinement``) compares every grid of at most MAX_SPHERES_PER_SHAPE cells whose counts
follow the shape's extents (slabs along a long link too, not only grids of about cubic cells), and takes a finer one
when it saves FINE_REFINE_GAIN of the excess. Spheres are cached per shape set (the ``Placed`` values of a checker's
links) and fine links.
"""
from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from .geometry import Box, Cone, Cylinder, GeometryError, Mesh, Placed, Sphere, convex_hull, local_bounds
from .sphere_cells import Polytope, enclosing_balls, grid_pieces, triangle_edges, union_volume

#: Most spheres per shape.
MAX_SPHERES_PER_SHAPE = 16
#: A finer grid is taken when its balls reach beyond the shape by less than REFINE_GAIN times the coarser one's
#: (the volume of their union outside the shape's polytope).
REFINE_GAIN = 0.8
#: A fine fit's finer grid is taken when its balls reach beyond the shape by less than this times the coarser one's
#: (0.8 took finer grids for less gain: more spheres, slower checks; docs/benchmarks.md, thirty-second session).
FINE_REFINE_GAIN = 0.7
#: Sides of the prism (pyramid) circumscribing a cylinder (cone) for the fit.
FIT_SIDES = 32
#: A mesh is fitted in its hull's principal axes when their bounding box's volume is below this share of its own.
PRINCIPAL_GAIN = 0.9
#: Grids for a polytope of more vertices are compared on the hull of this many of them (the pieces of the grid
#: chosen are the whole polytope's).
PROBE_VERTICES = 150
#: Relative and absolute growth of every radius [m], against round-off.
RADIUS_SLACK = 1e-9
#: Half thickness [m] given to a flat mesh's bounding box.
FLAT_THICKNESS = 1e-6
#: Side planes of the prism circumscribing a cylinder or cone (``shape_polytope``).
CYLINDER_SIDES = 16
_DIRECTIONS = np.array([(x, y, z) for x in (-1, 0, 1) for y in (-1, 0, 1) for z in (-1, 0, 1)
                        if (x, y, z) != (0, 0, 0)], dtype=float)
#: 26 unit directions (faces, edges and corners of a cube): a sphere lies inside the planes at its radius along them.
SPHERE_NORMALS = _DIRECTIONS / np.linalg.norm(_DIRECTIONS, axis=1, keepdims=True)
_CUBE = np.array([(x, y, z) for x in (-1.0, 1.0) for y in (-1.0, 1.0) for z in (-1.0, 1.0)])


class SphereModelError(GeometryError):
    """Collision geometry that spheres cannot be generated for (a shape type without a bounding polytope)."""


@dataclass(frozen=True, eq=False)
class LinkSpheres:
    """Spheres in a link's frame that contain all its collision shapes: ``centers`` (K, 3) [m], ``radii`` (K,) [m];
    and one sphere containing them all (the shapes, not always every sphere): ``bound_center`` (3,), ``bound_radius``
    (None when not given)."""

    centers: np.ndarray
    radii: np.ndarray
    bound_center: np.ndarray | None = None
    bound_radius: float | None = None

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


def link_spheres(shapes: Sequence[Placed], max_spheres: int = MAX_SPHERES_PER_SHAPE, fine: bool = False) -> LinkSpheres:
    """Spheres containing ``shapes`` (posed in one link's frame), at most ``max_spheres`` per shape, and the link's
    bounding sphere (a ``fine`` fit when asked): see the module docstring."""
    centers, radii, pieces, bounded, bounded_radii = [], [], [], [], []
    for placed in shapes:
        if isinstance(placed.shape, Sphere):
            center = placed.T_frame_shape[:3, 3][None].astype(float)
            centers.append(center), radii.append(np.array([placed.shape.radius * (1 + RADIUS_SLACK)]))
            pieces.append((center, radii[-1][0])), bounded.append(center), bounded_radii.append(radii[-1])
            continue
        polytope, R, t = _fitting_polytope(placed)
        parts = _fitted_pieces(polytope, max_spheres, fine)
        shape_centers, shape_radii = enclosing_balls(parts)
        centers.append(shape_centers @ R.T + t), radii.append(shape_radii * (1 + RADIUS_SLACK) + RADIUS_SLACK)
        pieces += [(part @ R.T + t, 0.0) for part in parts]
        bounded.append(polytope.vertices @ R.T + t), bounded_radii.append(np.zeros(len(polytope.vertices)))
    centers, radii = np.vstack(centers), np.concatenate(radii)
    keep = _needed(centers, radii, pieces)
    bound_center, bound_radius = _bound(np.vstack(bounded), np.concatenate(bounded_radii))
    return LinkSpheres(centers[keep], radii[keep], bound_center, bound_radius)


def _fitting_polytope(placed: Placed) -> tuple[Polytope, np.ndarray, np.ndarray]:
    """(polytope, R, t): a convex polytope containing the shape in the frame its spheres are fitted in (the shape's
    own; a mesh's own or its hull's principal axes, whichever bounding box is smaller); ``R x + t`` maps that frame
    into the link's."""
    shape, T = placed.shape, placed.T_frame_shape
    R, t = T[:3, :3], T[:3, 3]
    if isinstance(shape, Box):
        return Polytope.hull_of(np.asarray(shape.size, dtype=float) / 2 * _CUBE), R, t
    if isinstance(shape, (Cylinder, Cone)):
        angles = 2 * math.pi * (np.arange(FIT_SIDES) + 0.5) / FIT_SIDES
        ring = shape.radius / math.cos(math.pi / FIT_SIDES) * np.stack([np.cos(angles), np.sin(angles)], axis=1)
        base = np.column_stack([ring, np.full(FIT_SIDES, -shape.length / 2)])
        top = base + (0.0, 0.0, shape.length) if isinstance(shape, Cylinder) else np.array([[0, 0, shape.length / 2]])
        return Polytope.hull_of(np.vstack([base, top])), R, t
    if isinstance(shape, Mesh):
        try:
            hull = convex_hull(shape)
        except GeometryError:  # flat: its bounding box, grown a little so that it spans a volume
            center, half = local_bounds(shape)
            polytope = Polytope.hull_of(center + np.maximum(half, FLAT_THICKNESS) * _CUBE)
        else:
            normals, offsets = _hull_planes(shape)
            vertices = np.asarray(hull.vertices, dtype=float)
            a, b, c = (vertices[hull.triangles[:, k]] - vertices.mean(axis=0) for k in range(3))
            volume = abs(float(np.einsum("ij,ij->i", a, np.cross(b, c)).sum())) / 6
            polytope = Polytope(vertices, triangle_edges(hull.triangles), normals, offsets, volume)
        vertices = polytope.vertices
        _, _, principal = np.linalg.svd(vertices - vertices.mean(axis=0), full_matrices=False)
        volume = [float(np.prod(np.ptp(vertices @ A.T, axis=0))) for A in (np.eye(3), principal)]
        A = principal if volume[1] < PRINCIPAL_GAIN * volume[0] else np.eye(3)  # fitted coordinates: A x
        return polytope.transformed(A, np.zeros(3)), R @ A.T, t
    raise SphereModelError(f"no spheres for a {type(shape).__name__}: link shapes are boxes, spheres, "
                           f"cylinders, cones and meshes")


def _grids(extents: np.ndarray, max_spheres: int, fine: bool = False) -> list[tuple[int, int, int]]:
    """Candidate cell counts per axis, fewest cells first: cells about ``extents.max() / j`` long for j = 1, 1.5,
    2, 2.5, ..., each grid no more than ``max_spheres`` cells; for a ``fine`` fit, every grid of no more than
    ``max_spheres`` cells whose counts follow the extents (no axis cut more than a longer one)."""
    if fine:
        shortest_first = np.argsort(extents, kind="stable")
        counts = [(a, b, c) for a in range(1, max_spheres + 1) for b in range(1, max_spheres // a + 1)
                  for c in range(1, max_spheres // (a * b) + 1)]
        return sorted((grid for grid in counts if grid[shortest_first[0]] <= grid[shortest_first[1]]
                       <= grid[shortest_first[2]]), key=lambda grid: (grid[0] * grid[1] * grid[2], grid))
    grids: list[tuple[int, int, int]] = []
    for j in np.arange(1.0, max_spheres + 0.5, 0.5):
        counts = tuple(int(n) for n in np.maximum(1, np.round(extents * j / extents.max())))
        if int(np.prod(counts)) > max_spheres:
            break
        if counts not in grids:
            grids.append(counts)
    return grids


def _fitted_pieces(polytope: Polytope, max_spheres: int, fine: bool = False) -> list[np.ndarray]:
    """The pieces (candidate vertices, see ``sphere_cells``) of the candidate grid (``_grids``) whose balls reach
    least beyond the polytope (their union's volume less the polytope's), a grid of more cells taken only when it
    leaves at most REFINE_GAIN of the coarser one's excess; the search stops at the second grid not taken (a
    ``fine`` fit: FINE_REFINE_GAIN, every grid compared)."""
    gain = FINE_REFINE_GAIN if fine else REFINE_GAIN
    vertices = polytope.vertices
    low, high = vertices.min(axis=0), vertices.max(axis=0)
    probe = polytope
    if len(vertices) > PROBE_VERTICES:  # grids compared on the hull of some of the vertices (the extreme ones too)
        chosen = np.concatenate([np.linspace(0, len(vertices) - 1, PROBE_VERTICES).astype(int),
                                 vertices.argmin(axis=0), vertices.argmax(axis=0)])
        probe = Polytope.hull_of(vertices[np.unique(chosen)])
    best, best_excess, worse = None, math.inf, 0
    for counts in _grids(high - low, max_spheres, fine):
        breaks = tuple(np.linspace(low[k], high[k], counts[k] + 1) for k in range(3))
        excess = union_volume(*enclosing_balls(grid_pieces(probe, breaks), refine=False)) - probe.volume
        if excess < gain * best_excess:
            best, best_excess, worse = breaks, excess, 0
        else:
            worse += 1
            if worse == 2 and not fine:
                break
    return grid_pieces(polytope, best)


def _needed(centers: np.ndarray, radii: np.ndarray, pieces: Sequence[tuple[np.ndarray, float]]) -> np.ndarray:
    """(K,) bool: the spheres to keep, smallest first left out when its piece (the points whose hull it must
    contain, grown by a radius: a sphere shape's centre and radius), and each piece left out before it, lies in one
    kept sphere (a sphere that held a piece left out may itself be left out only if another holds that piece)."""
    keep = np.ones(len(radii), dtype=bool)
    left_out: list[int] = []
    for k in np.argsort(radii):
        others = keep.copy()
        others[k] = False
        if all(_inside_one(pieces[piece], centers[others], radii[others]) for piece in (k, *left_out)):
            keep[k] = False
            left_out.append(int(k))
    return keep


def _inside_one(piece: tuple[np.ndarray, float], centers: np.ndarray, radii: np.ndarray) -> bool:
    """Whether the piece (points grown by a radius) lies in one of the spheres."""
    points, grown = piece
    gaps = np.linalg.norm(points[:, None] - centers[None], axis=2) + grown - radii[None]
    return bool((gaps <= 0).all(axis=0).any())


def _bound(points: np.ndarray, radii: np.ndarray) -> tuple[np.ndarray, float]:
    """(centre, radius) of a sphere containing the balls (points with radii; radius 0: a point)."""
    center = enclosing_balls([points])[0][0]
    return center, float((np.linalg.norm(points - center, axis=1) + radii).max() * (1 + RADIUS_SLACK) + RADIUS_SLACK)


@functools.lru_cache(maxsize=16)
def _cached_spheres(items: tuple[tuple[str, tuple[Placed, ...]], ...],
                    fine_links: frozenset[str]) -> Mapping[str, LinkSpheres]:
    return {link: _cached_link_spheres(shapes, link in fine_links) for link, shapes in items}


@functools.lru_cache(maxsize=16 * 64)
def _cached_link_spheres(shapes: tuple[Placed, ...], fine: bool) -> LinkSpheres:
    """One link's fit, kept so that a robot's fine fit reuses the plain fit of the links it does not refit."""
    return link_spheres(shapes, fine=fine)


def robot_spheres(link_geometry: Mapping[str, Sequence[Placed]],
                  fine_links: frozenset[str] = frozenset()) -> Mapping[str, LinkSpheres]:
    """link -> its spheres, for every link with geometry (``CollisionChecker.link_geometry``), a fine fit for
    ``fine_links``; computed once per set of shapes and fine links (``Placed`` values compare by identity, so a
    checker's geometry is one cache entry)."""
    return _cached_spheres(tuple((link, tuple(shapes)) for link, shapes in link_geometry.items() if shapes),
                           frozenset(fine_links))
