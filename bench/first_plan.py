"""The first plans of a fresh planning process (``planning.processes``, as kinematics_node plans), ROS-free.

    .venv/bin/python bench/first_plan.py [--trials 5]

Run it after ``scripts/setup_venv.sh`` (which fills numba's cache). Per trial it starts one planning process,
prepares the bundled Panda in it and waits until the process has built it (and loaded the plan kernels:
``planning.kernel_warm_up``), then times three plans in a row from LEFT to RIGHT around a wall (a scene the first
job sends), each the whole ``PlanningProcesses.run`` round trip. Target (as bench/first_call.py's for the
services): the first plan within 100 ms; the later ones as any plan.
"""
from __future__ import annotations

import argparse
import os
import platform
import time

import numpy as np

from kinematics_py.collision.geometry import Box
from kinematics_py.collision.scene import PlanningScene
from kinematics_py.geometry.transforms import make_transform
from kinematics_py.planning.goals import JointGoal
from kinematics_py.planning.processes import PlanJob, PlanningProcesses
from kinematics_py.robot_setup import SetupInputs, build_robot_setup
from kinematics_py.robots import bundled_robot_path

GROUP = "panda_arm"
LEFT = [1.2, 0.6, 0.0, -1.6, 0.0, 2.2, 0.785]
RIGHT = [-1.2, 0.6, 0.0, -1.6, 0.0, 2.2, 0.785]
#: (size, centre) [m] of the wall between LEFT and RIGHT.
WALL = ((0.04, 1.2, 0.6), (0.5, 0.0, 0.32))
PLANS = 3
JOB_TIME_S = 10.0
TARGET_MS = 100.0


def first_plans(setup, checker) -> list[float]:
    """Milliseconds of the first PLANS plans of a fresh planning process, once it has built ``setup``."""
    processes = PlanningProcesses(1)
    try:
        processes.prepare(setup)
        processes.start()
        while not processes.has_built(setup):
            time.sleep(0.01)
        times = []
        for _ in range(PLANS):
            job = PlanJob(GROUP, LEFT, [JointGoal(RIGHT)], setup.model.resolve_joint_values({}),
                          time.monotonic() + JOB_TIME_S)
            began = time.perf_counter()
            result = processes.run(job, setup, checker)
            times.append((time.perf_counter() - began) * 1e3)
            if not result.success:
                raise SystemExit(f"plan failed: {result.message}")
        return times
    finally:
        processes.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=5)
    args = parser.parse_args()
    inputs = SetupInputs(urdf=bundled_robot_path("panda").read_text(encoding="utf-8"),
                         srdf=bundled_robot_path("panda", "srdf").read_text(encoding="utf-8"))
    setup = build_robot_setup(inputs)
    checker = setup.collision.checker.for_scene(PlanningScene(setup.model))
    checker.scene.add_object("wall", [Box(WALL[0])], pose=make_transform(None, WALL[1]))
    rows = np.array([first_plans(setup, checker) for _ in range(args.trials)])
    print(f"# First plans of a fresh planning process (Panda around a wall), {args.trials} processes; "
          f"{platform.python_version()}, {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f} at end\n")
    print("| plan | median ms | max ms |\n|---|---:|---:|")
    for k in range(PLANS):
        print(f"| {k + 1} | {np.median(rows[:, k]):.1f} | {rows[:, k].max():.1f} |")
    worst = rows[:, 0].max()
    print(f"\nfirst plan within {TARGET_MS:.0f} ms: {'yes' if worst <= TARGET_MS else 'no'} (worst {worst:.1f} ms)")


if __name__ == "__main__":
    main()
