"""KinematicsPlugin on 7-joint arms with a closed form once one joint is locked (KUKA iiwa, Panda): the
discretization methods return, for every value of the redundant joint, exactly the solutions there (checked
against a brute-force numerical enumeration with the joint locked); lock_redundant_joints solves at the seed's
value; validity callbacks see every solution; arms without such a closed form keep the numerical search."""
from __future__ import annotations

import logging
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from robots import example_robot_data_dir, example_robot_urdf

sys.path.insert(0, str(Path(__file__).resolve().parent / "closed_form"))
from test_redundant import REDUNDANT_ROBOTS  # noqa: E402

from kinematics_py import (  # noqa: E402
    DiscretizationMethod,
    ErrorCode,
    KinematicsPlugin,
    KinematicsQueryOptions,
    Pose,
    RobotModel,
    SemanticModel,
)
from kinematics_py.collision.checker import CollisionChecker  # noqa: E402
from kinematics_py.collision.geometry import Box  # noqa: E402
from kinematics_py.geometry.transforms import make_transform  # noqa: E402
from kinematics_py.ik import kernels  # noqa: E402
from kinematics_py.ik.problem import SolverSetup  # noqa: E402
from kinematics_py.ik.search import IkSearch  # noqa: E402

SEED = 20261201
ALL = KinematicsQueryOptions(discretization_method=DiscretizationMethod.ALL_DISCRETIZED)
LOCKED = KinematicsQueryOptions(lock_redundant_joints=True)
TIMEOUT = 1.0
#: Local searches per value of the brute-force enumeration, their thresholds [m], [rad] (tight: near a singularity
#: the pose tolerance leaves the joints loose), and how far apart its distinct solutions are [rad].
ENUMERATION_STARTS = 300
PRECISE = {"position_threshold": 1e-10, "orientation_threshold": 1e-10, "max_iterations": 200}
DISTINCT_TOLERANCE = 1e-3
#: A numerical solution and a closed-form one are the same when they differ by less than this [rad].
MATCH_TOLERANCE = 1e-4


def plugin_on(name: str, parameters: dict | None = None) -> KinematicsPlugin:
    path, base, tip, _, _ = REDUNDANT_ROBOTS[name]
    plugin = KinematicsPlugin()
    assert plugin.initialize(Path(path()).read_text(), "arm", base, [tip], parameters=parameters), plugin.last_error
    return plugin


def random_pose(plugin: KinematicsPlugin, rng):
    problem = plugin.group_setup.problem
    q = rng.uniform(problem.lower, problem.upper)
    return q, problem.chains[0].forward_kinematics(q), rng.uniform(problem.lower, problem.upper)


def numerical_solutions(plugin: KinematicsPlugin, T, seed, joint: int, value: float, rng) -> list[np.ndarray]:
    """Every distinct in-limit solution with ``joint`` at ``value`` that ENUMERATION_STARTS local searches from
    random starts find, each joint's whole-turn equivalent nearest the seed (brute force)."""
    setup = plugin.group_setup
    problem = setup.problem
    solver = SolverSetup.build(problem, setup.solver.params.replace(**PRECISE))
    locked = np.arange(problem.dof) == joint
    found = []
    for _ in range(ENUMERATION_STARTS):
        start = rng.uniform(problem.lower, problem.upper)
        start[joint] = value
        q = IkSearch(solver, T[None], start, timeout=0.0, local_only=True, locked=locked).run().solution
        if q is None:
            continue
        kernels.wrap_near(q, seed, problem.is_revolute, problem.lower, problem.upper)
        if not any(np.abs(q - other).max() < DISTINCT_TOLERANCE for other in found):
            found.append(q)
    return found


@pytest.mark.parametrize("name", sorted(REDUNDANT_ROBOTS))
def test_all_discretized_returns_every_solution_at_every_value_of_the_redundant_joint(name):
    plugin = plugin_on(name)
    joint = REDUNDANT_ROBOTS[name][3]
    problem = plugin.group_setup.problem
    step = plugin.getSearchDiscretization(joint)
    grid = problem.lower[joint] + step * np.arange(int(np.floor((problem.upper[joint] - problem.lower[joint]) / step))
                                                   + 1)
    rng = np.random.default_rng(SEED)
    for _ in range(3):
        q, T, seed = random_pose(plugin, rng)
        result = plugin.getPositionIK(T, seed.tolist(), ALL)
        assert result.success and "closed form" in result.message, result.message
        solutions = np.array(result.solutions)
        assert np.all(np.min(np.abs(solutions[:, joint, None] - grid[None]), axis=1) < 1e-12), "values on the grid"
        for value in rng.choice(np.unique(solutions[:, joint]), 3, replace=False):
            ours = solutions[solutions[:, joint] == value]
            theirs = numerical_solutions(plugin, T, seed, joint, value, rng)
            assert len(theirs) == len(ours), (value, ours, theirs)
            for other in theirs:
                assert np.abs(ours - other).max(axis=1).min() < MATCH_TOLERANCE
        assert plugin.all_solutions(T, seed.tolist()) == [list(s) for s in result.solutions]


def test_set_redundant_joints_chooses_the_joint_discretized_and_others_keep_the_numerical_search():
    plugin = plugin_on("iiwa")
    rng = np.random.default_rng(SEED)
    _, T, seed = random_pose(plugin, rng)
    assert plugin.setRedundantJoints(["iiwa_joint_7"])
    result = plugin.getPositionIK(T, seed.tolist(), ALL)
    assert result.success and "iiwa_joint_7 locked" in result.message, result.message
    assert len({s[6] for s in result.solutions}) > 10
    assert plugin.setRedundantJoints(["iiwa_joint_4"])  # locking the elbow leaves no closed form
    result = plugin.getPositionIK(T, seed.tolist(), ALL)
    assert "closed form" not in result.message


@pytest.mark.parametrize("name", sorted(REDUNDANT_ROBOTS))
def test_a_locked_redundant_joint_gets_the_nearest_solution_at_the_seeds_value(name):
    plugin = plugin_on(name)
    joint = REDUNDANT_ROBOTS[name][3]
    assert plugin.setRedundantJoints([joint])
    rng = np.random.default_rng(SEED)
    for _ in range(10):
        q, T, seed = random_pose(plugin, rng)
        seed[joint] = q[joint]
        result = plugin.searchPositionIK(T, seed.tolist(), TIMEOUT, options=LOCKED)
        assert result.success and "closed form" in result.message, result.message
        solution = np.array(result.solution)
        assert solution[joint] == seed[joint]
        every = plugin.group_setup.redundant_closed_form.solvers[joint].solve(T, seed, seed[joint])
        assert np.linalg.norm(solution - seed) <= np.linalg.norm(every - seed, axis=1).min() + 1e-12


def test_the_validity_callback_sees_every_solution_before_the_pose_is_refused():
    plugin = plugin_on("iiwa")
    _, T, seed = random_pose(plugin, np.random.default_rng(SEED))
    every = plugin.getPositionIK(T, seed.tolist(), ALL).solutions
    seen = []

    def in_collision(pose, solution):
        seen.append(solution)
        return ErrorCode.GOAL_IN_COLLISION

    result = plugin.searchPositionIK(T, seed.tolist(), TIMEOUT, solution_callback=in_collision, options=ALL)
    assert result.error_code == ErrorCode.GOAL_IN_COLLISION
    assert len(seen) == len(every) and f"rejected every one of the {len(every)} solution(s)" in result.message
    accepted = plugin.searchPositionIK(T, seed.tolist(), TIMEOUT, options=ALL,
                                       solution_callback=lambda pose, solution: solution[0] > seed[0])
    assert accepted.success and all(s[0] > seed[0] for s in accepted.solutions)
    assert len(accepted.solutions) == sum(s[0] > seed[0] for s in every)


def test_a_fine_discretization_ends_within_its_timeout_and_says_how_far_it_got():
    plugin = plugin_on("iiwa")
    plugin.setSearchDiscretization(1e-4)
    _, T, seed = random_pose(plugin, np.random.default_rng(SEED))
    plugin.getPositionIK(T, seed.tolist(), ALL)  # the closed forms found, the kernels loaded
    timeout = 0.005
    started = time.perf_counter()
    result = plugin.searchPositionIK(T, seed.tolist(), timeout, options=ALL)
    assert time.perf_counter() - started < timeout + 0.05
    assert result.success and "of 59342 value(s) of iiwa_joint_3" in result.message, result.message


def test_a_seven_joint_arm_without_a_closed_form_keeps_the_numerical_search_and_logs_why(caplog):
    plugin = KinematicsPlugin()
    with caplog.at_level(logging.INFO, logger="kinematics_py.ik.plugin"):
        assert plugin.initialize(example_robot_urdf("baxter").read_text(), "left_arm", "left_arm_mount",
                                 ["left_wrist"])
    problem = plugin.group_setup.problem
    rng = np.random.default_rng(SEED)
    T = problem.chains[0].forward_kinematics(rng.uniform(problem.lower, problem.upper))
    result = plugin.getPositionIK(T, problem.middle.tolist(), ALL)
    assert "numerical search: no closed form with any one joint of" in caplog.text
    assert "closed form" not in result.message


@pytest.mark.parametrize("name", sorted(REDUNDANT_ROBOTS))
def test_distance_mode_returns_the_nearest_solution_over_the_grid_refined(name):
    """No farther from the seed than any solution at the grid's values (ALL_DISCRETIZED's) or at the seed's value,
    and, where rejected by the validity callback, the next nearest."""
    plugin = plugin_on(name, {"solve_mode": "distance"})
    joint = REDUNDANT_ROBOTS[name][3]
    chain = plugin.group_setup.problem.chains[0]
    solver = plugin.group_setup.redundant_closed_form.solvers[joint]
    rng = np.random.default_rng(SEED)
    for _ in range(10):
        _, T, seed = random_pose(plugin, rng)
        result = plugin.searchPositionIK(T, seed.tolist(), TIMEOUT)
        assert result.success and "closed form" in result.message, result.message
        solution = np.array(result.solution)
        assert np.abs(chain.forward_kinematics(solution) - T).max() < 1e-5 and chain.within_limits(solution, 1e-9)
        candidates = np.vstack([np.array(plugin.getPositionIK(T, seed.tolist(), ALL).solutions).reshape(-1, 7),
                                solver.solve(T, seed, seed[joint])])
        assert np.linalg.norm(solution - seed) <= np.linalg.norm(candidates - seed, axis=1).min() + 1e-12
        second = plugin.searchPositionIK(T, seed.tolist(), TIMEOUT, solution_callback=lambda pose, q, first=solution:
                                         bool(np.abs(np.array(q) - first).max() > 1e-9))
        assert second.success and np.linalg.norm(np.array(second.solution) - seed) >= np.linalg.norm(solution - seed)


def test_goal_in_collision_comes_after_every_solution_at_every_value_was_checked():
    """A pose inside a table: ALL_DISCRETIZED with avoid_collisions checks every solution of every value of the
    redundant joint (as many as the poses reaches without the table), then answers GOAL_IN_COLLISION."""
    urdf = example_robot_urdf("panda").read_text()
    srdf = (example_robot_data_dir() / "panda_description/srdf/panda.srdf").read_text()
    model = RobotModel.from_urdf_string(urdf)
    checker = CollisionChecker(model, SemanticModel.from_srdf_string(srdf, model))
    checker.scene.add_object("table", [Box((0.5, 1.2, 0.04))], pose=make_transform(None, (0.6, 0.0, 0.2)))
    plugin = KinematicsPlugin()
    assert plugin.initialize(urdf, "arm", "panda_link0", "panda_hand_tcp", robot_description_semantic=srdf)
    plugin.setCollisionChecker(checker)
    inside = Pose((0.6, 0.0, 0.1), (1.0, 0.0, 0.0, 0.0))  # the tool pointing down, 12 cm below the table top
    seed = [0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785]
    every = plugin.getPositionIK(inside, seed, ALL).solutions
    assert len(every) > 10
    result = plugin.searchPositionIK(inside, seed, TIMEOUT, options=ALL, avoid_collisions=True)
    assert result.error_code == ErrorCode.GOAL_IN_COLLISION, result.message
    assert result.diagnostics.reached == result.diagnostics.in_collision == len(every)
    assert ("panda_hand", "table") in result.diagnostics.colliding_pairs or any(
        "table" in pair for pair in result.diagnostics.colliding_pairs)


def test_a_solution_rejected_by_a_joint_constraint_is_offered_in_its_other_turns():
    """The iiwa with its flange joint given +-2 pi: a callback allowing that joint only in [4, 2 pi] (a joint
    constraint) rejects the representative nearest the seed (-0.6); its turn up (5.68) is valid and is found, in
    every mode (the closed form's ALL_DISCRETIZED and distance mode, the numerical search of speed mode, with and
    without lock_redundant_joints), not a definite "none valid"."""
    path, base, tip, _, _ = REDUNDANT_ROBOTS["iiwa"]
    urdf = Path(path()).read_text()
    joint_7 = urdf.index('<joint name="iiwa_joint_7"')
    limit = urdf.index("<limit ", joint_7)
    urdf = urdf[:limit] + f'<limit lower="{-2 * np.pi}" upper="{2 * np.pi}" effort="40" velocity="2.4"/>' + \
        urdf[urdf.index("/>", limit) + 2:]
    q = np.array([0.3, 0.8, 0.2, -1.2, 0.4, 0.9, -0.6])
    modes = [(ALL, None, "closed form"), (None, {"solve_mode": "distance"}, "closed form"),
             (LOCKED, None, "local search"), (None, None, "local search")]
    for options, parameters, search in modes:
        plugin = KinematicsPlugin()
        assert plugin.initialize(urdf, "arm", base, [tip], parameters=parameters), plugin.last_error
        assert plugin.group_setup.redundant_closed_form is not None
        chain = plugin.group_setup.problem.chains[0]
        T = chain.forward_kinematics(q)
        result = plugin.searchPositionIK(T, (q + 0.01).tolist(), TIMEOUT, options=options,
                                         solution_callback=lambda pose, solution: bool(solution[6] >= 4.0))
        assert result.success, (options, parameters, result.message)
        assert result.solution[6] >= 4.0 and search in result.message, result.message
        assert np.allclose(chain.forward_kinematics(np.array(result.solution)), T, atol=1e-6)
