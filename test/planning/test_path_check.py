"""``PathCheck.first_invalid``: a state alone is judged as it is among others (its own check, the path check)."""
from __future__ import annotations

import numpy as np
from test_sphere_search import BOXES, panda

from kinematics_py.planning.path_check import PathCheck


def test_one_state_is_invalid_exactly_when_it_collides_or_fails_the_path_check():
    plugin, checker = panda(BOXES)  # the Panda among the table and wall boxes
    names = plugin.getJointNames()
    lower = np.array([checker.model.joints[n].lower for n in names])
    upper = np.array([checker.model.joints[n].upper for n in names])
    states = lower + np.random.default_rng(43).random((200, len(names))) * (upper - lower)
    colliding = checker.check_batch(states, joint_names=names)
    high_elbow = states[:, 3] > -1.0  # a path check of our own: the fourth joint kept low
    check = PathCheck(checker, names, state_validity=lambda q: "elbow high" if q[3] > -1.0 else None)
    bare = PathCheck(checker, names)
    for q, hit, high in zip(states, colliding, high_elbow):
        assert bare.first_invalid(q[None]) == (0 if hit else -1)
        assert check.first_invalid(q[None]) == (0 if hit or high else -1)
    assert colliding.any() and (~colliding).any() and (high_elbow & ~colliding).any()
    assert check.states_checked == len(states)
