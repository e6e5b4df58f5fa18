"""KinematicsPlugin API: set-up, getters, error codes, and every search option of issue 3.

Each test states the property it checks. Solutions are always re-checked independently with the
pinocchio reference (``Verifier`` of test_plugin_conformance): inside the URDF limits (mimic joints
included) and FK within POSITION_TOLERANCE / ROTATION_TOLERANCE of the target. Random draws use
fixed seeds. Robots: the bundled UR5 and Panda (through their SRDF groups) and the edge-case URDFs
in test/data/urdf (continuous, mimic, tree, planar_arm_4dof).
"""
from __future__ import annotations

import math
import threading
import time
from types import SimpleNamespace

import numpy as np
import pinocchio as pin
import pytest
from robots import bundled_robot, small_urdf
from test_plugin_conformance import (
    CASES,
    PANDA_READY,
    POSITION_TOLERANCE,
    ROTATION_TOLERANCE,
    SEED,
    Verifier,
    make_plugin,
    matrix_from_pose,
    pose_error,
    pose_from_matrix,
    shared_plugin,
    verifier_for,
)

from kinematics_py import (
    DiscretizationMethod,
    ErrorCode,
    IKResult,
    KinematicsPlugin,
    KinematicsQueryOptions,
    Pose,
)

#: Search time for single queries in this module [s]: generous, so only a broken search fails.
TIMEOUT = 0.1
#: Search time for queries that are expected to fail or that search until the timeout by design [s].
SHORT_TIMEOUT = 0.05
PANDA = CASES["bundled-panda"]
UR5 = CASES["bundled-ur5"]


def panda_text() -> tuple[str, str]:
    return bundled_robot("panda.urdf").read_text(), bundled_robot("panda.srdf").read_text()


def plugin_for_urdf(name: str, base: str, tips, parameters: dict | None = None) -> tuple[KinematicsPlugin, Verifier]:
    """A plugin on one of test/data/urdf's robots, with its verifier."""
    plugin = KinematicsPlugin()
    assert plugin.initialize(small_urdf(name).read_text(), "group", base, tips, parameters=parameters), \
        plugin.last_error
    return plugin, Verifier(plugin, small_urdf(name))


def random_query(check: Verifier, rng: np.random.Generator) -> tuple[np.ndarray, list[Pose], np.ndarray]:
    """(answer, target poses (one per tip), random seed)."""
    answer = check.random_configuration(rng)
    return answer, check.targets(answer), check.random_configuration(rng)


def assert_valid(check: Verifier, result: IKResult, targets, what: str = "") -> np.ndarray:
    assert result.success and result.error_code == ErrorCode.SUCCESS, f"{what}: {result.error_code!r} {result.message}"
    problems = check.problems(result.solution, targets)
    assert not problems, f"{what}: solution {result.solution}: {problems}"
    return np.array(result.solution)


# ======================================================================================= initialize
def test_initialize_with_an_srdf_group_takes_the_groups_chain():
    urdf, srdf = panda_text()
    plugin = KinematicsPlugin()
    assert plugin.initialize(urdf, "panda_arm", robot_description_semantic=srdf), plugin.last_error
    assert plugin.last_error == ""
    assert plugin.getGroupName() == "panda_arm"
    assert plugin.getBaseFrame() == "panda_link0"
    assert plugin.getTipFrames() == ["panda_link8"] and plugin.getTipFrame() == "panda_link8"
    assert plugin.getJointNames() == [f"panda_joint{i}" for i in range(1, 8)]
    assert plugin.getLinkNames() == [f"panda_link{i}" for i in range(1, 9)]


def test_initialize_with_explicit_base_and_tips_overrides_the_group():
    urdf, srdf = panda_text()
    plugin = KinematicsPlugin()
    assert plugin.initialize(urdf, "panda_arm", "panda_link0", ["panda_hand_tcp"], robot_description_semantic=srdf)
    assert plugin.getTipFrames() == ["panda_hand_tcp"]
    assert plugin.getJointNames() == [f"panda_joint{i}" for i in range(1, 8)]
    no_srdf = KinematicsPlugin()
    assert no_srdf.initialize(urdf, "arm", "panda_link2", "panda_link6"), no_srdf.last_error
    assert no_srdf.getBaseFrame() == "panda_link2" and no_srdf.getTipFrames() == ["panda_link6"]
    assert no_srdf.getJointNames() == ["panda_joint3", "panda_joint4", "panda_joint5", "panda_joint6"]


@pytest.mark.parametrize("arguments, expected_words", [
    pytest.param(dict(group_name="arm_typo", srdf=True), ["arm_typo", "hand", "panda_arm", "panda_arm_hand"],
                 id="unknown-group-lists-groups"),
    pytest.param(dict(group_name="hand", srdf=True), ["hand", "not a serial chain"], id="group-not-a-chain"),
    pytest.param(dict(base_frame="panda_link0", tip_frames=["panda_link_9"]), ["panda_link_9", "panda_link8"],
                 id="unknown-tip-lists-links"),
    pytest.param(dict(base_frame="world_typo", tip_frames=["panda_link8"]), ["world_typo", "panda_link0"],
                 id="unknown-base-lists-links"),
    pytest.param(dict(base_frame="panda_link5", tip_frames=["panda_link2"]), ["panda_link5", "not an ancestor"],
                 id="base-not-ancestor"),
    pytest.param(dict(base_frame="panda_link0", tip_frames=[]), ["tip"], id="no-tip"),
    pytest.param(dict(parameters={"solve_typ": "Distance"}), ["solve_typ", "solve_mode"], id="unknown-parameter"),
    pytest.param(dict(parameters={"solve_mode": "fastest"}), ["solve_mode", "fastest", "speed"],
                 id="bad-parameter-choice"),
    pytest.param(dict(parameters={"kinematics_solver_timeout": -1.0}), ["kinematics_solver_timeout", "-1"],
                 id="negative-timeout-parameter"),
    pytest.param(dict(parameters={"position_threshold": float("nan")}), ["position_threshold"],
                 id="nan-parameter"),
    pytest.param(dict(parameters={"joint_weights": [1.0, 2.0]}), ["joint_weights", "7"],
                 id="joint-weights-wrong-length"),
    pytest.param(dict(urdf="<robot name='broken'>"), ["robot description"], id="malformed-urdf"),
])
def test_initialize_failure_returns_false_and_names_the_problem(arguments, expected_words):
    urdf, srdf = panda_text()
    with_srdf = arguments.get("srdf") or "parameters" in arguments
    plugin = KinematicsPlugin()
    ok = plugin.initialize(arguments.get("urdf", urdf), arguments.get("group_name", "panda_arm"),
                           arguments.get("base_frame", ""), arguments.get("tip_frames", ()),
                           robot_description_semantic=srdf if with_srdf else None,
                           parameters=arguments.get("parameters"))
    assert ok is False
    for word in expected_words:
        assert word in plugin.last_error, f"{word!r} missing from {plugin.last_error!r}"


def test_failed_initialize_leaves_the_plugin_unusable_not_half_set_up():
    urdf, srdf = panda_text()
    plugin = KinematicsPlugin()
    assert not plugin.initialize(urdf, "panda_arm", robot_description_semantic=srdf,
                                 parameters={"solve_mode": "fastest"})
    result = plugin.searchPositionIK(Pose((0.3, 0.0, 0.5)), [0.0] * 7, TIMEOUT)
    assert result.error_code == ErrorCode.FAILURE and "initialize" in result.message


# ========================================================================================== getters
def test_default_timeout_is_one_second_or_the_groups_kinematics_solver_timeout():
    urdf, srdf = panda_text()
    plugin = KinematicsPlugin()
    assert plugin.getDefaultTimeout() == KinematicsPlugin.DEFAULT_TIMEOUT == 1.0
    assert plugin.initialize(urdf, "panda_arm", robot_description_semantic=srdf)
    assert plugin.getDefaultTimeout() == 1.0
    plugin.setDefaultTimeout(0.02)
    assert plugin.getDefaultTimeout() == 0.02
    configured = KinematicsPlugin()
    assert configured.initialize(urdf, "panda_arm", robot_description_semantic=srdf,
                                 parameters={"kinematics_solver_timeout": 0.25, "kinematics_solver": "kinematics_py"})
    assert configured.getDefaultTimeout() == 0.25


def test_search_without_timeout_uses_the_default_timeout():
    """An unreachable target with no timeout given searches for about getDefaultTimeout()."""
    plugin = make_plugin(PANDA)
    plugin.setDefaultTimeout(SHORT_TIMEOUT)
    started = time.perf_counter()
    result = plugin.searchPositionIK(Pose((5.0, 0.0, 0.0)), PANDA_READY)
    elapsed = time.perf_counter() - started
    assert result.error_code == ErrorCode.NO_IK_SOLUTION
    assert SHORT_TIMEOUT * 0.9 <= elapsed <= SHORT_TIMEOUT + 0.5, elapsed


def test_search_discretization_default_set_and_per_joint():
    urdf, srdf = panda_text()
    plugin = KinematicsPlugin()
    assert plugin.initialize(urdf, "panda_arm", robot_description_semantic=srdf)
    assert plugin.getSearchDiscretization() == KinematicsPlugin.DEFAULT_SEARCH_DISCRETIZATION == 0.1
    assert plugin.initialize(urdf, "panda_arm", search_discretization=0.2, robot_description_semantic=srdf)
    assert plugin.getSearchDiscretization() == 0.2
    plugin.setSearchDiscretization(0.3)
    assert plugin.getSearchDiscretization() == 0.3
    plugin.setSearchDiscretization({2: 0.25})
    assert plugin.getSearchDiscretization(2) == 0.25


def test_search_discretization_per_joint_is_a_copy_of_the_callers_mapping():
    """The plugin's state changes only through its setters: editing the mapping given afterwards changes nothing."""
    plugin = make_plugin(PANDA)
    steps = {2: 0.25}
    plugin.setSearchDiscretization(steps)
    steps[2] = 0.5
    steps[3] = 0.5
    assert plugin.getSearchDiscretization(2) == 0.25
    assert plugin.getSearchDiscretization(3) == KinematicsPlugin.DEFAULT_SEARCH_DISCRETIZATION


def test_kinematics_yaml_search_resolution_sets_the_search_discretization():
    """kinematics_solver_search_resolution is the kinematics.yaml key for the discretization (as in MoveIt)."""
    urdf, srdf = panda_text()
    plugin = KinematicsPlugin()
    assert plugin.initialize(urdf, "panda_arm", robot_description_semantic=srdf,
                             parameters={"kinematics_solver_search_resolution": 0.25})
    assert plugin.getSearchDiscretization() == 0.25


def test_redundant_joints_by_index_and_by_name():
    plugin = make_plugin(PANDA)
    assert plugin.getRedundantJoints() == []
    assert plugin.setRedundantJoints([2])
    assert plugin.getRedundantJoints() == [2]
    assert plugin.setRedundantJoints(["panda_joint7", "panda_joint3"])
    assert plugin.getRedundantJoints() == [2, 6]
    assert plugin.setRedundantJoints([])
    assert plugin.getRedundantJoints() == []


@pytest.mark.parametrize("bad", [[7], [-1], ["panda_joint8"], ["panda_finger_joint1"], [True], [2.0], [None]])
def test_bad_redundant_joints_are_rejected_and_change_nothing(bad):
    plugin = make_plugin(PANDA)
    assert plugin.setRedundantJoints([2])
    assert plugin.setRedundantJoints([1] + bad) is False
    assert plugin.getRedundantJoints() == [2]
    assert repr(bad[0]) in plugin.last_error and "panda_joint1" in plugin.last_error


def test_supported_discretization_methods_and_groups():
    plugin = shared_plugin("bundled-panda")
    assert set(plugin.getSupportedDiscretizationMethods()) == set(DiscretizationMethod)
    assert plugin.supportsGroup(plugin.getJointNames())[0]
    supported, reason = plugin.supportsGroup(["panda_joint1", "elbow_joint"])
    assert not supported and "elbow_joint" in reason


# ====================================================================================== error codes
def _good_request(plugin: KinematicsPlugin):
    ok, (pose,) = plugin.getPositionFK(plugin.getTipFrames(), PANDA_READY)
    assert ok
    return pose, list(PANDA_READY)


BAD_REQUESTS = [
    pytest.param(dict(seed=[0.0] * 6), ErrorCode.INVALID_ROBOT_STATE, ["7", "panda_joint1"], id="seed-too-short"),
    pytest.param(dict(seed=[0.0] * 8), ErrorCode.INVALID_ROBOT_STATE, ["7"], id="seed-too-long"),
    pytest.param(dict(seed=[0.0, math.nan] + [0.0] * 5), ErrorCode.INVALID_ROBOT_STATE, ["panda_joint2"],
                 id="seed-nan"),
    pytest.param(dict(seed=[math.inf] + [0.0] * 6), ErrorCode.INVALID_ROBOT_STATE, ["panda_joint1"], id="seed-inf"),
    pytest.param(dict(seed="seven"), ErrorCode.INVALID_ROBOT_STATE, [], id="seed-not-numbers"),
    pytest.param(dict(seed=None), ErrorCode.INVALID_ROBOT_STATE, [], id="seed-none"),
    pytest.param(dict(pose=Pose((math.nan, 0.0, 0.5))), ErrorCode.INVALID_GOAL_CONSTRAINTS, ["finite"],
                 id="pose-nan-position"),
    pytest.param(dict(pose=Pose((0.3, math.inf, 0.5))), ErrorCode.INVALID_GOAL_CONSTRAINTS, ["finite"],
                 id="pose-inf-position"),
    pytest.param(dict(pose=Pose((0.3, 0.0, 0.5), (0.0, math.nan, 0.0, 1.0))), ErrorCode.INVALID_GOAL_CONSTRAINTS,
                 ["finite"], id="pose-nan-quaternion"),
    pytest.param(dict(pose=Pose((0.3, 0.0, 0.5), (0.0, 0.0, 0.0, 0.0))), ErrorCode.INVALID_GOAL_CONSTRAINTS,
                 ["zero"], id="pose-zero-quaternion"),
    pytest.param(dict(pose="not a pose"), ErrorCode.INVALID_GOAL_CONSTRAINTS, [], id="pose-wrong-type"),
    pytest.param(dict(pose=[]), ErrorCode.INVALID_GOAL_CONSTRAINTS, [], id="no-pose"),
    pytest.param(dict(pose="two"), ErrorCode.INVALID_LINK_NAME, ["panda_link8", "one pose per tip"],
                 id="two-poses-for-one-tip"),
    pytest.param(dict(timeout=-0.1), ErrorCode.FAILURE, ["timeout"], id="timeout-negative"),
    pytest.param(dict(timeout=math.nan), ErrorCode.FAILURE, ["timeout"], id="timeout-nan"),
    pytest.param(dict(timeout=math.inf), ErrorCode.FAILURE, ["timeout"], id="timeout-inf"),
    pytest.param(dict(timeout="soon"), ErrorCode.FAILURE, ["timeout"], id="timeout-not-a-number"),
    pytest.param(dict(consistency_limits=[0.1] * 6), ErrorCode.INVALID_ROBOT_STATE, ["consistency_limits"],
                 id="consistency-limits-wrong-length"),
    pytest.param(dict(consistency_limits=[-0.1] * 7), ErrorCode.INVALID_ROBOT_STATE, ["consistency_limits"],
                 id="consistency-limits-negative"),
    pytest.param(dict(consistency_limits=[math.nan] * 7), ErrorCode.INVALID_ROBOT_STATE, ["consistency_limits"],
                 id="consistency-limits-nan"),
]


@pytest.mark.parametrize("bad, code, words", BAD_REQUESTS)
def test_bad_input_gets_its_error_code_and_a_message_never_an_exception(bad, code, words):
    plugin = shared_plugin("bundled-panda")
    pose, seed = _good_request(plugin)
    pose = bad.get("pose", pose)
    if pose == "two":
        pose = [_good_request(plugin)[0]] * 2
    seed = bad.get("seed", seed)
    search = plugin.searchPositionIK(pose, seed, bad.get("timeout", TIMEOUT),
                                     consistency_limits=bad.get("consistency_limits"))
    calls = [search]
    if "timeout" not in bad and "consistency_limits" not in bad:
        calls.append(plugin.getPositionIK(pose, seed))
    for result in calls:
        assert isinstance(result, IKResult)
        assert (result.success, result.solution, result.error_code) == (False, None, code), result
        assert result.message
        for word in words:
            assert word in result.message, f"{word!r} missing from {result.message!r}"


def test_zero_timeout_is_valid_and_tries_the_seed():
    plugin = shared_plugin("bundled-panda")
    pose, seed = _good_request(plugin)
    result = plugin.searchPositionIK(pose, seed, 0.0)
    assert result.success and np.allclose(result.solution, seed, atol=1e-9)


def test_slightly_unnormalised_quaternion_is_accepted_and_normalised():
    plugin = shared_plugin("bundled-panda")
    check = verifier_for(PANDA, plugin)
    rng = np.random.default_rng(SEED)
    for scale in (0.98, 1.02, 1.1):
        answer, (target,), seed = random_query(check, rng)
        scaled = Pose(target.position, tuple(scale * v for v in target.orientation))
        result = plugin.searchPositionIK(scaled, seed.tolist(), TIMEOUT)
        assert_valid(check, result, target, f"quaternion scaled by {scale}")


def test_geometry_msgs_like_pose_objects_are_accepted():
    """Any object with .position.x/.y/.z and .orientation.x/.y/.z/.w works (as geometry_msgs/Pose)."""
    plugin = shared_plugin("bundled-panda")
    check = verifier_for(PANDA, plugin)
    answer, (target,), seed = random_query(check, np.random.default_rng(SEED))
    message = SimpleNamespace(position=SimpleNamespace(**dict(zip("xyz", target.position))),
                              orientation=SimpleNamespace(**dict(zip("xyzw", target.orientation))))
    assert_valid(check, plugin.searchPositionIK(message, seed.tolist(), TIMEOUT), target)


def test_uninitialized_plugin_answers_failure_not_exceptions():
    plugin = KinematicsPlugin()
    pose = Pose((0.3, 0.0, 0.5))
    for result in (plugin.searchPositionIK(pose, [0.0] * 7, TIMEOUT), plugin.getPositionIK(pose, [0.0] * 7)):
        assert (result.success, result.error_code) == (False, ErrorCode.FAILURE)
        assert "initialize" in result.message
    assert plugin.getPositionFK(["panda_link8"], [0.0] * 7) == (False, [])
    (batch,) = plugin.searchPositionIKBatch([pose])
    assert batch.error_code == ErrorCode.FAILURE


@pytest.mark.parametrize("links, joints", [
    pytest.param(["panda_link_9"], PANDA_READY, id="unknown-link"),
    pytest.param(["panda_link8"], PANDA_READY[:6], id="short-joint-vector"),
    pytest.param(["panda_link8"], [math.nan] * 7, id="nan-joints"),
])
def test_position_fk_bad_input_returns_false(links, joints):
    assert shared_plugin("bundled-panda").getPositionFK(links, joints) == (False, [])


# ============================================================================ callbacks and costs
REJECTED_FIRST = 3


def test_solution_callback_rejections_make_the_search_continue_to_another_valid_solution():
    """The first REJECTED_FIRST distinct solutions (and repeats of them) are rejected: the search goes on
    and returns a valid solution different from all of them; the callback sees the request's pose."""
    plugin = shared_plugin("bundled-ur5")
    check = verifier_for(UR5, plugin)
    answer, (target,), seed = random_query(check, np.random.default_rng(SEED))
    rejected, seen_poses = [], []

    def callback(pose, solution):
        seen_poses.append(pose)
        assert len(solution) == 6
        if len(rejected) < REJECTED_FIRST or any(np.abs(np.subtract(solution, r)).max() < 1e-3 for r in rejected):
            if not any(np.abs(np.subtract(solution, r)).max() < 1e-3 for r in rejected):
                rejected.append(list(solution))
            return False
        return ErrorCode.SUCCESS

    result = plugin.searchPositionIK(target, seed.tolist(), TIMEOUT, solution_callback=callback)
    solution = assert_valid(check, result, target)
    assert len(rejected) == REJECTED_FIRST
    for r in rejected:
        assert not check.problems(r, target), "the callback was offered an invalid solution"
        assert np.abs(solution - r).max() >= 1e-3, "returned a rejected solution"
    assert all(pose is target for pose in seen_poses)


@pytest.mark.parametrize("verdict, code", [
    pytest.param(ErrorCode.GOAL_IN_COLLISION, ErrorCode.GOAL_IN_COLLISION, id="error-code"),
    pytest.param(ErrorCode.GOAL_CONSTRAINTS_VIOLATED, ErrorCode.GOAL_CONSTRAINTS_VIOLATED, id="constraints"),
    pytest.param(False, ErrorCode.NO_IK_SOLUTION, id="false"),
])
def test_solution_callback_rejecting_everything_returns_its_error_code(verdict, code):
    plugin = shared_plugin("bundled-ur5")
    check = verifier_for(UR5, plugin)
    answer, (target,), seed = random_query(check, np.random.default_rng(SEED))
    calls = []
    result = plugin.searchPositionIK(target, seed.tolist(), SHORT_TIMEOUT,
                                     solution_callback=lambda pose, q: calls.append(q) or verdict)
    assert (result.success, result.solution, result.error_code) == (False, None, code)
    assert calls and result.message


def squared_distance_recorded(preferred: np.ndarray, costs: dict):
    """A cost function: squared distance to ``preferred``, each value also kept in ``costs``."""
    def cost(pose, solution):
        value = float(np.sum((np.array(solution) - preferred) ** 2))
        costs[tuple(np.round(solution, 9))] = value
        return value
    return cost


def test_cost_function_picks_the_cheapest_of_the_valid_solutions_found():
    plugin = shared_plugin("bundled-ur5")
    check = verifier_for(UR5, plugin)
    rng = np.random.default_rng(SEED)
    for k in range(5):
        answer, (target,), seed = random_query(check, rng)
        costs = {}
        cost = squared_distance_recorded(check.random_configuration(rng), costs)
        result = plugin.searchPositionIK(target, seed.tolist(), TIMEOUT, cost_function=cost)
        solution = assert_valid(check, result, target, f"#{k}")
        assert len(costs) > 1, "the cost function must compare several solutions"
        assert cost(target, solution) == pytest.approx(min(costs.values()), abs=1e-9)


def test_consistency_limits_keep_every_joint_near_the_seed():
    plugin = shared_plugin("bundled-panda")
    check = verifier_for(PANDA, plugin)
    rng = np.random.default_rng(SEED)
    limits = np.full(7, 0.2)
    for k in range(10):
        answer = check.random_configuration(rng)
        (target,) = check.targets(answer)
        lower = np.array([check.reference.joints[n].lower for n in check.joint_names])
        upper = np.array([check.reference.joints[n].upper for n in check.joint_names])
        seed = np.clip(answer + rng.uniform(-0.1, 0.1, 7), lower, upper)
        result = plugin.searchPositionIK(target, seed.tolist(), TIMEOUT, consistency_limits=limits.tolist())
        solution = assert_valid(check, result, target, f"#{k}")
        assert np.all(np.abs(solution - seed) <= limits + 1e-9), (solution - seed).tolist()


def test_consistency_limits_that_exclude_every_solution_give_no_solution():
    plugin = shared_plugin("bundled-ur5")
    check = verifier_for(UR5, plugin)
    answer = np.array([0.3, -1.2, 1.5, -0.8, 1.1, 0.4])
    (target,) = check.targets(answer)
    seed = answer + np.array([0.6, 0.0, 0.0, 0.0, 0.0, 0.0])
    result = plugin.searchPositionIK(target, seed.tolist(), SHORT_TIMEOUT, consistency_limits=[0.1] * 6)
    assert (result.success, result.error_code) == (False, ErrorCode.NO_IK_SOLUTION)
    free = plugin.searchPositionIK(target, seed.tolist(), SHORT_TIMEOUT)
    assert_valid(check, free, target, "without consistency limits")


# ============================================================================== task definitions
def rotation_about_z(angle: float) -> np.ndarray:
    T = np.eye(4)
    T[:3, :3] = pin.utils.rotate("z", angle)
    return T


def test_position_only_ik_reaches_the_position_with_any_orientation():
    plugin = make_plugin(PANDA, {"position_only_ik": True})
    check = verifier_for(PANDA, plugin)
    rng = np.random.default_rng(SEED)
    for k in range(10):
        answer, (target,), seed = random_query(check, rng)
        arbitrary = pin.Quaternion(pin.exp3(rng.uniform(-math.pi, math.pi, 3)))
        request = Pose(target.position, (arbitrary.x, arbitrary.y, arbitrary.z, arbitrary.w))
        result = plugin.searchPositionIK(request, seed.tolist(), TIMEOUT)
        assert result.success, f"#{k}: {result.message}"
        assert not check.limit_violations(result.solution)
        position, _ = check.errors(result.solution, request)
        assert position <= POSITION_TOLERANCE, f"#{k}: position error {position:.3g}"


def test_free_rotation_about_the_tool_axis_keeps_position_and_tool_axis():
    """orientation_axis_weights [1, 1, 0]: the returned tool may be turned about its z axis relative to the
    target, but its position and z axis match; from the unturned answer as seed, that answer is returned."""
    plugin = make_plugin(UR5, {"orientation_axis_weights": [1.0, 1.0, 0.0]})
    check = verifier_for(UR5, plugin)
    rng = np.random.default_rng(SEED)
    for k in range(10):
        answer, (unturned,), seed = random_query(check, rng)
        turned = matrix_from_pose(unturned) @ rotation_about_z(rng.uniform(0.3, 2.0))
        target = pose_from_matrix(turned)
        for start in (seed, answer):
            result = plugin.searchPositionIK(target, start.tolist(), TIMEOUT)
            assert result.success, f"#{k}: {result.message}"
            assert not check.limit_violations(result.solution)
            (T,) = check.tip_poses(result.solution)
            position, _ = pose_error(turned, T)
            residual = pin.log3(turned[:3, :3].T @ T[:3, :3])
            assert position <= POSITION_TOLERANCE, f"#{k}: position error {position:.3g}"
            assert np.linalg.norm(residual[:2]) <= ROTATION_TOLERANCE, f"#{k}: tool axis off, {residual}"
        assert np.abs(np.array(result.solution) - answer).max() <= 1e-6, "the turned answer is already a solution"


def test_free_position_axis_ignores_that_axis():
    """position_axis_weights [1, 1, 0]: a target moved along base z is met by the unmoved answer."""
    plugin = make_plugin(PANDA, {"position_axis_weights": [1.0, 1.0, 0.0]})
    check = verifier_for(PANDA, plugin)
    answer = np.array(PANDA_READY)
    (target,) = check.targets(answer)
    lifted = Pose((target.position[0], target.position[1], target.position[2] + 0.1), target.orientation)
    result = plugin.getPositionIK(lifted, answer.tolist())
    assert result.success and np.abs(np.array(result.solution) - answer).max() <= 1e-9
    result = plugin.searchPositionIK(lifted, PANDA_READY, TIMEOUT)
    (T,) = check.tip_poses(result.solution)
    assert result.success and np.abs(T[:2, 3] - lifted.position[:2]).max() <= POSITION_TOLERANCE
    assert pose_error(matrix_from_pose(lifted), T)[1] <= ROTATION_TOLERANCE


# ================================================================================ solution modes
MODE_TARGETS = 10
#: Share of targets on which a preference mode must do at least as well as speed mode.
MODE_WIN_RATE = 0.7


def manipulability(check: Verifier, q) -> float:
    J = check.reference.jacobian(check.values(q), check.base, check.tips[0], check.joint_names)
    return math.sqrt(max(np.linalg.det(J @ J.T), 0.0))


MODE_MEASURES = {
    "distance": lambda check, q, seed: -float(np.linalg.norm(q - seed)),
    "manipulability": lambda check, q, seed: manipulability(check, q),
    "posture": lambda check, q, seed: -float(np.linalg.norm(q - np.array(PANDA_READY))),
}


@pytest.mark.parametrize("mode", list(MODE_MEASURES))
def test_solve_mode_beats_speed_mode_on_its_own_measure(mode):
    """Over the same targets and seeds, solutions in ``mode`` score better on average than speed mode's
    (closer to the seed / more manipulable / nearer preferred_posture), and at least as well on most."""
    measure = MODE_MEASURES[mode]
    scores = {}
    for name in ("speed", mode):
        plugin = make_plugin(PANDA, {"solve_mode": name, "preferred_posture": PANDA_READY})
        check = verifier_for(PANDA, plugin)
        rng = np.random.default_rng(SEED)
        scores[name] = []
        for _k in range(MODE_TARGETS):
            answer, (target,), seed = random_query(check, rng)
            solution = assert_valid(check, plugin.searchPositionIK(target, seed.tolist(), TIMEOUT), target, name)
            scores[name].append(measure(check, solution, seed))
    better, speed = np.array(scores[mode]), np.array(scores["speed"])
    assert better.mean() > speed.mean(), (better, speed)
    assert np.mean(better >= speed - 1e-9) >= MODE_WIN_RATE, (better, speed)


def test_trac_ik_solve_type_names_are_accepted():
    for alias, mode in [("Speed", "speed"), ("Distance", "distance"), ("Manipulation1", "manipulability")]:
        assert make_plugin(PANDA, {"solve_mode": alias}).parameters.solve_mode == mode


METHOD_TARGETS = 5
#: Time for the slower local methods [s].
METHOD_TIMEOUT = 0.5


@pytest.mark.parametrize("method", ["levenberg_marquardt", "pseudo_inverse", "jacobian_transpose"])
@pytest.mark.parametrize("case_id", ["bundled-ur5", "bundled-panda"])
def test_every_resolution_method_solves(method, case_id):
    """Choosing a method in kinematics.yaml (nothing else changed) still solves every target."""
    plugin = make_plugin(CASES[case_id], {"method": method})
    check = verifier_for(CASES[case_id], plugin)
    rng = np.random.default_rng(SEED)
    failures = []
    for k in range(METHOD_TARGETS):
        answer, (target,), seed = random_query(check, rng)
        result = plugin.searchPositionIK(target, seed.tolist(), METHOD_TIMEOUT)
        if not result.success:
            failures.append(f"#{k}: {result.message}")
            continue
        assert_valid(check, result, target, f"{method} #{k}")
    assert not failures, f"{method} on {case_id}: {len(failures)}/{METHOD_TARGETS} failed: {failures[:2]}"


# =========================================================================== joints and chains
def test_continuous_joints_get_solutions_within_half_a_turn_of_the_seed():
    plugin, check = plugin_for_urdf("continuous.urdf", "base_link", "tool")
    continuous = np.array([check.reference.joints[n].type == "continuous" for n in check.joint_names])
    assert continuous.sum() == 3
    rng = np.random.default_rng(SEED)
    for k in range(20):
        answer, (target,), seed = random_query(check, rng)
        seed = np.where(continuous, seed + rng.choice([-20.0, 0.0, 20.0], seed.shape), seed)
        solution = assert_valid(check, plugin.searchPositionIK(target, seed.tolist(), TIMEOUT), target, f"#{k}")
        offsets = np.abs(solution - seed)[continuous]
        assert np.all(offsets <= math.pi + 1e-9), f"#{k}: continuous joints {offsets} from the seed {seed}"


def test_mimic_joints_are_honoured():
    """A chain through mimic joints: the variables are the masters, and solutions reach the target when the
    mimic joints take multiplier * master + offset (reference FK with mimic values)."""
    plugin, check = plugin_for_urdf("mimic.urdf", "base_link", "hand")
    assert plugin.getJointNames() == ["joint1", "joint2", "joint4"]
    rng = np.random.default_rng(SEED)
    for k in range(20):
        answer, (target,), seed = random_query(check, rng)
        assert_valid(check, plugin.searchPositionIK(target, seed.tolist(), TIMEOUT), target, f"#{k}")


def test_several_tips_at_once():
    """tree.urdf, both arm tips from the torso: one pose per tip, one joint vector reaching both."""
    plugin, check = plugin_for_urdf("tree.urdf", "torso", ["left_tcp", "right_tcp"])
    assert plugin.getTipFrames() == ["left_tcp", "right_tcp"]
    assert set(plugin.getJointNames()) == {"torso_lift_joint", "left_shoulder_joint", "left_upper_arm_joint",
                                           "left_elbow_joint", "right_shoulder_joint", "right_upper_arm_joint",
                                           "right_elbow_joint"}
    rng = np.random.default_rng(SEED)
    for k in range(20):
        answer, targets, seed = random_query(check, rng)
        assert len(targets) == 2
        assert_valid(check, plugin.searchPositionIK(targets, seed.tolist(), TIMEOUT), targets, f"#{k}")
    one = plugin.searchPositionIK(targets[0], seed.tolist(), TIMEOUT)
    assert one.error_code == ErrorCode.INVALID_LINK_NAME


#: Offsets [m] of targets out of the planar arm's plane: within / beyond approximate_solution_position_threshold.
CLOSE_OFFSET = 0.01
FAR_OFFSET = 0.5


def test_four_dof_arm_solves_reachable_poses_and_offers_approximate_ones_only_when_asked():
    """A 4-DOF planar arm cannot leave its plane: a target 1 cm above it is unreachable but close. With
    return_approximate_solution it gets a solution flagged approximate, within the approximate thresholds;
    without, NO_IK_SOLUTION; 0.5 m above is refused either way."""
    plugin, check = plugin_for_urdf("planar_arm_4dof.urdf", "base_link", "tool")
    approximate = KinematicsQueryOptions(return_approximate_solution=True)
    params = plugin.parameters
    rng = np.random.default_rng(SEED)
    for k in range(3):
        answer, (target,), seed = random_query(check, rng)
        assert_valid(check, plugin.searchPositionIK(target, seed.tolist(), TIMEOUT), target, f"#{k} exact")
        exact = plugin.searchPositionIK(target, seed.tolist(), TIMEOUT, options=approximate)
        assert exact.success and not exact.approximate, "reachable: solved exactly even when approximate is allowed"
        close = Pose((target.position[0], target.position[1], target.position[2] + CLOSE_OFFSET), target.orientation)
        result = plugin.searchPositionIK(close, seed.tolist(), SHORT_TIMEOUT, options=approximate)
        assert result.success and result.approximate and result.error_code == ErrorCode.SUCCESS, result.message
        assert not check.limit_violations(result.solution)
        position, rotation = check.errors(result.solution, close)
        assert position <= params.approximate_solution_position_threshold
        assert rotation <= params.approximate_solution_orientation_threshold
        assert position == pytest.approx(CLOSE_OFFSET, abs=POSITION_TOLERANCE), \
            "the best fit is the in-plane projection"
        strict = plugin.searchPositionIK(close, seed.tolist(), SHORT_TIMEOUT)
        assert (strict.success, strict.approximate, strict.error_code) == (False, False, ErrorCode.NO_IK_SOLUTION)
        far = Pose((target.position[0], target.position[1], target.position[2] + FAR_OFFSET), target.orientation)
        refused = plugin.searchPositionIK(far, seed.tolist(), SHORT_TIMEOUT, options=approximate)
        assert (refused.success, refused.error_code) == (False, ErrorCode.NO_IK_SOLUTION)


# ======================================================================= redundancy, discretization
DISCRETIZATION_STEP = 0.5
#: Time for all grid values together [s] (the plugin splits it between them).
DISCRETIZED_SEARCH_TIMEOUT = 0.3

@pytest.mark.parametrize("method", [DiscretizationMethod.ALL_DISCRETIZED, DiscretizationMethod.SOME_DISCRETIZED,
                                    DiscretizationMethod.ALL_RANDOM_SAMPLED, DiscretizationMethod.SOME_RANDOM_SAMPLED])
def test_discretization_over_a_redundant_joint_returns_several_distinct_valid_solutions(method):
    """Panda, joint 3 redundant, step DISCRETIZATION_STEP, the 'ready' pose (at least 5 of the 12 grid values of
    joint 3 admit a solution, as the same arm with joint 3 made fixed shows): several distinct solutions, each
    valid; ALL_DISCRETIZED ones have joint 3 on the grid."""
    plugin = make_plugin(PANDA)
    check = verifier_for(PANDA, plugin)
    assert plugin.setRedundantJoints(["panda_joint3"])
    plugin.setSearchDiscretization(DISCRETIZATION_STEP)
    (target,) = check.targets(PANDA_READY)
    result = plugin.searchPositionIK(target, PANDA_READY, DISCRETIZED_SEARCH_TIMEOUT,
                                     options=KinematicsQueryOptions(discretization_method=method))
    assert_valid(check, result, target)
    solutions = np.array(result.solutions)
    assert len(solutions) >= 3, f"{method.name}: only {len(solutions)} solution(s)"
    for s in solutions:
        assert not check.problems(s, target), s
    gaps = [np.abs(a - b).max() for i, a in enumerate(solutions) for b in solutions[i + 1:]]
    assert min(gaps) >= 1e-3, "solutions must be distinct"
    assert len({round(s[2], 6) for s in solutions}) >= 3, "the redundant joint takes several values"
    if method == DiscretizationMethod.ALL_DISCRETIZED:
        lower = check.reference.joints["panda_joint3"].lower
        grid_offsets = (solutions[:, 2] - lower) / DISCRETIZATION_STEP
        assert np.allclose(grid_offsets, np.round(grid_offsets), atol=1e-6), "joint 3 on the discretization grid"


def test_locked_redundant_joint_stays_at_its_seed_value():
    plugin = make_plugin(PANDA)
    check = verifier_for(PANDA, plugin)
    assert plugin.setRedundantJoints([2])
    rng = np.random.default_rng(SEED)
    for k in range(5):
        answer, (target,), seed = random_query(check, rng)
        seed[2] = answer[2]
        result = plugin.searchPositionIK(target, seed.tolist(), TIMEOUT,
                                         options=KinematicsQueryOptions(lock_redundant_joints=True))
        solution = assert_valid(check, result, target, f"#{k}")
        assert solution[2] == pytest.approx(seed[2], abs=1e-12)


# ============================================================================ threads and batches
THREADS = 8
SEARCHES_PER_THREAD = 20


def test_one_plugin_instance_serves_many_threads_at_once():
    plugin = make_plugin(PANDA)
    check = verifier_for(PANDA, plugin)
    rng = np.random.default_rng(SEED)
    queries = [[random_query(check, rng) for _ in range(SEARCHES_PER_THREAD)] for _ in range(THREADS)]
    results = [[None] * SEARCHES_PER_THREAD for _ in range(THREADS)]
    errors = []
    barrier = threading.Barrier(THREADS)

    def work(t):
        try:
            barrier.wait()
            for k, (_answer, (target,), seed) in enumerate(queries[t]):
                results[t][k] = plugin.searchPositionIK(target, seed.tolist(), 1.0)
        except Exception as error:  # noqa: BLE001 - reported below with the thread number
            errors.append((t, repr(error)))

    threads = [threading.Thread(target=work, args=(t,)) for t in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    for t in range(THREADS):
        for k, (_answer, (target,), _seed) in enumerate(queries[t]):
            assert_valid(check, results[t][k], target, f"thread {t} search {k}")


BATCH_SIZE = 200
BATCH_SUCCESS_RATE = 0.99


def test_batch_of_panda_poses_is_solved_and_verified():
    plugin = make_plugin(PANDA)
    check = verifier_for(PANDA, plugin)
    rng = np.random.default_rng(SEED)
    targets = [check.targets(check.random_configuration(rng))[0] for _ in range(BATCH_SIZE)]
    results = plugin.searchPositionIKBatch(targets)
    assert len(results) == BATCH_SIZE
    solved = 0
    for k, (result, target) in enumerate(zip(results, targets)):
        if result.success:
            solved += 1
            assert_valid(check, result, target, f"batch #{k}")
        else:
            assert result.error_code == ErrorCode.NO_IK_SOLUTION and result.solution is None
    assert solved / BATCH_SIZE >= BATCH_SUCCESS_RATE, f"{solved}/{BATCH_SIZE} solved"


def test_bad_poses_in_a_batch_get_their_own_error_code_and_spoil_nothing():
    plugin = make_plugin(PANDA)
    check = verifier_for(PANDA, plugin)
    rng = np.random.default_rng(SEED)
    targets = [check.targets(check.random_configuration(rng))[0] for _ in range(20)]
    bad = {3: Pose((math.nan, 0.0, 0.5)), 7: Pose((0.3, 0.0, 0.5), (0.0, 0.0, 0.0, 0.0)),
           11: Pose((0.3, math.inf, 0.5)), 15: "not a pose"}
    batch = [bad.get(k, target) for k, target in enumerate(targets)]
    results = plugin.searchPositionIKBatch(batch)
    assert len(results) == len(batch)
    for k, (result, target) in enumerate(zip(results, targets)):
        if k in bad:
            assert (result.success, result.solution, result.error_code) == \
                (False, None, ErrorCode.INVALID_GOAL_CONSTRAINTS), f"#{k}: {result}"
            assert result.message
        else:
            assert_valid(check, result, target, f"batch #{k}")


def test_batch_with_seeds_of_the_wrong_shape_reports_invalid_robot_state():
    plugin = shared_plugin("bundled-panda")
    pose, seed = _good_request(plugin)
    results = plugin.searchPositionIKBatch([pose, pose], [seed])
    assert [r.error_code for r in results] == [ErrorCode.INVALID_ROBOT_STATE] * 2
