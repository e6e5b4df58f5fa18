"""Simulated controllers (``simulate_controllers``): the node itself serves ``<controller>/<action_ns>``
(control_msgs/action/FollowJointTrajectory) for every controller the configuration lists (or the one whole-robot
controller when it lists none), moves the joints along each trajectory in real time
(``execution.follower.TrajectoryFollower``) and publishes them on ``joint_states`` at ``JOINT_STATES_RATE_HZ``,
from the configured initial positions (``initial_positions.<joint>``, else the SRDF's first group state, else zero
within the limits). A goal that arrives while another runs on the same controller replaces it (as
joint_trajectory_controller does); a cancelled goal stops the joints where they are.
"""
from __future__ import annotations

import threading
import time
from collections.abc import Mapping

from control_msgs.action import FollowJointTrajectory
from sensor_msgs.msg import JointState

from ...errors import ErrorCode, RequestError
from ...execution.controllers import ControllerConfig, ControllerSpec
from ...execution.follower import TrajectoryFollower
from ...execution.trajectory import check_trajectory
from ...robot_setup import RobotSetup
from ..messages.joint_trajectory import joint_trajectory_from_msg
from ..messages.robot_state import JointPositions
from ..serving_state import StateStore
from ..transport.actions import serve_action

JOINT_STATES_RATE_HZ = 100.0
#: How often [s] a running goal looks whether it has ended or was cancelled.
POLL_S = 0.005
Result = FollowJointTrajectory.Result


class SimulatedControllers:
    """FollowJointTrajectory servers of ``config``'s controllers, moving simulated joints published on
    joint_states."""

    def __init__(self, node, config: ControllerConfig, store: StateStore, positions: JointPositions,
                 callback_group):
        self._node, self._config, self._store, self._positions = node, config, store, positions
        self._lock = threading.Lock()
        self._follower: TrajectoryFollower | None = None
        self._model = None
        #: controller -> the id of the motion its latest goal started.
        self._latest: dict[str, int] = {}
        self._publisher = node.create_publisher(JointState, "joint_states", 10)
        self._servers = [serve_action(node, FollowJointTrajectory, spec.action_name,
                                      lambda goal_handle, result, stop, spec=spec: self._follow(spec, goal_handle,
                                                                                                result, stop),
                                      callback_group, _error_string)
                         for spec in config.effective(()) if spec.follows_trajectories]
        #: The actions served, ``<controller>/<action_ns>``.
        self.action_names = [spec.action_name for spec in config.effective(()) if spec.follows_trajectories]
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._publish_joint_states, name="simulated_joint_states", daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._stopping.set()

    def prepare(self, setup: RobotSetup) -> None:
        """Start the simulated joints of ``setup``, about to be served, at its initial positions; the node's state
        is there from now (the node calls this under the store's lock, just before it installs ``setup``)."""
        with self._lock:
            self._start(setup)

    def follower(self) -> TrajectoryFollower | None:
        """The simulated joints of the robot served now (rebuilt, from the initial positions, for a new robot)."""
        with self._store.lock:  # not between ``prepare`` and the installation of its set-up
            setup = self._store.current.setup
            with self._lock:
                if setup is not None and setup.model is not self._model:
                    self._start(setup)
                return self._follower

    def _start(self, setup: RobotSetup) -> None:
        """The simulated joints of ``setup`` at its initial positions, and the node's state with them (held: _lock)."""
        self._model = setup.model
        start = initial_positions(setup, self._config.initial_positions)
        self._follower = TrajectoryFollower(start)
        self._positions.update(list(start), list(start.values()))

    def _publish_joint_states(self) -> None:
        period = 1.0 / JOINT_STATES_RATE_HZ
        tick = time.monotonic()
        while not self._stopping.is_set():
            follower = self.follower()
            if follower is not None:
                positions = follower.positions(time.monotonic())
                msg = JointState(name=list(positions), position=list(positions.values()))
                msg.header.stamp = self._node.get_clock().now().to_msg()
                try:
                    self._publisher.publish(msg)
                except Exception:  # the node is being destroyed
                    return
            tick += period
            self._stopping.wait(max(0.0, tick - time.monotonic()))

    def _follow(self, spec: ControllerSpec, goal_handle, result, stop) -> tuple[ErrorCode, str]:
        """One goal: the trajectory followed until its end, a newer goal, a cancel or its client gone."""
        follower = self.follower()
        try:
            if follower is None:
                raise RequestError(ErrorCode.CONTROL_FAILED, "no robot is served yet")
            trajectory = joint_trajectory_from_msg(goal_handle.request.trajectory)
            outside = [name for name in trajectory.joint_names if name not in self._controlled(spec)]
            if outside:
                result.error_code = Result.INVALID_JOINTS
                raise RequestError(ErrorCode.CONTROL_FAILED, f"joints {outside} are not controlled by {spec.name!r}")
            check_trajectory(trajectory, self._model)
        except RequestError as error:
            result.error_code = result.error_code or Result.INVALID_GOAL
            result.error_string = str(error)
            return error.code, str(error)
        if trajectory.is_empty:
            return ErrorCode.SUCCESS, "empty trajectory: nothing to follow"
        motion = follower.follow(trajectory, time.monotonic())
        self._latest[spec.name] = motion
        while not follower.finished(motion, time.monotonic()):
            stopped = stop()
            if stopped:
                follower.stop(motion, time.monotonic())
                result.error_string = f"{stopped}: stopped where it was"
                return ErrorCode.PREEMPTED, result.error_string
            if self._latest.get(spec.name) != motion:
                result.error_code, result.error_string = Result.INVALID_GOAL, "replaced by a newer goal"
                return ErrorCode.PREEMPTED, result.error_string
            time.sleep(POLL_S)
        return ErrorCode.SUCCESS, "trajectory followed"

    def _controlled(self, spec: ControllerSpec) -> tuple[str, ...]:
        return spec.joints or (self._model.independent_joint_names if self._model is not None else ())


def _error_string(result, _code: ErrorCode, message: str) -> None:
    """A FollowJointTrajectory result keeps the error_code its goal set; the message is its error_string."""
    result.error_string = message


def initial_positions(setup: RobotSetup, configured: Mapping[str, float]) -> dict[str, float]:
    """Every single-DOF independent joint's start: ``configured`` (initial_positions.yaml), else the SRDF's first
    group state, else zero within its limits."""
    model = setup.model
    first_state: Mapping[str, float] = {}
    if setup.semantic is not None:
        for states in setup.semantic.group_states.values():
            if states:
                first_state = next(iter(states.values()))
                break
    names = [name for name in model.independent_joint_names if name in model.single_dof_joint_names]
    return {name: float(configured.get(name, first_state.get(name, model.default_joint_value(name))))
            for name in names}
