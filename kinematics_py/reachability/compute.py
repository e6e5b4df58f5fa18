"""Computing a reachability map: the work cut into chunks of voxels, each chunk a pure function of the spec.

``compute_chunk(spec, number)`` depends on nothing but its arguments (the random seeds of the numerical
solver come from ``spec.seed`` and the chunk number, never from the process; the closed form needs none, so
its maps do not even depend on the chunk size), so chunks can run anywhere, in any order: ``compute_map``
runs them here, one after the other, each chunk's IK batch on every core, or hands them to a runner
(``distributed.ray_runner``) and assembles the same map, bit for bit.
"""
from __future__ import annotations

import functools
import math
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numba
import numpy as np

from ..collision.checker import CollisionChecker
from ..collision.scene import PlanningScene
from ..model.srdf import SemanticModel
from .grid import VoxelGrid
from .ik_adapter import ReachIK, initialized_plugin
from .reach_map import ReachabilityMap
from .scene_file import load_scene_objects

#: Voxels per chunk by default: big enough that the IK batch dominates, small enough to spread over a cluster.
CHUNK_VOXELS = 1024


@dataclass(frozen=True)
class RobotSource:
    """What a worker needs to rebuild the robot: the URDF and SRDF text, the group (or base and tip links),
    and the folder meshes are resolved against (for collision checking)."""

    urdf_xml: str
    srdf_xml: str = ""
    group: str = ""
    base_link: str = ""
    tip_link: str = ""
    base_dir: str = ""
    name: str = ""


@dataclass(frozen=True, eq=False)
class MapSpec:
    """A map to compute: robot, grid, orientations (K, 3, 3) R_base_tip, IK solver ('auto', 'closed_form',
    'numerical'), collision checking (self-collision and the world of ``scene_yaml``, a scene file's text,
    its meshes relative to ``scene_dir``),
    the seed of the numerical solver's starts, and the voxels per chunk."""

    robot: RobotSource
    grid: VoxelGrid
    orientations: np.ndarray
    solver: str = "auto"
    collisions: bool = False
    scene_yaml: str = ""
    scene_dir: str = ""
    seed: int = 0
    chunk_voxels: int = CHUNK_VOXELS

    @property
    def chunk_count(self) -> int:
        return math.ceil(self.grid.size / self.chunk_voxels)

    def chunk_voxel_numbers(self, number: int) -> np.ndarray:
        start = number * self.chunk_voxels
        return np.arange(start, min(start + self.chunk_voxels, self.grid.size))


@dataclass
class ChunkResult:
    """A chunk's rows of the map's arrays (see ``ReachabilityMap``) and its time spent in the IK [s]."""

    number: int
    reachable: np.ndarray
    manipulability: np.ndarray
    solutions: np.ndarray
    best_orientation: np.ndarray
    ik_seconds: float = 0.0
    seconds: float = 0.0


@dataclass
class ChunkTools:
    """Built once per process and spec: the IK and, when asked, the collision checker."""

    ik: ReachIK
    checker: CollisionChecker | None = None
    metadata: dict = field(default_factory=dict)


@functools.lru_cache(maxsize=4)
def chunk_tools(robot: RobotSource, solver: str, collisions: bool, scene_yaml: str, scene_dir: str) -> ChunkTools:
    plugin = initialized_plugin(robot.urdf_xml, robot.srdf_xml, robot.group, robot.base_link, robot.tip_link)
    ik = ReachIK(plugin, solver)
    checker = None
    if collisions:
        model = plugin.robot_model
        semantic = SemanticModel.from_srdf_string(robot.srdf_xml, model) if robot.srdf_xml else None
        scene = PlanningScene(model)
        for object_id, shapes, pose, frame_id in load_scene_objects(scene_yaml, scene_dir or None):
            scene.add_object(object_id, shapes, pose, frame_id)
        checker = CollisionChecker(model, semantic, scene, base_dir=robot.base_dir or None)
    metadata = {"robot": robot.name or plugin.robot_model.name, "group": plugin.getGroupName(),
                "base_frame": plugin.getBaseFrame(), "tip_frame": plugin.getTipFrame(),
                "joint_names": plugin.getJointNames(), "solver": ik.name, "collisions": collisions}
    return ChunkTools(ik, checker, metadata)


def manipulability(chain, q: np.ndarray) -> np.ndarray:
    """Yoshikawa's manipulability sqrt(det(J J^T)) of joint values (M, n), J the geometric Jacobian in the base
    frame (linear rows [m/rad], angular rows [1]); 0 at singularities. The Jacobian kernel and LAPACK release
    the GIL, so the rows are split over numba's thread count (1 in a Ray task)."""
    parts = [part for part in np.array_split(q, numba.get_num_threads()) if len(part)]
    if len(parts) <= 1:
        return _manipulability(chain, q)
    with ThreadPoolExecutor(len(parts)) as pool:
        return np.concatenate(list(pool.map(lambda part: _manipulability(chain, part), parts)))


def _manipulability(chain, q: np.ndarray) -> np.ndarray:
    if len(q) == 0:
        return np.zeros(0)
    J = chain.jacobian(q)
    if J.shape[1] == J.shape[2]:  # square: sqrt(det(J J^T)) = |det J|, without the products
        return np.abs(np.linalg.det(J))
    return np.sqrt(np.clip(np.linalg.det(J @ np.swapaxes(J, 1, 2)), 0.0, None))


def chunk_seeds(spec: MapSpec, number: int, count: int, chain) -> np.ndarray:
    """(count, n) IK seeds of a chunk, uniform within the limits (continuous joints: within half a turn of 0),
    drawn from the chunk's own random stream (``spec.seed``, chunk number)."""
    rng = np.random.default_rng(np.random.SeedSequence([spec.seed, number]))
    lower = np.where(np.isfinite(chain.lower), chain.lower, -math.pi)
    upper = np.where(np.isfinite(chain.upper), chain.upper, math.pi)
    return rng.uniform(lower, upper, (count, chain.dof))


def compute_chunk(spec: MapSpec, number: int) -> ChunkResult:
    """The map's rows for chunk ``number`` (voxels ``spec.chunk_voxel_numbers(number)``)."""
    started = time.perf_counter()
    tools = chunk_tools(spec.robot, spec.solver, spec.collisions, spec.scene_yaml, spec.scene_dir)
    chain = tools.ik.chain
    voxels = spec.chunk_voxel_numbers(number)
    n, K = len(voxels), len(spec.orientations)
    T = np.zeros((n, K, 4, 4))
    T[:, :, :3, :3] = spec.orientations
    T[:, :, :3, 3] = spec.grid.centres(voxels)[:, None, :]
    T[:, :, 3, 3] = 1.0
    ik_started = time.perf_counter()
    seeds = chunk_seeds(spec, number, n * K, chain) if tools.ik.uses_seeds else None
    solutions, counts = tools.ik.solve(T.reshape(n * K, 4, 4), seeds)
    ik_seconds = time.perf_counter() - ik_started
    valid = np.arange(solutions.shape[1]) < counts[:, None]
    if tools.checker is not None and valid.any():
        valid[valid] = ~tools.checker.check_batch(solutions[valid], joint_names=chain.joint_names)
    score = np.full(valid.shape, -1.0)
    score[valid] = manipulability(chain, solutions[valid])
    best_branch = np.argmax(score, axis=1)
    pose_score = score[np.arange(len(score)), best_branch].reshape(n, K)
    best_orientation = np.argmax(pose_score, axis=1)
    rows = np.arange(n)
    best_score = pose_score[rows, best_orientation]
    reached = best_score >= 0.0
    best_pose = rows * K + best_orientation
    best_solutions = np.where(reached[:, None], solutions[best_pose, best_branch[best_pose]], np.nan)
    return ChunkResult(number, valid.any(axis=1).reshape(n, K), np.where(reached, best_score, 0.0), best_solutions,
                       np.where(reached, best_orientation, -1).astype(np.int16), ik_seconds,
                       time.perf_counter() - started)


def local_runner(spec: MapSpec, numbers: Iterable[int]) -> Iterator[ChunkResult]:
    """Run chunks here, one after the other (each chunk's IK batch uses every core)."""
    for number in numbers:
        yield compute_chunk(spec, number)


Runner = Callable[[MapSpec, list[int]], Iterable[ChunkResult]]


def compute_map(spec: MapSpec, runner: Runner = local_runner,
                progress: Callable[[int, int], None] | None = None) -> ReachabilityMap:
    """Every chunk of ``spec`` through ``runner`` (results in any order), assembled into the map;
    ``progress(done, total)`` is called after each chunk."""
    started = time.perf_counter()
    tools = chunk_tools(spec.robot, spec.solver, spec.collisions, spec.scene_yaml, spec.scene_dir)
    V, K, dof = spec.grid.size, len(spec.orientations), tools.ik.chain.dof
    reachable = np.zeros((V, K), dtype=bool)
    best_manipulability, best_orientation = np.zeros(V), np.full(V, -1, dtype=np.int16)
    solutions = np.full((V, dof), np.nan)
    ik_seconds, total = 0.0, spec.chunk_count
    for done, chunk in enumerate(runner(spec, list(range(total))), start=1):
        rows = spec.chunk_voxel_numbers(chunk.number)
        reachable[rows], best_manipulability[rows] = chunk.reachable, chunk.manipulability
        solutions[rows], best_orientation[rows] = chunk.solutions, chunk.best_orientation
        ik_seconds += chunk.ik_seconds
        if progress is not None:
            progress(done, total)
    seconds = time.perf_counter() - started
    metadata = {**tools.metadata, "queries": V * K, "seconds": seconds, "ik_seconds": ik_seconds,
                "share_outside_ik": max(0.0, 1.0 - ik_seconds / seconds), "chunks": total, "seed": spec.seed,
                "scene": spec.scene_yaml}
    return ReachabilityMap(spec.grid, np.asarray(spec.orientations, dtype=float), reachable, best_manipulability,
                           solutions, best_orientation, metadata)
