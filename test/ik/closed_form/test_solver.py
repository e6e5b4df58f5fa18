"""Every branch of every closed-form family: each reaches the pose, the original is among them, limits,
multi-turn and continuous joints, batches, unreachable poses."""
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from closed_form_cases import (
    CLOSED_FORM_ROBOTS,
    POSITION_TOLERANCE,
    ROTATION_TOLERANCE,
    load_chain,
    pose_errors,
    random_configurations,
    same_branch,
    solve_without_limits,
    solver,
    wrapped,
)

from kinematics_py.ik.closed_form import ClosedFormSolver, kernels

CONFIGURATIONS = 150
SEED = 20261130
#: The original configuration is found to this precision [rad] (round-off of the subproblems).
ORIGINAL_TOLERANCE = 1e-6


def check_solutions(chain, solutions, T, seed):
    """Every solution reaches T, is inside the limits, nearest the seed among its equivalents, and they
    are distinct modulo 2 pi and sorted by distance to the seed."""
    position, rotation = pose_errors(chain, solutions, T)
    assert np.all(position <= POSITION_TOLERANCE) and np.all(rotation <= ROTATION_TOLERANCE)
    assert np.all(chain.within_limits(solutions))
    for a in range(len(solutions)):
        for b in range(a):
            assert not same_branch(solutions[a], solutions[b], kernels.DUPLICATE_TOLERANCE)
    for shift in (2 * np.pi, -2 * np.pi):
        moved = solutions + shift
        inside = (moved >= chain.lower) & (moved <= chain.upper)
        assert np.all(~inside | (np.abs(moved - seed) >= np.abs(solutions - seed) - 1e-12))
    distances = np.linalg.norm(solutions - seed, axis=1)
    assert np.all(np.diff(distances) >= 0)


@pytest.mark.parametrize("name", sorted(CLOSED_FORM_ROBOTS))
def test_every_branch_reaches_the_pose_and_the_original_is_among_them(name):
    closed_form = solver(name)
    chain = closed_form.chain
    rng = np.random.default_rng(SEED)
    originals = random_configurations(chain, rng, CONFIGURATIONS)
    seeds = random_configurations(chain, rng, CONFIGURATIONS)
    for q, seed, T in zip(originals, seeds, chain.forward_kinematics(originals)):
        solutions, codes = closed_form.solve(T, seed)
        assert len(solutions) == len(codes) >= 1
        check_solutions(chain, solutions, T, seed)
        assert any(same_branch(q, s, ORIGINAL_TOLERANCE) for s in solutions)
        assert len(set(codes.tolist())) == len(codes)


@pytest.mark.parametrize("name", ["kr16", "z1", "kinova", "puma560"])
def test_branches_outside_the_limits_are_dropped_and_no_other(name):
    """The in-limit solutions are exactly the branches (limits ignored) with an in-limit representative."""
    closed_form = solver(name)
    chain = closed_form.chain
    rng = np.random.default_rng(SEED + 1)
    dropped = 0
    for q in random_configurations(chain, rng, CONFIGURATIONS):
        T = chain.forward_kinematics(q)
        solutions, _ = closed_form.solve(T, q)
        everything = solve_without_limits(closed_form, T, q)
        expected = []
        for branch in everything:
            turns = np.arange(-3, 4)[:, None] * 2 * np.pi
            candidates = branch + turns
            inside = (candidates >= chain.lower - 1e-9) & (candidates <= chain.upper + 1e-9)
            if np.all(np.any(inside, axis=0)):
                expected.append(branch)
        dropped += len(everything) - len(expected)
        assert len(solutions) == len(expected)
        for branch in expected:
            assert any(same_branch(branch, s, ORIGINAL_TOLERANCE) for s in solutions)
    assert dropped > 0, "the limits of this robot should drop some branches"


def test_multi_turn_joints_take_the_value_nearest_the_seed():
    """KR 16 axes 4 and 6 turn +-350 deg: the solution follows the seed's turn while it stays in the limits."""
    closed_form = solver("kr16")
    chain = closed_form.chain
    q = np.array([0.3, -1.2, 0.8, -0.5, 0.9, 0.4])
    T = chain.forward_kinematics(q)
    for turn4, turn6 in [(0, 0), (1, 0), (0, -1), (1, -1)]:
        seed = q + np.array([0, 0, 0, turn4, 0, turn6]) * 2 * np.pi
        solutions, _ = closed_form.solve(T, seed)
        np.testing.assert_allclose(solutions[0], seed, atol=ORIGINAL_TOLERANCE)
        check_solutions(chain, solutions, T, seed)
    # Seeded near +350 deg, joint 4 of the original's branch cannot take the next turn (-0.5 + 4 pi is out).
    seed = np.array([0.3, -1.2, 0.8, 6.0, 0.9, 0.4])
    solutions, _ = closed_form.solve(T, seed)
    check_solutions(chain, solutions, T, seed)
    original = [s for s in solutions if same_branch(s, q, ORIGINAL_TOLERANCE)]
    assert len(original) == 1
    assert np.isclose(original[0][3], -0.5 + 2 * np.pi)


@pytest.mark.parametrize("name", ["kinova", "intersecting-23"])
def test_continuous_joints_stay_within_half_a_turn_of_the_seed(name):
    closed_form = solver(name)
    chain = closed_form.chain
    rng = np.random.default_rng(SEED + 2)
    originals = random_configurations(chain, rng, 50)
    for q in originals:
        seed = q + rng.integers(-3, 4, 6) * 2 * np.pi * chain.is_continuous
        solutions, _ = closed_form.solve(chain.forward_kinematics(q), seed)
        assert np.all(np.abs(solutions - seed)[:, chain.is_continuous] <= np.pi + 1e-12)
        assert np.allclose(solutions[0], seed, atol=ORIGINAL_TOLERANCE) or \
            np.linalg.norm(solutions[0] - seed) <= np.linalg.norm(wrapped(q - seed)) + 1e-9


@pytest.mark.parametrize("name", ["ur5", "kr16", "spherical-shoulder"])
def test_a_batch_gives_what_single_calls_give(name):
    closed_form = solver(name)
    chain = closed_form.chain
    rng = np.random.default_rng(SEED + 3)
    originals = random_configurations(chain, rng, 64)
    seeds = random_configurations(chain, rng, 64)
    T = chain.forward_kinematics(originals)
    q, codes, counts = closed_form.solve_batch(T, seeds)
    for i in range(len(T)):
        single, single_codes = closed_form.solve(T[i], seeds[i])
        assert counts[i] == len(single)
        np.testing.assert_array_equal(q[i, :counts[i]], single)
        np.testing.assert_array_equal(codes[i, :counts[i]], single_codes)
    q_one_seed, _, counts_one_seed = closed_form.solve_batch(T, seeds[0])
    assert np.all(counts_one_seed >= 1)


@pytest.mark.parametrize("name", ["ur5", "kr16", "kinova"])
def test_an_unreachable_pose_has_no_solution(name):
    closed_form = solver(name)
    T = np.eye(4)
    T[:3, 3] = [5.0, 0.0, 0.0]
    solutions, codes = closed_form.solve(T)
    assert solutions.shape == (0, 6) and codes.shape == (0,)


def test_the_default_seed_is_zero_moved_into_the_limits():
    closed_form = solver("kinova")
    chain = closed_form.chain
    q = random_configurations(chain, np.random.default_rng(SEED + 4), 1)[0]
    solutions, _ = closed_form.solve(chain.forward_kinematics(q))
    check_solutions(chain, solutions, chain.forward_kinematics(q), np.clip(np.zeros(6), chain.lower, chain.upper))


def test_a_solver_can_be_built_from_a_classification():
    chain = load_chain("ur10")
    built = ClosedFormSolver.for_chain(chain)
    again = ClosedFormSolver(chain, built.classification)
    assert again.name == built.name == CLOSED_FORM_ROBOTS["ur10"][3]


def test_batches_from_several_threads_at_once_give_the_serial_answers():
    """8 threads calling solve_batch together get what one call gets. (The batch kernel is entered under
    compiled.PARALLEL_KERNEL_LOCK: numba's workqueue threading layer is not thread-safe; omp and tbb are.)"""
    closed_form = solver("ur5")
    rng = np.random.default_rng(SEED + 5)
    T = closed_form.chain.forward_kinematics(random_configurations(closed_form.chain, rng, 256))
    expected_q, _, expected_counts = closed_form.solve_batch(T)
    with ThreadPoolExecutor(max_workers=8) as pool:
        answers = list(pool.map(lambda _: closed_form.solve_batch(T), range(32)))
    for q, _, counts in answers:  # rows past counts[i] are unused scratch
        np.testing.assert_array_equal(counts, expected_counts)
        for i, count in enumerate(counts):
            np.testing.assert_array_equal(q[i, :count], expected_q[i, :count])
