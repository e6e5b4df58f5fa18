"""Collision checks: primitives with analytically known answers, real robots (Panda and UR5 with their
example-robot-data collision meshes) against an independent pinocchio reference, world and attached
objects, padding and scale, contacts, group-limited and batch checks."""
from __future__ import annotations

import math

import coal
import numpy as np
import pytest
from reference import EXAMPLE_ROBOT_SRDFS as SRDFS
from reference import PinocchioCollisions
from robots import example_robot_data_dir, example_robot_urdf

from kinematics_py import RobotModel, SemanticModel
from kinematics_py.collision.checker import BodyType, CollisionChecker
from kinematics_py.collision.geometry import Box, Cone, Cylinder, GeometryError, Mesh, Placed, Plane, Sphere
from kinematics_py.collision.tables import adjacent_link_pairs
from kinematics_py.errors import ErrorCode, UnknownJointError, UnknownLinkError
from kinematics_py.geometry.transforms import make_transform, rotation_about_axis

SEED = 7
#: Analytic thresholds are exact; GJK/EPA answers are good to about this [m].
GJK_TOLERANCE = 1e-6
#: Offsets around an analytic threshold that must give a definite answer [m].
MARGIN = 1e-4
#: Random states compared with the pinocchio reference, and the largest share of states where only we see
#: a collision (our convex hulls are a little larger than pinocchio's triangle surfaces).
REFERENCE_STATES = 400
HULL_EXTRA_COLLISION_RATE = 0.03
PANDA_READY = {"panda_joint2": -0.785, "panda_joint4": -2.356, "panda_joint6": 1.571, "panda_joint7": 0.785,
               "panda_finger_joint1": 0.02}
#: Elbow folded onto the base: the hand and forearm come down onto links 0 and 1.
PANDA_FOLDED = {"panda_joint2": 1.5, "panda_joint4": -3.0, "panda_joint6": 0.0}
#: The tool centre point 1 cm above the table top, pointing down: fingers and held box are in the table.
PANDA_TCP_ON_TABLE = {"panda_joint2": 0.29, "panda_joint4": -2.003, "panda_joint6": 2.293}
UR5_UP = {"shoulder_lift_joint": -math.pi / 2, "wrist_1_joint": -math.pi / 2}
#: Shoulder lifted, elbow folded back: the wrist comes down onto the base.
UR5_WRIST_ON_BASE = {"shoulder_lift_joint": -math.pi / 2, "elbow_joint": 2.8, "wrist_1_joint": 0.0}

SLIDER_URDF = """<robot name="slider">
  <link name="base"><collision><geometry><box size="0.2 0.2 0.2"/></geometry></collision></link>
  <link name="carriage"><collision><origin xyz="0 3 0"/><geometry><sphere radius="0.05"/></geometry></collision></link>
  <link name="probe"/>
  <joint name="x" type="prismatic"><parent link="base"/><child link="carriage"/><axis xyz="1 0 0"/>
    <limit lower="-3" upper="3" effort="1" velocity="1"/></joint>
  <joint name="z" type="prismatic"><parent link="carriage"/><child link="probe"/><axis xyz="0 0 1"/>
    <limit lower="-3" upper="3" effort="1" velocity="1"/></joint>
</robot>"""


# ================================================================================== helpers
def slider(probe_shape, *, scale=1.0, padding=0.0):
    """A probe moving along x (joint 'x') and z (joint 'z'), its shape given; a 0.2 m cube 'base' at the origin
    (not adjacent to the probe: the carriage between them has geometry, far away at y = 3; without it, base
    and probe would count as adjacent)."""
    model = RobotModel.from_urdf_string(SLIDER_URDF)
    geometry = {"base": [Placed(Box((0.2, 0.2, 0.2)))], "carriage": [Placed(Sphere(0.05),
                                                                             make_transform(None, (0, 3, 0)))],
                "probe": [probe_shape if isinstance(probe_shape, Placed) else Placed(probe_shape)]}
    return CollisionChecker(model, geometry=geometry, scale=scale, padding=padding)


def pose(x, y, z, quaternion=(0.0, 0.0, 0.0, 1.0)):
    return ((x, y, z), quaternion)




def real_robot(robot: str, **options) -> CollisionChecker:
    model = RobotModel.from_urdf_file(example_robot_urdf(robot))
    semantic = SemanticModel.from_srdf_file(example_robot_data_dir() / SRDFS[robot], model)
    return CollisionChecker(model, semantic, **options)


def random_states(checker: CollisionChecker, count: int, rng) -> np.ndarray:
    model = checker.model
    lower = np.array([max(model.joints[n].lower, -math.pi) for n in checker.variable_names])
    upper = np.array([min(model.joints[n].upper, math.pi) for n in checker.variable_names])
    return lower + rng.random((count, len(lower))) * (upper - lower)


def pair_set(report) -> set[frozenset[str]]:
    return {frozenset(pair) for pair in report.pairs}


@pytest.fixture(scope="module")
def panda():
    return real_robot("panda")


@pytest.fixture(scope="module")
def panda_reference():
    return PinocchioCollisions("panda")


# ================================================================================== primitives, analytic
def test_sphere_touches_the_cube_exactly_at_the_sum_of_half_sizes():
    checker = slider(Sphere(0.1))
    threshold = 0.1 + 0.1  # cube half size + radius
    for x in (-1.0, -threshold - MARGIN, threshold + MARGIN, 0.5):
        assert not checker.is_colliding({"x": x}), x
    for x in (-threshold + MARGIN, 0.0, threshold - MARGIN):
        report = checker.check({"x": x})
        assert report.in_collision and pair_set(report) == {frozenset(("base", "probe"))}, x


def test_sphere_cube_contact_has_the_analytic_depth_normal_and_position():
    checker = slider(Sphere(0.1))
    x = 0.15
    (contact,) = checker.check({"x": x}, contacts=True).contacts
    assert (contact.body_1, contact.type_1, contact.body_2, contact.type_2) == \
        ("base", BodyType.ROBOT_LINK, "probe", BodyType.ROBOT_LINK)
    assert contact.depth == pytest.approx(0.2 - x, abs=GJK_TOLERANCE)
    assert np.allclose(contact.normal, (1, 0, 0), atol=GJK_TOLERANCE), "from body_1 (base) into body_2 (probe)"
    assert 0.05 - GJK_TOLERANCE <= contact.position[0] <= 0.1 + GJK_TOLERANCE


def test_rotated_box_reaches_out_by_its_half_diagonal():
    """A 0.2 m cube turned 45 deg about z reaches 0.1*sqrt(2) towards the base cube."""
    checker = slider(Placed(Box((0.2, 0.2, 0.2)), make_transform(rotation_about_axis(np.array([0, 0, 1.0]),
                                                                                     math.pi / 4))))
    threshold = 0.1 + 0.1 * math.sqrt(2)
    assert checker.is_colliding({"x": threshold - MARGIN})
    assert not checker.is_colliding({"x": threshold + MARGIN})


@pytest.mark.parametrize("shape", [Cylinder(0.05, 0.4), Cone(0.05, 0.4)], ids=["cylinder", "cone"])
def test_cylinder_and_cone_cross_a_plane_while_their_ends_are_on_both_sides(shape):
    model = RobotModel.from_urdf_string(SLIDER_URDF)
    checker = CollisionChecker(model, geometry={"probe": [Placed(shape)]})
    checker.scene.add_object("floor", [Plane((0, 0, 1, 0.5))])  # z = -0.5
    for z, colliding in ((-0.5, True), (-0.3 - MARGIN, True), (-0.7 + MARGIN, True), (-0.3 + MARGIN, False),
                         (-0.7 - MARGIN, False), (0.0, False)):
        assert checker.is_colliding({"z": z}) == colliding, z


def test_padding_and_scale_move_the_threshold_by_the_growth():
    for scale, padding in ((1.0, 0.03), (1.5, 0.0), (2.0, 0.01)):
        threshold = 2 * (0.1 * scale + padding)  # every link grows: the cube's half size and the sphere's radius
        checker = slider(Sphere(0.1), scale=scale, padding=padding)
        assert checker.is_colliding({"x": threshold - MARGIN}) and not checker.is_colliding({"x": threshold + MARGIN})
    checker = slider(Sphere(0.1))
    checker.set_padding(0.05, ["probe"])
    assert (checker.padding("probe"), checker.padding("base")) == (0.05, 0.0)
    assert checker.is_colliding({"x": 0.25 - MARGIN}) and not checker.is_colliding({"x": 0.25 + MARGIN})
    checker.set_scale(0.5, ["probe"])
    assert checker.is_colliding({"x": 0.2 - MARGIN}) and not checker.is_colliding({"x": 0.2 + MARGIN})
    with pytest.raises(GeometryError, match="padding must be finite and >= 0"):
        checker.set_padding(-0.1)
    with pytest.raises(GeometryError, match="offset must be finite and >= 0"):
        checker.set_offset(float("nan"), ["probe"])
    with pytest.raises(UnknownLinkError, match="unknown link 'carriagex'.*valid links are \\['base', 'carriage'"):
        checker.set_scale(2.0, ["carriagex"])
    bare = CollisionChecker(RobotModel.from_urdf_string(SLIDER_URDF), geometry={"probe": [Placed(Sphere(0.1))]})
    with pytest.raises(GeometryError, match="link 'base' has no collision geometry; links with geometry are"):
        bare.set_padding(0.1, ["base"])


def test_world_sphere_and_attached_sphere_follow_analytic_thresholds():
    checker = slider(Sphere(0.05))
    checker.scene.add_object("ball", [Sphere(0.2)], pose=pose(2.0, 0.0, 0.0))
    assert checker.check({"x": 2.0 - 0.25 + MARGIN}).pairs == (("probe", "ball"),)
    assert not checker.is_colliding({"x": 2.0 - 0.25 - MARGIN})
    checker.scene.attach_object("rod", "probe", shapes=[Cylinder(0.01, 1.0)],
                                pose=make_transform(rotation_about_axis(np.array([0, 1.0, 0]), math.pi / 2)))
    # The rod reaches 0.5 m along x from the probe: it meets the ball first.
    report = checker.check({"x": 2.0 - 0.2 - 0.5 + MARGIN})
    assert report.pairs == (("rod", "ball"),)
    assert not checker.is_colliding({"x": 2.0 - 0.2 - 0.5 - MARGIN})


def test_world_meshes_are_surfaces_so_a_bin_stays_hollow():
    """A sphere inside a closed 1 m cube surface (a world mesh) touches nothing until it reaches a wall;
    robot link meshes, by contrast, are checked as their (solid) convex hulls by default."""
    import trimesh
    cube = trimesh.creation.box((1.0, 1.0, 1.0))
    checker = slider(Sphere(0.05))
    checker.scene.add_object("bin", [Mesh(cube.vertices, cube.faces)], pose=pose(2.0, 0.0, 0.0))
    assert not checker.is_colliding({"x": 2.0}), "inside, away from the walls"
    assert checker.is_colliding({"x": 2.0 - 0.5}), "on a wall"
    assert not checker.is_colliding({"x": 2.0 - 0.55 - MARGIN}), "outside"
    ball = trimesh.creation.icosphere(radius=0.05)
    solid = slider(Mesh(ball.vertices, ball.faces))
    solid.scene.add_object("ball", [Sphere(0.02)], pose=pose(1.0, 0.0, 0.0))
    assert solid.is_colliding({"x": 1.0}), "a robot link mesh swallowing a small ball collides with it"


def test_allowed_pairs_are_not_checked_until_disallowed():
    checker = slider(Sphere(0.1))
    checker.allow_collision("base", "probe")
    assert not checker.is_colliding({"x": 0.0})
    assert checker.disabled_pairs[frozenset(("base", "probe"))] == "allowed"
    checker.disallow_collision("base", "probe")
    assert checker.is_colliding({"x": 0.0})


def test_joint_values_are_checked():
    checker = slider(Sphere(0.1))
    assert checker.variable_names == ("x", "z")
    with pytest.raises(UnknownJointError, match="unknown joint 'y'"):
        checker.check({"y": 1.0})
    with pytest.raises(Exception, match="needs 2 values"):
        checker.check([1.0, 2.0, 3.0])
    with pytest.raises(UnknownLinkError, match="unknown link 'nowhere'"):
        checker.check({"x": 0.0}, links=["nowhere"])


def test_validity_of_a_group_vector_counts_checks_rejections_and_pairs():
    checker = slider(Sphere(0.1))
    validity = checker.validity(["x"], {"z": 0.0})
    assert validity(np.array([1.0])).error_code == ErrorCode.SUCCESS
    verdict = validity.solution_callback(None, [0.05])
    assert verdict.error_code == ErrorCode.GOAL_IN_COLLISION and "base - probe" in verdict.reason
    assert validity([0.0]).error_code == ErrorCode.GOAL_IN_COLLISION
    assert (validity.checks, validity.rejections) == (3, 2)
    assert validity.pair_counts == {("base", "probe"): 2} and validity.colliding_pairs() == (("base", "probe"),)
    lifted = checker.validity(["x"], {"z": 1.0})  # the other joints come from the base state
    assert lifted([0.0]).error_code == ErrorCode.SUCCESS


# ================================================================================== adjacency
def test_adjacent_pairs_skip_links_without_geometry():
    model = RobotModel.from_urdf_file(example_robot_urdf("panda"))
    geometry = {f"panda_link{i}" for i in range(8)} | {"panda_hand", "panda_leftfinger", "panda_rightfinger"}
    adjacent = adjacent_link_pairs(model, dict.fromkeys(geometry))
    assert frozenset(("panda_link7", "panda_hand")) in adjacent, "through panda_link8, which has no geometry"
    assert frozenset(("panda_hand", "panda_leftfinger")) in adjacent
    assert frozenset(("panda_leftfinger", "panda_rightfinger")) not in adjacent
    assert len(adjacent) == 10


# ================================================================================== real robots
def test_panda_known_free_and_colliding_states(panda, panda_reference):
    assert not panda.check(PANDA_READY).in_collision
    assert not panda_reference.colliding_pairs(PANDA_READY)
    folded = panda.check(PANDA_FOLDED)
    assert folded.in_collision
    assert frozenset(("panda_link1", "panda_link6")) in pair_set(folded)
    assert pair_set(folded) == panda_reference.colliding_pairs(PANDA_FOLDED)


def test_panda_agrees_with_the_pinocchio_reference_on_random_states(panda, panda_reference):
    """Pair by pair: every pair pinocchio finds we find; we find more only where the convex hull of a link
    mesh is larger than its surface, in a few percent of the states at most."""
    rng = np.random.default_rng(SEED)
    states = random_states(panda, REFERENCE_STATES, rng)
    extra = 0
    colliding = 0
    for q in states:
        values = dict(zip(panda.variable_names, q))
        ours, theirs = pair_set(panda.check(q)), panda_reference.colliding_pairs(values)
        assert theirs <= ours, (values, theirs - ours)
        extra += ours != theirs
        colliding += bool(theirs)
    assert extra / len(states) <= HULL_EXTRA_COLLISION_RATE, extra
    assert 0.02 < colliding / len(states) < 0.95, "the sample holds both free and colliding states"


def test_ur5_known_states_and_agreement_with_the_reference():
    checker, reference = real_robot("ur5"), PinocchioCollisions("ur5")
    assert not checker.check(UR5_UP).in_collision and not reference.colliding_pairs(UR5_UP)
    report = checker.check(UR5_WRIST_ON_BASE)
    assert report.in_collision and pair_set(report) == reference.colliding_pairs(UR5_WRIST_ON_BASE)
    rng = np.random.default_rng(SEED)
    for q in random_states(checker, REFERENCE_STATES // 4, rng):
        theirs = reference.colliding_pairs(dict(zip(checker.variable_names, q)))
        assert theirs <= pair_set(checker.check(q))


def test_mesh_mode_checks_the_triangles(panda_reference):
    checker = real_robot("panda", mesh_mode="mesh")
    assert not checker.is_colliding(PANDA_READY)
    assert pair_set(checker.check(PANDA_FOLDED)) == panda_reference.colliding_pairs(PANDA_FOLDED)


# ================================================================================== world and attached objects
@pytest.fixture
def panda_in_scene():
    """Panda with a table top 0.25 m in front of it and a box held between the fingers."""
    checker = real_robot("panda")
    reference = PinocchioCollisions("panda")
    table_pose = make_transform(None, (0.6, 0.0, 0.2))
    checker.scene.add_object("table", [Box((0.5, 1.0, 0.04))], pose=table_pose)
    reference.add_world_object("table", coal.Box(0.5, 1.0, 0.04), table_pose)
    box_pose = make_transform(None, (0.0, 0.0, 0.1))
    touch = ["panda_leftfinger", "panda_rightfinger"]
    checker.scene.attach_object("box", "panda_hand", touch_links=touch, shapes=[Box((0.04, 0.04, 0.1))], pose=box_pose)
    reference.attach("box", "panda_hand", coal.Box(0.04, 0.04, 0.1), box_pose, touch)
    return checker, reference


def test_held_box_touching_its_fingers_and_hand_is_not_a_collision(panda_in_scene):
    checker, reference = panda_in_scene
    held = {**PANDA_READY, "panda_finger_joint1": 0.015}
    assert not checker.check(held).in_collision and not reference.colliding_pairs(held)


def test_checks_of_a_few_links_find_the_pairs_the_whole_check_finds_with_them(panda_in_scene):
    """A check limited to some links places only the shapes of the pairs it tests (``kernels.place_and_cull``): on
    random states, each link's limited check answers the whole check's pairs with that link (or an object attached
    to it)."""
    checker, _ = panda_in_scene
    names = [n for n in checker.variable_names if n.startswith("panda_joint")]
    joints = checker.model.joints
    lower, upper = (np.array([getattr(joints[n], side) for n in names]) for side in ("lower", "upper"))
    states = lower + np.random.default_rng(SEED).random((60, len(names))) * (upper - lower)
    held_by = {name: attached.link for name, attached in checker.scene.attached_objects.items()}
    everything = [pair_set(checker.check(dict(zip(names, q)))) for q in states]
    limited_pairs_found = 0
    for link in checker.link_geometry:  # (each state's limited check after another state's)
        bodies = {link} | {name for name, holder in held_by.items() if holder == link}
        for q, pairs in zip(states, everything):
            expected = {pair for pair in pairs if pair & bodies}
            assert pair_set(checker.check(dict(zip(names, q)), links=[link])) == expected, link
            limited_pairs_found += len(expected)
    assert limited_pairs_found > 0


def test_held_box_collides_with_other_links_when_they_are_not_touch_links(panda_in_scene):
    checker, _ = panda_in_scene
    checker.scene.attach_object("box", "panda_link7", shapes=[Box((0.04, 0.04, 0.1))], pose=pose(0.0, 0.0, 0.2))
    report = checker.check({**PANDA_READY, "panda_finger_joint1": 0.015})
    assert frozenset(("panda_hand", "box")) in pair_set(report)


def test_lowering_the_arm_puts_hand_and_box_into_the_table(panda_in_scene):
    checker, reference = panda_in_scene
    lowered = {**PANDA_READY, **PANDA_TCP_ON_TABLE}
    report = checker.check(lowered, contacts=True)
    assert frozenset(("box", "table")) in pair_set(report)
    assert pair_set(report) == reference.colliding_pairs(lowered)
    for contact in report.contacts:
        assert contact.depth > 0 and abs(np.linalg.norm(contact.normal) - 1) < 1e-9
    box_table = [c for c in report.contacts if {c.body_1, c.body_2} == {"box", "table"}]
    assert box_table and {box_table[0].type_1, box_table[0].type_2} == {BodyType.ROBOT_ATTACHED, BodyType.WORLD_OBJECT}


def test_world_objects_move_and_leave(panda_in_scene):
    checker, _ = panda_in_scene
    lowered = {**PANDA_READY, **PANDA_TCP_ON_TABLE}
    checker.scene.move_object("table", pose(0.6, 0.0, -0.5))
    assert not checker.is_colliding(lowered)
    checker.scene.move_object("table", pose(0.6, 0.0, 0.2))
    assert checker.is_colliding(lowered)
    checker.scene.remove_object("table")
    checker.scene.detach_object("box")
    checker.scene.remove_object("box")
    assert not checker.is_colliding(lowered)


def test_self_and_world_checks_and_group_limited_checks(panda_in_scene):
    checker, _ = panda_in_scene
    checker.scene.add_object("post", [Cylinder(0.05, 0.3)], pose=pose(0.0, 0.25, 0.15))
    state = {**PANDA_FOLDED, "panda_joint1": math.pi / 2}
    everything = pair_set(checker.check(state))
    self_only = pair_set(checker.check(state, world=False))
    world_only = pair_set(checker.check(state, self_collisions=False))
    assert everything == self_only | world_only and self_only and world_only
    assert all(any(b in ("post", "table") for b in pair) for pair in world_only)
    hand_links = {"panda_hand", "panda_leftfinger", "panda_rightfinger"}
    limited = pair_set(checker.check(state, links=hand_links))
    assert limited == {pair for pair in everything if pair & (hand_links | {"box"})}
    moved_by_wrist = checker.links_moved_by(["panda_joint7"])
    assert moved_by_wrist == {"panda_link7", "panda_link8", "panda_hand", "panda_hand_tcp", "panda_leftfinger",
                              "panda_rightfinger"}


def test_a_request_scene_copy_takes_extra_attached_objects_without_touching_the_shared_scene(panda_in_scene):
    checker, _ = panda_in_scene
    held = {**PANDA_READY, "panda_finger_joint1": 0.015}
    request = checker.for_scene(checker.scene.copy())
    request.scene.attach_object("tool", "panda_link5", shapes=[Sphere(0.2)])
    assert frozenset(("panda_link6", "tool")) in pair_set(request.check(held))
    assert not checker.is_colliding(held) and "tool" not in checker.scene.attached_objects
    request.allow_collision("panda_link6", "tool")
    assert frozenset(("panda_link6", "tool")) not in pair_set(request.check(held))
    assert frozenset(("panda_link6", "tool")) not in checker.disabled_pairs


# ================================================================================== batch
def test_batch_check_matches_single_checks(panda_in_scene):
    checker, _ = panda_in_scene
    rng = np.random.default_rng(SEED)
    states = random_states(checker, 300, rng)
    batch = checker.check_batch(states)
    assert batch.tolist() == [checker.is_colliding(q) for q in states]
    assert 0 < batch.sum() < len(states)
    arm = [f"panda_joint{i}" for i in range(1, 8)]
    fingers = {"panda_finger_joint1": 0.03}
    sub = checker.check_batch(states[:, :7], joint_names=arm, base_state=fingers)
    assert sub.tolist() == [checker.is_colliding({**dict(zip(arm, q)), **fingers}) for q in states[:, :7]]
    with pytest.raises(Exception, match="states must have shape \\(N, 7\\)"):
        checker.check_batch(states, joint_names=arm)
