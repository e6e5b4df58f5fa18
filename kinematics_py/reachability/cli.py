"""``kinematics-py``: reachability maps from the command line.

    kinematics-py reach --robot ur5 --resolution 0.05 -o ur5.npz --png ur5     # compute, save, draw
    kinematics-py reach-query ur5.npz --best 10                                  # ask a saved map
    kinematics-py reach-query ur5.npz --pose 0.4 0.1 0.3 1 0 0 0
    kinematics-py place --robot ur5 --targets grasps.yaml --x -1 1 --y -1 1 --step 0.1

``--robot NAME`` takes a bundled robot (its SRDF's group by default); ``--urdf FILE`` (.urdf or .xacro) with
``--srdf FILE --group NAME``, or ``--base LINK --tip LINK``, takes any other (the same ``--robot`` / ``--urdf``
as ``kinematics-py view``). docs/reachability.md says more.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import yaml

from ..errors import KinematicsError
from ..model.urdf import urdf_string_from_xacro_file
from ..robots import BUNDLED_ROBOTS, bundled_robot_path
from .compute import CHUNK_VOXELS, MapSpec, RobotSource, chunk_tools, compute_map, local_runner
from .distributed import cluster_address, ray_runner
from .grid import VoxelGrid
from .ik_adapter import SOLVERS
from .orientations import orientations_from_quaternions, sphere_orientations
from .placement import base_candidates, score_base_placements
from .plots import save_3d_view, save_slices
from .reach_map import ReachabilityMap
from .scene_file import pose_from_yaml
from .verification import verify_map

#: The bundled robots' SRDF groups.
BUNDLED_GROUPS = {"ur5": "ur_manipulator", "panda": "panda_arm"}


def main(argv: list[str] | None = None) -> int:
    return run(parser(), argv)


def run(parser: argparse.ArgumentParser, argv: list[str] | None = None) -> int:
    """Run the command of ``argv`` parsed by ``parser``; errors of the package as one line, exit code 2."""
    args = parser.parse_args(argv)
    try:
        return args.run(args)
    except (KinematicsError, OSError) as error:
        print(f"kinematics-py {args.command}: error: {error}", file=sys.stderr)
        return 2


def parser(more_commands: Sequence[Callable] = ()) -> argparse.ArgumentParser:
    """The commands of this module, and those each of ``more_commands`` adds (``add(commands)``: the sub-parsers)."""
    result = argparse.ArgumentParser(prog="kinematics-py", description=__doc__.split("\n")[0])
    commands = result.add_subparsers(dest="command", required=True)
    reach = commands.add_parser("reach", help="compute a reachability map and save it (.npz)")
    _robot_arguments(reach)
    reach.add_argument("--box", nargs=6, type=float, metavar=("XMIN", "YMIN", "ZMIN", "XMAX", "YMAX", "ZMAX"),
                       help="workspace box in the base frame [m] (default: a cube around the arm's reach)")
    reach.add_argument("--resolution", type=float, default=0.05, help="voxel edge [m] (default 0.05)")
    reach.add_argument("--directions", type=int, default=8, help="tool-axis directions on the sphere (default 8)")
    reach.add_argument("--rolls", type=int, default=4, help="rotations about the tool axis each (default 4)")
    reach.add_argument("--orientations", type=Path, help="a YAML list of quaternions [x, y, z, w] instead")
    reach.add_argument("--collisions", action="store_true", help="count only collision-free solutions (self)")
    reach.add_argument("--scene", type=Path, help="world objects for --collisions (YAML; docs/reachability.md)")
    reach.add_argument("--ray-address", help="run the chunks as Ray tasks on this cluster ('local': start a "
                                             "local instance); default: RAY_ADDRESS if set, else no Ray")
    reach.add_argument("--chunk-voxels", type=int, default=CHUNK_VOXELS, help="voxels per chunk / Ray task")
    reach.add_argument("--seed", type=int, default=0, help="seed of the numerical solver's random starts")
    reach.add_argument("--verify", type=int, default=0, metavar="N", help="re-check N voxels independently")
    reach.add_argument("-o", "--output", type=Path, required=True, help="the map file to write (.npz)")
    reach.add_argument("--png", help="also draw PREFIX_slices.png and PREFIX_3d.png")
    reach.set_defaults(run=_reach)
    query = commands.add_parser("reach-query", help="ask a saved map")
    query.add_argument("map", type=Path)
    query.add_argument("--pose", nargs=7, type=float, metavar=("X", "Y", "Z", "QX", "QY", "QZ", "QW"),
                       help="is this tip pose (base frame) reachable?")
    query.add_argument("--best", type=int, default=0, metavar="N", help="the N best voxels")
    query.add_argument("--min-fraction", type=float, default=0.0, help="with --best: at least this fraction")
    query.add_argument("--png", help="draw PREFIX_slices.png and PREFIX_3d.png")
    query.add_argument("--axis", default="z", help="slice axis for --png (x, y or z)")
    query.set_defaults(run=_query)
    place = commands.add_parser("place", help="score base placements for a set of target poses")
    _robot_arguments(place)
    place.add_argument("--targets", type=Path, required=True,
                       help="YAML list of tip poses in the world {position: [x, y, z], orientation: [x, y, z, w]}")
    place.add_argument("--x", nargs=2, type=float, required=True, metavar=("LOW", "HIGH"), help="base x range [m]")
    place.add_argument("--y", nargs=2, type=float, required=True, metavar=("LOW", "HIGH"), help="base y range [m]")
    place.add_argument("--z", type=float, default=0.0, help="base height [m]")
    place.add_argument("--step", type=float, default=0.1, help="grid step [m]")
    place.add_argument("--yaws", type=int, default=1, help="base yaw angles per position, over a turn")
    place.add_argument("--best", type=int, default=5, help="how many placements to list")
    place.set_defaults(run=_place)
    for add in more_commands:
        add(commands)
    return result


def add_robot_arguments(parser: argparse.ArgumentParser) -> None:
    """The robot, in the one form every command of ``kinematics-py`` takes: ``--robot NAME`` (a bundled robot, its
    URDF and SRDF) or ``--urdf FILE`` (.urdf or .xacro), with ``--srdf FILE``."""
    parser.add_argument("--robot", choices=BUNDLED_ROBOTS, help="a bundled robot (its URDF and SRDF)")
    parser.add_argument("--urdf", type=Path, help="URDF or xacro file")
    parser.add_argument("--srdf", type=Path, help="SRDF file (groups, disabled collision pairs)")


def robot_files(args) -> tuple[Path, Path | None]:
    """The URDF (or xacro) and SRDF files of the command line's robot (``add_robot_arguments``)."""
    if (args.robot is None) == (args.urdf is None):
        raise KinematicsError(f"give either --robot (one of {list(BUNDLED_ROBOTS)}) or --urdf FILE")
    if args.robot:
        return bundled_robot_path(args.robot), args.srdf or bundled_robot_path(args.robot, "srdf")
    return args.urdf, args.srdf


def read_urdf(path: Path) -> str:
    """A URDF file's text, or a xacro file's expansion."""
    return urdf_string_from_xacro_file(path) if path.suffix == ".xacro" else path.read_text()


def _robot_arguments(parser: argparse.ArgumentParser) -> None:
    add_robot_arguments(parser)
    parser.add_argument("--group", help="SRDF group (a chain with one tip)")
    parser.add_argument("--base", default="", help="base link (without an SRDF group)")
    parser.add_argument("--tip", default="", help="tip link (without an SRDF group)")
    parser.add_argument("--solver", choices=SOLVERS, default="auto", help="IK: the closed form when the arm "
                                                                          "has one (auto), or one forced")


def robot_source(args) -> RobotSource:
    """The robot of the command line (see the module docstring)."""
    urdf_path, srdf_path = robot_files(args)
    group = args.group or ("" if args.base or not args.robot else BUNDLED_GROUPS[args.robot])
    return RobotSource(read_urdf(urdf_path), srdf_path.read_text() if srdf_path else "", group, args.base, args.tip,
                       str(urdf_path.resolve().parent), args.robot or urdf_path.stem)


def _reach(args) -> int:
    robot = robot_source(args)
    orientations = orientations_from_quaternions(yaml.safe_load(args.orientations.read_text())) \
        if args.orientations else sphere_orientations(args.directions, args.rolls)
    box = (args.box[:3], args.box[3:]) if args.box else reach_box(robot)
    scene = args.scene.read_text() if args.scene else ""
    if scene and not args.collisions:
        raise KinematicsError("--scene needs --collisions")
    spec = MapSpec(robot, VoxelGrid.covering(*box, args.resolution), orientations, args.solver, args.collisions,
                   scene, str(args.scene.resolve().parent) if args.scene else "", args.seed, args.chunk_voxels)
    runner = local_runner
    if args.ray_address or cluster_address(None):
        runner = ray_runner(args.ray_address)
    print(f"{spec.grid.size} voxels x {len(orientations)} orientations = {spec.grid.size * len(orientations):,} "
          f"IK queries in {spec.chunk_count} chunks", file=sys.stderr)
    reach_map = compute_map(spec, runner, ProgressBar())
    reach_map.metadata["runner"] = "ray" if runner is not local_runner else "local"
    reach_map.save(args.output)
    print(reach_map.summary())
    print(f"saved {args.output}")
    if args.png:
        _draw(reach_map, args.png, "z")
    if args.verify:
        report = verify_map(reach_map, spec, args.verify)
        print(f"verification: {report.summary()}")
        return 0 if report.ok else 1
    return 0


def reach_box(robot: RobotSource) -> tuple[np.ndarray, np.ndarray]:
    """A box around everything the tip can reach: the first joint's origin +- the sum of the distances between
    consecutive joint origins and the tip (each unchanged by the joints between them), plus prismatic travel."""
    ik = chunk_tools(robot, "auto", False, "", "").ik
    model, chain = ik.plugin.robot_model, ik.chain
    path = [j for j in model.joint_path(chain.base_link, chain.tip_link) if j.is_movable]
    poses = model.link_poses()
    T_root_base = poses[chain.base_link]
    points = np.array([np.linalg.solve(T_root_base, poses[j.child])[:3, 3] for j in path] +
                      [np.linalg.solve(T_root_base, poses[chain.tip_link])[:3, 3]])
    travel = sum(max(abs(j.lower), abs(j.upper)) for j in path if j.type == "prismatic")
    reach = float(np.sum(np.linalg.norm(np.diff(points, axis=0), axis=1))) + travel
    return points[0] - reach, points[0] + reach


class ProgressBar:
    """A one-line progress bar on stderr (chunks done, elapsed, estimated time left); on a terminal only."""

    def __init__(self, width: int = 30):
        self.width, self.started = width, time.perf_counter()

    def __call__(self, done: int, total: int) -> None:
        if not sys.stderr.isatty():
            return
        elapsed = time.perf_counter() - self.started
        filled = self.width * done // total
        left = elapsed / done * (total - done)
        end = "\n" if done == total else ""
        print(f"\r[{'#' * filled}{'.' * (self.width - filled)}] {done}/{total} chunks, {elapsed:.1f} s, "
              f"{left:.1f} s left ", end=end, file=sys.stderr, flush=True)


def _query(args) -> int:
    reach_map = ReachabilityMap.load(args.map)
    print(reach_map.summary())
    if args.pose:
        position, orientation = args.pose[:3], args.pose[3:]
        answer = reach_map.is_reachable(pose_from_yaml({"position": position, "orientation": orientation}, "--pose"))
        where = "outside the grid" if answer.voxel < 0 else f"voxel {answer.voxel}"
        print(f"pose {position} {orientation}: {'REACHABLE' if answer.reachable else 'not reachable'} ({where}, "
              f"nearest map orientation {answer.orientation} at {answer.angle:.3f} rad)")
    for row in reach_map.best_voxels(args.best, args.min_fraction):
        print(json.dumps(row))
    if args.png:
        _draw(reach_map, args.png, args.axis)
    return 0


def _draw(reach_map: ReachabilityMap, prefix: str, axis: str) -> None:
    for path in (save_slices(reach_map, f"{prefix}_slices.png", axis), save_3d_view(reach_map, f"{prefix}_3d.png")):
        print(f"saved {path}")


def _place(args) -> int:
    robot = robot_source(args)
    targets = yaml.safe_load(args.targets.read_text())
    if not isinstance(targets, list) or not targets:
        raise KinematicsError(f"{args.targets}: a YAML list of poses {{position: [...], orientation: [...]}}")
    poses = [pose_from_yaml(item, f"{args.targets}: target {k}") for k, item in enumerate(targets)]
    candidates = base_candidates(tuple(args.x), tuple(args.y), args.step, args.z, args.yaws)
    scores = score_base_placements(robot, poses, candidates, args.solver)
    print(f"{len(candidates)} base placements x {len(poses)} targets")
    for row in scores.best(args.best):
        print(json.dumps(row))
    return 0


if __name__ == "__main__":
    sys.exit(main())
