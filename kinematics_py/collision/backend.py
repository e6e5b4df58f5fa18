"""The narrow phase: exact collision and contact tests of two posed shapes, with coal (hpp-fcl's successor).

A backend turns a ``Shape`` into its own geometry once (``geometry``), then tests pairs of them given
``T_a_b`` (3x4 or 4x4), body b's shape pose in body a's shape frame. Another library fits behind the
same three methods (``bench/collision.py`` wraps python-fcl this way).
"""
from __future__ import annotations

import numpy as np

from .geometry import Mesh, Plane, Shape
from .octree import Octree


class CoalBackend:
    """Narrow phase with coal. ``T_a_b`` (3x4 or 4x4) is body b's shape pose in body a's shape frame."""

    name = "coal"

    def __init__(self):
        import coal

        self._coal = coal
        self._identity = coal.Transform3s()
        self._request = coal.CollisionRequest()

    def geometry(self, shape: Shape, as_convex: bool):
        """coal's geometry of a shape; a mesh as a convex polytope (``as_convex``) or a triangle BVH."""
        coal = self._coal
        if isinstance(shape, Mesh):
            points = coal.StdVec_Vec3s()
            points.extend(list(np.asarray(shape.vertices, dtype=float)))
            if as_convex:
                triangles = coal.StdVec_Triangle()
                triangles.extend([coal.Triangle(int(a), int(b), int(c)) for a, b, c in shape.triangles])
                return coal.Convex(points, triangles)
            # Oriented boxes: the same exact triangle tests as OBBRSS (whose overlap test is the OBB's), and
            # the tree builds in about half the time (a 200k-triangle mesh: ~0.5 s instead of ~1 s).
            model = coal.BVHModelOBB()
            model.beginModel(len(shape.triangles), len(shape.vertices))
            model.addVertices(np.asarray(shape.vertices, dtype=float))
            model.addTriangles(np.asarray(shape.triangles, dtype=np.int64))
            model.endModel()
            return model
        if isinstance(shape, Octree):
            return coal.makeOctree(shape.centers, shape.resolution)
        if isinstance(shape, Plane):
            a, b, c, d = shape.coefficients
            return coal.Plane(np.array([a, b, c]), -d)
        kind = type(shape).__name__
        if kind == "Box":
            return coal.Box(*shape.size)
        if kind == "Sphere":
            return coal.Sphere(shape.radius)
        return getattr(coal, kind)(shape.radius, shape.length)  # Cylinder, Cone

    def offset(self, geometry, radius: float):
        """A copy of ``geometry`` grown by ``radius`` [m] on every side, exactly: every point within ``radius`` of
        it (coal's swept-sphere radius; exact against primitives, planes and convex shapes, unsupported against
        triangle meshes and octrees)."""
        grown = geometry.clone()
        grown.setSweptSphereRadius(float(radius))
        return grown

    def collide(self, geometry_a, geometry_b, T_a_b: np.ndarray) -> bool:
        result = self._coal.CollisionResult()
        return self._coal.collide(geometry_a, self._identity, geometry_b,
                                  self._coal.Transform3s(T_a_b[:3, :3], T_a_b[:3, 3]), self._request, result) > 0

    def contacts(self, geometry_a, geometry_b, T_a_b: np.ndarray, max_contacts: int):
        """[(position, normal from a to b, depth)] in a's frame; empty when apart."""
        coal = self._coal
        request = coal.CollisionRequest(coal.CollisionRequestFlag.CONTACT, max_contacts)
        result = coal.CollisionResult()
        coal.collide(geometry_a, self._identity, geometry_b, coal.Transform3s(T_a_b[:3, :3], T_a_b[:3, 3]),
                     request, result)
        return [(np.array(c.pos), np.array(c.normal), max(0.0, -float(c.penetration_depth)))
                for c in result.getContacts()]
