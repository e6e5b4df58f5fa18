"""What every solver adapter shares: the adapter interface, its settings and small pose helpers."""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from .robots import BenchRobot


class SolverUnavailable(RuntimeError):
    """A solver cannot run here (not installed, or rejects this robot); the message says why."""


@dataclass(frozen=True)
class SolveSettings:
    """The protocol's settings, the same for every solver.

    Notes:
        `tolerance` is the norm of the 6-D pose residual each solver is asked to reach; every
        adapter translates it into its solver's own stopping test (so no solver stops early on a
        looser test). `budget_s` is the wall-clock budget of one solve [s], for solvers that
        have one. `seed` feeds the adapters' own random restarts.
    """

    budget_s: float = 0.005
    tolerance: float = 1e-5
    seed: int = 0


class SolverAdapter:
    """One IK solver behind a common interface.

    `prepare` turns a target into the solver's own input (not timed); `solve` is the call the
    benchmark times and returns joint values in chain order, or None when the solver reports
    failure. Constructors raise `SolverUnavailable` with a reason when the solver cannot run.
    """

    #: Short key used on the command line.
    key = ""
    #: Name shown in the results.
    label = ""

    def __init__(self, robot: BenchRobot, settings: SolveSettings):
        self.robot = robot
        self.settings = settings

    def prepare(self, T_base_target: np.ndarray) -> object:
        return T_base_target

    def solve(self, target: object, q_start: np.ndarray) -> np.ndarray | None:
        raise NotImplementedError

    def timed_solve(self, target: object, q_start: np.ndarray) -> tuple[np.ndarray | None, float]:
        """Solve and return (solution or None, wall-clock seconds of the solve call alone)."""
        start = time.perf_counter()
        solution = self.solve(target, q_start)
        return solution, time.perf_counter() - start

    def close(self) -> None:
        """Release processes or threads the adapter holds."""


def position_and_quaternion(T: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Position (x, y, z) [m] and unit quaternion (x, y, z, w) of a 4x4 pose."""
    R = T[:3, :3]
    trace = np.trace(R)
    if trace > 0.0:
        s = 2.0 * np.sqrt(trace + 1.0)
        q = np.array([(R[2, 1] - R[1, 2]) / s, (R[0, 2] - R[2, 0]) / s, (R[1, 0] - R[0, 1]) / s, 0.25 * s])
    else:
        i = int(np.argmax(np.diag(R)))
        j, k = (i + 1) % 3, (i + 2) % 3
        s = 2.0 * np.sqrt(1.0 + R[i, i] - R[j, j] - R[k, k])
        q = np.empty(4)
        q[i] = 0.25 * s
        q[j] = (R[j, i] + R[i, j]) / s
        q[k] = (R[k, i] + R[i, k]) / s
        q[3] = (R[k, j] - R[j, k]) / s
    return T[:3, 3].copy(), q / np.linalg.norm(q)


def check_fk_agrees(adapter_label: str, robot: BenchRobot, fk, samples: int = 5) -> None:
    """Raise `SolverUnavailable` unless the solver's FK (chain order, 4x4) matches the reference.

    Catches a different joint order or chain before any timing, with a message that says so.
    """
    rng = np.random.default_rng(12345)
    for _ in range(samples):
        q = rng.uniform(robot.chain.sample_lower, robot.chain.sample_upper)
        difference = np.abs(np.asarray(fk(q), float) - robot.reference.T_base_tip(q)).max()
        if not difference < 1e-6:
            raise SolverUnavailable(
                f"{adapter_label}'s FK of {robot.spec.name} differs from pinocchio's by {difference:.3g} "
                "(different chain or joint order)"
            )
