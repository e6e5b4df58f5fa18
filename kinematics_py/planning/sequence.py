"""Sequences of industrial motions blended through their corners (ROS-free), as Pilz's ``plan_sequence_path``
plans them: items (PTP, LIN, CIRC, and the project's collision-avoiding Free motion), each with a
``blend_radius`` [m of tool travel] about its goal, become one timed trajectory.

Pilz's rules, each refused with MoveIt's code and the reason: radii are >= 0 and the last one is 0; the spheres
of neighbouring corners do not overlap (the sum of their radii is below the distance between the corners); each
sphere leaves part of both segments at its corner outside it. Inside the sphere of radius r about a corner, the
motion leaves the first segment at its first point inside the sphere and joins the next at its last, on a
quadratic curve in joint space whose control point is the corner's configuration (so the tool turns the corner
inside the sphere), without stopping; outside the spheres the path is exactly the items' paths. Every point,
blends included, is checked like a single motion's, and the whole sequence is timed as one path: at rest only at
its ends and at corners with radius 0.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..collision.checker import CollisionChecker
from ..errors import ErrorCode
from ..ik.budget import UNBOUNDED, Budget
from ..ik.plugin import KinematicsPlugin
from ..state_check import StateCheck
from .blending import blend_curve
from .industrial import (
    CARTESIAN_KINDS,
    DEFAULT_INDUSTRIAL_OPTIONS,
    IndustrialOptions,
    IndustrialRun,
    Motion,
    MotionRefused,
    Segment,
    motion_segment,
    tool_limits,
    tool_turns,
)
from .motion import MotionPlan
from .path_check import densify
from .path_speed import time_along_path


@dataclass(frozen=True, eq=False)
class SequenceItem:
    """One motion of a sequence and the radius [m] of the sphere about its goal within which it blends into the
    next (0: it stops there)."""

    motion: Motion
    blend_radius: float = 0.0


def plan_sequence(plugin: KinematicsPlugin, checker: CollisionChecker, start: Sequence[float],
                  items: Sequence[SequenceItem], options: IndustrialOptions = DEFAULT_INDUSTRIAL_OPTIONS, *,
                  base_state=None, path_check: StateCheck | None = None, budget: Budget = UNBOUNDED) -> MotionPlan:
    """The items from ``start`` as one blended, timed trajectory (a MotionPlan whose waypoints are the corners,
    each with its blend radius), or refused with MoveIt's code, the item and why."""
    run = IndustrialRun(plugin, checker, options, base_state=base_state, path_check=path_check, budget=budget)
    try:
        radii = _radii(items)
        q = run.start(start)
        segments = []
        for index, item in enumerate(items):
            segments.append(_item_segment(run, q, item, index))
            q = segments[-1].positions[-1]
        _radii_fit(segments, radii)
        positions, kinds, stops = _blended(run, segments, radii)
    except MotionRefused as refused:
        return run.failed(refused)
    T_base_tool = run.tool_poses(positions)
    timing = time_along_path(positions, T_base_tool[:, :3, 3], tool_turns(T_base_tool), run.limits,
                             tool_limits(run, kinds), stops)
    corners = [segments[0].positions[0]] + [segment.positions[-1] for segment in segments]
    plan = run.answer(corners, positions, timing, f"a sequence of {len(items)} motions")
    waypoints = tuple(type(w)(w.positions, w.motion, r) for w, r in zip(plan.waypoints, [0.0, *radii]))
    return MotionPlan(plan.joint_names, plan.error_code, plan.message, "", waypoints, positions, timing, 0,
                      plan.planning_time)


def _item_segment(run: IndustrialRun, q: np.ndarray, item: SequenceItem, index: int) -> Segment:
    try:
        return motion_segment(run, q, item.motion)
    except MotionRefused as refused:
        raise MotionRefused(refused.code, f"item {index}: {refused}") from None


def _radii(items: Sequence[SequenceItem]) -> list[float]:
    """The blend radii, refused (INVALID_MOTION_PLAN) when one is negative or not finite or the last is not 0."""
    if not items:
        raise MotionRefused(ErrorCode.INVALID_MOTION_PLAN, "the sequence holds no item")
    radii = [float(item.blend_radius) for item in items]
    for index, radius in enumerate(radii):
        if not (np.isfinite(radius) and radius >= 0):
            raise MotionRefused(ErrorCode.INVALID_MOTION_PLAN,
                                f"item {index}: the blend radius must be finite and >= 0 [m]; got {radius!r}")
    if radii[-1] != 0:
        raise MotionRefused(ErrorCode.INVALID_MOTION_PLAN,
                            f"the last item's blend radius must be 0 (the sequence stops at its goal); got {radii[-1]}")
    return radii


def _radii_fit(segments: Sequence[Segment], radii: Sequence[float]) -> None:
    """Refuse (INVALID_MOTION_PLAN) overlapping spheres and spheres that hold a whole segment at their corner."""
    corners = [segment.T_base_tool[-1, :3, 3] for segment in segments]
    for index in range(len(segments) - 1):
        radius = radii[index]
        if radius == 0:
            continue
        gap = float(np.linalg.norm(corners[index + 1] - corners[index]))
        if radius + radii[index + 1] >= gap:
            raise MotionRefused(ErrorCode.INVALID_MOTION_PLAN, (
                f"the blend spheres of items {index} and {index + 1} overlap: radii {radius} + {radii[index + 1]} "
                f"m >= {gap:.4g} m between their goals"))
        for which in (index, index + 1):
            reach = float(np.linalg.norm(segments[which].T_base_tool[:, :3, 3] - corners[index], axis=1).max())
            if reach <= radius:
                raise MotionRefused(ErrorCode.INVALID_MOTION_PLAN, (
                    f"item {index}'s blend radius {radius} m holds the whole of item {which} (it never leaves "
                    f"the sphere: {reach:.4g} m at most from the corner)"))


def _blended(run: IndustrialRun, segments: Sequence[Segment],
             radii: Sequence[float]) -> tuple[np.ndarray, list[str], list[int]]:
    """(positions, the kind of each path segment, the points where the path stops) of the blended sequence."""
    keep = [[0, len(segment.positions) - 1] for segment in segments]
    blends: list[np.ndarray | None] = [None] * len(segments)
    for index, radius in enumerate(radii[:-1]):
        if radius == 0:
            continue
        first, second = segments[index], segments[index + 1]
        corner = first.T_base_tool[-1, :3, 3]
        outside_first = np.flatnonzero(np.linalg.norm(first.T_base_tool[:, :3, 3] - corner, axis=1) >= radius)
        outside_second = np.flatnonzero(np.linalg.norm(second.T_base_tool[:, :3, 3] - corner, axis=1) >= radius)
        keep[index][1], keep[index + 1][0] = int(outside_first[-1]) + 1, int(outside_second[0]) - 1
        blends[index] = densify(blend_curve(first.positions[keep[index][1]], first.positions[-1],
                                            second.positions[keep[index + 1][0]], run.options.resolution),
                                run.options.resolution)
        run.checked(blends[index], f"the blend at item {index}'s goal")
    parts, kinds, stops = [segments[0].positions[:1]], [], []
    for index, segment in enumerate(segments):
        low, high = keep[index]
        if low > high:
            raise MotionRefused(ErrorCode.INVALID_MOTION_PLAN, f"the blends at both ends of item {index} overlap")
        kept = segment.positions[low + 1:high + 1] if low > 0 else segment.positions[1:high + 1]
        offset = sum(len(part) for part in parts) - 1 - max(low, 0)  # where point k of the segment lands
        stops += [offset + k for k in segment.stops if low < k < high]
        parts.append(kept)
        kinds += [segment.kind] * len(kept)
        if blends[index] is not None:
            parts.append(blends[index][1:])
            linear = "LIN" if {segment.kind, segments[index + 1].kind} & set(CARTESIAN_KINDS) else "PTP"
            kinds += [linear] * (len(blends[index]) - 1)
        elif index < len(segments) - 1:
            stops.append(sum(len(part) for part in parts) - 1)
    return np.concatenate(parts), kinds, stops
