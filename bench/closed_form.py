"""Closed-form IK, every branch: kinematics_py's ClosedFormSolver against EAIK's calculate_IK, same run.

    .venv/bin/python bench/closed_form.py                       # UR5, Kinova Gen2, KR 16, PUMA 560
    .venv/bin/python bench/closed_form.py --poses 1000 --rounds 30

Protocol: targets = FK of configurations uniform within the URDF limits (seed --seed); EAIK's robot is
built from the same joint axes, points on them and tip orientation at zero (what ClosedFormSolver reads
from the URDF). Both return every branch; ours also applies the limits, takes each joint's value nearest
the seed and checks every solution by the chain's FK, EAIK returns raw branches (least-squares ones
flagged). Per call: samples of --block consecutive single-pose calls, alternating the two solvers block by
block (the first alternates too); median microseconds per call. Batch: one call on --poses poses, ours
``solve_batch`` (numba prange over the cores) against EAIK's ``calculate_IK_batched(poses, 2)``,
alternating, --rounds samples; median milliseconds per batch and poses per second. Ratios are ours /
EAIK (below 1: ours is faster). Before timing, both solvers' branch counts (limits ignored) are compared.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "test"), str(ROOT / "test" / "ik" / "closed_form")]

from closed_form_cases import (  # noqa: E402  (test helpers: robots, EAIK built from the same geometry)
    eaik_branches,
    eaik_robot,
    random_configurations,
    solve_without_limits,
    solver,
)

ROBOTS = ("ur5", "kinova", "kr16", "puma560")


def per_call(closed_form, robot, T, seeds, rounds: int, block: int) -> tuple[float, float]:
    """Median microseconds per single-pose call (ours, EAIK)."""
    ours, theirs = [], []
    n = len(T)
    for r in range(rounds):
        start = (r * block) % (n - block)
        order = (0, 1) if r % 2 == 0 else (1, 0)
        for which in order:
            t0 = time.perf_counter()
            if which == 0:
                for i in range(start, start + block):
                    closed_form.solve(T[i], seeds[i])
            else:
                for i in range(start, start + block):
                    robot.calculate_IK(T[i])
            (ours if which == 0 else theirs).append((time.perf_counter() - t0) / block * 1e6)
    return statistics.median(ours), statistics.median(theirs)


def batched(closed_form, robot, T, seeds, rounds: int, threads: int) -> tuple[float, float]:
    """Median milliseconds per batch of all poses (ours, EAIK)."""
    poses = list(T)
    ours, theirs = [], []
    for r in range(rounds):
        for which in ((0, 1) if r % 2 == 0 else (1, 0)):
            t0 = time.perf_counter()
            if which == 0:
                closed_form.solve_batch(T, seeds)
            else:
                robot.calculate_IK_batched(poses, threads)
            (ours if which == 0 else theirs).append((time.perf_counter() - t0) * 1e3)
    return statistics.median(ours), statistics.median(theirs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--poses", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--block", type=int, default=100)
    parser.add_argument("--threads", type=int, default=2, help="EAIK's worker threads in the batch")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--robots", nargs="*", default=list(ROBOTS))
    args = parser.parse_args()
    print(f"{os.cpu_count()} CPUs; {args.poses} poses; per call: {args.rounds} x {args.block}; "
          f"batch: {args.rounds} rounds, EAIK {args.threads} threads")
    print(f"{'robot':<9} {'family':<60} {'branches':>8} {'ours us':>8} {'EAIK us':>8} {'ratio':>6} "
          f"{'ours ms':>8} {'EAIK ms':>8} {'ratio':>6} {'ours poses/s':>13}")
    for name in args.robots:
        closed_form = solver(name)
        robot = eaik_robot(closed_form)
        rng = np.random.default_rng(args.seed)
        chain = closed_form.chain
        T = np.ascontiguousarray(chain.forward_kinematics(random_configurations(chain, rng, args.poses)))
        seeds = random_configurations(chain, rng, args.poses)
        counts = [len(solve_without_limits(closed_form, T[i], seeds[i])) for i in range(args.poses)]
        agree = sum(c == len(eaik_branches(chain, robot, T[i])) for i, c in enumerate(counts))
        closed_form.solve_batch(T, seeds)
        robot.calculate_IK_batched(list(T[:10]), args.threads)
        us_ours, us_eaik = per_call(closed_form, robot, T, seeds, args.rounds, args.block)
        ms_ours, ms_eaik = batched(closed_form, robot, T, seeds, args.rounds, args.threads)
        print(f"{name:<9} {closed_form.name:<60} {agree / args.poses:>7.1%} {us_ours:>8.2f} {us_eaik:>8.2f} "
              f"{us_ours / us_eaik:>6.2f} {ms_ours:>8.2f} {ms_eaik:>8.2f} {ms_ours / ms_eaik:>6.2f} "
              f"{args.poses / ms_ours * 1e3:>13,.0f}")
    print("branches: share of poses where both solvers find the same number of branches (limits ignored)")


if __name__ == "__main__":
    main()
