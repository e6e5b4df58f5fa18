"""Pairs whose spheres are too coarse for the search and the proof: their spheres touch in many states where their
exact geometry never does (a UR5's forearm and wrist_2; its shoulder link and a floor 1 mm below it, in every state),
so a search on them finds no path where OMPL's does, and a proof on them proves nothing.

Decided once per sphere table and group, on SAMPLES states drawn within the joint limits: a self pair or a link and
world obstacle pair the spheres find touching in at least COARSE_SHARE of them, the exact checker in at most
EXACT_SHARE of those, is left out of the sphere search and out of the spheres' proof (``sphere_proof``), which leave
it to an exact checker of those pairs alone (``pairs_check``). Either way is safe (the exact checker decides what the
spheres leave); the rule is for speed.
"""
from __future__ import annotations

import weakref

import numpy as np

from ..collision.robot_bodies import robot_bodies
from ..collision.sphere_kernels import SphereTable
from ..collision.sphere_sampling import drawn_states, touch_counts
from ..collision.sphere_world import obstacle_owners
from .path_check import PathCheck

#: States drawn to decide the pairs; the share of them a pair's spheres touch in, and at most the share of those its
#: exact geometry touches in, for it to be left to the exact checker.
SAMPLES = 200
COARSE_SHARE = 0.2
EXACT_SHARE = 0.25
SEED = 30
_COARSE: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def coarse_pairs(check: PathCheck, table: SphereTable) -> tuple[np.ndarray, np.ndarray]:
    """(self (P,) bool over ``table.self_pairs``, world (B, M) bool over ``table.world_tested``): the pairs too
    coarse for the spheres (see the module docstring), decided on states within the group's joint limits (at most
    2 pi either way); kept per checker, group and table."""
    kept = _COARSE.setdefault(check.checker, {})
    if check.joint_names in kept and kept[check.joint_names][0] is table:
        return kept[check.joint_names][1]
    joints = check.checker.model.joints
    lower = np.array([max(joints[n].lower, -2 * np.pi) for n in check.joint_names])
    upper = np.array([min(joints[n].upper, 2 * np.pi) for n in check.joint_names])
    counts = touch_counts(check.checker, table, drawn_states(lower, upper, SAMPLES, SEED), check.indices, check.base,
                          [body.name for body in robot_bodies(check.checker)], obstacle_owners(check.checker),
                          COARSE_SHARE)
    frequent = (counts.self_spheres >= COARSE_SHARE * SAMPLES) & \
        (counts.self_exact <= EXACT_SHARE * counts.self_spheres)
    frequent_world = (counts.world_spheres >= COARSE_SHARE * SAMPLES) & \
        (counts.world_exact <= EXACT_SHARE * counts.world_spheres)
    kept[check.joint_names] = (table, (frequent, frequent_world))
    return frequent, frequent_world


def world_pair_names(check: PathCheck, table: SphereTable, world: np.ndarray) -> list[tuple[str, str]]:
    """(link, world object id) of the body and obstacle pairs ``world`` (B, M) bool marks, each once."""
    owners = obstacle_owners(check.checker)
    return list(dict.fromkeys((*body_names(check, table, [b]), owners[m]) for b, m in zip(*np.nonzero(world))))


def body_names(check: PathCheck, table: SphereTable, bodies) -> tuple[str, ...]:
    """The names (links', attached objects' ids) of ``table``'s bodies ``bodies`` (``robot_bodies``, in order)."""
    named = robot_bodies(check.checker)
    return tuple(named[b].name for b in bodies)


def pairs_check(check: PathCheck, pairs: list[tuple[str, str]]) -> PathCheck:
    """``check`` with an exact checker of these body pairs alone (every other pair allowed): what the spheres
    leave to the exact geometry."""
    checker = check.checker.for_scene(check.checker.scene)
    bodies = [*(body.name for body in robot_bodies(checker)), *checker.scene.world_objects]
    kept = {frozenset(pair) for pair in pairs}
    for i, a in enumerate(bodies):
        for b in bodies[i + 1:]:
            if frozenset((a, b)) not in kept and frozenset((a, b)) not in checker.disabled_pairs:
                checker.allow_collision(a, b, "proven by the spheres")
    return PathCheck(checker, check.joint_names, check.base, check.resolution)


def relative_reach(check: PathCheck, pairs: list[tuple[str, str]], reach: np.ndarray) -> np.ndarray | None:
    """R (bodies, joints) for an exact checker of ``pairs`` alone (``pairs_check``): when in every pair one body's
    link is an ancestor of the other's (and no body is an ancestor in one pair and a descendant in another), their
    distance changes only with the joints between them, so the ancestor is held still (row 0) and the descendant
    moves by ``reach``'s entries of those joints alone (``motion_bound``'s bound in the ancestor's frame); a world
    object is the ancestor of every body (which moves by its whole ``reach`` row). None otherwise. Rows and names
    are ``robot_bodies``'."""
    bodies = robot_bodies(check.checker)
    row_of = {body.name: row for row, body in reversed(list(enumerate(bodies)))}
    relative = np.zeros_like(reach)
    ancestors, descendants = set(), set()
    for a, b in pairs:
        if a not in row_of or b not in row_of:  # a body and a world object
            row = row_of[a if a in row_of else b]
            descendants.add(row)
            relative[row] = reach[row]
            continue
        between = _joints_between(check, bodies[row_of[b]].link, bodies[row_of[a]].link)
        if between is None:
            a, b = b, a
            between = _joints_between(check, bodies[row_of[b]].link, bodies[row_of[a]].link)
        if between is None:
            return None
        ancestors.add(row_of[a])
        descendants.add(row_of[b])
        row = row_of[b]
        relative[row, between] = reach[row, between]
    return None if ancestors & descendants else relative


def _joints_between(check: PathCheck, link: str, ancestor: str) -> list[int] | None:
    """Columns of the group's joints on the way from ``link`` up to ``ancestor``; None when it is not one."""
    model = check.checker.model
    tree = model.tree.table
    column = {model.tree.variable_index[name]: j for j, name in enumerate(check.joint_names)}
    row_of_child = {int(child): k for k, child in enumerate(tree.child_link)}
    index, target, found = model.link_names.index(link), model.link_names.index(ancestor), []
    while index != target:
        if index not in row_of_child:
            return None
        k = row_of_child[index]
        if int(tree.first_variable[k]) in column:
            found.append(column[int(tree.first_variable[k])])
        index = int(tree.parent_link[k])
    return found
