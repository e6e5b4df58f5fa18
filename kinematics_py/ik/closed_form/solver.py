"""``ClosedFormSolver``: every inverse-kinematics branch of a chain with a closed form, in one compiled call."""
from __future__ import annotations

import numpy as np

from ...compiled import PARALLEL_KERNEL_LOCK
from ...errors import ChainError
from ...model.chain import Chain
from . import kernels
from .classification import Classification, classification_report
from .families import MAX_BRANCHES


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

    @classmethod
    def for_chain(cls, chain: Chain) -> ClosedFormSolver:
        """The solver of ``chain``; raises ChainError saying why when it has no closed form."""
        classification, message = classification_report(chain)
        if classification is None:
            raise ChainError(message)
        return cls(chain, classification)

    @property
    def name(self) -> str:
        """The family, for logs (e.g. 'spherical wrist (axes 4-6 meet), axes 2 and 3 are parallel')."""
        return self.classification.name

    def solve(self, T_base_tip, seed=None) -> tuple[np.ndarray, np.ndarray]:
        """(solutions (k, 6) [rad], branch codes (k,)) reaching ``T_base_tip`` (4, 4); k = 0 if unreachable."""
        T = np.ascontiguousarray(T_base_tip, dtype=np.float64)
        seed = self._default_seed if seed is None else np.ascontiguousarray(seed, dtype=np.float64)
        q = np.empty((MAX_BRANCHES, 6))
        codes = np.empty(MAX_BRANCHES, dtype=np.int64)
        count = kernels.solve_pose(T, seed, *self._arguments, q, codes)
        return q[:count], codes[:count]

    def solve_batch(self, T_base_tip, seeds=None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """For poses (N, 4, 4) and seeds (N, 6) or (6,): (solutions (N, MAX_BRANCHES, 6), branch codes
        (N, MAX_BRANCHES), counts (N,)); row i holds counts[i] solutions, nearest its seed first."""
        Ts = np.ascontiguousarray(T_base_tip, dtype=np.float64).reshape(-1, 4, 4)
        seeds = self._default_seed if seeds is None else np.asarray(seeds, dtype=np.float64)
        seeds = np.ascontiguousarray(np.broadcast_to(seeds, (Ts.shape[0], 6)))
        q = np.empty((Ts.shape[0], MAX_BRANCHES, 6))
        codes = np.empty((Ts.shape[0], MAX_BRANCHES), dtype=np.int64)
        counts = np.empty(Ts.shape[0], dtype=np.int64)
        with PARALLEL_KERNEL_LOCK:
            kernels.solve_poses(Ts, seeds, *self._arguments, q, codes, counts)
        return q, codes, counts
