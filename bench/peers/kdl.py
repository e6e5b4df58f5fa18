"""KDL's ChainIkSolverPos_NR_JL with restarts, in a system-Python worker (`bench/kdl_worker.py`)."""
from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import numpy as np

from .common import SolverAdapter, SolverUnavailable, check_fk_agrees

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
        self._process = subprocess.Popen(
            [SYSTEM_PYTHON, str(WORKER)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1
        )
        try:
            hello = self._receive()
            if not hello.get("ok"):
                raise SolverUnavailable(f"{hello.get('error')}; {INSTALL_HINT}")
            spec = robot.spec
            answer = self._call(
                op="init", urdf=robot.urdf_text, base=spec.base_link, tip=spec.tip_link,
                budget_s=settings.budget_s, tolerance=settings.tolerance, seed=settings.seed,
                max_iterations=self.MAX_ITERATIONS,
            )
            if tuple(answer["joint_names"]) != robot.chain.joint_names:
                raise SolverUnavailable(f"KDL chain joints {answer['joint_names']} differ from the benchmark's")
            check_fk_agrees(self.label, robot, lambda q: np.array(self._call(op="fk", q=list(q))["T"]))
        except BaseException:
            self.close()
            raise

    def _receive(self) -> dict:
        line = self._process.stdout.readline()
        if not line:
            raise SolverUnavailable(f"KDL worker exited (code {self._process.poll()})")
        return json.loads(line)

    def _call(self, **request) -> dict:
        self._process.stdin.write(json.dumps(request) + "\n")
        answer = self._receive()
        if not answer.get("ok"):
            raise SolverUnavailable(f"KDL worker: {answer.get('error')}")
        return answer

    def prepare(self, T_base_target):
        return T_base_target.tolist()

    def timed_solve(self, target, q_start):
        answer = self._call(op="solve", T=target, q0=[float(v) for v in q_start])
        q = answer["q"]
        return (None if q is None else np.array(q)), float(answer["seconds"])

    def close(self):
        if self._process.poll() is None:
            self._process.stdin.close()
            try:
                self._process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self._process.kill()
