"""The fast path of plan's search (compiled RRT-Connect on generated spheres): its paths are free for the spheres
and therefore for the exact checker at the search's resolution; a path the spheres approve but the exact geometry
refuses between its checked states is never returned by ``plan``; it solves the same seeded problems as OMPL's
search; scenes it cannot represent fall back to OMPL's search."""
from __future__ import annotations

import time

import numpy as np
import pytest
from meshes import boxes_cloud, boxes_mesh
from robots import bundled_robot

from kinematics_py import KinematicsPlugin, RobotModel, SemanticModel
from kinematics_py.collision import sphere_world
from kinematics_py.collision.checker import CollisionChecker
from kinematics_py.collision.geometry import Box, Cylinder, Mesh, Plane, Sphere
from kinematics_py.collision.kernel_inputs import inputs_of, kept_inputs
from kinematics_py.collision.octree import Octree
from kinematics_py.collision.sphere_kernels import (
    BOX,
    CYLINDER,
    PLANE,
    SPHERE,
    chain_collides,
    chain_inside_collides,
    chain_motion_collides,
    chain_states_free,
    colliding_pairs,
    first_touching_step,
    first_touching_step_in,
    motion_scratch,
    sphere_chain,
    state_collides,
    state_collides_in,
    workspace,
)
from kinematics_py.collision.sphere_lanes import LANES, lanes_scratch, motion_collides
from kinematics_py.collision.sphere_world import free_for_spheres, sphere_table
from kinematics_py.collision.witness_points import proven_colliding
from kinematics_py.geometry.transforms import make_transform
from kinematics_py.planning import motion
from kinematics_py.planning.goals import JointGoal
from kinematics_py.planning.motion import plan
from kinematics_py.planning.motion_bound import first_unproven
from kinematics_py.planning.ompl_search import DEFAULT_PLANNER, search_path
from kinematics_py.planning.options import PlanOptions
from kinematics_py.planning.path_check import FINE_RESOLUTION, SEARCH_RESOLUTION, PathCheck, densify, segment_states
from kinematics_py.planning.sphere_proof import (
    chain_tables,
    first_touching,
    kernel_bundle,
    kernel_tuples,
    moving_table,
    segment_free,
    spheres_free_segments,
    touching_pairs,
)
from kinematics_py.planning.sphere_search import (
    MAX_STEP,
    RANGE_SHARE,
    SELF_SHRINKS,
    _escaped,
    _relaxed,
    _touching_in,
    fast_or_ompl_search,
    planted_trees,
    sphere_search,
)

SEED = 11
PROBLEMS = 8
#: Time of each search and plan [s]: far more than any needs, so that no result depends on the machine's load.
TIME = 10.0
#: (centre, size) [m]: a table and a wall on it, as bench/motion_planning.py's table_wall scene.
BOXES = {"table": ((0.6, 0.0, 0.0), (0.8, 1.6, 0.04)), "wall": ((0.5, 0.0, 0.32), (0.04, 1.2, 0.6))}
#: A thin plate crossing the straight motion between LEFT and RIGHT: a search that checks its motions every
#: COARSE rad passes through it.
PLATE = ((0.45, 0.0, 0.45), (0.005, 0.8, 0.8))
LEFT = np.array([1.2, 0.6, 0.0, -1.6, 0.0, 2.2, 0.785])
RIGHT = np.array([-1.2, 0.6, 0.0, -1.6, 0.0, 2.2, 0.785])
COARSE = 1.0
#: Seeds tried for a sphere path through the plate.
SEEDS = 16
#: The independent check's step [rad] of the sphere search's paths; a plan's trajectory is checked at its points
#: (FINE_RESOLUTION apart: what ``plan`` guarantees; the states between them are motion_bound's subject).
CHECK_STEP = 0.005


def panda(boxes) -> tuple[KinematicsPlugin, CollisionChecker]:
    urdf, srdf = bundled_robot("panda.urdf").read_text(), bundled_robot("panda.srdf").read_text()
    model = RobotModel.from_urdf_string(urdf)
    checker = CollisionChecker(model, SemanticModel.from_srdf_string(srdf, model))
    for name, (centre, size) in boxes.items():
        checker.scene.add_object(name, [Box(size)], pose=make_transform(None, centre))
    plugin = KinematicsPlugin()
    assert plugin.initialize(urdf, "panda_arm", "panda_link0", "panda_link8", robot_description_semantic=srdf)
    return plugin, checker


@pytest.fixture(scope="module")
def table_wall():
    return panda(BOXES)


def search_setup(plugin, checker) -> tuple[list[str], PathCheck, tuple[np.ndarray, np.ndarray]]:
    """(joint names, a PathCheck at the search's resolution, the joint bounds) of the arm."""
    names = plugin.getJointNames()
    bounds = (np.array([checker.model.joints[n].lower for n in names]),
              np.array([checker.model.joints[n].upper for n in names]))
    return names, PathCheck(checker, names, resolution=SEARCH_RESOLUTION), bounds


def exact_colliding(checker, names, waypoints, step=CHECK_STEP) -> int:
    return int(checker.check_batch(densify(np.asarray(waypoints), step), joint_names=names).sum())


def problems(plugin, checker, count, rng, sphere_free=None) -> list[tuple[np.ndarray, np.ndarray]]:
    """Start/goal pairs within the limits, free for the exact checker, whose straight motion collides; with
    ``sphere_free`` True (False), both free for the spheres (the start blocked by them)."""
    names = plugin.getJointNames()
    model = checker.model
    lower = np.array([model.joints[n].lower for n in names])
    upper = np.array([model.joints[n].upper for n in names])
    check = PathCheck(checker, names)
    table = sphere_table(checker)
    work = workspace(check.base, len(model.link_names), table)
    found = []
    while len(found) < count:
        pair = lower + rng.random((2, len(names))) * (upper - lower)
        blocked = [state_collides(q, check.indices, model.tree.table_arrays, tuple(table), work) for q in pair]
        if sphere_free is not None and (any(blocked) if sphere_free else not blocked[0]):
            continue
        if not checker.check_batch(pair, joint_names=names).any() and exact_colliding(checker, names, pair, 0.05):
            found.append((pair[0], pair[1]))
    return found


def too_many_leaves(checker: CollisionChecker, monkeypatch) -> None:
    """An octomap of one voxel far from the arm, with MAX_WORLD_LEAVES 0: a scene the spheres cannot hold
    (``sphere_world``)."""
    monkeypatch.setattr(sphere_world, "MAX_WORLD_LEAVES", 0)
    checker.scene.set_octomap(Octree.from_points([[2.0, 2.0, 2.0]], 0.05))


def test_a_scene_the_spheres_cannot_hold_is_never_free_for_them_and_is_left_to_the_checker(monkeypatch):
    plugin, checker = panda(BOXES)
    check = PathCheck(checker, plugin.getJointNames())
    assert free_for_spheres(checker, check.full_state(LEFT))
    too_many_leaves(checker, monkeypatch)
    assert "MAX_WORLD_LEAVES" in sphere_table(checker)
    assert not free_for_spheres(checker, check.full_state(LEFT))


def mesh_table_wall() -> tuple[KinematicsPlugin, CollisionChecker]:
    """The table and the wall as one world mesh of their surfaces, the plate as another, and a degenerate triangle
    (a segment) across the workspace."""
    plugin, checker = panda({})
    checker.scene.add_object("table_wall", [boxes_mesh(BOXES.values())])
    checker.scene.add_object("plate", [boxes_mesh([PLATE])])
    segment = Mesh(np.array([[0.3, -0.6, 0.6], [0.3, 0.6, 0.9], [0.3, 0.0, 0.75]]), np.array([[0, 1, 2]]))
    checker.scene.add_object("rod", [segment])
    return plugin, checker


def octomap_table_wall() -> tuple[KinematicsPlugin, CollisionChecker]:
    """The table, the wall and the plate as the octomap of 2 cm voxels of a noisy cloud of their surfaces."""
    plugin, checker = panda({})
    checker.scene.set_octomap(Octree.from_points(boxes_cloud([*BOXES.values(), PLATE], 40_000, SEED), 0.02))
    return plugin, checker


#: The fingers of the Panda's hand: what a part held in it may touch.
FINGERS = ("panda_leftfinger", "panda_rightfinger")


def held_part_table_wall(part: str = "box") -> tuple[KinematicsPlugin, CollisionChecker]:
    """The table and the wall, the hand holding a 30 cm bar between its fingers (a box, or a box mesh checked by
    its triangles), long enough to reach the arm's own links in some states."""
    plugin, checker = panda(BOXES)
    shape = Box((0.03, 0.04, 0.3)) if part == "box" else boxes_mesh([((0.0, 0.0, 0.0), (0.03, 0.04, 0.3))])
    checker.scene.attach_object("part", "panda_hand", touch_links=FINGERS, shapes=[shape],
                                pose=make_transform(None, (0.0, 0.0, 0.25)))
    return plugin, checker


@pytest.mark.parametrize("scene", ["boxes", "world_meshes", "octomap", "held_box", "held_mesh"])
def test_a_sphere_free_state_is_free_for_the_exact_checker(table_wall, scene):
    """A state free for the spheres is free for the exact checker, among boxes, among world meshes (their
    triangles for the spheres, ``sphere_world``, as for the checker), in an octomap (its voxels as boxes) and with
    a part in the hand (one more body of the hand, against the world and the arm's other links); the diagnosis's
    shortcut (``free_for_spheres``, a full state) answers as the spheres do."""
    plugin, checker = {"boxes": lambda: table_wall, "world_meshes": mesh_table_wall,
                       "octomap": octomap_table_wall, "held_box": held_part_table_wall,
                       "held_mesh": lambda: held_part_table_wall("mesh")}[scene]()
    names = plugin.getJointNames()
    check = PathCheck(checker, names)
    table = sphere_table(checker)
    assert not isinstance(table, str)
    work = workspace(check.base, len(checker.model.link_names), table)
    model = checker.model
    lower = np.array([model.joints[n].lower for n in names])
    upper = np.array([model.joints[n].upper for n in names])
    states = lower + np.random.default_rng(SEED).random((1500, len(names))) * (upper - lower)
    spheres = np.array([state_collides(q, check.indices, model.tree.table_arrays, tuple(table), work)
                        for q in states])
    exact = checker.check_batch(states, joint_names=names)
    assert exact.sum() > 100 and (~spheres).sum() > 100
    assert not (exact & ~spheres).any()  # spheres contain the geometry: free for them is free
    free = np.array([free_for_spheres(checker, check.full_state(q)) for q in states[:300]])
    assert np.array_equal(free, ~spheres[:300])
    if scene.startswith("held"):  # the part's own pairs, with the world and with the arm, are among the collisions
        pairs = {pair for q in states[exact][:200] for pair in checker.check(check.full_state(q)).pairs}
        assert {"table", "panda_link1"} <= {other for pair in pairs if "part" in pair for other in pair}


def test_an_arm_inside_a_closed_world_mesh_is_free_and_no_witness_proves_otherwise():
    """The checker tests a world mesh's triangles, not its inside: an arm inside a closed mesh box (a 3 m crate)
    that does not reach its walls is free, for the spheres too, and the witness points (of solids only) prove no
    collision."""
    plugin, checker = panda({})
    names = plugin.getJointNames()
    check = PathCheck(checker, names)
    checker.scene.add_object("crate", [boxes_mesh([((0.0, 0.0, 0.5), (3.0, 3.0, 3.0))])])
    assert not checker.check_batch(LEFT[None], joint_names=names)[0]
    assert free_for_spheres(checker, check.full_state(LEFT))
    assert not proven_colliding(checker, check.indices, check.base, LEFT)


@pytest.mark.parametrize("scene", [mesh_table_wall, octomap_table_wall], ids=["world_meshes", "octomap"])
def test_plans_among_world_meshes_and_octomaps_take_the_fast_path_and_are_free_and_proven(scene):
    plugin, checker = scene()
    names, check, bounds = search_setup(plugin, checker)
    waypoints = sphere_search(check, LEFT, RIGHT[None], bounds, TIME)
    assert waypoints is not None and exact_colliding(checker, names, waypoints) == 0
    for start, goal in problems(plugin, checker, 4, np.random.default_rng(SEED)):
        result = plan(plugin, checker, start, [JointGoal(goal)], PlanOptions(planning_time=TIME))
        assert result.success, result.message
        assert exact_colliding(checker, names, result.positions, FINE_RESOLUTION) == 0
        assert first_unproven(PathCheck(checker, names), result.positions) == -1


@pytest.mark.parametrize("part", ["box", "mesh"])
def test_plans_holding_a_part_take_the_fast_path_and_are_free_and_proven(part):
    """A part in the hand is one more body of the hand for the spheres and the proofs: the sphere search finds
    the paths, and each plan is free at its points and proven between them, the part's sweep included."""
    plugin, checker = held_part_table_wall(part)
    names, check, bounds = search_setup(plugin, checker)
    for k, (start, goal) in enumerate(problems(plugin, checker, 4, np.random.default_rng(SEED), True)):
        path = sphere_search(check, start, goal[None], bounds, TIME, seed=k)
        assert path is not None and exact_colliding(checker, names, path, SEARCH_RESOLUTION) == 0, k
        result = plan(plugin, checker, start, [JointGoal(goal)], PlanOptions(planning_time=TIME))
        assert result.success, result.message
        assert exact_colliding(checker, names, result.positions, FINE_RESOLUTION) == 0
        assert first_unproven(PathCheck(checker, names), result.positions) == -1


def test_a_pair_no_joint_moves_apart_is_decided_by_the_start_not_on_every_path():
    """A part held on the UR5's tool0 and its wrist_3_link (no touch links given): every joint that moves one moves
    the other, so their distance never changes; the pair is left out of the spheres' search and proof (their
    spheres bulge into each other in every state) and decided by the start: free there, free on the whole path;
    touching there, a blocked start."""
    urdf, srdf = bundled_robot("ur5.urdf").read_text(), bundled_robot("ur5.srdf").read_text()
    model = RobotModel.from_urdf_string(urdf)
    checker = CollisionChecker(model, SemanticModel.from_srdf_string(srdf, model))
    plugin = KinematicsPlugin()
    assert plugin.initialize(urdf, "ur_manipulator", robot_description_semantic=srdf)
    names = plugin.getJointNames()
    checker.scene.attach_object("part", "tool0", shapes=[Box((0.04, 0.05, 0.2))],
                                pose=make_transform(None, (0.0, 0.0, 0.13)))
    check = PathCheck(checker, names)
    found, table = moving_table(check), sphere_table(checker)
    part, wrist = len(table.body_link) - 1, list(checker.link_geometry).index("wrist_3_link")
    assert {part, wrist} in [set(pair) for pair in table.self_pairs]  # tested by the checker and the spheres
    assert {part, wrist} not in [set(pair) for pair in found.table.self_pairs] and found.dropped
    assert not found.coarse_pairs
    start, goal = np.array([0.0, -1.2, 1.2, -1.5, -1.5, 0.0]), np.array([1.5, -1.4, 1.0, -1.2, -1.5, 0.5])
    result = plan(plugin, checker, start, [JointGoal(goal)], PlanOptions(planning_time=TIME))
    assert result.success, result.message
    assert exact_colliding(checker, names, result.positions, FINE_RESOLUTION) == 0
    assert first_unproven(PathCheck(checker, names), result.positions) == -1
    checker.scene.attach_object("part", "tool0", shapes=[Box((0.04, 0.05, 0.2))],
                                pose=make_transform(None, (0.0, 0.0, 0.05)))  # into the wrist
    blocked = plan(plugin, checker, start, [JointGoal(goal)], PlanOptions(planning_time=TIME))
    assert not blocked.success and blocked.failure == "blocked_start", blocked.message
    assert "part" in blocked.message and "wrist_3_link" in blocked.message


def test_sphere_paths_are_free_for_the_exact_checker_at_the_search_resolution(table_wall):
    plugin, checker = table_wall
    names, check, bounds = search_setup(plugin, checker)
    for k, (start, goal) in enumerate(problems(plugin, checker, PROBLEMS, np.random.default_rng(SEED), True)):
        path = sphere_search(check, start, goal[None], bounds, TIME, seed=k)
        assert path is not None, k
        assert np.array_equal(path[0], start) and np.array_equal(path[-1], goal)
        assert exact_colliding(checker, names, path, SEARCH_RESOLUTION) == 0, k


def test_a_start_the_spheres_block_still_gets_the_fast_path_and_its_path_is_checked(table_wall):
    plugin, checker = table_wall
    names, check, bounds = search_setup(plugin, checker)
    fast = 0
    for k, (start, goal) in enumerate(problems(plugin, checker, 4, np.random.default_rng(SEED + 2), False)):
        path = sphere_search(check, start, goal[None], bounds, TIME, seed=k)
        if path is not None:  # None: the pairs left out collide on its path, OMPL's search takes over
            fast += 1
            assert exact_colliding(checker, names, path, SEARCH_RESOLUTION) == 0, k
        planned = plan(plugin, checker, start, [JointGoal(goal)], PlanOptions(planning_time=TIME))
        assert planned.success and exact_colliding(checker, names, planned.positions, FINE_RESOLUTION) == 0, k
    assert fast >= 2


def ur5_touching_state():
    """(check, q, (lower, upper), its workspace, the self pairs touching): a UR5 state free for the exact checker in
    which a self pair's spheres touch."""
    urdf, srdf = bundled_robot("ur5.urdf").read_text(), bundled_robot("ur5.srdf").read_text()
    model = RobotModel.from_urdf_string(urdf)
    checker = CollisionChecker(model, SemanticModel.from_srdf_string(srdf, model))
    names = [n for n in model.variable_names if model.joints[n].is_movable]
    check = PathCheck(checker, names, resolution=SEARCH_RESOLUTION)
    table, tree = moving_table(check).table, model.tree.table_arrays
    rng = np.random.default_rng(SEED)
    lower, upper = np.array([model.joints[n].lower for n in names]), np.array([model.joints[n].upper for n in names])
    for _ in range(2000):
        q = lower + rng.random(len(names)) * (upper - lower)
        work = workspace(check.base, len(model.link_names), table)
        hit = np.zeros(len(table.self_pairs), dtype=bool)
        colliding_pairs(q, check.indices, tree, tuple(table), work, hit, np.zeros(table.world_tested.shape, bool))
        if hit.any() and not checker.check_batch(q[None], joint_names=names).any():
            return check, q, (lower, upper), work, hit
    pytest.fail("no state whose spheres touch where the exact shapes do not")


def test_a_self_pair_whose_spheres_touch_at_the_start_is_searched_shrunk_not_left_out():
    """The UR5's spheres bulge beyond its cylinders' flat ends: in states where its links' exact shapes are apart,
    a self pair's spheres may touch. The search keeps such a pair, with a gap that parts its spheres there."""
    check, q, (lower, upper), work, hit = ur5_touching_state()
    checker, names, table, tree = check.checker, check.joint_names, moving_table(check).table, \
        check.checker.model.tree.table_arrays
    relaxed, left = _relaxed(check, table, q[None], work)
    work.growth[:] = 0.0  # (as a search's workspace comes: no margins)
    again = _relaxed(check, table, q[None], work)  # the same pairs: the same tables (what is kept for them found again)
    assert again[0] is relaxed and again[1] is left
    touching = set(map(tuple, table.self_pairs[hit]))
    kept = [k for k, pair in enumerate(map(tuple, relaxed.self_pairs)) if pair in touching]
    assert kept, "every touching pair was left out"
    assert set(map(tuple, left.self_pairs)) == touching  # what the search's path is checked for again, exactly
    gaps = work.growth[len(table.body_radius) + np.array(kept)]
    assert (gaps < 0).all() and set(-gaps) <= set(SELF_SHRINKS)
    parted = np.zeros(len(relaxed.self_pairs), dtype=bool)
    colliding_pairs(q, check.indices, tree, tuple(relaxed), work, parted, np.zeros(table.world_tested.shape, bool))
    assert not parted[kept].any()
    goal = np.clip(q + 0.3, lower, upper)
    if not checker.check_batch(goal[None], joint_names=names).any():
        path = sphere_search(check, q, goal[None], (lower, upper), TIME)
        assert path is None or exact_colliding(checker, names, path, SEARCH_RESOLUTION) == 0


def test_a_start_whose_spheres_touch_is_left_through_an_escape_state_and_the_rest_searched_with_every_pair():
    """``_escaped`` (what a relaxed search's path that the exact checker refuses is searched again with): the path
    leaves the start for a state where no spheres touch, over a motion free for the exact checker, and every
    segment after it is free for the spheres of every pair; the path is free for the exact checker."""
    check, q, bounds, _, _ = ur5_touching_state()
    table, names = moving_table(check).table, check.joint_names
    rng = np.random.default_rng(SEED)
    near = (np.clip(q + rng.uniform(-0.6, 0.6, len(q)), *bounds) for _ in range(1000))
    goal = next(g for g in near if not check.checker.check_batch(g[None], joint_names=names).any()
                and not _touching_in(check, table, g))
    path = _escaped(check, q, goal, bounds, time.perf_counter() + TIME, None)
    assert path is not None
    np.testing.assert_array_equal(path[0], q)
    np.testing.assert_array_equal(path[-1], goal)
    self_hit, world_hit = touching_pairs(check, table, densify(path[1:], SEARCH_RESOLUTION))
    assert not self_hit.any() and not world_hit.any(), "a pair relaxed after the escape"
    assert exact_colliding(check.checker, names, path, SEARCH_RESOLUTION) == 0


def test_fast_path_and_ompl_search_agree_on_success(table_wall):
    plugin, checker = table_wall
    names, check, bounds = search_setup(plugin, checker)
    for k, (start, goal) in enumerate(problems(plugin, checker, PROBLEMS, np.random.default_rng(SEED + 1))):
        planned = plan(plugin, checker, start, [JointGoal(goal)], PlanOptions(planning_time=TIME))
        ompl = search_path(check, start, goal[None], bounds, DEFAULT_PLANNER, TIME)
        assert planned.success == (ompl.waypoints is not None), (k, planned.message, ompl.status)
        assert planned.success, planned.message
        assert exact_colliding(checker, names, planned.positions, FINE_RESOLUTION) == 0, k


def test_a_path_the_spheres_approve_but_the_exact_geometry_refuses_is_never_returned():
    plugin, checker = panda({"plate": PLATE})
    names, _, bounds = search_setup(plugin, checker)
    assert exact_colliding(checker, names, [LEFT, RIGHT]) > 0
    coarse = PathCheck(checker, names, resolution=COARSE)
    # plan's attempt k seeds the sphere search with k: find an attempt whose path goes through the plate
    through = [seed for seed in range(SEEDS) if exact_colliding(
        checker, names, sphere_search(coarse, LEFT, RIGHT[None], bounds, TIME, seed=seed)) > 0]
    assert through
    result = plan(plugin, checker, LEFT, [JointGoal(RIGHT)],
                  PlanOptions(planning_time=TIME, search_resolution=COARSE, attempts=through[0] + 1))
    assert result.success, result.message
    assert exact_colliding(checker, names, result.positions, FINE_RESOLUTION) == 0


def test_a_straight_motion_free_at_the_search_resolution_alone_is_searched_again():
    """The straight motion to a goal is checked at the search resolution, as the search's motions are: through the
    plate it passes that check, fails the trajectory's, and its segment is searched again."""
    plugin, checker = panda({"plate": PLATE})
    names = plugin.getJointNames()
    assert exact_colliding(checker, names, [LEFT, RIGHT]) > 0
    one_step = float(np.abs(RIGHT - LEFT).max())  # the straight motion checked at RIGHT alone
    assert segment_free(PathCheck(checker, names, resolution=one_step), LEFT, RIGHT)
    result = plan(plugin, checker, LEFT, [JointGoal(RIGHT)],
                  PlanOptions(planning_time=TIME, search_resolution=one_step))
    assert result.success, result.message
    assert len(result.waypoints) > 2
    assert exact_colliding(checker, names, result.positions, FINE_RESOLUTION) == 0


@pytest.mark.parametrize("robot", ["panda", "ur5"])
def test_the_trees_step_is_a_share_of_the_joint_spaces_diagonal_at_most_max_step(robot):
    """RRT-Connect's step is RANGE_SHARE of the bounds' diagonal (the Panda's 2.6 rad), MAX_STEP at most (a UR5's
    joints turn 2 pi either way: 6.2 rad)."""
    urdf, srdf = bundled_robot(f"{robot}.urdf").read_text(), bundled_robot(f"{robot}.srdf").read_text()
    model = RobotModel.from_urdf_string(urdf)
    checker = CollisionChecker(model, SemanticModel.from_srdf_string(srdf, model))
    names = [n for n in model.variable_names if model.joints[n].type != "prismatic"]
    lower, upper = (np.array([getattr(model.joints[n], side) for n in names]) for side in ("lower", "upper"))
    check = PathCheck(checker, names, resolution=SEARCH_RESOLUTION)
    nodes, parents, counts = np.empty((2, 8, len(names))), np.empty((2, 8), dtype=np.int64), np.empty(2, np.int64)
    start = np.clip(np.zeros(len(names)), lower, upper)
    step, _ = planted_trees(nodes, parents, counts, start, start[None], lower, upper, 0,
                            kernel_bundle(check, moving_table(check).table))
    share = RANGE_SHARE * float(np.linalg.norm(upper - lower))
    assert step == pytest.approx(min(share, MAX_STEP))
    assert (share > MAX_STEP) == (robot == "ur5")


def test_a_segment_that_fails_the_final_check_is_searched_again_coarser_first(monkeypatch):
    """The first segment that fails the trajectory's check (through the plate between two of the search's checks) is
    searched again at DETOUR_COARSENING times the trajectory's resolution, any later one at the trajectory's; the
    trajectory returned is free at the fine resolution."""
    plugin, checker = panda({"plate": PLATE})
    names = plugin.getJointNames()
    one_step = float(np.abs(RIGHT - LEFT).max())
    searched_at = []

    def recorded(check, *args, **kwargs):
        searched_at.append(check.resolution)
        return fast_or_ompl_search(check, *args, **kwargs)

    monkeypatch.setattr(motion, "fast_or_ompl_search", recorded)
    result = plan(plugin, checker, LEFT, [JointGoal(RIGHT)],
                  PlanOptions(planning_time=TIME, search_resolution=one_step))
    assert result.success, result.message
    assert searched_at  # (the straight motion passed the search's check: no search before the detours)
    assert searched_at[0] == pytest.approx(motion.DETOUR_COARSENING * FINE_RESOLUTION)
    assert all(resolution == FINE_RESOLUTION for resolution in searched_at[1:])
    assert exact_colliding(checker, names, result.positions, FINE_RESOLUTION) == 0


def test_scenes_the_spheres_cannot_hold_fall_back_to_ompl(monkeypatch):
    plugin, checker = panda(BOXES)
    too_many_leaves(checker, monkeypatch)
    assert "MAX_WORLD_LEAVES" in sphere_table(checker)
    names = plugin.getJointNames()
    check = PathCheck(checker, names, resolution=SEARCH_RESOLUTION)
    bounds = (np.zeros(7) - 3, np.zeros(7) + 3)
    assert sphere_search(check, LEFT, RIGHT[None], bounds, TIME) is None
    result = plan(plugin, checker, LEFT, [JointGoal(RIGHT)], PlanOptions(planning_time=TIME))
    assert result.success and exact_colliding(checker, names, result.positions, FINE_RESOLUTION) == 0


#: Seeded random motions compared between the chain's check and the links' (``test_the_chain_...``).
MOTIONS = 600


@pytest.mark.parametrize("fingers", [False, True])
def test_the_chain_of_frames_answers_every_motion_as_the_links_do(table_wall, fingers):
    """``chain_motion_collides`` (the group's frames, joints it does not move folded in) gives every motion the
    answer of ``state_collides`` (every link placed) at its states: over seeded random motions among the boxes, free and
    colliding, from free and colliding starts; with the fingers (a prismatic joint and its mimic) in the group and
    held open by the base state. ``chain_inside_collides`` answers so for the states between the ends."""
    plugin, checker = table_wall
    names = list(plugin.getJointNames()) + (["panda_finger_joint1"] if fingers else [])
    model = checker.model
    base = checker.state_vector(None)
    if not fingers:
        base[model.tree.variable_index["panda_finger_joint1"]] = 0.03
    check = PathCheck(checker, names, base, SEARCH_RESOLUTION)
    table = moving_table(check).table
    tree = model.tree.table_arrays
    chain, in_frames = sphere_chain(tree, check.indices, check.base, table)
    assert len(chain.parent) == len(names) + 1 + fingers  # the root, and a frame per moved joint (the mimic too)
    lower = np.array([model.joints[n].lower for n in names])
    upper = np.array([model.joints[n].upper for n in names])
    rng = np.random.default_rng(SEED)
    links_work = workspace(check.base, len(model.link_names), table)
    chain_work = workspace(check.base, len(model.link_names), table)
    scratch = motion_scratch(len(chain.parent))
    answers, inside_answers = [], []
    for _ in range(MOTIONS):
        q_from = lower + rng.random(len(names)) * (upper - lower)
        q_to = np.clip(q_from + rng.uniform(-1.0, 1.0, len(names)) * rng.uniform(0.02, 2.0), lower, upper)
        links = any(state_collides(q, check.indices, tree, tuple(table), links_work)
                    for q in segment_states(q_from, q_to, SEARCH_RESOLUTION))
        frames = chain_motion_collides(q_from, q_to, SEARCH_RESOLUTION, tuple(chain), tuple(in_frames), chain_work,
                                       scratch)
        assert links == frames, (q_from, q_to)
        answers.append(links)
        states = segment_states(q_from, q_to, SEARCH_RESOLUTION)  # (q_from left out, q_to last)
        inside = any(state_collides(q, check.indices, tree, tuple(table), links_work) for q in states[:-1])
        assert chain_inside_collides(q_from, q_to, SEARCH_RESOLUTION, tuple(chain), tuple(in_frames), chain_work,
                                     scratch) == inside, (q_from, q_to)
        inside_answers.append(inside)
    assert 0.1 < np.mean(answers) < 0.9
    assert 0.1 < np.mean(inside_answers) < 0.9


def primitives_scene() -> tuple[KinematicsPlugin, CollisionChecker]:
    """The table and the wall, a ball, a tilted bar (a cylinder) and a plane across the workspace: one obstacle of
    each kind the lanes test."""
    plugin, checker = panda(BOXES)
    tilt = np.array([[1.0, 0.0, 0.0], [0.0, np.cos(0.6), -np.sin(0.6)], [0.0, np.sin(0.6), np.cos(0.6)]])
    checker.scene.add_object("ball", [Sphere(0.1)], pose=make_transform(None, (0.3, 0.45, 0.55)))
    checker.scene.add_object("bar", [Cylinder(0.03, 0.8)], pose=make_transform(tilt, (0.2, -0.4, 0.5)))
    checker.scene.add_object("sheet", [Plane((0.0, 1.0, 0.0, 0.75))])
    return plugin, checker


@pytest.mark.parametrize("fingers", [False, True])
def test_the_lanes_answer_every_motion_as_the_scalar_kernel_does(fingers):
    """``sphere_lanes.motion_collides`` (a motion's states LANES at a time) gives every motion the answer of
    ``chain_motion_collides`` (without the end, of ``chain_inside_collides``): among a box, a ball, a tilted cylinder
    and a plane, with the fingers (a prismatic joint and its mimic) in the group, with margins on the bodies and gaps,
    some negative, on the self pairs, over motions of no step, a few steps (fewer than the lanes) and many (not a
    multiple of them)."""
    plugin, checker = primitives_scene()
    table = _lanes_against_the_scalar_kernel(plugin, checker, fingers)
    assert set(np.unique(table.obstacle_kind)) == {SPHERE, BOX, CYLINDER, PLANE}


def test_the_lanes_answer_self_collisions_as_the_scalar_kernel_does():
    """The same with the robot alone: every motion that touches touches itself (the lanes' self pairs: bound to
    bound, then each sphere against the other body's bound, then sphere to sphere)."""
    plugin, checker = panda({})
    table = _lanes_against_the_scalar_kernel(plugin, checker, True)
    assert len(table.obstacle_kind) == 0 and len(table.self_pairs) > 0


def _lanes_against_the_scalar_kernel(plugin: KinematicsPlugin, checker: CollisionChecker, fingers: bool):
    """Assert the lanes' answers are the scalar kernel's over MOTIONS motions in ``checker``'s scene (touching in
    a tenth of them at least, free in a tenth); returns the table of the group's spheres."""
    names = list(plugin.getJointNames()) + (["panda_finger_joint1"] if fingers else [])
    model = checker.model
    check = PathCheck(checker, names, checker.state_vector(None), SEARCH_RESOLUTION)
    table = moving_table(check).table
    chain, arrays = chain_tables(check, table)
    work = workspace(check.base, len(model.link_names), table)
    rng = np.random.default_rng(SEED)
    bodies = len(table.body_radius)
    work.growth[:bodies] = rng.uniform(0.0, 0.03, bodies)
    work.growth[bodies:] = rng.uniform(-0.01, 0.02, len(work.growth) - bodies)
    scratch, lanes = motion_scratch(len(chain[0])), lanes_scratch(chain, arrays)
    assert len(lanes[0]) == len(chain[0])
    lower = np.array([model.joints[n].lower for n in names])
    upper = np.array([model.joints[n].upper for n in names])
    answers, steps = [], set()
    for k in range(MOTIONS):
        q_from = lower + rng.random(len(names)) * (upper - lower)
        length = (0.0, 0.05, 0.3)[k] if k < 3 else rng.uniform(0.02, 2.5)
        q_to = np.clip(q_from + rng.uniform(-1.0, 1.0, len(names)) * length, lower, upper)
        scalar = chain_motion_collides(q_from, q_to, SEARCH_RESOLUTION, chain, arrays, work, scratch)
        assert motion_collides(q_from, q_to, SEARCH_RESOLUTION, chain, arrays, work, scratch, lanes, True) == scalar, \
            (q_from, q_to)
        if not chain_inside_collides(q_from, q_to, SEARCH_RESOLUTION, chain, arrays, work, scratch):
            assert motion_collides(q_from, q_to, SEARCH_RESOLUTION, chain, arrays, work, scratch, lanes, False) == \
                scalar, (q_from, q_to)  # (the lanes check the end too: the same answer where it is free)
        answers.append(scalar)
        steps.add(len(segment_states(q_from, q_to, SEARCH_RESOLUTION)))
    assert 0.1 < np.mean(answers) < 0.9, np.mean(answers)
    assert 1 in steps and any(1 < n < LANES for n in steps) and any(n > LANES and n % LANES for n in steps)
    return table


@pytest.mark.parametrize("scene", [mesh_table_wall, octomap_table_wall])
def test_world_meshes_and_octomaps_are_left_to_the_scalar_kernel(scene):
    """A table with rows the lanes do not test (a world mesh's triangles and bounds, an octomap's) gets empty lanes:
    ``motion_collides`` then answers by ``chain_motion_collides``."""
    plugin, checker = scene()
    check = PathCheck(checker, plugin.getJointNames(), checker.state_vector(None), SEARCH_RESOLUTION)
    chain, arrays = chain_tables(check, moving_table(check).table)
    assert all(len(lane) == 0 for lane in lanes_scratch(chain, arrays)[:6])


def test_a_start_the_spheres_block_is_not_checked_again_by_the_final_check(table_wall, monkeypatch):
    """The start's diagnosis found it valid: the final check of the trajectory (``checked_path``) does not ask the
    exact checker about it again where its spheres touch (the trajectory's other points, where they touch, it does).
    The search may ask about the start (a segment from it the exact checker decides): only the final check counts."""
    plugin, checker = table_wall
    exact_states, in_final_check, final_checks = [], [], []
    first_invalid, checked_path = PathCheck.first_invalid, motion.checked_path

    def recorded_first_invalid(self, states):
        if in_final_check and self.checker is checker:
            exact_states.extend(states)
        return first_invalid(self, states)

    def final_check(*args, **kwargs):
        in_final_check.append(True)
        final_checks.append(True)
        try:
            return checked_path(*args, **kwargs)
        finally:
            in_final_check.pop()

    monkeypatch.setattr(PathCheck, "first_invalid", recorded_first_invalid)
    monkeypatch.setattr(motion, "checked_path", final_check)
    for start, goal in problems(plugin, checker, 3, np.random.default_rng(SEED + 2), False):
        exact_states.clear()
        planned = plan(plugin, checker, start, [JointGoal(goal)], PlanOptions(planning_time=TIME))
        assert planned.success and np.array_equal(planned.positions[0], start)
        assert not any(np.array_equal(state, start) for state in exact_states)
    assert final_checks


def test_the_chain_tables_are_kept_and_carry_the_pairs_of_the_table_given(table_wall):
    plugin, checker = table_wall
    _, check, _ = search_setup(plugin, checker)
    table = moving_table(check).table
    chain, in_frames = chain_tables(check, table)
    again, fewer = chain_tables(check, table._replace(self_pairs=table.self_pairs[:3]))
    assert again is not None and all(a is b for a, b in zip(chain, again))
    assert len(fewer[6]) == 3 and fewer[0] is in_frames[0]


def test_the_segments_the_spheres_find_free_in_one_call_are_those_of_each_motions_check(table_wall):
    """``spheres_free_segments`` answers each segment of a path as ``first_touching_step`` does (0: free), and
    ``segment_free`` of the ones it calls free is True; with the relaxed pairs alone it finds at least as many."""
    plugin, checker = table_wall
    names, check, (lower, upper) = search_setup(plugin, checker)
    check.fixed_pairs_free = True
    found = moving_table(check)
    chain, arrays, work = kernel_tuples(check, found.table)
    rng = np.random.default_rng(SEED)
    for _ in range(20):
        waypoints = lower + rng.random((6, len(names))) * (upper - lower)
        free = spheres_free_segments(check, waypoints)
        each = [first_touching_step(a, b, SEARCH_RESOLUTION, chain, arrays, work, motion_scratch(len(chain[0]))) == 0
                for a, b in zip(waypoints[:-1], waypoints[1:])]
        assert list(free) == each
        assert all(segment_free(check, a, b) for a, b, f in zip(waypoints[:-1], waypoints[1:], free) if f)
        fewer = found._replace(table=found.table._replace(self_pairs=found.table.self_pairs[:2]))
        assert (spheres_free_segments(check, waypoints, fewer) >= free).all()


def test_sphere_search_gives_the_same_path_for_the_same_seed(table_wall):
    plugin, checker = table_wall
    names, check, bounds = search_setup(plugin, checker)
    for k, (start, goal) in enumerate(problems(plugin, checker, 3, np.random.default_rng(SEED + 3), True)):
        first = sphere_search(check, start, goal[None], bounds, TIME, seed=k)
        assert np.array_equal(first, sphere_search(check, start, goal[None], bounds, TIME, seed=k)), k


def test_the_chain_of_frames_answers_grown_states_as_the_links_do(table_wall):
    """``chain_states_free`` answers states with grown spheres as ``state_collides`` (every link placed) does."""
    plugin, checker = table_wall
    _, check, (lower, upper) = search_setup(plugin, checker)
    table = moving_table(check).table
    tree = checker.model.tree.table_arrays
    chain, in_frames = chain_tables(check, table)
    rng = np.random.default_rng(SEED)
    states = lower + rng.random((400, len(lower))) * (upper - lower)
    margins = len(table.body_radius) + len(table.self_pairs)  # bodies against obstacles, then self pairs' gaps
    growth = rng.uniform(0.0, 0.05, (len(states), margins)) * (rng.random((len(states), 1)) < 0.7)
    links_work = workspace(check.base, len(checker.model.link_names), table)
    links = np.zeros(len(states), dtype=bool)
    for k, (q, grown) in enumerate(zip(states, growth)):
        links_work.growth[:] = grown
        links[k] = not state_collides(q, check.indices, tree, tuple(table), links_work)
    frames = np.zeros(len(states), dtype=bool)
    chain_states_free(states, growth, chain, in_frames, workspace(check.base, len(checker.model.link_names), table),
                      frames)
    assert np.array_equal(links, frames)
    assert 0.1 < links.mean() < 0.9


def test_a_links_offset_grows_its_spheres_by_as_much(table_wall):
    """A checker grown by an exact offset (the proof's and the repair's: ``CollisionChecker.set_offset``) has the
    link's spheres grown by the offset, so that a state its spheres call free is free for it too."""
    _, checker = table_wall
    grown = checker.for_scene(checker.scene)
    link = next(iter(checker.link_geometry))
    grown.set_offset(0.01, [link])
    table, grown_table = sphere_table(checker), sphere_table(grown)
    of_link = np.repeat(np.arange(len(table.body_link)), np.diff(table.body_first)) == 0
    assert np.allclose(grown_table.sphere_radius[of_link], table.sphere_radius[of_link] + 0.01)
    assert np.array_equal(grown_table.sphere_radius[~of_link], table.sphere_radius[~of_link])


def test_kernels_given_one_object_answer_as_given_its_tuples(table_wall):
    """``KernelInputs`` (``collision.kernel_inputs``) carries the chain, its table and the workspace into a kernel
    (``first_touching_step_in``, ``state_collides_in``, ``sphere_proof.first_touching``) as they are: the answers are
    those of the kernels given the tuples, over seeded random states and motions among the boxes."""
    plugin, checker = table_wall
    names, check, (lower, upper) = search_setup(plugin, checker)
    check.fixed_pairs_free = True
    found = moving_table(check)
    chain, arrays, work = kernel_tuples(check, found.table)
    inputs = kept_inputs(chain, arrays, work)
    model, table = checker.model, sphere_table(checker)
    whole_work = workspace(check.base, len(model.link_names), table)
    whole = inputs_of(model.tree.table_arrays, tuple(table), whole_work)
    rng = np.random.default_rng(SEED + 3)
    touching = 0
    for _ in range(40):
        a, b = lower + rng.random((2, len(names))) * (upper - lower)
        step = first_touching_step(a, b, SEARCH_RESOLUTION, chain, arrays, work, motion_scratch(len(chain[0])))
        assert first_touching_step_in(a, b, SEARCH_RESOLUTION, inputs) == step
        touching += step > 0
        assert state_collides_in(a, check.indices, whole) == state_collides(
            a, check.indices, model.tree.table_arrays, tuple(table), whole_work)
        assert (first_touching(np.array([a, b]), inputs) >= 0) == (chain_collides(a, chain, arrays, work)
                                                                   or chain_collides(b, chain, arrays, work))
    assert 0 < touching < 40
