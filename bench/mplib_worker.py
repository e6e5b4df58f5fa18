"""mplib's ``Planner.plan_qpos`` (OMPL RRTConnect + FCL + simplification + TOPP), served over JSON lines.

mplib 0.2.1 pins numpy 1.26, so it lives in a venv of its own (``.venv-bench-peers``, from
requirements/bench-peers.txt); bench/motion_planning.py runs this file with that venv's python and talks to it
one JSON object per line. Requests and replies:

    {"op": "init", "urdf": path, "srdf": path, "move_group": link, "fixed": {joint: value},
     "boxes": [{"name": n, "size": [x, y, z], "centre": [x, y, z]}], "velocity_limits": [...],
     "acceleration_limits": [...], "seed": n}
                                            -> {"ok": true, "joint_names": [...], "mplib": version}
    {"op": "free", "q": [...]}              -> {"ok": true, "free": bool, "collisions": [[link, link], ...]}
    {"op": "plan", "start": [...], "goal": [...], "planning_time": s, "time_step": s}
                                            -> {"ok": true, "status": text, "seconds": s,
                                                "positions": [[...], ...] or null, "duration": s}

``q``, ``start`` and ``goal`` are the move group's joints (``joint_names`` order); the other joints keep their
``fixed`` values. ``seconds`` is measured here around ``plan_qpos`` alone (the pipe is not counted). The
protocol's frame (the hello line, errors as replies) is bench/worker_protocol.py's.
"""
from __future__ import annotations

import importlib
import importlib.metadata
import os
import sys
import time

from worker_protocol import serve  # bench/ is this script's directory

#: The replies' stream: a copy of the original stdout; fd 1 itself goes to stderr, because mplib's C++ code prints
#: on it ("invalid start state!!") and would corrupt the protocol.
PROTOCOL = os.fdopen(os.dup(1), "w")
os.dup2(2, 1)


class MplibPlanner:
    """One mplib Planner on a robot and a scene of boxes."""

    def __init__(self, mplib, request):
        import numpy as np
        from mplib.collision_detection import fcl

        self.np = np
        boxes = [
            fcl.FCLObject(box["name"], mplib.Pose(p=box["centre"]),
                          [fcl.CollisionObject(fcl.Box(box["size"]))], [mplib.Pose()])
            for box in request["boxes"]
        ]
        if "seed" in request:
            mplib.set_global_seed(int(request["seed"]))
        self.planner = mplib.Planner(
            urdf=request["urdf"], srdf=request["srdf"], move_group=request["move_group"], objects=boxes,
            joint_vel_limits=np.array(request["velocity_limits"], dtype=float),
            joint_acc_limits=np.array(request["acceleration_limits"], dtype=float),
        )
        self.all_names = list(self.planner.user_joint_names)
        self.group = list(self.planner.move_group_joint_indices)
        self.joint_names = [self.all_names[i] for i in self.group]
        self.full = np.zeros(len(self.all_names))
        for name, value in request.get("fixed", {}).items():
            self.full[self.all_names.index(name)] = float(value)

    def full_state(self, q):
        full = self.full.copy()
        full[self.group] = q
        return full

    def collisions(self, q):
        state = self.full_state(q)
        found = self.planner.check_for_self_collision(state) + self.planner.check_for_env_collision(state)
        return [[c.link_name1, c.link_name2] for c in found]

    def plan(self, request):
        start, goal = self.full_state(request["start"]), self.full_state(request["goal"])
        began = time.perf_counter()
        result = self.planner.plan_qpos([goal], start, planning_time=float(request["planning_time"]),
                                        time_step=float(request["time_step"]))
        seconds = time.perf_counter() - began
        solved = result["status"] == "Success"
        return {"status": result["status"], "seconds": seconds,
                "positions": result["position"].tolist() if solved else None,
                "duration": float(result["duration"]) if solved else None}


def main():
    def start(mplib, request):
        planner = MplibPlanner(mplib, request)
        return planner, {"joint_names": planner.joint_names, "mplib": importlib.metadata.version("mplib")}

    def free(planner, request):
        collisions = planner.collisions(request["q"])
        return {"free": not collisions, "collisions": collisions}

    return serve("mplib", lambda: importlib.import_module("mplib"), start,
                 {"free": free, "plan": lambda planner, request: planner.plan(request)}, PROTOCOL)


if __name__ == "__main__":
    sys.exit(main())
