"""A plan's joint moves timed and proven in one compiled call answer as the timing and the proof made apart; the
straight check's compiled pass over a motion answers as the exact checker; the limits' check of a trajectory."""
from __future__ import annotations

import numpy as np
import pytest
from test_sphere_proof import exact_colliding, random_paths, random_waypoints
from test_sphere_search import BOXES, panda

from kinematics_py.collision.geometry import Sphere
from kinematics_py.geometry.transforms import make_transform
from kinematics_py.planning.goals import LIMIT_TOLERANCE, GroupLimits
from kinematics_py.planning.path_check import PathCheck, segment_states
from kinematics_py.planning.proven_moves import proven_joint_moves
from kinematics_py.planning.sphere_proof import segment_free, sphere_proof
from kinematics_py.planning.straight_timing import timed_joint_moves
from kinematics_py.planning.time_parameterization import joint_limits

SEED = 41
SEGMENTS = 40
SEARCH_RESOLUTION = 0.06


@pytest.fixture(scope="module")
def table_wall():
    return panda(BOXES)


def test_moves_timed_and_proven_in_one_call_answer_as_the_timing_and_the_proof_apart(table_wall):
    plugin, checker = table_wall
    names = plugin.getJointNames()
    limits = joint_limits(checker.model, names)
    proven_any = unproven_any = False
    for waypoints in random_waypoints(checker, names, 12, np.random.default_rng(SEED)):
        check = PathCheck(checker, names)
        check.fixed_pairs_free = True  # (as a plan's free start makes it)
        positions, timing, proof = proven_joint_moves(check, waypoints, limits, 0.01)
        alone_positions, alone_timing = timed_joint_moves(waypoints, limits, 0.01)
        np.testing.assert_array_equal(positions, alone_positions)
        np.testing.assert_array_equal(timing.time_from_start, alone_timing.time_from_start)
        np.testing.assert_array_equal(timing.velocities, alone_timing.velocities)
        np.testing.assert_array_equal(timing.accelerations, alone_timing.accelerations)
        points, steps = sphere_proof(check, positions)
        np.testing.assert_array_equal(proof[0], points)
        np.testing.assert_array_equal(proof[1], steps)
        proven_any |= bool(steps.all())
        unproven_any |= not steps.all()
    assert proven_any and unproven_any  # both kinds of path were seen


def test_no_proof_is_made_where_the_spheres_cannot_stand_for_the_geometry(table_wall):
    plugin, checker = table_wall
    names = plugin.getJointNames()
    waypoints = random_waypoints(checker, names, 1, np.random.default_rng(SEED + 1))[0]
    limits = joint_limits(checker.model, names)
    check = PathCheck(checker, names, state_validity=lambda q: None)  # a path's own validity check
    positions, _timing, proof = proven_joint_moves(check, waypoints, limits, 0.01)
    assert proof is None
    np.testing.assert_array_equal(positions, timed_joint_moves(waypoints, limits, 0.01)[0])


def test_a_part_in_the_hand_is_proven_with_the_spheres_as_one_more_body_of_the_hand(table_wall):
    """A held part's spheres prove its moves as a link's do: the one-call proof answers as the proof made apart,
    and what it proves is free for the exact checker, the part included."""
    plugin, checker = table_wall
    names = plugin.getJointNames()
    limits = joint_limits(checker.model, names)
    checker.scene.attach_object("held", "panda_hand", ("panda_leftfinger", "panda_rightfinger"), [Sphere(0.04)],
                                make_transform(None, (0.0, 0.0, 0.2)))
    try:
        proven_any = False
        for waypoints in random_waypoints(checker, names, 12, np.random.default_rng(SEED + 2)):
            check = PathCheck(checker, names)
            check.fixed_pairs_free = True
            positions, _timing, proof = proven_joint_moves(check, waypoints, limits, 0.01)
            points, steps = sphere_proof(check, positions)
            np.testing.assert_array_equal(proof[0], points)
            np.testing.assert_array_equal(proof[1], steps)
            between = np.concatenate([segment_states(positions[k], positions[k + 1], 0.002)
                                      for k in np.flatnonzero(steps)] or [positions[:0]])
            assert not exact_colliding(checker, names, np.vstack([positions[points], between])).any()
            proven_any |= bool(steps.all())
        assert proven_any
    finally:
        checker.scene.detach_object("held")
        checker.scene.remove_object("held")


def test_a_straight_motion_is_free_exactly_when_the_exact_checker_finds_its_states_free(table_wall):
    """Through obstacles, past them, grazing them (the spheres touch where the geometry does not): every answer
    is the exact checker's at the motion's resolution."""
    plugin, checker = table_wall
    names = plugin.getJointNames()
    check = PathCheck(checker, names, resolution=SEARCH_RESOLUTION)
    check.fixed_pairs_free = True
    answers = []
    for path in random_paths(checker, names, SEGMENTS // 2, np.random.default_rng(SEED + 2)):
        for q_from, q_to in ((path[0], path[-1]), (path[0], path[len(path) // 2])):
            exact_free = not exact_colliding(checker, names, segment_states(q_from, q_to, SEARCH_RESOLUTION)).any()
            assert segment_free(check, q_from, q_to) == exact_free
            answers.append(exact_free)
    assert any(answers) and not all(answers)


def test_the_first_point_outside_the_limits_is_found_within_their_tolerance(table_wall):
    plugin, _checker = table_wall
    limits = GroupLimits(plugin, np.zeros(len(plugin.getJointNames())))
    inside = np.tile((limits.lower + limits.upper) / 2, (5, 1))
    assert limits.first_outside(inside) == -1
    at_tolerance = inside.copy()
    at_tolerance[1, 3] = limits.upper[3] + 0.5 * LIMIT_TOLERANCE
    assert limits.first_outside(at_tolerance) == -1 and not limits.violations(at_tolerance[1])
    outside = at_tolerance.copy()
    outside[3, 0] = limits.lower[0] - 2 * LIMIT_TOLERANCE
    outside[4, 6] = limits.upper[6] + 1.0
    assert limits.first_outside(outside) == 3
    assert limits.violations(outside[3]) and limits.violations(outside[4])
    not_a_number = inside.copy()
    not_a_number[2, 2] = np.nan
    assert limits.first_outside(not_a_number) == -1  # as the comparisons answer it: checked where it is made
    assert limits.violations(not_a_number[2])
