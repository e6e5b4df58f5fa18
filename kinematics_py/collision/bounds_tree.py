"""A tree of axis-aligned bounds over many leaves (a mesh's triangles, an octree's boxes), as rows depth first.

Each node row holds the bounds of the rows after it up to its subtree's end, so that a test that misses a node's
bounds skips every row under it; a leaf row is a leaf's own bounds. The compiled tests walk such rows: the sphere
table's obstacles (``sphere_world``) and the exact checker's octrees and world meshes (``convex_kernels.TREE``,
``headed_tree``).
"""
from __future__ import annotations

import numpy as np

#: Leaves under a node of the tree at most: LEAVES_PER_NODE or fewer leaves are rows of their own.
LEAVES_PER_NODE = 4


def bounds_tree(lowers: np.ndarray, uppers: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(leaf (R,) int64: the leaf a row is, -1 for a node; lower and upper bounds (R, 3); rows of each row's subtree,
    itself included (R,) int64) of leaves given by their bounds ((L, 3) each): a node with the bounds of its leaves,
    then the rows of each half (split at the median of their centres along the axis they spread most), depth first.
    Built a level at a time: each node is a run of the leaves' order."""
    count = len(lowers)
    centres = (lowers + uppers) / 2
    order = np.arange(count)
    node_start, node_end, node_depth = [], [], []
    runs = np.array([[0, count]]) if count > LEAVES_PER_NODE else np.zeros((0, 2), dtype=np.int64)
    depth = 0
    while len(runs):
        node_start.append(runs[:, 0])
        node_end.append(runs[:, 1])
        node_depth.append(np.full(len(runs), depth))
        lengths = runs[:, 1] - runs[:, 0]
        run_of = np.repeat(np.arange(len(runs)), lengths)
        starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
        members = np.arange(len(run_of)) + np.repeat(runs[:, 0] - starts, lengths)  # (their places in ``order``)
        spread = centres[order[members]]
        axis = np.argmax(np.maximum.reduceat(spread, starts) - np.minimum.reduceat(spread, starts), axis=1)
        along = spread[np.arange(len(members)), axis[run_of]]
        order[members] = order[members[np.lexsort((along, run_of))]]
        middle = runs[:, 0] + (runs[:, 1] - runs[:, 0]) // 2
        halves = np.vstack([np.column_stack([runs[:, 0], middle]), np.column_stack([middle, runs[:, 1]])])
        runs = halves[halves[:, 1] - halves[:, 0] > LEAVES_PER_NODE]
        depth += 1
    starts = np.concatenate(node_start + [np.arange(count)]).astype(np.int64)
    ends = np.concatenate(node_end + [np.arange(count) + 1]).astype(np.int64)
    depths = np.concatenate(node_depth + [np.full(count, depth + 1)])
    is_node = np.arange(len(starts)) < len(starts) - count
    rows = np.lexsort((depths, starts))  # (depth first: a node, then the nodes and leaves of its run in order)
    starts, ends, is_node = starts[rows], ends[rows], is_node[rows]
    leaf = np.where(is_node, -1, order[np.minimum(starts, count - 1)])
    subtree = np.searchsorted(starts, ends, side="left") - np.arange(len(rows))
    ordered_lower, ordered_upper = np.vstack([lowers[order], lowers[:1]]), np.vstack([uppers[order], uppers[:1]])
    bounds_at = np.column_stack([starts, ends]).ravel()
    node_lower = np.minimum.reduceat(ordered_lower, bounds_at, axis=0)[::2]
    node_upper = np.maximum.reduceat(ordered_upper, bounds_at, axis=0)[::2]
    return leaf.astype(np.int64), node_lower, node_upper, subtree.astype(np.int64)


def headed_tree(lowers: np.ndarray, uppers: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``bounds_tree`` of the leaves after a first row with the bounds of them all, whose subtree is every row: the
    rows of one shape, whose count its first row gives."""
    leaf, lower, upper, subtree = bounds_tree(lowers, uppers)
    return (np.concatenate([[-1], leaf]).astype(np.int64), np.vstack([lowers.min(axis=0), lower]),
            np.vstack([uppers.max(axis=0), upper]), np.concatenate([[len(leaf) + 1], subtree]).astype(np.int64))
