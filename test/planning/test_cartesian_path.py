"""compute_cartesian_path (ROS-free): straight lines followed exactly, in the start configuration's branch; the
path stops at the first step that fails (IK, jump thresholds, validity) and says why; MoveIt's step count and
fraction."""
import math

import numpy as np
import pytest
from robots import bundled_robot, small_urdf

from kinematics_py import ErrorCode, KinematicsPlugin, RobotModel, SemanticModel, Verdict
from kinematics_py.collision.checker import CollisionChecker
from kinematics_py.collision.geometry import Box
from kinematics_py.geometry.poses import transform_from_any_pose
from kinematics_py.geometry.transforms import make_transform, rotation_about_axis
from kinematics_py.planning.cartesian_path import (
    BRANCH_WINDOW_REVOLUTE,
    MIN_STEPS_FOR_JUMP_THRESHOLD,
    CartesianPathError,
    JumpThresholds,
    compute_cartesian_path,
    interpolate_poses,
    relative_jump_cut,
)

START = np.array([0.0, -1.2, 1.5, -1.9, -1.57, 0.0])
#: Every point reaches its pose to the solver's thresholds; verified looser here [m, rad].
POSITION_TOLERANCE = 1e-4
ROTATION_TOLERANCE = 1e-3
#: A 1 cm step moves no UR5 joint more than this [rad] away from singularities.
SMOOTH_STEP = 0.1


@pytest.fixture(scope="module")
def ur5():
    urdf, srdf = bundled_robot("ur5.urdf").read_text(), bundled_robot("ur5.srdf").read_text()
    plugin = KinematicsPlugin()
    assert plugin.initialize(urdf, "ur_manipulator", robot_description_semantic=srdf)
    model = RobotModel.from_urdf_string(urdf)
    return plugin, model, SemanticModel.from_srdf_string(srdf, model)


def tip_pose(plugin, q):
    _, (pose,) = plugin.getPositionFK(plugin.getTipFrames(), q)
    return transform_from_any_pose(pose)


def shifted(T, offset):
    moved = T.copy()
    moved[:3, 3] += offset
    return moved


def assert_on_line(plugin, path, T_from, T_to):
    """Every point reaches its pose, which lies on the segment, with the orientation held."""
    for q, T_requested in zip(path.positions, path.T_base_link):
        T_reached = tip_pose(plugin, q)
        assert np.allclose(T_reached[:3, 3], T_requested[:3, 3], atol=POSITION_TOLERANCE)
        along = T_to[:3, 3] - T_from[:3, 3]
        t = np.dot(T_reached[:3, 3] - T_from[:3, 3], along) / np.dot(along, along)
        assert -1e-9 <= t <= 1 + 1e-6
        assert np.linalg.norm(T_from[:3, 3] + t * along - T_reached[:3, 3]) < POSITION_TOLERANCE
        assert np.allclose(T_reached[:3, :3], T_from[:3, :3], atol=ROTATION_TOLERANCE)


def test_line_is_followed_exactly_and_continuously(ur5):
    plugin = ur5[0]
    T_start = tip_pose(plugin, START)
    T_goal = shifted(T_start, (0.0, 0.305, 0.0))
    path = compute_cartesian_path(plugin, START, [T_goal], 0.01)

    assert path.complete and path.fraction == 1.0
    assert len(path.positions) == 32  # MoveIt: floor(0.305 / 0.01) + 1 steps, plus the start
    assert np.array_equal(path.positions[0], START)
    assert_on_line(plugin, path, T_start, T_goal)
    assert np.abs(np.diff(path.positions, axis=0)).max() < SMOOTH_STEP
    assert np.allclose(tip_pose(plugin, path.positions[-1])[:3, 3], T_goal[:3, 3], atol=POSITION_TOLERANCE)


def test_orientation_is_slerped_and_link_offset_moves_that_link(ur5):
    plugin = ur5[0]
    T_tip_link = make_transform(None, (0.0, 0.0, 0.1))  # a point 10 cm along the tool axis
    T_link = tip_pose(plugin, START) @ T_tip_link
    T_goal = T_link.copy()
    T_goal[:3, :3] = T_link[:3, :3] @ rotation_about_axis(np.array([0.0, 0.0, 1.0]), 0.5)
    path = compute_cartesian_path(plugin, START, [T_goal], 0.01, T_tip_link=T_tip_link)

    assert path.complete
    assert len(path.positions) == 1 + math.floor(0.5 / 0.1) + 1  # rotation steps of at most 10 x max_step rad
    for q in path.positions:  # the link turns about its own axis, staying in place
        assert np.allclose((tip_pose(plugin, q) @ T_tip_link)[:3, 3], T_link[:3, 3], atol=POSITION_TOLERANCE)
    assert np.allclose((tip_pose(plugin, path.positions[-1]) @ T_tip_link)[:3, :3], T_goal[:3, :3],
                       atol=ROTATION_TOLERANCE)


def test_several_waypoints_and_fraction_of_an_unreachable_one(ur5):
    plugin = ur5[0]
    T_start = tip_pose(plugin, START)
    first = shifted(T_start, (0.0, 0.105, 0.0))  # 11 steps
    far = shifted(first, (0.0, 0.0, 2.0))  # beyond the UR5's reach
    path = compute_cartesian_path(plugin, START, [first, far], 0.01)

    assert not path.complete
    assert 0.5 < path.fraction < 1.0  # the first segment, and part of the second
    assert "toward waypoint 1" in path.stop_reason and "no IK solution reaches" in path.stop_reason
    assert np.allclose(path.T_base_link[11], first, atol=1e-9)


def test_validity_rejection_stops_with_its_reason(ur5):
    plugin, model, semantic = ur5
    checker = CollisionChecker(model, semantic)
    T_start = tip_pose(plugin, START)
    checker.scene.add_object("wall", [Box((0.4, 0.02, 0.4))], pose=make_transform(None, T_start[:3, 3] + (0, 0.2, 0)))
    validity = checker.validity(plugin.getJointNames(), None)
    path = compute_cartesian_path(plugin, START, [shifted(T_start, (0.0, 0.3, 0.0))], 0.01, validity=validity)

    assert 0.0 < path.fraction < 0.7
    assert "in collision" in path.stop_reason and "wall" in path.stop_reason
    for q in path.positions:
        assert not checker.is_colliding(dict(zip(plugin.getJointNames(), q)))


def test_absolute_jump_threshold_names_the_joint(ur5):
    plugin = ur5[0]
    T_start = tip_pose(plugin, START)
    path = compute_cartesian_path(plugin, START, [shifted(T_start, (0.0, 0.3, 0.0))], 0.05,
                                  jump_thresholds=JumpThresholds(revolute=0.01))
    assert path.fraction < 1.0 and len(path.positions) == 1
    assert "revolute_jump_threshold 0.01" in path.stop_reason and "joint '" in path.stop_reason


def test_absolute_prismatic_jump_threshold_names_the_joint_and_its_unit():
    """A gantry's x axis moves exactly one step (<= 1 cm) per step of a line along x: a prismatic threshold below it
    stops the path at once, naming the joint in metres; one above lets the whole line through."""
    plugin = KinematicsPlugin()
    assert plugin.initialize(small_urdf("gantry.urdf").read_text(), "gantry", "base_link", "tool"), plugin.last_error
    start = np.array([0.0, 0.0, 0.3, 0.0, 0.2, 0.0])
    goal = shifted(tip_pose(plugin, start), (0.2, 0.0, 0.0))
    stopped = compute_cartesian_path(plugin, start, [goal], 0.01, jump_thresholds=JumpThresholds(prismatic=0.005))
    assert len(stopped.positions) == 1 and stopped.fraction == 0.0
    assert "prismatic_jump_threshold 0.005" in stopped.stop_reason and "joint 'x'" in stopped.stop_reason
    assert " m" in stopped.stop_reason
    through = compute_cartesian_path(plugin, start, [goal], 0.01, jump_thresholds=JumpThresholds(prismatic=0.015))
    steps = np.diff(through.positions[:, 0])
    assert through.complete and np.allclose(steps, 0.2 / len(steps), atol=1e-6) and steps.max() <= 0.01 + 1e-6
    assert np.allclose(through.positions[:, 1:], start[1:], atol=1e-6)


def test_negative_thresholds_disable_like_zero(ur5):
    plugin = ur5[0]
    goal = shifted(tip_pose(plugin, START), (0.0, 0.05, 0.0))
    path = compute_cartesian_path(plugin, START, [goal], 0.01,
                                  jump_thresholds=JumpThresholds(relative=-1.0, revolute=-1.0, prismatic=-1.0))
    assert path.complete


def test_relative_jump_threshold_cuts_the_path_before_the_jump():
    positions = np.array([[0.0, 0.0], [0.1, 0.0], [0.2, 0.0], [0.3, 0.0], [1.5, 0.0], [1.6, 0.0]])
    kept, reason = relative_jump_cut(positions, ["a", "b"], 2.0)
    assert kept == 4 and "joint 'a' moved 1.2" in reason
    assert relative_jump_cut(positions, ["a", "b"], 0.0) == (6, "")


def test_relative_threshold_needs_the_minimum_step_count(ur5):
    plugin = ur5[0]
    T_start = tip_pose(plugin, START)
    path = compute_cartesian_path(plugin, START, [shifted(T_start, (0.0, 0.02, 0.0))], 0.01,
                                  jump_thresholds=JumpThresholds(relative=10.0))
    assert path.complete and len(path.positions) == 1 + MIN_STEPS_FOR_JUMP_THRESHOLD


def test_stays_in_the_start_branch_at_the_reach_boundary(ur5):
    """Along this line the elbow straightens: the rest of the line needs the elbow flipped, so the path stops,
    saying so, instead of flipping."""
    plugin = ur5[0]
    start = np.array([0.0, -1.2, 1.5, -1.9, 0.05, 0.0])
    T_start = tip_pose(plugin, start)
    path = compute_cartesian_path(plugin, start, [shifted(T_start, (0.0, 0.3, 0.0))], 0.01)

    assert 0.8 < path.fraction < 1.0
    assert np.all(path.positions[:, 2] > 0)  # the elbow never changes sign: no elbow flip
    assert np.abs(np.diff(path.positions, axis=0)).max() <= BRANCH_WINDOW_REVOLUTE  # near the wrist singularity
    assert "another IK branch" in path.stop_reason and "joint '" in path.stop_reason


def test_never_crosses_a_wrist_singularity(ur5):
    """The pose of the mirrored wrist (wrist 2 at -0.1 instead of 0.1) is close, but only across the wrist
    singularity: the path stops before it, where MoveIt's would flip the wrist."""
    plugin = ur5[0]
    start = np.array([0.0, -1.2, 1.5, -1.9, 0.1, 0.0])
    goal = tip_pose(plugin, [0.0, -1.2, 1.5, -1.9, -0.1, 0.0])
    path = compute_cartesian_path(plugin, start, [goal], 0.01)

    assert path.fraction < 1.0 and np.all(path.positions[:, 4] > 0)
    assert "across a singularity" in path.stop_reason and "wrist_2_joint" in path.stop_reason


def test_out_of_reach_is_said(ur5):
    plugin = ur5[0]
    path = compute_cartesian_path(plugin, START, [shifted(tip_pose(plugin, START), (0.0, 0.0, 2.0))], 0.05)
    assert "no IK solution reaches the step's pose" in path.stop_reason


def test_validity_success_keeps_every_step(ur5):
    plugin = ur5[0]
    calls = []

    def validity(q):
        calls.append(q)
        return Verdict(ErrorCode.SUCCESS)

    T_start = tip_pose(plugin, START)
    path = compute_cartesian_path(plugin, START, [shifted(T_start, (0.05, 0.0, 0.0))], 0.01, validity=validity)
    assert path.complete and len(calls) == len(path.positions) - 1


@pytest.mark.parametrize("max_step", [0.0, -0.01, math.nan])
def test_max_step_must_be_positive(ur5, max_step):
    with pytest.raises(CartesianPathError, match="max_step"):
        compute_cartesian_path(ur5[0], START, [np.eye(4)], max_step)


def test_bad_start_and_waypoint_are_refused(ur5):
    plugin = ur5[0]
    with pytest.raises(CartesianPathError, match="start needs one finite value per joint"):
        compute_cartesian_path(plugin, START[:3], [np.eye(4)], 0.01)
    with pytest.raises(CartesianPathError, match="waypoint 0"):
        compute_cartesian_path(plugin, START, [np.full((4, 4), np.nan)], 0.01)


def test_no_waypoints_gives_the_start_alone(ur5):
    path = compute_cartesian_path(ur5[0], START, [], 0.01)
    assert path.fraction == 0.0 and len(path.positions) == 1 and path.stop_reason == "no waypoints given"


def test_interpolated_orientations_are_the_slerp():
    from scipy.spatial.transform import Rotation, Slerp

    T_from = make_transform(rotation_about_axis(np.array([1.0, 0.0, 0.0]), 0.3), (0.1, 0.2, 0.3))
    T_to = make_transform(rotation_about_axis(np.array([0.0, 1.0, 1.0]) / math.sqrt(2), 2.5), (0.5, -0.2, 0.1))
    poses = interpolate_poses(T_from, T_to, 7)
    expected = Slerp([0.0, 1.0], Rotation.from_matrix([T_from[:3, :3], T_to[:3, :3]]))(np.arange(1, 8) / 7)
    assert np.allclose([T[:3, :3] for T in poses], expected.as_matrix(), atol=1e-12)
    assert np.allclose(poses[3][:3, 3], T_from[:3, 3] + 4 / 7 * (T_to[:3, 3] - T_from[:3, 3]))
    assert np.allclose(poses[-1], T_to, atol=1e-12)
