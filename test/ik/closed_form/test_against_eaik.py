"""The branch sets equal EAIK's (closed form by subproblem decomposition, C++) on the same robots."""
import numpy as np
import pytest
from closed_form_cases import (
    CLOSED_FORM_ROBOTS,
    eaik_branches,
    eaik_robot,
    eaik_robot_of_geometry,
    random_configurations,
    same_branch,
    solve_without_limits,
    solver,
)
from robots import small_urdf

from kinematics_py import RobotModel
from kinematics_py.ik.closed_form import ChainGeometry, classify_chain

pytest.importorskip("eaik", reason="EAIK (pip install eaik==1.2.2) is a test requirement")

CONFIGURATIONS = 200
SEED = 20261201
#: Two solvers' angles for one branch agree to this [rad] (both are exact up to round-off).
MATCH_TOLERANCE = 1e-6


@pytest.mark.parametrize("name", sorted(CLOSED_FORM_ROBOTS))
def test_the_branch_set_is_eaiks(name):
    closed_form = solver(name)
    chain = closed_form.chain
    robot = eaik_robot(closed_form)
    assert robot.has_known_decomposition()
    rng = np.random.default_rng(SEED)
    originals = random_configurations(chain, rng, CONFIGURATIONS)
    seeds = random_configurations(chain, rng, CONFIGURATIONS)
    for seed, T in zip(seeds, chain.forward_kinematics(originals)):
        ours = solve_without_limits(closed_form, T, seed)
        theirs = eaik_branches(chain, robot, T)
        assert len(ours) == len(theirs)
        for branch in theirs:
            assert any(same_branch(branch, q, MATCH_TOLERANCE) for q in ours)
        # With the limits: EAIK's branches that have an in-limit representative.
        in_limits, _ = closed_form.solve(T, seed)
        turns = np.arange(-3, 4)[:, None, None] * 2 * np.pi
        candidates = np.asarray(theirs)[None] + turns
        inside = (candidates >= chain.lower - 1e-9) & (candidates <= chain.upper + 1e-9)
        assert len(in_limits) == int(np.sum(np.all(np.any(inside, axis=0), axis=1)))


def test_eaik_finds_no_decomposition_where_we_find_no_family():
    chain = RobotModel.from_urdf_file(small_urdf("offset_wrist.urdf")).chain("base_link", "tool0")
    assert classify_chain(chain) is None
    assert not eaik_robot_of_geometry(ChainGeometry.of_chain(chain)).has_known_decomposition()
