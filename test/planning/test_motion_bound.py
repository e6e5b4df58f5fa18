"""The states between a path's checked points: a one-joint arm whose 1 cm ball swings 3 cm between two points
passes an obstacle between them that neither point touches; the proof refuses it, and proves the same motion with
the obstacle out of the swept band. The motion bound is never below the true motion of a link's points (its shapes'
bounding-box corners, which lie farthest from every axis)."""
from __future__ import annotations

import numpy as np
import pytest
from meshes import boxes_mesh
from robots import bundled_robot

from kinematics_py import RobotModel, SemanticModel
from kinematics_py.collision import tables as tables_module
from kinematics_py.collision.checker import CollisionChecker, offsets_exact
from kinematics_py.collision.geometry import Box, GeometryError, Mesh, Placed
from kinematics_py.collision.spheres import shape_polytope
from kinematics_py.geometry.transforms import make_transform
from kinematics_py.planning.motion_bound import (
    CHECKED_BARE_FROM,
    _end_rows,
    _first_parts,
    _grown,
    _growth_steps,
    _halved,
    _on_the_ladder,
    _provable,
    _unproven_parts,
    first_unproven,
    link_reach,
)
from kinematics_py.planning.path_check import PathCheck, densify

SWING_URDF = """<robot name="swing">
  <link name="base"/>
  <link name="arm"><collision><origin xyz="1 0 0"/><geometry><sphere radius="0.01"/></geometry></collision></link>
  <joint name="turn" type="revolute"><parent link="base"/><child link="arm"/><axis xyz="0 0 1"/>
    <limit lower="-3" upper="3" effort="1" velocity="1"/></joint>
</robot>"""
#: The two points of the path [rad]: the ball's centre moves 3 cm along its 1 m circle.
POINTS = np.array([[0.0], [0.03]])
SEED = 5


def swing(obstacle_centre) -> PathCheck:
    model = RobotModel.from_urdf_string(SWING_URDF)
    checker = CollisionChecker(model)
    checker.scene.add_object("grain", [Box((0.002, 0.002, 0.002))], pose=make_transform(None, obstacle_centre))
    return PathCheck(checker, ["turn"])


def test_an_obstacle_between_two_free_points_is_found():
    check = swing((np.cos(0.015), np.sin(0.015), 0.0))  # on the circle, half-way
    assert check.first_invalid(POINTS) < 0  # neither point touches it
    assert check.first_invalid(densify(POINTS, 0.001)) >= 0  # but the ball sweeps through it
    assert first_unproven(check, POINTS) == 0


def test_a_motion_through_the_obstacle_is_refused_without_halving_it_to_the_end(monkeypatch):
    """The ball's path crosses the grain for most of the step: halving it would keep doubling the parts that touch
    it (up to 2**MAX_HALVINGS); the states they touch at, checked bare, collide, and the proof stops there."""
    check = swing((np.cos(0.015), np.sin(0.015), 0.0))
    checked = []
    check_batch = CollisionChecker.check_batch
    monkeypatch.setattr(CollisionChecker, "check_batch",
                        lambda self, states, **kw: checked.append(len(states)) or check_batch(self, states, **kw))
    assert first_unproven(check, POINTS) == 0
    assert sum(checked) < 8 * CHECKED_BARE_FROM
    assert first_unproven(check, np.vstack([POINTS, POINTS[::-1]])) == 0  # the first of two such segments


def test_a_motion_clear_of_the_obstacle_is_proven():
    check = swing((1.03 * np.cos(0.015), 1.03 * np.sin(0.015), 0.0))  # 3 cm outside the circle
    assert first_unproven(check, POINTS) == -1


def test_a_proofs_parts_are_its_chosen_segments_between_their_ends_each_halved_in_order():
    points, parts = _first_parts(6, np.array([0, 1, 3]))  # segments 0, 1 and 3 of a path of 6 points
    assert points.tolist() == [0, 1, 2, 3, 4]  # their ends, each once
    assert parts.tolist() == [[0, 0, 1], [1, 1, 2], [3, 3, 4]]  # (segment, the rows of its ends in ``points``)
    states = np.arange(10.0).reshape(5, 2)
    halves, states_after = _halved(parts[[0, 2]], states)
    assert halves.tolist() == [[0, 0, 5], [0, 5, 1], [3, 3, 6], [3, 6, 4]]
    assert np.array_equal(states_after, np.vstack([states, (states[0] + states[1]) / 2, (states[3] + states[4]) / 2]))
    assert _end_rows(halves, 7).tolist() == [0, 1, 3, 4, 5, 6]
    free = np.array([True, True, True, False, True, True, True])
    assert _unproven_parts(halves, free, 6).tolist() == [[3, 3, 6]]  # the one part with an end not free
    assert _unproven_parts(halves, free, 3).tolist() == []  # of segments before 3: none


def added(grown, checker, link: str) -> float:
    """How much ``grown`` grows ``link`` beyond ``checker``: its exact offset, or its padding beyond checker's."""
    return grown.offset(link) + grown.padding(link) - checker.padding(link)


def test_proofs_on_the_same_rungs_share_their_grown_checkers_until_the_configuration_changes():
    check = swing((1.03 * np.cos(0.015), 1.03 * np.sin(0.015), 0.0))
    exact = offsets_exact(check.checker)
    def grown(growth):
        return _grown(check.checker, ("arm",), _growth_steps(np.array([growth])), exact)

    a = grown(0.010)
    assert grown(0.0101) is a  # rounded up to the same power of sqrt(2)
    assert grown(0.02) is not a
    assert added(a, check.checker, "arm") >= 0.0101
    halved = _growth_steps(np.array([0.02, 0.0, 1e-7]))  # halving a growth takes 2 from its step (down to 0)
    assert np.array_equal(halved, [_growth_steps(np.array([0.04]))[0] - 2, -1, 0])
    check.checker.set_padding(0.001, ["arm"])
    b = grown(0.010)
    assert b is not a and added(b, check.checker, "arm") >= 0.010 and b.padding("arm") >= 0.001
    growth = np.array([0.013, 0.0, 0.002])
    rung = np.array([0.004, 0.0, 0.01])
    on = _on_the_ladder(growth, rung)
    assert np.all(on >= growth) and np.allclose(on / np.where(rung > 0, rung, 1), [4, 0, 4])


def test_what_proofs_are_made_with_is_kept_until_the_paddings_or_the_scene_change(monkeypatch):
    """``_provable`` answers from its keeping until the checker's configuration or scene changes: a padding then
    lengthens the link's reach; a world mesh keeps the growths exact offsets (the kernels test its triangles against
    a grown link), a mesh of more triangles than they take makes them paddings (coal ignores an offset there)."""
    check = swing((1.03 * np.cos(0.015), 1.03 * np.sin(0.015), 0.0))
    kept = _provable(check)
    assert _provable(check) is kept and kept.exact
    check.checker.set_padding(0.01, ["arm"])
    padded = _provable(check)
    assert padded.reach[0, 0] == pytest.approx(kept.reach[0, 0] + 0.01)
    check.checker.scene.add_object("crate", [cube_mesh(0.05)], pose=make_transform(None, (0.0, 2.0, 0.0)))
    assert _provable(check).exact
    monkeypatch.setattr(tables_module, "MAX_TREE_TRIANGLES", 4)
    check.checker.scene.add_object("crate 2", [cube_mesh(0.05)], pose=make_transform(None, (0.0, -2.0, 0.0)))
    assert not _provable(check).exact


@pytest.mark.parametrize("robot", ["panda", "ur5"])
def test_no_point_of_a_link_moves_farther_than_its_bound(robot):
    model = RobotModel.from_urdf_file(bundled_robot(f"{robot}.urdf"))
    checker = CollisionChecker(model, SemanticModel.from_srdf_file(bundled_robot(f"{robot}.srdf"), model))
    names = [name for name in model.tree.variable_names if "finger" not in name]
    links, reach = link_reach(checker, names)
    rng = np.random.default_rng(SEED)
    lower, upper = np.maximum(model.tree.lower, -3.0), np.minimum(model.tree.upper, 3.0)
    for _ in range(50):
        q_from = lower + rng.random(len(lower)) * (upper - lower)
        moving = [model.tree.variable_index[n] for n in names]  # the other joints keep their values
        q_to = q_from.copy()
        q_to[moving] = np.clip(q_from[moving] + rng.normal(scale=0.05, size=len(moving)), lower[moving], upper[moving])
        bound = np.abs(q_to - q_from)[moving] @ reach.T
        path = model.tree.link_poses_batch(np.linspace(q_from, q_to, 200))
        for l, link in enumerate(links):
            index = model.link_names.index(link)
            corners = np.vstack([shape_polytope(placed)[2] for placed in checker.link_geometry[link]])
            moved = np.einsum("nij,pj->npi", path[:, index, :3, :3], corners) + path[:, index, None, :3, 3]
            travelled = np.linalg.norm(np.diff(moved, axis=0), axis=2).sum(axis=0)
            assert travelled.max() <= bound[l] + 1e-9, (link, travelled.max(), bound[l])



#: The swing with a 2 cm cube for its ball.
CUBE_URDF = SWING_URDF.replace('<sphere radius="0.01"/>', '<box size="0.02 0.02 0.02"/>')


def cube_mesh(half: float) -> Mesh:
    return boxes_mesh([((0.0, 0.0, 0.0), (2 * half,) * 3)])


@pytest.mark.parametrize("grain_shape", ["box", "mesh"])
@pytest.mark.parametrize("link_shape", ["box", "mesh"])
@pytest.mark.parametrize("grain_centre, gap", [((1.03, 0.03, 0.03), np.sqrt(3) * 0.019), ((1.03, 0.0, 0.0), 0.019)],
                         ids=["off-a-corner", "off-a-face"])
def test_an_offset_link_touches_what_lies_within_the_offset_and_nothing_farther(link_shape, grain_shape, grain_centre,
                                                                               gap):
    """``set_offset`` grows a link exactly: a 2 mm grain ``gap`` from the 2 cm cube (along the corner's diagonal,
    or straight off a face), a box or a mesh's triangles, is hit with 0.6 mm more and missed with 0.4 mm less.
    Padding is not exact either way: a padded box's corner reaches farther than the offset, a padded mesh's face (its
    vertices moved away from their centroid) not as far."""
    model = RobotModel.from_urdf_string(CUBE_URDF)
    geometry = None if link_shape == "box" else {"arm": [Placed(cube_mesh(0.01), make_transform(None, (1, 0, 0)))]}
    checker = CollisionChecker(model, geometry=geometry)
    grain = Box((0.002, 0.002, 0.002)) if grain_shape == "box" else cube_mesh(0.001)
    checker.scene.add_object("grain", [grain], pose=make_transform(None, grain_centre))
    assert offsets_exact(checker)
    for offset, hit in ((gap - 0.0004, False), (gap + 0.0006, True)):
        checker.set_offset(offset, ["arm"])
        assert checker.is_colliding(checker.state_vector()) == hit, offset


@pytest.mark.parametrize("too_large", [False, True], ids=["mesh", "mesh-too-large-for-the-kernels"])
def test_with_a_world_mesh_the_proof_stays_right(monkeypatch, too_large):
    """With a mesh in the world the links are grown by exact offsets (the kernels test its triangles against them);
    with a mesh of more triangles than the kernels take, whose pairs coal tests without the offset, they are padded
    (and the padding multiplied to a full offset). The answers are the same."""
    if too_large:
        monkeypatch.setattr(tables_module, "MAX_TREE_TRIANGLES", 4)
    for centre, proven in (((np.cos(0.015), np.sin(0.015), 0.0), 0),
                           ((1.03 * np.cos(0.015), 1.03 * np.sin(0.015), 0.0), -1)):
        check = swing(centre)
        check.checker.scene.add_object("far_mesh", [cube_mesh(0.05)], pose=make_transform(None, (0.0, 0.0, 3.0)))
        assert offsets_exact(check.checker) != too_large
        assert first_unproven(check, POINTS) == proven


def held(obstacle_centre, part: str) -> PathCheck:
    """The swing arm holding a 1 cm part (a box, or a box mesh checked by its triangles) 5 cm above its ball,
    which it may touch, with a grain at ``obstacle_centre``."""
    check = swing(obstacle_centre)
    shape = Box((0.02, 0.02, 0.02)) if part == "box" else cube_mesh(0.01)
    check.checker.scene.attach_object("part", "arm", shapes=[shape], pose=make_transform(None, (1.0, 0.0, 0.05)))
    return check


@pytest.mark.parametrize("part", ["box", "mesh"])
def test_a_held_part_sweeping_through_an_obstacle_between_two_free_points_is_found(part):
    """The part is one more body of its link, grown by an offset of its own: its sweep through a grain that neither
    point touches is found; the same motion with the grain out of its band is proven."""
    check = held((np.cos(0.015), np.sin(0.015), 0.05), part)
    assert check.first_invalid(POINTS) < 0
    assert check.first_invalid(densify(POINTS, 0.001)) >= 0  # the part sweeps through the grain
    provable = _provable(check)
    assert provable.links == ("arm", "part") and provable.exact
    assert provable.reach[1, 0] > provable.reach[0, 0]  # its corners lie farther from the axis than the ball's
    assert first_unproven(check, POINTS) == 0
    assert first_unproven(held((1.03 * np.cos(0.015), 1.03 * np.sin(0.015), 0.05), part), POINTS) == -1


def test_a_held_part_is_not_proven_where_its_growth_cannot_be_set_apart_or_made_exact(monkeypatch):
    """A part named like a link (a growth is set by name) and a part among paddings (no padding grows it) leave
    the motion unproven; an offset set on the part grows its shapes alone."""
    check = held((1.03 * np.cos(0.015), 1.03 * np.sin(0.015), 0.05), "box")
    check.checker.scene.attach_object("arm", "arm", shapes=[Box((0.01, 0.01, 0.01))],
                                      pose=make_transform(None, (1.0, 0.0, -0.05)))
    assert _provable(check) is None and first_unproven(check, POINTS) is None
    check = held((1.0, 0.0, 0.05 + 0.01 + 0.004), "mesh")  # a grain 4 mm above the part
    grown = check.checker.for_scene(check.checker.scene)
    grown.set_offset(0.005, ["part"])
    assert not check.checker.is_colliding(check.full_state(POINTS[0]))
    assert grown.is_colliding(check.full_state(POINTS[0]))
    assert grown.offset("arm") == 0.0
    with pytest.raises(GeometryError, match="no collision geometry"):
        grown.set_offset(0.005, ["no such part"])
    monkeypatch.setattr(tables_module, "MAX_TREE_TRIANGLES", 4)  # a mesh the kernels leave to coal: paddings
    assert not offsets_exact(check.checker) and _provable(check) is None
