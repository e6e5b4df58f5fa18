"""Compiled (numba) broad phase: place every shape for a state and cull the pairs whose bounding boxes are apart; the
pairs left go on to the compiled narrow phase (``convex_kernels``) in the same call.

Links are placed by the model's tree FK (``model.tree_kernels``: only the tested shapes' links and their
ancestors), so the checker puts every link where ``RobotModel.link_poses`` does, mobile bases (floating and planar
joints) included. Each shape's
bounding box in its own frame (centre, half extents) becomes a world-aligned box for a first test, then
an oriented one for a separating-axis test; a pair that survives both (or holds an unbounded shape, a
plane) is a candidate for the exact test, which gets the pair's relative pose.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..compiled import compiled_kernel
from ..geometry.kernels import compose_into
from ..model.tree_kernels import TreeTable, joints_placing, place_links, place_some_links
from .convex_kernels import candidate_verdicts

#: Added to |R| entries in the separating-axis test so that near-parallel edges do not give false separations.
SAT_EPSILON = 1e-9


class ShapeTable(NamedTuple):
    """Every shape of a scene and the pairs of them to test (indices into the shape rows). Kernels take it, like
    the ``TreeTable``, as is or as the plain tuple of its arrays."""

    link: np.ndarray  # (S,) int64, the link a shape moves with; -1 for a world-fixed shape
    T_parent_shape: np.ndarray  # (S, 4, 4) in that link's frame, or in the planning frame when world-fixed
    centers: np.ndarray  # (S, 3) bounding-box centre in the shape frame [m]
    halves: np.ndarray  # (S, 3) bounding-box half extents [m]; -1 for an unbounded shape (a plane)
    pairs: np.ndarray  # (P, 2) int64


@compiled_kernel(inline="always")
def _place_shapes(link_poses, shapes, shape_pose, center, half, placed):
    """shape_pose[s] = T_plan_shape; center[s], half[s]: its world-aligned bounding box in the planning frame; for
    the shapes ``placed`` marks (S,) bool."""
    for s in range(shapes.link.shape[0]):
        if not placed[s]:
            continue
        if shapes.link[s] < 0:
            shape_pose[s] = shapes.T_parent_shape[s]
        else:
            compose_into(link_poses[shapes.link[s]], shapes.T_parent_shape[s], shape_pose[s])
        for i in range(3):
            c = shape_pose[s, i, 3]
            h = 0.0
            for j in range(3):
                c += shape_pose[s, i, j] * shapes.centers[s, j]
                h += abs(shape_pose[s, i, j]) * shapes.halves[s, j]
            center[s, i] = c
            half[s, i] = h


@compiled_kernel(inline="always")
def _relative_pose(T_plan_a, T_plan_b, T_a_b):
    """T_a_b (3x4) <- T_plan_a^-1 T_plan_b, with T_plan_a^-1 = [R_a^T, -R_a^T t_a]."""
    for i in range(3):
        for j in range(4):
            value = 0.0
            for m in range(3):
                value += T_plan_a[m, i] * (T_plan_b[m, j] - (T_plan_a[m, 3] if j == 3 else 0.0))
            T_a_b[i, j] = value


@compiled_kernel(inline="always")
def _boxes_overlap(T_a_b, center_a, half_a, center_b, half_b):
    """Separating-axis test of two oriented boxes, b posed by T_a_b in a's frame (15 axes)."""
    R = np.empty((3, 3))
    absR = np.empty((3, 3))
    t = np.empty(3)
    for i in range(3):
        value = T_a_b[i, 3] - center_a[i]
        for j in range(3):
            R[i, j] = T_a_b[i, j]
            absR[i, j] = abs(T_a_b[i, j]) + SAT_EPSILON
            value += T_a_b[i, j] * center_b[j]
        t[i] = value
    for i in range(3):
        if abs(t[i]) > half_a[i] + half_b[0] * absR[i, 0] + half_b[1] * absR[i, 1] + half_b[2] * absR[i, 2]:
            return False
    for j in range(3):
        if abs(t[0] * R[0, j] + t[1] * R[1, j] + t[2] * R[2, j]) > \
                half_a[0] * absR[0, j] + half_a[1] * absR[1, j] + half_a[2] * absR[2, j] + half_b[j]:
            return False
    for i in range(3):
        i1, i2 = (i + 1) % 3, (i + 2) % 3
        for j in range(3):
            j1, j2 = (j + 1) % 3, (j + 2) % 3
            reach = half_a[i1] * absR[i2, j] + half_a[i2] * absR[i1, j] + half_b[j1] * absR[i, j2] + \
                half_b[j2] * absR[i, j1]
            if abs(t[i2] * R[i1, j] - t[i1] * R[i2, j]) > reach:
                return False
    return True


@compiled_kernel(inline="always")
def _cull_pairs(shapes, tested, shape_pose, center, half, T_a_b, candidates):
    """candidates[p]: pair p is tested and its bounding boxes overlap (or it holds a plane); T_a_b[p] then set."""
    for p in range(shapes.pairs.shape[0]):
        if not tested[p]:
            candidates[p] = False
            continue
        a, b = shapes.pairs[p, 0], shapes.pairs[p, 1]
        bounded = shapes.halves[a, 0] >= 0.0 and shapes.halves[b, 0] >= 0.0
        overlap = True
        if bounded:
            for i in range(3):
                if abs(center[a, i] - center[b, i]) > half[a, i] + half[b, i]:
                    overlap = False
                    break
        if overlap:
            _relative_pose(shape_pose[a], shape_pose[b], T_a_b[p])
            if bounded:
                overlap = _boxes_overlap(T_a_b[p], shapes.centers[a], shapes.halves[a], shapes.centers[b],
                                         shapes.halves[b])
        candidates[p] = overlap


@compiled_kernel
def place_shapes(q, tree, shapes, T_plan_shape):
    """T_plan_shape[s] (4x4) <- every shape's pose in the planning frame for one state vector ``q``."""
    tree, shapes = TreeTable(*tree), ShapeTable(*shapes)
    S = shapes.link.shape[0]
    link_poses = np.empty((tree.parent_link.shape[0] + 1, 4, 4))
    center = np.empty((S, 3))
    half = np.empty((S, 3))
    place_links(q, tree, link_poses)
    _place_shapes(link_poses, shapes, T_plan_shape, center, half, np.ones(S, dtype=np.bool_))


@compiled_kernel
def place_and_cull(Q, inputs, tested, stop_at_first, T_a_b, candidates, verdicts):
    """For every state Q[n] (a state vector, see ``tree_kernels``): place the shapes of the ``tested`` pairs and mark
    in candidates[n] those pairs whose bounding boxes overlap, with their relative pose T_a_b[n, p] (3x4); then each
    candidate's verdict (``convex_kernels.candidate_verdicts``: ``stop_at_first``, ``verdicts``, and what it
    returns). ``inputs``: the tree's, the shapes' and the convex table's arrays (``kernel_inputs.PlacementInputs``).
    (A checker of a few pairs, ``sphere_pairs.pairs_check``, tests 1-3 of a scene's 20-30 shapes: placing them alone
    took a UR5 state in the cage from 1.4 to 1.0 us; and only their links and those links' ancestors are placed.)"""
    tree, shapes, convex = TreeTable(*inputs.tree), ShapeTable(*inputs.shapes), inputs.convex
    S = shapes.link.shape[0]
    link_poses = np.empty((tree.parent_link.shape[0] + 1, 4, 4))
    shape_pose = np.empty((S, 4, 4))
    center = np.empty((S, 3))
    half = np.empty((S, 3))
    placed = np.zeros(S, dtype=np.bool_)
    links = np.zeros(link_poses.shape[0], dtype=np.bool_)
    for p in range(tested.shape[0]):
        if tested[p]:
            for s in (shapes.pairs[p, 0], shapes.pairs[p, 1]):
                placed[s] = True
                if shapes.link[s] >= 0:
                    links[shapes.link[s]] = True
    joints = joints_placing(tree, links)
    for n in range(Q.shape[0]):
        place_some_links(Q[n], tree, link_poses, joints)
        _place_shapes(link_poses, shapes, shape_pose, center, half, placed)
        _cull_pairs(shapes, tested, shape_pose, center, half, T_a_b[n], candidates[n])
    return candidate_verdicts(T_a_b, candidates, shapes.pairs, convex, stop_at_first, verdicts)
