"""Motion planning benchmark: kinematics_py's ``planning.motion.plan`` against mplib's ``Planner.plan_qpos`` and
plainmp's ``OMPLSolver.solve``.

    .venv/bin/python bench/motion_planning.py                       # Panda, 3 scenes x 10 problems, ~1-2 min
    .venv/bin/python bench/motion_planning.py --problems 40 --scenes shelf,cage --robot ur5 --seed 3
    .venv/bin/python bench/motion_planning.py --robot kinova   # example-robot-data's, meshes, no SRDF: ours alone
    .venv/bin/python bench/motion_planning.py --world-meshes   # our scenes' boxes as world meshes (triangles)
    .venv/bin/python bench/motion_planning.py --octomap 0.02   # ... as one octree of their surfaces' voxels
    .venv/bin/python bench/motion_planning.py --held-part mesh  # a part in the hand (a box or a mesh): ours alone

Protocol: per scene of boxes (``table_wall``: a table with a wall across it; ``shelf``: a shelf with 2 cm boards;
``cage``: a cage of 4 cm bars around the robot on a floor), ``--problems`` start/goal pairs drawn uniformly within
the joint limits and [-pi, pi] (seed ``--seed``; the UR5's joints turn +-2 pi; ``--full-range``: the limits alone),
each collision-free for both planners, whose straight joint segment collides (checked at 0.01 rad). Both planners
get the same pairs, the same robot (the bundled URDF's primitive collision shapes and the SRDF's disabled pairs),
the same boxes and the same joint velocity and acceleration limits; on each problem they take turns in a random
order (seed + 1), so background load falls on both alike; with ``--repeats`` K, each plans each problem K times in a
row and its fastest time counts (its last trajectory is the one checked): what a plan costs warm, without the first
one's cold caches after the other planner's turn (a third more of ours on the development machine); the first of
them is reported apart, the cost of one plan of a new problem. One untimed
warm-up plan each first (ours also loads every kernel a plan may call, as the node's planning processes do:
``planning.kernel_warm_up``). Timing: the whole
call, everything included (ours: goal checks, search, simplification, re-checks, timing; mplib: RRTConnect,
simplification, TOPP at ``--time-step``); mplib's is measured inside its worker, so the pipe is not counted.
Success: a trajectory returned within ``--planning-time`` (both are given that budget; mplib's applies to its
search alone).

Independent check of every returned trajectory: consecutive points joined by straight joint segments, densified to
at most 0.005 rad per joint and checked with the project's ``CollisionChecker`` (``check_batch``, not the planner's
path checks), plus the joint limits (1e-6 slack) and the ends (start and goal within 1e-3 rad; mplib treats a joint
with a 4 pi range as circular and may end a whole turn away from the goal); the deepest contact of a colliding
state is reported (``check(contacts=True)``, the largest depth of any of its contacts), and whether every state
between the densified points is proven free (``planning.motion_bound``: each link grown by how far it can move
over a step). Valid success: within the budget, no colliding state, within the limits, the right ends. Path
length: the sum of the joint-space (Euclidean) lengths between trajectory points, median over the problems every
planner solved. Ratios: ours / the peer.

mplib (PyPI ``mplib`` 0.2.1) pins numpy 1.26, so it runs in its own venv (``--peers-python``, default
``.venv-bench-peers/bin/python``; ``scripts/setup_venv.sh`` does not make it):

    python3.11 -m venv .venv-bench-peers && .venv-bench-peers/bin/pip install -r requirements/bench-peers.txt

Without it the mplib columns read "not available" and why; ours runs alone.

plainmp (PyPI ``plainmp`` 0.3.6, C++: RRT-Connect on its own hand-tuned Panda spheres and self pairs, its own Panda
model; Panda only) runs in a venv of its own too (``--plainmp-python``, default ``.venv-bench-plainmp/bin/python``;
see bench/plainmp_worker.py for the build and its model's files):

    apt-get install libompl-dev libeigen3-dev libboost-serialization-dev libboost-filesystem-dev libboost-system-dev
    python3.11 -m venv .venv-bench-plainmp && .venv-bench-plainmp/bin/pip install -r requirements/bench-plainmp.txt

It gets the same pairs and boxes and the same budget, and checks its motions every 0.03 rad per joint (our search
checked at 0.03 when plainmp joined; it checks at ``path_check.SEARCH_RESOLUTION``, 0.09, and proves its final
trajectory free between its points; plainmp at 0.09 answered in 0.15-0.16 ms median, against 0.20-0.21 at 0.03, with
6-9 of 30 paths colliding, against 5-6); its time is ``solve()`` alone (no smoothing, no timing), measured inside its
worker; its returned waypoints are checked as the others' trajectories. Problems are not filtered by its spheres: a
start or goal its spheres call blocked is its failure. Writes a Markdown report (stdout and ``--output``, default
bench/results/motion_planning.md).
"""
from __future__ import annotations

import argparse
import functools
import os
import platform
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import trimesh

BENCH_DIR = Path(__file__).resolve().parent
ROOT = BENCH_DIR.parent
sys.path[:0] = [str(BENCH_DIR), str(ROOT)]  # bench/ for peers.worker; the checkout's own kinematics_py

from peers.robots import ROBOTS as PEER_ROBOTS  # noqa: E402
from peers.robots import urdf_path as peer_urdf_path  # noqa: E402
from peers.worker import JsonLinesWorker  # noqa: E402

from kinematics_py import KinematicsPlugin, SemanticModel  # noqa: E402
from kinematics_py.collision.checker import CollisionChecker  # noqa: E402
from kinematics_py.collision.geometry import Box, Mesh  # noqa: E402
from kinematics_py.geometry.transforms import make_transform  # noqa: E402
from kinematics_py.planning.goals import GroupLimits, JointGoal  # noqa: E402
from kinematics_py.planning.kernel_warm_up import warm_up_planning  # noqa: E402
from kinematics_py.planning.motion import plan  # noqa: E402
from kinematics_py.planning.motion_bound import first_unproven  # noqa: E402
from kinematics_py.planning.options import PlanOptions  # noqa: E402
from kinematics_py.planning.path_check import PathCheck  # noqa: E402
from kinematics_py.planning.time_parameterization import joint_limits  # noqa: E402
from kinematics_py.robots import bundled_robot_path  # noqa: E402

WORKER = BENCH_DIR / "mplib_worker.py"
PLAINMP_WORKER = BENCH_DIR / "plainmp_worker.py"
DEFAULT_PEERS_PYTHON = ROOT / ".venv-bench-peers" / "bin" / "python"
DEFAULT_PLAINMP_PYTHON = ROOT / ".venv-bench-plainmp" / "bin" / "python"
PLAINMP_INSTALL = ("python3.11 -m venv .venv-bench-plainmp && "
                   ".venv-bench-plainmp/bin/pip install -r requirements/bench-plainmp.txt")
WORLD_MESHES_NOTE = "our planner's and the check's boxes as world meshes of their surfaces (the peers' boxes), "
OCTOMAP_NOTE = ("our planner's and the check's boxes as one octree of the voxels of {:g} m their surfaces meet (the "
                "peers' boxes, up to a voxel smaller; the cage's floor, 1 mm under the robot, stays a box), ")
HELD_PART_NOTE = ("our planner and the check with a {} part in the hand (a 4 x 5 x 20 cm bar beyond the tip; the "
                  "peers are not run: their models hold no part), ")
#: Where ``--held-part`` is held: (link, its touch links, the bar's centre along the link's z [m]); the others' tip.
HELD_ON = {"panda": ("panda_hand", ("panda_leftfinger", "panda_rightfinger"), 0.2)}
HELD_BEYOND_TIP = 0.13
PLAINMP_RESOLUTION = 0.03  # [rad] plainmp's motion checks (our search's when plainmp joined; see the docstring)
PEERS_INSTALL = ("python3.11 -m venv .venv-bench-peers && "
                 ".venv-bench-peers/bin/pip install -r requirements/bench-peers.txt")
GROUPS = {"panda": "panda_arm", "ur5": "ur_manipulator"}
#: Robots no peer ships a planning model of, from example-robot-data (``--robot``), planned with no hand work.
UNBUNDLED = ("kinova",)
CHECK_STEP = 0.005  # [rad] densification of the independent check
LIMIT_SLACK = 1e-6
END_TOLERANCE = 1e-3
OURS, MPLIB, PLAINMP = "kinematics_py", "mplib", "plainmp"
NOT_AVAILABLE = "not available"


def _cage() -> list[tuple[str, tuple, tuple]]:
    boxes = [("floor", (1.6, 1.6, 0.02), (0.0, 0.0, -0.011))]
    for i, (x, y) in enumerate(((0.55, 0.55), (0.55, -0.55), (-0.55, 0.55), (-0.55, -0.55))):
        boxes.append((f"post{i}", (0.04, 0.04, 1.2), (x, y, 0.6)))
    for z in (0.45, 1.2):
        for side in (-1, 1):
            boxes.append((f"bar_x{side:+d}_{z}", (0.04, 1.14, 0.04), (side * 0.55, 0.0, z)))
            boxes.append((f"bar_y{side:+d}_{z}", (1.14, 0.04, 0.04), (0.0, side * 0.55, z)))
    return boxes


#: Scene name -> boxes (name, size [m], centre [m] in the robot's base frame).
SCENES: dict[str, list[tuple[str, tuple, tuple]]] = {
    "table_wall": [("table", (0.8, 1.6, 0.04), (0.6, 0.0, 0.0)),
                   ("wall", (0.04, 1.2, 0.6), (0.5, 0.0, 0.32))],
    "shelf": [("board0", (0.4, 0.8, 0.02), (0.65, 0.0, 0.2)),
              ("board1", (0.4, 0.8, 0.02), (0.65, 0.0, 0.5)),
              ("board2", (0.4, 0.8, 0.02), (0.65, 0.0, 0.8)),
              ("side_left", (0.4, 0.02, 0.9), (0.65, 0.41, 0.45)),
              ("side_right", (0.4, 0.02, 0.9), (0.65, -0.41, 0.45)),
              ("back", (0.02, 0.84, 0.9), (0.86, 0.0, 0.45))],
    "cage": _cage(),
}


@dataclass
class Record:
    """One planner's outcomes on the problems of one scene."""

    seconds: list[float] = field(default_factory=list)
    solved: list[bool] = field(default_factory=list)
    lengths: list[float] = field(default_factory=list)  # nan when not solved
    colliding: list[int] = field(default_factory=list)  # colliding densified states (0 when not solved)
    depths: list[float] = field(default_factory=list)  # deepest contact of a colliding state [m] (0 when none)
    unproven: list[bool] = field(default_factory=list)  # states between the check's points not proven free
    outside_limits: list[bool] = field(default_factory=list)
    wrong_ends: list[bool] = field(default_factory=list)
    durations: list[float] = field(default_factory=list)
    #: The first of the repeats' times [s]: what one plan of a new problem costs (state the repeats reuse is built
    #: then: checkers of a few pairs, their tables).
    first_seconds: list[float] = field(default_factory=list)

    def add(self, seconds, positions, duration, verdict, first_seconds):
        self.seconds.append(seconds)
        self.first_seconds.append(first_seconds)
        self.solved.append(positions is not None)
        self.lengths.append(path_length(positions) if positions is not None else np.nan)
        colliding, outside, wrong_ends, depth, unproven = verdict if positions is not None else (
            0, False, False, 0.0, False)
        self.colliding.append(colliding)
        self.depths.append(depth)
        self.unproven.append(unproven)
        self.outside_limits.append(outside)
        self.wrong_ends.append(wrong_ends)
        self.durations.append(duration if positions is not None else np.nan)

    def extend(self, other: Record) -> None:
        for name in self.__dataclass_fields__:
            getattr(self, name).extend(getattr(other, name))


def surface_points(boxes, spacing: float) -> np.ndarray:
    """(n, 3) points on every face of the boxes ((name, size, centre) each) on a grid of ``spacing`` [m] with the
    faces' edges, 1 um inside the box (so that a face on the voxels' grid leaves the voxels on the box's side):
    what a sensor that sees every face reports."""
    points = []
    for _, size, centre in boxes:
        half = np.asarray(size) / 2 - 1e-6
        grids = [np.linspace(-h, h, int(np.ceil(2 * h / spacing)) + 1) for h in half]
        for axis in range(3):
            u, v = (grids[a] for a in range(3) if a != axis)
            face = np.stack(np.meshgrid(u, v, indexing="ij"), axis=-1).reshape(-1, 2)
            for side in (-half[axis], half[axis]):
                points.append(np.insert(face, axis, side, axis=1) + centre)
    return np.vstack(points)


class Problem:
    """The robot, its scene in the project's checker, and the independent trajectory check."""

    def __init__(self, robot: str, scene: str, full_range: bool = False, world_meshes: bool = False,
                 octomap_resolution: float | None = None, held_part: str | None = None):
        self.plugin = KinematicsPlugin()
        if robot in GROUPS:
            self.urdf_path, self.srdf_path = bundled_robot_path(robot), bundled_robot_path(robot, "srdf")
            urdf, srdf = self.urdf_path.read_text(), self.srdf_path.read_text()
            initialized = self.plugin.initialize(urdf, GROUPS[robot], robot_description_semantic=srdf)
        else:  # example-robot-data's URDF as it ships, meshes included; no SRDF: adjacent links alone left out
            spec = PEER_ROBOTS[robot]
            self.urdf_path, self.srdf_path, srdf = peer_urdf_path(spec), None, None
            initialized = self.plugin.initialize(self.urdf_path.read_text(), "arm", spec.base_link, [spec.tip_link])
        if not initialized:
            raise RuntimeError(f"KinematicsPlugin.initialize failed for {robot}: {self.plugin.last_error}")
        model = self.plugin.robot_model
        self.checker = CollisionChecker(model, SemanticModel.from_srdf_string(srdf, model) if srdf else None,
                                        base_dir=self.urdf_path.parent)
        self.boxes = SCENES[scene]
        as_boxes = self.boxes
        if octomap_resolution is not None:  # (the floor the robot stands on, 1 mm under it, stays a box)
            sensed = [box for box in self.boxes if box[0] != "floor"]
            as_boxes = [box for box in self.boxes if box[0] == "floor"]
            self.checker.scene.add_point_cloud("surfaces", surface_points(sensed, octomap_resolution / 2),
                                               octomap_resolution)
        for name, size, centre in as_boxes:
            box = trimesh.creation.box(extents=size)
            self.checker.scene.add_object(name, [Mesh(box.vertices, box.faces) if world_meshes else Box(size)],
                                          pose=make_transform(None, centre))
        if held_part is not None:
            link, touch_links, along = HELD_ON.get(robot, (self.plugin.getTipFrames()[0], (), HELD_BEYOND_TIP))
            size = (0.04, 0.05, 0.2)
            bar = trimesh.creation.box(extents=size)
            self.checker.scene.attach_object("part", link, touch_links,
                                             [Mesh(bar.vertices, bar.faces) if held_part == "mesh" else Box(size)],
                                             make_transform(None, (0.0, 0.0, along)))
        self.names = tuple(self.plugin.getJointNames())
        bounds = GroupLimits(self.plugin, np.zeros(len(self.names)))
        self.lower, self.upper = bounds.lower, bounds.upper
        self.sample_lower, self.sample_upper = ((self.lower, self.upper) if full_range else
                                                (np.maximum(self.lower, -np.pi), np.minimum(self.upper, np.pi)))
        self.limits = joint_limits(model, self.names)

    def colliding(self, states: np.ndarray) -> np.ndarray:
        return self.checker.check_batch(np.atleast_2d(states), joint_names=self.names)

    def draw_pairs(self, count: int, rng: np.random.Generator, peer_free=None) -> tuple[list, int]:
        """``count`` (start, goal) pairs drawn within the limits (and [-pi, pi]), both free (for the peer too when
        ``peer_free``), whose straight segment collides; and how many free pairs the peer found in collision."""
        pairs, peer_refused = [], 0
        while len(pairs) < count:
            a, b = rng.uniform(self.sample_lower, self.sample_upper, (2, len(self.names)))
            if self.colliding(np.array([a, b])).any() or not self.colliding(densified([a, b])).any():
                continue
            if peer_free is not None and not (peer_free(a) and peer_free(b)):
                peer_refused += 1
                continue
            pairs.append((a, b))
        return pairs, peer_refused

    def verdict(self, positions: np.ndarray, start: np.ndarray,
                goal: np.ndarray) -> tuple[int, bool, bool, float, bool]:
        """(colliding densified states, outside the limits, wrong ends, deepest contact [m], states between the
        densified points not proven free) of a trajectory."""
        dense = densified(positions)
        outside = bool(((dense < self.lower - LIMIT_SLACK) | (dense > self.upper + LIMIT_SLACK)).any())
        wrong_ends = bool(np.abs(positions[0] - start).max() > END_TOLERANCE
                          or np.abs(positions[-1] - goal).max() > END_TOLERANCE)
        colliding = dense[self.colliding(dense)]
        base, indices = self.checker.binding(self.names)
        depth = 0.0
        for q in colliding:
            state = base.copy()
            state[indices] = q
            contacts = self.checker.check(state, contacts=True).contacts
            depth = max([depth] + [abs(float(c.depth)) for c in contacts])
        unproven = bool(len(colliding)) or first_unproven(PathCheck(self.checker, self.names), dense) != -1
        return len(colliding), outside, wrong_ends, depth, unproven

    def warm_up_ours(self, start) -> None:
        """Load the kernels a plan may call (``kernel_warm_up``, as a planning process of the node does)."""
        model = self.plugin.robot_model
        warm_up_planning(self.plugin, self.checker, model.resolve_joint_values({}), np.asarray(start, dtype=float))

    def plan_ours(self, start, goal, *, planning_time):
        # The request is built before the clock starts, as plainmp's problem and solver are.
        goals, options = [JointGoal(goal)], PlanOptions(planning_time=planning_time)
        began = time.perf_counter()
        result = plan(self.plugin, self.checker, start, goals, options)
        seconds = time.perf_counter() - began
        return seconds, (result.positions if result.success else None), (
            float(result.timing.time_from_start[-1]) if result.success else np.nan)


def densified(positions) -> np.ndarray:
    """Straight joint segments between consecutive points, at most CHECK_STEP apart per joint, points included."""
    positions = np.asarray(positions, dtype=float)
    parts = [positions[:1]]
    for q_from, q_to in zip(positions[:-1], positions[1:]):
        steps = max(1, int(np.ceil(np.abs(q_to - q_from).max() / CHECK_STEP - 1e-9)))
        parts.append(q_from + (np.arange(1, steps + 1)[:, None] / steps) * (q_to - q_from))
    return np.concatenate(parts)


def path_length(positions) -> float:
    return float(np.linalg.norm(np.diff(np.asarray(positions), axis=0), axis=1).sum())


class PeerUnavailable(RuntimeError):
    pass


class MplibPeer:
    """mplib's Planner in ``bench/mplib_worker.py``, run by the bench-peers venv's python (JSON lines)."""

    def __init__(self, python: Path):
        if not python.exists():
            raise PeerUnavailable(f"{python} not found; {PEERS_INSTALL}")
        self.worker = JsonLinesWorker([str(python), str(WORKER)], "mplib", PeerUnavailable, PEERS_INSTALL,
                                      quiet=True)
        self.call, self.close = self.worker.call, self.worker.close
        self.version = ""

    def load(self, problem: Problem, seed: int) -> None:
        answer = self.call(
            op="init", urdf=str(problem.urdf_path), srdf=str(problem.srdf_path),
            move_group=problem.plugin.getTipFrames()[0], seed=seed,
            boxes=[{"name": n, "size": list(s), "centre": list(c)} for n, s, c in problem.boxes],
            velocity_limits=problem.limits.max_velocities.tolist(),
            acceleration_limits=problem.limits.max_accelerations.tolist())
        if tuple(answer["joint_names"]) != problem.names:
            raise PeerUnavailable(f"mplib's move group joints {answer['joint_names']} differ from {problem.names}")
        self.version = answer["mplib"]

    def free(self, q) -> bool:
        return bool(self.call(op="free", q=[float(v) for v in q])["free"])

    def plan(self, start, goal, *, planning_time, time_step):
        answer = self.call(op="plan", start=[float(v) for v in start], goal=[float(v) for v in goal],
                           planning_time=planning_time, time_step=time_step)
        positions = None if answer["positions"] is None else np.array(answer["positions"])
        return float(answer["seconds"]), positions, (np.nan if answer["duration"] is None else answer["duration"])


class PlainmpPeer:
    """plainmp's OMPLSolver in ``bench/plainmp_worker.py``, run by its venv's python (JSON lines)."""

    def __init__(self, python: Path):
        if not python.exists():
            raise PeerUnavailable(f"{python} not found; {PLAINMP_INSTALL}")
        self.worker = JsonLinesWorker([str(python), str(PLAINMP_WORKER)], "plainmp", PeerUnavailable,
                                      PLAINMP_INSTALL, quiet=True)
        self.call, self.close = self.worker.call, self.worker.close
        self.version = ""

    def load(self, problem: Problem) -> None:
        answer = self.call(op="init", resolution=PLAINMP_RESOLUTION,
                           boxes=[{"name": n, "size": list(s), "centre": list(c)} for n, s, c in problem.boxes])
        if tuple(answer["joint_names"]) != problem.names:
            raise PeerUnavailable(f"plainmp's joints {answer['joint_names']} differ from {problem.names}")
        self.version = f"{answer['plainmp']} ({answer['spheres']} spheres)"

    def plan(self, start, goal, *, planning_time):
        answer = self.call(op="plan", start=[float(v) for v in start], goal=[float(v) for v in goal],
                           planning_time=planning_time)
        positions = None if answer["positions"] is None else np.array(answer["positions"])
        return float(answer["seconds"]), positions, np.nan


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--problems", type=int, default=10, help="start/goal pairs per scene (default 10)")
    parser.add_argument("--scenes", default=",".join(SCENES), help=f"comma-separated, from: {', '.join(SCENES)}")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--robot", default="panda", choices=sorted(GROUPS) + list(UNBUNDLED))
    parser.add_argument("--full-range", action="store_true",
                        help="draw the problems within the whole joint limits (default: within [-pi, pi] too)")
    parser.add_argument("--world-meshes", action="store_true",
                        help="give our planner and the trajectory check each box as a world mesh of its surface (12 "
                             "triangles; the peers keep the boxes)")
    parser.add_argument("--octomap", type=float, metavar="RESOLUTION",
                        help="give our planner and the trajectory check the boxes as one octree of the voxels of "
                             "RESOLUTION [m] that their surfaces meet (the peers keep the boxes)")
    parser.add_argument("--held-part", choices=("box", "mesh"),
                        help="our planner and the check with a part in the hand, a box or a mesh checked by its "
                             "triangles (the peers are not run)")
    parser.add_argument("--planning-time", type=float, default=1.0, help="budget of one plan [s] (default 1)")
    parser.add_argument("--time-step", type=float, default=0.01, help="mplib's TOPP sampling step [s]")
    parser.add_argument("--peers-python", type=Path, default=DEFAULT_PEERS_PYTHON,
                        help="python of the venv with mplib (default .venv-bench-peers/bin/python)")
    parser.add_argument("--plainmp-python", type=Path, default=DEFAULT_PLAINMP_PYTHON,
                        help="python of the venv with plainmp (default .venv-bench-plainmp/bin/python)")
    parser.add_argument("--repeats", type=int, default=1,
                        help="plans of each problem by each planner, in turn; the fastest time counts (default 1: "
                             "one plan; more takes the background's spikes out of the comparison)")
    parser.add_argument("--output", type=Path, default=BENCH_DIR / "results" / "motion_planning.md")
    args = parser.parse_args(argv)
    scenes = [s.strip() for s in args.scenes.split(",") if s.strip()]
    unknown = [s for s in scenes if s not in SCENES]
    if unknown or not scenes:
        parser.error(f"unknown scene(s) {unknown}; scenes are {list(SCENES)}")
    if args.problems < 1 or args.repeats < 1 or not (args.planning_time > 0) or not (args.time_step > 0):
        parser.error("--problems and --repeats must be >= 1, --planning-time and --time-step > 0")
    if args.octomap is not None and (args.world_meshes or not 0 < args.octomap <= 0.5):
        parser.error("--octomap takes a resolution in (0, 0.5] m, and not with --world-meshes")
    args.scenes = scenes
    return args


def _ms(values) -> tuple[float, float]:
    values = np.asarray(values, dtype=float)
    return 1e3 * float(np.median(values)), 1e3 * float(np.percentile(values, 90))


def _number(value: float) -> str:
    return f"{value:.2f}" if np.isfinite(value) else "-"


def _ratio(ours: float, theirs: float) -> str:
    return f"{ours / theirs:.2f}" if np.isfinite(ours) and np.isfinite(theirs) and theirs > 0 else "-"


def table(results: dict[str, dict[str, Record]], planning_time: float, notes: dict[str, str]) -> str:
    """One row per scene and planner, and one ratio row (ours / peer) per peer; ``notes``: why a peer is missing."""
    t = f"{planning_time:g}"
    head = (f"| scene | planner | success <= {t} s | valid success <= {t} s | median ms | p90 ms | "
            "path length rad (all solved, median) | trajectory s (median) | trajectories with colliding states | "
            "colliding states | deepest contact mm | not proven free between points | outside limits | wrong ends |")
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for scene, records in results.items():
        solved = np.all([record.solved for record in records.values()], axis=0)
        summary = {}
        for name, record in records.items():
            summary[name] = _summary(record, planning_time, solved)
            in_time, valid, median, p90, length, duration = summary[name]
            n = len(record.seconds)
            lines.append(f"| {scene} | {name} | {in_time}/{n} | {valid}/{n} | {median:.2f} | {p90:.2f} | "
                         f"{_number(length)} | {_number(duration)} | {sum(1 for c in record.colliding if c)}/"
                         f"{sum(record.solved)} | {sum(record.colliding)} | "
                         f"{1e3 * max(record.depths, default=0):.1f} | {sum(record.unproven)}/{sum(record.solved)} | "
                         f"{sum(record.outside_limits)} | "
                         f"{sum(record.wrong_ends)} |")
        for name, note in notes.items():
            lines.append(f"| {scene} | {name} | {note} |" + " |" * 11)
        for name in records:
            if name != OURS:
                lines.append(f"| {scene} | ours / {name} | " + " | ".join(
                    _ratio(a, b) for a, b in zip(summary[OURS], summary[name])) + " | | | | | | |")
    return "\n".join(lines)


def _summary(record: Record, planning_time: float, solved: np.ndarray) -> tuple:
    """(successes within the budget, valid ones, median ms, p90 ms, median length over ``solved``, median duration)."""
    in_time = np.array(record.solved) & (np.array(record.seconds) <= planning_time)
    median, p90 = _ms(record.seconds)
    length = float(np.median(np.array(record.lengths)[solved])) if solved.any() else np.nan
    duration = float(np.nanmedian(record.durations)) if np.isfinite(record.durations).any() else np.nan
    valid = (in_time & ~np.array(record.colliding, dtype=bool) & ~np.array(record.outside_limits)
             & ~np.array(record.wrong_ends))
    return int(in_time.sum()), int(valid.sum()), median, p90, length, duration


def main(argv=None) -> int:
    args = parse_args(argv)
    load_start = os.getloadavg()[0]
    from ompl import util as ompl_util  # seeds OMPL's RNG for our planner (mplib's worker seeds its own)

    ompl_util.RNG.setSeed(args.seed + 7)
    mplib, plainmp, notes = None, None, {}
    try:
        if args.held_part:
            raise PeerUnavailable("its model holds no part")
        if args.robot in UNBUNDLED:
            raise PeerUnavailable("no SRDF ships with this robot (mplib plans with one)")
        mplib = MplibPeer(args.peers_python)
    except PeerUnavailable as error:
        notes[MPLIB] = f"{NOT_AVAILABLE}: {error}"
    try:
        if args.held_part:
            raise PeerUnavailable("its model holds no part")
        if args.robot != "panda":
            raise PeerUnavailable("plainmp ships a Panda model only here")
        plainmp = PlainmpPeer(args.plainmp_python)
    except PeerUnavailable as error:
        notes[PLAINMP] = f"{NOT_AVAILABLE}: {error}"
    for name, note in notes.items():
        print(f"{name}: {note}", file=sys.stderr)
    rng_pairs, rng_order = np.random.default_rng(args.seed), np.random.default_rng(args.seed + 1)
    results: dict[str, dict[str, Record]] = {}
    peer_refused = {}
    began = time.perf_counter()
    try:
        for scene in args.scenes:
            problem = Problem(args.robot, scene, args.full_range, args.world_meshes, args.octomap, args.held_part)
            if mplib is not None:
                mplib.load(problem, args.seed)
            if plainmp is not None:
                plainmp.load(problem)
            pairs, peer_refused[scene] = problem.draw_pairs(args.problems + 1, rng_pairs,
                                                            mplib.free if mplib is not None else None)
            planners = {OURS: functools.partial(problem.plan_ours, planning_time=args.planning_time)}
            if mplib is not None:
                planners[MPLIB] = functools.partial(mplib.plan, planning_time=args.planning_time,
                                                    time_step=args.time_step)
            if plainmp is not None:
                planners[PLAINMP] = functools.partial(plainmp.plan, planning_time=args.planning_time)
            problem.warm_up_ours(pairs[0][0])
            for run in planners.values():  # warm-up (numba's compiled kernels, mplib's first plan), untimed
                run(*pairs[0])
            records = {name: Record() for name in planners}
            for k, (a, b) in enumerate(pairs[1:]):
                points, outcome, first = {}, {name: (np.inf, None, np.nan) for name in planners}, {}
                for name in rng_order.permutation(list(planners)):
                    for _ in range(args.repeats):
                        seconds, positions, duration = planners[name](a, b)
                        first.setdefault(name, seconds)
                        outcome[name] = (min(seconds, outcome[name][0]), positions, duration)
                for name in planners:  # the last plan's trajectory is checked; the fastest plan's time counts
                    seconds, positions, duration = outcome[name]
                    verdict = problem.verdict(positions, a, b) if positions is not None else None
                    records[name].add(seconds, positions, duration, verdict, first[name])
                    points[name] = 0 if positions is None else len(positions)
                print(f"{scene} {k + 1}/{args.problems}: " + ", ".join(
                    f"{name} {'ok' if r.solved[-1] else 'FAIL'} {1e3 * r.seconds[-1]:.0f} ms, {points[name]} points"
                    + (f" ({r.colliding[-1]} colliding states)" if r.colliding[-1] else "")
                    for name, r in records.items()), file=sys.stderr, flush=True)
            results[scene] = records
    finally:
        for peer in (mplib, plainmp):
            if peer is not None:
                peer.close()
    overall = {name: Record() for name in results[args.scenes[0]]}
    for records in results.values():
        for name, record in records.items():
            overall[name].extend(record)
    results["overall"] = overall
    report = [f"# Motion planning: kinematics_py `plan` vs mplib `Planner.plan_qpos` and plainmp `solve` "
              f"({args.robot})", "",
              f"{args.problems} problems per scene drawn within the joint limits"
              f"{'' if args.full_range else ' and [-pi, pi]'}, seed {args.seed}, budget {args.planning_time:g} s, "
              f"{WORLD_MESHES_NOTE if args.world_meshes else ''}"
              f"{OCTOMAP_NOTE.format(args.octomap) if args.octomap is not None else ''}"
              f"{HELD_PART_NOTE.format(args.held_part) if args.held_part else ''}"
              f"{args.repeats} plan(s) of each by each planner (the fastest counts), "
              f"mplib TOPP step {args.time_step:g} s; mplib {mplib.version if mplib else notes[MPLIB]}; "
              f"plainmp {plainmp.version if plainmp else notes[PLAINMP]}; "
              f"{platform.python_version()}, {os.cpu_count()} CPUs; load average {load_start:.2f} at start, "
              f"{os.getloadavg()[0]:.2f} at end; {time.perf_counter() - began:.0f} s.",
              (f"Free pairs left out because mplib found the start or goal in collision: {peer_refused}." if mplib
               else ""), "",
              table(results, args.planning_time, notes), "",
              f"Trajectory states checked at <= {CHECK_STEP} rad per joint by CollisionChecker.check_batch; "
              f"ours: p90 / median {_ms(overall[OURS].seconds)[1] / _ms(overall[OURS].seconds)[0]:.2f}.", "",
              "First plans of each problem (the first of the repeats: one plan of a new problem), median / p90 ms: "
              + ", ".join(f"{name} {_ms(record.first_seconds)[0]:.2f} / {_ms(record.first_seconds)[1]:.2f}"
                          for name, record in overall.items()) + "."]
    text = "\n".join(report)
    print(text)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
