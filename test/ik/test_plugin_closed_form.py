"""KinematicsPlugin on arms with a closed form: found at initialize, every branch (ALL_DISCRETIZED, all_solutions),
the globally nearest one (speed and distance modes), postures (posture mode, compute_inverse_kinematics,
posture_of), validity callbacks over every branch, batches. Branch sets are checked against EAIK's."""
from __future__ import annotations

import logging
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from robots import bundled_robot

sys.path.insert(0, str(Path(__file__).resolve().parent / "closed_form"))
from closed_form_cases import (  # noqa: E402
    CLOSED_FORM_ROBOTS,
    eaik_robot,
    in_limit_branches,
    pose_errors,
    random_configurations,
)

from kinematics_py import (  # noqa: E402
    DiscretizationMethod,
    ErrorCode,
    KinematicsError,
    KinematicsPlugin,
    KinematicsQueryOptions,
)
from kinematics_py.ik.closed_form import kernels  # noqa: E402

QUERIES = 40
SEED = 20261212
TIMEOUT = 0.05
#: The solution the plugin returns reaches the pose within these [m], [rad].
POSITION_TOLERANCE = 1e-5
ROTATION_TOLERANCE = 1e-5
ALL = KinematicsQueryOptions(discretization_method=DiscretizationMethod.ALL_DISCRETIZED)


def plugin_on(name: str, parameters: dict | None = None) -> KinematicsPlugin:
    path, base, tip, _ = CLOSED_FORM_ROBOTS[name]
    plugin = KinematicsPlugin()
    assert plugin.initialize(Path(path()).read_text(), "arm", base, [tip], parameters=parameters), plugin.last_error
    return plugin


def chain_of(plugin: KinematicsPlugin):
    return plugin.group_setup.problem.chains[0]


def queries(chain, count: int = QUERIES, seed: int = SEED):
    rng = np.random.default_rng(seed)
    answers = random_configurations(chain, rng, count)
    return answers, chain.forward_kinematics(answers), random_configurations(chain, rng, count)


def test_initialize_logs_the_family_found_or_the_numerical_search(caplog):
    with caplog.at_level(logging.INFO, logger="kinematics_py.ik.plugin"):
        plugin_on("ur5")
        plugin = KinematicsPlugin()
        assert plugin.initialize(bundled_robot("panda.urdf").read_text(), "panda_arm", "panda_link0", ["panda_link8"])
    assert "three parallel axes (2-4), axes 5 and 6 intersect" in caplog.text
    assert "numerical search: no closed form" in caplog.text


def test_position_only_groups_keep_the_numerical_search():
    assert plugin_on("ur5", {"position_only_ik": True}).group_setup.closed_form is None


@pytest.mark.parametrize("name", sorted(CLOSED_FORM_ROBOTS))
def test_speed_and_distance_modes_return_the_globally_nearest_solution(name):
    pytest.importorskip("eaik")
    for mode in ("speed", "distance"):
        plugin = plugin_on(name, {"solve_mode": mode})
        chain = chain_of(plugin)
        robot = eaik_robot(plugin.group_setup.closed_form)
        for T, seed in zip(*queries(chain)[1:]):
            result = plugin.searchPositionIK(T, seed.tolist(), TIMEOUT)
            assert result.success, result.message
            q = np.array(result.solution)
            position, rotation = pose_errors(chain, q[None], T)
            assert position[0] <= POSITION_TOLERANCE and rotation[0] <= ROTATION_TOLERANCE
            assert chain.within_limits(q, 1e-9)
            nearest = min(np.linalg.norm(b - seed) for b in in_limit_branches(chain, robot, T, seed))
            assert np.linalg.norm(q - seed) <= nearest + 1e-6


@pytest.mark.parametrize("name", sorted(CLOSED_FORM_ROBOTS))
def test_all_discretized_returns_exactly_the_in_limit_branches(name):
    pytest.importorskip("eaik")
    plugin = plugin_on(name)
    chain = chain_of(plugin)
    robot = eaik_robot(plugin.group_setup.closed_form)
    for T, seed in zip(*queries(chain, seed=SEED + 1)[1:]):
        result = plugin.getPositionIK(T, seed.tolist(), ALL)
        expected = in_limit_branches(chain, robot, T, seed)
        assert result.success and len(result.solutions) == len(expected), result.message
        for branch in expected:
            assert min(np.abs(np.array(result.solutions) - branch).max(axis=1)) < 1e-6
        assert plugin.all_solutions(T, seed.tolist()) == [list(s) for s in result.solutions]


def test_posture_mode_keeps_the_seeds_posture_or_says_the_pose_is_not_reachable_in_it():
    plugin = plugin_on("kr16", {"solve_mode": "posture"})
    chain = chain_of(plugin)
    answers, Ts, _ = queries(chain)
    reference = answers[0]
    posture = plugin.posture_of(reference)
    kept = refused = 0
    for T in Ts:
        result = plugin.searchPositionIK(T, reference.tolist(), TIMEOUT)
        if result.success:
            assert plugin.posture_of(result.solution) == posture
            kept += 1
        else:
            assert result.error_code == ErrorCode.NO_IK_SOLUTION
            assert f"not reachable in the posture of the seed ({posture})" in result.message
            refused += 1
    assert kept and refused


def test_posture_mode_takes_preferred_posture_when_it_is_set():
    chain = chain_of(plugin_on("ur5"))
    answers, Ts, seeds = queries(chain)
    plugin = plugin_on("ur5", {"solve_mode": "posture", "preferred_posture": answers[0].tolist()})
    posture = plugin.posture_of(answers[0])
    for T, seed in zip(Ts, seeds):
        result = plugin.searchPositionIK(T, seed.tolist(), TIMEOUT)
        assert (result.success and plugin.posture_of(result.solution) == posture) or \
            "not reachable in the posture of preferred_posture" in result.message


@pytest.mark.parametrize("name", ["ur5", "kr16", "kinova", "spherical-shoulder"])
def test_compute_inverse_kinematics_stays_in_the_references_posture(name):
    plugin = plugin_on(name)
    chain = chain_of(plugin)
    answers, Ts, _ = queries(chain)
    reference = answers[0]
    # Small moves from the reference keep its posture: every one is solved, near the move.
    moved = np.clip(reference + np.random.default_rng(1).uniform(-0.05, 0.05, (20, 6)), chain.lower, chain.upper)
    solutions = plugin.compute_inverse_kinematics(chain.forward_kinematics(moved), reference.tolist())
    for q, expected in zip(solutions, moved):
        assert q is not None and np.abs(np.array(q) - expected).max() < 1e-6
    posture = plugin.posture_of(reference)
    for q, T in zip(plugin.compute_inverse_kinematics(Ts, reference), Ts):
        if q is not None:
            assert plugin.posture_of(q) == posture
            position, rotation = pose_errors(chain, np.array(q)[None], T)
            assert position[0] <= POSITION_TOLERANCE and rotation[0] <= ROTATION_TOLERANCE
        else:
            assert all(plugin.posture_of(s) != posture for s in plugin.all_solutions(T, reference))


def test_postures_need_a_closed_form():
    plugin = KinematicsPlugin()
    assert plugin.initialize(bundled_robot("panda.urdf").read_text(), "panda_arm", "panda_link0", ["panda_link8"])
    with pytest.raises(KinematicsError, match="postures are the branches of a closed form"):
        plugin.posture_of([0.0] * 7)
    q = [0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785]
    ok, (pose,) = plugin.getPositionFK(["panda_link8"], q)
    (solution,) = plugin.compute_inverse_kinematics([pose], q)
    assert np.abs(np.array(solution) - q).max() < 1e-3


def test_a_callback_sees_every_branch_and_rejecting_all_is_a_definite_answer():
    plugin = plugin_on("ur5")
    chain = chain_of(plugin)
    _, Ts, seeds = queries(chain, 5)
    for T, seed in zip(Ts, seeds):
        branches = plugin.all_solutions(T, seed.tolist())
        seen = []

        def reject(pose, q, seen=seen):
            seen.append(q)
            return ErrorCode.GOAL_IN_COLLISION

        started = time.perf_counter()
        result = plugin.searchPositionIK(T, seed.tolist(), 1.0, solution_callback=reject)
        assert time.perf_counter() - started < 0.5  # not the whole second: no numerical re-seeding
        assert result.error_code == ErrorCode.GOAL_IN_COLLISION and "there are no others" in result.message
        assert seen == branches
        last = branches[-1]
        result = plugin.searchPositionIK(T, seed.tolist(), 1.0, solution_callback=lambda pose, q, last=last: q == last)
        assert result.success and result.solution == last


def test_multi_turn_joints_take_the_equivalent_nearest_the_seed():
    """The bundled UR5's joints range over +-2 pi: a seed a turn away gets the solution a turn away."""
    plugin = KinematicsPlugin()
    assert plugin.initialize(bundled_robot("ur5.urdf").read_text(), "arm", "base_link", ["tool0"])
    chain = chain_of(plugin)
    for turn in (-1, 1):
        q = np.array([-0.3 * turn, -1.0, 1.2, -0.4 * turn, 0.5, -0.6 * turn])
        seed = q + turn * 2 * np.pi * np.array([1, 0, 0, 1, 0, 1]) + 0.01
        result = plugin.searchPositionIK(chain.forward_kinematics(q), seed.tolist(), TIMEOUT)
        assert np.abs(np.array(result.solution) - (seed - 0.01)).max() < 1e-6


def test_a_branch_rejected_by_a_joint_constraint_is_offered_in_its_other_turns():
    """A callback allowing wrist 3 only in [4, 2 pi] (a joint constraint) rejects every branch's representative
    nearest the seed (wrist 3 at -0.6, or 2.54 with the wrist flipped); the seed's branch a turn up (5.68) is valid
    and is the answer, not a definite "none valid"."""
    plugin = KinematicsPlugin()
    assert plugin.initialize(bundled_robot("ur5.urdf").read_text(), "arm", "base_link", ["tool0"])
    chain = chain_of(plugin)
    q = np.array([0.3, -1.0, 1.2, -0.4, 0.5, -0.6])
    seen = []

    def wrist_3_positive(pose, solution):
        seen.append(solution)
        return bool(solution[5] >= 4.0)

    result = plugin.searchPositionIK(chain.forward_kinematics(q), (q + 0.01).tolist(), 1.0,
                                     solution_callback=wrist_3_positive)
    assert result.success, result.message
    assert np.allclose(result.solution, q + np.array([0, 0, 0, 0, 0, 2 * np.pi]), atol=1e-6)
    distances = [np.linalg.norm(np.array(each) - (q + 0.01)) for each in seen]
    assert distances == sorted(distances), "nearest the seed first, over every branch and turn"
    in_collision = plugin.searchPositionIK(chain.forward_kinematics(q), (q + 0.01).tolist(), 1.0,
                                           solution_callback=lambda pose, solution: ErrorCode.GOAL_IN_COLLISION)
    assert in_collision.error_code == ErrorCode.GOAL_IN_COLLISION and "there are no others" in in_collision.message


def test_every_branch_is_checked_before_a_final_goal_in_collision_even_past_the_callers_stop_time():
    """A verdict over every branch says "there are no others": the checks may not end at the caller's stop time
    (a node's request past its answer reserve) after the first branch, as a time-limited search would."""
    from kinematics_py.ik.budget import Budget

    plugin = KinematicsPlugin()
    assert plugin.initialize(bundled_robot("ur5.urdf").read_text(), "arm", "base_link", ["tool0"])
    q = np.array([0.3, -1.0, 1.2, -0.4, 0.5, -0.6])
    T = chain_of(plugin).forward_kinematics(q)
    def checked(stopped: bool) -> int:
        seen = []

        def in_collision(pose, solution):
            seen.append(solution)
            return ErrorCode.GOAL_IN_COLLISION
        result = plugin.searchPositionIK(T, q.tolist(), 1.0, solution_callback=in_collision,
                                         budget=Budget(lambda: stopped))
        assert result.error_code == ErrorCode.GOAL_IN_COLLISION and "there are no others" in result.message
        return len(seen)
    assert checked(stopped=True) == checked(stopped=False) > 1


def test_other_whole_turns_are_tried_within_the_timeout_only():
    """A joint constraint no turn satisfies, 1 ms a check: each of the 8 branches has 63 other turns on the UR5
    (+-2 pi joints); within a 5 ms timeout only a few are tried and the answer says the time ran out (TIMED_OUT,
    not a definite 'no others'); with time for all of them the answer is final."""
    plugin = KinematicsPlugin()
    assert plugin.initialize(bundled_robot("ur5.urdf").read_text(), "arm", "base_link", ["tool0"])
    q = np.array([0.3, -1.0, 1.2, -0.4, 0.5, -0.6])
    T = chain_of(plugin).forward_kinematics(q)

    def checked(timeout: float, check_s: float):
        calls = []

        def shoulder_far_away(pose, solution):
            calls.append(solution)
            time.sleep(check_s)
            return bool(3.0 <= solution[0] <= 3.1)
        return plugin.searchPositionIK(T, q.tolist(), timeout, solution_callback=shoulder_far_away), len(calls)

    result, calls = checked(0.005, 0.001)
    assert result.error_code == ErrorCode.TIMED_OUT and "time ran out" in result.message, result.message
    assert 8 <= calls < 8 * 64 // 4
    result, calls = checked(60.0, 0.0)
    assert result.error_code == ErrorCode.NO_IK_SOLUTION and "there are no others" in result.message
    assert calls == 8 * 64


def test_whole_turn_alternatives_stay_within_the_limits_and_the_consistency_limits():
    from kinematics_py.ik.search import whole_turn_alternatives

    plugin = KinematicsPlugin()
    assert plugin.initialize(bundled_robot("ur5.urdf").read_text(), "arm", "base_link", ["tool0"])
    problem = plugin.group_setup.problem
    q = np.array([0.3, -1.0, 1.2, -0.4, 0.5, -0.6])
    alternatives = whole_turn_alternatives(problem, q, q)
    assert len(alternatives) == 2 ** 6 - 1  # every joint of the UR5 spans +-2 pi: one other turn each
    for other in alternatives:
        assert np.all(other >= problem.lower) and np.all(other <= problem.upper) and not np.allclose(other, q)
        assert np.allclose(np.mod(other - q + np.pi, 2 * np.pi) - np.pi, 0.0, atol=1e-12)
    near = whole_turn_alternatives(problem, q, q, consistency_limits=np.array([7.0, 0, 0, 0, 0, 7.0]))
    assert len(near) == 3


def test_consistency_limits_filter_the_branches():
    plugin = plugin_on("kr16")
    chain = chain_of(plugin)
    answers, Ts, _ = queries(chain, 10)
    for q, T in zip(answers, Ts):
        seed = q + 0.05
        result = plugin.searchPositionIK(T, seed.tolist(), TIMEOUT, consistency_limits=[0.1] * 6)
        assert result.success and np.abs(np.array(result.solution) - seed).max() <= 0.1 + 1e-9
        result = plugin.searchPositionIK(T, seed.tolist(), TIMEOUT, consistency_limits=[0.01] * 6)
        assert not result.success


def test_batch_takes_the_closed_form():
    plugin = plugin_on("kinova")
    chain = chain_of(plugin)
    answers, Ts, seeds = queries(chain, 200)
    results = plugin.searchPositionIKBatch(Ts, seeds.tolist())
    for result, T, seed in zip(results, Ts, seeds):
        assert result.success and "closed form" in result.message
        position, rotation = pose_errors(chain, np.array(result.solution)[None], T)
        assert position[0] <= POSITION_TOLERANCE and rotation[0] <= ROTATION_TOLERANCE
        assert result.solution == plugin.all_solutions(T, seed.tolist())[0]  # the branch nearest the seed


def test_initialize_compiles_every_closed_form_kernel_a_request_uses():
    plugin_on("ur5")
    assert kernels.solve_pose.signatures
    assert kernels.nearest_solution.signatures
