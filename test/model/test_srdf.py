"""The bundled SRDFs resolve to the right joints, links, states and collision pairs; bad SRDFs fail clearly.

Group semantics are MoveIt's: a chain holds the joints from base to tip and their child links; a
link brings its parent joint; a subgroup brings everything of that group.
"""
import pytest
from robots import bundled_robot

from kinematics_py import RobotModel, SemanticModel, SrdfError, UnknownGroupError

PANDA_ARM_JOINTS = tuple(f"panda_joint{i}" for i in range(1, 8))
PANDA_FINGER_JOINTS = ("panda_finger_joint1", "panda_finger_joint2")
#: The Setup Assistant's pairs for panda.urdf's collision primitives (test_bundled_collision.py): adjacent, in contact
#: in the default state, or never in contact.
PANDA_DISABLED_PAIR_COUNT = 35
#: Link pairs that collide in some reachable configuration: never disabled.
PANDA_COLLIDING_PAIRS = [("panda_link0", "panda_link5"), ("panda_link1", "panda_link7"), ("panda_link0", "panda_hand"),
                         ("panda_link2", "panda_leftfinger")]
#: MoveIt writes named-state values with 3-4 decimals; they are read exactly as written.
STATE_TOLERANCE = 0.0
#: The UR5 'up' state puts tool0 straight above base_link: d1 + a2 + a3 + d5 [m] high.
UR5_UP_HEIGHT = 0.089159 + 0.425 + 0.39225 + 0.09465
#: 'up' uses -1.5707 for -pi/2: tool0 drifts ~1e-4 rad * 0.9 m sideways from the vertical.
UR5_UP_HEIGHT_TOLERANCE = 1e-6


@pytest.fixture(scope="module")
def panda_model():
    return RobotModel.from_urdf_file(bundled_robot("panda.urdf"))


@pytest.fixture(scope="module")
def panda(panda_model):
    return SemanticModel.from_srdf_file(bundled_robot("panda.srdf"), panda_model)


@pytest.fixture(scope="module")
def panda_srdf_text():
    return bundled_robot("panda.srdf").read_text()


def test_arm_group_is_the_chain_from_link0_to_link8(panda):
    arm = panda.groups["panda_arm"]
    assert arm.joint_names == PANDA_ARM_JOINTS
    assert (arm.base_link, arm.tip_link) == ("panda_link0", "panda_link8")
    assert arm.link_names == tuple(f"panda_link{i}" for i in range(1, 9))


def test_hand_group_holds_its_links_and_both_finger_joints(panda):
    hand = panda.groups["hand"]
    assert set(hand.link_names) == {"panda_hand", "panda_leftfinger", "panda_rightfinger"}
    assert hand.joint_names == PANDA_FINGER_JOINTS
    assert hand.base_link is None and hand.tip_link is None


def test_arm_hand_group_is_the_union_of_its_subgroups(panda):
    arm_hand = panda.groups["panda_arm_hand"]
    assert set(arm_hand.subgroups) == {"panda_arm", "hand"}
    assert arm_hand.joint_names == PANDA_ARM_JOINTS + PANDA_FINGER_JOINTS
    assert set(arm_hand.link_names) == set(panda.groups["panda_arm"].link_names) | set(panda.groups["hand"].link_names)


def test_group_joints_are_listed_parent_first(panda, panda_model):
    for group in panda.groups.values():
        order = [panda_model.joint_names.index(name) for name in group.joint_names]
        assert order == sorted(order), group.name


@pytest.mark.parametrize("group, state, values", [
    ("panda_arm", "ready", [0, -0.785, 0, -2.356, 0, 1.571, 0.785]),
    ("panda_arm", "extended", [0, 0, 0, -0.0698, 0, 0, 0.785]),
    ("hand", "open", [0.035, 0.035]),
    ("hand", "close", [0, 0]),
])
def test_group_states_hold_the_written_values(panda, group, state, values):
    joints = PANDA_ARM_JOINTS if group == "panda_arm" else PANDA_FINGER_JOINTS
    assert panda.group_states[group][state] == pytest.approx(dict(zip(joints, values)), abs=STATE_TOLERANCE)


def test_arm_states_are_within_the_joint_limits(panda, panda_model):
    chain = panda_model.chain("panda_link0", "panda_link8")
    for name, state in panda.group_states["panda_arm"].items():
        assert chain.within_limits([state[joint] for joint in chain.joint_names]), name


def test_hand_is_the_end_effector_on_link8(panda):
    assert set(panda.end_effectors) == {"hand"}
    hand = panda.end_effectors["hand"]
    assert (hand.parent_link, hand.group, hand.parent_group) == ("panda_link8", "hand", "panda_arm")


def test_disabled_collisions_are_unordered_pairs_of_known_links(panda, panda_model):
    assert len(panda.disabled_collisions) == PANDA_DISABLED_PAIR_COUNT
    for pair in panda.disabled_collisions:
        assert isinstance(pair, frozenset) and len(pair) == 2
        assert pair <= set(panda_model.link_names)
    assert frozenset(("panda_link1", "panda_link0")) in panda.disabled_collisions
    assert panda.is_collision_disabled("panda_rightfinger", "panda_link7")
    assert panda.is_collision_disabled("panda_link7", "panda_rightfinger")


def test_adjacent_links_are_disabled_and_colliding_ones_are_not(panda, panda_model):
    arm_and_hand = set(panda.groups["panda_arm_hand"].link_names) | {"panda_link0"}
    for joint_name in panda_model.joint_names:
        joint = panda_model.joints[joint_name]
        if joint.parent in arm_and_hand and joint.child in arm_and_hand:
            assert panda.is_collision_disabled(joint.parent, joint.child), joint_name
    for pair in PANDA_COLLIDING_PAIRS:
        assert not panda.is_collision_disabled(*pair), pair


def test_ur5_manipulator_group_and_states():
    model = RobotModel.from_urdf_file(bundled_robot("ur5.urdf"))
    ur5 = SemanticModel.from_srdf_file(bundled_robot("ur5.srdf"), model)
    group = ur5.groups["ur_manipulator"]
    assert (group.base_link, group.tip_link) == ("base_link", "tool0")
    assert group.joint_names == ("shoulder_pan_joint", "shoulder_lift_joint", "elbow_joint", "wrist_1_joint",
                                 "wrist_2_joint", "wrist_3_joint")
    assert set(ur5.group_states["ur_manipulator"]) == {"home", "up"}
    assert all(value == 0 for value in ur5.group_states["ur_manipulator"]["home"].values())
    T_base_tool0 = model.chain("base_link", "tool0").forward_kinematics(
        [ur5.group_states["ur_manipulator"]["up"][joint] for joint in group.joint_names])
    assert T_base_tool0[2, 3] == pytest.approx(UR5_UP_HEIGHT, abs=UR5_UP_HEIGHT_TOLERANCE)
    for link_a, link_b in [("base_link", "shoulder_link"), ("wrist_2_link", "wrist_3_link")]:
        assert ur5.is_collision_disabled(link_a, link_b)


def test_unknown_group_lists_the_defined_groups(panda):
    with pytest.raises(UnknownGroupError) as error:
        panda.group("panda_manipulator")
    for name in ("panda_manipulator", "panda_arm", "hand", "panda_arm_hand"):
        assert name in str(error.value)


@pytest.mark.parametrize("old, bad_name, valid_name", [
    ('<link name="panda_leftfinger"/>', "panda_left_finger", "panda_leftfinger"),
    ('tip_link="panda_link8"', "panda_link9", "panda_link8"),
    ('<joint name="panda_finger_joint1"/>', "panda_finger_joint3", "panda_finger_joint1"),
    ('<joint name="panda_joint4" value="-2.356"/>', "panda_elbow", "panda_joint4"),
    ('link1="panda_link6" link2="panda_link7"', "panda_link_7", "panda_link7"),
])
def test_unknown_names_are_reported_with_the_valid_ones(panda_model, panda_srdf_text, old, bad_name, valid_name):
    """The SRDF with one name misspelt fails with an SrdfError naming the bad and the valid names."""
    assert panda_srdf_text.count(old) == 1
    misspelt = old.replace(f'"{valid_name}"', f'"{bad_name}"')
    assert misspelt != old
    with pytest.raises(SrdfError) as error:
        SemanticModel.from_srdf_string(panda_srdf_text.replace(old, misspelt), panda_model)
    assert bad_name in str(error.value) and valid_name in str(error.value)


@pytest.mark.parametrize("old, new, fragment", [
    ('<group name="panda_arm"/>\n', '<group name="panda_leg"/>\n', "panda_leg"),
    ('<group_state name="open" group="hand">', '<group_state name="open" group="gripper">', "gripper"),
    ('parent_group="panda_arm"', 'parent_group="arm"', "'arm'"),
    ('<chain base_link="panda_link0" tip_link="panda_link8"/>',
     '<chain base_link="panda_link8" tip_link="panda_link0"/>', "ancestor"),
])
def test_inconsistent_srdf_is_an_srdf_error(panda_model, panda_srdf_text, old, new, fragment):
    assert panda_srdf_text.count(old) == 1
    with pytest.raises(SrdfError, match=fragment):
        SemanticModel.from_srdf_string(panda_srdf_text.replace(old, new), panda_model)


@pytest.mark.parametrize("text", [
    "",
    '<robot name="panda"><group name="hand"><link name="panda_hand"/></robot>',
    '<robot name="panda"><group name="hand"></group>',
    "not xml at all",
])
def test_malformed_xml_is_an_srdf_error(panda_model, text):
    with pytest.raises(SrdfError):
        SemanticModel.from_srdf_string(text, panda_model)


def test_missing_srdf_file_is_an_srdf_error(panda_model, tmp_path):
    with pytest.raises(SrdfError, match="no_such.srdf"):
        SemanticModel.from_srdf_file(tmp_path / "no_such.srdf", panda_model)


def test_ready_state_points_the_flange_down_in_front_of_the_base(panda, panda_model):
    """The 'ready' state is the documented MoveIt pose: flange pointing down, in front of the base."""
    ready = panda.group_states["panda_arm"]["ready"]
    T_link0_link8 = panda_model.link_poses(ready)["panda_link8"]
    assert T_link0_link8[2, 2] == pytest.approx(-1.0, abs=1e-3)
    assert T_link0_link8[0, 3] > 0.25 and abs(T_link0_link8[1, 3]) < 1e-3
