"""Scenes and robots with much geometry: the shape pairs to test are found without Python work per pair (and are
exactly those the rules leave, world objects never among themselves), a removed object's collision structures are
freed with it, and meshes over the triangle cap are refused with the reason (issue 9, item 5)."""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
from robots import bundled_robot

from kinematics_py import RobotModel, SemanticModel
from kinematics_py.collision.checker import BodyType, CollisionChecker
from kinematics_py.collision.geometry import Box, Mesh, Sphere, triangle_count_problem
from kinematics_py.collision.scene import PlanningScene

REPO = Path(__file__).resolve().parents[2]
#: The mesh of the memory test: an icosphere cut to 200,000 triangles (the issue's scene object).
HEAVY_TRIANGLES = 200_000
#: Of the memory a heavy object took while in the scene, at most this fraction may stay after its removal
#: (before: all of it stayed, held by the backend geometry cache).
KEPT_FRACTION_BOUND = 0.5
#: Tables of the Panda and 5,000 world boxes: about 0.1 s on a quiet machine.
LARGE_WORLD_BOUND_S = 10.0


def reference_pairs(tables, attached_touch: dict[str, set[str]], disabled: set[frozenset[str]]) -> set:
    """The pairs by the rules, one shape pair at a time: not of one body, not two world objects, not a disabled
    body pair, not an attached object with its link or touch links."""
    pairs = set()
    bodies = tables.shape_body
    for i in range(len(bodies)):
        for j in range(i + 1, len(bodies)):
            a, b = bodies[i], bodies[j]
            (name_a, type_a), (name_b, type_b) = ((tables.body_names[k], tables.body_types[k]) for k in (a, b))
            if a == b or type_a == type_b == BodyType.WORLD_OBJECT or frozenset((name_a, name_b)) in disabled:
                continue
            if type_a == BodyType.ROBOT_ATTACHED and type_b == BodyType.ROBOT_LINK and name_b in attached_touch[name_a]:
                continue
            if type_b == BodyType.ROBOT_ATTACHED and type_a == BodyType.ROBOT_LINK and name_a in attached_touch[name_b]:
                continue
            pairs.add((i, j))
    return pairs


def test_the_pairs_to_test_are_exactly_those_the_rules_leave():
    model = RobotModel.from_urdf_file(bundled_robot("panda.urdf"))
    semantic = SemanticModel.from_srdf_string(bundled_robot("panda.srdf").read_text(), model)
    scene = PlanningScene(model)
    for k in range(4):
        scene.add_object(f"box{k}", [Box((0.1, 0.1, 0.1)), Sphere(0.05)], ((1.0 + k, 0.0, 0.0), (0, 0, 0, 1)))
    scene.add_object("panda_link3", [Sphere(0.05)], ((0.0, 2.0, 0.0), (0, 0, 0, 1)))  # named like a link
    scene.attach_object("tool", "panda_hand", ["panda_leftfinger"], [Box((0.02, 0.02, 0.1)), Sphere(0.01)])
    scene.attach_object("box3", "panda_link7")
    checker = CollisionChecker(model, semantic, scene)
    checker.allow_collision("box0", "panda_link1")
    checker.allow_collision("tool", "box1")
    tables = checker._current_tables()
    touch = {object_id: set(item.touch_links) | {item.link} for object_id, item in scene.attached_objects.items()}
    expected = reference_pairs(tables, touch, set(checker.disabled_pairs))
    assert {tuple(pair) for pair in tables.shapes.pairs.tolist()} == expected
    assert len(tables.pair_geometries) == len(expected)
    assert list(tables.pair_involves_world) == [
        BodyType.WORLD_OBJECT in (tables.body_types[tables.shape_body[a]], tables.body_types[tables.shape_body[b]])
        for a, b in tables.shapes.pairs]


def test_meshes_over_the_triangle_cap_are_named_with_their_count():
    mesh = Mesh(np.eye(3), [[0, 1, 2]] * 5)
    assert triangle_count_problem([mesh, Box((1, 1, 1)), mesh], 10, "object 'scan'") is None
    assert triangle_count_problem([mesh, mesh, mesh], 10, "object 'scan'") == (
        "object 'scan': its meshes have 15 triangles, more than max_mesh_triangles = 10")
    assert triangle_count_problem([mesh] * 1000, None, "anything") is None


MEMORY_SCRIPT = textwrap.dedent(f"""
    import gc, json, os
    import numpy as np, trimesh
    from kinematics_py.collision.geometry import Mesh
    from kinematics_py.collision.scene import PlanningScene
    from kinematics_py.robot_setup import SetupInputs, build_robot_setup
    from kinematics_py.robots import bundled_robot_path

    def rss_mb():
        return int(open("/proc/self/statm").read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20

    setup = build_robot_setup(SetupInputs(bundled_robot_path("ur5").read_text(),
                                          bundled_robot_path("ur5", "srdf").read_text()))
    sphere = trimesh.creation.icosphere(subdivisions=7, radius=0.2)
    vertices, triangles = np.array(sphere.vertices) + (0.0, 0.0, 2.0), np.array(sphere.faces[:{HEAVY_TRIANGLES}])
    del sphere
    robot = setup.collision.checker
    robot.for_scene(PlanningScene(setup.model)).is_colliding(None)
    gc.collect()
    before = rss_mb()
    scene = PlanningScene(setup.model)
    scene.add_object("scan", [Mesh(vertices, triangles)])
    checker = robot.for_scene(scene)
    assert checker.check(None).pairs == robot.check(None).pairs, "the boxes are 2 m away or more"
    with_object = rss_mb()
    scene = scene.copy()
    scene.remove_object("scan")
    checker = robot.for_scene(scene)
    checker.is_colliding(None)
    gc.collect()
    print(json.dumps({{"before": before, "with_object": with_object, "after": rss_mb()}}))
""")


def test_a_removed_heavy_mesh_gives_its_memory_back():
    """In a fresh interpreter: RSS before a 200k-triangle world object, with it (its bounding-volume tree built by
    a check) and after its removal."""
    run = subprocess.run([sys.executable, "-c", MEMORY_SCRIPT], capture_output=True, text=True, timeout=300,
                         cwd=REPO)
    assert run.returncode == 0, run.stderr
    rss = json.loads(run.stdout.strip().splitlines()[-1])
    taken = rss["with_object"] - rss["before"]
    assert taken > 20, f"the object should take memory: {rss}"
    assert rss["after"] - rss["before"] < KEPT_FRACTION_BOUND * taken, rss


def test_a_large_world_pairs_each_object_with_the_robot_only():
    """5,000 world boxes: world objects are never paired with each other, so the tables grow with the world's
    size (times the robot's shapes), not with its square (12.5 million pairs of boxes)."""
    model = RobotModel.from_urdf_file(bundled_robot("panda.urdf"))
    scene = PlanningScene(model)
    world = [(f"box{k}", [Box((0.05, 0.05, 0.05))], ((2.0 + 0.1 * (k % 50), 0.1 * (k // 50), 0.0), (0, 0, 0, 1)))
             for k in range(5000)]
    for object_id, shapes, pose in world:
        scene.add_object(object_id, shapes, pose)
    checker = CollisionChecker(model, None, scene)
    robot = CollisionChecker(model, None, PlanningScene(model))
    robot_tables = robot._current_tables()
    start = time.perf_counter()
    tables = checker._current_tables()
    assert time.perf_counter() - start < LARGE_WORLD_BOUND_S
    robot_shapes = len(robot_tables.shape_body)
    assert len(tables.shapes.pairs) == len(robot_tables.shapes.pairs) + robot_shapes * len(world)
    assert int(tables.pair_involves_world.sum()) == robot_shapes * len(world)
    assert checker.check(None).pairs == robot.check(None).pairs, "the boxes are 2 m away or more"
