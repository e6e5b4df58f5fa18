"""The bundled robots' collision primitives: every body link has some, the SRDFs' named states are free of
self-collision, and the SRDFs' disabled pairs are what the Setup-Assistant-like sampler proposes for them."""
from __future__ import annotations

import itertools

import pytest
from robots import bundled_robot

from kinematics_py import RobotModel, SemanticModel
from kinematics_py.collision.checker import CollisionChecker
from kinematics_py.collision.matrix import DEFAULT_ALWAYS_FRACTION, DEFAULT_SAMPLES, propose_disabled_pairs

ROBOTS = ("ur5", "panda")
#: The seed the shipped SRDFs' pairs were proposed with (the sampler's defaults otherwise).
SEED = 0
#: Links that are frames only (no body): tool flanges, TCPs, the UR controller's base frame.
FRAMES = {"ur5": {"base", "tool0"}, "panda": {"panda_link8", "panda_hand_tcp"}}


def load(robot: str) -> tuple[RobotModel, SemanticModel]:
    model = RobotModel.from_urdf_file(bundled_robot(f"{robot}.urdf"))
    return model, SemanticModel.from_srdf_file(bundled_robot(f"{robot}.srdf"), model)


def named_states(semantic: SemanticModel):
    """(name, joint values) of every combination of one named state per group that has any (the Panda's arm
    states with each hand state), over the default state for the joints they leave out."""
    groups = list(semantic.group_states.items())
    for combination in itertools.product(*(states.items() for _, states in groups)):
        values = {joint: value for _, state in combination for joint, value in state.items()}
        yield " + ".join(name for name, _ in combination), values


@pytest.mark.parametrize("robot", ROBOTS)
def test_every_body_link_has_collision_primitives(robot):
    model, _ = load(robot)
    checker = CollisionChecker(model)
    assert set(checker.link_geometry) == set(model.link_names) - FRAMES[robot]
    assert all(not hasattr(placed.shape, "vertices") for shapes in checker.link_geometry.values() for placed in shapes)


@pytest.mark.parametrize("robot", ROBOTS)
def test_named_states_are_free_of_self_collision(robot):
    model, semantic = load(robot)
    checker = CollisionChecker(model, semantic)
    states = list(named_states(semantic))
    assert len(states) == {"ur5": 2, "panda": 6}[robot]
    for name, values in states:
        report = checker.check(values)
        assert not report.in_collision, f"{robot} {name}: {report.describe()}"


@pytest.mark.parametrize("robot", ROBOTS)
def test_the_srdfs_disabled_pairs_are_the_samplers_proposal(robot):
    """Regenerate with ``propose_disabled_pairs(CollisionChecker(model), seed=0).srdf()`` after changing the
    primitives. Without the SRDF's pairs, its named states would collide only in pairs it disables."""
    model, semantic = load(robot)
    proposal = propose_disabled_pairs(CollisionChecker(model), samples=DEFAULT_SAMPLES,
                                      always_fraction=DEFAULT_ALWAYS_FRACTION, seed=SEED)
    proposed = {frozenset((p.link_1, p.link_2)): p.reason for p in proposal.disabled}
    shipped = {pair: semantic.disabled_collision_reasons[pair] for pair in semantic.disabled_collisions}
    assert shipped == proposed
    bare = CollisionChecker(model)
    for name, values in named_states(semantic):
        for pair in bare.check(values).pairs:
            assert proposed.get(frozenset(pair)) in ("Adjacent", "Default", "Always"), (name, pair)
