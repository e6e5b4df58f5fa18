"""Collision-aware IK (KinematicsPlugin.searchPositionIK with avoid_collisions): solutions are collision
free by an independent check, and failures say why: GOAL_IN_COLLISION with the colliding pairs,
NO_IK_SOLUTION with the remaining pose error or the joint limit violations, TIMED_OUT when the time was too
short for a reachable pose."""
import time

import coal
import numpy as np
import pytest
from reference import PinocchioCollisions
from robots import example_robot_data_dir, example_robot_urdf

from kinematics_py import ErrorCode, KinematicsPlugin, Pose, RobotModel, SemanticModel, Verdict
from kinematics_py.collision.checker import CollisionChecker
from kinematics_py.collision.geometry import Box
from kinematics_py.geometry.transforms import make_transform

SEED = 11
TIMEOUT = 0.2
TARGETS = 12
PANDA_SRDF = "panda_description/srdf/panda.srdf"
READY = [0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785]
DOWN = (1.0, 0.0, 0.0, 0.0)  # tool z axis pointing down (quaternion x, y, z, w)
FINGERS = {"panda_finger_joint1": 0.02}
TABLE_POSE = make_transform(None, (0.6, 0.0, 0.2))
TABLE_SIZE = (0.5, 1.2, 0.04)  # top at z = 0.22
BOX_POSE = make_transform(None, (0.0, 0.0, 0.1))  # held between the fingers, in the hand frame
BOX_SIZE = (0.04, 0.04, 0.1)
TOUCH_LINKS = ("panda_leftfinger", "panda_rightfinger")
#: Successful solutions reach the target to the solver's default thresholds; verified looser here [m, rad].
POSITION_TOLERANCE = 1e-4
ROTATION_TOLERANCE = 1e-3


@pytest.fixture(scope="module")
def setup():
    urdf = example_robot_urdf("panda").read_text()
    srdf = (example_robot_data_dir() / PANDA_SRDF).read_text()
    model = RobotModel.from_urdf_string(urdf)
    checker = CollisionChecker(model, SemanticModel.from_srdf_string(srdf, model))
    checker.scene.add_object("table", [Box(TABLE_SIZE)], pose=TABLE_POSE)
    checker.scene.attach_object("box", "panda_hand", TOUCH_LINKS, shapes=[Box(BOX_SIZE)], pose=BOX_POSE)
    reference = PinocchioCollisions("panda")
    reference.add_world_object("table", coal.Box(*TABLE_SIZE), TABLE_POSE)
    reference.attach("box", "panda_hand", coal.Box(*BOX_SIZE), BOX_POSE, TOUCH_LINKS)
    plugin = KinematicsPlugin()
    assert plugin.initialize(urdf, "arm", "panda_link0", "panda_hand_tcp", robot_description_semantic=srdf)
    plugin.setCollisionChecker(checker)
    return plugin, checker, reference


def joint_values(plugin, solution):
    return {**dict(zip(plugin.getJointNames(), solution)), **FINGERS}


def assert_reaches(plugin, solution, target):
    _, (reached,) = plugin.getPositionFK(["panda_hand_tcp"], solution)
    assert np.allclose(reached.position, target.position, atol=POSITION_TOLERANCE)
    assert abs(abs(np.dot(reached.orientation, target.orientation)) - 1) < ROTATION_TOLERANCE


def test_solutions_over_the_table_are_collision_free_by_an_independent_check(setup):
    plugin, _, reference = setup
    rng = np.random.default_rng(SEED)
    solved, rejected, elapsed = 0, 0, []
    for _ in range(TARGETS):
        target = Pose((rng.uniform(0.4, 0.7), rng.uniform(-0.3, 0.3), rng.uniform(0.28, 0.5)), DOWN)
        started = time.perf_counter()
        result = plugin.searchPositionIK(target, READY, TIMEOUT, avoid_collisions=True, context_state=FINGERS)
        elapsed.append(time.perf_counter() - started)
        assert result.success, result.message
        solved += 1
        rejected += result.diagnostics.in_collision
        assert_reaches(plugin, result.solution, target)
        assert not reference.colliding_pairs(joint_values(plugin, result.solution)), result.solution
    assert solved == TARGETS
    assert float(np.median(elapsed)) < TIMEOUT


def test_colliding_solutions_make_the_search_continue_to_a_free_one(setup):
    """Low over the table, the seed's own branch drives the elbow or wrist into it: rejected, then re-seeded."""
    plugin, checker, reference = setup
    target = Pose((0.45, 0.25, 0.27), DOWN)
    plain = plugin.searchPositionIK(target, READY, TIMEOUT)
    result = plugin.searchPositionIK(target, READY, TIMEOUT, avoid_collisions=True, context_state=FINGERS)
    assert result.success, result.message
    assert not reference.colliding_pairs(joint_values(plugin, result.solution))
    if checker.is_colliding(joint_values(plugin, plain.solution)):
        assert result.diagnostics.in_collision >= 1 and result.solution != plain.solution


def test_pose_reachable_only_in_collision_is_goal_in_collision_naming_the_pairs(setup):
    plugin, _, reference = setup
    target = Pose((0.6, 0.0, 0.15), DOWN)  # 7 cm into the table top
    plain = plugin.searchPositionIK(target, READY, TIMEOUT)
    assert plain.success, "reachable when collisions are ignored"
    assert {frozenset(("box", "table"))} <= reference.colliding_pairs(joint_values(plugin, plain.solution))
    result = plugin.searchPositionIK(target, READY, TIMEOUT, avoid_collisions=True, context_state=FINGERS)
    assert (result.success, result.error_code) == (False, ErrorCode.GOAL_IN_COLLISION)
    assert ("box", "table") in result.diagnostics.colliding_pairs
    assert "box - table" in result.message and "every one was in collision" in result.message
    assert result.diagnostics.reached == result.diagnostics.in_collision > 0


def test_pose_out_of_reach_is_no_ik_solution_with_the_remaining_error(setup):
    plugin, _, _ = setup
    result = plugin.searchPositionIK(Pose((1.6, 0.0, 0.4), DOWN), READY, TIMEOUT, avoid_collisions=True,
                                     context_state=FINGERS)
    assert (result.success, result.error_code) == (False, ErrorCode.NO_IK_SOLUTION)
    assert result.diagnostics.position_error > 0.5
    assert "out of reach" in result.message and f"{result.diagnostics.position_error:.3g} m" in result.message


def test_pose_needing_joint_values_outside_the_limits_names_them(setup):
    plugin, _, _ = setup
    result = plugin.searchPositionIK(Pose((0.0, 0.0, 0.3), DOWN), READY, TIMEOUT, avoid_collisions=True,
                                     context_state=FINGERS)
    assert (result.success, result.error_code) == (False, ErrorCode.NO_IK_SOLUTION), result.message
    violations = result.diagnostics.joint_limit_violations
    assert violations
    for violation in violations:
        assert not violation.lower <= violation.value <= violation.upper
        assert violation.joint in result.message
    assert "not reachable within the joint limits" in result.message


def test_too_short_a_search_for_a_reachable_pose_is_timed_out():
    """One iteration per local search from random starts almost never converges: nothing reaches the pose
    within the time, yet the follow-up search shows a configuration within the limits exists."""
    urdf = example_robot_urdf("panda").read_text()
    srdf = (example_robot_data_dir() / PANDA_SRDF).read_text()
    plugin = KinematicsPlugin()
    assert plugin.initialize(urdf, "arm", "panda_link0", "panda_hand_tcp", robot_description_semantic=srdf,
                             parameters={"max_iterations": 1, "stall_iterations": 0})
    model = RobotModel.from_urdf_string(urdf)
    plugin.setCollisionChecker(CollisionChecker(model, SemanticModel.from_srdf_string(srdf, model)))
    target = Pose((0.5, -0.2, 0.4), DOWN)
    far_seed = [2.5, 1.5, -2.5, -0.5, 2.5, 0.2, -2.5]
    result = plugin.searchPositionIK(target, far_seed, 0.005, avoid_collisions=True, context_state=FINGERS)
    assert (result.success, result.error_code) == (False, ErrorCode.TIMED_OUT), result.message
    assert "ran out while still searching" in result.message and result.diagnostics.reached == 0


def test_a_user_callback_still_applies_and_its_rejections_are_not_called_collisions(setup):
    plugin, _, _ = setup
    target = Pose((0.55, 0.0, 0.4), DOWN)
    seen = []

    def refuse_all(_pose, solution):
        seen.append(solution)
        return Verdict(ErrorCode.GOAL_VIOLATES_PATH_CONSTRAINTS, "not today")

    result = plugin.searchPositionIK(target, READY, 0.05, solution_callback=refuse_all, avoid_collisions=True,
                                     context_state=FINGERS)
    assert seen and (result.success, result.error_code) == (False, ErrorCode.GOAL_VIOLATES_PATH_CONSTRAINTS)
    assert "not today" in result.message


def test_a_checker_for_one_call_sees_that_calls_scene(setup):
    """A request's own scene (here: an extra post where the arm would go) applies to that call only."""
    plugin, checker, _ = setup
    target = Pose((0.55, 0.0, 0.4), DOWN)
    request = checker.for_scene(checker.scene.copy())
    request.scene.add_object("wall", [Box((0.05, 2.0, 2.0))], pose=((0.55, 0.0, 1.0), (0, 0, 0, 1)))
    blocked = plugin.searchPositionIK(target, READY, 0.05, avoid_collisions=True, context_state=FINGERS,
                                      collision_checker=request)
    assert blocked.error_code == ErrorCode.GOAL_IN_COLLISION and "wall" in blocked.message
    free = plugin.searchPositionIK(target, READY, 0.05, avoid_collisions=True, context_state=FINGERS)
    assert free.success


def test_requests_that_cannot_be_checked(setup):
    plugin, checker, _ = setup
    bare = KinematicsPlugin()
    urdf = example_robot_urdf("panda").read_text()
    assert bare.initialize(urdf, "", "panda_link0", "panda_hand_tcp")
    result = bare.searchPositionIK(Pose((0.5, 0.0, 0.4), DOWN), READY, 0.01, avoid_collisions=True)
    assert result.error_code == ErrorCode.COLLISION_CHECKING_UNAVAILABLE and "setCollisionChecker" in result.message
    result = plugin.searchPositionIK(Pose((0.5, 0.0, 0.4), DOWN), READY, 0.01, avoid_collisions=True,
                                     context_state={"panda_finger_joint9": 0.0})
    assert result.error_code == ErrorCode.INVALID_ROBOT_STATE and "panda_finger_joint9" in result.message
    plain = plugin.searchPositionIK(Pose((0.5, 0.0, 0.4), DOWN), READY, 0.01)
    assert plain.success and plain.diagnostics is None, "no collision checks unless asked for"
