"""The reach sphere of closed-form arms: every configuration's wrist point lies inside it, and it is tight."""
from __future__ import annotations

import numpy as np
import pytest
from closed_form_cases import CLOSED_FORM_ROBOTS, solver

SAMPLES = 4000


@pytest.mark.parametrize("name", sorted(CLOSED_FORM_ROBOTS))
def test_every_configuration_is_within_reach_and_the_farthest_nearly_touch_it(name):
    closed_form = solver(name)
    rng = np.random.default_rng(11)
    q = rng.uniform(-np.pi, np.pi, (SAMPLES, 6))  # joint limits ignored: the sphere holds for any joint values
    beyond = np.array([closed_form.beyond_reach(T) for T in closed_form.chain.forward_kinematics(q)])
    assert beyond.max() <= 1e-9
    # From the farthest sample, a few steps uphill: the sphere is no more than a millimetre wider than the reach.
    far = q[np.argmax(beyond)]
    step = 0.05
    for _ in range(400):
        trials = far + rng.normal(0.0, step, (32, 6))
        values = np.array([closed_form.beyond_reach(T) for T in closed_form.chain.forward_kinematics(trials)])
        if values.max() > closed_form.beyond_reach(closed_form.chain.forward_kinematics(far)):
            far = trials[np.argmax(values)]
        else:
            step *= 0.9
    assert -1e-3 <= closed_form.beyond_reach(closed_form.chain.forward_kinematics(far)) <= 1e-9


@pytest.mark.parametrize("name", sorted(CLOSED_FORM_ROBOTS))
def test_a_pose_moved_past_the_sphere_is_beyond_it(name):
    closed_form = solver(name)
    T = closed_form.chain.forward_kinematics(np.zeros(6)).copy()
    T[:3, 3] += (10.0, 0.0, 0.0)
    assert closed_form.beyond_reach(T) > 5.0
