"""KDL's ChainIkSolverPos_NR_JL with random restarts, served over JSON lines on stdin/stdout.

Debian's `python3-pykdl` installs PyKDL for the system Python only, so the benchmark (in the
project's venv) runs this file with /usr/bin/python3 and talks to it one JSON object per line.
Standard library and PyKDL only. Requests and replies:

    {"op": "init", "urdf": text, "base": link, "tip": link, "budget_s": s, "tolerance": eps,
     "seed": n, "max_iterations": n}       -> {"ok": true, "dof": n, "joint_names": [...]}
    {"op": "fk", "q": [...]}                -> {"ok": true, "T": 4x4 rows}
    {"op": "solve", "T": 4x4 rows, "q0": [...]}
                                            -> {"ok": true, "q": [...] or null, "seconds": s}

The protocol's frame (the hello line, errors as replies) is bench/worker_protocol.py's.
"""
from __future__ import annotations

import importlib
import math
import random
import sys
import time
from pathlib import Path

from worker_protocol import serve  # bench/ is this script's directory

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "test"))
from kdl_reference import build_chain  # noqa: E402  (test/kdl_reference.py: standard library only at import)


class Solver:
    """NR_JL from the given start, then from random starts within limits until the budget ends."""

    def __init__(self, kdl, request):
        self.kdl = kdl
        self.chain, self.names, lower, upper = build_chain(kdl, request["urdf"], request["base"], request["tip"])
        self.dof = len(self.names)
        huge = 1e10  # NR_JL clamps to its bounds; a continuous joint gets bounds it never reaches
        self.sample_ranges = [(-math.pi, math.pi) if math.isinf(lo) else (lo, hi) for lo, hi in zip(lower, upper)]
        self.q_min, self.q_max = kdl.JntArray(self.dof), kdl.JntArray(self.dof)
        for i, (lo, hi) in enumerate(zip(lower, upper)):
            self.q_min[i], self.q_max[i] = max(lo, -huge), min(hi, huge)
        self.fk = kdl.ChainFkSolverPos_recursive(self.chain)
        self.ik_velocity = kdl.ChainIkSolverVel_pinv(self.chain)
        self.ik = kdl.ChainIkSolverPos_NR_JL(
            self.chain, self.q_min, self.q_max, self.fk, self.ik_velocity,
            int(request.get("max_iterations", 100)), float(request["tolerance"]),
        )
        self.budget_s = float(request["budget_s"])
        self.rng = random.Random(int(request.get("seed", 0)))

    def joint_array(self, values):
        array = self.kdl.JntArray(self.dof)
        for i, v in enumerate(values):
            array[i] = float(v)
        return array

    def forward(self, q):
        frame = self.kdl.Frame()
        self.fk.JntToCart(self.joint_array(q), frame)
        return [[frame.M[r, c] for c in range(3)] + [frame.p[r]] for r in range(3)] + [[0.0, 0.0, 0.0, 1.0]]

    def solve(self, T, q0):
        kdl = self.kdl
        target = kdl.Frame(kdl.Rotation(*(T[r][c] for r in range(3) for c in range(3))),
                           kdl.Vector(*(T[r][3] for r in range(3))))
        q_init, q_out = self.joint_array(q0), kdl.JntArray(self.dof)
        start = time.perf_counter()
        deadline = start + self.budget_s
        while True:
            if self.ik.CartToJnt(q_init, target, q_out) >= 0:
                seconds = time.perf_counter() - start
                return [q_out[i] for i in range(self.dof)], seconds
            if time.perf_counter() >= deadline:
                return None, time.perf_counter() - start
            for i, (lo, hi) in enumerate(self.sample_ranges):
                q_init[i] = self.rng.uniform(lo, hi)


def main():
    def start(kdl, request):
        solver = Solver(kdl, request)
        return solver, {"dof": solver.dof, "joint_names": solver.names}

    def solve(solver, request):
        q, seconds = solver.solve(request["T"], request["q0"])
        return {"q": q, "seconds": seconds}

    return serve("PyKDL", lambda: importlib.import_module("PyKDL"), start,
                 {"fk": lambda solver, request: {"T": solver.forward(request["q"])}, "solve": solve})


if __name__ == "__main__":
    sys.exit(main())
