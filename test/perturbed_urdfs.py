"""URDFs with their joints changed: calibration-like offsets, degenerate geometry, absurd and non-finite numbers.

``perturbed_urdf(urdf, changes)`` applies exact changes (``JointChange`` per joint name): offsets added to the
joint origins' xyz [m] and rpy [rad], axes and limits replaced, or any attribute written as raw text (e.g. "nan").
``random_changes(urdf, rng, kind)`` draws the changes of one ``KINDS`` entry for some of the URDF's movable joints,
as the property tests and ``bench/fuzz_urdf_perturbations.py`` use them. Numbers are written with ``repr`` (every
digit kept). Only ``<joint>`` elements change; links, geometry and everything else stay as they were.
"""
from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

MOVABLE_TYPES = ("revolute", "continuous", "prismatic")


@dataclass(frozen=True)
class JointChange:
    """What to change in one joint: offsets added to its origin, replacements for its axis and limits, and raw
    attribute texts ("origin.xyz", "origin.rpy", "axis.xyz", "limit.lower", "limit.upper": written last)."""

    xyz: tuple[float, float, float] = (0.0, 0.0, 0.0)
    rpy: tuple[float, float, float] = (0.0, 0.0, 0.0)
    axis: tuple[float, float, float] | None = None
    lower: float | None = None
    upper: float | None = None
    text: Mapping[str, str] = field(default_factory=dict)


def perturbed_urdf(urdf: str, changes: Mapping[str, JointChange]) -> str:
    """``urdf`` with ``changes`` (joint name -> JointChange) applied; KeyError names a joint that is not there."""
    root = ET.fromstring(urdf)
    joints = {joint.get("name"): joint for joint in root.iter("joint")}
    for name, change in changes.items():
        if name not in joints:
            raise KeyError(f"no joint {name!r} in the URDF (joints: {sorted(joints)})")
        _apply(joints[name], change)
    return ET.tostring(root, encoding="unicode")


def _apply(joint: ET.Element, change: JointChange) -> None:
    origin = _child(joint, "origin")
    for attribute, delta in (("xyz", change.xyz), ("rpy", change.rpy)):
        if any(delta):
            values = _floats(origin.get(attribute, "0 0 0"))
            origin.set(attribute, _text(v + d for v, d in zip(values, delta)))
    if change.axis is not None:
        _child(joint, "axis").set("xyz", _text(change.axis))
    for attribute, value in (("lower", change.lower), ("upper", change.upper)):
        if value is not None:
            _limit(joint).set(attribute, repr(float(value)))
    for path, text in change.text.items():
        element, attribute = path.split(".")
        (_limit(joint) if element == "limit" else _child(joint, element)).set(attribute, text)


def _child(joint: ET.Element, tag: str) -> ET.Element:
    element = joint.find(tag)
    return ET.SubElement(joint, tag) if element is None else element


def _limit(joint: ET.Element) -> ET.Element:
    limit = joint.find("limit")
    if limit is None:
        limit = ET.SubElement(joint, "limit", effort="1", velocity="1")
    return limit


def _floats(text: str) -> list[float]:
    values = [float(v) for v in text.split()]
    return values if len(values) == 3 else [0.0, 0.0, 0.0]


def _text(values) -> str:
    return " ".join(repr(float(v)) for v in values)


def movable_joints(urdf: str) -> list[str]:
    """Names of the URDF's revolute, continuous and prismatic joints, in file order."""
    return [joint.get("name") for joint in ET.fromstring(urdf).iter("joint") if joint.get("type") in MOVABLE_TYPES]


def _axis_of(urdf: str, name: str) -> np.ndarray:
    for joint in ET.fromstring(urdf).iter("joint"):
        if joint.get("name") == name:
            axis = joint.find("axis")
            values = np.array(_floats(axis.get("xyz", "1 0 0")) if axis is not None else [1.0, 0.0, 0.0])
            norm = np.linalg.norm(values)
            return values / norm if np.isfinite(norm) and norm > 0.0 else np.array([1.0, 0.0, 0.0])
    raise KeyError(name)


def _tilted(axis: np.ndarray, angle: float, rng: np.random.Generator) -> tuple[float, float, float]:
    """``axis`` turned by ``angle`` [rad] about a random direction perpendicular to it."""
    normal = np.cross(axis, rng.normal(size=3))
    normal /= np.linalg.norm(normal)
    return tuple(math.cos(angle) * axis + math.sin(angle) * normal)


def _log_uniform(rng: np.random.Generator, low: float, high: float) -> float:
    return float(10.0 ** rng.uniform(math.log10(low), math.log10(high)))


def _signed(rng: np.random.Generator, size: float, count: int = 3) -> tuple[float, ...]:
    return tuple(float(size * v) for v in rng.uniform(-1.0, 1.0, count))  # rng.uniform(-size, size) overflows


def _calibration(urdf, name, rng):
    """Offsets of a calibration: up to a few mm and mrad on origins, axes turned by up to a few mrad."""
    size, angle = _log_uniform(rng, 1e-7, 5e-3), _log_uniform(rng, 1e-7, 5e-3)
    return JointChange(xyz=_signed(rng, size), rpy=_signed(rng, angle),
                       axis=_tilted(_axis_of(urdf, name), _log_uniform(rng, 1e-8, 5e-3), rng)
                       if rng.random() < 0.5 else None)


def _near_degenerate(urdf, name, rng):
    """Round-off sized offsets and tilts: axes that almost meet or are almost parallel, just past the tolerances."""
    size = _log_uniform(rng, 1e-12, 1e-5)
    return JointChange(xyz=_signed(rng, size), axis=_tilted(_axis_of(urdf, name), _log_uniform(rng, 1e-12, 1e-5), rng))


def _zero_length(urdf, name, rng):
    """The joint's origin at its parent's: a zero-length link (the rotation kept)."""
    return JointChange(text={"origin.xyz": "0 0 0"})


def _limits(urdf, name, rng):
    """Limits of zero or tiny width, inverted, at +-pi exactly, or huge."""
    value = float(rng.uniform(-3.0, 3.0))
    choice = rng.integers(5)
    if choice == 0:
        return JointChange(lower=value, upper=value)
    if choice == 1:
        return JointChange(lower=value, upper=value + _log_uniform(rng, 1e-12, 1e-3))
    if choice == 2:
        return JointChange(lower=value + 0.5, upper=value)
    if choice == 3:
        return JointChange(lower=-math.pi, upper=math.pi)
    return JointChange(lower=-_log_uniform(rng, 1e3, 1e300), upper=_log_uniform(rng, 1e3, 1e300))


def _huge(urdf, name, rng):
    """Huge but finite numbers: link offsets, rotations of many turns, axis components (not normalised; up to
    1e100, whose squares the reference, pinocchio, can still sum)."""
    huge = _log_uniform(rng, 1e3, 1.7e308)
    choice = rng.integers(3)
    if choice == 0:
        return JointChange(xyz=_signed(rng, huge))
    if choice == 1:
        return JointChange(axis=tuple(min(huge, 1e100) * v for v in _axis_of(urdf, name)))
    return JointChange(rpy=_signed(rng, huge))


def _non_finite(urdf, name, rng):
    """nan, inf or -inf in one attribute."""
    bad = str(rng.choice(["nan", "inf", "-inf", "NaN"]))
    path = str(rng.choice(["origin.xyz", "origin.rpy", "axis.xyz", "limit.lower", "limit.upper"]))
    text = bad if path.startswith("limit") else " ".join([bad, "0", "1"] if path == "axis.xyz" else [bad, "0", "0"])
    return JointChange(text={path: text})


def _zero_axis(urdf, name, rng):
    """An axis of zero length, or one of round-off length."""
    return JointChange(axis=tuple(_signed(rng, float(rng.choice([0.0, 1e-300, 1e-12])))))


#: Kind -> draw(urdf, joint name, rng) -> JointChange. The first three keep a usable arm (mostly); the others
#: make descriptions that initialize may refuse.
KINDS = {
    "calibration": _calibration,
    "near_degenerate": _near_degenerate,
    "zero_length": _zero_length,
    "limits": _limits,
    "huge": _huge,
    "non_finite": _non_finite,
    "zero_axis": _zero_axis,
}


def random_changes(urdf: str, rng: np.random.Generator, kind: str, joints: int | None = None
                   ) -> dict[str, JointChange]:
    """Changes of ``kind`` (a key of KINDS) for ``joints`` random movable joints of ``urdf`` (default: 1 to all,
    "calibration" all of them)."""
    names = movable_joints(urdf)
    if joints is None:
        joints = len(names) if kind == "calibration" else int(rng.integers(1, len(names) + 1))
    chosen = rng.choice(names, size=min(joints, len(names)), replace=False)
    return {str(name): KINDS[kind](urdf, str(name), rng) for name in chosen}
