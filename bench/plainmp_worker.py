"""plainmp's ``OMPLSolver.solve`` (RRT-Connect on its hand-tuned Panda spheres, C++), served over JSON lines.

plainmp 0.3.6 is a PyPI sdist (C++ and nanobind) that builds against Debian's libompl-dev, libeigen3-dev and the
boost serialization, filesystem and system dev packages; it needs numpy 2 where mplib pins numpy 1.26, so it lives
in a venv of its own (``.venv-bench-plainmp``, from requirements/bench-plainmp.txt). Its Panda model is
scikit-robot's franka_description (``~/.skrobot/franka_description``, downloaded by scikit-robot at first use; offline,
place franka_description.tar.gz from github.com/iory/scikit-robot-models there and unpack it). Requests and replies:

    {"op": "init", "boxes": [{"name": n, "size": [x, y, z], "centre": [x, y, z]}], "resolution": rad}
                                            -> {"ok": true, "joint_names": [...], "plainmp": version,
                                                "spheres": count}
    {"op": "free", "q": [...]}              -> {"ok": true, "free": bool}
    {"op": "plan", "start": [...], "goal": [...], "planning_time": s}
                                            -> {"ok": true, "seconds": s, "positions": [[...], ...] or null}

``seconds`` is measured here around ``solve()`` alone: its RRT-Connect, no smoothing or timing (plainmp's own
figures are of the same call). Joint bounds are its Panda model's. The protocol's frame is bench/worker_protocol.py's.
"""
from __future__ import annotations

import importlib
import importlib.metadata
import os
import sys
import time

from worker_protocol import serve  # bench/ is this script's directory

PROTOCOL = os.fdopen(os.dup(1), "w")
os.dup2(2, 1)


class PlainmpPlanner:
    """plainmp's Panda among boxes, its collision constraint (spheres, self pairs) as it ships them."""

    def __init__(self, plainmp, request):
        import numpy as np
        from plainmp.ompl_solver import OMPLSolver, OMPLSolverConfig
        from plainmp.problem import Problem
        from plainmp.psdf import BoxSDF, Pose, UnionSDF
        from plainmp.robot_spec import PandaSpec

        self.np, self.problem_type = np, Problem
        spec = PandaSpec()
        self.constraint = spec.create_collision_const()
        boxes = [BoxSDF(np.array(box["size"], dtype=float), Pose(np.array(box["centre"], dtype=float), np.eye(3)))
                 for box in request["boxes"]]
        self.constraint.set_sdf(UnionSDF(boxes))
        self.lower, self.upper = spec.angle_bounds()
        self.resolution = np.full(len(self.lower), float(request["resolution"]))
        self.joint_names = list(spec.control_joint_names)
        self.spheres = len(self.constraint.get_all_spheres())
        self.solver_types = OMPLSolver, OMPLSolverConfig

    def free(self, q) -> bool:
        return bool(self.constraint.is_valid(self.np.array(q, dtype=float)))

    def plan(self, request):
        np = self.np
        solver_type, config_type = self.solver_types
        solver = solver_type(config_type(timeout=float(request["planning_time"])))
        problem = self.problem_type(np.array(request["start"], dtype=float), self.lower, self.upper,
                                    np.array(request["goal"], dtype=float), self.constraint, None, self.resolution)
        began = time.perf_counter()
        result = solver.solve(problem)
        seconds = time.perf_counter() - began
        positions = result.traj.numpy().tolist() if result.traj is not None else None
        return {"seconds": seconds, "positions": positions}


def main():
    def start(plainmp, request):
        planner = PlainmpPlanner(plainmp, request)
        return planner, {"joint_names": planner.joint_names, "plainmp": importlib.metadata.version("plainmp"),
                         "spheres": planner.spheres}

    return serve("plainmp", lambda: importlib.import_module("plainmp"), start,
                 {"free": lambda planner, request: {"free": planner.free(request["q"])},
                  "plan": lambda planner, request: planner.plan(request)}, PROTOCOL)


if __name__ == "__main__":
    sys.exit(main())
