"""A joint trajectory as sent to controllers, and what move_group checks before it sends one: the joints known,
times increasing, values finite and inside the joint limits (else INVALID_MOTION_PLAN), the first point within
``allowed_start_tolerance`` of the current state (else CONTROL_FAILED naming the joint and the deviation); and its
split over the controllers that cover its joints, the default controllers first (no controller for a joint:
CONTROL_FAILED)."""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ..errors import ErrorCode, RequestError
from ..model.robot_model import RobotModel
from .controllers import ControllerSpec

#: How far [rad or m] a trajectory point may lie outside a joint's limits (rounding of the timed trajectory).
LIMIT_MARGIN = 1e-6


@dataclass(frozen=True)
class JointTrajectory:
    """Positions of ``joint_names`` at ``times`` [s from the start], shape (points, joints); velocities and
    accelerations of the same shape, or None where the trajectory gives none."""

    joint_names: tuple[str, ...]
    times: np.ndarray
    positions: np.ndarray
    velocities: np.ndarray | None = None
    accelerations: np.ndarray | None = None

    @property
    def duration(self) -> float:
        """Time from the start to the last point [s] (0 without points)."""
        return float(self.times[-1]) if len(self.times) else 0.0

    @property
    def is_empty(self) -> bool:
        return len(self.times) == 0

    def part(self, joints: Sequence[str]) -> JointTrajectory:
        """The same trajectory for ``joints`` alone (a subset of ``joint_names``, in that order)."""
        columns = [self.joint_names.index(joint) for joint in joints]

        def take(values: np.ndarray | None) -> np.ndarray | None:
            return None if values is None else values[:, columns]
        return JointTrajectory(tuple(joints), self.times, self.positions[:, columns], take(self.velocities),
                               take(self.accelerations))


def trajectory_from_points(joint_names: Sequence[str], times: Sequence[float], positions: Sequence[Sequence[float]],
                           velocities: Sequence[Sequence[float]] = (),
                           accelerations: Sequence[Sequence[float]] = ()) -> JointTrajectory:
    """A JointTrajectory from a message's points (each point's velocities and accelerations all given or all
    empty); INVALID_MOTION_PLAN for names given twice or points of the wrong length."""
    names = tuple(joint_names)
    if len(set(names)) != len(names):
        raise RequestError(ErrorCode.INVALID_MOTION_PLAN, f"the trajectory names a joint twice: {list(names)}")

    def array(rows, what: str, optional: bool) -> np.ndarray | None:
        if optional and all(len(row) == 0 for row in rows):
            return None
        for index, row in enumerate(rows):
            if len(row) != len(names):
                raise RequestError(ErrorCode.INVALID_MOTION_PLAN, f"point {index} has {len(row)} {what} for "
                                   f"{len(names)} joints {list(names)}")
        return np.array(rows, dtype=float).reshape(len(rows), len(names))
    return JointTrajectory(names, np.array(times, dtype=float), array(positions, "positions", False),
                           array(velocities, "velocities", True) if velocities else None,
                           array(accelerations, "accelerations", True) if accelerations else None)


def check_trajectory(trajectory: JointTrajectory, model: RobotModel) -> None:
    """INVALID_MOTION_PLAN with the reason unless every joint is a movable joint of ``model``, the times finite,
    >= 0 and strictly increasing, every value finite and every position inside its joint's limits."""
    unknown = [name for name in trajectory.joint_names if name not in model.joint_names]
    if unknown:
        raise RequestError(ErrorCode.INVALID_MOTION_PLAN, f"the trajectory names joints {unknown} that robot "
                           f"{model.name!r} does not have (its movable joints: {list(model.joint_names)})")
    times = trajectory.times
    if not np.all(np.isfinite(times)) or (len(times) and times[0] < 0):
        raise RequestError(ErrorCode.INVALID_MOTION_PLAN, f"time_from_start must be finite and >= 0; got "
                           f"{times.tolist()}")
    steps = np.flatnonzero(np.diff(times) <= 0)
    if len(steps):
        index = int(steps[0]) + 1
        raise RequestError(ErrorCode.INVALID_MOTION_PLAN, f"time_from_start must increase from point to point: "
                           f"point {index} is at {times[index]:g} s, point {index - 1} at {times[index - 1]:g} s")
    for what in ("positions", "velocities", "accelerations"):
        values = getattr(trajectory, what)
        if values is not None and not np.all(np.isfinite(values)):
            point, column = (int(i) for i in np.argwhere(~np.isfinite(values))[0])
            raise RequestError(ErrorCode.INVALID_MOTION_PLAN, f"point {point} has a non-finite {what[:-1]} of "
                               f"joint {trajectory.joint_names[column]!r}: {values[point, column]!r}")
    for column, name in enumerate(trajectory.joint_names):
        joint = model.joints[name]
        values = trajectory.positions[:, column]
        outside = np.flatnonzero((values < joint.lower - LIMIT_MARGIN) | (values > joint.upper + LIMIT_MARGIN))
        if len(outside):
            point = int(outside[0])
            raise RequestError(ErrorCode.INVALID_MOTION_PLAN, f"point {point} puts joint {name!r} at "
                               f"{values[point]:.6g}, outside its limits [{joint.lower:g}, {joint.upper:g}]")


def check_start(trajectory: JointTrajectory, current: Mapping[str, float], tolerance: float,
                continuous: Sequence[str] = ()) -> None:
    """CONTROL_FAILED naming the joint and its deviation when the first point is further than ``tolerance``
    [rad or m] from ``current`` (joint -> position; 0: not checked). ``continuous`` joints count their deviation
    the short way round."""
    if tolerance <= 0 or trajectory.is_empty:
        return
    for name, start in zip(trajectory.joint_names, trajectory.positions[0]):
        if name not in current:
            raise RequestError(ErrorCode.CONTROL_FAILED, f"no current position of joint {name!r} (nothing on "
                               f"joint_states for it): the trajectory's start cannot be checked")
        deviation = abs(float(start) - float(current[name]))
        if name in continuous:
            deviation = abs(math.remainder(deviation, 2 * math.pi))
        if deviation > tolerance:
            raise RequestError(ErrorCode.CONTROL_FAILED, f"the trajectory's start deviates from the current state "
                               f"by {deviation:.6g} at joint {name!r}, more than allowed_start_tolerance "
                               f"{tolerance:g} (it starts at {float(start):.6g}, the joint is at "
                               f"{float(current[name]):.6g})")


def split(trajectory: JointTrajectory, controllers: Sequence[ControllerSpec],
          requested: Sequence[str] = ()) -> list[tuple[ControllerSpec, JointTrajectory]]:
    """Each controller's part of ``trajectory``: the controllers that follow trajectories (those named in
    ``requested`` only, when given), default ones first, then the one covering most of the joints left;
    CONTROL_FAILED for a requested controller that is not configured or a joint no controller covers."""
    candidates = [c for c in controllers if c.follows_trajectories]
    if requested:
        known = {c.name for c in candidates}
        missing = [name for name in requested if name not in known]
        if missing:
            raise RequestError(ErrorCode.CONTROL_FAILED, f"controllers {missing} are not configured "
                               f"FollowJointTrajectory controllers (configured: {sorted(known)})")
        candidates = [c for c in candidates if c.name in requested]
    left = list(trajectory.joint_names)
    parts = []
    while left:
        covering = [(c.default, sum(joint in c.joints for joint in left), -index, c)
                    for index, c in enumerate(candidates) if any(joint in c.joints for joint in left)]
        if not covering:
            raise RequestError(ErrorCode.CONTROL_FAILED, f"no controller covers joints {left} (controllers: "
                               f"{ {c.name: list(c.joints) for c in candidates} })")
        chosen = max(covering, key=lambda entry: entry[:3])[3]
        joints = [joint for joint in trajectory.joint_names if joint in left and joint in chosen.joints]
        parts.append((chosen, trajectory.part(joints)))
        left = [joint for joint in left if joint not in joints]
        candidates.remove(chosen)
    return parts
