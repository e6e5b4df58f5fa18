"""The scene file of a reachability map: world objects as a YAML list, or MoveIt's .scene text.

Each object has an ``id``, ``shapes`` and optionally a ``pose`` and a ``frame_id`` (a robot link; default:
the planning frame, the robot's root link). Each shape is one of ``box: [x, y, z]`` (full edge lengths),
``sphere: radius``, ``cylinder: [radius, length]``, ``cone: [radius, length]`` (along z) or ``mesh: file``
(relative to the scene file's folder), with an optional ``pose`` relative to the object. A pose is
``{position: [x, y, z], orientation: [x, y, z, w]}``, lengths in [m]. Example::

    - id: table
      pose: {position: [0.6, 0.0, -0.05]}
      shapes:
        - box: [0.8, 1.2, 0.1]
    - id: pillar
      shapes:
        - {cylinder: [0.05, 1.0], pose: {position: [-0.4, 0.3, 0.5]}}

MoveIt's .scene text (the files RViz's MotionPlanning panel exports: a scene name, then objects starting
``* id``, each with its pose (when the file has them), its shapes (box, sphere, cylinder, cone, mesh), each
with a pose and a colour, and its subframes (ignored); a final ``.``) is read too: a text whose last line is
``.`` is taken for one.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import yaml

from ..collision.geometry import Box, Cone, Cylinder, GeometryError, Mesh, Sphere, load_mesh
from ..collision.scene import SceneError
from ..geometry.poses import Pose

SHAPE_KEYS = ("box", "sphere", "cylinder", "cone", "mesh")
#: Numbers after a shape's name in MoveIt's .scene text (a mesh: vertex and triangle counts, then those).
MOVEIT_SHAPE_VALUES = {"box": 3, "sphere": 1, "cylinder": 2, "cone": 2}
OBJECT_KEYS = ("id", "shapes", "pose", "frame_id")


def load_scene_objects(text: str, scene_dir: str | None = None) -> list[tuple[str, list, Pose, str]]:
    """(id, [(shape, Pose)], pose, frame_id) of every object of a scene file's text; SceneError names the
    first problem (an unknown key, a bad shape or pose)."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if lines and lines[-1] == ".":
        return moveit_scene_objects(lines)
    try:
        objects = yaml.safe_load(text) if text.strip() else []
    except yaml.YAMLError as error:
        raise SceneError(f"scene file: not YAML: {error}") from None
    if not isinstance(objects, list):
        raise SceneError(f"scene file: a YAML list of objects with keys {list(OBJECT_KEYS)}; got a "
                         f"{type(objects).__name__}")
    return [_scene_object(item, k, scene_dir) for k, item in enumerate(objects)]


def _scene_object(item: Any, k: int, scene_dir: str | None) -> tuple[str, list, Pose, str]:
    if not isinstance(item, dict) or not isinstance(item.get("id"), str) or not item["id"]:
        raise SceneError(f"scene file: object {k} needs an 'id' (text) and 'shapes'; keys are {list(OBJECT_KEYS)}")
    context = f"scene file: object {item['id']!r}"
    unknown = sorted(set(item) - set(OBJECT_KEYS))
    if unknown:
        raise SceneError(f"{context}: unknown keys {unknown}; keys are {list(OBJECT_KEYS)}")
    shapes = item.get("shapes")
    if not isinstance(shapes, list) or not shapes:
        raise SceneError(f"{context}: 'shapes' must be a non-empty list")
    placed = [_shape(shape, f"{context}: shape {n}", scene_dir) for n, shape in enumerate(shapes)]
    return item["id"], placed, pose_from_yaml(item.get("pose"), context), str(item.get("frame_id", ""))


def _shape(item: Any, context: str, scene_dir: str | None) -> tuple[Any, Pose]:
    kinds = [key for key in SHAPE_KEYS if isinstance(item, dict) and key in item]
    if len(kinds) != 1 or set(item) - {kinds[0], "pose"}:
        raise SceneError(f"{context}: one of {list(SHAPE_KEYS)} (and an optional 'pose'); got {item!r}")
    kind, value = kinds[0], item[kinds[0]]
    try:
        if kind == "mesh":
            shape = load_mesh(Path(scene_dir or ".") / str(value))
        elif kind == "sphere":
            shape = Sphere(value)
        elif kind == "box":
            shape = Box(value)
        else:
            radius, length = value
            shape = (Cylinder if kind == "cylinder" else Cone)(radius, length)
    except (GeometryError, TypeError, ValueError) as error:
        raise SceneError(f"{context}: bad {kind} {value!r}: {error}") from None
    return shape, pose_from_yaml(item.get("pose"), context)


def pose_from_yaml(item: Any, context: str) -> Pose:
    """A pose ``{position: [x, y, z], orientation: [x, y, z, w]}`` (either may be left out); SceneError if not."""
    if item is None:
        return Pose()
    if not isinstance(item, dict) or set(item) - {"position", "orientation"}:
        raise SceneError(f"{context}: a pose is {{position: [x, y, z], orientation: [x, y, z, w]}}; got {item!r}")
    try:
        position = tuple(float(v) for v in item.get("position", (0.0, 0.0, 0.0)))
        orientation = tuple(float(v) for v in item.get("orientation", (0.0, 0.0, 0.0, 1.0)))
    except (TypeError, ValueError):
        raise SceneError(f"{context}: pose values must be numbers; got {item!r}") from None
    if len(position) != 3 or len(orientation) != 4:
        raise SceneError(f"{context}: a pose needs 3 position and 4 orientation values; got {item!r}")
    return Pose(position, orientation)


def moveit_scene_objects(lines: list[str]) -> list[tuple[str, list, Pose, str]]:
    """The objects of MoveIt's .scene text (its non-empty lines, stripped); see the module docstring."""
    starts = [k for k, line in enumerate(lines) if line.startswith("*")]
    # MoveIt's own test: in files with object poses, the line after the first '*' holds 3 numbers.
    with_poses = bool(starts) and starts[0] + 1 < len(lines) and " " in lines[starts[0] + 1]
    objects = []
    for start, end in zip(starts, starts[1:] + [len(lines) - 1]):
        object_id = lines[start][1:].strip()
        tokens = iter(" ".join(lines[start + 1:end]).split())
        context = f"scene file: object {object_id!r}"
        try:
            pose = _moveit_pose(tokens) if with_poses else Pose()
            shapes = [_moveit_shape(tokens) for _ in range(int(next(tokens)))]
        except (StopIteration, ValueError, TypeError, GeometryError) as error:
            raise SceneError(f"{context}: not MoveIt's .scene format ({error or 'too few values'}); shapes are "
                             f"{[*MOVEIT_SHAPE_VALUES, 'mesh']}") from None
        objects.append((object_id, shapes, pose, ""))
    return objects


def _moveit_shape(tokens) -> tuple[Any, Pose]:
    kind = next(tokens)
    if kind == "mesh":
        vertex_count, triangle_count = int(next(tokens)), int(next(tokens))
        vertices = np.reshape(_numbers(tokens, 3 * vertex_count), (-1, 3))
        triangles = np.reshape(_numbers(tokens, 3 * triangle_count), (-1, 3)).astype(np.int64)
        shape = Mesh(vertices, triangles, "scene file")
    elif kind in MOVEIT_SHAPE_VALUES:
        values = _numbers(tokens, MOVEIT_SHAPE_VALUES[kind])
        shape = Box(values) if kind == "box" else Sphere(values[0]) if kind == "sphere" else \
            (Cylinder if kind == "cylinder" else Cone)(*values)
    else:
        raise SceneError(f"unknown shape {kind!r}")
    pose = _moveit_pose(tokens)
    _numbers(tokens, 4)  # its colour (r, g, b, a): not needed here
    return shape, pose


def _moveit_pose(tokens) -> Pose:
    values = _numbers(tokens, 7)
    return Pose(tuple(values[:3]), tuple(values[3:]))


def _numbers(tokens, count: int) -> list[float]:
    return [float(next(tokens)) for _ in range(count)]
