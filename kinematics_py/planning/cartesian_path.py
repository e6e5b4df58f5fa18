"""Cartesian paths (ROS-free): a link moved along straight lines through waypoints, one IK per step.

``compute_cartesian_path`` follows MoveIt's computeCartesianPath: from the start configuration the link's pose
is interpolated to each waypoint in turn (position linearly, orientation by slerp), in steps of at most
``max_step`` [m] (and ``ROTATION_STEP_PER_METRE * max_step`` [rad] of rotation); each step is one IK seeded by
the previous configuration. The first step whose IK fails, whose joints jump, or that the validity check
rejects (collisions, path constraints) ends the path; ``fraction`` is the part achieved.

Better than MoveIt: every step stays in the start configuration's branch (no elbow or wrist flip mid-line: each
joint moves at most ``BRANCH_WINDOW_*`` per step, or the absolute jump threshold when one is set, and for 6-joint
chains the Jacobian determinant keeps its sign, i.e. no step crosses a singularity), and ``stop_reason`` says
why the path ended (which step, which joint jumped, which bodies collided, which
constraint failed).
"""
from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from ..errors import ErrorCode, KinematicsError, Verdict
from ..geometry.poses import transform_from_any_pose
from ..geometry.transforms import invert_transform, quaternion_from_rotation, rotation_log, rotations_from_quaternions
from ..ik.budget import UNBOUNDED, Budget
from ..ik.plugin import KinematicsPlugin

#: Rotation allowed per step [rad] for each metre of ``max_step`` (1 cm steps rotate at most 0.1 rad).
ROTATION_STEP_PER_METRE = 10.0
#: With a relative jump threshold, a segment gets at least this many steps (as MoveIt: the mean step is a
#: meaningful reference only over several steps).
MIN_STEPS_FOR_JUMP_THRESHOLD = 10
#: Largest change of a revolute [rad] / prismatic [m] joint in one step when no absolute jump threshold is set:
#: a larger change means another IK branch (a wrist or elbow flip), not the continuation of the path.
BRANCH_WINDOW_REVOLUTE = math.pi / 2
BRANCH_WINDOW_PRISMATIC = 1e3
#: Search time [s] of the fallback IK search of one step (when the local step from the previous configuration
#: does not land in the branch window).
STEP_TIMEOUT = 0.005

#: validity(q) for a group joint vector: Verdict (SUCCESS or the reason it is rejected).
Validity = Callable[[np.ndarray], Verdict]


class CartesianPathError(KinematicsError):
    """A Cartesian path request that cannot be planned at all (bad step, group, start or waypoints)."""


@dataclass(frozen=True)
class JumpThresholds:
    """MoveIt's jump thresholds (0, or less, disables each): ``relative`` x the mean joint-space step;
    ``revolute`` [rad] and ``prismatic`` [m] for any single joint in one step."""

    relative: float = 0.0
    revolute: float = 0.0
    prismatic: float = 0.0


@dataclass(frozen=True)
class CartesianPath:
    """The configurations along the path: ``positions[0]`` is the start, one row per step after it."""

    joint_names: tuple[str, ...]
    #: (points, joints) joint values [rad or m]
    positions: np.ndarray
    #: (points, 4, 4) the link's requested pose at each point, T_base_link (base: the plugin's base frame)
    T_base_link: np.ndarray
    #: Part of the requested path achieved, in [0, 1] (MoveIt: complete segments plus the part of the last).
    fraction: float
    #: Why the path ended before the last waypoint ("" when it is complete).
    stop_reason: str = ""

    @property
    def complete(self) -> bool:
        return not self.stop_reason


def compute_cartesian_path(plugin: KinematicsPlugin, start: Sequence[float], waypoints: Sequence,
                           max_step: float, *, T_tip_link: np.ndarray | None = None,
                           jump_thresholds: JumpThresholds = JumpThresholds(), validity: Validity | None = None,
                           step_timeout: float = STEP_TIMEOUT, budget: Budget = UNBOUNDED) -> CartesianPath:
    """The path of the link at ``T_tip_link`` (default: the tip) from ``start`` (the group's joint values, in
    ``plugin.getJointNames()`` order) through ``waypoints`` (poses or 4x4 transforms ``T_base_link`` in the
    plugin's base frame). CartesianPathError for a request that cannot be planned (max_step <= 0, a group with
    several tips, a bad start or waypoint); a path that stops early is a result with its ``stop_reason``.
    ``budget`` (the caller's deadline and stop hook) bounds every IK step."""
    if not (isinstance(max_step, (int, float)) and math.isfinite(max_step) and max_step > 0):
        raise CartesianPathError(f"max_step must be a finite distance > 0 [m]; got {max_step!r}")
    tips = plugin.getTipFrames()
    if len(tips) != 1:
        raise CartesianPathError(f"Cartesian paths need a group with one tip; group {plugin.getGroupName()!r} has "
                                 f"tips {tips}")
    names = tuple(plugin.getJointNames())
    q_start = np.asarray(start, dtype=float)
    if q_start.shape != (len(names),) or not np.isfinite(q_start).all():
        raise CartesianPathError(f"start needs one finite value per joint {list(names)}; got {list(start)!r}")
    T_tip_link = np.eye(4) if T_tip_link is None else np.asarray(T_tip_link, dtype=float)
    targets = [_transform(pose, index) for index, pose in enumerate(waypoints)]
    ok, poses = plugin.getPositionFK([tips[0]], q_start)
    if not ok:
        raise CartesianPathError(f"start {q_start.tolist()} is not a valid configuration of group "
                                 f"{plugin.getGroupName()!r}")
    T_link_tip = invert_transform(T_tip_link)
    planner = _StepSolver(plugin, names, jump_thresholds, validity, step_timeout, budget)
    T_now = transform_from_any_pose(poses[0]) @ T_tip_link
    positions, link_poses, progress = [q_start], [T_now], [0.0]
    reason = "" if targets else "no waypoints given"
    for index, T_target in enumerate(targets):
        steps = _step_count(T_now, T_target, max_step, jump_thresholds.relative > 0)
        for k, T_step in enumerate(interpolate_poses(T_now, T_target, steps), start=1):
            q, why = planner.step(T_step @ T_link_tip, positions[-1])
            if q is None:
                reason = (f"stopped at step {k} of {steps} toward waypoint {index} "
                          f"({_percent(progress[-1])} of the path achieved): {why}")
                break
            positions.append(q)
            link_poses.append(T_step)
            progress.append((index + k / steps) / len(targets))
        if reason:
            break
        T_now = T_target
    positions_array = np.array(positions)
    kept, jump = relative_jump_cut(positions_array, names, jump_thresholds.relative)
    if kept < len(positions):
        reason = f"stopped at point {kept} ({_percent(progress[kept - 1])} of the path achieved): {jump}"
    fraction = progress[kept - 1] if targets else 0.0
    return CartesianPath(names, positions_array[:kept], np.array(link_poses[:kept]), fraction, reason)


class _StepSolver:
    """One IK step: the local solution from the previous configuration if it is in the branch window, else a
    short search inside the window; then the absolute jump thresholds and the validity check."""

    def __init__(self, plugin: KinematicsPlugin, names: tuple[str, ...], thresholds: JumpThresholds,
                 validity: Validity | None, timeout: float, budget: Budget):
        self.plugin, self.names, self.validity, self.timeout = plugin, names, validity, timeout
        self.budget = budget
        model = plugin.robot_model
        prismatic = np.array([model.joints[name].type == "prismatic" for name in names])
        self.prismatic = prismatic
        self.jump_limit = np.where(prismatic, thresholds.prismatic if thresholds.prismatic > 0 else np.inf,
                                   thresholds.revolute if thresholds.revolute > 0 else np.inf)
        self.window = np.minimum(np.where(prismatic, BRANCH_WINDOW_PRISMATIC, BRANCH_WINDOW_REVOLUTE),
                                 self.jump_limit)
        #: A redundant group may find another configuration of the same pose in the window when one is rejected.
        self.redundant = len(names) > 6
        #: The chain whose Jacobian determinant tells the IK branch (a 6-joint chain: branches are separated by
        #: the singularities, where the determinant changes sign); None for other groups.
        chain = model.chain(plugin.getBaseFrame(), plugin.getTipFrames()[0])
        self.branch_chain = chain if chain.dof == 6 and chain.joint_names == names else None

    def crosses_singularity(self, q_from: np.ndarray, q_to: np.ndarray) -> bool:
        """True when the Jacobian determinant changes sign from ``q_from`` to ``q_to``: another IK branch."""
        if self.branch_chain is None:
            return False
        determinants = np.linalg.det(self.branch_chain.jacobian(np.array([q_from, q_to])))
        return bool(determinants[0] * determinants[1] < 0)

    def in_branch(self, q: np.ndarray, q_previous: np.ndarray) -> bool:
        return bool(np.all(np.abs(q - q_previous) <= self.window)) and not self.crosses_singularity(q_previous, q)

    def step(self, T_base_tip: np.ndarray, q_previous: np.ndarray) -> tuple[np.ndarray | None, str]:
        """(the step's configuration, "") or (None, why the path stops here)."""
        result = self.plugin.getPositionIK(T_base_tip, q_previous, budget=self.budget)
        q = np.array(result.solution) if result.success else None
        if q is None or not self.in_branch(q, q_previous):
            searched = self.plugin.searchPositionIK(
                T_base_tip, q_previous, self.timeout, consistency_limits=self.window,
                solution_callback=lambda _pose, solution: self.in_branch(np.asarray(solution), q_previous),
                budget=self.budget)
            if not searched.success:
                return None, self._no_step(T_base_tip, q, q_previous, searched.message)
            q = np.array(searched.solution)
        verdict = self.validity(q) if self.validity is not None else Verdict(ErrorCode.SUCCESS)
        if verdict.error_code == ErrorCode.SUCCESS:
            return q, ""
        if self.redundant:
            def valid_in_branch(_pose, solution):
                solution = np.asarray(solution)
                return self.in_branch(solution, q_previous) and self.validity(solution).error_code == ErrorCode.SUCCESS
            retry = self.plugin.searchPositionIK(T_base_tip, q_previous, self.timeout, consistency_limits=self.window,
                                                 solution_callback=valid_in_branch, budget=self.budget)
            if retry.success:
                return np.array(retry.solution), ""
        return None, verdict.reason

    def _no_step(self, T_base_tip: np.ndarray, q_local: np.ndarray | None, q_previous: np.ndarray,
                 message: str) -> str:
        """Why no configuration in the window reaches the step's pose: a joint would jump (beyond a threshold, or
        into another branch), or the pose is out of reach."""
        if q_local is None:
            elsewhere = self.plugin.searchPositionIK(T_base_tip, q_previous, self.timeout, budget=self.budget)
            if not elsewhere.success:
                return f"no IK solution reaches the step's pose ({message})"
            q_local = np.array(elsewhere.solution)
        change = np.abs(q_local - q_previous)
        worst = int(np.argmax(change / self.window))
        unit = "m" if self.prismatic[worst] else "rad"
        if np.all(change <= self.window):  # a small change that crosses a singularity
            return (f"the step's pose is reachable only across a singularity, in another IK branch than the start "
                    f"configuration's (an elbow or wrist flip); joint {self.names[worst]!r} would move "
                    f"{change[worst]:.4g} {unit}")
        if np.isfinite(self.jump_limit[worst]) and change[worst] > self.jump_limit[worst]:
            what = ("prismatic_jump_threshold" if self.prismatic[worst] else "revolute_jump_threshold")
            return (f"joint {self.names[worst]!r} would jump by {change[worst]:.4g} {unit} "
                    f"(> {what} {self.jump_limit[worst]:g} {unit})")
        return (f"the step's pose is reachable only in another IK branch than the start configuration's (an "
                f"elbow or wrist flip): joint {self.names[worst]!r} would jump by {change[worst]:.4g} {unit}")


def relative_jump_cut(positions: np.ndarray, names: Sequence[str], factor: float) -> tuple[int, str]:
    """(points kept, why the rest was cut): MoveIt's relative jump test, a step longer (sum of joint changes)
    than ``factor`` times the mean step ends the path before it. (len(positions), "") when none is."""
    if factor <= 0 or len(positions) < 2:
        return len(positions), ""
    changes = np.abs(np.diff(positions, axis=0))
    lengths = changes.sum(axis=1)
    limit = factor * lengths.mean()
    jumps = np.flatnonzero(lengths > limit)
    if not jumps.size:
        return len(positions), ""
    step = int(jumps[0])
    worst = int(np.argmax(changes[step]))
    return step + 1, (f"the joint-space step to point {step + 1} ({lengths[step]:.4g}) exceeds jump_threshold "
                      f"{factor:g} x the mean step ({lengths.mean():.4g}); joint {names[worst]!r} moved "
                      f"{changes[step, worst]:.4g}")


def interpolate_poses(T_from: np.ndarray, T_to: np.ndarray, steps: int) -> list[np.ndarray]:
    """``steps`` poses from T_from (excluded) to T_to (included): position linear, orientation by slerp."""
    if steps == 1:
        return [np.array(T_to, dtype=float)]
    fractions = np.arange(1, steps + 1) / steps
    q_from, q_to = quaternion_from_rotation(T_from[:3, :3]), quaternion_from_rotation(T_to[:3, :3])
    cosine = float(np.dot(q_from, q_to))
    if cosine < 0:  # the shorter way round
        q_to, cosine = -q_to, -cosine
    angle = math.acos(min(cosine, 1.0))
    if angle < 1e-9:
        weights_from, weights_to = 1.0 - fractions, fractions
    else:
        weights_from, weights_to = np.sin((1.0 - fractions) * angle), np.sin(fractions * angle)
    poses = np.tile(np.eye(4), (steps, 1, 1))
    poses[:, :3, :3] = rotations_from_quaternions(weights_from[:, None] * q_from + weights_to[:, None] * q_to)
    poses[:, :3, 3] = T_from[:3, 3] + fractions[:, None] * (T_to[:3, 3] - T_from[:3, 3])
    return list(poses)


def _step_count(T_from: np.ndarray, T_to: np.ndarray, max_step: float, jump_test: bool) -> int:
    """MoveIt's count: floor(distance / max step) + 1, over translation and rotation."""
    translation = float(np.linalg.norm(T_to[:3, 3] - T_from[:3, 3]))
    rotation = float(np.linalg.norm(rotation_log(T_from[:3, :3].T @ T_to[:3, :3])))
    steps = max(math.floor(translation / max_step), math.floor(rotation / (ROTATION_STEP_PER_METRE * max_step))) + 1
    return max(steps, MIN_STEPS_FOR_JUMP_THRESHOLD) if jump_test else steps


def _transform(pose, index: int) -> np.ndarray:
    try:
        return transform_from_any_pose(pose)
    except KinematicsError as error:
        raise CartesianPathError(f"waypoint {index}: {error}") from None


def _percent(fraction: float) -> str:
    return f"{100 * fraction:.1f}%"
