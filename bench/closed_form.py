"""Closed-form IK, every branch: kinematics_py (ClosedFormSolver and KinematicsPlugin) against EAIK, same run.

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

The plugin (``KinematicsPlugin`` on the same chain, every result verified and within the limits): per call,
``searchPositionIK(T, seed)`` in speed mode with a 4x4 target (EAIK's input) and random seeds, alternating with
EAIK's ``calculate_IK`` as above; distance mode: median time and the share of poses whose answer is the
globally nearest in-limit solution (brute force over EAIK's branches, each joint's whole-turn equivalent
nearest the seed); ALL_DISCRETIZED: the share of poses whose ``result.solutions`` is exactly that in-limit
branch set; batch: ``searchPositionIKBatch`` of the --poses poses (the branch nearest each seed) against
``calculate_IK_batched(poses, 2)``. Targets (issue 12): per call <= 2x EAIK, distance median <= 0.1 ms and
>= 99.5 % nearest, >= 99 % exact branch sets, batch at least as fast as EAIK.
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
    CLOSED_FORM_ROBOTS,
    eaik_branches,
    eaik_robot,
    in_limit_branches,
    random_configurations,
    solve_without_limits,
    solver,
)

from kinematics_py import DiscretizationMethod, KinematicsPlugin, KinematicsQueryOptions  # noqa: E402

ALL = KinematicsQueryOptions(discretization_method=DiscretizationMethod.ALL_DISCRETIZED)

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


def plugin_on(name: str, solve_mode: str = "speed") -> KinematicsPlugin:
    path, base, tip, _ = CLOSED_FORM_ROBOTS[name]
    plugin = KinematicsPlugin()
    if not plugin.initialize(Path(path()).read_text(), "arm", base, [tip], parameters={"solve_mode": solve_mode}):
        raise RuntimeError(plugin.last_error)
    return plugin


def plugin_per_call(plugin, robot, T, seeds, rounds: int, block: int) -> tuple[float, float]:
    """Median microseconds per call (searchPositionIK in speed mode, EAIK's calculate_IK), alternating."""
    ours, theirs = [], []
    n = len(T)
    for r in range(rounds):
        start = (r * block) % (n - block)
        for which in ((0, 1) if r % 2 == 0 else (1, 0)):
            t0 = time.perf_counter()
            if which == 0:
                for i in range(start, start + block):
                    plugin.searchPositionIK(T[i], seeds[i])
            else:
                for i in range(start, start + block):
                    robot.calculate_IK(T[i])
            (ours if which == 0 else theirs).append((time.perf_counter() - t0) / block * 1e6)
    return statistics.median(ours), statistics.median(theirs)


def plugin_quality(name, chain, robot, T, seeds) -> tuple[float, float, float, float]:
    """(distance mode median ms, share globally nearest, share ALL_DISCRETIZED exact, share verified success)."""
    distance, plain = plugin_on(name, "distance"), plugin_on(name)
    seconds, nearest, exact, solved = [], 0, 0, 0
    for T_i, seed in zip(T, seeds):
        expected = in_limit_branches(chain, robot, T_i, seed)
        t0 = time.perf_counter()
        result = distance.searchPositionIK(T_i, seed.tolist())
        seconds.append(time.perf_counter() - t0)
        if result.success and len(expected):
            q = np.asarray(result.solution)
            solved += bool(chain.within_limits(q, 1e-9))
            nearest += np.linalg.norm(q - seed) <= np.linalg.norm(expected - seed, axis=1).min() + 1e-9
        every = np.asarray(plain.getPositionIK(T_i, seed.tolist(), ALL).solutions).reshape(-1, 6)
        exact += len(every) == len(expected) and all(
            np.abs(every - branch).max(axis=1).min() < 1e-6 for branch in expected)
    n = len(T)
    return statistics.median(seconds) * 1e3, nearest / n, exact / n, solved / n


def plugin_batched(plugin, robot, T, seeds, rounds: int, threads: int) -> tuple[float, float]:
    """Median milliseconds per batch (searchPositionIKBatch, EAIK's calculate_IK_batched), alternating."""
    poses, seed_list = list(T), seeds.tolist()
    ours, theirs = [], []
    for r in range(rounds):
        for which in ((0, 1) if r % 2 == 0 else (1, 0)):
            t0 = time.perf_counter()
            if which == 0:
                plugin.searchPositionIKBatch(T, seed_list)
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
    print()
    print("KinematicsPlugin (verified, within the limits) against EAIK in the same run:")
    print(f"{'robot':<9} {'speed us':>8} {'EAIK us':>8} {'ratio':>6} {'dist ms':>8} {'nearest':>8} "
          f"{'all exact':>9} {'success':>8} {'batch ms':>8} {'EAIK ms':>8} {'ratio':>6}")
    for name in args.robots:
        closed_form = solver(name)
        robot = eaik_robot(closed_form)
        chain = closed_form.chain
        rng = np.random.default_rng(args.seed + 1)
        T = np.ascontiguousarray(chain.forward_kinematics(random_configurations(chain, rng, args.poses)))
        seeds = random_configurations(chain, rng, args.poses)
        plugin = plugin_on(name)
        plugin.searchPositionIKBatch(T[:10], seeds[:10].tolist())
        us_ours, us_eaik = plugin_per_call(plugin, robot, T, seeds, args.rounds, args.block)
        distance_ms, nearest, exact, solved = plugin_quality(name, chain, robot, T, seeds)
        ms_ours, ms_eaik = plugin_batched(plugin, robot, T, seeds, args.rounds, args.threads)
        print(f"{name:<9} {us_ours:>8.2f} {us_eaik:>8.2f} {us_ours / us_eaik:>6.2f} {distance_ms:>8.3f} "
              f"{nearest:>8.1%} {exact:>9.1%} {solved:>8.1%} {ms_ours:>8.2f} {ms_eaik:>8.2f} {ms_ours / ms_eaik:>6.2f}")
    print("nearest: distance mode returned the globally nearest in-limit solution; all exact: ALL_DISCRETIZED "
          "returned exactly the in-limit branch set; success: verified and within the limits (poses with an "
          "in-limit branch)")


if __name__ == "__main__":
    main()
