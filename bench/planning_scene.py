"""How long the node takes to apply planning scene messages, and what an octomap costs each collision check.

    .venv/bin/python bench/planning_scene.py               # ~20 s
    .venv/bin/python bench/planning_scene.py --objects 100 --voxels 10000 --rounds 20

In this process, without DDS, as the node does for a message on planning_scene or apply_planning_scene: the
moveit_msgs/PlanningScene is converted (``scene_conversions.planning_scene_message``), applied to a copy of the
scene (``apply_planning_scene``), and the collision checker's tables are rebuilt by the first check after it.
Measured on the bundled UR5, medians over --rounds rounds (each round on a fresh scene):

1. a full scene of --objects boxes (10 cm, scattered 1-2 m around the robot);
2. a diff carrying a binary octomap of --voxels occupied voxels (2 cm, a slab 0.5-1 m in front of the robot),
   decoded from OctoMap's stream; and the same octomap as a full (non-binary) tree;
3. one collision check (``is_colliding``) of random states with and without that octomap.

Prints a Markdown report.
"""
from __future__ import annotations

import argparse
import statistics
import struct
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from geometry_msgs.msg import Pose  # noqa: E402
from moveit_msgs.msg import CollisionObject, PlanningScene  # noqa: E402
from shape_msgs.msg import SolidPrimitive  # noqa: E402

from kinematics_py import CollisionChecker, RobotModel, SemanticModel  # noqa: E402
from kinematics_py.collision.octomap_format import TREE_DEPTH, morton_codes  # noqa: E402
from kinematics_py.collision.octree import Octree  # noqa: E402
from kinematics_py.collision.scene import PlanningScene as Scene  # noqa: E402
from kinematics_py.collision.scene_message import apply_planning_scene  # noqa: E402
from kinematics_py.robots import bundled_robot_path  # noqa: E402
from kinematics_py.ros.messages.conversions import pose_msg_from_transform  # noqa: E402
from kinematics_py.ros.messages.scene_conversions import planning_scene_message  # noqa: E402


def boxes_scene(count: int, rng) -> PlanningScene:
    msg = PlanningScene(is_diff=False)
    for k in range(count):
        angle, radius = rng.uniform(0, 2 * np.pi), rng.uniform(1.0, 2.0)
        T = np.eye(4)
        T[:3, 3] = (radius * np.cos(angle), radius * np.sin(angle), rng.uniform(0.0, 1.0))
        item = CollisionObject(id=f"box_{k}", operation=CollisionObject.ADD, pose=pose_msg_from_transform(T))
        item.primitives = [SolidPrimitive(type=SolidPrimitive.BOX, dimensions=[0.1, 0.1, 0.1])]
        item.primitive_poses = [Pose()]
        msg.world.collision_objects.append(item)
    return msg


def slab_octree(voxels: int, resolution: float = 0.02) -> Octree:
    """``voxels`` voxels filling a slab in front of the robot, 5 voxels thick."""
    side = int(np.ceil(np.sqrt(voxels / 5)))
    grid = np.stack(np.meshgrid(np.arange(5), np.arange(side), np.arange(side), indexing="ij"), -1).reshape(-1, 3)
    points = (grid[:voxels] + (25.5, 0.5 - side // 2, 0.5)) * resolution  # voxel centres: x from 0.5 m
    return Octree.from_points(points, resolution)


def full_stream(octree: Octree) -> bytes:
    """The same voxels as a full (writeData) stream: every inner node and leaf with a log-odds value."""
    codes = np.sort(morton_codes(octree.keys))
    out = bytearray()

    def node(first: int, end: int, depth: int) -> None:
        out.extend(struct.pack("<f", 2.0))
        if depth == TREE_DEPTH:
            out.append(0)
            return
        shift = 3 * (TREE_DEPTH - depth - 1)
        children = (codes[first:end] >> shift) & 7
        bounds = np.searchsorted(children, np.arange(9)) + first
        out.append(sum(1 << c for c in range(8) if bounds[c + 1] > bounds[c]))
        for c in range(8):
            if bounds[c + 1] > bounds[c]:
                node(int(bounds[c]), int(bounds[c + 1]), depth + 1)
    node(0, len(codes), 0)
    return bytes(out)


def octomap_diff(octree: Octree, binary: bool) -> PlanningScene:
    msg = PlanningScene(is_diff=True)
    octomap = msg.world.octomap.octomap
    octomap.id, octomap.binary, octomap.resolution = "OcTree", binary, octree.resolution
    octomap.data = np.frombuffer(octree.binary_stream() if binary else full_stream(octree), dtype=np.int8).tolist()
    return msg


def apply_and_check(model, checker_of, msg: PlanningScene, state) -> tuple[float, float]:
    """(seconds to convert and apply, seconds of the first check after it) on a fresh scene."""
    scene = Scene(model)
    checker = checker_of(scene)
    start = time.perf_counter()
    apply_planning_scene(scene, planning_scene_message(msg, model, lambda frame: (frame, None), lambda f: not f))
    applied = time.perf_counter()
    checker.is_colliding(state)
    return applied - start, time.perf_counter() - applied


def median_ms(values) -> str:
    return f"{1e3 * statistics.median(values):.2f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--objects", type=int, default=100)
    parser.add_argument("--voxels", type=int, default=10000)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--states", type=int, default=2000)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    model = RobotModel.from_urdf_string(bundled_robot_path("ur5").read_text())
    semantic = SemanticModel.from_srdf_string(bundled_robot_path("ur5", "srdf").read_text(), model)
    robot_checker = CollisionChecker(model, semantic)
    state = robot_checker.state_vector({})
    octree = slab_octree(args.voxels)
    messages = {f"full scene of {args.objects} boxes": boxes_scene(args.objects, rng),
                f"binary octomap of {len(octree)} voxels": octomap_diff(octree, True),
                f"full-tree octomap of {len(octree)} voxels": octomap_diff(octree, False)}
    rows = []
    for name, msg in messages.items():
        apply_and_check(model, robot_checker.for_scene, msg, state)  # compilation, caches
        timings = [apply_and_check(model, robot_checker.for_scene, msg, state) for _ in range(args.rounds)]
        size = len(msg.world.octomap.octomap.data)
        rows.append(f"| {name}{f' ({size} bytes)' if size else ''} | {median_ms([t[0] for t in timings])} "
                    f"| {median_ms([t[1] for t in timings])} |")

    states = robot_checker.model.state_vector({}) + rng.uniform(-2.5, 2.5, (args.states, len(state)))
    per_check = {}
    for name, msg in (("empty world", PlanningScene(is_diff=True)), (f"octomap of {len(octree)} voxels",
                                                                       octomap_diff(octree, True))):
        scene = Scene(model)
        checker = robot_checker.for_scene(scene)
        apply_planning_scene(scene, planning_scene_message(msg, model, lambda frame: (frame, None), lambda f: not f))
        checker.is_colliding(states[0])
        start = time.perf_counter()
        hits = sum(checker.is_colliding(q) for q in states)
        per_check[name] = ((time.perf_counter() - start) / len(states), hits)

    print("| message | convert + apply (median) | first check after it (tables rebuilt) |\n|---|---|---|")
    print("\n".join(rows))
    print("\n| world | is_colliding per state | states in collision |\n|---|---|---|")
    for name, (seconds, hits) in per_check.items():
        print(f"| {name} | {1e6 * seconds:.1f} us | {hits} / {len(states)} |")


if __name__ == "__main__":
    main()
