"""build_robot_setup: the robot set-up kinematics_node serves, built without ROS from URDF, SRDF and settings.

Properties: the groups served (SRDF groups, configured groups, or the one group of base/tip without an SRDF),
and why the others are not; solver settings reach the plugins; unusable inputs raise SetupError with the reason;
a building logs nothing itself (its log lines are returned) and changes nothing it is given; the model and
collision world of a previous set-up are reused for the same descriptions; links rigidly attached to tips.
"""
from __future__ import annotations

import time
from pathlib import Path

import pytest
from robots import TREE_SRDF, chain_urdf, without_collision_geometry

from kinematics_py.collision.geometry import load_mesh
from kinematics_py.errors import KinematicsError
from kinematics_py.model.attached_links import NotAttachedError, attached_tips
from kinematics_py.model.urdf import DescriptionLimits
from kinematics_py.robot_setup import (
    RobotSetup,
    SetupError,
    SetupInputs,
    build_robot_setup,
    complete_robot_setup,
    prepare_robot_setup,
)
from kinematics_py.robots import bundled_robot_path

UR5_URDF = bundled_robot_path("ur5").read_text()
UR5_SRDF = bundled_robot_path("ur5", "srdf").read_text()
TREE_URDF = (Path(__file__).parent / "data" / "urdf" / "tree.urdf").read_text()


def ur5(**fields) -> SetupInputs:
    return SetupInputs(**{"urdf": UR5_URDF, "srdf": UR5_SRDF, "configured_groups": frozenset({"ur_manipulator"}),
                          **fields})


def lines(setup: RobotSetup, level: str) -> list[str]:
    return [line.text for line in setup.log if line.level == level]



@pytest.fixture(scope="module")
def ur5_setup() -> RobotSetup:
    return build_robot_setup(ur5())


# ------------------------------------------------------------------------------------------ groups
def test_the_bundled_ur5_serves_its_configured_group(ur5_setup):
    assert set(ur5_setup.groups) == {"ur_manipulator"} and not ur5_setup.unavailable
    plugin = ur5_setup.groups["ur_manipulator"]
    assert plugin.getBaseFrame() == "base_link" and plugin.getTipFrames() == ["tool0"]
    assert ur5_setup.model_frame == "base_link"
    assert ur5_setup.model_frame_aliases == {"", "world"}, "'' and the fixed virtual joint's parent frame"
    assert ur5_setup.joint_names == ur5_setup.model.single_dof_joint_names and len(ur5_setup.joint_names) == 6
    assert ur5_setup.collision.checker is not None and not ur5_setup.collision.problem
    assert ur5_setup.srdf == UR5_SRDF
    info = lines(ur5_setup, "info")
    assert any(text.startswith("robot 'ur5' (URDF from the parameter): 9 links") for text in info), info
    assert any(text.startswith("group 'ur_manipulator': base 'base_link', tips ['tool0']") for text in info), info
    assert any(text.startswith("collision checking: 7 links with collision geometry") for text in info), info
    assert not lines(ur5_setup, "error") and not lines(ur5_setup, "warning")


def test_with_an_srdf_only_configured_groups_are_served_or_every_group_when_none_is():
    configured = build_robot_setup(SetupInputs(TREE_URDF, TREE_SRDF, configured_groups=frozenset({"arms", "legs"})))
    assert set(configured.groups) == {"arms"}
    assert "the SRDF defines no group 'legs'" in configured.unavailable["legs"]
    assert any("group 'legs' NOT served" in text for text in lines(configured, "error"))
    assert any("SRDF groups ['left_arm', 'left_gripper', 'right_arm'] have no robot_description_kinematics entry"
               in text for text in lines(configured, "info"))

    every = build_robot_setup(SetupInputs(TREE_URDF, TREE_SRDF))
    assert set(every.groups) == {"arms", "left_arm", "right_arm"}
    assert every.groups["arms"].getTipFrames() == ["left_tcp", "right_tcp"], "the subgroups' chains"
    assert "not a serial chain" in every.unavailable["left_gripper"]
    # A group nobody configured (a gripper) is no error.
    assert not lines(every, "error")
    assert any("group 'left_gripper' NOT served" in text for text in lines(every, "info"))


def test_without_an_srdf_one_group_from_base_and_tips():
    setup = build_robot_setup(SetupInputs(TREE_URDF, group_name="both", base_frame="torso",
                                          tip_frames=("left_tcp", "right_tcp")))
    assert set(setup.groups) == {"both"} and setup.semantic is None and setup.model_frame_aliases == {""}
    assert setup.groups["both"].getTipFrames() == ["left_tcp", "right_tcp"]
    unserved = build_robot_setup(SetupInputs(TREE_URDF, group_name="arm", base_frame="torso"))
    assert not unserved.groups
    assert unserved.unavailable == {"arm": "no SRDF, and base_frame/tip_frame are not both set for group 'arm'"}
    assert any("group 'arm' NOT served" in text for text in lines(unserved, "error"))


def test_solver_settings_reach_the_plugins_and_bad_ones_make_the_group_unavailable():
    setup = build_robot_setup(ur5(group_parameters={"ur_manipulator": {"kinematics_solver_timeout": 0.02,
                                                                       "joint_weights": (1.0,) * 6}}))
    plugin = setup.groups["ur_manipulator"]
    assert plugin.getDefaultTimeout() == 0.02
    assert plugin.parameters.joint_weights == (1.0,) * 6
    assert any("kinematics_solver_timeout=0.02" in text and "joint_weights=[1.0, 1.0, 1.0, 1.0, 1.0, 1.0]" in text
               for text in lines(setup, "info"))
    refused = build_robot_setup(ur5(group_parameters={"ur_manipulator": {"joint_weights": (1.0, 2.0)}}))
    assert not refused.groups and "joint_weights needs 6 values" in refused.unavailable["ur_manipulator"]


# ------------------------------------------------------------------------------------------ unusable inputs
@pytest.mark.parametrize("inputs, words", [
    (SetupInputs(""), ["robot_description is empty"]),
    (SetupInputs("<robot name='broken'><link", urdf_source="topic"), ["from the topic", "not a usable URDF"]),
    (ur5(srdf=TREE_SRDF, srdf_required=True), ["robot_description_semantic", "does not fit robot 'ur5'"]),
])
def test_unusable_inputs_raise_setup_error_with_the_reason(inputs, words):
    with pytest.raises(SetupError) as raised:
        build_robot_setup(inputs)
    assert isinstance(raised.value, KinematicsError)
    for word in words:
        assert word in str(raised.value)


def test_an_srdf_that_does_not_fit_is_left_out_unless_it_is_the_change():
    setup = build_robot_setup(ur5(srdf=TREE_SRDF, srdf_source="topic", base_frame="base_link", tip_frames=("tool0",)))
    assert setup.semantic is None and setup.srdf == ""
    assert set(setup.groups) == {"arm"}, "the group of base_frame/tip_frame"
    assert any("robot_description_semantic (from the topic) does not fit robot 'ur5'" in text and
               "continuing without an SRDF" in text for text in lines(setup, "error"))


def test_without_collision_geometry_the_world_says_why():
    setup = build_robot_setup(ur5(urdf=without_collision_geometry(UR5_URDF)))
    assert setup.collision.checker is None
    assert setup.collision.problem == "the robot description has no <collision> geometry"
    assert any("collision checking unavailable for robot 'ur5'" in text for text in lines(setup, "warning"))
    assert set(setup.groups) == {"ur_manipulator"}


# ------------------------------------------------------------------------------------------ purity and reuse
def test_inputs_compare_by_what_the_set_up_is_built_from():
    assert ur5() == ur5(srdf_required=True), "srdf_required only decides what an unfit SRDF does"
    assert ur5() != ur5(group_parameters={"ur_manipulator": {"solve_mode": "distance"}})
    assert ur5() != ur5(srdf_source="topic")


def test_building_changes_nothing_it_is_given(ur5_setup):
    parameters = {"ur_manipulator": {"kinematics_solver_timeout": 0.02}}
    inputs = ur5(group_parameters=parameters)
    rebuilt = build_robot_setup(inputs, ur5_setup)
    assert parameters == {"ur_manipulator": {"kinematics_solver_timeout": 0.02}}
    assert rebuilt.inputs is inputs
    assert ur5_setup.groups["ur_manipulator"].getDefaultTimeout() == 1.0, "the previous set-up is unchanged"
    assert rebuilt.groups["ur_manipulator"] is not ur5_setup.groups["ur_manipulator"]
    with pytest.raises(TypeError):
        rebuilt.groups["other"] = None
    with pytest.raises(AttributeError):
        rebuilt.model = None


def test_the_previous_model_and_collision_world_are_reused_for_the_same_descriptions(ur5_setup):
    same = build_robot_setup(ur5(group_parameters={"ur_manipulator": {"solve_mode": "distance"}}), ur5_setup)
    assert same.model is ur5_setup.model and same.collision is ur5_setup.collision
    assert not any(text.startswith("collision checking") for text in lines(same, "info")), "nothing new to say"
    srdf_without_virtual_joint = UR5_SRDF.replace("<virtual_joint", "<!-- <virtual_joint").replace(
        'child_link="base_link"/>', 'child_link="base_link"/> -->')
    other_srdf = build_robot_setup(ur5(srdf=srdf_without_virtual_joint), ur5_setup)
    assert other_srdf.model is ur5_setup.model and other_srdf.collision is not ur5_setup.collision
    assert other_srdf.model_frame_aliases == {""}
    other_urdf = build_robot_setup(ur5(urdf=without_collision_geometry(UR5_URDF)), ur5_setup)
    assert other_urdf.model is not ur5_setup.model


# ------------------------------------------------------------------------------------------ attached links
def test_links_rigidly_attached_to_a_tip():
    setup = build_robot_setup(SetupInputs(TREE_URDF, TREE_SRDF, configured_groups=frozenset({"left_arm", "arms"})))
    left = _attached(setup, "left_arm")
    # Gripper and forearm are fixed to the tip; the fingers move by joints outside the group (held still).
    attached = ("left_tcp", "left_gripper", "left_forearm", "left_finger_a", "left_finger_b")
    assert dict(left) == dict.fromkeys(attached, "left_tcp")
    for moved_by_the_group in ("torso", "chest", "head", "left_upper_arm", "right_tcp", "right_gripper"):
        assert moved_by_the_group not in left, moved_by_the_group
    arms = _attached(setup, "arms")
    assert arms["left_gripper"] == "left_tcp" and arms["right_finger_b"] == "right_tcp"
    assert "head" not in arms
    assert setup.groups["arms"].attached_tip("right_finger_b") == "right_tcp"
    with pytest.raises(NotAttachedError, match="right_tcp"):
        setup.groups["arms"].attached_tip("head")


def _attached(setup, group: str) -> dict[str, str]:
    plugin = setup.groups[group]
    return attached_tips(setup.model, plugin.getJointNames(), plugin.getTipFrames())


# ------------------------------------------------------------------------------------------ size and limits
#: A 2,000-link chain and its 1,999-joint group take about 1 s on a quiet 2-CPU machine (bench/robot_setup.py);
#: the bound leaves room for a loaded one.
LONG_CHAIN_LINKS = 2000
LONG_CHAIN_BOUND_S = 20.0


def test_a_2000_link_chain_is_served_with_its_whole_group_and_collision_boxes():
    start = time.perf_counter()
    setup = build_robot_setup(SetupInputs(chain_urdf(LONG_CHAIN_LINKS, collision=True), base_frame="l0",
                                          tip_frames=(f"l{LONG_CHAIN_LINKS - 1}",)))
    assert time.perf_counter() - start < LONG_CHAIN_BOUND_S
    assert len(setup.groups["arm"].getJointNames()) == LONG_CHAIN_LINKS - 1
    assert len(setup.collision.checker.link_geometry) == LONG_CHAIN_LINKS
    assert len(setup.collision.checker.disabled_pairs) == LONG_CHAIN_LINKS - 1, "adjacent links"
    assert all(len(line.text) < 2000 for line in setup.log), "log lines name the first joints only"


def test_the_build_of_4x_the_links_takes_about_4x_as_long():
    inputs = [SetupInputs(chain_urdf(links), base_frame="l0", tip_frames=(f"l{links - 1}",))
              for links in (LONG_CHAIN_LINKS // 4, LONG_CHAIN_LINKS)]
    build_robot_setup(inputs[0])  # the compiled kernels loaded
    runs = ([], [])
    for _ in range(3):  # alternately, so that other processes' load falls on both sizes alike
        for each, times in zip(inputs, runs):
            start = time.perf_counter()
            build_robot_setup(each)
            times.append(time.perf_counter() - start)
    ratio = min(runs[1]) / min(runs[0])
    assert ratio < 8.0, f"{runs}: 4x the links took {ratio:.1f}x as long (quadratic: 16x)"


@pytest.mark.parametrize("limits, words", [
    (DescriptionLimits(max_links=5), ["not a usable URDF", "9 <link> elements, more than max_links = 5"]),
    (DescriptionLimits(max_joints=5), ["8 <joint> elements, more than max_joints = 5"]),
    (DescriptionLimits(max_bytes=100), ["more than max_description_bytes = 100"]),
])
def test_a_description_over_the_limits_is_refused_with_the_reason(limits, words):
    with pytest.raises(SetupError) as raised:
        prepare_robot_setup(ur5(limits=limits))
    for word in words:
        assert word in str(raised.value)


def test_a_link_with_more_mesh_triangles_than_the_limit_leaves_collision_checking_unavailable(tmp_path):
    import trimesh

    stl = tmp_path / "scanned.stl"
    trimesh.creation.icosphere(subdivisions=3, radius=0.05).export(stl)
    triangles = len(load_mesh(str(stl)).triangles)
    urdf = UR5_URDF.replace("</robot>", f'<link name="scanned"><collision><geometry><mesh filename="{stl}"/>'
                                        f'</geometry></collision></link><joint name="scanned_joint" type="fixed">'
                                        f'<parent link="tool0"/><child link="scanned"/></joint></robot>')
    capped = build_robot_setup(ur5(urdf=urdf, limits=DescriptionLimits(max_mesh_triangles=triangles - 1)))
    assert capped.collision.checker is None and set(capped.groups) == {"ur_manipulator"}
    assert (f"link 'scanned': its meshes have {triangles} triangles, more than max_mesh_triangles = "
            f"{triangles - 1}") in capped.collision.problem
    assert build_robot_setup(ur5(urdf=urdf, limits=DescriptionLimits(max_mesh_triangles=triangles))).collision.checker


def test_prepare_decides_and_complete_adds_the_collision_world(ur5_setup):
    prepared = prepare_robot_setup(ur5())
    assert prepared.collision is None and set(prepared.groups) == {"ur_manipulator"}
    assert not any(text.startswith("collision checking") for text in lines(prepared, "info"))
    completed = complete_robot_setup(prepared)
    assert completed.collision.checker is not None and completed.groups is prepared.groups
    assert any(text.startswith("collision checking") for text in lines(completed, "info"))
    assert complete_robot_setup(completed) is completed
    reused = complete_robot_setup(prepare_robot_setup(ur5(), ur5_setup), ur5_setup)
    assert reused.collision is ur5_setup.collision
