"""Collision checks per second and collision-aware IK time, with coal and python-fcl side by side.

    .venv/bin/python bench/collision.py                    # ~40 s
    .venv/bin/python bench/collision.py --states 20000 --targets 100 --libraries coal

Scene: example-robot-data's Panda with its collision meshes and SRDF; a table top in front of the
robot (0.5 x 1.2 x 0.04 m, top at z = 0.22 m), a shelf to its left (two boards and a back wall), and a
box (4 x 4 x 10 cm) held between the fingers, attached to panda_hand with the fingers as touch links.

Both libraries run behind the same CollisionChecker (same geometry, kinematics kernel and bounding-box
culling); only the narrow phase differs (``FclBackend`` below wraps python-fcl as ``CoalBackend`` wraps
coal). Since the checker decides pairs of convex shapes itself (``collision.convex_kernels``: the links'
hulls, the table and shelf boxes, the held box), with convex hulls a library answers only the pairs those
kernels leave undecided, so the two libraries' rows measure the checker; with triangle meshes, and in
part 1, the libraries themselves. Every function runs once untimed first (numba compilation, caches);
timings are medians over --rounds rounds in which the libraries take turns (the first one changing each
round), so background load falls on both alike. Measured:

1. narrow phase alone: microseconds per pair test on Panda link pairs in random relative poses, for
   convex hulls and for triangle meshes (BVH), yes/no and with contacts; the libraries must agree;
2. checks per second on states uniform within the joint limits: ``is_colliding`` one state per call,
   ``check_batch`` a block of states in one call, and ``check`` with contacts (each round: 1/--rounds of
   the states); convex-hull meshes (the default)
   and triangle meshes (``mesh_mode="mesh"``); the verdicts must agree between the libraries;
3. collision-aware IK: ``searchPositionIK(avoid_collisions=True)`` on --targets poses above the table
   (tool pointing down, random yaw), seeded at the 'ready' pose, --timeout per call, each target solved
   by both libraries in turn: success rate and median / p90 time per call; every solution is re-checked
   by the other library's checker (with one library, by a second checker of its own).

Prints a Markdown report and writes it to bench/results/collision.md.
"""
from __future__ import annotations

import argparse
import importlib.util
import math
import platform
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np

if importlib.util.find_spec("kinematics_py") is None:  # a checkout without `pip install -e .`
    sys.path.append(str(Path(__file__).resolve().parents[1]))

from kinematics_py import Box, CollisionChecker, KinematicsPlugin, Pose, RobotModel, SemanticModel
from kinematics_py.collision.backend import CoalBackend
from kinematics_py.collision.geometry import Mesh, Plane, convex_hull, load_mesh
from kinematics_py.geometry.transforms import make_transform, rotation_about_axis

sys.path.append(str(Path(__file__).resolve().parents[1] / "test"))
from robots import example_robot_data_dir, example_robot_urdf  # noqa: E402

PANDA_SRDF = "panda_description/srdf/panda.srdf"
READY = [0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785]
FINGERS = {"panda_finger_joint1": 0.02}
LINK_MESHES = [f"package://example-robot-data/robots/panda_description/meshes/collision/{name}.stl"
               for name in ("link3", "link5", "link6", "hand")]
RESULTS = Path(__file__).resolve().parent / "results" / "collision.md"


class FclBackend:
    """Narrow phase with python-fcl, the same interface as ``kinematics_py.collision.backend.CoalBackend``."""

    name = "python-fcl"

    def __init__(self):
        import fcl

        self._fcl = fcl
        self._request = fcl.CollisionRequest()

    def geometry(self, shape, as_convex: bool):
        """(geometry, object at the identity, object posed per call): fcl collides objects, not geometries."""
        fcl = self._fcl
        if isinstance(shape, Mesh):
            vertices = np.asarray(shape.vertices, dtype=float)
            if as_convex:
                faces = np.hstack([np.full((len(shape.triangles), 1), 3), shape.triangles]).ravel()
                geometry = fcl.Convex(vertices, len(shape.triangles), faces)
            else:
                geometry = fcl.BVHModel()
                geometry.beginModel(len(vertices), len(shape.triangles))
                geometry.addSubModel(vertices, np.asarray(shape.triangles, dtype=np.int32))
                geometry.endModel()
        elif isinstance(shape, Plane):
            a, b, c, d = shape.coefficients
            geometry = fcl.Plane(np.array([a, b, c]), -d)
        elif type(shape).__name__ == "Box":
            geometry = fcl.Box(*shape.size)
        elif type(shape).__name__ == "Sphere":
            geometry = fcl.Sphere(shape.radius)
        else:
            geometry = getattr(fcl, type(shape).__name__)(shape.radius, shape.length)
        return geometry, fcl.CollisionObject(geometry, fcl.Transform()), fcl.CollisionObject(geometry, fcl.Transform())

    def _posed(self, geometry_b, T_a_b):
        moving = geometry_b[2]
        moving.setTransform(self._fcl.Transform(np.ascontiguousarray(T_a_b[:3, :3]), T_a_b[:3, 3].copy()))
        return moving

    def collide(self, geometry_a, geometry_b, T_a_b) -> bool:
        return self._fcl.collide(geometry_a[1], self._posed(geometry_b, T_a_b), self._request,
                                 self._fcl.CollisionResult()) > 0

    def contacts(self, geometry_a, geometry_b, T_a_b, max_contacts: int):
        fcl = self._fcl
        request = fcl.CollisionRequest(num_max_contacts=max_contacts, enable_contact=True)
        result = fcl.CollisionResult()
        fcl.collide(geometry_a[1], self._posed(geometry_b, T_a_b), request, result)
        return [(np.array(c.pos), np.array(c.normal), float(c.penetration_depth)) for c in result.contacts]


BACKENDS = {"coal": CoalBackend, "python-fcl": FclBackend}


def library_version(name: str) -> str:
    from importlib.metadata import version
    return version(name)


# ---------------------------------------------------------------------------------------------- set-up
def panda_scene(backend, mesh_mode: str) -> CollisionChecker:
    model = RobotModel.from_urdf_file(example_robot_urdf("panda"))
    semantic = SemanticModel.from_srdf_file(example_robot_data_dir() / PANDA_SRDF, model)
    checker = CollisionChecker(model, semantic, backend=backend, mesh_mode=mesh_mode)
    scene = checker.scene
    scene.add_object("table", [Box((0.5, 1.2, 0.04))], pose=((0.6, 0.0, 0.2), (0, 0, 0, 1)))
    board = Box((0.3, 0.6, 0.02))
    scene.add_object("shelf", [(board, ((0, 0, 0), (0, 0, 0, 1))), (board, ((0, 0, 0.3), (0, 0, 0, 1))),
                               (Box((0.02, 0.6, 0.4)), ((0.16, 0, 0.15), (0, 0, 0, 1)))],
                     pose=((0.25, 0.55, 0.4), (0, 0, 0, 1)))
    scene.attach_object("box", "panda_hand", ["panda_leftfinger", "panda_rightfinger"], shapes=[Box((0.04, 0.04, 0.1))],
                        pose=((0, 0, 0.1), (0, 0, 0, 1)))
    return checker


def random_states(checker: CollisionChecker, count: int, rng) -> np.ndarray:
    model = checker.model
    lower = np.array([model.joints[n].lower for n in checker.variable_names])
    upper = np.array([model.joints[n].upper for n in checker.variable_names])
    return lower + rng.random((count, len(lower))) * (upper - lower)


def targets_above_table(count: int, rng) -> list[Pose]:
    poses = []
    for _ in range(count):
        yaw = rng.uniform(-math.pi / 2, math.pi / 2)
        # Tool z down (180 deg about x), then yaw about the vertical: q = (cos(yaw/2), sin(yaw/2), 0, 0) in xyzw.
        poses.append(Pose((rng.uniform(0.4, 0.7), rng.uniform(-0.3, 0.3), rng.uniform(0.3, 0.55)),
                          (math.cos(yaw / 2), math.sin(yaw / 2), 0.0, 0.0)))
    return poses


# ---------------------------------------------------------------------------------------------- measurements
def interleaved(functions: dict, rounds: int) -> dict:
    """Median seconds of each function over ``rounds`` rounds; within a round they run one after another,
    the first one changing from round to round, so background load falls on all alike."""
    samples = {name: [] for name in functions}
    names = list(functions)
    for round_index in range(rounds):
        shift = round_index % len(names)
        for name in names[shift:] + names[:shift]:
            started = time.perf_counter()
            functions[name]()
            samples[name].append(time.perf_counter() - started)
    return {name: statistics.median(values) for name, values in samples.items()}


def narrow_phase(libraries, pairs: int, rounds: int, rng) -> tuple[list[list[str]], dict]:
    meshes = [load_mesh(uri) for uri in LINK_MESHES]
    hulls = [convex_hull(m) for m in meshes]
    poses = []
    for _ in range(pairs):
        axis = rng.normal(size=3)
        poses.append(make_transform(rotation_about_axis(axis / np.linalg.norm(axis), rng.uniform(0, math.pi)),
                                    rng.normal(size=3) * 0.06))
    rows, verdicts = [], {}
    for label, shapes, convex in (("convex hulls", hulls, True), ("triangle meshes (BVH)", meshes, False)):
        functions = {}
        for name in libraries:
            backend = BACKENDS[name]()
            geometries = [backend.geometry(shape, convex) for shape in shapes]
            cases = [(geometries[k % len(geometries)], geometries[(k + 1) % len(geometries)], T)
                     for k, T in enumerate(poses)]
            verdicts[(label, name)] = [backend.collide(a, b, T) for a, b, T in cases]
            functions[(name, "yes/no")] = lambda backend=backend, cases=cases: [backend.collide(*c) for c in cases]
            functions[(name, "contact")] = lambda backend=backend, cases=cases: [backend.contacts(*c, 1) for c in cases]
        medians = interleaved(functions, rounds)
        row = [label] + [f"{medians[(name, kind)] / pairs * 1e6:.1f}" for name in libraries
                         for kind in ("yes/no", "contact")]
        row.append(f"{np.mean(verdicts[(label, libraries[0])]):.0%}")
        rows.append(row)
    return rows, verdicts


def throughput(libraries, states: np.ndarray, rounds: int) -> tuple[list[list[str]], dict]:
    checkers = {(mode, name): panda_scene(BACKENDS[name](), mode) for mode in ("convex_hull", "mesh")
                for name in libraries}
    verdicts = {}
    for key, checker in checkers.items():
        verdicts[key] = checker.check_batch(states)
        assert verdicts[key].tolist() == [checker.is_colliding(q) for q in states], f"{key}: batch != single"
    block = states[: max(1, len(states) // rounds)]
    contact_block = block[: max(1, len(block) // 4)]
    functions = {}
    for key, checker in checkers.items():
        functions[key + ("single",)] = lambda c=checker: [c.is_colliding(q) for q in block]
        functions[key + ("batch",)] = lambda c=checker: c.check_batch(block)
        functions[key + ("contacts",)] = lambda c=checker: [c.check(q, contacts=True) for q in contact_block]
    medians = interleaved(functions, rounds)
    rows = []
    for (mode, name) in checkers:
        rates = [len(block) / medians[(mode, name, "single")], len(block) / medians[(mode, name, "batch")],
                 len(contact_block) / medians[(mode, name, "contacts")]]
        rows.append([mode, name] + [f"{rate:,.0f}" for rate in rates] + [f"{verdicts[(mode, name)].mean():.1%}"])
    return rows, verdicts


def collision_aware_ik(libraries, targets, timeout: float) -> list[list[str]]:
    urdf = example_robot_urdf("panda").read_text()
    srdf = (example_robot_data_dir() / PANDA_SRDF).read_text()
    plugins, verifiers = {}, {}
    for name in libraries:
        plugin = KinematicsPlugin()
        assert plugin.initialize(urdf, "arm", "panda_link0", "panda_hand_tcp", robot_description_semantic=srdf)
        plugin.setCollisionChecker(panda_scene(BACKENDS[name](), "convex_hull"))
        plugin.searchPositionIK(targets[0], READY, timeout, avoid_collisions=True, context_state=FINGERS)
        plugins[name] = plugin
        other = next((n for n in libraries if n != name), name)  # (one library: a checker of its own re-checks)
        verifiers[name] = panda_scene(BACKENDS[other](), "convex_hull")
    stats = {name: {"times": [], "solved": 0, "rejected": 0, "wrong": 0, "failures": Counter()} for name in libraries}
    for k, target in enumerate(targets):
        for name in libraries[k % len(libraries):] + libraries[:k % len(libraries)]:
            plugin, record = plugins[name], stats[name]
            started = time.perf_counter()
            result = plugin.searchPositionIK(target, READY, timeout, avoid_collisions=True, context_state=FINGERS)
            record["times"].append((time.perf_counter() - started) * 1e3)
            record["rejected"] += result.diagnostics.in_collision if result.diagnostics else 0
            if not result.success:
                record["failures"][result.error_code.name] += 1
            else:
                record["solved"] += 1
                state = {**dict(zip(plugin.getJointNames(), result.solution)), **FINGERS}
                record["wrong"] += verifiers[name].is_colliding(state)
    rows = []
    for name in libraries:
        record = stats[name]
        times = sorted(record["times"])
        rows.append([name, f"{record['solved']}/{len(targets)}", f"{statistics.median(times):.2f}",
                     f"{times[int(0.9 * (len(times) - 1))]:.2f}", f"{record['rejected'] / len(targets):.1f}",
                     ", ".join(f"{code} {n}" for code, n in record["failures"].most_common()) or "-",
                     str(record["wrong"])])
    return rows


def table(header, rows) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return "\n".join(lines + ["| " + " | ".join(row) + " |" for row in rows])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--states", type=int, default=10000, help="random states for the throughput (10000)")
    parser.add_argument("--pairs", type=int, default=2000, help="pair tests for the narrow phase (2000)")
    parser.add_argument("--targets", type=int, default=50, help="IK targets above the table (50)")
    parser.add_argument("--timeout", type=float, default=0.1, help="IK timeout per call [s] (0.1)")
    parser.add_argument("--libraries", default="coal,python-fcl", help="comma-separated: coal, python-fcl")
    parser.add_argument("--rounds", type=int, default=20, help="interleaved timing rounds (20)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    libraries = args.libraries.split(",")
    rng = np.random.default_rng(args.seed)

    narrow_rows, narrow_verdicts = narrow_phase(libraries, args.pairs, args.rounds, rng)
    for label in ("convex hulls", "triangle meshes (BVH)"):
        answers = [narrow_verdicts[(label, name)] for name in libraries]
        disagree = sum(len(set(v)) > 1 for v in zip(*answers))
        narrow_rows[[r[0] for r in narrow_rows].index(label)].append(str(disagree))
    probe = panda_scene(BACKENDS[libraries[0]](), "convex_hull")
    states = random_states(probe, args.states, rng)
    throughput_rows, verdicts = throughput(libraries, states, args.rounds)
    agreement = {mode: int(sum(len(set(v)) > 1 for v in zip(*[verdicts[(mode, n)] for n in libraries])))
                 for mode in ("convex_hull", "mesh")}
    ik_rows = collision_aware_ik(libraries, targets_above_table(args.targets, rng), args.timeout)

    narrow_header = ["pair shapes"] + [f"{n} {kind} [us]" for n in libraries for kind in ("yes/no", "contact")] + \
        ["colliding", "libraries disagree"]
    report = "\n\n".join([
        "# Collision checking: coal vs python-fcl",
        f"`{' '.join(sys.argv)}` on {platform.processor() or platform.machine()}, Python "
        f"{platform.python_version()}, " + ", ".join(f"{n} {library_version(n)}" for n in libraries) +
        ". Scene: Panda (example-robot-data meshes, SRDF), table, shelf, held box.",
        "## Narrow phase, one call per pair (Panda link3/link5/link6/hand in random relative poses)",
        table(narrow_header, narrow_rows),
        f"## Checks per second ({args.states} random states, self + world + attached)",
        table(["meshes as", "library", "is_colliding, 1 state/call", "check_batch", "check with contacts",
               "states in collision"], throughput_rows),
        "States whose verdict differs between the libraries: " +
        ", ".join(f"{mode} {count}" for mode, count in agreement.items()) + ".",
        f"## Collision-aware IK ({args.targets} targets above the table, timeout {args.timeout * 1e3:.0f} ms)",
        table(["library", "solved", "median [ms]", "p90 [ms]", "colliding solutions rejected / call", "failures",
               "solutions the other library finds in collision"], ik_rows),
    ])
    print(report)
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(report + "\n")
    print(f"\nwritten to {RESULTS}")


if __name__ == "__main__":
    main()
