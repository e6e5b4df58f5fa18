"""Fine sphere fits for the links that need them (``sphere_refinement``): the Kinova's folded wrist links are refitted
(their plain spheres overlap in a state where the links are apart, their fine ones do not, and the table holds the
fine ones), the bundled Panda's (with its SRDF) are not, and a fine fit still contains every shape (test_spheres)."""
from __future__ import annotations

import numpy as np
import pytest
from robots import example_robot_urdf

from kinematics_py import RobotModel, SemanticModel
from kinematics_py.collision.checker import CollisionChecker
from kinematics_py.collision.sphere_world import free_for_spheres, sphere_table
from kinematics_py.collision.spheres import robot_spheres
from kinematics_py.robots import bundled_robot_path

WRIST = ("j2s6s200_link_3", "j2s6s200_link_5", "j2s6s200_link_6")
#: A Kinova state with its wrist folded: links 3 and 6 apart, their plain spheres 12 mm into each other.
FOLDED = [2.39, 1.79, 1.38, -0.87, 0.68, -1.4]


def _sphere_gap(checker: CollisionChecker, spheres, state, link_a: str, link_b: str) -> float:
    """The least distance between the two links' spheres in ``state`` [m] (negative: they overlap)."""
    poses = dict(zip(checker.model.link_names, checker.model.tree.link_poses(checker.state_vector(state))))
    centers = [spheres[link].centers @ poses[link][:3, :3].T + poses[link][:3, 3] for link in (link_a, link_b)]
    distances = np.linalg.norm(centers[0][:, None] - centers[1][None], axis=2)
    return float((distances - spheres[link_a].radii[:, None] - spheres[link_b].radii[None]).min())


def _table_link_spheres(checker: CollisionChecker) -> dict[str, int]:
    """link -> the number of spheres ``sphere_table`` holds for it."""
    table = sphere_table(checker)
    names = checker.model.link_names
    return {names[link]: int(table.body_first[b + 1] - table.body_first[b]) for b, link in enumerate(table.body_link)}


@pytest.fixture(scope="module")
def kinova() -> CollisionChecker:
    return CollisionChecker(RobotModel.from_urdf_file(example_robot_urdf("kinova")))


def test_the_kinovas_folded_wrist_links_get_fine_spheres_that_part_where_the_links_do(kinova):
    plain = robot_spheres(kinova.link_geometry)
    held = _table_link_spheres(kinova)
    refitted = {link for link, count in held.items() if count != len(plain[link].radii)}
    assert set(WRIST) <= refitted
    fine = robot_spheres(kinova.link_geometry, frozenset(refitted))
    assert not kinova.is_colliding(FOLDED)
    assert _sphere_gap(kinova, plain, FOLDED, WRIST[0], WRIST[2]) < -0.005
    assert _sphere_gap(kinova, fine, FOLDED, WRIST[0], WRIST[2]) > 0.0
    assert free_for_spheres(kinova, kinova.state_vector(FOLDED))


def test_a_robot_whose_spheres_part_where_its_links_do_keeps_its_plain_fit():
    model = RobotModel.from_urdf_file(bundled_robot_path("panda"))
    checker = CollisionChecker(model, SemanticModel.from_srdf_string(bundled_robot_path("panda", "srdf").read_text(),
                                                                     model))
    plain = robot_spheres(checker.link_geometry)
    assert _table_link_spheres(checker) == {link: len(spheres.radii) for link, spheres in plain.items()}
