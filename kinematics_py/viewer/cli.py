"""``kinematics-py view``: the robot in the browser.

    kinematics-py view ur5                                   # a bundled robot, http://127.0.0.1:8080/
    kinematics-py view robot.urdf --srdf robot.srdf --port 8090
    kinematics-py view ur5 --scene cell.yaml --map ur5.npz   # with world objects and a reachability map

The robot is a bundled robot's name or a URDF (or xacro) file; ``--scene`` takes the scene files of
``kinematics-py reach`` (docs/reachability.md). The page is served on 127.0.0.1 unless ``--host`` says otherwise.
"""
from __future__ import annotations

import threading
from pathlib import Path

from ..collision.scene import PlanningScene
from ..errors import KinematicsError
from ..model.urdf import urdf_string_from_xacro_file
from ..reachability.reach_map import ReachabilityMap
from ..reachability.scene_file import load_scene_objects
from ..robot_setup import SetupInputs, build_robot_setup
from ..robots import BUNDLED_ROBOTS, bundled_robot_path
from .viewer import DEFAULT_HOST, DEFAULT_PORT, RobotViewer


def add_view_command(commands) -> None:
    view = commands.add_parser("view", help="show a robot, its world and its answers in the browser")
    view.add_argument("robot", help=f"a bundled robot ({', '.join(BUNDLED_ROBOTS)}) or a URDF / xacro file")
    view.add_argument("--srdf", type=Path, help="SRDF file (groups, disabled collision pairs) of a URDF file")
    view.add_argument("--scene", type=Path, help="world objects (a scene file as kinematics-py reach takes)")
    view.add_argument("--map", type=Path, help="a reachability map (.npz) to show")
    view.add_argument("--host", default=DEFAULT_HOST, help=f"address to serve on (default {DEFAULT_HOST})")
    view.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"port (default {DEFAULT_PORT})")
    view.set_defaults(run=run_view)


def robot_inputs(robot: str, srdf: Path | None) -> tuple[SetupInputs, str | None]:
    """The set-up inputs of a bundled robot's name or a URDF / xacro file, and the folder of its meshes."""
    if robot in BUNDLED_ROBOTS:
        path = bundled_robot_path(robot)
        srdf = srdf or bundled_robot_path(robot, "srdf")
    else:
        path = Path(robot)
        if not path.is_file():
            raise KinematicsError(f"robot {robot!r}: neither a bundled robot ({', '.join(BUNDLED_ROBOTS)}) nor a "
                                  f"URDF file")
    urdf = urdf_string_from_xacro_file(path) if path.suffix == ".xacro" else path.read_text()
    return SetupInputs(urdf, srdf.read_text() if srdf else ""), str(path.resolve().parent)


def start_viewer(args) -> RobotViewer:
    """The page of the command line's robot, scene and map (all read first: a bad file starts no server)."""
    inputs, base_dir = robot_inputs(args.robot, args.srdf)
    setup = build_robot_setup(inputs)
    checker = setup.collision.checker
    if args.scene and checker is not None:
        scene = PlanningScene(setup.model)
        for object_id, shapes, pose, frame_id in load_scene_objects(args.scene.read_text(),
                                                                     str(args.scene.resolve().parent)):
            scene.add_object(object_id, shapes, pose, frame_id)
        checker = checker.for_scene(scene)
    reach_map = ReachabilityMap.load(args.map) if args.map else None
    viewer = RobotViewer(setup, host=args.host, port=args.port, base_dir=base_dir)
    if checker is not None:
        viewer.show_scene(checker)
    if reach_map is not None:
        viewer.show_reach_map(reach_map)
    return viewer


def run_view(args, stop: threading.Event | None = None) -> int:
    viewer = start_viewer(args)
    print(f"kinematics-py view: {viewer.url} (Ctrl-C to stop)", flush=True)
    try:
        (stop or threading.Event()).wait()
    except KeyboardInterrupt:
        pass
    finally:
        viewer.close()
    return 0
