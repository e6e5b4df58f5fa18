"""Collision shapes, and a robot's collision geometry from the ``<collision>`` elements of its URDF.

Shapes are plain frozen values in [m], each in its own frame: a box, cylinder and cone are centred on
the origin (cylinder and cone along z, the cone's apex at +length/2), a mesh has its vertices in that
frame, and a plane is the infinite sheet ``a x + b y + c z + d = 0`` (as shape_msgs/Plane; like MoveIt's
FCL backend, a body collides with it when it crosses the sheet). A ``Placed`` shape carries its pose
``T_frame_shape`` in a link's or an object's frame.

Meshes load with trimesh (STL, OBJ, and DAE through pycollada). ``package://pkg/...`` is resolved, in
order, against explicit ``package_paths``, ``AMENT_PREFIX_PATH`` (``<prefix>/share/<pkg>``),
``ROS_PACKAGE_PATH`` (``<root>/<pkg>``, or the root itself when it is named ``pkg``), and the
``share`` folders of this Python environment, which is where example-robot-data installs
(``site-packages/cmeel.prefix/share/example-robot-data/robots/...``).
"""
from __future__ import annotations

import functools
import io
import math
import os
import stat
import sys
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote, urlparse

import numpy as np

from ..errors import KinematicsError
from ..geometry.transforms import transform_from_xyz_rpy
from ..model.safe_xml import XmlSafetyError, parse_xml

#: Bounds of the world [m]: every position coordinate (object and shape poses, mesh vertices, a plane's offset)
#: lies within +-MAX_COORDINATE and every size (box edges, radii, lengths) is at most MAX_SIZE. Finite but absurd
#: values (a box at z = 1e308, a size of 1e300) are refused with GeometryError or SceneError naming the value.
MAX_COORDINATE = 1e4
MAX_SIZE = 1e4
#: Largest mesh file read [bytes] (100 MiB); larger files are refused as unreadable.
MAX_MESH_FILE_BYTES = 100 * 2**20
#: Never read below these (resolved) folders, whatever a mesh URI names.
FORBIDDEN_MESH_FOLDERS = (Path("/proc"), Path("/sys"), Path("/dev"))


class GeometryError(KinematicsError, ValueError):
    """A shape with invalid dimensions, or collision geometry that cannot be built."""


class MeshLoadError(GeometryError):
    """A mesh file that cannot be found or read; the message names the file and where it was looked for."""


def _positive(value, what: str) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise GeometryError(f"{what} must be a number [m]; got {value!r}") from None
    if not (math.isfinite(number) and number > 0.0):
        raise GeometryError(f"{what} must be finite and > 0 [m]; got {value!r}")
    if number > MAX_SIZE:
        raise GeometryError(f"{what} must be at most MAX_SIZE = {MAX_SIZE:g} m; got {value!r}")
    return number


def coordinate_problem(values, what: str) -> str | None:
    """Why coordinates [m] (any array shape) lie outside +-MAX_COORDINATE, naming the largest; None if inside."""
    values = np.asarray(values, dtype=float)
    if values.size == 0:
        return None
    largest = float(np.abs(values).max())
    if largest <= MAX_COORDINATE:
        return None
    return f"{what} must lie within +-MAX_COORDINATE = {MAX_COORDINATE:g} m; got a coordinate of magnitude {largest:g}"


@dataclass(frozen=True)
class Box:
    """Full edge lengths (x, y, z) [m], centred on the origin."""

    size: tuple[float, float, float]

    def __post_init__(self):
        try:
            values = tuple(self.size)
        except TypeError:
            raise GeometryError(f"box size must be 3 lengths (x, y, z) [m]; got {self.size!r}") from None
        if len(values) != 3:
            raise GeometryError(f"box size must be 3 lengths (x, y, z) [m]; got {self.size!r}")
        object.__setattr__(self, "size", tuple(_positive(v, "box size") for v in values))


@dataclass(frozen=True)
class Sphere:
    radius: float

    def __post_init__(self):
        object.__setattr__(self, "radius", _positive(self.radius, "sphere radius"))


@dataclass(frozen=True)
class Cylinder:
    """Along z, centred on the origin."""

    radius: float
    length: float

    def __post_init__(self):
        object.__setattr__(self, "radius", _positive(self.radius, "cylinder radius"))
        object.__setattr__(self, "length", _positive(self.length, "cylinder length"))


@dataclass(frozen=True)
class Cone:
    """Along z, centred on its bounding box: base at -length/2, apex at +length/2."""

    radius: float
    length: float

    def __post_init__(self):
        object.__setattr__(self, "radius", _positive(self.radius, "cone radius"))
        object.__setattr__(self, "length", _positive(self.length, "cone length"))


@dataclass(frozen=True, eq=False)
class Mesh:
    """Triangles: ``vertices`` (n, 3) [m] and ``triangles`` (m, 3) vertex indices; both read-only."""

    vertices: np.ndarray
    triangles: np.ndarray
    source: str = ""

    def __post_init__(self):
        where = f" ({self.source})" if self.source else ""
        try:
            vertices = np.array(self.vertices, dtype=float)
            triangles = np.array(self.triangles, dtype=np.int64)
        except (TypeError, ValueError):
            raise GeometryError(f"mesh{where}: vertices must be (n, 3) numbers and triangles (m, 3) "
                                f"integer indices") from None
        if vertices.ndim != 2 or vertices.shape[1] != 3 or len(vertices) < 3:
            raise GeometryError(f"mesh{where}: needs at least 3 vertices of shape (n, 3); got shape "
                                f"{vertices.shape}")
        if triangles.ndim != 2 or triangles.shape[1] != 3 or len(triangles) == 0:
            raise GeometryError(f"mesh{where}: needs at least one triangle of 3 vertex indices; got shape "
                                f"{triangles.shape}")
        if not np.isfinite(vertices).all():
            raise GeometryError(f"mesh{where}: vertices must be finite")
        problem = coordinate_problem(vertices, f"mesh{where}: vertices")
        if problem is not None:
            raise GeometryError(problem)
        if triangles.min() < 0 or triangles.max() >= len(vertices):
            raise GeometryError(f"mesh{where}: triangle vertex indices must be within [0, {len(vertices) - 1}]; "
                                f"got [{triangles.min()}, {triangles.max()}]")
        vertices.setflags(write=False)
        triangles.setflags(write=False)
        object.__setattr__(self, "vertices", vertices)
        object.__setattr__(self, "triangles", triangles)


@dataclass(frozen=True)
class Plane:
    """The sheet ``a x + b y + c z + d = 0``, stored with a unit normal (a, b, c)."""

    coefficients: tuple[float, float, float, float]

    def __post_init__(self):
        try:
            a, b, c, d = (float(v) for v in self.coefficients)
        except (TypeError, ValueError):
            raise GeometryError(f"plane coefficients must be 4 numbers (a, b, c, d); got "
                                f"{self.coefficients!r}") from None
        norm = math.hypot(a, b, c)  # no overflow for huge finite coefficients
        if not (math.isfinite(norm) and math.isfinite(d) and norm > 1e-12):
            raise GeometryError(f"plane coefficients must be finite with a non-zero normal (a, b, c); got "
                                f"{self.coefficients!r}")
        if abs(d / norm) > MAX_COORDINATE:
            raise GeometryError(f"plane offset d / |(a, b, c)| must lie within +-MAX_COORDINATE = "
                                f"{MAX_COORDINATE:g} m; got {d / norm:g} from {self.coefficients!r}")
        object.__setattr__(self, "coefficients", (a / norm, b / norm, c / norm, d / norm))


Shape = Box | Sphere | Cylinder | Cone | Mesh | Plane
SHAPE_TYPES = (Box, Sphere, Cylinder, Cone, Mesh, Plane)
#: A mesh whose vertices spread less than this fraction of their largest extent off a plane is flat (no hull).
FLAT_MESH_TOLERANCE = 1e-9


@dataclass(frozen=True, eq=False)
class Placed:
    """A shape at pose ``T_frame_shape`` (4x4) in a link's or an object's frame."""

    shape: Shape
    T_frame_shape: np.ndarray = field(default_factory=lambda: np.eye(4))


#: shape_msgs/SolidPrimitive type codes.
SOLID_PRIMITIVE_BOX, SOLID_PRIMITIVE_SPHERE, SOLID_PRIMITIVE_CYLINDER, SOLID_PRIMITIVE_CONE = 1, 2, 3, 4


def solid_primitive(primitive_type: int, dimensions: Sequence[float]) -> Shape:
    """The shape of a shape_msgs/SolidPrimitive: BOX (x, y, z), SPHERE (radius), CYLINDER and CONE
    (height, radius). GeometryError names a bad type or dimension."""
    layouts = {SOLID_PRIMITIVE_BOX: ("BOX", 3), SOLID_PRIMITIVE_SPHERE: ("SPHERE", 1),
               SOLID_PRIMITIVE_CYLINDER: ("CYLINDER", 2), SOLID_PRIMITIVE_CONE: ("CONE", 2)}
    if primitive_type not in layouts:
        raise GeometryError(f"unsupported SolidPrimitive type {primitive_type!r}; supported are "
                            f"{ {code: name for code, (name, _) in layouts.items()} }")
    name, count = layouts[primitive_type]
    values = list(dimensions)
    if len(values) < count:
        raise GeometryError(f"a {name} primitive needs {count} dimension(s); got {values}")
    if primitive_type == SOLID_PRIMITIVE_BOX:
        return Box(tuple(values[:3]))
    if primitive_type == SOLID_PRIMITIVE_SPHERE:
        return Sphere(values[0])
    if primitive_type == SOLID_PRIMITIVE_CYLINDER:
        return Cylinder(radius=values[1], length=values[0])
    return Cone(radius=values[1], length=values[0])


def scaled_and_padded(shape: Shape, scale: float = 1.0, padding: float = 0.0) -> Shape:
    """The shape grown as MoveIt's ``scaleAndPadd``: dimensions times ``scale``, plus ``padding`` [m] on
    every side; mesh vertices move away from the vertex centroid. Planes are unchanged."""
    if scale == 1.0 and padding == 0.0 or isinstance(shape, Plane):
        return shape
    if isinstance(shape, Box):
        return Box(tuple(s * scale + 2 * padding for s in shape.size))
    if isinstance(shape, Sphere):
        return Sphere(shape.radius * scale + padding)
    if isinstance(shape, (Cylinder, Cone)):
        return type(shape)(shape.radius * scale + padding, shape.length * scale + 2 * padding)
    center = shape.vertices.mean(axis=0)
    offsets = shape.vertices - center
    norms = np.linalg.norm(offsets, axis=1, keepdims=True)
    grown = center + offsets * scale + offsets / np.maximum(norms, 1e-12) * padding
    return Mesh(grown, shape.triangles, shape.source)


def local_bounds(shape: Shape) -> tuple[np.ndarray, np.ndarray] | None:
    """(centre, half extents) of the shape's axis-aligned box in its own frame (a shape's own ``local_bounds()``
    for shapes of other modules); None for a plane."""
    if isinstance(shape, Box):
        return np.zeros(3), np.asarray(shape.size) / 2
    if isinstance(shape, Sphere):
        return np.zeros(3), np.full(3, shape.radius)
    if isinstance(shape, (Cylinder, Cone)):
        return np.zeros(3), np.array([shape.radius, shape.radius, shape.length / 2])
    if isinstance(shape, Mesh):
        low, high = shape.vertices.min(axis=0), shape.vertices.max(axis=0)
        return (low + high) / 2, (high - low) / 2
    bounds = getattr(shape, "local_bounds", None)  # shapes of other modules (collision.octree.Octree)
    return None if bounds is None else bounds()


def convex_hull(mesh: Mesh) -> Mesh:
    """The convex hull of a mesh's vertices; GeometryError if they span no volume (a flat mesh). Kept per mesh
    (meshes are read-only): a link's hull is asked for again at every padding (e.g. the proofs of
    ``planning.motion_bound``, 4-7 ms a Panda link)."""
    hull = _HULLS.get(mesh)
    if hull is None:
        try:
            hull = _convex_hull(mesh)
        except GeometryError as error:
            hull = error
        _HULLS[mesh] = hull
    if isinstance(hull, GeometryError):
        raise GeometryError(str(hull))
    return hull


def _convex_hull(mesh: Mesh) -> Mesh:
    from scipy.spatial import ConvexHull

    vertices = np.asarray(mesh.vertices, dtype=float)
    spread = np.linalg.svd(vertices - vertices.mean(axis=0), compute_uv=False) if len(vertices) >= 4 else [0.0]
    if len(spread) < 3 or not spread[2] > FLAT_MESH_TOLERANCE * spread[0]:
        raise GeometryError(f"no convex hull for mesh {mesh.source or '(inline)'}: its vertices span no volume")
    try:
        hull = ConvexHull(vertices)
    except Exception as error:  # scipy's qhull raises its own error types
        raise GeometryError(f"no convex hull for mesh {mesh.source or '(inline)'}: {error}") from None
    kept = np.unique(hull.simplices)
    triangles = np.searchsorted(kept, hull.simplices)
    corners = vertices[kept][triangles]
    normals = np.cross(corners[:, 1] - corners[:, 0], corners[:, 2] - corners[:, 0])
    inward = np.einsum("ij,ij->i", normals, hull.equations[:, :3]) < 0  # qhull's facet normals point outwards
    triangles[inward] = triangles[inward][:, ::-1]
    return Mesh(vertices[kept], triangles, mesh.source)


#: Each mesh's convex hull, or why it has none (``convex_hull``).
_HULLS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


# ---------------------------------------------------------------------------------------------- files
def package_roots(package: str, package_paths: Mapping[str, str | os.PathLike] | None = None) -> list[Path]:
    """Candidate folders of ROS package ``package``, in search order (see the module docstring)."""
    candidates = []
    if package_paths and package in package_paths:
        candidates.append(Path(package_paths[package]))
    for prefix in filter(None, os.environ.get("AMENT_PREFIX_PATH", "").split(os.pathsep)):
        candidates.append(Path(prefix) / "share" / package)
    for root in filter(None, os.environ.get("ROS_PACKAGE_PATH", "").split(os.pathsep)):
        candidates += [Path(root) / package] + ([Path(root)] if Path(root).name == package else [])
    for share in _python_share_folders():
        candidates.append(share / package)
    return candidates


@functools.lru_cache(maxsize=1)
def _python_share_folders() -> tuple[Path, ...]:
    """``share`` folders of this environment: sys.prefix and every ``cmeel.prefix`` next to sys.path."""
    folders = [Path(sys.prefix) / "share"]
    for entry in sys.path:
        folders.append(Path(entry or ".") / "cmeel.prefix" / "share")
    return tuple(dict.fromkeys(folder for folder in folders if folder.is_dir()))


def _unreadable(uri: str, package_paths=None) -> MeshLoadError:
    """The one answer for every mesh file that cannot be used, whether it exists or not: it echoes the URI as
    given, never the resolved path, so the answers reveal nothing about the file system. For ``package://``
    it lists the package folders searched (the same for every path in the package)."""
    where = ""
    if urlparse(uri).scheme == "package":
        package = urlparse(uri).netloc
        looked = [str(root) for root in package_roots(package, package_paths)] or [
            "(no search paths: set AMENT_PREFIX_PATH or ROS_PACKAGE_PATH, or pass package_paths)"]
        where = f"; looked in package {package!r} at {looked}"
    return MeshLoadError(f"cannot read mesh {uri!r}: not a readable mesh file (a regular STL, OBJ or DAE file of at "
                         f"most {MAX_MESH_FILE_BYTES // 2**20} MiB; package:// paths stay inside their package, "
                         f"/proc, /sys and /dev are never read){where}")


def resolve_uri(uri: str, *, base_dir: str | os.PathLike | None = None,
                package_paths: Mapping[str, str | os.PathLike] | None = None) -> Path:
    """The file a mesh URI names, symlinks resolved: ``package://pkg/path`` (inside the package's folder: a path
    with ``..`` that leaves it is refused), ``file:///abs/path``, or a plain path (relative to ``base_dir``, the
    URDF's folder, when given). Only regular files of at most MAX_MESH_FILE_BYTES outside /proc, /sys and /dev
    are given; MeshLoadError otherwise, the same for a file that exists and one that does not."""
    parsed = urlparse(uri)
    if parsed.scheme == "package":
        package, relative = parsed.netloc, os.path.normpath(unquote(parsed.path).lstrip("/"))
        if relative in (".", "..") or relative.startswith(("../", "/")) or not package:
            raise _unreadable(uri, package_paths)
        for root in package_roots(package, package_paths):
            path = _usable_file(root / relative)
            if path is not None:
                return path
        raise _unreadable(uri, package_paths)
    if parsed.scheme == "file":
        path = Path(unquote(parsed.path))
    elif parsed.scheme in ("", ) or len(parsed.scheme) == 1:  # a plain path (or a Windows drive letter)
        path = Path(uri)
        if not path.is_absolute() and base_dir is not None:
            path = Path(base_dir) / path
    else:
        raise MeshLoadError(f"cannot resolve {uri!r}: unsupported URI scheme {parsed.scheme!r} "
                            f"(use package://, file:// or a path)")
    usable = _usable_file(path)
    if usable is None:
        raise _unreadable(uri)
    return usable


def _usable_file(path: Path) -> Path | None:
    """``path`` with its symlinks resolved if it is a regular file we may read (see ``resolve_uri``), else None."""
    try:
        resolved = path.resolve(strict=True)
        status = resolved.stat()
    except (OSError, RuntimeError, ValueError):  # missing, no permission, a symlink loop, a NUL byte
        return None
    if any(resolved.is_relative_to(folder) for folder in FORBIDDEN_MESH_FOLDERS):
        return None
    if not stat.S_ISREG(status.st_mode) or status.st_size > MAX_MESH_FILE_BYTES:
        return None
    return resolved


def load_mesh(uri: str | os.PathLike, scale: Sequence[float] = (1.0, 1.0, 1.0), *,
              base_dir: str | os.PathLike | None = None,
              package_paths: Mapping[str, str | os.PathLike] | None = None) -> Mesh:
    """A mesh file (STL, OBJ, DAE, ...) as a Mesh, its vertices multiplied by ``scale`` per axis.

    The file is resolved and checked by ``resolve_uri``, then read without following a swapped-in FIFO or
    device; every failure (also a file that is no mesh) is the one MeshLoadError of ``resolve_uri``. Files are
    read once per process (cached by path, modification time and scale).
    """
    uri = os.fspath(uri)
    path = resolve_uri(uri, base_dir=base_dir, package_paths=package_paths)
    try:
        factors = tuple(float(s) for s in scale)
    except (TypeError, ValueError):
        raise MeshLoadError(f"mesh {uri!r}: scale must be 3 numbers; got {scale!r}") from None
    if len(factors) != 3 or not all(math.isfinite(s) and s != 0.0 for s in factors):
        raise MeshLoadError(f"mesh {uri!r}: scale must be 3 finite non-zero numbers; got {scale!r}")
    try:
        return _load_mesh_file(str(path), path.stat().st_mtime_ns, factors)
    except (OSError, MeshLoadError):
        raise _unreadable(uri, package_paths) from None


@functools.lru_cache(maxsize=256)
def _load_mesh_file(path: str, _mtime_ns: int, scale: tuple[float, float, float]) -> Mesh:
    """The mesh in the regular file ``path`` (read whole, at most MAX_MESH_FILE_BYTES); MeshLoadError if unusable.

    Failures raise rather than return, so the cache keeps successes only (a file fixed later is read again)."""
    import trimesh

    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        descriptor = os.open(path, flags)
    except OSError:
        raise MeshLoadError(path) from None
    with os.fdopen(descriptor, "rb") as file:
        status = os.fstat(file.fileno())  # the file opened, not the one checked before: it may have been swapped
        if not stat.S_ISREG(status.st_mode) or status.st_size > MAX_MESH_FILE_BYTES:
            raise MeshLoadError(path)
        data = file.read(MAX_MESH_FILE_BYTES + 1)
    if len(data) > MAX_MESH_FILE_BYTES:
        raise MeshLoadError(path)
    try:
        loaded = trimesh.load(io.BytesIO(data), file_type=Path(path).suffix.lstrip(".").lower(), force="mesh")
    except Exception:  # trimesh and its format plug-ins raise assorted types
        raise MeshLoadError(path) from None
    if not isinstance(loaded, trimesh.Trimesh) or len(loaded.faces) == 0:
        raise MeshLoadError(path)
    return Mesh(np.asarray(loaded.vertices) * np.asarray(scale), np.asarray(loaded.faces), path)


# ---------------------------------------------------------------------------------------------- URDF
def robot_collision_geometry(urdf_xml: str, *, base_dir: str | os.PathLike | None = None,
                             package_paths: Mapping[str, str | os.PathLike] | None = None,
                             max_mesh_triangles: int | None = None) -> dict[str, tuple[Placed, ...]]:
    """link -> its collision shapes (``Placed`` in the link frame), for every link with a ``<collision>``.

    GeometryError (or MeshLoadError) names the link and what is wrong, also a link whose meshes hold more than
    ``max_mesh_triangles`` triangles together.
    """
    return robot_link_shapes(urdf_xml, "collision", base_dir=base_dir, package_paths=package_paths,
                             max_mesh_triangles=max_mesh_triangles)


def robot_link_shapes(urdf_xml: str, element: str, *, base_dir: str | os.PathLike | None = None,
                      package_paths: Mapping[str, str | os.PathLike] | None = None,
                      max_mesh_triangles: int | None = None) -> dict[str, tuple[Placed, ...]]:
    """link -> the shapes of its ``<collision>`` or ``<visual>`` elements (``element``), in the link frame and
    in the URDF's order (see ``robot_collision_geometry``)."""
    try:
        root = parse_xml(urdf_xml)
    except XmlSafetyError as error:
        raise GeometryError(f"invalid robot description: {error}") from None
    geometry = {}
    for link in root.findall("link"):
        name = link.get("name", "")
        placed = tuple(_placed_element(item, name, base_dir, package_paths) for item in link.findall(element))
        problem = triangle_count_problem([item.shape for item in placed], max_mesh_triangles, f"link {name!r}")
        if problem:
            raise GeometryError(problem)
        if placed:
            geometry[name] = placed
    return geometry


def triangle_count_problem(shapes: Sequence[object], max_mesh_triangles: int | None, what: str) -> str | None:
    """Why the meshes among ``shapes`` hold too many triangles together (more than ``max_mesh_triangles``, the
    node parameter of that name), or None. ``shapes`` may hold shape_msgs/Mesh-like values (``triangles``)."""
    if max_mesh_triangles is None:
        return None
    count = sum(len(shape.triangles) for shape in shapes if hasattr(shape, "triangles"))
    if count <= max_mesh_triangles:
        return None
    return f"{what}: its meshes have {count} triangles, more than max_mesh_triangles = {max_mesh_triangles}"


def _placed_element(element, link: str, base_dir, package_paths) -> Placed:
    origin = element.find("origin")
    try:
        xyz = _floats(origin.get("xyz", "0 0 0"), 3) if origin is not None else (0.0, 0.0, 0.0)
        rpy = _floats(origin.get("rpy", "0 0 0"), 3) if origin is not None else (0.0, 0.0, 0.0)
    except ValueError as error:
        raise GeometryError(f"link {link!r}: <{element.tag}><origin> {error}") from None
    geometry = element.find("geometry")
    shapes = list(geometry) if geometry is not None else []
    if len(shapes) != 1:
        raise GeometryError(f"link {link!r}: a <{element.tag}> needs exactly one shape in <geometry>; got "
                            f"{[s.tag for s in shapes]}")
    (shape_element,) = shapes
    try:
        shape = _shape(shape_element, base_dir, package_paths)
    except (GeometryError, ValueError) as error:
        raise type(error)(f"link {link!r}: {error}") from None
    return Placed(shape, transform_from_xyz_rpy(xyz, rpy))


def _shape(element, base_dir, package_paths) -> Shape:
    tag = element.tag
    if tag == "box":
        return Box(_floats(element.get("size"), 3, "box size"))
    if tag == "sphere":
        return Sphere(_floats(element.get("radius"), 1, "sphere radius")[0])
    if tag == "cylinder":
        return Cylinder(_floats(element.get("radius"), 1, "cylinder radius")[0],
                        _floats(element.get("length"), 1, "cylinder length")[0])
    if tag == "mesh":
        filename = element.get("filename")
        if not filename:
            raise GeometryError("<mesh> lacks its filename")
        scale = _floats(element.get("scale", "1 1 1"), 3, "mesh scale")
        return load_mesh(filename, scale, base_dir=base_dir, package_paths=package_paths)
    raise GeometryError(f"unsupported collision shape <{tag}>; supported are <box>, <cylinder>, <sphere>, <mesh>")


def _floats(text: str | None, count: int, what: str = "values") -> tuple[float, ...]:
    try:
        values = tuple(float(v) for v in (text or "").split())
    except ValueError:
        raise GeometryError(f"{what} must be {count} number(s); got {text!r}") from None
    if len(values) != count or not all(math.isfinite(v) for v in values):
        raise GeometryError(f"{what} must be {count} finite number(s); got {text!r}")
    return values
