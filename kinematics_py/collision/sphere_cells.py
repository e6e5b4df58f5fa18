"""Balls containing the pieces of a convex polytope cut by a grid of boxes, exactly (no sampling).

A piece (the polytope intersected with one cell) is the convex hull of its vertices, and every vertex is one of:
a polytope vertex in the cell, a cell corner in the polytope, a polytope edge crossing a cell face, or a cell edge
entering or leaving the polytope. ``grid_pieces`` gathers these candidates over the whole grid at once and gives each
cell the ones on its closed box (a superset of its piece's vertices, all in the piece up to round-off): a ball
containing a cell's candidates contains its piece, since balls are convex.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: Slack [m] of the tests "in the cell" and "in the polytope": candidates a little outside are kept (only larger
#: balls), none is lost to round-off.
SLACK = 1e-9
#: Lattice points per axis of ``union_volume``.
UNION_LATTICE = 14
#: Face planes whose vertices' reach is computed at once (a mesh's hull of 5,000 faces and 2,500 vertices in one
#: product took 110 ms, in blocks of this many 12 ms).
PLANES_AT_ONCE = 256
#: Steps of the centre refinement of ``enclosing_balls``.
BALL_ITERATIONS = 24


@dataclass(frozen=True, eq=False)
class Polytope:
    """A convex polytope in some frame: ``vertices`` (V, 3), ``edges`` (E, 2) vertex index pairs (every edge, maybe
    some diagonals of flat faces), the half-spaces ``normals @ x <= offsets`` (F, 3), (F,) it is the intersection
    of, and its ``volume`` [m^3]."""

    vertices: np.ndarray
    edges: np.ndarray
    normals: np.ndarray
    offsets: np.ndarray
    volume: float

    def __post_init__(self):
        # A plane some vertex lies beyond (a sliver face's normal, off by round-off) would cut the polytope: such
        # planes are left out, which only makes it larger.
        reach = np.concatenate([(self.vertices @ self.normals[k:k + PLANES_AT_ONCE].T).max(axis=0, initial=-np.inf)
                                for k in range(0, len(self.normals), PLANES_AT_ONCE)] or [np.zeros(0)])
        holds = reach <= self.offsets + SLACK
        if not holds.all():
            object.__setattr__(self, "normals", self.normals[holds])
            object.__setattr__(self, "offsets", self.offsets[holds])

    @classmethod
    def hull_of(cls, points: np.ndarray) -> Polytope:
        """The convex hull of points spanning a volume (scipy's qhull)."""
        from scipy.spatial import ConvexHull

        hull = ConvexHull(points)
        used = np.unique(hull.simplices)
        index = np.full(len(points), -1)
        index[used] = np.arange(len(used))
        simplices = index[hull.simplices]
        return cls(points[used], triangle_edges(simplices), hull.equations[:, :3], -hull.equations[:, 3], hull.volume)

    def transformed(self, R: np.ndarray, t: np.ndarray) -> Polytope:
        """The polytope mapped by x -> R x + t (R a rotation)."""
        normals = self.normals @ R.T
        return Polytope(self.vertices @ R.T + t, self.edges, normals, self.offsets + normals @ t, self.volume)

    def depth(self, points: np.ndarray) -> np.ndarray:
        """(N,) how far each point lies inside (negative: outside), the distance to the nearest face plane."""
        return (self.offsets[None] - points @ self.normals.T).min(axis=1)


def union_volume(centers: np.ndarray, radii: np.ndarray) -> float:
    """The volume [m^3] of a union of balls, counted on a regular lattice of UNION_LATTICE^3 points over its box."""
    low, high = (centers - radii[:, None]).min(axis=0), (centers + radii[:, None]).max(axis=0)
    steps = (np.arange(UNION_LATTICE) + 0.5) / UNION_LATTICE
    axes = [low[k] + (high[k] - low[k]) * steps for k in range(3)]
    gaps = [(axes[k][:, None] - centers[None, :, k]) ** 2 for k in range(3)]  # (n, C) per axis
    squared = gaps[0][:, None, None] + gaps[1][None, :, None] + gaps[2][None, None, :]  # (n, n, n, C)
    inside = (squared <= radii ** 2).any(axis=3)
    return float(inside.mean() * np.prod(high - low))


def triangle_edges(triangles: np.ndarray) -> np.ndarray:
    """(E, 2) the distinct edges of triangles (T, 3) (vertex indices)."""
    pairs = np.sort(np.vstack([triangles[:, [0, 1]], triangles[:, [1, 2]], triangles[:, [0, 2]]]), axis=1)
    count = int(pairs.max()) + 1
    keys = np.unique(pairs[:, 0] * count + pairs[:, 1])
    return np.column_stack([keys // count, keys % count])


def grid_pieces(polytope: Polytope, breaks: tuple[np.ndarray, np.ndarray, np.ndarray]) -> list[np.ndarray]:
    """For each non-empty cell of the grid (``breaks[k]``: increasing plane positions along axis k, the outer ones
    included), the candidate vertices (m, 3) of its piece; see the module docstring."""
    V, normals, offsets = polytope.vertices, polytope.normals, polytope.offsets
    candidates = [V]
    nodes = np.stack(np.meshgrid(*breaks, indexing="ij"), axis=-1).reshape(-1, 3)
    candidates.append(nodes[(nodes @ normals.T <= offsets + SLACK).all(axis=1)])
    a, b = V[polytope.edges[:, 0]], V[polytope.edges[:, 1]]
    for k in range(3):
        planes = breaks[k][None, :]
        da, db = a[:, k, None] - planes, b[:, k, None] - planes  # (E, P)
        crossing = (da * db < 0)
        e, p = np.nonzero(crossing)
        t = da[e, p] / (da[e, p] - db[e, p])
        points = a[e] + t[:, None] * (b[e] - a[e])
        points[:, k] = breaks[k][p]
        candidates.append(points)
        i, j = [m for m in range(3) if m != k]
        base = np.zeros((len(breaks[i]), len(breaks[j]), 3))
        base[..., i], base[..., j] = breaks[i][:, None], breaks[j][None, :]
        base = base.reshape(-1, 3)
        room = offsets[None] - base @ normals.T  # (L, F): n.base + s n_k <= offsets along the line
        along = normals[:, k][None]
        with np.errstate(divide="ignore", invalid="ignore"):
            limit = room / along
        low = np.where(along < 0, limit, -np.inf).max(axis=1)
        high = np.where(along > 0, limit, np.inf).min(axis=1)
        blocked = ((along == 0) & (room < -SLACK)).any(axis=1)
        inside = ~blocked & (low <= high + SLACK) & np.isfinite(low) & np.isfinite(high)
        for end in (low, high):
            points = base[inside].copy()
            points[:, k] = end[inside]
            candidates.append(points)
    points = np.vstack(candidates)
    member = [(points[:, k, None] >= breaks[k][None, :-1] - SLACK) & (points[:, k, None] <= breaks[k][None, 1:] + SLACK)
              for k in range(3)]
    cells = member[0][:, :, None, None] & member[1][:, None, :, None] & member[2][:, None, None, :]
    cells = cells.reshape(len(points), -1)
    return [points[cells[:, c]] for c in range(cells.shape[1]) if cells[:, c].any()]


def enclosing_balls(pieces: list[np.ndarray], refine: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """(centres (C, 3), radii (C,)): a ball containing each point set, centred near its smallest enclosing ball's
    centre (the box centre, then ``BALL_ITERATIONS`` steps towards the farthest point with shrinking steps); the
    radius is the exact farthest distance from the centre, so every point is inside whatever the centre."""
    size = max(len(p) for p in pieces)
    padded = np.stack([np.vstack([p, np.repeat(p[:1], size - len(p), axis=0)]) for p in pieces])  # (C, m, 3)
    centers = (padded.min(axis=1) + padded.max(axis=1)) / 2
    rows = np.arange(len(pieces))

    def farthest(centers):
        offsets = padded - centers[:, None]
        squared = np.einsum("cmi,cmi->cm", offsets, offsets)
        far = squared.argmax(axis=1)
        return far, np.sqrt(squared[rows, far])

    far, best_radii = farthest(centers)
    best_centers = centers.copy()
    for step in range(BALL_ITERATIONS if refine else 0):
        centers = centers + (padded[rows, far] - centers) / (step + 3)
        far, radii = farthest(centers)
        better = radii < best_radii
        best_centers[better], best_radii[better] = centers[better], radii[better]
    return best_centers, best_radii
