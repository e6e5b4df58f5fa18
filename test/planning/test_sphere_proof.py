"""The spheres' proof of a path (``planning.sphere_proof``): what it proves is free for the exact checker at 0.005 rad
per joint, points and steps between them; where the spheres touch (or leave pairs to the exact checker: a UR5's
coarse wrist pairs) the answer is the exact checker's, so spheres saying blocked never fail a path the exact
geometry passes."""
from __future__ import annotations

import numpy as np
import pytest
from robots import bundled_robot
from test_sphere_search import BOXES, TIME, panda, problems

from kinematics_py import RobotModel, SemanticModel
from kinematics_py.collision.checker import CollisionChecker
from kinematics_py.collision.geometry import Box
from kinematics_py.collision.sphere_kernels import (
    SphereTable,
    first_touching_step,
    motion_scratch,
    place_chain,
    workspace,
)
from kinematics_py.collision.spheres import shape_polytope
from kinematics_py.collision.witness_points import first_proven_colliding, proven_colliding
from kinematics_py.geometry.transforms import make_transform
from kinematics_py.planning import proof_blocks, sphere_pairs
from kinematics_py.planning import sphere_proof as sphere_proof_module
from kinematics_py.planning.goals import JointGoal
from kinematics_py.planning.motion import plan
from kinematics_py.planning.ompl_search import DEFAULT_PLANNER, search_path
from kinematics_py.planning.options import PlanOptions
from kinematics_py.planning.path_check import (
    FINE_RESOLUTION,
    SEARCH_RESOLUTION,
    PathCheck,
    densify,
    segment_states,
    steps_between,
)
from kinematics_py.planning.sphere_pairs import body_names
from kinematics_py.planning.sphere_proof import (
    chain_tables,
    checked_path,
    kernel_tuples,
    moving_table,
    segment_free,
    sphere_proof,
)

SEED = 30
CHECK_STEP = 0.005
PATHS = 12


def exact_colliding(checker, names, states) -> np.ndarray:
    return checker.check_batch(np.atleast_2d(states), joint_names=names)


def random_waypoints(checker, names, count, rng, free_ends=True) -> list[np.ndarray]:
    """Sets of 3 waypoints within the limits (and [-pi, pi]); with ``free_ends`` free for the exact checker."""
    joints = checker.model.joints
    lower = np.array([max(joints[n].lower, -np.pi) for n in names])
    upper = np.array([min(joints[n].upper, np.pi) for n in names])
    found = []
    while len(found) < count:
        waypoints = lower + rng.random((3, len(names))) * (upper - lower)
        if free_ends and exact_colliding(checker, names, waypoints).any():
            continue
        found.append(waypoints)
    return found


def random_paths(checker, names, count, rng, free_ends=True):
    """``random_waypoints``' sets densified to FINE_RESOLUTION."""
    return [densify(waypoints, FINE_RESOLUTION)
            for waypoints in random_waypoints(checker, names, count, rng, free_ends)]


def assert_checked_path_is_exact(check: PathCheck, path: np.ndarray) -> None:
    """``checked_path``'s answer is the exact checker's: the point it calls invalid collides, a colliding path is
    invalid, and a path it proves is free at CHECK_STEP."""
    invalid, unproven = checked_path(check, path)
    exact = exact_colliding(check.checker, check.joint_names, path)
    assert (invalid >= 0) == exact.any()
    if invalid >= 0:
        assert exact[invalid]
    elif unproven == -1:
        assert not exact_colliding(check.checker, check.joint_names, densify(path, CHECK_STEP)).any()


@pytest.fixture(scope="module")
def table_wall():
    return panda(BOXES)


def ur5_table_wall() -> tuple[CollisionChecker, tuple[str, ...]]:
    urdf, srdf = bundled_robot("ur5.urdf").read_text(), bundled_robot("ur5.srdf").read_text()
    model = RobotModel.from_urdf_string(urdf)
    checker = CollisionChecker(model, SemanticModel.from_srdf_string(srdf, model))
    for name, (centre, size) in BOXES.items():
        checker.scene.add_object(name, [Box(size)], pose=make_transform(None, centre))
    names = tuple(n for n in model.variable_names if n in (
        "shoulder_pan_joint", "shoulder_lift_joint", "elbow_joint", "wrist_1_joint", "wrist_2_joint", "wrist_3_joint"))
    return checker, names


def ur5_on_a_floor() -> tuple[CollisionChecker, tuple[str, ...]]:
    """The UR5 on a floor whose top is 1 mm below its base (bench/motion_planning.py's cage without the bars)."""
    checker, names = ur5_table_wall()
    for name in BOXES:
        checker.scene.remove_object(name)
    checker.scene.add_object("floor", [Box((1.6, 1.6, 0.02))], pose=make_transform(None, (0.0, 0.0, -0.011)))
    return checker, names


def test_a_world_pair_whose_spheres_always_touch_is_left_to_the_exact_checker_and_answers_stay_exact():
    """The shoulder link's spheres reach into a floor 1 mm below the UR5's base in every state; its exact geometry
    never does. That link and object pair is coarse: an exact checker of it alone decides it, the spheres prove
    the rest (before, they proved no step of any path), and every answer is the exact checker's."""
    checker, names = ur5_on_a_floor()
    check = PathCheck(checker, names)
    found = moving_table(check)
    assert ("shoulder_link", "floor") in found.coarse_pairs
    proven_steps = 0
    for path in random_paths(checker, names, PATHS, np.random.default_rng(SEED + 3), free_ends=False):
        points, steps = sphere_proof(check, path, found)
        proven_steps += int(steps.sum())
        assert_checked_path_is_exact(check, path)
    assert proven_steps > 0


def test_what_the_spheres_prove_is_free_for_the_exact_checker_between_the_points(table_wall):
    plugin, checker = table_wall
    names = plugin.getJointNames()
    check = PathCheck(checker, names)
    proven_steps = 0
    for path in random_paths(checker, names, PATHS, np.random.default_rng(SEED), free_ends=False):
        points, steps = sphere_proof(check, path)
        assert not exact_colliding(checker, names, path[points]).any()
        for k in np.flatnonzero(steps):
            assert not exact_colliding(checker, names, densify(path[k:k + 2], CHECK_STEP)).any(), k
        proven_steps += int(steps.sum())
    assert proven_steps > 0


def test_long_steps_are_proven_in_parts_and_what_they_prove_is_free_between_the_points(table_wall):
    """Steps of a radian or more (each part of a step proven by the state at its middle, between the step's points,
    ``proof_blocks.block_proof``): every point and step proven is free for the exact checker, and the steps proven
    needed more states checked than they have points (the parts of a step were checked)."""
    plugin, checker = table_wall
    names = plugin.getJointNames()
    check = PathCheck(checker, names)
    found = moving_table(check)
    proven_steps, checked = 0, 0
    for waypoints in random_waypoints(checker, names, 2 * PATHS, np.random.default_rng(SEED + 2)):
        states_before = check.states_checked
        points, steps = sphere_proof(check, waypoints, found)
        assert not exact_colliding(checker, names, waypoints[points]).any()
        for k in np.flatnonzero(steps):
            assert not exact_colliding(checker, names, densify(waypoints[k:k + 2], CHECK_STEP)).any(), k
        if steps.all():
            checked += check.states_checked - states_before
            proven_steps += len(steps)
    assert proven_steps > 0
    assert checked > proven_steps + 1


def test_the_checked_path_finds_every_colliding_point_the_exact_checker_finds(table_wall):
    plugin, checker = table_wall
    names = plugin.getJointNames()
    check = PathCheck(checker, names)
    for path in random_paths(checker, names, PATHS, np.random.default_rng(SEED + 1), free_ends=False):
        invalid, unproven = checked_path(check, path)
        exact = exact_colliding(checker, names, path)
        assert (invalid >= 0) == exact.any()
        if invalid >= 0:
            assert exact[invalid]


def test_a_motion_whose_first_touching_state_no_witness_proves_asks_the_exact_checker_about_that_state_alone(
        table_wall, monkeypatch):
    """A straight motion whose first state the spheres find touching no witness point proves colliding is refused by
    the exact check of that state alone when it collides there, and when it is free there, by a witness point in a
    later state: the exact checker is asked about one state, never about the motion's; every motion's answer is the
    exact checker's."""
    plugin, checker = table_wall
    names = plugin.getJointNames()
    check = PathCheck(checker, names, resolution=SEARCH_RESOLUTION)
    check.fixed_pairs_free = True  # (the motions start free, as a plan's start)
    exact_calls = []
    first_invalid = PathCheck.first_invalid
    monkeypatch.setattr(PathCheck, "first_invalid", lambda self, states: exact_calls.append(len(states)) or
                        first_invalid(self, states))
    chain, arrays, work = kernel_tuples(check, moving_table(check).table)
    colliding_there = beyond = 0
    for q_from, q_to, _ in random_waypoints(checker, names, 4 * PATHS, np.random.default_rng(SEED + 3)):
        exact_calls.clear()
        free = segment_free(check, q_from, q_to)
        calls = list(exact_calls)
        assert free == (first_invalid(check, segment_states(q_from, q_to, check.resolution)) < 0)
        step = first_touching_step(q_from, q_to, check.resolution, chain, arrays, work, motion_scratch(len(chain[0])))
        steps = steps_between(q_from, q_to, check.resolution)
        state = q_from + (q_to - q_from) * step / steps
        if not step or proven_colliding(checker, check.indices, check.base, state):
            continue
        if checker.is_colliding(check.full_state(state)):
            colliding_there += 1
            assert not free and calls == [1]
        elif first_proven_colliding(checker, check.indices, check.base,
                                    segment_states(q_from, q_to, check.resolution)) >= 0:
            beyond += 1
            assert not free and calls == [1]
    assert colliding_there > 0 and beyond > 0


def test_plans_are_proven_and_exact_free_where_the_spheres_block_the_start(table_wall):
    plugin, checker = table_wall
    names = plugin.getJointNames()
    for k, (start, goal) in enumerate(problems(plugin, checker, 4, np.random.default_rng(SEED), False)):
        exact = search_path(PathCheck(checker, names), start, goal[None], (
            np.array([checker.model.joints[n].lower for n in names]),
            np.array([checker.model.joints[n].upper for n in names])), DEFAULT_PLANNER, TIME)
        result = plan(plugin, checker, start, [JointGoal(goal)], PlanOptions(planning_time=TIME))
        assert result.success or exact.waypoints is None, (k, result.message)
        if result.success:
            assert not exact_colliding(checker, names, densify(result.positions, CHECK_STEP)).any(), k


def test_coarse_pairs_are_left_to_the_exact_checker_and_segments_agree_with_it(monkeypatch):
    """Every self pair taken for coarse (the fitted spheres of the UR5 have none of their own): each is left to
    the exact checker of those pairs, and the answers stay the exact checker's."""
    monkeypatch.setattr(sphere_pairs, "COARSE_SHARE", 0.0)
    monkeypatch.setattr(sphere_pairs, "EXACT_SHARE", 1.0)
    checker, names = ur5_table_wall()
    check = PathCheck(checker, names)
    proof = moving_table(check)
    assert proof.coarse is not None and len(proof.table.self_pairs) == 0
    rng = np.random.default_rng(SEED)
    for path in random_paths(checker, names, PATHS, rng, free_ends=False):
        q_from, q_to = path[0], path[len(path) // 3]
        if exact_colliding(checker, names, q_from).any():
            continue
        assert segment_free(check, q_from, q_to) == check.segment_free(q_from, q_to)
        points, steps = sphere_proof(check, path)
        invalid, _ = checked_path(check, path)
        assert (invalid >= 0) == exact_colliding(checker, names, path).any()


def test_self_pairs_touching_along_a_path_are_left_to_the_exact_checker_and_answers_stay_exact(monkeypatch):
    """A path whose self pairs' spheres touch (every path here, NARROW_STEPS 0) is proven with those pairs left to
    an exact checker of them alone: a point it calls invalid collides, a colliding path is found invalid, and the
    steps it proves free are free at 0.005 rad."""
    monkeypatch.setattr(sphere_proof_module, "NARROW_STEPS", 0)
    checker, names = ur5_table_wall()
    check = PathCheck(checker, names)
    narrowed = 0
    for path in random_paths(checker, names, PATHS, np.random.default_rng(SEED + 2), free_ends=False):
        found = moving_table(check)
        points, steps = sphere_proof(check, path, found)
        narrowed += sphere_proof_module._narrowed(check, found, path, points, steps) is not None
        assert_checked_path_is_exact(check, path)
    assert narrowed > 0


def proof_of(robot: str, table_wall) -> tuple:
    """(checker, joint names, PathCheck, ``moving_table``) of the Panda or the UR5 among the table and wall."""
    if robot == "panda":
        plugin, checker = table_wall
        names = tuple(plugin.getJointNames())
    else:
        checker, names = ur5_table_wall()
    check = PathCheck(checker, names)
    return checker, names, check, moving_table(check)


@pytest.mark.parametrize("robot", ["panda", "ur5"])
def test_a_self_pairs_margin_bounds_how_far_its_links_move_relative_to_each_other(robot, table_wall):
    """Over straight joint motions, the distance between a point of one link of a self pair and a point of the other
    changes by no more than the pair's margin row (``growth_reach``) times the joint steps (the joints that move both
    left out); the UR5's forearm and wrist_2 get less than half of what their own travel would give them."""
    checker, names, check, found = proof_of(robot, table_wall)
    table, bodies = found.table, len(found.table.body_link)
    links = checker.model.link_names
    corners = {}
    for a, b in table.self_pairs:
        for body in (a, b):
            (link,) = body_names(check, table, [body])
            corners[body] = np.vstack([shape_polytope(placed)[2] for placed in checker.link_geometry[link]])
    rng = np.random.default_rng(SEED)
    joints = checker.model.joints
    lower, upper = (np.array([getattr(joints[n], side) for n in names]) for side in ("lower", "upper"))
    for _ in range(40):
        q0 = lower + rng.random(len(names)) * (upper - lower)
        dq = rng.uniform(-0.3, 0.3, len(names))
        placed = []
        for t in np.linspace(0.0, 1.0, 9):
            poses = checker.model.tree.link_poses(check.full_state(q0 + t * dq))
            placed.append({body: points @ poses[links.index(body_names(check, table, [body])[0])][:3, :3].T +
                           poses[links.index(body_names(check, table, [body])[0])][:3, 3]
                           for body, points in corners.items()})
        for p, (a, b) in enumerate(table.self_pairs):
            bound = found.growth_reach[bodies + p] @ np.abs(dq)
            start = np.linalg.norm(placed[0][a][:, None] - placed[0][b][None], axis=2)
            for t, at in zip(np.linspace(0.0, 1.0, 9), placed):
                moved = np.abs(np.linalg.norm(at[a][:, None] - at[b][None], axis=2) - start).max()
                assert moved <= t * bound + 1e-9, (body_names(check, table, [a, b]), t, moved, t * bound)
    if robot == "ur5":
        pair = next(p for p, (a, b) in enumerate(table.self_pairs)
                    if set(body_names(check, table, [a, b])) == {"forearm_link", "wrist_2_link"})
        a, b = table.self_pairs[pair]
        assert found.growth_reach[bodies + pair].sum() < 0.5 * (found.reach[a] + found.reach[b]).sum()


def sphere_points(arrays: SphereTable, poses: np.ndarray) -> list[np.ndarray]:
    """Each body's spheres' centres and the ends of their three axes (placed by the chain frames' ``poses``)."""
    table = SphereTable(*arrays)
    offsets = np.vstack([np.zeros(3), np.eye(3), -np.eye(3)])
    points = []
    for b, frame in enumerate(table.body_link):
        rows = slice(table.body_first[b], table.body_first[b + 1])
        local = (table.sphere_center[rows][:, None] + table.sphere_radius[rows][:, None, None] * offsets).reshape(-1, 3)
        points.append(local @ poses[frame][:3, :3].T + poses[frame][:3, 3])
    return points


@pytest.mark.parametrize("robot", ["panda", "ur5"])
def test_a_states_own_margins_bound_how_far_its_spheres_move_and_are_tighter_than_the_paths(robot, table_wall):
    """Over straight joint motions from a state, every point of a body's spheres moves no farther than the margin
    ``_tightened`` gives the body in that state, and the distance between points of a self pair's bodies changes by
    no more than the pair's; the lower of those margins and ``link_reach``'s (the same in every state), which the
    proof uses, are less than two thirds of ``link_reach``'s."""
    checker, names, check, found = proof_of(robot, table_wall)
    chain, arrays = chain_tables(check, found.table)
    bound = sphere_proof_module.proof_bound(check, found.table)
    bodies, pairs = len(found.table.body_link), found.table.self_pairs
    work = workspace(check.base, len(checker.model.link_names), found.table)
    rng = np.random.default_rng(SEED + 5)
    joints = checker.model.joints
    lower, upper = (np.array([getattr(joints[n], side) for n in names]) for side in ("lower", "upper"))
    tightened, loose = [], []
    for _ in range(40):
        q0 = lower + rng.random(len(names)) * (upper - lower)
        dq = rng.uniform(-0.05, 0.05, len(names))  # a block of a few steps
        place_chain(q0, chain, arrays, work)
        work.growth[:] = np.inf
        proof_blocks._tightened(np.abs(dq), bound, chain, arrays, work)
        margins = work.growth.copy()
        tightened.append(margins)
        loose.append(found.growth_reach @ np.abs(dq))
        start = sphere_points(arrays, work.link_poses)
        for t in np.linspace(0.0, 1.0, 11)[1:]:
            place_chain(q0 + t * dq, chain, arrays, work)
            at = sphere_points(arrays, work.link_poses)
            for b in range(bodies):
                assert np.linalg.norm(at[b] - start[b], axis=1).max() <= margins[b] + 1e-9, (b, t)
            for p, (a, b) in enumerate(pairs):
                before = np.linalg.norm(start[a][:, None] - start[b][None], axis=2)
                moved = np.abs(np.linalg.norm(at[a][:, None] - at[b][None], axis=2) - before).max()
                assert moved <= margins[bodies + p] + 1e-9, (p, t)
    kept = np.minimum(tightened, loose)  # what the proof uses: the lower of the two
    assert kept.sum() < 2 / 3 * np.sum(loose), kept.sum() / np.sum(loose)


@pytest.mark.parametrize("halvings", [sphere_proof_module.SPHERE_HALVINGS, 0])
def test_a_proof_in_blocks_proves_every_step_its_steps_alone_prove_with_fewer_states_checked(table_wall, halvings):
    """Blocks sized from the clearance of the block before (``block_proof``) never prove less than each step proven
    alone (a block not proven is tried again smaller, down to parts of a step), and check fewer states than the
    path's steps alone: blocks grow again after the smallest part (with no halvings, a whole step; a block of one
    part proven at the factor's cap was followed by blocks of one part to the path's end)."""
    plugin, checker = table_wall
    names = plugin.getJointNames()
    check = PathCheck(checker, names)
    found = moving_table(check)
    bound = sphere_proof_module.proof_bound(check, found.table)

    def proof(positions):
        points, steps = np.zeros(len(positions), dtype=bool), np.zeros(len(positions) - 1, dtype=bool)
        checked = proof_blocks.block_proof(positions, found.growth_reach, halvings, bound,
                                           *sphere_proof_module.kernel_tuples(check, found.table), points, steps)
        return points, steps, checked

    proven = 0
    for path in random_paths(checker, names, PATHS, np.random.default_rng(SEED + 5)):
        path = np.ascontiguousarray(path)
        points, steps, checked = proof(path)
        alone = 0
        for k in range(len(path) - 1):
            step_points, step, step_checked = proof(path[k:k + 2].copy())
            assert not step[0] or steps[k], k
            assert not step_points[0] or points[k], k
            alone += step_checked
        proven += int(steps.sum())
        assert checked < alone
    assert proven > 0
