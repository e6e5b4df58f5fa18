"""Servoing without ROS: commands in, one step of joint positions and velocities per period out.

``ServoCore`` holds the servoed group's positions (set from the measured joint states by ``reset``, then
integrated from its own commands, as moveit_servo does), the latest command and its time. ``step(now)``: the
command's joint velocities (twists and pose targets through ``VelocityIKSolver``, KDL's pseudo-inverse), then
moveit_servo's safety rules (``safety``): joint velocity limits, singularities (condition number), collisions
(``ProximityProbe``), joint limits less their margins, the command timeout; each leaves its status code.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

from ..errors import KinematicsError
from ..geometry.transforms import rotation_log
from ..ik.velocity import VelocityIKSolver
from . import safety
from .commands import CommandType, JointJogCommand, PoseCommand, ServoStep, StatusCode, TwistCommand
from .settings import ServoSettings

_KINDS = {TwistCommand: CommandType.TWIST, JointJogCommand: CommandType.JOINT_JOG, PoseCommand: CommandType.POSE}


class ServoError(KinematicsError, ValueError):
    """A command or setting servoing cannot use; the message says what is valid."""


class ServoCore:
    """moveit_servo's loop body for one group of an initialised ``KinematicsPlugin``.

    ``proximity(q) -> (scene distance, self distance)`` [m] (e.g. ``safety.ProximityProbe.distances``), or None
    to not check collisions. Not thread-safe: the node calls it from its servo loop only.
    """

    def __init__(self, plugin, settings: ServoSettings,
                 proximity: Callable[[np.ndarray], tuple[float, float]] | None = None):
        self.settings = settings
        self.solver = VelocityIKSolver(plugin)
        self.joint_names = self.solver.joint_names
        problem = plugin.group_setup.problem
        #: The chain from the group's base to its (first) tip.
        self.chain = problem.chains[0]
        self.lower, self.upper = problem.lower, problem.upper
        model = plugin.robot_model
        self.velocity_limits = np.array([model.joints[name].velocity for name in self.joint_names])
        self.margins = _margins(settings["joint_limit_margins"], self.joint_names)
        self.period = float(settings["publish_period"])
        self.proximity = proximity if settings["check_collisions"] else None
        self._distances, self._distances_time = (math.inf, math.inf), -math.inf
        self.command_type = CommandType.TWIST
        self.paused = False
        self.positions: np.ndarray | None = None
        self._command, self._command_time = None, -math.inf

    def reset(self, positions: Sequence[float]) -> None:
        """Start from measured joint positions (group order)."""
        self.positions = self.solver.checked_joints(positions, "positions")

    def command(self, command, now: float) -> str:
        """Take a command received at ``now`` [s]; '' when taken, else why not (wrong type for the current
        command type, unknown joints, non-finite values)."""
        kind = _KINDS.get(type(command))
        if kind is None:
            return f"unknown command {type(command).__name__}; valid are {[k.__name__ for k in _KINDS]}"
        if kind != self.command_type:
            return f"a {kind.name} command while servoing takes {self.command_type.name} commands (switch first)"
        reason = self._malformed(command)
        if not reason:
            self._command, self._command_time = command, now
        return reason

    def switch_command_type(self, kind: int) -> bool:
        try:
            self.command_type = CommandType(kind)
        except ValueError:
            return False
        self._command = None
        return True

    def step(self, now: float) -> ServoStep:
        """The next period's positions and velocities from the latest command (zero velocities without one)."""
        if self.positions is None:
            raise ServoError("no joint positions yet: call reset() with the measured joint states first")
        q = self.positions
        timeout = self.settings["incoming_command_timeout"]
        if self.paused or self._command is None or (timeout > 0 and now - self._command_time > timeout):
            why = "paused" if self.paused else "no command" if self._command is None else "command timed out"
            return ServoStep(q.copy(), np.zeros(len(q)), StatusCode.NO_WARNING, why)
        qdot, message = self._desired_velocities(q)
        qdot, status = self._safe(q, qdot, now)
        self.positions = q + qdot * self.period
        return ServoStep(self.positions.copy(), qdot, status, message)

    # ------------------------------------------------------------------ commands -> joint velocities
    def _desired_velocities(self, q: np.ndarray) -> tuple[np.ndarray, str]:
        command, unitless = self._command, self.settings["command_in_type"] == "unitless"
        if isinstance(command, JointJogCommand):
            qdot = np.zeros(len(q))
            for name, value in zip(command.names, command.velocities):
                qdot[self.joint_names.index(name)] = value * (self.settings["scale.joint"] if unitless else 1.0)
            return qdot, ""
        if isinstance(command, PoseCommand):
            return self._pose_tracking(q, command.T_base_target)
        twist = np.array(command.velocities, dtype=float)
        if unitless:
            twist[:3] *= self.settings["scale.linear"]
            twist[3:] *= self.settings["scale.rotational"]
        return self.solver.cart_to_jnt(q, self._tip_twist(q, twist, command.T_base_frame)).joint_velocities, ""

    def _tip_twist(self, q: np.ndarray, twist: np.ndarray, T_base_frame: np.ndarray | None) -> np.ndarray:
        """The twist in the command frame's axes as KDL's: the tip origin's velocity, in the base frame."""
        if T_base_frame is None:
            return twist
        R = T_base_frame[:3, :3]
        linear, angular = R @ twist[:3], R @ twist[3:]
        if not self.settings["apply_twist_commands_about_ee_frame"]:
            p_tip = self.chain.forward_kinematics(q)[:3, 3]
            linear = linear + np.cross(angular, p_tip - T_base_frame[:3, 3])
        return np.concatenate([linear, angular])

    def _pose_tracking(self, q: np.ndarray, T_base_target: np.ndarray) -> tuple[np.ndarray, str]:
        """Toward the target at most at scale.linear / scale.rotational; still within the tolerances."""
        T_base_tip = self.chain.forward_kinematics(q)
        position_error = T_base_target[:3, 3] - T_base_tip[:3, 3]
        rotation_error = T_base_tip[:3, :3] @ rotation_log(T_base_tip[:3, :3].T @ T_base_target[:3, :3])
        if (np.linalg.norm(position_error) <= self.settings["pose_tracking.linear_tolerance"]
                and np.linalg.norm(rotation_error) <= self.settings["pose_tracking.angular_tolerance"]):
            return np.zeros(len(q)), "pose target reached"
        linear = _capped(position_error / self.period, self.settings["scale.linear"])
        angular = _capped(rotation_error / self.period, self.settings["scale.rotational"])
        return self.solver.cart_to_jnt(q, np.concatenate([linear, angular])).joint_velocities, ""

    # ------------------------------------------------------------------ safety
    def _safe(self, q: np.ndarray, qdot: np.ndarray, now: float) -> tuple[np.ndarray, StatusCode]:
        """qdot scaled by the velocity limits, singularities and collisions, joints at bounds halted."""
        qdot = qdot * safety.velocity_limit_scale(qdot, self.velocity_limits)
        if not qdot.any():
            return qdot, StatusCode.NO_WARNING
        scale, status = self._singularity(q, qdot)
        collision, collision_status = self._collision(q, now)
        if collision < scale or collision == 0.0:
            scale, status = collision, collision_status
        override = self.settings["override_velocity_scaling_factor"]
        if 0.0 < scale < 1.0 and override > 0.0:
            scale = override
        qdot = qdot * scale
        bound = safety.joints_at_bound(q, qdot, self.period, self.lower, self.upper, self.margins)
        if len(bound):
            halt_all = self.settings["halt_all_joints_in_joint_mode" if self.command_type == CommandType.JOINT_JOG
                                     else "halt_all_joints_in_cartesian_mode"]
            qdot = np.zeros_like(qdot) if halt_all else np.where(np.isin(np.arange(len(q)), bound), 0.0, qdot)
            status = StatusCode.JOINT_BOUND
        return qdot, status

    def _singularity(self, q: np.ndarray, qdot: np.ndarray) -> tuple[float, StatusCode]:
        """Nearing or leaving: the condition number after a small step along qdot, against the current one. The
        scale is that of the condition number one whole period ahead, so the arm halts before the hard threshold
        instead of creeping toward it."""
        condition = self._condition_number(q)
        step = q + self.settings["singularity_step_scale"] * qdot / np.linalg.norm(qdot)
        approaching = self._condition_number(step) > condition
        ahead = self._condition_number(q + qdot * self.period)
        s = self.settings
        return safety.singularity_scale(max(condition, ahead) if approaching else condition, approaching,
                                        s["lower_singularity_threshold"], s["hard_stop_singularity_threshold"],
                                        s["leaving_singularity_threshold_multiplier"])

    def _condition_number(self, q: np.ndarray) -> float:
        """The Jacobian's condition number at q: the velocity solver's one compiled call (the same Jacobian and
        its Jacobi SVD); numpy's SVD of the chain's Jacobian on chains of fewer than six joints (their five
        singular values, where the solver's thin SVD has a sixth, zero) or not of the whole group."""
        if len(q) == self.chain.dof >= 6:
            return self.solver.condition_number(q)
        return safety.condition_number(self.chain.jacobian(q))

    def _collision(self, q: np.ndarray, now: float) -> tuple[float, StatusCode]:
        if self.proximity is None:
            return 1.0, StatusCode.NO_WARNING
        rate = self.settings["collision_check_rate"]
        if rate <= 0 or now - self._distances_time >= 1.0 / rate:
            self._distances, self._distances_time = self.proximity(q), now
        scene, own = self._distances
        return min(safety.collision_scale(scene, self.settings["scene_collision_proximity_threshold"]),
                   safety.collision_scale(own, self.settings["self_collision_proximity_threshold"]))

    def _malformed(self, command) -> str:
        if isinstance(command, JointJogCommand):
            unknown = [name for name in command.names if name not in self.joint_names]
            if unknown or len(command.names) != len(command.velocities):
                return (f"joint jog names {list(command.names)} must be joints of the group "
                        f"{list(self.joint_names)}, one velocity each; unknown: {unknown}")
            values = np.asarray(command.velocities, dtype=float)
        elif isinstance(command, PoseCommand):
            values = np.asarray(command.T_base_target, dtype=float)
            if values.shape != (4, 4):
                return f"a pose target is a 4x4 transform; got shape {values.shape}"
        else:
            values = np.asarray(command.velocities, dtype=float)
            if values.shape != (6,):
                return f"a twist takes 6 velocities (linear x, y, z, angular x, y, z); got shape {values.shape}"
        return "" if np.isfinite(values).all() else "the command holds values that are not finite"


def _capped(vector: np.ndarray, largest: float) -> np.ndarray:
    norm = float(np.linalg.norm(vector))
    return vector if norm <= largest else vector * (largest / norm)


def _margins(margins: tuple[float, ...], joint_names: Sequence[str]) -> np.ndarray:
    if len(margins) == 1:
        return np.full(len(joint_names), margins[0])
    if len(margins) != len(joint_names):
        raise ServoError(f"joint_limit_margins takes 1 value or {len(joint_names)} (one per joint of "
                         f"{list(joint_names)}); got {list(margins)}")
    return np.array(margins)
