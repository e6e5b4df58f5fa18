"""The IK target in the viewer: a frame the user drags; IK follows it live.

Every branch the group's plugin finds (``KinematicsPlugin.all_solutions``, nearest the current configuration
first) is listed with its posture (closed-form arms), each marked when it keeps the shown configuration's posture
and when it collides; the nearest collision-free one is shown, another on selection.
When no branch reaches the target, a collision-aware ``searchPositionIK`` says why (out of reach, joint limits,
every solution colliding). Drags are handed to one thread that solves only the newest target.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import KinematicsError
from ..geometry.transforms import invert_transform, transform_from_pose
from .latest import LatestWins
from .scene_nodes import wxyz_position

#: Time [s] the search that explains a failure may take.
FAILURE_SEARCH_TIMEOUT = 0.05
TARGET_NAME = "/ik_target"
NO_BRANCH = "(none)"


@dataclass(frozen=True)
class Branch:
    """One IK solution: the group's joint values and whether the state collides."""

    joint_values: dict[str, float]
    colliding: bool
    #: The closed form's posture ("shoulder 0, elbow 1, wrist 0"; "" for arms without one).
    posture: str = ""
    #: Whether it keeps the posture of the configuration shown when the target moved (a reference's posture).
    same_posture: bool = False


@dataclass(frozen=True)
class IkAnswer:
    """The answer for one target: its branches (nearest first), the one shown (-1: none), or why there is none."""

    T_model_target: np.ndarray
    branches: tuple[Branch, ...]
    chosen: int
    reason: str = ""


def solve_target(viewer, T_model_target: np.ndarray) -> IkAnswer:
    """Every branch reaching ``T_model_target`` (the tip pose in the model frame) for ``viewer``'s group, seeded by
    its current configuration."""
    plugin, values, checker = viewer.plugin, viewer.joint_values, viewer.checker
    model = plugin.robot_model
    T_model_base = model.link_poses(values).get(plugin.getBaseFrame(), np.eye(4))
    T_base_target = invert_transform(T_model_base) @ T_model_target
    names = plugin.getJointNames()
    seed = [float(values[name]) for name in names]
    solutions = plugin.all_solutions(T_base_target, seed)
    colliding = np.zeros(len(solutions), dtype=bool)
    if checker is not None and solutions:  # every branch in one compiled call
        colliding = checker.check_batch(np.array(solutions), joint_names=names, base_state=values)
    reference = _posture(plugin, seed)
    branches = []
    for q, hit in zip(solutions, colliding):
        posture = _posture(plugin, q)
        branches.append(Branch(dict(zip(names, q)), bool(hit), posture, bool(posture) and posture == reference))
    free = [k for k, branch in enumerate(branches) if not branch.colliding]
    if free:
        return IkAnswer(T_model_target, tuple(branches), free[0])
    result = plugin.searchPositionIK(T_base_target, seed, FAILURE_SEARCH_TIMEOUT, avoid_collisions=checker is not None,
                                     collision_checker=checker, context_state=values)
    if result.success:
        branches.insert(0, Branch(dict(zip(names, result.solution)), False))
        return IkAnswer(T_model_target, tuple(branches), 0)
    return IkAnswer(T_model_target, tuple(branches), 0 if branches else -1,
                    f"{result.error_code.name}: {result.message}")


def _posture(plugin, q) -> str:
    try:
        return str(plugin.posture_of(q))
    except KinematicsError:  # no closed form: no postures
        return ""


def branch_label(index: int, branch: Branch) -> str:
    notes = [note for note, holds in (("same posture", branch.same_posture), ("collides", branch.colliding))
             if holds]
    return f"{index + 1}" + (f": {branch.posture}" if branch.posture else "") + \
        (f" ({', '.join(notes)})" if notes else "")


class IkTarget:
    """The target gizmo and the branch list of ``viewer`` (a ``RobotViewer``)."""

    def __init__(self, server, viewer):
        self._server, self._viewer = server, viewer
        self.answer: IkAnswer | None = None
        self._worker = LatestWins(lambda _kind, T: self._answer(T), "viewer-ik", log=viewer.log)
        self._syncing = False
        with server.gui.add_folder("IK target"):
            self._status = server.gui.add_markdown("Drag the target frame: IK follows.")
            self.branches = server.gui.add_dropdown("branch", options=(NO_BRANCH,), initial_value=NO_BRANCH)
            self._to_tip = server.gui.add_button("target to the tip")
        self.branches.on_update(lambda _event: self._on_branch())
        self._to_tip.on_click(lambda _event: self.place_at_tip())
        self.controls = None

    def place_at_tip(self) -> None:
        """Put the target at the group's tip (a new robot or group, or the button)."""
        T = self._viewer.tip_pose()
        if self.controls is None:
            self.controls = self._server.scene.add_transform_controls(TARGET_NAME, scale=0.2)
            self.controls.on_update(lambda _event: self.move_to(self.target_pose()))
        self.controls.wxyz, self.controls.position = wxyz_position(T)

    def target_pose(self) -> np.ndarray:
        w, x, y, z = self.controls.wxyz
        return transform_from_pose(self.controls.position, (x, y, z, w))

    def move_to(self, T_model_target: np.ndarray) -> None:
        """Solve for this target on the IK thread (only the newest target pending is solved)."""
        self._worker.offer("target", np.array(T_model_target, dtype=float))

    def wait_idle(self, timeout: float) -> bool:
        return self._worker.wait_idle(timeout)

    @property
    def solved(self) -> int:
        """Targets solved so far."""
        return self._worker.handled

    def _answer(self, T_model_target: np.ndarray) -> None:
        answer = solve_target(self._viewer, T_model_target)
        self.answer = answer
        labels = tuple(branch_label(k, branch) for k, branch in enumerate(answer.branches)) or (NO_BRANCH,)
        self._syncing = True
        try:
            if tuple(self.branches.options) != labels:
                self.branches.options = labels
            self.branches.value = labels[max(answer.chosen, 0)]
        finally:
            self._syncing = False
        self._status.content = self._describe(answer)
        if answer.chosen >= 0:
            self._viewer.show_configuration(answer.branches[answer.chosen].joint_values)

    @staticmethod
    def _describe(answer: IkAnswer) -> str:
        count = len(answer.branches)
        colliding = sum(branch.colliding for branch in answer.branches)
        text = f"{count} branch(es) reach the target" + (f", {colliding} colliding" if colliding else "")
        if answer.reason:
            text += f"\n\n**No valid solution**: {answer.reason}"
        return text

    def _on_branch(self) -> None:
        answer = self.answer
        if self._syncing or answer is None or self.branches.value == NO_BRANCH:
            return
        index = int(self.branches.value.split(":")[0].split()[0]) - 1
        if 0 <= index < len(answer.branches):
            self._viewer.show_configuration(answer.branches[index].joint_values)

    def close(self) -> None:
        self._worker.close()
        if self.controls is not None:
            self.controls.remove()
            self.controls = None
