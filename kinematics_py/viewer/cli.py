"""``kinematics-py view``: the robot in the browser.

    kinematics-py view --robot ur5                                  # a bundled robot, http://127.0.0.1:8080/
    kinematics-py view --urdf robot.urdf --srdf robot.srdf --port 8090
    kinematics-py view --robot ur5 --scene cell.yaml --map ur5.npz  # with world objects and a reachability map

The robot is given as to every command of ``kinematics-py``: ``--robot`` a bundled robot, or ``--urdf`` a URDF
(or xacro) file with ``--srdf``; ``--scene`` takes the scene files of
``kinematics-py reach`` (docs/reachability.md). The page is served on 127.0.0.1 unless ``--host`` says otherwise.
"""
from __future__ import annotations

import threading
from pathlib import Path

from ..collision.scene import PlanningScene
from ..reachability.cli import add_robot_arguments, read_urdf, robot_files
from ..reachability.reach_map import ReachabilityMap
from ..reachability.scene_file import load_scene_objects
from ..robot_setup import SetupInputs, build_robot_setup
from .viewer import DEFAULT_HOST, DEFAULT_PORT, RobotViewer


def add_view_command(commands) -> None:
    view = commands.add_parser("view", help="show a robot, its world and its answers in the browser")
    add_robot_arguments(view)
    view.add_argument("--scene", type=Path, help="world objects (a scene file as kinematics-py reach takes)")
    view.add_argument("--map", type=Path, help="a reachability map (.npz) to show")
    view.add_argument("--host", default=DEFAULT_HOST, help=f"address to serve on (default {DEFAULT_HOST})")
    view.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"port (default {DEFAULT_PORT})")
    view.set_defaults(run=run_view)


def robot_inputs(args) -> tuple[SetupInputs, str]:
    """The set-up inputs of the command line's robot (``--robot`` or ``--urdf``), and the folder of its meshes."""
    urdf_path, srdf_path = robot_files(args)
    return SetupInputs(read_urdf(urdf_path), srdf_path.read_text() if srdf_path else ""), \
        str(urdf_path.resolve().parent)


def start_viewer(args) -> RobotViewer:
    """The page of the command line's robot, scene and map (all read first: a bad file starts no server)."""
    inputs, base_dir = robot_inputs(args)
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
