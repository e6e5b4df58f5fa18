"""``ClosedFormSolver``: every inverse-kinematics branch of a chain with a closed form, in one compiled call."""
from __future__ import annotations

import threading
from typing import NamedTuple

import numba
import numpy as np

from ...compiled import PARALLEL_KERNEL_LOCK
from ...errors import ChainError
from ...model.chain import Chain
from . import kernels
from .classification import Classification, ClosedFormFamily, classification_report
from .families import AXES_12_INTERSECT, MAX_BRANCHES
from .near_ideal import DEFAULT_TOLERANCE, FamilyTolerance
from .reach import reach_sphere, wrist_point_distance


class _OneSignatureKernel:
    """A kernel compiled (or loaded from numba's cache) for one signature only: a call with other argument types
    raises TypeError at once instead of compiling a variant on a request's path."""

    def __init__(self, kernel, signature: tuple):
        self.kernel = kernel
        self._signature = signature
        self._lock = threading.Lock()
        self._ready = False

    def compile_once(self) -> None:
        if self._ready:
            return
        with self._lock:
            if not self._ready:
                self.kernel.compile(self._signature)
                self.kernel.disable_compile()
                self._ready = True


_NEAREST_SOLUTION = _OneSignatureKernel(kernels.nearest_solution, (
    numba.float64[:, ::1], numba.float64[::1], numba.float64[:, ::1], numba.int64[:, ::1]))


class Posture(NamedTuple):
    """Which of the two roots of the shoulder, elbow and wrist subproblems a configuration takes (0 or 1 each).

    Configurations with equal postures are in the same branch: the two values of each are mirror images
    across a singularity (shoulder: the wrist centre over the first axis; elbow: the arm stretched; wrist:
    the wrist straight). On an arm solved reversed (its spherical wrist at the base), "wrist" names the
    spherical joints at the base and "shoulder" the root of its last joint. ``code`` is the branch code.
    """

    shoulder: int
    elbow: int
    wrist: int
    code: int

    def __str__(self) -> str:
        return f"shoulder {self.shoulder}, elbow {self.elbow}, wrist {self.wrist}"


class ClosedFormSolver:
    """All branches of a 6R chain of a closed-form family (see ``classify_chain``).

    Every solution returned is inside the joint limits, reaches the target within
    ``kernels.POSITION_TOLERANCE`` [m] and ``kernels.ROTATION_TOLERANCE`` [rad] by the chain's own forward
    kinematics, is distinct from the others modulo 2 pi, and takes for each joint the value nearest the
    seed among its equivalents (theta + 2 pi k) inside the limits. Solutions come nearest the seed first
    (Euclidean distance over the joint values). Branch codes name the posture: the same code is the same
    choice of root in every subproblem (shoulder, elbow, wrist), so it stays constant within a posture.
    """

    def __init__(self, chain: Chain, classification: Classification):
        self.chain = chain
        self.classification = classification
        segments, joint_info = chain.compiled
        self._arguments = (classification.packed, classification.config, segments, joint_info,
                           np.ascontiguousarray(chain.lower, dtype=np.float64),
                           np.ascontiguousarray(chain.upper, dtype=np.float64))
        self._default_seed = np.clip(np.zeros(6), chain.lower, chain.upper)
        self._unlimited = (*self._arguments[:4], np.full(6, -np.inf), np.full(6, np.inf))
        model = kernels.pack_model(classification.packed, classification.config, segments, *self._arguments[4:])
        self._packed = (model, np.array(joint_info, dtype=np.int64, order="C"))
        _NEAREST_SOLUTION.compile_once()
        #: The sphere the wrist point stays in, whatever the joint values (``reach``).
        self.reach = reach_sphere(classification)

    @classmethod
    def for_chain(cls, chain: Chain, tolerance: FamilyTolerance = DEFAULT_TOLERANCE) -> ClosedFormSolver:
        """The solver of ``chain`` (an exact family, or the nearest ideal arm of one within ``tolerance``); raises
        ChainError saying why when it has no closed form."""
        classification, message = classification_report(chain, tolerance=tolerance)
        if classification is None:
            raise ChainError(message)
        return cls(chain, classification)

    @property
    def name(self) -> str:
        """The family, for logs (e.g. 'spherical wrist (axes 4-6 meet), axes 2 and 3 are parallel')."""
        return self.classification.name

    def solve(self, T_base_tip, seed=None, wanted: int = MAX_BRANCHES) -> tuple[np.ndarray, np.ndarray]:
        """(solutions (k, 6) [rad], branch codes (k,)) reaching ``T_base_tip`` (4, 4): every branch, or the
        ``wanted`` nearest the seed; k = 0 if unreachable."""
        T = np.ascontiguousarray(T_base_tip, dtype=np.float64)
        seed = self._default_seed if seed is None else np.ascontiguousarray(seed, dtype=np.float64)
        q = np.empty((MAX_BRANCHES, 6))
        codes = np.empty(MAX_BRANCHES, dtype=np.int64)
        count, _ = kernels.solve_pose(T, seed, *self._arguments, wanted, q, codes)
        return q[:count], codes[:count]

    def solve_unverified(self, T_base_tip: np.ndarray, seed: np.ndarray
                         ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``solve`` (all branches; T and seed float64, contiguous), and the candidate branches that missed the
        pose by more than the tolerances (near singularities: worth a numerical polish) with their codes."""
        q = np.empty((MAX_BRANCHES, 6))
        codes = np.empty(MAX_BRANCHES, dtype=np.int64)
        count, failed = kernels.solve_pose(T_base_tip, seed, *self._arguments, MAX_BRANCHES, q, codes)
        return q[:count], codes[:count], q[MAX_BRANCHES - failed:], codes[MAX_BRANCHES - failed:]

    def nearest(self, T_base_tip, seed) -> tuple[float, ...] | None:
        """The solution nearest ``seed`` (6,) [rad] reaching ``T_base_tip`` (4, 4), as a tuple, or None: also when a
        nearer candidate missed the pose (see ``solve_unverified``), and for input the one compiled call does not
        take (anything but a float64 (4, 4) pose and a float64 (6,) seed, both contiguous and finite)."""
        try:
            solved, q = _NEAREST_SOLUTION.kernel(T_base_tip, seed, *self._packed)
        except TypeError:  # another type than the compiled one: no new compilation on a request's path
            return None
        return q if solved else None

    def beyond_reach(self, T_base_tip: np.ndarray) -> float:
        """How far [m] the wrist point that ``T_base_tip`` (4, 4) needs lies outside ``reach`` (<= 0: inside): a
        positive distance proves the pose out of reach, joint limits aside."""
        return wrist_point_distance(self.classification, self.reach, T_base_tip) - self.reach.radius

    def posture_code(self, q) -> int | None:
        """The branch code of configuration ``q`` (6,) [rad] (limits ignored), None if no branch reproduces it."""
        q = np.ascontiguousarray(q, dtype=np.float64)
        solutions = np.empty((MAX_BRANCHES, 6))
        codes = np.empty(MAX_BRANCHES, dtype=np.int64)
        count, _ = kernels.solve_pose(self.chain.forward_kinematics(q), q, *self._unlimited, 1, solutions, codes)
        return int(codes[0]) if count else None  # the branch nearest q: q itself (each joint nearest q)

    def posture(self, code: int) -> Posture:
        """The Posture a branch code names."""
        wrist, arm = code & 1, code >> 1
        if self.classification.family == ClosedFormFamily.THREE_PARALLEL:  # code = 4 theta1 + 2 theta5 + theta3
            return Posture(code >> 2, code & 1, (code >> 1) & 1, code)
        outer, inner = arm >> 1, arm & 1
        if self.classification.config[1] == AXES_12_INTERSECT:  # outer: theta3 (elbow), inner: theta1, theta2
            return Posture(inner, outer, wrist, code)
        return Posture(outer, inner, wrist, code)

    def solve_batch(self, T_base_tip, seeds=None, wanted: int = MAX_BRANCHES
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """For poses (N, 4, 4) and seeds (N, 6) or (6,): (solutions (N, MAX_BRANCHES, 6), branch codes
        (N, MAX_BRANCHES), counts (N,)); row i holds counts[i] solutions (all, or the ``wanted`` nearest its
        seed), nearest its seed first."""
        Ts = np.ascontiguousarray(T_base_tip, dtype=np.float64).reshape(-1, 4, 4)
        seeds = self._default_seed if seeds is None else np.asarray(seeds, dtype=np.float64)
        seeds = np.ascontiguousarray(np.broadcast_to(seeds, (Ts.shape[0], 6)))
        q = np.empty((Ts.shape[0], MAX_BRANCHES, 6))
        codes = np.empty((Ts.shape[0], MAX_BRANCHES), dtype=np.int64)
        counts = np.empty(Ts.shape[0], dtype=np.int64)
        with PARALLEL_KERNEL_LOCK:
            kernels.solve_poses(Ts, seeds, *self._arguments, wanted, q, codes, counts)
        return q, codes, counts
