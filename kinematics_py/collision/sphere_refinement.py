"""Which links get a fine sphere fit (``spheres``): those of a self pair whose spheres touch where the pair's exact
geometry does not, in at least FINE_SHARE of SAMPLES states drawn within the joint limits.

The spheres bulge beyond a link's surface by a centimetre or two. Links that the robot folds close together then
touch on the spheres where their geometry does not: the Kinova's wrist (links 3 and 6, 3 and 5, 4 and 6, 2 and 4:
3.7-6 % of such states each, 5-17 mm apart where the bench's starts and goals make them touch). A plan whose start or
goal touches so takes the relaxed search and leaves steps near that end to the exact checker (docs/benchmarks.md).
Refitting every link finer costs the Panda and the UR5 more spheres in every state (no pair of theirs touches so in
more than 1.3 % of the states); refitting the links that need it costs them nothing.
"""
from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from .checker import CollisionChecker
from .sphere_kernels import SphereTable
from .sphere_sampling import drawn_states, touch_counts

#: States drawn within the joint limits (a continuous joint within a turn), the seed they are drawn with, and the
#: share of them a self pair's spheres must touch in where its geometry does not for its links to be refitted.
SAMPLES = 300
SEED = 11
FINE_SHARE = 0.03


def falsely_touching_links(checker: CollisionChecker, table: SphereTable, body_links: Sequence[str]) -> frozenset[str]:
    """The links of the self pairs of ``table`` (the robot's links alone, no obstacles; its body b is the link
    ``body_links[b]``) whose spheres touch where the checker finds the pair apart, in at least FINE_SHARE of SAMPLES
    states."""
    joints = checker.model.joints
    names = checker.variable_names
    lower = np.array([max(joints[name].lower, -math.pi) for name in names])
    upper = np.array([min(joints[name].upper, math.pi) for name in names])
    counts = touch_counts(checker, table, drawn_states(lower, upper, SAMPLES, SEED), np.arange(len(names)),
                          np.zeros(len(names)), body_links, (), FINE_SHARE)
    false_touches = counts.self_spheres - counts.self_exact
    return frozenset(body_links[b] for b in table.self_pairs[false_touches >= FINE_SHARE * SAMPLES].ravel())
