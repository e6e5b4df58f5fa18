"""The generated sphere model (``collision/spheres.py``, issue 30): generation time, sphere count, and how often the
spheres call a random state colliding that the exact checker calls free.

    .venv/bin/python bench/sphere_model.py          # bundled Panda and UR5; example-robot-data's Panda, Kinova, ...
    .venv/bin/python bench/sphere_model.py --robots panda --states 5000

Protocol, per robot: a fresh ``CollisionChecker`` (the URDF's collision shapes; the bundled robots' SRDF disabled
pairs; example-robot-data's robots have no SRDF, so only adjacent links are left out), then one timed
``robot_spheres`` call in this process (convex hulls of the meshes included, the meshes' loading not), wall clock
and this process's CPU time (the load of a shared machine inflates the first). ``--states``
states drawn uniformly within the joint limits and [-pi, pi] (seed ``--seed``). Self: the spheres' verdict
(``sphere_kernels.colliding_pairs``, the table of ``sphere_world``, no world objects) against
``check_batch(world=False)``. World: the ``table_wall`` boxes of ``bench/motion_planning.py`` (a table and a wall),
the spheres' body-obstacle hits against ``check_batch(self_collisions=False)``. "missed" counts states the exact
checker calls colliding and the spheres free: it must be 0 (the spheres contain the geometry).
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

BENCH_DIR = Path(__file__).resolve().parent
ROOT = BENCH_DIR.parent
sys.path[:0] = [str(ROOT / "test"), str(ROOT)]

from robots import example_robot_data_dir, example_robot_urdf  # noqa: E402

from kinematics_py import RobotModel, SemanticModel  # noqa: E402
from kinematics_py.collision.checker import CollisionChecker  # noqa: E402
from kinematics_py.collision.geometry import Box  # noqa: E402
from kinematics_py.collision.sphere_kernels import colliding_pairs, workspace  # noqa: E402
from kinematics_py.collision.sphere_world import sphere_table  # noqa: E402
from kinematics_py.collision.spheres import robot_spheres  # noqa: E402
from kinematics_py.geometry.transforms import make_transform  # noqa: E402
from kinematics_py.robots import bundled_robot_path  # noqa: E402

TABLE_WALL = [("table", (0.8, 1.6, 0.04), (0.6, 0.0, 0.0)), ("wall", (0.04, 1.2, 0.6), (0.5, 0.0, 0.32))]
ROBOTS = ("panda", "ur5", "panda_meshes", "kinova", "xarm7", "z1")
#: example-robot-data robots test/robots.py does not name: path inside its ``robots`` folder.
OTHER_URDFS = {"xarm7": "xarm_description/urdf/xarm7.urdf", "z1": "z1_description/urdf/z1.urdf"}


def checker_of(robot: str) -> CollisionChecker:
    if robot in ("panda", "ur5"):
        model = RobotModel.from_urdf_file(bundled_robot_path(robot))
        semantic = SemanticModel.from_srdf_string(bundled_robot_path(robot, "srdf").read_text(), model)
        return CollisionChecker(model, semantic)
    path = (example_robot_data_dir() / OTHER_URDFS[robot] if robot in OTHER_URDFS else
            example_robot_urdf(robot.removesuffix("_meshes")))
    return CollisionChecker(RobotModel.from_urdf_file(path))


def sphere_verdicts(checker: CollisionChecker, states: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(self, world): (N,) bool, whether the spheres of each full state touch each other, or an obstacle."""
    table = sphere_table(checker)
    assert not isinstance(table, str), table
    indices = np.arange(states.shape[1], dtype=np.int64)
    tree, arrays = checker.model.tree.table_arrays, tuple(table)
    work = workspace(states[0], len(checker.model.link_names), table)
    self_hits, world_hits = np.zeros(len(states), dtype=bool), np.zeros(len(states), dtype=bool)
    for k, q in enumerate(states):
        self_hit, world_hit = np.zeros(len(table.self_pairs), dtype=bool), np.zeros(table.world_tested.shape, bool)
        colliding_pairs(q, indices, tree, arrays, work, self_hit, world_hit)
        self_hits[k], world_hits[k] = self_hit.any(), world_hit.any()
    return self_hits, world_hits


def measure(robot: str, count: int, seed: int) -> str:
    checker = checker_of(robot)
    start, cpu = time.perf_counter(), time.process_time()
    spheres = robot_spheres(checker.link_geometry)
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    total = sum(len(s.radii) for s in spheres.values())
    tree = checker.model.tree
    rng = np.random.default_rng(seed)
    states = rng.uniform(np.maximum(tree.lower, -np.pi), np.minimum(tree.upper, np.pi), (count, tree.size))
    exact_self = checker.check_batch(states, world=False)
    sphere_self, _ = sphere_verdicts(checker, states)
    for name, size, centre in TABLE_WALL:
        checker.scene.add_object(name, [Box(size)], pose=make_transform(None, centre))
    exact_world = checker.check_batch(states, self_collisions=False)
    _, sphere_world = sphere_verdicts(checker, states)
    missed = int((exact_self & ~sphere_self).sum() + (exact_world & ~sphere_world).sum())
    shares = " | ".join(f"{100 * verdicts.mean():.1f}" for verdicts in (sphere_self, exact_self, sphere_world,
                                                                         exact_world))
    return f"| {robot} | {total} | {seconds:.3f} ({cpu:.3f}) | {shares} | {missed} |"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--robots", default=",".join(ROBOTS), help=f"comma-separated, from: {', '.join(ROBOTS)}")
    parser.add_argument("--states", type=int, default=2000, help="random states per robot (default 2000)")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    print("| robot | spheres | generation s (CPU s) | self % (spheres) | self % (exact) | table_wall % (spheres) | "
          "table_wall % (exact) | missed |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for robot in args.robots.split(","):
        print(measure(robot.strip(), args.states, args.seed), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
