"""Reachability map of the UR5: time, IK queries per second, the share outside the IK, and the same map on Ray.

    .venv/bin/python bench/reachability.py                      # 5 cm over +-0.9 m, 32 orientations (1.49 M)
    .venv/bin/python bench/reachability.py --resolution 0.1 --no-ray

Protocol: the bundled UR5 (closed form), a cube of +-0.9 m around the shoulder (z from -0.81 to 0.99 m)
cut into voxels of --resolution, 8 tool-axis directions x 4 rolls = 32 orientations per voxel. One warm-up
map on a coarse grid first (numba caches, the plugin's set-up), then the timed local map: wall time, queries/s
and the share of the wall time spent outside the IK batch (grids, manipulability, assembling). Then the same
map on a local Ray instance (--ray-cpus CPUs, no dashboard, loopback only): the instance's start-up, the map's
time (workers start and set up the robot on their first chunk), whether it is identical to the local map bit
for bit, and a second map on the warm instance. Last, --verify voxels re-checked independently (FK of the stored
solutions; a 2048-start numerical search on unreachable poses).
"""
from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from dataclasses import replace
from pathlib import Path

try:
    import kinematics_py  # noqa: F401
except ImportError:  # running from a checkout without `pip install -e .`
    sys.path.append(str(Path(__file__).resolve().parents[1]))

from kinematics_py.reachability import MapSpec, RobotSource, VoxelGrid, compute_map, sphere_orientations
from kinematics_py.reachability.distributed import import_ray, ray_runner, start_ray
from kinematics_py.reachability.verification import verify_map
from kinematics_py.robots import bundled_robot_path

SHOULDER_HEIGHT = 0.089159
HALF_SIZE = 0.9


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--resolution", type=float, default=0.05)
    parser.add_argument("--directions", type=int, default=8)
    parser.add_argument("--rolls", type=int, default=4)
    parser.add_argument("--chunk-voxels", type=int, default=1024)
    parser.add_argument("--ray-cpus", type=int, default=2)
    parser.add_argument("--no-ray", action="store_true")
    parser.add_argument("--verify", type=int, default=200)
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    if not args.no_ray:
        import_ray(local=True)  # before anything imports ray: the local instance then binds to 127.0.0.1 only
    robot = RobotSource(bundled_robot_path("ur5").read_text(), bundled_robot_path("ur5", "srdf").read_text(),
                        "ur_manipulator", name="ur5")
    lower = (-HALF_SIZE, -HALF_SIZE, SHOULDER_HEIGHT - HALF_SIZE)
    upper = (HALF_SIZE, HALF_SIZE, SHOULDER_HEIGHT + HALF_SIZE)
    spec = MapSpec(robot, VoxelGrid.covering(lower, upper, args.resolution),
                   sphere_orientations(args.directions, args.rolls), chunk_voxels=args.chunk_voxels)
    figures = {"machine": f"{platform.node()} {platform.processor() or platform.machine()}",
               "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "voxels": spec.grid.size,
               "orientations": len(spec.orientations), "queries": spec.grid.size * len(spec.orientations)}
    compute_map(replace(spec, grid=VoxelGrid.covering(lower, upper, 0.3)))  # warm-up
    local = compute_map(spec)
    meta = local.metadata
    figures.update(local_seconds=meta["seconds"], local_queries_per_second=meta["queries"] / meta["seconds"],
                   ik_seconds=meta["ik_seconds"], share_outside_ik=meta["share_outside_ik"])
    print(local.summary())
    if not args.no_ray:
        started = time.perf_counter()
        start_ray("local", args.ray_cpus)
        figures["ray_start_seconds"] = time.perf_counter() - started
        ray_run = compute_map(spec, ray_runner())
        warm_run = compute_map(spec, ray_runner())
        figures.update(ray_seconds=ray_run.metadata["seconds"], ray_warm_seconds=warm_run.metadata["seconds"],
                       ray_identical=ray_run.same_as(local) and warm_run.same_as(local))
        import_ray().shutdown()
        print(f"Ray ({args.ray_cpus} CPUs): start {figures['ray_start_seconds']:.1f} s; map "
              f"{figures['ray_seconds']:.2f} s (cold workers), {figures['ray_warm_seconds']:.2f} s (warm) against "
              f"{meta['seconds']:.2f} s locally (x{figures['ray_warm_seconds'] / meta['seconds']:.2f} warm); "
              f"identical to the local map: {figures['ray_identical']}")
    if args.verify:
        report = verify_map(local, spec, args.verify)
        figures.update(verification=report.summary(), verification_ok=report.ok)
        print(f"verification: {report.summary()}")
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2))
    return 0 if figures.get("verification_ok", True) and figures.get("ray_identical", True) else 1


if __name__ == "__main__":
    sys.exit(main())
