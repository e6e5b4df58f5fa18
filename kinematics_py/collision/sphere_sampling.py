"""Where a sphere table and the exact geometry disagree, counted on states drawn within the joint limits: per pair of
the table, the states where its spheres touch and, of those, the states where its exact geometry touches too.

The spheres contain the geometry, so the exact geometry touches only where the spheres do; a pair's spheres then
touch falsely in (sphere touches - exact touches) of the states. The fine fit's choice of links
(``sphere_refinement``) and the planner's pairs too coarse for the spheres (``planning.sphere_pairs``) are both read
from these counts.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from .checker import CollisionChecker
from .sphere_kernels import SphereTable, colliding_pairs, workspace


class TouchCounts(NamedTuple):
    """States where each pair touches: a self pair's (P,) over ``table.self_pairs``, a body and obstacle row's (B, M)
    over ``table.world_tested``; the exact counts only for the pairs whose spheres touch often enough (else 0)."""

    self_spheres: np.ndarray
    self_exact: np.ndarray
    world_spheres: np.ndarray
    world_exact: np.ndarray


def drawn_states(lower: np.ndarray, upper: np.ndarray, samples: int, seed: int) -> np.ndarray:
    """(samples, joints) states drawn uniformly between ``lower`` and ``upper`` (seeded)."""
    return lower + np.random.default_rng(seed).random((samples, len(lower))) * (upper - lower)


def touch_counts(checker: CollisionChecker, table: SphereTable, states: np.ndarray, indices: np.ndarray,
                 base: np.ndarray, body_names: Sequence[str], obstacle_owners: Sequence[str],
                 exact_share: float) -> TouchCounts:
    """The pairs' touches over ``states`` (the model's variables ``indices``, the others at ``base``'s values; the
    table's body b is ``body_names[b]``, its obstacle row m belongs to the world object ``obstacle_owners[m]``). The
    exact geometry is asked only for the pairs whose spheres touch in at least ``exact_share`` of the states, and
    only in the states where their spheres touch."""
    work = workspace(base, len(checker.model.link_names), table)
    tree, arrays = checker.model.tree.table_arrays, tuple(table)

    def touching(q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        hit, world_hit = np.zeros(len(table.self_pairs), dtype=bool), np.zeros(table.world_tested.shape, dtype=bool)
        colliding_pairs(q, indices, tree, arrays, work, hit, world_hit)
        return hit, world_hit

    counts = TouchCounts(np.zeros(len(table.self_pairs), dtype=np.int64), np.zeros(len(table.self_pairs), np.int64),
                         np.zeros(table.world_tested.shape, dtype=np.int64),
                         np.zeros(table.world_tested.shape, dtype=np.int64))
    for q in states:
        hit, world_hit = touching(q)
        counts.self_spheres[hit] += 1
        counts.world_spheres[world_hit] += 1
    asked, asked_world = (counts.self_spheres >= exact_share * len(states),
                          counts.world_spheres >= exact_share * len(states))
    if not (asked.any() or asked_world.any()):
        return counts
    for q in states:
        hit, world_hit = touching(q)
        hit &= asked
        world_hit &= asked_world
        if not (hit.any() or world_hit.any()):
            continue
        full = base.copy()
        full[indices] = q
        exact = {frozenset(pair) for pair in checker.check(full, world=bool(world_hit.any())).pairs}
        for p in np.flatnonzero(hit):
            a, b = table.self_pairs[p]
            counts.self_exact[p] += frozenset((body_names[a], body_names[b])) in exact
        for b, m in zip(*np.nonzero(world_hit)):
            counts.world_exact[b, m] += frozenset((body_names[b], obstacle_owners[m])) in exact
    return counts
