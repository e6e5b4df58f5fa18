"""Industrial motions (ROS-free), as Pilz's industrial motion planner plans them: ``Ptp`` (a straight move in
joint space, every joint on a synchronised trapezoidal profile within the scaled joint limits: they start and end
together), ``Lin`` (the tool frame on a straight line, its orientation by slerp, on a trapezoidal Cartesian
profile within the scaled ``CartesianLimits``, slowed where a joint would exceed its limits) and ``Circ`` (an arc
through an interim point or about a center, timed as a LIN).

Like Pilz's, these motions do not go around obstacles: each is checked, at every point of its trajectory (at most
``resolution`` apart per joint), against the joint limits, the scene and the robot itself, and refused naming the
colliding bodies and where. A LIN or CIRC follows its line by one IK step per ``step`` of tool travel, each in the
start configuration's branch (``cartesian_path``): an unreachable point, a singularity crossed or a joint flip
refuses it, saying at which point and why. The tool frame is ``IndustrialOptions.tcp`` (T_tip_tool: a flange
offset, an attached object's subframe); pose goals are poses of it.
"""
from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace

import numpy as np

from ..collision.checker import CollisionChecker
from ..errors import ErrorCode, KinematicsError
from ..geometry.poses import transform_from_any_pose
from ..ik.budget import UNBOUNDED, Budget
from ..ik.plugin import KinematicsPlugin
from ..state_check import StateCheck
from .cartesian_limits import CartesianLimits
from .cartesian_path import compute_cartesian_path
from .goals import GoalError, GroupLimits, JointGoal, PoseGoal, goal_candidates
from .motion import DEFAULT_OPTIONS, MotionPlan, Waypoint, plan
from .options import PlanningError, PlanOptions
from .path_check import FINE_RESOLUTION, PathCheck, densify
from .path_speed import ToolLimits, time_along_path
from .sphere_proof import first_invalid
from .straight_timing import time_straight_line
from .time_parameterization import JointLimits, TimedPath, joint_limits
from .tool_paths import CIRC_AUXILIARIES, ToolPathError, arc_path, line_path

#: Tool travel between two IK steps of a LIN or CIRC [m] (the joints are then densified to ``resolution``).
LINEAR_STEP = 0.005
#: A LIN or CIRC to a joint goal must end this close to it in every joint [rad or m] (else: another branch); a
#: redundant arm's (more than 6 joints) ends at the goal's pose, where on its self-motion the line leads it.
SAME_CONFIGURATION = 1e-3
#: The planner ids, as Pilz's.
PLANNER_IDS = ("PTP", "LIN", "CIRC")


class MotionRefused(KinematicsError):
    """An industrial motion that cannot be planned as asked: its MoveIt ``code`` and why."""

    def __init__(self, code: ErrorCode, message: str):
        super().__init__(message)
        self.code = code


@dataclass(frozen=True, eq=False)
class Ptp:
    """A joint-space move to ``goal`` (a pose goal: its IK solution nearest the start whose move is free)."""

    goal: JointGoal | PoseGoal


@dataclass(frozen=True, eq=False)
class Lin:
    """The tool frame on a straight line to ``goal`` (a joint goal: the tool's pose there, reached in that
    configuration; a redundant arm reaches the pose where its self-motion along the line leads)."""

    goal: JointGoal | PoseGoal


@dataclass(frozen=True, eq=False)
class Circ:
    """The tool frame on an arc to ``goal``: through ``auxiliary`` (3,) [m, base frame] when ``kind`` is
    "interim", about it when "center"."""

    goal: JointGoal | PoseGoal
    auxiliary: Sequence[float]
    kind: str = "interim"

    def __post_init__(self):
        if self.kind not in CIRC_AUXILIARIES:
            raise PlanningError(f"a CIRC's auxiliary point is one of {list(CIRC_AUXILIARIES)}; got {self.kind!r}")
        point = np.asarray(self.auxiliary, dtype=float)
        if point.shape != (3,) or not np.isfinite(point).all():
            raise PlanningError(f"a CIRC's {self.kind} is a finite 3-vector [m]; got {self.auxiliary!r}")


@dataclass(frozen=True, eq=False)
class Free:
    """The project's collision-avoiding motion (``motion.plan``, as ``options`` say; its resolution is the
    industrial motions') to ``goal``: unlike the others it goes around obstacles; in a sequence it blends with
    its neighbours and is timed with them."""

    goal: JointGoal | PoseGoal
    options: PlanOptions = DEFAULT_OPTIONS


Motion = Ptp | Lin | Circ | Free
#: The kinds of motion whose tool moves within the Cartesian limits.
CARTESIAN_KINDS = ("LIN", "CIRC")


@dataclass(frozen=True, eq=False)
class IndustrialOptions:
    """How industrial motions are planned: the joint ``limits`` (default: the URDF's) and ``cartesian`` limits,
    scaled by ``velocity_scaling`` and ``acceleration_scaling`` (in (0, 1]); points at most ``resolution`` apart
    per joint [rad or m]; one IK step per ``step`` [m] of tool travel; the tool frame ``tcp`` (T_tip_tool (4, 4);
    None: the tip)."""

    limits: JointLimits | None = None
    cartesian: CartesianLimits = CartesianLimits()
    velocity_scaling: float = 1.0
    acceleration_scaling: float = 1.0
    resolution: float = FINE_RESOLUTION
    step: float = LINEAR_STEP
    tcp: np.ndarray | None = None

    def __post_init__(self):
        for what in ("velocity_scaling", "acceleration_scaling"):
            value = getattr(self, what)
            if not (isinstance(value, (int, float)) and 0 < value <= 1):
                raise PlanningError(f"{what} must be in (0, 1]; got {value!r}")
        for what in ("resolution", "step"):
            value = getattr(self, what)
            if not (isinstance(value, (int, float)) and np.isfinite(value) and value > 0):
                raise PlanningError(f"{what} must be finite and > 0; got {value!r}")
        tcp = np.eye(4) if self.tcp is None else np.array(self.tcp, dtype=float)
        if tcp.shape != (4, 4) or not np.isfinite(tcp).all():
            raise PlanningError(f"tcp is a (4, 4) transform T_tip_tool; got {self.tcp!r}")
        tcp.flags.writeable = False
        object.__setattr__(self, "tcp", tcp)


#: The options of a motion or sequence planned without any.
DEFAULT_INDUSTRIAL_OPTIONS = IndustrialOptions()


@dataclass(frozen=True)
class Segment:
    """One motion's path: ``positions`` (points, joints) from its start (included), at most ``resolution`` apart,
    each checked; ``T_base_tool`` (points, 4, 4) the tool's poses there; ``kind`` PTP, LIN, CIRC or FREE."""

    kind: str
    positions: np.ndarray
    T_base_tool: np.ndarray
    #: interior points where the path stops (a Free motion's corners without a blend)
    stops: tuple[int, ...] = ()


class IndustrialRun:
    """What a motion's (or a sequence's) steps share: the group, its checks and limits, the tool frame."""

    def __init__(self, plugin: KinematicsPlugin, checker: CollisionChecker, options: IndustrialOptions, *,
                 base_state=None, path_check: StateCheck | None = None, budget: Budget = UNBOUNDED):
        if not isinstance(options, IndustrialOptions):
            raise PlanningError(f"options is an IndustrialOptions; got {type(options).__name__}")
        if len(plugin.getTipFrames()) != 1:
            raise PlanningError(f"industrial motions need a group with one tip; group {plugin.getGroupName()!r} "
                                f"has tips {plugin.getTipFrames()}")
        self.plugin, self.options, self.budget, self.path_check = plugin, options, budget, path_check
        self.names = tuple(plugin.getJointNames())
        self.check = PathCheck.of(checker, self.names, base_state, options.resolution, path_check,
                                  plugin.robot_model)
        limits = options.limits or joint_limits(plugin.robot_model, self.names)
        self.limits = limits.scaled(options.velocity_scaling, options.acceleration_scaling)
        self.cartesian = options.cartesian.scaled(options.velocity_scaling, options.acceleration_scaling)
        self.chain = plugin.robot_model.chain(plugin.getBaseFrame(), plugin.getTipFrames()[0])
        self.began = time.perf_counter()

    def tool_poses(self, positions: np.ndarray) -> np.ndarray:
        """T_base_tool (points, 4, 4) at each row of ``positions``."""
        if self.chain.joint_names == self.names:
            return self.chain.forward_kinematics(positions) @ self.options.tcp
        tip = self.plugin.getTipFrames()[0]
        poses = [self.plugin.getPositionFK([tip], q.tolist())[1][0] for q in positions]
        return np.array([transform_from_any_pose(pose) for pose in poses]) @ self.options.tcp

    def start(self, start: Sequence[float]) -> np.ndarray:
        """The start as an array, refused (START_STATE_INVALID, START_STATE_IN_COLLISION) when it is not valid."""
        q = np.asarray(start, dtype=float)
        if q.shape != (len(self.names),) or not np.isfinite(q).all():
            raise PlanningError(f"start needs one finite value per joint {list(self.names)}; got {list(start)!r}")
        bounds = GroupLimits(self.plugin, q)
        outside = bounds.violations(q)
        if outside:
            raise MotionRefused(ErrorCode.START_STATE_INVALID, f"the start is outside the limits: {outside}")
        report = self.check.checker.check(self.check.full_state(q))
        if report.in_collision:
            raise MotionRefused(ErrorCode.START_STATE_IN_COLLISION, f"the start is in collision ({report.describe()})")
        problem = self.check.validity_problem(q)
        if problem:
            raise MotionRefused(ErrorCode.START_STATE_VIOLATES_PATH_CONSTRAINTS, f"the start is not valid: {problem}")
        return q

    def checked(self, positions: np.ndarray, what: str) -> None:
        """Refuse ``positions`` (a path, at most ``resolution`` apart) unless every point is within the limits
        and valid; the refusal names the point, where the tool is and the colliding bodies."""
        bounds = GroupLimits(self.plugin, positions[0])
        outside = bounds.first_outside(positions)
        if outside >= 0:
            raise MotionRefused(ErrorCode.INVALID_MOTION_PLAN, f"{what} leaves the joint limits at point {outside} "
                                f"of {len(positions)}: {bounds.violations(positions[outside])}")
        invalid = first_invalid(self.check, positions)
        if invalid >= 0:
            where = self.tool_poses(positions[invalid][None])[0, :3, 3]
            raise MotionRefused(ErrorCode.INVALID_MOTION_PLAN, (
                f"{what} is blocked at point {invalid} of {len(positions)} (tool at "
                f"{np.round(where, 4).tolist()} m): {self.check.state_problem(positions[invalid])}"))

    def failed(self, refused: MotionRefused) -> MotionPlan:
        return MotionPlan(self.names, refused.code, str(refused), "refused",
                          planning_time=time.perf_counter() - self.began)

    def answer(self, waypoints: Sequence[np.ndarray], positions: np.ndarray, timing: TimedPath,
               what: str) -> MotionPlan:
        return MotionPlan(self.names, ErrorCode.SUCCESS,
                          f"{what}: {len(positions)} points, {timing.time_from_start[-1]:.3f} s; "
                          f"{self.check.states_checked} states checked", "",
                          tuple(Waypoint(q, "joint") for q in waypoints), positions, timing, 0,
                          time.perf_counter() - self.began)


def plan_motion(plugin: KinematicsPlugin, checker: CollisionChecker, start: Sequence[float], motion: Motion,
                options: IndustrialOptions = DEFAULT_INDUSTRIAL_OPTIONS, *, base_state=None,
                path_check: StateCheck | None = None, budget: Budget = UNBOUNDED) -> MotionPlan:
    """One PTP, LIN or CIRC of the plugin's group from ``start`` (its joint values, ``getJointNames()`` order):
    a MotionPlan with the timed trajectory, or refused with MoveIt's code and where and why. ``base_state`` gives
    the other joints; ``path_check`` (constraints) holds at every point. PlanningError for a malformed request."""
    run = IndustrialRun(plugin, checker, options, base_state=base_state, path_check=path_check, budget=budget)
    try:
        segment = motion_segment(run, run.start(start), motion)
    except MotionRefused as refused:
        return run.failed(refused)
    timing = timed_segment(run, segment)
    return run.answer([segment.positions[0], segment.positions[-1]], segment.positions, timing, segment.kind)


def motion_segment(run: IndustrialRun, q_start: np.ndarray, motion: Motion) -> Segment:
    """The checked path of ``motion`` from ``q_start``; MotionRefused saying why there is none."""
    if isinstance(motion, Ptp):
        positions = _ptp_path(run, q_start, motion.goal)
        return Segment("PTP", positions, run.tool_poses(positions))
    if isinstance(motion, Free):
        positions, stops = _free_path(run, q_start, motion)
        return Segment("FREE", positions, run.tool_poses(positions), stops)
    if not isinstance(motion, (Lin, Circ)):
        raise PlanningError(f"a motion is a Ptp, Lin, Circ or Free; got {type(motion).__name__}")
    T_from = run.tool_poses(q_start[None])[0]
    T_to, q_goal = _goal_tool_pose(run, motion.goal)
    try:
        poses = line_path(T_from, T_to, run.options.step) if isinstance(motion, Lin) else \
            arc_path(T_from, T_to, np.asarray(motion.auxiliary, dtype=float), motion.kind, run.options.step)
    except ToolPathError as error:
        raise MotionRefused(ErrorCode.INVALID_MOTION_PLAN, f"CIRC: {error}") from None
    kind = "LIN" if isinstance(motion, Lin) else "CIRC"
    positions = _followed(run, q_start, poses, kind, q_goal)
    return Segment(kind, positions, run.tool_poses(positions))


def _free_path(run: IndustrialRun, q_start: np.ndarray, motion: Free) -> tuple[np.ndarray, tuple[int, ...]]:
    """(the checked path of ``motion.plan`` to a Free motion's goal (a pose goal: of the tool frame), blended
    through its waypoints; the interior points where it stops: its corners without a free blend)."""
    goal = motion.goal
    if isinstance(goal, PoseGoal):
        _goal_tool_pose(run, goal)
        goal = PoseGoal(goal.T_base_link, "", goal.check, goal.name, run.options.tcp)
    options = replace(motion.options, resolution=run.options.resolution, blend=True)
    result = plan(run.plugin, run.check.checker, q_start, [goal], options, base_state=run.check.base,
                  path_check=run.path_check, budget=run.budget)
    if not result.success:
        raise MotionRefused(result.error_code, f"FREE: {result.message}")
    still = np.flatnonzero(~np.abs(result.timing.velocities[1:-1]).any(axis=1)) + 1
    return result.positions, tuple(int(k) for k in still)


def _goal_tool_pose(run: IndustrialRun, goal) -> tuple[np.ndarray, np.ndarray | None]:
    """(T_base_tool (4, 4) of the goal, its joint values for a joint goal, else None)."""
    if isinstance(goal, JointGoal):
        q = np.asarray(goal.positions, dtype=float)
        if q.shape != (len(run.names),) or not np.isfinite(q).all():
            raise PlanningError(f"a joint goal needs one finite value per joint {list(run.names)}; got "
                                f"{list(goal.positions)!r}")
        return run.tool_poses(q[None])[0], q
    if not isinstance(goal, PoseGoal):
        raise PlanningError(f"a goal is a JointGoal or a PoseGoal; got {type(goal).__name__}")
    if goal.tcp is not None and not np.allclose(goal.tcp, run.options.tcp):
        raise PlanningError("an industrial motion moves one tool frame, IndustrialOptions.tcp; the pose goal has "
                            "another tcp")
    if goal.link and goal.link != run.plugin.getTipFrames()[0]:
        raise PlanningError(f"an industrial motion's pose goal is the tool frame's (IndustrialOptions.tcp); got "
                            f"link {goal.link!r}: give its offset from the tip as tcp")
    return np.array(goal.T_base_link), None


def _ptp_path(run: IndustrialRun, q_start: np.ndarray, goal) -> np.ndarray:
    """The densified, checked joint line to the goal's first configuration (``_ptp_goals``) whose line is free."""
    bounds = GroupLimits(run.plugin, q_start)
    first: MotionRefused | None = None
    for q_goal in _ptp_goals(run, q_start, goal, bounds):
        positions = densify(np.array([q_start, q_goal]), run.options.resolution)
        try:
            _goal_valid(run, bounds, q_goal)
            run.checked(positions, "PTP")
            return positions
        except MotionRefused as refused:
            first = first or refused
    raise first


def _ptp_goals(run: IndustrialRun, q_start: np.ndarray, goal, bounds: GroupLimits) -> Iterator[np.ndarray]:
    """A PTP's goal configurations: a pose goal's IK solution from the start (one local search seeded by it, as
    Pilz seeds its IK), then every candidate, nearest the start first; NO_IK_SOLUTION when there is none."""
    accept, seeded = None, False
    if isinstance(goal, PoseGoal):
        _goal_tool_pose(run, goal)
        goal = PoseGoal(goal.T_base_link @ np.linalg.inv(run.options.tcp), "", goal.check, goal.name)
        accept = goal.check.problem(run.plugin.robot_model, run.check.checker) if goal.check is not None else None
        result = run.plugin.getPositionIK(goal.T_base_link.copy(), q_start.tolist(), budget=run.budget)
        q_seeded = np.array(result.solution) if result.success else None
        if q_seeded is not None and not bounds.violations(q_seeded) and (accept is None or not accept(q_seeded)):
            seeded = True
            yield q_seeded
    try:
        found = goal_candidates(goal, run.plugin, q_start, bounds, budget=run.budget, accept=accept)
    except GoalError as error:
        raise PlanningError(f"PTP: {error}") from None
    if not len(found.configurations) and not seeded:
        raise MotionRefused(ErrorCode.NO_IK_SOLUTION, f"PTP: the goal cannot be reached: {found.reason}")
    yield from found.configurations


def _goal_valid(run: IndustrialRun, bounds: GroupLimits, q_goal: np.ndarray) -> None:
    outside = bounds.violations(q_goal)
    if outside:
        raise MotionRefused(ErrorCode.GOAL_STATE_INVALID, f"PTP: the goal is outside the limits: {outside}")
    problem = run.check.state_problem(q_goal)
    if problem:
        raise MotionRefused(ErrorCode.GOAL_IN_COLLISION, f"PTP: the goal is not valid: {problem}")


def _followed(run: IndustrialRun, q_start: np.ndarray, poses: np.ndarray, kind: str,
              q_goal: np.ndarray | None) -> np.ndarray:
    """The joint path that puts the tool on ``poses`` (one IK step each, in the start's branch), densified to the
    resolution and checked in one batch (collisions, path constraints, limits); refused where a point is
    unreachable, singular, a flip, or invalid."""
    path = compute_cartesian_path(run.plugin, q_start, list(poses[1:]), 1.5 * run.options.step,
                                  T_tip_link=run.options.tcp, budget=run.budget)
    if not path.complete:
        stopped_at = poses[min(len(path.positions), len(poses) - 1), :3, 3]
        reason = path.stop_reason
        code = ErrorCode.NO_IK_SOLUTION if "no IK solution" in reason else ErrorCode.PLANNING_FAILED
        raise MotionRefused(code, f"{kind} cannot be followed past tool position "
                                  f"{np.round(stopped_at, 4).tolist()} m: {reason}")
    if q_goal is not None and len(run.names) <= 6 and np.abs(path.positions[-1] - q_goal).max() > SAME_CONFIGURATION:
        raise MotionRefused(ErrorCode.INVALID_MOTION_PLAN, (
            f"{kind} reaches the goal's pose in another configuration than the joint goal: "
            f"{np.round(path.positions[-1], 4).tolist()} instead of {np.round(q_goal, 4).tolist()}"))
    positions = densify(path.positions, run.options.resolution)
    if len(positions) == 2:
        positions = densify(positions, 0.5 * float(np.abs(positions[1] - positions[0]).max()) or 1.0)
    run.checked(positions, kind)
    return positions


def tool_limits(run: IndustrialRun, kinds: Sequence[str]) -> ToolLimits:
    """Per-segment tool limits: the scaled Cartesian limits on LIN and CIRC segments, none on the others."""
    linear = np.array([kind in CARTESIAN_KINDS for kind in kinds])
    limits = run.cartesian

    def where(value: float) -> np.ndarray:
        return np.where(linear, value, np.inf)

    return ToolLimits(where(limits.max_trans_vel), where(limits.max_trans_acc), where(-limits.max_trans_dec),
                      where(limits.max_rot_vel), where(limits.max_rot_acc))


def tool_turns(T_base_tool: np.ndarray) -> np.ndarray:
    """(points - 1,) the angle [rad] the tool turns over each segment."""
    relative = np.einsum("kji,kjl->kil", T_base_tool[:-1, :3, :3], T_base_tool[1:, :3, :3])
    cosine = (np.trace(relative, axis1=1, axis2=2) - 1.0) / 2.0
    return np.arccos(np.clip(cosine, -1.0, 1.0))


def timed_segment(run: IndustrialRun, segment: Segment) -> TimedPath:
    """A PTP on its synchronised trapezoid; a LIN or CIRC on its Cartesian trapezoid within the joint limits."""
    if segment.kind == "PTP":
        return time_straight_line(segment.positions, run.limits)

    kinds = [segment.kind] * (len(segment.positions) - 1)
    return time_along_path(segment.positions, segment.T_base_tool[:, :3, 3], tool_turns(segment.T_base_tool),
                           run.limits, tool_limits(run, kinds), segment.stops)
