"""KinematicsPlugin: MoveIt's KinematicsBase contract in Python (ROS-free).

Method names follow MoveIt's C++ API so MoveIt users recognise them. Request failures never raise:
IK calls return an ``IKResult`` whose ``error_code`` is a MoveIt error code and whose ``message`` says
what went wrong. Joint vectors are in ``getJointNames()`` order, values in [rad] or [m]; poses are
``Pose`` values (or geometry_msgs/Pose-like objects) in the base frame.
"""
from __future__ import annotations

import itertools
import logging
import math
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any, NamedTuple

import numpy as np

from ..errors import ErrorCode, KinematicsError, RequestError
from ..geometry.poses import Pose, PoseError, transform_from_any_pose, transforms_from_poses
from ..geometry.transforms import invert_transform
from ..model.robot_model import RobotModel
from ..model.srdf import SemanticModel
from ..parameters import SolverParameters
from . import kernels as kernels
from .options import DiscretizationMethod, KinematicsQueryOptions
from .search import (
    IkProblem,
    IkSearch,
    SearchOutcome,
    SolverSetup,
    Verdict,
    quick_search,
    sampling_box,
    solved_message,
)

_log = logging.getLogger("kinematics_py.ik.plugin")
#: numba's default threading layer must not be entered from two threads at once.
_BATCH_LOCK = threading.Lock()


class IKResult(NamedTuple):
    """Outcome of an IK call. ``solution`` is a list in joint order, or None on failure."""

    success: bool
    solution: list[float] | None
    error_code: ErrorCode
    message: str = ""
    approximate: bool = False
    #: Every distinct valid solution found (several with a discretization method).
    solutions: tuple[tuple[float, ...], ...] = ()
    #: Why a collision-aware search (``avoid_collisions=True``) ended as it did.
    diagnostics: IKDiagnostics | None = None


@dataclass(frozen=True)
class JointLimitViolation:
    """A joint value [rad or m] outside [lower, upper] that reaching the pose would need."""

    joint: str
    value: float
    lower: float
    upper: float


@dataclass(frozen=True)
class IKDiagnostics:
    """What a collision-aware search saw: solutions reaching the pose within the limits (``reached``), how
    many collided, the colliding body pairs (most frequent first), and, when nothing reached the pose, the
    joint limit violations a reaching configuration needs or the remaining pose error of the closest
    approach (both from a short follow-up search with the joint limits lifted)."""

    reached: int = 0
    in_collision: int = 0
    colliding_pairs: tuple[tuple[str, str], ...] = ()
    joint_limit_violations: tuple[JointLimitViolation, ...] = ()
    position_error: float | None = None
    rotation_error: float | None = None




@dataclass(frozen=True)
class _Setup:
    """Everything ``initialize`` establishes; replaced as a whole, so readers never see half of it."""

    model: RobotModel
    group_name: str
    base_frame: str
    tip_frames: tuple[str, ...]
    solver: SolverSetup
    redundant_joints: tuple[int, ...] = ()


class KinematicsPlugin:
    """IK and FK for one planning group, as MoveIt's kinematics plugins provide."""

    DEFAULT_TIMEOUT = 1.0
    DEFAULT_SEARCH_DISCRETIZATION = 0.1

    def __init__(self):
        self._setup: _Setup | None = None
        self._lock = threading.Lock()
        self._default_timeout = self.DEFAULT_TIMEOUT
        self._search_discretization = self.DEFAULT_SEARCH_DISCRETIZATION
        self.last_error = ""
        self._collision_checker = None
        self._relaxed: tuple[_Setup, tuple[SolverSetup, SolverSetup]] | None = None

    # ------------------------------------------------------------------ set-up
    def initialize(self, robot_description: str, group_name: str, base_frame: str = "",
                   tip_frames: str | Sequence[str] = (), search_discretization: float = DEFAULT_SEARCH_DISCRETIZATION,
                   *, robot_description_semantic: str | None = None, parameters: dict[str, Any] | None = None) -> bool:
        """Load the robot and set up the group. Returns False and logs (and keeps in ``last_error``) why not.

        Checked in this order: URDF, SRDF, group, base frame, tip frames, chain from base to every tip,
        solver parameters. With an SRDF, an empty base/tip list takes the group's chain.
        """
        try:
            setup = self._build_setup(robot_description, group_name, base_frame, tip_frames,
                                      robot_description_semantic, parameters)
        except (KinematicsError, ValueError) as error:
            self.last_error = f"cannot initialize group {group_name!r}: {error}"
            _log.error(self.last_error)
            return False
        _warm_up(setup)
        self._setup = setup
        self._default_timeout = setup.solver.params.kinematics_solver_timeout
        if "kinematics_solver_search_resolution" in (parameters or {}):
            search_discretization = setup.solver.params.kinematics_solver_search_resolution
        self._search_discretization = search_discretization
        self.last_error = ""
        _log.info("group %r: base %r, tips %s, joints %s, parameters %s", setup.group_name, setup.base_frame,
                  list(setup.tip_frames), list(setup.solver.problem.variable_names), setup.solver.params)
        return True

    def _build_setup(self, robot_description, group_name, base_frame, tip_frames, srdf_text, parameters) -> _Setup:
        model = RobotModel.from_urdf_string(robot_description)
        tips = [tip_frames] if isinstance(tip_frames, str) else list(tip_frames)
        tips = [tip for tip in tips if tip]
        if srdf_text:
            group = SemanticModel.from_srdf_string(srdf_text, model).group(group_name)
            if not base_frame or not tips:
                if not group.is_chain:
                    raise KinematicsError(f"group {group_name!r} is not a serial chain: give base_frame and "
                                          f"tip_frames explicitly (group joints: {list(group.joint_names)})")
                base_frame = base_frame or group.base_link
                tips = tips or [group.tip_link]
        if not base_frame or not tips:
            raise KinematicsError("base_frame and at least one tip frame are required without an SRDF group")
        model.check_link(base_frame)
        for tip in tips:
            model.check_link(tip)
        problem = IkProblem.build(model, base_frame, tips)
        if problem.dof == 0:
            raise KinematicsError(f"no movable joints between {base_frame!r} and {tips}")
        params = SolverParameters.from_dict(parameters)
        return _Setup(model, group_name, base_frame, tuple(tips), SolverSetup.build(problem, params))

    def _require_setup(self) -> _Setup:
        setup = self._setup
        if setup is None:
            raise RequestError(ErrorCode.FAILURE, "the plugin is not initialized: call initialize() first")
        return setup

    # ------------------------------------------------------------------ queries
    def getGroupName(self) -> str:
        return self._require_setup().group_name

    def getBaseFrame(self) -> str:
        return self._require_setup().base_frame

    def getTipFrame(self) -> str:
        return self._require_setup().tip_frames[0]

    def getTipFrames(self) -> list[str]:
        return list(self._require_setup().tip_frames)

    def getJointNames(self) -> list[str]:
        return list(self._require_setup().solver.problem.variable_names)

    def getLinkNames(self) -> list[str]:
        setup = self._require_setup()
        links = {joint.child for chain in setup.solver.problem.chains
                 for joint in setup.model.joint_path(setup.base_frame, chain.tip_link)}
        return [link for link in setup.model.link_names if link in links]

    def supportsGroup(self, group_joint_names: Sequence[str]) -> tuple[bool, str]:
        """Whether this solver handles a group with these joints; (False, reason) otherwise."""
        setup = self._require_setup()
        unknown = [name for name in group_joint_names if name not in setup.model.joints]
        if unknown:
            return False, f"unknown joints {unknown}"
        return True, ""

    def getSupportedDiscretizationMethods(self) -> list[DiscretizationMethod]:
        return list(DiscretizationMethod)

    def setRedundantJoints(self, redundant_joints: Sequence[int | str]) -> bool:
        """Declare redundant joints by index or name; False (and nothing changed) if one is unknown."""
        setup = self._require_setup()
        names = setup.solver.problem.variable_names
        indices = []
        for joint in redundant_joints:
            if isinstance(joint, str) and joint in names:
                indices.append(names.index(joint))
            elif isinstance(joint, (int, np.integer)) and not isinstance(joint, bool) and 0 <= joint < len(names):
                indices.append(int(joint))
            else:
                self.last_error = f"redundant joint {joint!r} is not one of {list(names)} (or an index into them)"
                _log.error(self.last_error)
                return False
        with self._lock:
            self._setup = _Setup(**{**setup.__dict__, "redundant_joints": tuple(sorted(set(indices)))})
        return True

    def getRedundantJoints(self) -> list[int]:
        return list(self._require_setup().redundant_joints)

    def setSearchDiscretization(self, discretization: float | dict[int, float]) -> None:
        self._search_discretization = discretization

    def getSearchDiscretization(self, joint_index: int | None = None) -> float:
        value = self._search_discretization
        if isinstance(value, dict):
            return value.get(joint_index, self.DEFAULT_SEARCH_DISCRETIZATION)
        return value

    def setDefaultTimeout(self, timeout: float) -> None:
        self._default_timeout = float(timeout)

    def getDefaultTimeout(self) -> float:
        return self._default_timeout

    @property
    def parameters(self) -> SolverParameters:
        return self._require_setup().solver.params

    @property
    def robot_model(self) -> RobotModel:
        return self._require_setup().model

    # ------------------------------------------------------------------ FK
    def getPositionFK(self, link_names: Sequence[str], joint_angles: Sequence[float]) -> tuple[bool, list[Pose]]:
        """Poses of ``link_names`` in the base frame; (False, []) on unknown links or bad joint values."""
        try:
            setup = self._require_setup()
            q = self._joint_vector(setup, joint_angles, "joint_angles")
            for link in link_names:
                setup.model.check_link(link)
        except (RequestError, KinematicsError) as error:
            _log.error("getPositionFK: %s", error)
            return False, []
        poses = setup.model.link_poses(dict(zip(setup.solver.problem.variable_names, q)))
        T_base_root = invert_transform(poses[setup.base_frame])
        return True, [Pose.from_transform(T_base_root @ poses[link]) for link in link_names]

    # ------------------------------------------------------------------ IK
    def getPositionIK(self, ik_pose, ik_seed_state: Sequence[float],
                      options: KinematicsQueryOptions | None = None) -> IKResult:
        """One local search from the seed: the solution closest to it, no random restarts."""
        return self._solve(ik_pose, ik_seed_state, None, None, None, None, options, local_only=True)

    def searchPositionIK(self, ik_pose, ik_seed_state: Sequence[float], timeout: float | None = None,
                         consistency_limits: Sequence[float] | None = None,
                         solution_callback: Callable | None = None, cost_function: Callable | None = None,
                         options: KinematicsQueryOptions | None = None, context_state: Any = None, *,
                         avoid_collisions: bool = False, collision_checker=None) -> IKResult:
        """Search until a valid solution is found or ``timeout`` [s] (default: getDefaultTimeout()) runs out.

        ``ik_pose`` is one pose or a list with one pose per tip. ``solution_callback(ik_pose, solution)``
        returns an ErrorCode or bool; a rejection makes the search continue from new starts.
        ``cost_function(ik_pose, solution)`` -> float: the cheapest valid solution found in the time wins.
        ``avoid_collisions`` rejects solutions the collision checker (``setCollisionChecker``) finds in
        collision, with the other joints at ``context_state`` (joint -> value; default: zero within the
        limits). Its failures are GOAL_IN_COLLISION (solutions reached the pose, all collided: the pairs are
        named), NO_IK_SOLUTION (the pose is out of reach, or needs joint values outside the limits: the
        remaining error or the joints are named) or TIMED_OUT (the pose is reachable within the limits,
        but the time ran out while still searching); ``IKResult.diagnostics`` has the details.
        ``collision_checker`` replaces the plugin's checker for this call (e.g. one for a request's scene).
        """
        if avoid_collisions:
            return self._collision_aware_search(ik_pose, ik_seed_state, timeout, consistency_limits,
                                                solution_callback, cost_function, options, context_state,
                                                collision_checker or self._collision_checker)
        return self._solve(ik_pose, ik_seed_state, timeout, consistency_limits, solution_callback, cost_function,
                           options, local_only=False)

    # ------------------------------------------------------------------ collision-aware IK
    def setCollisionChecker(self, checker) -> None:
        """The ``collision.CollisionChecker`` (of the same robot) used by ``avoid_collisions``; None removes it."""
        self._collision_checker = checker

    def getCollisionChecker(self):
        return self._collision_checker

    def _collision_aware_search(self, ik_pose, seed, timeout, consistency_limits, solution_callback, cost_function,
                                options, context_state, checker) -> IKResult:
        if checker is None:
            return IKResult(False, None, ErrorCode.COLLISION_CHECKING_UNAVAILABLE,
                            "avoid_collisions needs a collision checker: call setCollisionChecker() first")
        try:
            setup = self._require_setup()
            validity = checker.validity(setup.solver.problem.variable_names, context_state)
        except KinematicsError as error:
            code = getattr(error, "code", ErrorCode.INVALID_ROBOT_STATE)
            return IKResult(False, None, code, f"cannot check collisions: {error}")
        other_rejections = 0

        def callback(pose, solution):
            nonlocal other_rejections
            verdict = validity(solution)
            if verdict.error_code == ErrorCode.SUCCESS and solution_callback is not None:
                verdict = solution_callback(pose, solution)
                other_rejections += not _accepts(verdict)
            return verdict

        result = self._solve(ik_pose, seed, timeout, consistency_limits, callback, cost_function, options,
                             local_only=False)
        diagnostics = IKDiagnostics(validity.checks, validity.rejections, validity.colliding_pairs())
        if result.success or result.error_code not in (ErrorCode.NO_IK_SOLUTION, ErrorCode.GOAL_IN_COLLISION):
            return result._replace(diagnostics=diagnostics)
        if validity.rejections and not other_rejections:
            counts = ", ".join(f"{a} - {b} ({n}x)" for (a, b), n in validity.pair_counts.most_common())
            return result._replace(error_code=ErrorCode.GOAL_IN_COLLISION, diagnostics=diagnostics, message=(
                f"{validity.checks} solution(s) reached the pose but every one was in collision: {counts}"))
        if validity.checks:
            return result._replace(diagnostics=diagnostics)
        return self._explain_unreached(setup, ik_pose, seed, consistency_limits, result, diagnostics)

    def _explain_unreached(self, setup: _Setup, ik_pose, seed, consistency_limits, result: IKResult,
                           diagnostics: IKDiagnostics) -> IKResult:
        """Nothing reached the pose: search on briefly, with long local searches, to tell a pose the time was
        too short for (TIMED_OUT) from one out of reach or beyond the joint limits (NO_IK_SOLUTION, with the
        pose error or the limit violations, from a search with the limits lifted). Consistency limits count
        as joint limits here."""
        problem = setup.solver.problem
        targets = self._targets(setup, ik_pose)
        q_seed = self._joint_vector(setup, seed, "ik_seed_state")
        lower, upper, window = problem.lower, problem.upper, None
        if consistency_limits is not None and len(consistency_limits) > 0:
            window = self._joint_vector(setup, consistency_limits, "consistency_limits")
            lower, upper = np.maximum(lower, q_seed - window), np.minimum(upper, q_seed + window)
        timed_out = result._replace(error_code=ErrorCode.TIMED_OUT, diagnostics=diagnostics, message=(
            f"the time ran out while still searching: {result.message}; the pose is reachable within the joint "
            f"limits (a follow-up search found a configuration), so a longer timeout may succeed"))
        within, relaxed = self._diagnosis_solvers(setup)
        if IkSearch(within, targets, q_seed, timeout=DIAGNOSIS_TIMEOUT / 2, consistency_limits=window).run().solution \
                is not None:
            return timed_out
        outcome = IkSearch(relaxed, targets, q_seed, timeout=DIAGNOSIS_TIMEOUT / 2, collect_all=True,
                           return_approximate=True).run()
        if outcome.solution is None:
            return result._replace(diagnostics=diagnostics)
        if outcome.approximate:
            position, rotation = problem.task_errors(outcome.solution, targets).max(axis=0)
            return result._replace(error_code=ErrorCode.NO_IK_SOLUTION, diagnostics=replace(
                diagnostics, position_error=float(position), rotation_error=float(rotation)), message=(
                f"the pose is out of reach: even without joint limits the closest approach leaves a position "
                f"error of {position:.3g} m and a rotation error of {rotation:.3g} rad"))
        violations = min((_limit_violations(problem, q, lower, upper) for q in outcome.solutions),
                         key=lambda found: sum(max(v.lower - v.value, v.value - v.upper) for v in found))
        if not violations:
            return timed_out
        listed = ", ".join(f"{v.joint} = {v.value:.4g} outside [{v.lower:.4g}, {v.upper:.4g}]" for v in violations)
        return result._replace(error_code=ErrorCode.NO_IK_SOLUTION, message=(
            f"the pose is not reachable within the joint limits: reaching it needs {listed}"),
            diagnostics=replace(diagnostics, joint_limit_violations=violations))

    def _diagnosis_solvers(self, setup: _Setup) -> tuple[SolverSetup, SolverSetup]:
        """The group's solver with long local searches, within the limits and with revolute joints unbounded
        and prismatic ranges tripled (accepting any closest approach as approximate); built once per set-up."""
        cached = self._relaxed
        if cached is not None and cached[0] is setup:
            return cached[1]
        problem = setup.solver.problem
        params = setup.solver.params.replace(
            approximate_solution_position_threshold=10.0, approximate_solution_orientation_threshold=math.pi,
            solve_mode="speed", max_iterations=max(setup.solver.params.max_iterations, DIAGNOSIS_ITERATIONS))
        span = np.where(np.isfinite(problem.upper - problem.lower), problem.upper - problem.lower, 0.0)
        lower = np.where(problem.is_revolute, -np.inf, problem.lower - span)
        upper = np.where(problem.is_revolute, np.inf, problem.upper + span)
        relaxed = replace(problem, lower=lower, upper=upper, is_continuous=problem.is_continuous | problem.is_revolute)
        solvers = (SolverSetup.build(problem, params), SolverSetup.build(relaxed, params))
        self._relaxed = (setup, solvers)
        return solvers

    def _solve(self, ik_pose, seed, timeout, consistency_limits, solution_callback, cost_function, options,
               *, local_only: bool) -> IKResult:
        try:
            setup = self._require_setup()
            options = options or _DEFAULT_OPTIONS
            targets = self._targets(setup, ik_pose)
            q_seed = self._joint_vector(setup, seed, "ik_seed_state")
            timeout = self._timeout(timeout)
            limits = None
            if consistency_limits is not None and len(consistency_limits) > 0:
                limits = self._joint_vector(setup, consistency_limits, "consistency_limits")
                if np.any(limits < 0):
                    raise RequestError(ErrorCode.INVALID_ROBOT_STATE, "consistency_limits must be >= 0")
        except RequestError as error:
            return IKResult(False, None, error.code, str(error))

        resume_after, elapsed = 0, 0.0
        plain = (solution_callback is None and cost_function is None and limits is None and not local_only
                 and (options is _DEFAULT_OPTIONS or options == _DEFAULT_OPTIONS)
                 and setup.solver.params.solve_mode == "speed")
        if plain:
            started = time.perf_counter()
            q, resume_after = quick_search(setup.solver, targets, q_seed)
            elapsed = time.perf_counter() - started
            if q is not None:
                solution = q.tolist()
                return IKResult(True, solution, ErrorCode.SUCCESS, solved_message(elapsed, 1, resume_after),
                                solutions=(tuple(solution),))

        is_valid = None
        if solution_callback is not None:
            def is_valid(q):
                return solution_callback(ik_pose, [float(v) for v in q])
        cost = None
        if cost_function is not None:
            def cost(q):
                return cost_function(ik_pose, [float(v) for v in q])

        locked = None
        if options.lock_redundant_joints and setup.redundant_joints:
            locked = np.zeros(setup.solver.problem.dof, dtype=bool)
            locked[list(setup.redundant_joints)] = True
        search_args = dict(timeout=timeout, local_only=local_only, consistency_limits=limits, is_valid=is_valid,
                           cost_function=cost, return_approximate=options.return_approximate_solution)
        if options.discretization_method != DiscretizationMethod.NO_DISCRETIZATION:
            outcome = self._discretized_search(setup, targets, q_seed, locked, options.discretization_method,
                                               search_args)
        else:
            outcome = IkSearch(setup.solver, targets, q_seed, locked=locked, resume_after=resume_after,
                               already_spent=elapsed, **search_args).run()
        return _result(outcome)

    def _discretized_search(self, setup: _Setup, targets, q_seed, locked, method, search_args) -> SearchOutcome:
        """All distinct solutions: redundant joints stepped (or sampled), the others solved for each value."""
        problem = setup.solver.problem
        locked = np.zeros(problem.dof, dtype=bool) if locked is None else locked
        redundant = [i for i in setup.redundant_joints if not locked[i]]
        rng = np.random.default_rng(setup.solver.params.random_seed)
        if not redundant:
            return IkSearch(setup.solver, targets, q_seed, locked=locked, collect_all=True,
                            **search_args).run()
        discretized = method in (DiscretizationMethod.ALL_DISCRETIZED, DiscretizationMethod.SOME_DISCRETIZED)
        grids = []
        for i in redundant:
            low = problem.lower[i] if np.isfinite(problem.lower[i]) else q_seed[i] - math.pi
            high = problem.upper[i] if np.isfinite(problem.upper[i]) else q_seed[i] + math.pi
            step = self.getSearchDiscretization(i)
            count = max(1, int(math.floor((high - low) / step)) + 1)
            grids.append(low + step * np.arange(count) if discretized else rng.uniform(low, high, count))
        combinations = list(itertools.product(*grids))
        budget = search_args["timeout"] / max(1, len(combinations))
        merged = SearchOutcome(ErrorCode.NO_IK_SOLUTION, "")
        for values in combinations:
            seed = q_seed.copy()
            seed[redundant] = values
            fixed = locked.copy()
            fixed[redundant] = True
            outcome = IkSearch(setup.solver, targets, seed, locked=fixed, collect_all=True,
                               **{**search_args, "timeout": budget}).run()
            merged.searches += outcome.searches
            merged.reached += outcome.reached
            merged.rejected += outcome.rejected
            merged.solutions += [s for s in outcome.solutions
                                 if not any(np.max(np.abs(s - t)) < 1e-3 for t in merged.solutions)]
            if not merged.message:
                merged.error_code, merged.message = outcome.error_code, outcome.message
        if merged.solutions:
            merged.solution = min(merged.solutions, key=lambda s: float(np.sum((s - q_seed) ** 2)))
            merged.error_code = ErrorCode.SUCCESS
            merged.message = (f"{len(merged.solutions)} distinct solution(s) over {len(combinations)} values of "
                              f"the redundant joints")
        return merged

    def searchPositionIKBatch(self, ik_poses, ik_seed_states: Sequence[Sequence[float]] | None = None,
                              max_starts: int = 256) -> list[IKResult]:
        """Solve many poses in one compiled, multi-core call: one IKResult per pose, verified.

        ``ik_poses``: a sequence of poses (single-tip groups), or an array of transforms
        (N, 4, 4) / (N, tips, 4, 4). Each is searched from its seed (default: the middle of the joint
        ranges), then from up to ``max_starts - 1`` shared random starts. No validity callback.
        """
        try:
            setup = self._require_setup()
            if max_starts < 1:
                raise RequestError(ErrorCode.FAILURE, f"max_starts must be >= 1; got {max_starts}")
            tips = len(setup.tip_frames)
            if not isinstance(ik_poses, np.ndarray) and tips > 1:
                raise RequestError(ErrorCode.INVALID_LINK_NAME, f"a batch for {tips} tips must be an array "
                                    f"(N, {tips}, 4, 4) of transforms")
            T, bad = transforms_from_poses(ik_poses)
            count = len(T) // tips
            targets = T.reshape(count, tips, 4, 4)
            bad_targets = {i // tips: reason for i, reason in bad.items()}
            problem = setup.solver.problem
            seeds = np.tile(setup.solver.problem.middle, (count, 1))
            if ik_seed_states is not None:
                seeds = np.array(ik_seed_states, dtype=float)
                if seeds.shape != (count, problem.dof) or not np.isfinite(seeds).all():
                    raise RequestError(ErrorCode.INVALID_ROBOT_STATE, f"ik_seed_states must be finite, shape "
                                        f"({count}, {problem.dof}); got shape {seeds.shape}")
        except RequestError as error:
            return [IKResult(False, None, error.code, str(error))] * len(ik_poses)
        solutions, found = self._batch_kernel(setup, targets, seeds, max_starts)
        results = []
        for k in range(count):
            if k in bad_targets:
                results.append(IKResult(False, None, ErrorCode.INVALID_GOAL_CONSTRAINTS,
                                        f"invalid target pose: {bad_targets[k]}"))
            elif found[k]:
                solution = solutions[k].tolist()
                results.append(IKResult(True, solution, ErrorCode.SUCCESS, "solved", solutions=(tuple(solution),)))
            else:
                errors = problem.task_errors(solutions[k], targets[k]).max(axis=0)
                results.append(IKResult(False, None, ErrorCode.NO_IK_SOLUTION,
                                        f"no solution from {max_starts} start(s); closest approach: position "
                                        f"error {errors[0]:.3g} m, rotation error {errors[1]:.3g} rad"))
        return results

    def _batch_kernel(self, setup: _Setup, targets: np.ndarray, seeds: np.ndarray, max_starts: int):
        problem = setup.solver.problem
        # Continuous joints are sampled within half a turn of zero (the pool is shared by all poses).
        sample_lower, sample_upper = sampling_box(problem, problem.lower, problem.upper, np.zeros(problem.dof))
        count = len(targets)
        solutions = np.empty((count, problem.dof))
        found = np.zeros(count, dtype=np.bool_)
        costs = np.empty(count)
        with _BATCH_LOCK:
            kernels.batch_search(np.ascontiguousarray(targets), np.ascontiguousarray(seeds, dtype=float),
                                 setup.solver.restarts, sample_lower, sample_upper, problem.segments,
                                 problem.joint_info, problem.tip_table, setup.solver.weights, problem.lower,
                                 problem.upper, setup.solver.joint_weights, problem.is_revolute,
                                 setup.solver.settings, max_starts, solutions, found, costs)
        return solutions, found

    # ------------------------------------------------------------------ input checks
    @staticmethod
    def _targets(setup: _Setup, ik_pose) -> np.ndarray:
        poses = list(ik_pose) if isinstance(ik_pose, (list, tuple)) and not isinstance(ik_pose, Pose) else [ik_pose]
        if not poses:
            raise RequestError(ErrorCode.INVALID_GOAL_CONSTRAINTS, "no target pose given")
        if len(poses) != len(setup.tip_frames):
            raise RequestError(ErrorCode.INVALID_LINK_NAME,
                                f"{len(poses)} pose(s) given for {len(setup.tip_frames)} tip frame(s) "
                                f"{list(setup.tip_frames)}: give one pose per tip")
        try:
            if len(poses) == 1:
                return transform_from_any_pose(poses[0])[None]
            return np.array([transform_from_any_pose(pose) for pose in poses])
        except PoseError as error:
            raise RequestError(ErrorCode.INVALID_GOAL_CONSTRAINTS, f"invalid target pose: {error}") from None

    @staticmethod
    def _joint_vector(setup: _Setup, values, what: str) -> np.ndarray:
        names = setup.solver.problem.variable_names
        try:
            q = np.asarray(values, dtype=float)
        except (TypeError, ValueError):
            raise RequestError(ErrorCode.INVALID_ROBOT_STATE, f"{what} must be numbers; got {values!r}") from None
        if q.shape != (len(names),):
            raise RequestError(ErrorCode.INVALID_ROBOT_STATE,
                                f"{what} needs {len(names)} values for joints {list(names)}; got shape {q.shape}")
        if not np.isfinite(q).all():
            bad = [names[i] for i in np.flatnonzero(~np.isfinite(q))]
            raise RequestError(ErrorCode.INVALID_ROBOT_STATE, f"{what} has non-finite values for {bad}")
        return q

    def _timeout(self, timeout) -> float:
        if timeout is None:
            return self._default_timeout
        try:
            value = float(timeout)
        except (TypeError, ValueError):
            raise RequestError(ErrorCode.FAILURE, f"timeout must be a number of seconds; got {timeout!r}") from None
        if not math.isfinite(value) or value < 0:
            raise RequestError(ErrorCode.FAILURE, f"timeout must be finite and >= 0 seconds; got {timeout!r}")
        return value


#: Time [s] and least iterations per local search of the follow-up search that explains why nothing
#: reached the pose.
DIAGNOSIS_TIMEOUT = 0.02
DIAGNOSIS_ITERATIONS = 200
#: Slack [rad or m] before a joint value counts as outside its limits.
LIMIT_SLACK = 1e-9


def _accepts(verdict) -> bool:
    """Whether a solution_callback answer (bool, ErrorCode or Verdict) accepts the solution."""
    if isinstance(verdict, (bool, np.bool_)):
        return bool(verdict)
    return int(verdict.error_code if isinstance(verdict, Verdict) else verdict) == ErrorCode.SUCCESS


def _limit_violations(problem: IkProblem, q: np.ndarray, lower: np.ndarray, upper: np.ndarray
                      ) -> tuple[JointLimitViolation, ...]:
    """Joint values outside [lower, upper], revolute joints first shifted by whole turns into (or toward) it."""
    middle = np.where(np.isfinite(lower) & np.isfinite(upper), (lower + upper) / 2, 0.0)
    q = np.where(problem.is_revolute, q + 2 * math.pi * np.round((middle - q) / (2 * math.pi)), q)
    kernels.wrap_near(q, middle, problem.is_revolute, lower, upper)
    outside = (q < lower - LIMIT_SLACK) | (q > upper + LIMIT_SLACK)
    return tuple(JointLimitViolation(problem.variable_names[i], float(q[i]), float(lower[i]), float(upper[i]))
                 for i in np.flatnonzero(outside))


def _warm_up(setup: _Setup) -> None:
    """Load the compiled search (numba's on-disk cache) now, so the first request does not pay for it."""
    problem = setup.solver.problem
    q = setup.solver.problem.middle
    targets = np.array([chain.forward_kinematics(q[[problem.variable_names.index(n) for n in chain.joint_names]])
                        for chain in problem.chains])
    IkSearch(setup.solver, targets, q, timeout=0.0, local_only=True).run()


_DEFAULT_OPTIONS = KinematicsQueryOptions()



def _result(outcome: SearchOutcome) -> IKResult:
    if outcome.error_code != ErrorCode.SUCCESS:
        return IKResult(False, None, outcome.error_code, outcome.message)
    return IKResult(True, outcome.solution.tolist(), ErrorCode.SUCCESS, outcome.message, outcome.approximate,
                    tuple(map(tuple, np.array(outcome.solutions).tolist())))
