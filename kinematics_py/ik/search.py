"""Global IK search: compiled multi-start local searches, wrapped with time budget, verification,
validity callbacks and solution preferences. ROS-free; poses are 4x4 ``T_base_tip`` arrays.
"""
from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from ..errors import ErrorCode, Verdict
from ..model.chain import Chain
from ..model.robot_model import RobotModel
from ..parameters import METHODS, SolverParameters
from . import kernels as kernels

#: Two solutions closer than this in every joint [rad or m] count as the same solution.
DISTINCT_SOLUTION_TOLERANCE = 1e-3
#: Random starts tried per compiled call between two clock checks (the first call also tries the seed).
STARTS_PER_CALL = 8
#: Slack on joint limits when verifying a solution [rad or m].
LIMIT_TOLERANCE = 1e-9
#: Iterations of one Jacobian-transpose search at least (it converges linearly, not quadratically).
JACOBIAN_TRANSPOSE_MIN_ITERATIONS = 20000
#: Random restarts drawn once per solver; a search that needs more draws them afresh.
RESTART_POOL_SIZE = 4096



#: validity callback: q -> True/False, an ErrorCode (SUCCESS accepts) or a Verdict.
ValidityCallback = Callable[[np.ndarray], "bool | ErrorCode | Verdict"]


@dataclass(frozen=True, eq=False)
class IkProblem:
    """The chains from one base link to one or more tips, sharing the joint vector ``variable_names``."""

    base_link: str
    tip_links: tuple[str, ...]
    chains: tuple[Chain, ...]
    variable_names: tuple[str, ...]
    lower: np.ndarray
    upper: np.ndarray
    is_continuous: np.ndarray
    is_revolute: np.ndarray
    segments: np.ndarray
    joint_info: np.ndarray
    tip_table: np.ndarray

    @classmethod
    def build(cls, model: RobotModel, base_link: str, tip_links: Sequence[str]) -> IkProblem:
        chains = tuple(model.chain(base_link, tip) for tip in tip_links)
        on_chains = {name for chain in chains for name in chain.joint_names}
        names = tuple(name for name in model.joint_names if name in on_chains)
        index = {name: i for i, name in enumerate(names)}
        segments, joint_info, table = [], [], []
        segment_row = joint_row = 0
        for chain in chains:
            chain_segments, chain_info = chain.compiled
            info = chain_info.copy()
            info[:, 1] = [index[chain.joint_names[v]] for v in chain_info[:, 1]]
            segments.append(chain_segments)
            joint_info.append(info)
            table.append((segment_row, joint_row, len(info)))
            segment_row += len(chain_segments)
            joint_row += len(info)
        per_variable = {}
        for chain in chains:
            for i, name in enumerate(chain.joint_names):
                per_variable[name] = (chain.lower[i], chain.upper[i], chain.is_continuous[i], chain.is_revolute[i])
        columns = np.array([per_variable[name] for name in names], dtype=float).reshape(-1, 4)
        return cls(base_link, tuple(tip_links), chains, names, columns[:, 0].copy(), columns[:, 1].copy(),
                   columns[:, 2].astype(bool), columns[:, 3].astype(bool),
                   np.ascontiguousarray(np.concatenate(segments)),
                   np.ascontiguousarray(np.concatenate(joint_info).reshape(-1, 2)),
                   np.array(table, dtype=np.int64).reshape(-1, 3))

    @property
    def dof(self) -> int:
        return len(self.variable_names)

    @cached_property
    def has_continuous_joints(self) -> bool:
        return bool(self.is_continuous.any())

    @property
    def middle(self) -> np.ndarray:
        """The middle of every joint's range (0 for continuous joints)."""
        bounded = np.isfinite(self.lower) & np.isfinite(self.upper)
        middle = np.zeros(self.dof)
        middle[bounded] = (self.lower[bounded] + self.upper[bounded]) / 2
        return middle

    def task_errors(self, q: np.ndarray, targets: np.ndarray) -> np.ndarray:
        """(t, 2): per tip, (position error [m], rotation error [rad]) on every axis, unweighted."""
        e = np.empty(6 * len(self.tip_links))
        if not kernels.task_error(np.ascontiguousarray(q, dtype=float), self.segments, self.joint_info,
                                  self.tip_table, targets, e):
            return np.full((len(self.tip_links), 2), np.inf)
        e = e.reshape(-1, 2, 3)
        return np.linalg.norm(e, axis=2)

    def weighted_errors(self, q: np.ndarray, targets: np.ndarray, weights: np.ndarray) -> np.ndarray:
        """(t, 2): per tip, position and rotation error norms over the axes with non-zero weight."""
        e = np.empty(6 * len(self.tip_links))
        if not kernels.task_error(np.ascontiguousarray(q, dtype=float), self.segments, self.joint_info,
                                  self.tip_table, targets, e):
            return np.full((len(self.tip_links), 2), np.inf)
        e = np.where(weights.reshape(-1) > 0.0, e, 0.0).reshape(-1, 2, 3)
        return np.linalg.norm(e, axis=2)

    def jacobian(self, q: np.ndarray) -> np.ndarray:
        """Stacked geometric Jacobians (6t, n) of every tip w.r.t. the problem's variables."""
        blocks = []
        for chain in self.chains:
            columns = [self.variable_names.index(name) for name in chain.joint_names]
            J = np.zeros((6, self.dof))
            J[:, columns] = chain.jacobian(q[columns])
            blocks.append(J)
        return np.vstack(blocks)


@dataclass
class SearchOutcome:
    """What a search found. ``solution`` is None unless ``error_code`` is SUCCESS."""

    error_code: ErrorCode
    message: str
    solution: np.ndarray | None = None
    approximate: bool = False
    solutions: list[np.ndarray] = field(default_factory=list)
    reached: int = 0
    rejected: int = 0
    searches: int = 0
    elapsed: float = 0.0


def task_weights(params: SolverParameters, tips: int) -> np.ndarray:
    """(t, 6) weights on the task error rows: position along base x, y, z; rotation about target x, y, z."""
    rotation_scale = 0.0 if params.position_only_ik else params.rotation_scale
    row = np.concatenate([np.asarray(params.position_axis_weights) * params.position_scale,
                          np.asarray(params.orientation_axis_weights) * rotation_scale])
    return np.tile(row, (tips, 1))


def kernel_settings(params: SolverParameters) -> np.ndarray:
    """The kernels' settings vector. The Jacobian transpose converges linearly, so its searches run at
    least JACOBIAN_TRANSPOSE_MIN_ITERATIONS iterations and are never cut short as stalled."""
    transpose = params.method == "jacobian_transpose"
    settings = np.zeros(kernels.SETTINGS_SIZE)
    settings[kernels.S_MAX_ITERATIONS] = max(params.max_iterations, JACOBIAN_TRANSPOSE_MIN_ITERATIONS) \
        if transpose else params.max_iterations
    settings[kernels.S_POSITION_TOLERANCE] = params.position_threshold
    settings[kernels.S_ORIENTATION_TOLERANCE] = params.orientation_threshold
    settings[kernels.S_DAMPING] = params.damping
    settings[kernels.S_MAX_STEP] = params.max_step
    settings[kernels.S_NULLSPACE_GAIN] = params.nullspace_gain
    settings[kernels.S_METHOD] = METHODS.index(params.method)
    settings[kernels.S_STALL_ITERATIONS] = 0 if transpose else params.stall_iterations
    settings[kernels.S_STALL_RATIO] = params.stall_ratio
    return settings


def per_joint(values: Sequence[float], default: np.ndarray, name: str, problem: IkProblem) -> np.ndarray:
    if len(values) == 0:
        return default
    if len(values) != problem.dof:
        raise ValueError(f"{name} needs {problem.dof} values for joints {list(problem.variable_names)}; "
                         f"got {len(values)}")
    return np.asarray(values, dtype=float)


@dataclass(frozen=True, eq=False)
class SolverSetup:
    """A problem with its parameters and everything derived from them once, ready for the kernels."""

    problem: IkProblem
    params: SolverParameters
    weights: np.ndarray
    settings: np.ndarray
    joint_weights: np.ndarray
    preferred: np.ndarray
    #: (RESTART_POOL_SIZE, n) unit-cube samples; row i is the i-th random restart of every search.
    restarts: np.ndarray

    @classmethod
    def build(cls, problem: IkProblem, params: SolverParameters) -> SolverSetup:
        return cls(problem, params, task_weights(params, len(problem.tip_links)), kernel_settings(params),
                   per_joint(params.joint_weights, np.ones(problem.dof), "joint_weights", problem),
                   per_joint(params.preferred_posture, problem.middle, "preferred_posture", problem),
                   np.random.default_rng(params.random_seed).random((RESTART_POOL_SIZE, problem.dof)))


def sampling_box(problem: IkProblem, lower: np.ndarray, upper: np.ndarray, seed: np.ndarray):
    """(low, high) of random restarts: continuous joints within half a turn of the seed, others in their limits."""
    if not problem.has_continuous_joints:
        return lower, upper
    return np.where(np.isfinite(lower), lower, seed - math.pi), np.where(np.isfinite(upper), upper, seed + math.pi)


def solved_message(elapsed: float, compared: int, searches: int) -> str:
    return f"solved in {elapsed * 1e3:.2f} ms ({compared} distinct solution(s) compared, {searches} local search(es))"


def quick_search(solver: SolverSetup, targets: np.ndarray, seed: np.ndarray) -> tuple[np.ndarray | None, int]:
    """The first round of a plain search (no callbacks, bounds = the joint limits) in one kernel call: the
    seed, then STARTS_PER_CALL - 1 pool restarts. Returns (verified solution or None, starts used);
    ``IkSearch(..., resume_after=used)`` carries on from there.

    Notes:
        Most queries end here. Keeping this path short matters most when caches are cold (e.g. a
        process that also runs other solvers), where every Python statement costs several times more.
    """
    problem = solver.problem
    sample_lower, sample_upper = sampling_box(problem, problem.lower, problem.upper, seed)
    q = np.empty(problem.dof)
    used, found, _, _ = kernels.multi_start_search(
        seed, True, solver.restarts, 0, STARTS_PER_CALL - 1, sample_lower, sample_upper, problem.segments,
        problem.joint_info, problem.tip_table, targets, solver.weights, problem.lower, problem.upper,
        solver.joint_weights, solver.preferred, problem.is_revolute, solver.settings, q, math.inf)
    return (q if found else None), used


class IkSearch:
    """One IK query: targets, seed and settings; ``run`` searches until done or out of time."""

    def __init__(self, solver: SolverSetup, targets: np.ndarray, seed: np.ndarray, *, timeout: float,
                 local_only: bool = False, consistency_limits: np.ndarray | None = None,
                 locked: np.ndarray | None = None, is_valid: ValidityCallback | None = None,
                 cost_function: Callable[[np.ndarray], float] | None = None, return_approximate: bool = False,
                 collect_all: bool = False, resume_after: int = 0, already_spent: float = 0.0):
        problem = solver.problem
        self.problem = problem
        self.solver = solver
        self.params = solver.params
        self.targets = np.ascontiguousarray(targets, dtype=float)
        self.seed = np.asarray(seed, dtype=float)
        self.timeout = timeout
        self.local_only = local_only
        self.is_valid = is_valid
        self.cost_function = cost_function
        self.return_approximate = return_approximate
        self.collect_all = collect_all
        #: Starts a ``quick_search`` already tried (the seed and the first pool restarts; 0 for none), and the
        #: time [s] it took out of ``timeout``.
        self.resume_after = resume_after
        self.already_spent = already_spent
        lower, upper = problem.lower, problem.upper
        if consistency_limits is not None:
            lower = np.maximum(lower, self.seed - consistency_limits)
            upper = np.minimum(upper, self.seed + consistency_limits)
        if locked is not None and locked.any():
            lower, upper = lower.copy(), upper.copy()
            lower[locked] = upper[locked] = np.clip(self.seed[locked], problem.lower[locked], problem.upper[locked])
        self.lower, self.upper = lower, upper
        self.sample_lower, self.sample_upper = sampling_box(problem, lower, upper, self.seed)

    def run(self) -> SearchOutcome:
        started = time.perf_counter() - self.already_spent
        deadline = started + self.timeout
        outcome = SearchOutcome(ErrorCode.NO_IK_SOLUTION, "")
        wants_more = self.collect_all or self.cost_function is not None or self.params.solve_mode != "speed"
        best_candidate, best_cost = None, math.inf
        last_rejection = None
        problem, solver = self.problem, self.solver
        pool, next_restart, pool_block = solver.restarts, max(self.resume_after - 1, 0), 0
        use_seed = self.resume_after == 0
        count = 0 if self.local_only else STARTS_PER_CALL - use_seed
        outcome.searches = self.resume_after
        q = np.empty(problem.dof)
        while True:
            if next_restart + count > len(pool):
                # The shared pool is used up (a long search): continue with fresh, still reproducible draws.
                pool_block += 1
                pool = np.random.default_rng((self.params.random_seed, pool_block)).random(solver.restarts.shape)
                next_restart = 0
            if best_candidate is not None:
                q[:] = best_candidate  # restarts may be drawn near it
            used, found, cost, _ = kernels.multi_start_search(
                self.seed, use_seed, pool, next_restart, count, self.sample_lower, self.sample_upper,
                problem.segments, problem.joint_info, problem.tip_table, self.targets, solver.weights, self.lower,
                self.upper, solver.joint_weights, solver.preferred, problem.is_revolute, solver.settings, q, best_cost)
            outcome.searches += used
            next_restart += used - use_seed
            use_seed, count = False, STARTS_PER_CALL
            if found:
                outcome.reached += 1
                verdict = self._validity(q) if self.is_valid is not None else None
                if verdict is None or verdict.error_code == ErrorCode.SUCCESS:
                    if not any(np.max(np.abs(q - s)) < DISTINCT_SOLUTION_TOLERANCE for s in outcome.solutions):
                        outcome.solutions.append(q.copy())
                    if not wants_more or len(outcome.solutions) >= self.params.solutions_to_compare:
                        break
                else:
                    outcome.rejected += 1
                    last_rejection = verdict
            elif cost < best_cost:
                best_cost, best_candidate = cost, q.copy()
            if self.local_only or time.perf_counter() >= deadline:
                break
        if best_candidate is not None:
            kernels.wrap_near(best_candidate, self.seed, problem.is_revolute, self.lower, self.upper)
        outcome.elapsed = time.perf_counter() - started
        if outcome.solutions:
            outcome.solution = outcome.solutions[0] if len(outcome.solutions) == 1 else \
                min(outcome.solutions, key=self._preference_cost)
            outcome.error_code = ErrorCode.SUCCESS
            outcome.message = solved_message(outcome.elapsed, len(outcome.solutions), outcome.searches)
            return outcome
        if self.return_approximate and best_candidate is not None and self._approximate_ok(best_candidate):
            outcome.solution = best_candidate
            outcome.approximate = True
            outcome.solutions = [best_candidate]
            outcome.error_code = ErrorCode.SUCCESS
            errors = self.problem.task_errors(best_candidate, self.targets).max(axis=0)
            outcome.message = (f"approximate solution: position error {errors[0]:.3g} m, rotation error "
                               f"{errors[1]:.3g} rad")
            return outcome
        outcome.error_code, outcome.message = self._failure(outcome, best_candidate, last_rejection)
        return outcome

    def _approximate_ok(self, q: np.ndarray) -> bool:
        errors = self.problem.weighted_errors(q, self.targets, self.solver.weights)
        return (bool(np.all(errors[:, 0] <= self.params.approximate_solution_position_threshold)
                     and np.all(errors[:, 1] <= self.params.approximate_solution_orientation_threshold))
                and self._validity(q).error_code == ErrorCode.SUCCESS)

    def _validity(self, q: np.ndarray) -> Verdict:
        if self.is_valid is None:
            return Verdict(ErrorCode.SUCCESS)
        verdict = self.is_valid(q)
        if isinstance(verdict, Verdict):
            return verdict
        if isinstance(verdict, (bool, np.bool_)):
            return Verdict(ErrorCode.SUCCESS if verdict else ErrorCode.NO_IK_SOLUTION)
        return Verdict(ErrorCode(int(verdict)))

    def _preference_cost(self, q: np.ndarray) -> float:
        if self.cost_function is not None:
            return float(self.cost_function(q))
        mode = self.params.solve_mode
        if mode == "distance":
            return float(np.sum(self.solver.joint_weights * (q - self.seed) ** 2))
        if mode == "posture":
            return float(np.sum(self.solver.joint_weights * (q - self.solver.preferred) ** 2))
        if mode == "manipulability":
            J = self.problem.jacobian(q)
            return -math.sqrt(max(np.linalg.det(J @ J.T), 0.0)) if J.shape[0] <= J.shape[1] else \
                -math.sqrt(max(np.linalg.det(J.T @ J), 0.0))
        return 0.0

    def _failure(self, outcome: SearchOutcome, best_candidate, last_rejection) -> tuple[ErrorCode, str]:
        budget = "one local search from the seed" if self.local_only else f"{self.timeout * 1e3:.1f} ms"
        if outcome.rejected:
            code = last_rejection.error_code
            reason = f": {last_rejection.reason}" if last_rejection.reason else ""
            return code, (f"{outcome.reached} solution(s) reached the pose within {budget} but the validity "
                          f"check rejected all of them (last verdict: {code.name}{reason})")
        detail = ""
        if best_candidate is not None:
            errors = self.problem.task_errors(best_candidate, self.targets).max(axis=0)
            detail = f"; closest approach: position error {errors[0]:.3g} m, rotation error {errors[1]:.3g} rad"
        return ErrorCode.NO_IK_SOLUTION, (f"no solution within {budget} ({outcome.searches} local "
                                          f"search(es)){detail}")
