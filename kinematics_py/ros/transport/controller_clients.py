"""Trajectories forwarded to the controllers, as move_group's trajectory execution manager forwards them: checked
(``execution.trajectory``), split over the controllers, each part sent to ``<controller>/<action_ns>``
(control_msgs/action/FollowJointTrajectory) and watched until every controller has finished, one has failed, its
server is gone, the allowed duration has passed (TIMED_OUT) or the caller stops it (PREEMPTED); the controllers
still running are then cancelled. One execution at a time per joint (``execution.joint_locks``)."""
from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from action_msgs.msg import GoalStatus
from control_msgs.action import FollowJointTrajectory

from ...errors import ErrorCode, RequestError
from ...execution.controllers import ControllerConfig, ControllerSpec
from ...execution.follower import remaining_path
from ...execution.joint_locks import JointLocks
from ...execution.trajectory import JointTrajectory, check_start, check_trajectory, split
from ...planning.path_check import PathCheck, densify
from ..messages.joint_trajectory import joint_trajectory_from_msg, joint_trajectory_msg
from ..messages.robot_state import JointPositions, joint_values
from ..serving_state import StateStore
from .goal_client import GoalClient

#: How long [s] a controller's action server may take to be seen (it may have just started), to accept or refuse
#: a goal, and the running controllers to answer a cancel.
SERVER_WAIT_S = 3.0
GOAL_RESPONSE_WAIT_S = 5.0
CANCEL_WAIT_S = 1.0
#: How often [s] an execution is looked at, and its controllers' servers looked up in the ROS graph.
POLL_S = 0.005
SERVER_CHECK_S = 0.1
#: Joints that were on joint_states when an execution started and have not been on it for this long [s] since:
#: the controller (or the driver publishing their state, in the same process as a rule) is gone. DDS notices a
#: process that is killed (not shut down) only when its lease runs out, 20 s later by default.
JOINT_STATES_SILENCE_S = 0.5


@dataclass(frozen=True)
class Outcome:
    code: ErrorCode
    message: str
    #: Whether the controllers still running are waited for once cancelled (not when one is gone).
    wait_for_cancel: bool = True


@dataclass
class _Running:
    """One controller's part of an execution."""

    controller: ControllerSpec
    client: GoalClient
    part: JointTrajectory
    goal_id: object = None  # unique_identifier_msgs/UUID once sent
    sent: object = None  # the future of the controller's answer to the goal, once sent
    goal: object = None  # ClientGoalHandle once accepted
    result: object = None  # its get_result future


class ControllerClients:
    """FollowJointTrajectory clients of the controllers ``config`` names (or of the one whole-robot controller
    when it names none), and the executions through them."""

    def __init__(self, node, config: ControllerConfig, store: StateStore, positions: JointPositions, callback_group):
        self.config, self._store, self._positions = config, store, positions
        self.locks = JointLocks()
        self._clients = {spec.name: GoalClient(node, FollowJointTrajectory, spec.action_name,
                                               callback_group=callback_group)
                         for spec in config.effective(()) if spec.follows_trajectories}

    def execute(self, robot_trajectory, controller_names: Sequence[str], stop: Callable[[], str],
                owner: str) -> Outcome:
        """Execute a moveit_msgs/RobotTrajectory; ``stop()`` giving a reason preempts it."""
        try:
            trajectory, parts = self._prepared(robot_trajectory, controller_names)
            if not parts:
                return Outcome(ErrorCode.SUCCESS, "the trajectory is empty: nothing to execute")
            with self.locks.held(trajectory.joint_names, owner):
                return self._run(trajectory, [_Running(c, self._clients[c.name], part) for c, part in parts],
                                 robot_trajectory.joint_trajectory.header, stop)
        except RequestError as error:
            return Outcome(error.code, str(error))

    def _prepared(self, robot_trajectory, controller_names: Sequence[str]) -> tuple[
            JointTrajectory, list[tuple[ControllerSpec, JointTrajectory]]]:
        """The trajectory and its parts per controller, once checked (RequestError otherwise); no parts when it is
        empty."""
        setup = self._store.current.setup
        if setup is None:
            raise RequestError(ErrorCode.CONTROL_FAILED, f"no robot to execute on: {self._store.current.problem}")
        if robot_trajectory.multi_dof_joint_trajectory.joint_names:
            raise RequestError(ErrorCode.INVALID_MOTION_PLAN, "multi_dof_joint_trajectory is not executed: the "
                               "controllers take joint trajectories (revolute and prismatic joints) only")
        trajectory = joint_trajectory_from_msg(robot_trajectory.joint_trajectory)
        if trajectory.is_empty:
            return trajectory, []
        model = setup.model
        check_trajectory(trajectory, model)
        parts = split(trajectory, self.config.effective(model.independent_joint_names), controller_names)
        continuous = [name for name in trajectory.joint_names if model.joints[name].type == "continuous"]
        check_start(trajectory, self._positions.current, self.config.settings.allowed_start_tolerance, continuous)
        return trajectory, parts

    def _run(self, trajectory: JointTrajectory, running: list[_Running], header, stop: Callable[[], str]) -> Outcome:
        """Send every part, then watch them (the controllers still running are cancelled on any failure)."""
        outcome = Outcome(ErrorCode.FAILURE, "interrupted", wait_for_cancel=False)
        scene = self._store.current.scene  # (a change while the controllers take their goals is watched too)
        try:
            outcome = self._send(running, header) or self._watch(trajectory, running, stop, scene)
        finally:
            self._cancel([r for r in running if r.goal is not None and not r.result.done()], outcome.wait_for_cancel)
        return outcome

    def _send(self, running: list[_Running], header) -> Outcome | None:
        """Every part sent and accepted (None), or why not; a goal whose acceptance has not reached the node by then
        is cancelled at its controller (``_abandon``)."""
        for entry in running:
            deadline = time.monotonic() + SERVER_WAIT_S
            while not entry.client.server_is_ready():
                if time.monotonic() > deadline:
                    return Outcome(ErrorCode.CONTROL_FAILED, f"controller {entry.controller.name!r} does not serve "
                                   f"its action {entry.controller.action_name!r}")
                time.sleep(POLL_S)
        for entry in running:
            entry.goal_id, entry.sent = entry.client.send_goal_with_id(FollowJointTrajectory.Goal(
                trajectory=joint_trajectory_msg(entry.part, header)))
        outcome = self._answers(running)
        if outcome is not None:
            for entry in running:
                if entry.goal is None:
                    self._abandon(entry)
        return outcome

    def _answers(self, running: list[_Running]) -> Outcome | None:
        """Every sent goal accepted (None, ``goal`` and ``result`` set), or why not."""
        began = time.monotonic()
        deadline, next_check = began + GOAL_RESPONSE_WAIT_S, began + SERVER_CHECK_S
        for entry in running:
            while not entry.sent.done():
                now = time.monotonic()
                if now >= next_check or now > deadline:  # (a controller gone has the last word at the deadline)
                    next_check = now + SERVER_CHECK_S
                    gone = self._gone(running, began, now)
                    if gone:
                        return Outcome(ErrorCode.CONTROL_FAILED, f"{gone} before answering the goal",
                                       wait_for_cancel=False)
                if now > deadline:
                    return Outcome(ErrorCode.CONTROL_FAILED, f"controller {entry.controller.name!r} did not answer "
                                   f"the goal within {GOAL_RESPONSE_WAIT_S:g} s (the goal is cancelled there)")
                time.sleep(POLL_S)
            if not entry.sent.result().accepted:
                return Outcome(ErrorCode.CONTROL_FAILED, f"controller {entry.controller.name!r} rejected the "
                               f"trajectory")
            entry.goal = entry.sent.result()
            entry.result = entry.goal.get_result_async()
        return None

    @staticmethod
    def _abandon(entry: _Running) -> None:
        """A goal given up before its acceptance reached the node: cancelled at its controller now (by its id:
        the acceptance may have been lost) and again when an acceptance still comes in, so that no controller runs
        a goal whose execution has ended (a server gone answers no cancel; an answer already in is handled by the
        callback alone: a rejected goal needs no cancel)."""
        if not entry.sent.done() and entry.client.server_is_ready():
            entry.client.cancel_by_id(entry.goal_id)
        entry.sent.add_done_callback(lambda sent: sent.result().accepted and sent.result().cancel_goal_async())

    def _watch(self, trajectory: JointTrajectory, running: list[_Running], stop: Callable[[], str],
               scene) -> Outcome:
        """Until every controller has succeeded, one has not, its server is gone, the allowed duration has passed,
        the scene changed (since ``scene``) so that the rest of the path collides, or ``stop()``."""
        started = next_check = time.monotonic()
        expected = max(entry.part.duration for entry in running)
        allowed = self.config.settings.allowed_duration(expected)
        while True:
            for entry in running:
                if entry.result.done():
                    failure = _failure(entry)
                    if failure:
                        return Outcome(ErrorCode.CONTROL_FAILED, failure)
            if all(entry.result.done() for entry in running):
                return Outcome(ErrorCode.SUCCESS, f"executed by {[entry.controller.name for entry in running]}")
            now = time.monotonic()
            stopped = stop()
            if stopped:
                return Outcome(ErrorCode.PREEMPTED, f"the execution was stopped ({stopped}): so were the controllers")
            if now - started > allowed:
                return Outcome(ErrorCode.TIMED_OUT, f"the execution took longer than allowed ({allowed:.3f} s: the "
                               f"trajectory's {expected:.3f} s x allowed_execution_duration_scaling + "
                               f"allowed_goal_duration_margin); the controllers were stopped")
            if self._store.current.scene is not scene:
                state = self._store.current
                scene, blocked = state.scene, self._blocked(trajectory, now - started, state)
                if blocked:
                    return Outcome(ErrorCode.MOTION_PLAN_INVALIDATED_BY_ENVIRONMENT_CHANGE, blocked)
            if now >= next_check:
                next_check = now + SERVER_CHECK_S
                gone = self._gone(running, started, now)
                if gone:
                    return Outcome(ErrorCode.CONTROL_FAILED, gone, wait_for_cancel=False)
            time.sleep(POLL_S)

    def _blocked(self, trajectory: JointTrajectory, elapsed: float, state) -> str:
        """Why the rest of the path (from where the joints are ``elapsed`` [s] after the start) is not
        collision-free in ``state``'s scene ("" when it is, or without a collision checker)."""
        if state.checker is None or state.setup is None:
            return ""
        check = PathCheck(state.checker, trajectory.joint_names, joint_values(state.setup, self._positions.current))
        states = densify(remaining_path(trajectory, elapsed), check.resolution)
        colliding = check.first_invalid(states)
        if colliding < 0:
            return ""
        return (f"the planning scene changed and the rest of the path collides "
                f"({check.state_problem(states[colliding])}): the motion was stopped")

    def _gone(self, running: list[_Running], since: float, now: float) -> str:
        """Why a controller still running (or not yet answering its goal) is gone ("" while none is): its action
        server left the ROS graph, or joints it moves went silent on joint_states (joints heard from
        JOINT_STATES_SILENCE_S before ``since`` on, the execution's start: a controller that has just started may be
        heard for the first time after it)."""
        for entry in running:
            if (entry.result is None or not entry.result.done()) and not entry.client.server_is_ready():
                return f"controller {entry.controller.name!r} is gone (its action server left mid-execution)"
        heard = self._positions.heard
        silent = [joint for entry in running for joint in entry.part.joint_names
                  if heard.get(joint, -math.inf) >= since - JOINT_STATES_SILENCE_S
                  and now - heard[joint] > JOINT_STATES_SILENCE_S]
        if silent:
            return (f"joints {silent} have not been on joint_states for {JOINT_STATES_SILENCE_S:g} s mid-execution: "
                    f"their controller or driver is gone")
        return ""

    @staticmethod
    def _cancel(running: list[_Running], wait: bool) -> None:
        """Cancel the controllers' goals and, with ``wait``, wait a little for them to end."""
        for entry in running:
            entry.goal.cancel_goal_async()
        if not wait:
            return
        deadline = time.monotonic() + CANCEL_WAIT_S
        while any(not entry.result.done() and entry.client.server_is_ready() for entry in running):
            if time.monotonic() > deadline:
                return
            time.sleep(POLL_S)


def _failure(entry: _Running) -> str:
    """Why a controller's finished goal failed ("" if it succeeded)."""
    response = entry.result.result()
    result = response.result
    if response.status == GoalStatus.STATUS_SUCCEEDED and result.error_code == FollowJointTrajectory.Result.SUCCESSFUL:
        return ""
    status = {GoalStatus.STATUS_ABORTED: "aborted", GoalStatus.STATUS_CANCELED: "canceled"}.get(response.status,
                                                                                                 str(response.status))
    return (f"controller {entry.controller.name!r} {status} the trajectory (error_code {result.error_code}"
            f"{': ' + result.error_string if result.error_string else ''})")
