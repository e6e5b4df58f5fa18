"""``RobotViewer``: a page in the browser (served by viser, on 127.0.0.1 unless told otherwise) showing a robot
set-up, its planning scene and the answers computed for it.

- the robot from its URDF (visual meshes; collision geometry as a toggle), moved by joint sliders (FK live);
- a target frame to drag, IK following live (``ik_target``);
- the world of a planning scene (``world_layer``); in an invalid state the colliding bodies red, contacts marked;
- paths (``path_layer``: Cartesian paths, planned motions) on a timeline slider, with where and why they stopped;
- reachability maps (``reach_layer``).

The page serves no file: viser's web client comes from its wheel, and the robot's meshes (read from the files its
URDF names, as the collision checker reads them) and everything else travel as data over the page's websocket.
Every layer replaces its scene nodes when it is redrawn, so the server's memory stays bounded however long it
runs. Methods may be called from any thread.
"""
from __future__ import annotations

import threading
from collections.abc import Mapping

import numpy as np

from ..collision.checker import CollisionChecker
from ..collision.scene import PlanningScene
from ..errors import KinematicsError
from ..robot_setup import RobotSetup
from .ik_target import IkTarget
from .path_layer import PathLayer, ShownPath
from .reach_layer import ReachLayer
from .robot_layer import RobotLayer
from .scene_nodes import wxyz_position
from .world_layer import WorldLayer

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8080
#: Range [rad or m] of a slider for a joint without limits (continuous).
UNLIMITED_RANGE = np.pi


class RobotViewer:
    """The page of one robot set-up at a time (``show_setup`` swaps it); ``url`` is its address."""

    def __init__(self, setup: RobotSetup, *, host: str = DEFAULT_HOST, port: int = DEFAULT_PORT, base_dir=None,
                 log=print):
        import viser

        self.log = log
        self._base_dir = base_dir
        self._lock = threading.RLock()
        self.server = viser.ViserServer(host=host, port=port, label="kinematics_py", verbose=False)
        self.server.gui.configure_theme(show_share_button=False, control_width="medium")
        self.server.gui.main_panel.dock_right()  # beside the 3-D view, not over it
        self.server.scene.set_up_direction("+z")
        self.server.scene.add_grid("/grid", width=2.0, height=2.0, cell_size=0.1, plane="xy")
        self.server.initial_camera.position = (1.1, -1.1, 0.85)
        self.server.initial_camera.look_at = (0.2, 0.0, 0.3)
        gui = self.server.gui
        self._status = gui.add_markdown("")
        self._answer = gui.add_markdown("")
        self._notes = gui.add_markdown("")
        self._group = gui.add_dropdown("group", options=("-",), initial_value="-")
        self._collision_toggle = gui.add_checkbox("collision geometry", initial_value=False)
        self._joints_folder = gui.add_folder("Joints")
        self._sliders: dict[str, object] = {}
        self._syncing = False
        self.world = WorldLayer(self.server.scene)
        self.ik = IkTarget(self.server, self)
        self.paths = PathLayer(self.server, self.show_configuration, self._tip_position)
        self.reach = ReachLayer(self.server, self._frame_pose)
        self._group.on_update(lambda _event: self._on_group())
        self._collision_toggle.on_update(
            lambda _event: self.robot.show_collision_geometry(self._collision_toggle.value))
        self.robot: RobotLayer | None = None
        self.setup: RobotSetup | None = None
        self.scene: PlanningScene | None = None
        self.checker: CollisionChecker | None = None
        self.joint_values: dict[str, object] = {}
        self.report = None
        self.show_setup(setup)

    @property
    def url(self) -> str:
        return f"http://{self.server.get_host()}:{self.server.get_port()}/"

    # ------------------------------------------------------------------ the robot
    def show_setup(self, setup: RobotSetup, checker: CollisionChecker | None = None) -> None:
        """Show ``setup``'s robot (replacing the one shown) on the scene of ``checker`` (default: the set-up's
        empty scene), at its default configuration."""
        with self._lock:
            self.world.remove()
            if self.robot is not None:
                self.robot.remove()
            self.setup = setup
            self.robot = RobotLayer(self.server.scene, setup, base_dir=self._base_dir,
                                    show_collision=self._collision_toggle.value)
            groups = tuple(setup.groups) or ("-",)
            self._syncing = True
            try:
                self._group.options = groups
                self._group.value = groups[0]
            finally:
                self._syncing = False
            self._build_sliders(setup)
            self.joint_values = setup.model.resolve_joint_values()
            robot_checker = setup.collision.checker if setup.collision is not None else None
            self._use_checker(checker if checker is not None else robot_checker)
            self.show_configuration({})
            if setup.groups:
                self.ik.place_at_tip()

    def _build_sliders(self, setup: RobotSetup) -> None:
        for slider in self._sliders.values():
            slider.remove()
        self._sliders = {}
        model = setup.model
        with self._joints_folder:
            for name in model.single_dof_joint_names:
                joint = model.joints[name]
                if joint.mimic is not None:
                    continue
                lower, upper = (joint.lower, joint.upper) if np.isfinite([joint.lower, joint.upper]).all() else \
                    (-UNLIMITED_RANGE, UNLIMITED_RANGE)
                slider = self.server.gui.add_slider(name, min=float(lower), max=float(upper), step=1e-3,
                                                    initial_value=float(model.default_joint_value(name)))
                slider.on_update(lambda _event, name=name: self._on_slider(name))
                self._sliders[name] = slider

    def _on_slider(self, name: str) -> None:
        if not self._syncing:
            self.show_configuration({name: float(self._sliders[name].value)})

    def _on_group(self) -> None:
        if not self._syncing and self.setup is not None and self._group.value in self.setup.groups:
            self.ik.place_at_tip()

    @property
    def plugin(self):
        """The KinematicsPlugin of the group chosen on the page."""
        setup = self.setup
        return setup.groups.get(self._group.value) or next(iter(setup.groups.values()))

    def tip_pose(self) -> np.ndarray:
        """T_model_tip of the chosen group at the configuration shown."""
        return self.setup.model.link_poses(self.joint_values)[self.plugin.getTipFrame()]

    def _tip_position(self, joint_values: Mapping[str, float]) -> np.ndarray | None:
        if not self.setup.groups:
            return None
        values = {**self.joint_values, **joint_values}
        return self.setup.model.link_poses(values)[self.plugin.getTipFrame()][:3, 3]

    def _frame_pose(self, frame: str) -> np.ndarray:
        return self.setup.model.link_poses(self.joint_values).get(frame, np.eye(4))

    # ------------------------------------------------------------------ states
    def show_configuration(self, joint_values: Mapping[str, object]) -> None:
        """Move the robot to these joint values (the others keep theirs), check the state against the scene,
        and draw colliding bodies red with their contacts marked."""
        with self._lock:
            setup = self.setup
            values = setup.model.resolve_joint_values({**self.joint_values, **joint_values})
            self.joint_values = values
            self.robot.show(setup.model.link_poses(values))
            self.report = None
            if self.checker is not None:
                self.report = self.checker.check(values, contacts=True, max_contacts=32)
            bodies = {body for pair in self.report.pairs for body in pair} if self.report else set()
            self.robot.highlight(bodies)
            self.world.highlight(bodies)
            self.world.show_contacts(self.report.contacts if self.report else ())
            self._sync_sliders(values)
            self._status.content = self._describe_state()

    def _describe_state(self) -> str:
        if self.checker is None:
            return "**State**: not checked (no collision geometry)."
        if self.report is None or not self.report.in_collision:
            return "**State**: valid (no collision)."
        return f"**State: in collision**: {self.report.describe()}"

    def _sync_sliders(self, values: Mapping[str, object]) -> None:
        self._syncing = True
        try:
            for name, slider in self._sliders.items():
                value = float(np.clip(values[name], slider.min, slider.max))
                if abs(slider.value - value) > 1e-9:
                    slider.value = value
        finally:
            self._syncing = False

    # ------------------------------------------------------------------ the world and answers
    def show_scene(self, checker: CollisionChecker) -> None:
        """Show ``checker``'s planning scene (same robot) and check the shown state against it."""
        with self._lock:
            self._use_checker(checker)
            self.show_configuration({})

    def _use_checker(self, checker: CollisionChecker | None) -> None:
        self.checker = checker
        self.scene = checker.scene if checker is not None else None
        self.world.remove()
        if self.scene is not None:
            self.world.show(self.scene)
        self._notes.content = " ".join(filter(None, [self.robot.note, self.world.note]))

    def show_ik_target(self, T_model_target: np.ndarray) -> None:
        """Put the target frame at ``T_model_target`` and solve for it (as a drag there does)."""
        if self.ik.controls is None:
            raise KinematicsError("this robot set-up serves no group: there is no IK to follow a target")
        self.ik.controls.wxyz, self.ik.controls.position = wxyz_position(T_model_target)
        self.ik.move_to(T_model_target)

    def show_answer(self, text: str) -> None:
        """Say what the last answer was (e.g. a service's error code and message)."""
        self._answer.content = f"**Last answer**: {text}" if text else ""

    def show_path(self, path: ShownPath) -> None:
        """Play ``path`` on the timeline (``ShownPath.from_cartesian_path`` / ``from_motion_plan``)."""
        self.paths.show(path)

    def show_cartesian_path(self, path, label: str = "Cartesian path") -> None:
        self.show_path(ShownPath.from_cartesian_path(path, label))

    def show_motion_plan(self, plan, label: str = "planned motion") -> None:
        self.show_path(ShownPath.from_motion_plan(plan, label))

    def show_reach_map(self, reach_map) -> None:
        self.reach.show(reach_map)

    def close(self) -> None:
        self.ik.close()
        self.paths.remove()
        self.server.stop()
