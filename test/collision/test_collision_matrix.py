"""Proposed disabled pairs: sampling reproduces the Panda SRDF that MoveIt Setup Assistant wrote, and a
checker given the proposal behaves as one given that SRDF."""
import numpy as np
import pytest
from robots import example_robot_data_dir, example_robot_urdf

from kinematics_py import RobotModel, SemanticModel
from kinematics_py.collision.checker import CollisionChecker
from kinematics_py.collision.matrix import propose_disabled_pairs

SEED = 3
#: Enough samples for the Panda's rarely colliding pairs to show up at least once (the Setup Assistant uses 10000).
SAMPLES = 4000
PANDA_SRDF = "panda_description/srdf/panda.srdf"


@pytest.fixture(scope="module")
def panda():
    model = RobotModel.from_urdf_file(example_robot_urdf("panda"))
    return model, SemanticModel.from_srdf_file(example_robot_data_dir() / PANDA_SRDF, model)


@pytest.fixture(scope="module")
def proposal(panda):
    model, _ = panda
    return propose_disabled_pairs(CollisionChecker(model), samples=SAMPLES, seed=SEED)


def test_panda_proposal_is_the_setup_assistants_srdf(panda, proposal):
    _, semantic = panda
    proposed = {frozenset((p.link_1, p.link_2)): p.reason for p in proposal.disabled}
    written = {pair: semantic.disabled_collision_reasons[pair] for pair in semantic.disabled_collisions}
    assert proposed == written


def test_reasons_match_the_sampled_fractions_and_sometimes_colliding_pairs_stay_enabled(proposal):
    reasons = {(p.link_1, p.link_2): p.reason for p in proposal.disabled}
    for pair, fraction in proposal.collision_fraction.items():
        reason = reasons.get(pair)
        if reason == "Never":
            assert fraction == 0.0, pair
        elif reason == "Always":
            assert fraction >= 0.95, pair
        elif reason is None:
            assert 0.0 < fraction < 0.95, pair
    assert ("panda_link0", "panda_link5") not in reasons, "the wrist can hit the base: keep checking it"


def test_proposal_as_srdf_text_and_applied_to_a_checker(panda, proposal):
    model, semantic = panda
    srdf = f'<robot name="panda">{proposal.srdf()}</robot>'
    assert SemanticModel.from_srdf_string(srdf, model).disabled_collisions == semantic.disabled_collisions
    sampled, from_srdf = CollisionChecker(model), CollisionChecker(model, semantic)
    proposal.apply_to(sampled)
    states = np.random.default_rng(SEED).uniform(-2.5, 2.5, (300, len(sampled.variable_names)))
    states[:, -1] = 0.02  # fingers
    assert sampled.check_batch(states).tolist() == from_srdf.check_batch(states).tolist()


def test_bad_arguments(panda):
    checker = CollisionChecker(panda[0])
    with pytest.raises(ValueError, match="samples must be >= 1"):
        propose_disabled_pairs(checker, samples=0)
    with pytest.raises(ValueError, match="always_fraction must be within"):
        propose_disabled_pairs(checker, always_fraction=1.5)
