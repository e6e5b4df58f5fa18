"""Every programmer error of the kinematic model raises a KinematicsError that says what is wrong."""
import math
import textwrap

import numpy as np
import pytest

from kinematics_py import (
    ChainError,
    JointValueError,
    KinematicsError,
    RobotModel,
    SemanticModel,
    SrdfError,
    UnknownGroupError,
    UnknownJointError,
    UnknownLinkError,
    UrdfError,
)

TWO_LINK_ARM = """<?xml version="1.0"?>
<robot name="two_link">
  <link name="base"/><link name="upper"/><link name="lower"/><link name="tool"/><link name="side"/>
  <link name="body"/>
  <joint name="shoulder" type="revolute"><parent link="base"/><child link="upper"/>
    <axis xyz="0 0 1"/><limit lower="-1.5" upper="1.5" effort="1" velocity="1"/></joint>
  <joint name="elbow" type="revolute"><parent link="upper"/><child link="lower"/>
    <origin xyz="0 0 0.5"/><axis xyz="0 1 0"/><limit lower="0.2" upper="2.0" effort="1" velocity="1"/></joint>
  <joint name="tool_mount" type="fixed"><parent link="lower"/><child link="tool"/><origin xyz="0 0 0.4"/></joint>
  <joint name="side_mount" type="fixed"><parent link="base"/><child link="side"/></joint>
  <joint name="free" type="floating"><parent link="side"/><child link="body"/></joint>
</robot>
"""


@pytest.fixture(scope="module")
def model():
    return RobotModel.from_urdf_string(TWO_LINK_ARM)


def test_every_error_is_a_kinematics_error():
    for error in (UrdfError, SrdfError, UnknownLinkError, UnknownJointError, UnknownGroupError, ChainError,
                  JointValueError):
        assert issubclass(error, KinematicsError)


@pytest.mark.parametrize("text, fragment", [
    ("", "empty"),
    ("<robot name='x'><link name='a'></robot>", "malformed XML"),
    ("<robot name='x'><link name='a'/><link name='b'/></robot>", "exactly one root link"),
    ("<robot name='x'><link name='a'/><joint name='j' type='revolute'><parent link='a'/><child link='zz'/>"
     "<limit lower='0' upper='1' effort='1' velocity='1'/></joint></robot>", "unknown child link 'zz'"),
    ("<robot name='x'><link name='a'/><link name='b'/><joint name='j' type='revolute'><parent link='a'/>"
     "<child link='b'/></joint></robot>", "no <limit>"),
    ("<robot name='x'><link name='a'/><link name='b'/><joint name='j' type='screw'><parent link='a'/>"
     "<child link='b'/></joint></robot>", "(?i)joint.*type.*screw"),
    ("<robot name='x'><link name='a'/><link name='b'/><joint name='j' type='revolute'><parent link='a'/>"
     "<child link='b'/><limit lower='1' upper='-1' effort='1' velocity='1'/></joint></robot>", "lower limit"),
    ("<robot name='x'><link name='a'/><link name='b'/><joint name='j' type='continuous'><parent link='a'/>"
     "<child link='b'/><mimic joint='nope'/></joint></robot>", "mimics unknown joint 'nope'"),
    ("<model name='x'><link name='a'/></model>", "root element is <model>, expected <robot>"),
])
def test_bad_urdf_text_names_the_problem(text, fragment):
    with pytest.raises(UrdfError, match=fragment):
        RobotModel.from_urdf_string(text)


def test_elements_the_kinematics_never_read_do_not_refuse_a_robot():
    """urdf_parser_py alone refuses a <texture> without a file name or a <transmission> without a <type>."""
    model = RobotModel.from_urdf_string(
        "<robot name='x'><material name='m'><texture/></material><link name='a'><visual><geometry><box size='1 1 1'/>"
        "</geometry><material name='m'><texture/></material></visual></link><transmission name='t'/>"
        "<gazebo><anything/></gazebo></robot>")
    assert model.link_names == ("a",)


def test_entity_declarations_are_refused_not_expanded():
    billion_laughs = textwrap.dedent("""\
        <?xml version="1.0"?>
        <!DOCTYPE robot [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]>
        <robot name="&b;"><link name="base"/></robot>""")
    with pytest.raises(UrdfError, match="DOCTYPE"):
        RobotModel.from_urdf_string(billion_laughs)
    external = '<?xml version="1.0"?><!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/passwd">]><robot name="&x;"/>'
    with pytest.raises(UrdfError, match="DOCTYPE"):
        RobotModel.from_urdf_string(external)


def test_missing_files_are_named(tmp_path):
    missing = tmp_path / "nope.urdf"
    with pytest.raises(UrdfError, match="nope.urdf"):
        RobotModel.from_urdf_file(missing)
    with pytest.raises(UrdfError, match="nope.xacro"):
        RobotModel.from_xacro_file(tmp_path / "nope.xacro")


def test_xacro_file_with_mappings(tmp_path):
    path = tmp_path / "arm.urdf.xacro"
    path.write_text(textwrap.dedent("""\
        <?xml version="1.0"?>
        <robot name="arm" xmlns:xacro="http://www.ros.org/wiki/xacro">
          <xacro:arg name="length" default="0.5"/>
          <link name="base"/><link name="tip"/>
          <joint name="slide" type="prismatic"><parent link="base"/><child link="tip"/>
            <origin xyz="0 0 $(arg length)"/><axis xyz="1 0 0"/>
            <limit lower="0" upper="1" effort="1" velocity="1"/></joint>
        </robot>"""))
    default = RobotModel.from_xacro_file(path)
    longer = RobotModel.from_xacro_file(path, mappings={"length": "0.75"})
    assert default.link_poses()["tip"][2, 3] == pytest.approx(0.5)
    assert longer.link_poses({"slide": 0.25})["tip"][:3, 3] == pytest.approx([0.25, 0.0, 0.75])


def test_unknown_link_lists_valid_links(model):
    with pytest.raises(UnknownLinkError, match="'wrist'.*valid links are .*'base'.*'tool'"):
        model.chain("base", "wrist")


def test_unknown_joint_lists_valid_joints(model):
    with pytest.raises(UnknownJointError, match="'knee'.*'elbow'.*'shoulder'"):
        model.link_poses({"knee": 0.1})
    with pytest.raises(UnknownJointError, match="'tool_mount'"):
        model.link_poses({"tool_mount": 0.1})


def test_base_must_be_an_ancestor_of_tip(model):
    with pytest.raises(ChainError, match="'tool' is not an ancestor of tip link 'upper'"):
        model.chain("tool", "upper")
    with pytest.raises(ChainError, match="not an ancestor"):
        model.chain("side", "tool")


def test_floating_joint_cannot_be_in_an_ik_chain(model):
    with pytest.raises(ChainError, match="'free'.*floating"):
        model.chain("base", "body")


@pytest.mark.parametrize("q", [[0.1], [0.1, 0.2, 0.3], [[0.1, 0.2, 0.3]], 0.5])
def test_wrong_joint_vector_length(model, q):
    chain = model.chain("base", "tool")
    with pytest.raises(JointValueError, match=r"takes 2 joint values \['shoulder', 'elbow'\]"):
        chain.forward_kinematics(q)


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_non_finite_joint_values(model, bad):
    chain = model.chain("base", "tool")
    with pytest.raises(JointValueError, match="not finite for \\['elbow'\\]"):
        chain.forward_kinematics([0.1, bad])
    with pytest.raises(JointValueError, match="not finite for \\['elbow'\\]"):
        chain.jacobian(np.array([[0.1, 0.3], [0.1, bad]]))
    with pytest.raises(JointValueError, match="'elbow'.*finite"):
        model.link_poses({"elbow": bad})


def test_joint_value_shape_per_joint_type(model):
    with pytest.raises(JointValueError, match="'free' \\(floating\\) takes 6"):
        model.link_poses({"free": 0.3})
    with pytest.raises(JointValueError, match="'shoulder' \\(revolute\\) takes 1"):
        model.link_poses({"shoulder": [0.1, 0.2]})
    with pytest.raises(JointValueError, match="not a number"):
        model.link_poses({"shoulder": "up"})


def test_missing_joints_default_to_zero_clamped_into_limits(model):
    poses = model.link_poses()
    # elbow's range is [0.2, 2.0], so its default is 0.2, not 0.
    assert np.allclose(poses["tool"], model.link_poses({"elbow": 0.2, "shoulder": 0.0})["tool"])


SRDF_HEAD = '<?xml version="1.0"?><robot name="two_link">'


@pytest.mark.parametrize("body, error, fragment", [
    ("<group name='arm'><chain base_link='base' tip_link='wrist'/></group>", SrdfError, "unknown link 'wrist'"),
    ("<group name='arm'><joint name='knee'/></group>", SrdfError, "unknown joint 'knee'.*'elbow'"),
    ("<group name='arm'><group name='legs'/></group>", SrdfError, "unknown subgroup 'legs'"),
    ("<group name='arm'><chain base_link='tool' tip_link='base'/></group>", SrdfError, "not an ancestor"),
    ("<group_state name='home' group='legs'><joint name='elbow' value='0'/></group_state>", SrdfError,
     "unknown group 'legs'"),
    ("<group name='a'><group name='b'/></group><group name='b'><group name='a'/></group>", SrdfError, "cycle"),
    ("<disable_collisions link1='base' link2='ghost' reason='Never'/>", SrdfError, "unknown link 'ghost'"),
])
def test_bad_srdf_names_the_problem(model, body, error, fragment):
    with pytest.raises(error, match=fragment):
        SemanticModel.from_srdf_string(SRDF_HEAD + body + "</robot>", model)


def test_malformed_srdf_and_unknown_group(model):
    with pytest.raises(SrdfError, match="malformed XML"):
        SemanticModel.from_srdf_string("<robot><group name='arm'></robot>", model)
    semantic = SemanticModel.from_srdf_string(
        SRDF_HEAD + "<group name='arm'><chain base_link='base' tip_link='tool'/></group></robot>", model)
    with pytest.raises(UnknownGroupError, match="'legs'.*valid groups are \\['arm'\\]"):
        semantic.group("legs")
