"""Which closed-form family a chain belongs to, read from its URDF; None with a reason otherwise."""
import numpy as np
import pytest
from closed_form_cases import CLOSED_FORM_ROBOTS, load_chain
from robots import bundled_robot, example_robot_urdf, small_urdf

from kinematics_py import ChainError, RobotModel
from kinematics_py.ik.closed_form import (
    ChainGeometry,
    ClosedFormFamily,
    ClosedFormSolver,
    FamilyTolerance,
    classification_report,
    classify_chain,
)


@pytest.mark.parametrize("name", sorted(CLOSED_FORM_ROBOTS))
def test_each_robot_has_its_family(name):
    expected_name = CLOSED_FORM_ROBOTS[name][3]
    classification, message = classification_report(load_chain(name))
    assert classification is not None, message
    assert classification.name == expected_name
    assert expected_name in message
    expected_family = ClosedFormFamily.THREE_PARALLEL if "parallel axes" in expected_name \
        else ClosedFormFamily.SPHERICAL_WRIST
    assert classification.family is expected_family
    assert classification.config[2] == (name == "spherical-shoulder")  # solved as the reversed chain


def test_a_robot_model_with_links_is_classified_like_its_chain():
    model = RobotModel.from_urdf_file(example_robot_urdf("ur5"))
    assert classify_chain(model, "base_link", "tool0").name == classify_chain(model.chain("base_link", "tool0")).name


@pytest.mark.parametrize(("path", "base", "tip", "reason"), [
    (lambda: example_robot_urdf("panda"), "panda_link0", "panda_link8", "need 6 joints"),
    (lambda: bundled_robot("panda.urdf"), "panda_link0", "panda_link7", "need 6 joints"),
    (lambda: small_urdf("prismatic.urdf"), "base_link", "tool", "need 6 joints"),
    (lambda: small_urdf("offset_wrist.urdf"), "base_link", "tool0", "axes 4-6 do not meet at one point"),
    (lambda: small_urdf("continuous.urdf"), "base_link", "tool", "need 6 joints"),
], ids=["panda", "panda-bundled", "prismatic", "offset-wrist", "continuous-4dof"])
def test_no_closed_form_comes_with_a_reason(path, base, tip, reason):
    chain = RobotModel.from_urdf_file(path()).chain(base, tip)
    classification, message = classification_report(chain)
    assert classification is None
    assert message.startswith("no closed form") and reason in message
    assert classify_chain(chain) is None
    with pytest.raises(ChainError, match="no closed form"):
        ClosedFormSolver.for_chain(chain)


def test_the_offset_wrist_lists_every_family_tried():
    _, message = classification_report(RobotModel.from_urdf_file(small_urdf("offset_wrist.urdf")).chain("base_link",
                                                                                                           "tool0"))
    for reason in ("axes 4-6 do not meet", "axes 2-4 are not parallel", "axes 1-3 do not meet",
                   "axes 3-5 are not parallel"):
        assert reason in message


@pytest.mark.parametrize(("wrist_offset", "spherical"), [("1e-8", True), ("2e-7", True), ("1e-4", False),
                                                         ("0.001", False)])
def test_rounding_in_the_urdf_is_tolerated_but_real_offsets_are_not(wrist_offset, spherical):
    """The KR 16's axis 6 moved off axis 4 by ``wrist_offset`` metres (its size is ~2.8 m: tolerance 2.8e-6 m): an
    exact spherical wrist when rounding, else its nearest ideal arm (``test_near_ideal``), none with exact families
    only."""
    text = small_urdf("kr16_spherical_wrist.urdf").read_text()
    moved = text.replace('<origin xyz="0 0 0" rpy="0 0 0"/>\n    <axis xyz="-1 0 0"/>',
                         f'<origin xyz="0 0 {wrist_offset}" rpy="0 0 0"/>\n    <axis xyz="-1 0 0"/>')
    assert moved != text
    chain = RobotModel.from_urdf_string(moved).chain("base_link", "tool0")
    assert (classify_chain(chain, tolerance=FamilyTolerance(0.0, 0.0)) is not None) == spherical
    assert classify_chain(chain).exact == spherical


def test_axis_directions_rounded_in_the_urdf_stay_parallel():
    """UR5's parallel axes 2-4 tilted by 5e-7 rad (an rpy written to 6 digits) are still parallel."""
    text = example_robot_urdf("ur5").read_text()
    tilted = text.replace('<origin rpy="0.0 0.0 0.0" xyz="0.0 -0.1197 0.425"/>',
                          '<origin rpy="0.0000005 0.0 0.0" xyz="0.0 -0.1197 0.425"/>')
    assert tilted != text
    chain = RobotModel.from_urdf_string(tilted).chain("base_link", "tool0")
    assert classify_chain(chain).family is ClosedFormFamily.THREE_PARALLEL


def test_the_reversed_chain_of_the_reversed_chain_is_the_chain():
    geometry = ChainGeometry.of_chain(load_chain("kr16"))
    again = geometry.reversed().reversed()
    np.testing.assert_allclose(again.axes, geometry.axes, atol=1e-15)
    np.testing.assert_allclose(again.points, geometry.points, atol=1e-15)
    np.testing.assert_allclose(again.T_zero, geometry.T_zero, atol=1e-15)
