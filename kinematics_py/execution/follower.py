"""A simulated trajectory follower: joint positions that follow the trajectories they are given in real time,
as a mock controller makes /joint_states follow a plan.

Between two points, positions are interpolated by cubic Hermite segments when both points give velocities, else
linearly; a trajectory whose first point comes after its start is reached from where the joints are. Once a
trajectory ends, its joints stay at its last point; ``stop`` holds them where they are.
"""
from __future__ import annotations

import threading
from collections.abc import Mapping

import numpy as np

from ..errors import ErrorCode, RequestError
from .trajectory import JointTrajectory


def sample(trajectory: JointTrajectory, t: float) -> np.ndarray:
    """Positions of ``trajectory``'s joints ``t`` [s] after its start (its first point before it, its last after)."""
    times, positions = trajectory.times, trajectory.positions
    if t <= times[0]:
        return positions[0].copy()
    if t >= times[-1]:
        return positions[-1].copy()
    k = int(np.searchsorted(times, t, side="right")) - 1
    h = times[k + 1] - times[k]
    s = (t - times[k]) / h
    p0, p1 = positions[k], positions[k + 1]
    if trajectory.velocities is None:
        return p0 + s * (p1 - p0)
    v0, v1 = trajectory.velocities[k] * h, trajectory.velocities[k + 1] * h
    return ((2 * s**3 - 3 * s**2 + 1) * p0 + (s**3 - 2 * s**2 + s) * v0 + (-2 * s**3 + 3 * s**2) * p1
            + (s**3 - s**2) * v1)


def remaining_path(trajectory: JointTrajectory, t: float) -> np.ndarray:
    """The waypoints still ahead ``t`` [s] after the start: the positions then, and every later point."""
    later = trajectory.positions[trajectory.times > t]
    return np.vstack([sample(trajectory, t)[None, :], later])


class _Motion:
    """A trajectory being followed since ``started`` [s, the follower's clock], from ``origin`` (the joints'
    positions then) when its first point comes later than its start."""

    def __init__(self, trajectory: JointTrajectory, started: float, origin: np.ndarray):
        if trajectory.times[0] > 0:
            trajectory = JointTrajectory(
                trajectory.joint_names, np.concatenate([[0.0], trajectory.times]),
                np.vstack([origin, trajectory.positions]),
                None if trajectory.velocities is None else np.vstack([np.zeros_like(origin),
                                                                      trajectory.velocities]))
        self.trajectory, self.started = trajectory, started


class TrajectoryFollower:
    """Positions of a set of joints, each following the trajectory it was last given (thread-safe)."""

    def __init__(self, positions: Mapping[str, float]):
        self._lock = threading.Lock()
        self._held = {name: float(value) for name, value in positions.items()}
        self._motions: dict[int, _Motion] = {}
        self._next_id = 0

    @property
    def joint_names(self) -> tuple[str, ...]:
        return tuple(self._held)

    def positions(self, now: float) -> dict[str, float]:
        """Every joint's position at ``now`` [s]."""
        with self._lock:
            values = dict(self._held)
            for motion in self._motions.values():
                values.update(zip(motion.trajectory.joint_names, sample(motion.trajectory, now - motion.started)))
            return values

    def follow(self, trajectory: JointTrajectory, now: float) -> int:
        """Start following ``trajectory`` at ``now`` [s] (its joints leave any trajectory they followed); returns
        the motion's id (for ``finished`` and ``stop``)."""
        unknown = [name for name in trajectory.joint_names if name not in self._held]
        if unknown:
            raise RequestError(ErrorCode.CONTROL_FAILED, f"joints {unknown} are not simulated (the simulated joints: "
                               f"{list(self._held)})")
        current = self.positions(now)
        with self._lock:
            for motion_id in [i for i, m in self._motions.items()
                              if set(m.trajectory.joint_names) & set(trajectory.joint_names)]:
                self._settle(motion_id, now)
            self._next_id += 1
            self._motions[self._next_id] = _Motion(trajectory, now, np.array([current[n]
                                                                              for n in trajectory.joint_names]))
            return self._next_id

    def finished(self, motion_id: int, now: float) -> bool:
        """Whether the motion has reached its last point by ``now`` (or was stopped or replaced)."""
        with self._lock:
            motion = self._motions.get(motion_id)
            return motion is None or now - motion.started >= motion.trajectory.duration

    def stop(self, motion_id: int, now: float) -> None:
        """Hold the motion's joints where they are at ``now``."""
        with self._lock:
            self._settle(motion_id, now)

    def _settle(self, motion_id: int, now: float) -> None:
        motion = self._motions.pop(motion_id, None)
        if motion is not None:
            self._held.update(zip(motion.trajectory.joint_names, sample(motion.trajectory, now - motion.started)))
