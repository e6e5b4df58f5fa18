"""Reachability maps: where an arm's tip reaches, with which orientations, and how well (ROS-free).

``compute_map(MapSpec(...))`` runs a batch of IK queries per voxel of a grid (``VoxelGrid``) and tool
orientation (``sphere_orientations``), optionally collision-free, locally on every core or as Ray tasks
(``ray_runner``); the ``ReachabilityMap`` it returns saves to .npz, reloads and answers queries.
``score_base_placements`` answers the inverse question (where to put the robot for a set of targets),
``verify_map`` re-checks a sample independently, ``plots`` draws PNG slices and a 3-D view.
Console: ``kinematics-py reach`` (``cli``). Guide: docs/reachability.md.
"""
from .compute import CHUNK_VOXELS, ChunkResult, MapSpec, RobotSource, compute_chunk, compute_map, local_runner
from .grid import VoxelGrid
from .ik_adapter import SOLVERS, ReachIK
from .orientations import orientations_from_quaternions, sphere_orientations
from .reach_map import PoseAnswer, ReachabilityMap

__all__ = [
    "CHUNK_VOXELS",
    "ChunkResult",
    "MapSpec",
    "PoseAnswer",
    "ReachIK",
    "ReachabilityMap",
    "RobotSource",
    "SOLVERS",
    "VoxelGrid",
    "compute_chunk",
    "compute_map",
    "local_runner",
    "orientations_from_quaternions",
    "sphere_orientations",
]
