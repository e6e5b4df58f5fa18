"""The node's page in the browser (``viewer_port``): the robot it serves (robot swaps followed), its planning
scene and the last answers (IK solution, FK, validity, Cartesian path, planned path), as RViz's RobotState and
DisplayTrajectory displays show them.

A service handler only hands its request, response and RequestContext over (``watching``: a reference stored,
a thread notified); one thread of its own converts them and draws, keeping only the newest answer of each
service pending (``viewer.latest.LatestWins``). While nothing comes, it checks the node's state every
IDLE_PERIOD_S for a new robot or scene (from the topics, or a parameter change).

The robot follows joint_states as RViz's RobotModel display does (``joint_states``): each message that moves a
joint of the shown robot is drawn (the newest pending one only), so that an arm servoed or executing on the
simulated controllers moves on the page; joint_states that repeat the positions last drawn leave the last answer
shown.
"""
from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from ...errors import KinematicsError, error_code_name
from ...viewer import RobotViewer, ShownPath
from ...viewer.latest import LatestWins
from ..messages.conversions import joint_values_from_joint_state
from ..serving_state import StateStore

IDLE_PERIOD_S = 0.5
#: The kind under which joint_states reach the page's thread (beside the services' answers).
JOINT_STATES = "joint_states"


class ViewerFeed:
    """Serves the page on ``host``:``port`` once the node has a robot; ``close`` stops it."""

    def __init__(self, store: StateStore, host: str, port: int, logger):
        self._store, self._host, self._port, self._logger = store, host, port, logger
        self.viewer: RobotViewer | None = None
        self._setup = self._scene = None
        #: The joint_states positions last drawn (those of the shown robot's joints).
        self._states_shown: dict[str, float] = {}
        self._worker = LatestWins(self._draw, "viewer-feed", idle=lambda: self._follow(self._store.current),
                                  idle_period=IDLE_PERIOD_S, log=logger.error)

    def watching(self, service: str, handler):
        """``handler`` (a service handler) that also hands each request and its answer to the page."""
        def answer(request, response, context):
            result = handler(request, response, context)
            self._worker.offer(service, (request, response, context))
            return result
        return answer

    def joint_states(self, positions: Mapping[str, float]) -> None:
        """The latest joint_states (every joint heard so far, an immutable mapping), drawn when they moved;
        returns at once."""
        self._worker.offer(JOINT_STATES, positions)

    @property
    def url(self) -> str:
        return self.viewer.url if self.viewer is not None else ""

    def _follow(self, state) -> None:
        """Show ``state``'s robot and scene when they are not the ones shown."""
        if state.setup is None:
            return
        if self.viewer is None:
            self.viewer = RobotViewer(state.setup, host=self._host, port=self._port, log=self._logger.error)
            self._logger.info(f"viewer: {self.viewer.url} (viewer_port)")
            self._setup = state.setup
        if state.setup is not self._setup:
            self.viewer.show_setup(state.setup, state.checker)
        elif state.scene is not self._scene and state.checker is not None:
            self.viewer.show_scene(state.checker)
        self._setup, self._scene = state.setup, state.scene

    def _draw(self, service: str, item) -> None:
        if service == JOINT_STATES:
            return self._show_joint_states(item)
        request, response, context = item
        self._follow(context.state)
        if self.viewer is None or context.state.setup is not self._setup:
            return
        try:
            DRAWERS[service](self.viewer, request, response, context)
        except KinematicsError:  # a request the service refused: its answer says why, there is nothing to show
            return

    def _show_joint_states(self, positions: Mapping[str, float]) -> None:
        self._follow(self._store.current)
        if self.viewer is None:
            return
        joints = self.viewer.setup.model.joints
        values = {name: value for name, value in positions.items() if name in joints}
        if values and values != self._states_shown:
            self.viewer.show_configuration(values)
            self._states_shown = values

    def close(self) -> None:
        self._worker.close()
        if self.viewer is not None:
            self.viewer.close()


def _code(error_code) -> str:
    text = error_code_name(error_code.val)
    return f"{text}: {error_code.message}" if getattr(error_code, "message", "") else text


def _show_ik(viewer: RobotViewer, request, response, context) -> None:
    values = joint_values_from_joint_state(response.solution.joint_state, viewer.setup.model, strict=False)
    if values:
        viewer.show_configuration(values)
    viewer.show_answer(f"compute_ik ({request.ik_request.group_name}): {_code(response.error_code)}")


def _show_fk(viewer: RobotViewer, request, response, context) -> None:
    viewer.show_configuration(context.joint_values(request.robot_state))
    viewer.show_answer(f"compute_fk of {list(request.fk_link_names)}: {_code(response.error_code)}")


def _show_validity(viewer: RobotViewer, request, response, context) -> None:
    viewer.show_configuration(context.joint_values(request.robot_state))
    verdict = "valid" if response.valid else f"invalid, {len(response.contacts)} contact(s)"
    viewer.show_answer(f"check_state_validity ({request.group_name}): {verdict}")


def _trajectory_path(label: str, trajectory, model, stop_reason: str, fraction: float) -> ShownPath:
    names = tuple(name for name in trajectory.joint_trajectory.joint_names if name in model.joints)
    index = [list(trajectory.joint_trajectory.joint_names).index(name) for name in names]
    positions = np.array([[point.positions[k] for k in index] for point in trajectory.joint_trajectory.points],
                         dtype=float).reshape(-1, len(names))
    return ShownPath(label, names, positions, stop_reason, fraction)


def _show_cartesian_path(viewer: RobotViewer, request, response, context) -> None:
    complete = response.fraction >= 1.0
    path = _trajectory_path(f"compute_cartesian_path ({request.group_name})", response.solution, viewer.setup.model,
                            "" if complete else _code(response.error_code), float(response.fraction))
    viewer.show_path(path)
    viewer.show_answer(f"compute_cartesian_path: {response.fraction:.3f} of the path, {_code(response.error_code)}")


def _show_motion_plan(viewer: RobotViewer, request, response, context) -> None:
    answer = response.motion_plan_response
    success = error_code_name(answer.error_code.val) == "SUCCESS"
    path = _trajectory_path(f"plan_kinematic_path ({request.motion_plan_request.group_name})", answer.trajectory,
                            viewer.setup.model, "" if success else _code(answer.error_code), float(success))
    viewer.show_path(path)
    viewer.show_answer(f"plan_kinematic_path: {_code(answer.error_code)}")


DRAWERS = {"compute_ik": _show_ik, "compute_fk": _show_fk, "check_state_validity": _show_validity,
           "compute_cartesian_path": _show_cartesian_path, "plan_kinematic_path": _show_motion_plan}
