"""Compiled exact tests of pairs of convex shapes (boxes, spheres, cylinders, cones, convex meshes), each grown by a
margin [m] on every side, and of a convex shape or a tree against the leaves of a tree (an octree's boxes, a mesh's
triangles): GJK (Gilbert-Johnson-Keerthi) on the two cores, stopped as soon as its bounds on their distance decide
the pair.

Each iteration holds a point v of the cores' Minkowski difference, so their distance is at most |v|, and the
support point w of that difference along -v, so their distance is at least v.w / |v| (a plane separates them that
far). The pair touches once |v| is within the margins' sum; it is apart once v.w / |v| exceeds the sum by more than
DECIDED_BY. Nothing else is concluded: a pair not decided within MAX_ITERATIONS, whose bounds meet within DECIDED_BY
of the margins' sum, or whose simplex degenerates, is UNDECIDED and left to the backend, whose answer it was before
(``CollisionChecker``). A sphere is its centre grown by its radius: sphere pairs are decided at the first iteration.

In the backend's loop a pair cost 2-5 us of Python and coal; here, well under a microsecond, inside the compiled call
that placed the shapes' pairs.
"""
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from ..compiled import compiled_kernel

#: ``ConvexTable.kind``: a shape the kernels do not test (a plane; a mesh of more than MAX_TREE_TRIANGLES
#: triangles), left to the backend.
UNSUPPORTED = 0
#: A point (a sphere's centre; its radius is in the margin).
POINT = 1
#: A box: ``size`` its half extents.
BOX = 2
#: A cylinder along z, centred: ``size`` (radius, half length, 0).
CYLINDER = 3
#: A cone along z, centred, its apex at +half length: ``size`` (base radius, half length, 0).
CONE = 4
#: A convex hull: its vertices in ``vertices`` (from row ``first``), joined by its edges (``neighbours``).
VERTICES = 5
#: Leaves under a tree of bounds (``bounds_tree.headed_tree``): an octree's voxels as axis-aligned boxes, or a
#: mesh's triangles (its surface, as the backend tests a mesh). Its rows from row ``first`` of ``tree_lower``,
#: ``tree_upper``, ``tree_skip`` and ``tree_leaf``: the first row holds the bounds of them all and its skip the rows
#: in all; a row of skip 1 is a leaf: a box (``tree_leaf`` -1: the row's bounds) or a triangle (its three corners
#: are rows ``tree_leaf`` to ``tree_leaf`` + 2 of ``vertices``, joined as a hull); the others hold the bounds of
#: the rows up to their skip. Tested against a shape of the other kinds, leaf by leaf, as the shape's bounds along
#: the tree's axes reach them (``tree_verdict``); against another tree, each of its leaves that reach the other's
#: bounds so (``trees_verdict``).
TREE = 6
#: ``candidate_verdicts``' answers for a pair of a state.
APART = 0
TOUCHING = 1
UNDECIDED = 2
#: ``candidate_verdicts``' answer: bits set when some verdict is TOUCHING, or UNDECIDED.
ANY_TOUCHING = 1
ANY_UNDECIDED = 2

#: GJK iterations before a pair is left to the backend.
MAX_ITERATIONS = 48
#: A pair whose distance bounds meet within this of the margins' sum [m] is left to the backend.
DECIDED_BY = 1e-9
#: Relative size of a simplex's volume (area) below which it counts as degenerate.
DEGENERATE = 1e-12


class ConvexTable(NamedTuple):
    """Every shape of a scene (rows as ``kernels.ShapeTable``'s) as the convex kernels test it."""

    kind: np.ndarray  # (S,) int64: UNSUPPORTED, POINT, BOX, CYLINDER, CONE, VERTICES or TREE
    size: np.ndarray  # (S, 3) see the kinds
    margin: np.ndarray  # (S,) [m] grown on every side: a sphere's radius, the backend's offset
    first: np.ndarray  # (S,) int64: a VERTICES shape's first row in ``vertices``, a TREE's in ``tree_*``
    vertices: np.ndarray  # (V, 3) the VERTICES shapes' vertices, in their shape frames
    neighbour_first: np.ndarray  # (V + 1,) int64: vertex i's neighbours along its hull's edges are
    neighbours: np.ndarray  # neighbours[neighbour_first[i]:neighbour_first[i + 1]] (rows of ``vertices``)
    tree_lower: np.ndarray  # (R, 3) the TREE shapes' rows' bounds, in their shape frames
    tree_upper: np.ndarray  # (R, 3)
    tree_skip: np.ndarray  # (R,) int64: rows of each row's subtree, itself included
    tree_leaf: np.ndarray  # (R,) int64: a triangle's first corner in ``vertices``, -1 for a box or a node


@compiled_kernel(inline="always")
def _support(shape, hull, dx, dy, dz, start):
    """(x, y, z, vertex): a point of a shape's core (in its frame) farthest along the direction (dx, dy, dz), and for
    a hull the row of that vertex, found by climbing its edges from row ``start`` (a linear function's largest value
    on a convex polytope is at any vertex no neighbour exceeds; a hull against a box: 0.6 us a pair with 96 vertices,
    1.7 with 1536, against 4.8 and 7.6 us in coal; scanning every vertex took 0.6 and 7.8). ``shape``: (kind, size
    0-2, first) (``_shape``), scalars: the kernels' arrays are read outside the iterations (each array reference
    there costs a reference count); ``hull``: (vertices, neighbour_first, neighbours)."""
    kind, s0, s1, s2, _ = shape
    if kind == BOX:
        return s0 if dx >= 0.0 else -s0, s1 if dy >= 0.0 else -s1, s2 if dz >= 0.0 else -s2, start
    if kind in (CYLINDER, CONE):
        across = math.sqrt(dx * dx + dy * dy)
        rim_x, rim_y = 0.0, 0.0
        if across > 0.0:
            rim_x, rim_y = s0 * dx / across, s0 * dy / across
        if kind == CYLINDER:
            return rim_x, rim_y, s1 if dz >= 0.0 else -s1, start
        if s1 * dz >= s0 * across - s1 * dz:  # the apex (0, 0, h), or the base's rim at -h
            return 0.0, 0.0, s1, start
        return rim_x, rim_y, -s1, start
    if kind == VERTICES:
        vertices, neighbour_first, neighbours = hull
        best = start
        along = vertices[best, 0] * dx + vertices[best, 1] * dy + vertices[best, 2] * dz
        climbed = True
        while climbed:
            climbed = False
            for j in range(neighbour_first[best], neighbour_first[best + 1]):
                m = neighbours[j]
                value = vertices[m, 0] * dx + vertices[m, 1] * dy + vertices[m, 2] * dz
                if value > along:
                    best, along, climbed = m, value, True
        return vertices[best, 0], vertices[best, 1], vertices[best, 2], best
    return 0.0, 0.0, 0.0, start


@compiled_kernel(inline="always")
def _difference_support(T, shape_a, shape_b, hull, dx, dy, dz, start_a, start_b):
    """(x, y, z, vertex of a, vertex of b): the point of (core a - core b) farthest along d (in a's frame; b posed in
    it by T, T_a_b's 12 entries row by row), and the hulls' vertices it came from (``_support``)."""
    ax, ay, az, start_a = _support(shape_a, hull, dx, dy, dz, start_a)
    bx, by, bz, start_b = _support(shape_b, hull, -(T[0] * dx + T[4] * dy + T[8] * dz),
                                   -(T[1] * dx + T[5] * dy + T[9] * dz), -(T[2] * dx + T[6] * dy + T[10] * dz),
                                   start_b)
    return (ax - (T[0] * bx + T[1] * by + T[2] * bz + T[3]), ay - (T[4] * bx + T[5] * by + T[6] * bz + T[7]),
            az - (T[8] * bx + T[9] * by + T[10] * bz + T[11]), start_a, start_b)


@compiled_kernel(inline="always")
def _keep(simplex, rows, count):
    """simplex[:count] <- its rows ``rows[:count]`` (sorted first, so that no row is overwritten before it is
    copied)."""
    for k in range(1, count):
        for m in range(k, 0, -1):
            if rows[m] < rows[m - 1]:
                rows[m], rows[m - 1] = rows[m - 1], rows[m]
    for k in range(count):
        if rows[k] != k:
            for m in range(3):
                simplex[k, m] = simplex[rows[k], m]


@compiled_kernel(inline="always")
def _between(simplex, i, j, t):
    """simplex[i] + t (simplex[j] - simplex[i])."""
    return (simplex[i, 0] + t * (simplex[j, 0] - simplex[i, 0]), simplex[i, 1] + t * (simplex[j, 1] - simplex[i, 1]),
            simplex[i, 2] + t * (simplex[j, 2] - simplex[i, 2]))


@compiled_kernel(inline="always")
def _edge_dots(simplex, m, ab, ac):
    """(-ab . p, -ac . p) for the corner p = simplex[m] (``ab``, ``ac``: a triangle's edges, 3-tuples)."""
    return (-(ab[0] * simplex[m, 0] + ab[1] * simplex[m, 1] + ab[2] * simplex[m, 2]),
            -(ac[0] * simplex[m, 0] + ac[1] * simplex[m, 1] + ac[2] * simplex[m, 2]))


@compiled_kernel(inline="always")
def _corner(simplex, m, rows):
    """``_closest_on_triangle``'s answer when the nearest point is the corner simplex[m]."""
    rows[0] = m
    return 1, (simplex[m, 0], simplex[m, 1], simplex[m, 2])


@compiled_kernel(inline="always")
def _closest_on_triangle(simplex, i, j, k, rows):
    """(n, point): the point of triangle (simplex rows i, j, k) nearest the origin, and rows[:n] <- the rows it lies
    on; n = 0 when the triangle is degenerate (its corners in a line)."""
    ab = (simplex[j, 0] - simplex[i, 0], simplex[j, 1] - simplex[i, 1], simplex[j, 2] - simplex[i, 2])
    ac = (simplex[k, 0] - simplex[i, 0], simplex[k, 1] - simplex[i, 1], simplex[k, 2] - simplex[i, 2])
    d1, d2 = _edge_dots(simplex, i, ab, ac)
    if d1 <= 0.0 and d2 <= 0.0:
        return _corner(simplex, i, rows)
    d3, d4 = _edge_dots(simplex, j, ab, ac)
    if d3 >= 0.0 and d4 <= d3:
        return _corner(simplex, j, rows)
    vc = d1 * d4 - d3 * d2
    if vc <= 0.0 and d1 >= 0.0 and d3 <= 0.0:
        rows[0], rows[1] = i, j
        return 2, _between(simplex, i, j, d1 / (d1 - d3))
    d5, d6 = _edge_dots(simplex, k, ab, ac)
    if d6 >= 0.0 and d5 <= d6:
        return _corner(simplex, k, rows)
    vb = d5 * d2 - d1 * d6
    if vb <= 0.0 and d2 >= 0.0 and d6 <= 0.0:
        rows[0], rows[1] = i, k
        return 2, _between(simplex, i, k, d2 / (d2 - d6))
    va = d3 * d6 - d5 * d4
    if va <= 0.0 and d4 - d3 >= 0.0 and d5 - d6 >= 0.0:
        rows[0], rows[1] = j, k
        return 2, _between(simplex, j, k, (d4 - d3) / ((d4 - d3) + (d5 - d6)))
    area = va + vb + vc  # |ab x ac|^2
    if not area > DEGENERATE * (ab[0] * ab[0] + ab[1] * ab[1] + ab[2] * ab[2]) * (ac[0] * ac[0] + ac[1] * ac[1] +
                                                                                 ac[2] * ac[2]):
        return 0, (0.0, 0.0, 0.0)
    tb, tc = vb / area, vc / area
    rows[0], rows[1], rows[2] = i, j, k
    return 3, (simplex[i, 0] + tb * ab[0] + tc * ac[0], simplex[i, 1] + tb * ab[1] + tc * ac[1],
               simplex[i, 2] + tb * ab[2] + tc * ac[2])


@compiled_kernel(inline="always")
def _closest_on_tetrahedron(simplex, rows, best_rows):
    """(n, point): the point of the tetrahedron ``simplex`` nearest the origin, on the faces whose outside holds
    the origin, and the simplex reduced to the rows it lies on; n = 4 when the origin is inside, 0 when the
    tetrahedron is degenerate."""
    best, kept, nearest = np.inf, 4, (0.0, 0.0, 0.0)
    for opposite in range(4):
        i, j, k = (opposite + 1) % 4, (opposite + 2) % 4, (opposite + 3) % 4
        abx, aby, abz = simplex[j, 0] - simplex[i, 0], simplex[j, 1] - simplex[i, 1], simplex[j, 2] - simplex[i, 2]
        acx, acy, acz = simplex[k, 0] - simplex[i, 0], simplex[k, 1] - simplex[i, 1], simplex[k, 2] - simplex[i, 2]
        ox, oy, oz = simplex[opposite, 0] - simplex[i, 0], simplex[opposite, 1] - simplex[i, 1], \
            simplex[opposite, 2] - simplex[i, 2]
        nx, ny, nz = aby * acz - abz * acy, abz * acx - abx * acz, abx * acy - aby * acx
        side_of_opposite = nx * ox + ny * oy + nz * oz
        if not abs(side_of_opposite) > DEGENERATE * math.sqrt(nx * nx + ny * ny + nz * nz) * \
                (abs(ox) + abs(oy) + abs(oz)):
            return 0, nearest
        if -(nx * simplex[i, 0] + ny * simplex[i, 1] + nz * simplex[i, 2]) * side_of_opposite >= 0.0:
            continue  # the origin is on the tetrahedron's side of this face
        n, point = _closest_on_triangle(simplex, i, j, k, rows)
        if n == 0:
            return 0, nearest
        distance = point[0] * point[0] + point[1] * point[1] + point[2] * point[2]
        if distance < best:
            best, kept, nearest = distance, n, point
            for m in range(n):
                best_rows[m] = rows[m]
    if kept < 4:
        _keep(simplex, best_rows, kept)
    return kept, nearest


@compiled_kernel(inline="always")
def _closest_on_simplex(simplex, count, rows, best_rows):
    """(n, point): the point of the simplex (its first ``count`` rows, 1-4) nearest the origin, and the simplex
    reduced to the n rows that point lies on; n = 4 when the origin is inside the tetrahedron, 0 when the simplex is
    degenerate."""
    if count == 1:
        return 1, (simplex[0, 0], simplex[0, 1], simplex[0, 2])
    if count == 2:
        abx, aby, abz = simplex[1, 0] - simplex[0, 0], simplex[1, 1] - simplex[0, 1], simplex[1, 2] - simplex[0, 2]
        length = abx * abx + aby * aby + abz * abz
        t = -(abx * simplex[0, 0] + aby * simplex[0, 1] + abz * simplex[0, 2])
        if t <= 0.0:
            return 1, (simplex[0, 0], simplex[0, 1], simplex[0, 2])
        if t >= length:
            for m in range(3):
                simplex[0, m] = simplex[1, m]
            return 1, (simplex[0, 0], simplex[0, 1], simplex[0, 2])
        return 2, _between(simplex, 0, 1, t / length)
    if count == 3:
        n, point = _closest_on_triangle(simplex, 0, 1, 2, rows)
        _keep(simplex, rows, n)
        return n, point
    return _closest_on_tetrahedron(simplex, rows, best_rows)


@compiled_kernel(inline="always")
def pair_verdict(T, shape_a, shape_b, reach, hull, simplex, rows, best_rows):
    """TOUCHING, APART or UNDECIDED for two shapes (``_shape``; b posed by T, T_a_b's 12 entries row by row, in a's
    frame) grown by ``reach`` [m] in all; ``hull``: see ``_support``. Scratch: ``simplex`` (4, 3) float, ``rows``,
    ``best_rows`` (3,) int."""
    dx, dy, dz = T[3], T[7], T[11]  # towards b: where the difference comes nearest the origin
    if dx == 0.0 and dy == 0.0 and dz == 0.0:
        dx = 1.0
    vx, vy, vz, start_a, start_b = _difference_support(T, shape_a, shape_b, hull, dx, dy, dz, shape_a[4],
                                                       shape_b[4])
    simplex[0, 0], simplex[0, 1], simplex[0, 2] = vx, vy, vz
    count = 1
    for _ in range(MAX_ITERATIONS):
        vv = vx * vx + vy * vy + vz * vz
        if vv <= reach * reach:
            return TOUCHING
        wx, wy, wz, start_a, start_b = _difference_support(T, shape_a, shape_b, hull, -vx, -vy, -vz, start_a,
                                                           start_b)
        vw = vx * wx + vy * wy + vz * wz
        if vw > 0.0 and vw * vw > (reach + DECIDED_BY) ** 2 * vv:
            return APART
        if vv - vw <= 2.0 * DECIDED_BY * math.sqrt(vv):  # |v| - v.w / |v|: the bounds met, undecided
            return UNDECIDED
        simplex[count, 0], simplex[count, 1], simplex[count, 2] = wx, wy, wz
        count, (vx, vy, vz) = _closest_on_simplex(simplex, count + 1, rows, best_rows)
        if count == 4:
            return TOUCHING
        if count == 0:
            return UNDECIDED
    return UNDECIDED


@compiled_kernel
def tree_verdict(T, shape_a, reach, hull, first, tree_lower, tree_upper, tree_skip, tree_leaf, simplex, rows,
                 best_rows):
    """``pair_verdict`` of shape a (not a TREE) and a TREE whose rows start at ``first``: TOUCHING as soon as a leaf
    touches, else UNDECIDED if one was, else APART. The leaves tested are those the bounds of a (grown by ``reach``)
    along the tree's axes reach, found by walking the tree."""
    lower, upper = np.empty(3), np.empty(3)
    for k in range(3):  # b's axis k in a's frame is T's column k; a's extent along it, in b's frame
        dx, dy, dz = T[k], T[4 + k], T[8 + k]
        shift = dx * T[3] + dy * T[7] + dz * T[11]
        x, y, z, _ = _support(shape_a, hull, dx, dy, dz, shape_a[4])
        upper[k] = dx * x + dy * y + dz * z - shift + reach
        x, y, z, _ = _support(shape_a, hull, -dx, -dy, -dz, shape_a[4])
        lower[k] = dx * x + dy * y + dz * z - shift - reach
    verdict, end = APART, first + tree_skip[first]
    row = _next_leaf(lower, upper, tree_lower, tree_upper, tree_skip, first + 1, end)
    while row < end:
        cx, cy, cz, leaf = _leaf(tree_lower, tree_upper, tree_leaf, row)  # (b's leaf, posed in a's frame)
        T_leaf = (T[0], T[1], T[2], T[0] * cx + T[1] * cy + T[2] * cz + T[3],
                  T[4], T[5], T[6], T[4] * cx + T[5] * cy + T[6] * cz + T[7],
                  T[8], T[9], T[10], T[8] * cx + T[9] * cy + T[10] * cz + T[11])
        found = pair_verdict(T_leaf, shape_a, leaf, reach, hull, simplex, rows, best_rows)
        if found == TOUCHING:
            return TOUCHING
        verdict = max(verdict, found)  # (UNDECIDED once one was)
        row = _next_leaf(lower, upper, tree_lower, tree_upper, tree_skip, row + 1, end)
    return verdict


@compiled_kernel
def trees_verdict(T, reach, hull, first_a, first_b, tree_lower, tree_upper, tree_skip, tree_leaf, simplex, rows,
                  best_rows):
    """``pair_verdict`` of two TREEs whose rows start at ``first_a`` and ``first_b`` (b posed by T in a's frame):
    each leaf of a that reaches b's bounds (grown by ``reach``) against b's tree (``tree_verdict``)."""
    lower, upper = np.empty(3), np.empty(3)
    for i in range(3):  # b's bounds (its first row) in a's frame
        centre, half = T[4 * i + 3], reach
        for j in range(3):
            centre += T[4 * i + j] * (tree_lower[first_b, j] + tree_upper[first_b, j]) / 2
            half += abs(T[4 * i + j]) * (tree_upper[first_b, j] - tree_lower[first_b, j]) / 2
        lower[i], upper[i] = centre - half, centre + half
    verdict, end = APART, first_a + tree_skip[first_a]
    row = _next_leaf(lower, upper, tree_lower, tree_upper, tree_skip, first_a + 1, end)
    while row < end:
        cx, cy, cz, leaf = _leaf(tree_lower, tree_upper, tree_leaf, row)  # (a's leaf: b posed in its frame)
        T_leaf = (T[0], T[1], T[2], T[3] - cx, T[4], T[5], T[6], T[7] - cy, T[8], T[9], T[10], T[11] - cz)
        found = tree_verdict(T_leaf, leaf, reach, hull, first_b, tree_lower, tree_upper, tree_skip, tree_leaf,
                             simplex, rows, best_rows)
        if found == TOUCHING:
            return TOUCHING
        verdict = max(verdict, found)  # (UNDECIDED once one was)
        row = _next_leaf(lower, upper, tree_lower, tree_upper, tree_skip, row + 1, end)
    return verdict


@compiled_kernel(inline="always")
def _next_leaf(lower, upper, tree_lower, tree_upper, tree_skip, row, end):
    """The first leaf row from ``row`` (before ``end``) whose bounds the bounds (``lower``, ``upper``) reach, walking
    a tree: a row they miss is skipped with its subtree; ``end`` when there is none."""
    while row < end:
        if (lower[0] > tree_upper[row, 0] or upper[0] < tree_lower[row, 0] or lower[1] > tree_upper[row, 1]
                or upper[1] < tree_lower[row, 1] or lower[2] > tree_upper[row, 2] or upper[2] < tree_lower[row, 2]):
            row += tree_skip[row]
        elif tree_skip[row] == 1:
            return row
        else:
            row += 1
    return end


@compiled_kernel(inline="always")
def _leaf(tree_lower, tree_upper, tree_leaf, row):
    """(centre x, y, z, shape (``_shape``'s form) about that centre) of a tree's leaf row: a triangle (its corners
    in the tree's frame: centre 0) or a box (its bounds, about their centre)."""
    if tree_leaf[row] >= 0:
        return 0.0, 0.0, 0.0, (np.int64(VERTICES), 0.0, 0.0, 0.0, tree_leaf[row])
    cx, cy, cz = ((tree_lower[row, 0] + tree_upper[row, 0]) / 2, (tree_lower[row, 1] + tree_upper[row, 1]) / 2,
                  (tree_lower[row, 2] + tree_upper[row, 2]) / 2)
    return cx, cy, cz, (np.int64(BOX), tree_upper[row, 0] - cx, tree_upper[row, 1] - cy, tree_upper[row, 2] - cz,
                        np.int64(0))


@compiled_kernel(inline="always")
def _shape(table, s):
    """Shape s of ``table`` as scalars: (kind, size 0-2, its first vertex)."""
    return table.kind[s], table.size[s, 0], table.size[s, 1], table.size[s, 2], table.first[s]


@compiled_kernel
def candidate_verdicts(transforms, candidates, pairs, table, stop_at_first, verdicts):
    """verdicts[n, p] <- ``pair_verdict`` of each candidate pair p of state n whose shapes are both tested here
    (``transforms``: (N, P, 3, 4) T_a_b; ``candidates`` (N, P) bool, ``place_and_cull``'s); UNDECIDED for candidates
    with a shape not tested here, APART for the rest. With ``stop_at_first``, a state's pairs after its first
    TOUCHING one are not tested (APART). ``table``: ``ConvexTable`` as a tuple. Returns ANY_TOUCHING | ANY_UNDECIDED
    as some verdicts are (0: every pair is apart)."""
    table = ConvexTable(*table)
    hull = (table.vertices, table.neighbour_first, table.neighbours)
    simplex, rows, best_rows = np.empty((4, 3)), np.empty(3, dtype=np.int64), np.empty(3, dtype=np.int64)
    found = 0
    for n in range(candidates.shape[0]):
        touched = False
        for p in range(candidates.shape[1]):
            verdicts[n, p] = APART
            if not candidates[n, p] or touched:
                continue
            a, b = pairs[p, 0], pairs[p, 1]
            if UNSUPPORTED in (table.kind[a], table.kind[b]):
                verdicts[n, p] = UNDECIDED
                found |= ANY_UNDECIDED
                continue
            T = (transforms[n, p, 0, 0], transforms[n, p, 0, 1], transforms[n, p, 0, 2], transforms[n, p, 0, 3],
                 transforms[n, p, 1, 0], transforms[n, p, 1, 1], transforms[n, p, 1, 2], transforms[n, p, 1, 3],
                 transforms[n, p, 2, 0], transforms[n, p, 2, 1], transforms[n, p, 2, 2], transforms[n, p, 2, 3])
            reach = table.margin[a] + table.margin[b]
            if table.kind[a] == table.kind[b] == TREE:  # (an attached mesh, a link's mesh as triangles, and a tree)
                verdict = trees_verdict(T, reach, hull, table.first[a], table.first[b], table.tree_lower,
                                        table.tree_upper, table.tree_skip, table.tree_leaf, simplex, rows, best_rows)
            elif table.kind[b] == TREE:  # (an octree or a world mesh: always a pair's second shape)
                verdict = tree_verdict(T, _shape(table, a), reach, hull, table.first[b], table.tree_lower,
                                       table.tree_upper, table.tree_skip, table.tree_leaf, simplex, rows, best_rows)
            elif table.kind[a] == TREE:  # (an attached mesh, a link's mesh as triangles): a posed in b's frame
                T_b_a = (T[0], T[4], T[8], -(T[0] * T[3] + T[4] * T[7] + T[8] * T[11]),
                         T[1], T[5], T[9], -(T[1] * T[3] + T[5] * T[7] + T[9] * T[11]),
                         T[2], T[6], T[10], -(T[2] * T[3] + T[6] * T[7] + T[10] * T[11]))
                verdict = tree_verdict(T_b_a, _shape(table, b), reach, hull, table.first[a], table.tree_lower,
                                       table.tree_upper, table.tree_skip, table.tree_leaf, simplex, rows, best_rows)
            else:
                verdict = pair_verdict(T, _shape(table, a), _shape(table, b), reach, hull, simplex, rows, best_rows)
            verdicts[n, p] = verdict
            found |= ANY_TOUCHING if verdict == TOUCHING else (ANY_UNDECIDED if verdict == UNDECIDED else 0)
            touched = stop_at_first and verdict == TOUCHING
    return found
