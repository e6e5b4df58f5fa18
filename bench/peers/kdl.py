"""KDL's ChainIkSolverPos_NR_JL with restarts, in a system-Python worker (`bench/kdl_worker.py`)."""
from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np

from .common import SolverAdapter, SolverUnavailable, check_fk_agrees
from .worker import JsonLinesWorker

WORKER = Path(__file__).resolve().parent.parent / "kdl_worker.py"
SYSTEM_PYTHON = "/usr/bin/python3"
INSTALL_HINT = "install Debian's python3-pykdl (apt-get install -y python3-pykdl)"


class KDL(SolverAdapter):
    """NR_JL (100 iterations an attempt) from the start, then random restarts until the budget,
    as MoveIt's KDL plugin re-seeds until its timeout.

    Notes:
        Debian's `python3-pykdl` serves the system Python only, so the solver runs in a persistent
        subprocess speaking JSON lines; the time reported is measured inside the worker around
        the solve alone, so the pipe is not counted.
    """

    key = "kdl"
    label = "KDL NR_JL + restarts"
    MAX_ITERATIONS = 100

    def __init__(self, robot, settings):
        super().__init__(robot, settings)
        if shutil.which(SYSTEM_PYTHON) is None:
            raise SolverUnavailable(f"{SYSTEM_PYTHON} not found; {INSTALL_HINT}")
        self._worker = JsonLinesWorker([SYSTEM_PYTHON, str(WORKER)], "KDL", SolverUnavailable, INSTALL_HINT)
        try:
            spec = robot.spec
            answer = self._worker.call(
                op="init", urdf=robot.urdf_text, base=spec.base_link, tip=spec.tip_link,
                budget_s=settings.budget_s, tolerance=settings.tolerance, seed=settings.seed,
                max_iterations=self.MAX_ITERATIONS,
            )
            if tuple(answer["joint_names"]) != robot.chain.joint_names:
                raise SolverUnavailable(f"KDL chain joints {answer['joint_names']} differ from the benchmark's")
            check_fk_agrees(self.label, robot, lambda q: np.array(self._worker.call(op="fk", q=list(q))["T"]))
        except BaseException:
            self.close()
            raise

    def prepare(self, T_base_target):
        return T_base_target.tolist()

    def timed_solve(self, target, q_start):
        answer = self._worker.call(op="solve", T=target, q0=[float(v) for v in q_start])
        q = answer["q"]
        return (None if q is None else np.array(q)), float(answer["seconds"])

    def close(self):
        self._worker.close()
