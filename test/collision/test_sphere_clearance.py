"""How far a state's sphere margins could grow (``sphere_clearance``): the factor agrees with ``touching`` on every
state (above 1 exactly where the spheres are free with their margins), it is the factor at which they start to touch,
and an obstacle's clearance is the distance ``obstacle_touch`` compares with."""
from __future__ import annotations

import numpy as np
import pytest
from robots import bundled_robot

from kinematics_py import RobotModel, SemanticModel
from kinematics_py.collision.checker import CollisionChecker
from kinematics_py.collision.geometry import Box, Cylinder, Plane, Sphere
from kinematics_py.collision.sphere_clearance import margin_scale, obstacle_clearance
from kinematics_py.collision.sphere_kernels import obstacle_touch, place_state, touching, workspace
from kinematics_py.collision.sphere_world import obstacle_owners, sphere_table
from kinematics_py.geometry.transforms import make_transform, rotation_about_axis

STATES = 300
CAP = 4.0
CENTRES = {"box": (0.5, 0.0, 0.3), "ball": (0.0, 0.5, 0.6), "rod": (0.0, -0.45, 0.5), "sheet": (0.0, 0.0, 1.1)}


@pytest.fixture(scope="module")
def scene():
    """(checker, table, state indices) of the bundled Panda among a box, a ball, a tilted rod and a plane."""
    urdf, srdf = bundled_robot("panda.urdf").read_text(), bundled_robot("panda.srdf").read_text()
    model = RobotModel.from_urdf_string(urdf)
    checker = CollisionChecker(model, SemanticModel.from_srdf_string(srdf, model))
    tilted = rotation_about_axis(np.array([1.0, 0.0, 0.0]), 1.0)
    checker.scene.add_object("box", [Box((0.3, 0.5, 0.04))], pose=make_transform(None, CENTRES["box"]))
    checker.scene.add_object("ball", [Sphere(0.08)], pose=make_transform(None, CENTRES["ball"]))
    checker.scene.add_object("rod", [Cylinder(0.03, 0.8)], pose=make_transform(tilted, CENTRES["rod"]))
    checker.scene.add_object("sheet", [Plane((0.0, 0.0, 1.0, -CENTRES["sheet"][2]))])
    table = sphere_table(checker)
    assert not isinstance(table, str)
    return checker, table, np.arange(len(model.variable_names), dtype=np.int64)


def random_states(checker: CollisionChecker, rng: np.random.Generator) -> np.ndarray:
    model = checker.model
    lower = np.array([max(model.joints[n].lower, -3.0) for n in model.variable_names])
    upper = np.array([min(model.joints[n].upper, 3.0) for n in model.variable_names])
    return lower + rng.random((STATES, len(lower))) * (upper - lower)


def placed(checker, table, indices, q, margins):
    work = workspace(q, len(checker.model.link_names), table)
    work.growth[:] = margins
    place_state(q, indices, checker.model.tree.table_arrays, tuple(table), work)
    return work


def touches(checker, table, indices, q, margins) -> bool:
    work = placed(checker, table, indices, q, margins)
    return touching(tuple(table), work, True, work.self_hit, work.world_hit)


def scale_of(checker, table, indices, q, margins, floor=0.0) -> float:
    return margin_scale(tuple(table), placed(checker, table, indices, q, margins), CAP, floor)


def test_the_factor_is_above_one_exactly_where_the_spheres_are_free_with_their_margins(scene):
    checker, table, indices = scene
    rng = np.random.default_rng(11)
    margins_count = len(table.body_radius) + len(table.self_pairs)
    verdicts = set()
    for q in random_states(checker, rng):
        margins = rng.uniform(0.0, 0.08, margins_count) * (rng.random(margins_count) < 0.8)  # some margins 0
        free = not touches(checker, table, indices, q, margins)
        for floor in (0.0, 1.0):  # (stopping at the floor changes no verdict)
            assert (scale_of(checker, table, indices, q, margins, floor) > 1.0) == free
        verdicts.add(free)
    assert verdicts == {True, False}


def test_the_factor_is_where_the_margins_scaled_start_to_touch(scene):
    checker, table, indices = scene
    rng = np.random.default_rng(12)
    margins_count = len(table.body_radius) + len(table.self_pairs)
    found = capped = 0
    for q in random_states(checker, rng):
        margins = rng.uniform(0.001, 0.05, margins_count) * 10.0 ** rng.uniform(-3.0, 0.0)
        if touches(checker, table, indices, q, np.zeros(margins_count)):
            assert scale_of(checker, table, indices, q, margins) <= 0.0  # touching with no margin at all
            continue
        factor = scale_of(checker, table, indices, q, margins)
        if factor >= CAP:
            assert not touches(checker, table, indices, q, CAP * margins)
            capped += 1
            continue
        assert not touches(checker, table, indices, q, factor * (1.0 - 1e-6) * margins)
        assert touches(checker, table, indices, q, factor * (1.0 + 1e-6) * margins)
        found += 1
    assert found > 10 and capped > 10  # (most random states touch with no margin: the sheet, the links)


@pytest.mark.parametrize("name", ["box", "ball", "rod", "sheet"])
def test_an_obstacles_clearance_is_the_distance_its_touch_test_compares_with(scene, name):
    checker, table, _ = scene
    (m,) = [k for k, owner in enumerate(obstacle_owners(checker)) if owner == name]
    rng = np.random.default_rng(13)
    kinds, T, size = table.obstacle_kind, table.T_obstacle_plan, table.obstacle_size
    inside = outside = 0
    for point in CENTRES[name] + rng.uniform(-0.5, 0.5, (2000, 3)):
        clearance = obstacle_clearance(*point, kinds[m], T, size, m)
        assert clearance >= 0.0
        if clearance == 0.0:
            inside += 1
            assert obstacle_touch(*point, 0.0, kinds[m], T, size, m)
            continue
        outside += 1
        assert obstacle_touch(*point, clearance * (1 + 1e-9), kinds[m], T, size, m)
        assert not obstacle_touch(*point, clearance * (1 - 1e-9), kinds[m], T, size, m)
    assert outside > 0 and (inside > 0 or name == "sheet")  # (a point is on a plane by chance only)
