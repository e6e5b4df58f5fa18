"""Time parameterization of a path of configurations (ROS-free): time-optimal within joint velocity and
acceleration limits, with toppra (time-optimal path parameterization by reachability analysis).

The path is the cubic spline through the configurations, one per unit of the path parameter; toppra computes
the fastest path velocity within the limits (at rest at both ends) on a grid holding every configuration and
the midpoints between them. Every configuration keeps its place: it gets its time, velocity and acceleration,
nothing is resampled. A link's Cartesian speed limit is one more path coordinate (the distance the link has
travelled) with that speed as its velocity limit.
"""
from __future__ import annotations

import functools
import weakref
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..errors import KinematicsError
from ..model.robot_model import RobotModel

#: Limits of joints that give none [rad/s or m/s; rad/s^2 or m/s^2], as MoveIt's time parameterization uses.
DEFAULT_MAX_VELOCITY = 1.0
DEFAULT_MAX_ACCELERATION = 1.0
#: Acceleration bound of the Cartesian-distance coordinate: its speed alone is limited.
_UNBOUNDED_ACCELERATION = 1e9
_URDF_LIMITS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # model -> {joint names: ``joint_limits``}
#: Joint motion [rad or m] below which a path does not move and each step gets MIN_STEP_DURATION.
STILL = 1e-12
MIN_STEP_DURATION = 1e-3
#: The spline's end conditions, tried in turn: toppra's solver can fail at a path end where a joint's first
#: derivative vanishes but not its second (seen with the Panda), which the natural spline (no second derivative
#: at the ends) avoids; the clamped one (no first derivative) is the fallback.
SPLINE_END_CONDITIONS = ("natural", "clamped")


@functools.cache
def load_toppra():
    """The toppra package, imported on first use (it imports matplotlib: seconds, not for every user of the core)."""
    import toppra
    import toppra.algorithm
    import toppra.constraint

    toppra.setup_logging("ERROR")  # toppra logs every infeasible or badly conditioned step as a warning
    return toppra


def warm_up_time_parameterization() -> None:
    """Import toppra and time a short path once: the first timing pays for scipy's and toppra's first use (twice a
    later one's), which a service's first request should not."""
    time_parameterize(np.linspace(0.0, 0.1, 3)[:, None], JointLimits(np.ones(1), np.ones(1)))


class TimeParameterizationError(KinematicsError):
    """A path that cannot be timed within the limits (bad limits, or toppra found no parameterization)."""


@dataclass(frozen=True)
class TimedPath:
    """One entry per configuration: time from the start [s], velocities and accelerations (joint units)."""

    time_from_start: np.ndarray
    velocities: np.ndarray
    accelerations: np.ndarray


@dataclass(frozen=True)
class JointLimits:
    """Velocity and acceleration limits of some joints, > 0 (joint units per s, per s^2)."""

    max_velocities: np.ndarray
    max_accelerations: np.ndarray

    def scaled(self, velocity_scaling: float, acceleration_scaling: float) -> JointLimits:
        return JointLimits(self.max_velocities * velocity_scaling, self.max_accelerations * acceleration_scaling)


def joint_limits(model: RobotModel, joint_names: Sequence[str],
                 overrides: dict[str, dict[str, object]] | None = None) -> JointLimits:
    """The limits of ``joint_names``: velocities from the URDF, accelerations from ``overrides`` (MoveIt's
    joint_limits.yaml: joint -> {has_velocity_limits, max_velocity, has_acceleration_limits, max_acceleration};
    its velocities replace the URDF's), DEFAULT_MAX_VELOCITY / DEFAULT_MAX_ACCELERATION where none is given. Without
    overrides, kept per model and joints (read-only arrays)."""
    if not overrides:
        kept = _URDF_LIMITS.setdefault(model, {})
        names = tuple(joint_names)
        if names not in kept:
            kept[names] = _read_only(_limits_of(model, names, {}))
        return kept[names]
    return _limits_of(model, joint_names, overrides)


def _read_only(limits: JointLimits) -> JointLimits:
    for array in (limits.max_velocities, limits.max_accelerations):
        array.flags.writeable = False
    return limits


def _limits_of(model: RobotModel, joint_names: Sequence[str], overrides: dict[str, dict[str, object]]) -> JointLimits:
    velocities, accelerations = [], []
    for name in joint_names:
        given = overrides.get(name, {})
        velocity = model.joints[name].velocity
        velocity = _limit(given, "velocity", velocity if np.isfinite(velocity) and velocity > 0 else None,
                          DEFAULT_MAX_VELOCITY, name)
        velocities.append(velocity)
        accelerations.append(_limit(given, "acceleration", None, DEFAULT_MAX_ACCELERATION, name))
    return JointLimits(np.array(velocities), np.array(accelerations))


def _limit(given: dict[str, object], kind: str, urdf: float | None, default: float, joint: str) -> float:
    """A joint's ``kind`` limit: joint_limits.yaml's max_<kind> when has_<kind>_limits is not false, else the
    URDF's, else ``default``; TimeParameterizationError for a value that is not a number > 0."""
    value = given.get(f"max_{kind}")
    if value is not None and given.get(f"has_{kind}_limits", True) is not False:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not np.isfinite(value) or value <= 0:
            raise TimeParameterizationError(f"joint_limits.{joint}.max_{kind} must be a number > 0; got {value!r}")
        return float(value)
    return default if urdf is None else float(urdf)


def time_parameterize(positions: np.ndarray, limits: JointLimits, *, link_positions: np.ndarray | None = None,
                      max_link_speed: float = 0.0) -> TimedPath:
    """Time-optimal timing of ``positions`` (points, joints), at rest at both ends, within ``limits``; with
    ``max_link_speed`` > 0 [m/s], the link at ``link_positions`` (points, 3) [m] moves no faster."""
    positions = np.asarray(positions, dtype=float)
    count, dof = positions.shape
    if count < 2 or np.abs(np.diff(positions, axis=0)).max() < STILL:
        return TimedPath(np.arange(count) * MIN_STEP_DURATION, np.zeros((count, dof)), np.zeros((count, dof)))
    coordinates, max_velocities, max_accelerations = positions, limits.max_velocities, limits.max_accelerations
    if max_link_speed > 0 and link_positions is not None:
        travelled = np.concatenate([[0.0], np.cumsum(np.linalg.norm(np.diff(link_positions, axis=0), axis=1))])
        coordinates = np.column_stack([positions, travelled])
        max_velocities = np.append(max_velocities, max_link_speed)
        max_accelerations = np.append(max_accelerations, _UNBOUNDED_ACCELERATION)
    ss = np.arange(count, dtype=float)
    grid = np.linspace(0.0, count - 1.0, 2 * count - 1)
    constraints = _constraints(tuple(max_velocities.tolist()), tuple(max_accelerations.tolist()))
    for end_condition in SPLINE_END_CONDITIONS:
        path = load_toppra().SplineInterpolator(ss, coordinates, bc_type=end_condition)
        instance = load_toppra().algorithm.TOPPRA(constraints, path, gridpoints=grid, solver_wrapper="seidel")
        sdd, sd, _ = instance.compute_parameterization(0.0, 0.0)
        if sd is not None and np.isfinite(sd).all() and np.isfinite(sdd).all():
            break
    else:
        raise TimeParameterizationError("toppra found no time parameterization of the path within the limits")
    mean_speed = sd[:-1] + sd[1:]
    if np.any(mean_speed <= 0):
        raise TimeParameterizationError("toppra stopped the path before its end (a zero path velocity)")
    times = np.concatenate([[0.0], np.cumsum(2.0 * np.diff(grid) / mean_speed)])[::2]
    sd_points, sdd_points = sd[::2], np.append(sdd, sdd[-1])[::2]
    first, second = path(ss, 1)[:, :dof], path(ss, 2)[:, :dof]
    velocities = first * sd_points[:, None]
    accelerations = second * sd_points[:, None] ** 2 + first * sdd_points[:, None]
    return TimedPath(times, velocities, accelerations)


@functools.lru_cache(maxsize=64)
def _constraints(max_velocities: tuple[float, ...], max_accelerations: tuple[float, ...]) -> list:
    """toppra's joint velocity and acceleration constraints (kept: building them formats their limits as text)."""
    accelerations = np.array(max_accelerations)
    constraint = load_toppra().constraint
    return [constraint.JointVelocityConstraint(np.array(max_velocities)),
            constraint.JointAccelerationConstraint(np.column_stack([-accelerations, accelerations]))]
