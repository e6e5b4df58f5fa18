"""7-joint arms in closed form with the redundant joint locked (KUKA iiwa, Panda): per-value cost, ALL_DISCRETIZED
(time, set size, exactness), distance mode and a 1-D closed-form speed search, each against the numerical search.

    .venv/bin/python bench/redundant_closed_form.py                      # iiwa and Panda, 200 poses
    .venv/bin/python bench/redundant_closed_form.py --poses 500 --checked 40

Protocol: targets = FK of configurations uniform within the URDF limits (seed --seed), one random seed per target.
The redundant joint is the one chosen at initialize (iiwa_joint_3, panda_joint7), the discretization the default
(0.1 rad). Per value: median microseconds of one compiled call solving every branch at one value, and at all the
grid's values. ALL_DISCRETIZED: ``getPositionIK`` median milliseconds and solutions per pose; exactness: for
--checked poses, two values each drawn from those with solutions, the share of values whose solution set equals a
brute-force numerical enumeration (300 local searches from random starts, the joint locked, tight thresholds).
Distance mode: the plugin (closed form over the grid, refined) against the numerical search it replaces (IkSearch
in distance mode, the same 5 ms timeout), alternating pose by pose: median milliseconds and the share of poses
where each is strictly nearer the seed. Speed mode: the plugin's numerical search against a 1-D search with the
closed form inside (the seed's value of the redundant joint, then values outward a step apart, then halfway
between, the branch nearest the seed at the first value with one), alternating pose by pose: median and 95th
percentile microseconds, and successes.
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
sys.path[:0] = [str(ROOT), str(ROOT / "test"), str(ROOT / "test" / "ik"), str(ROOT / "test" / "ik" / "closed_form")]

from test_plugin_redundant_closed_form import ALL, numerical_solutions, plugin_on  # noqa: E402
from test_redundant import REDUNDANT_ROBOTS  # noqa: E402

from kinematics_py.ik.search import IkSearch  # noqa: E402

TIMEOUT = 0.005
#: The figures that are shares of poses (or values).
SHARES = ("ALL exact", "closed nearer", "numerical nearer", "speed numerical solved", "speed 1-D solved")
#: Two solutions of the enumeration and of the closed form are the same when closer than this [rad].
MATCH_TOLERANCE = 1e-4


def one_dimensional_search(solver, T, seed, step: float, lower: float, upper: float):
    """The 1-D closed-form speed search: values of the locked joint from the seed's outward, a step apart, then
    halfway between; the in-limit branch nearest the seed at the first value that has one (or None)."""
    joint = solver.locked
    start = min(max(seed[joint], lower), upper)
    offsets = step * np.arange(1, int((upper - lower) / step) + 2)
    outward = np.stack([start + offsets, start - offsets], axis=1).ravel()
    values = np.concatenate([[start], outward, outward - np.sign(outward - start) * step / 2])
    values = values[(values >= lower) & (values <= upper)]
    q, _, counts, _ = solver.solve_values(T, seed, values[:1], 1)
    if counts[0]:
        return q[0, 0]
    for first in range(1, len(values), 16):
        q, _, counts, _ = solver.solve_values(T, seed, values[first:first + 16], 1)
        found = np.flatnonzero(counts)
        if len(found):
            return q[found[0], 0]
    return None


def measure(name: str, args) -> dict:
    plugin, distance = plugin_on(name), plugin_on(name, {"solve_mode": "distance"})
    setup = plugin.group_setup
    problem, chain = setup.problem, setup.problem.chains[0]
    redundant = setup.redundant_closed_form
    solver = redundant.solvers[redundant.default_joint]
    joint, step = solver.locked, plugin.getSearchDiscretization(solver.locked)
    grid = problem.lower[joint] + step * np.arange(int((problem.upper[joint] - problem.lower[joint]) / step) + 1)
    rng = np.random.default_rng(args.seed)
    answers = rng.uniform(problem.lower, problem.upper, (args.poses, 7))
    T = np.ascontiguousarray(chain.forward_kinematics(answers))
    seeds = rng.uniform(problem.lower, problem.upper, (args.poses, 7))
    figures = {"joint": solver.name}

    one, whole = [], []
    for T_i, seed in zip(T, seeds):
        t0 = time.perf_counter()
        solver.solve_values(T_i, seed, np.array([seed[joint]]))
        t1 = time.perf_counter()
        solver.solve_values(T_i, seed, grid)
        whole.append(time.perf_counter() - t1)
        one.append(t1 - t0)
    figures["one value us"] = statistics.median(one) * 1e6
    figures["grid us"] = statistics.median(whole) * 1e6
    figures["grid values"] = len(grid)

    seconds, sizes = [], []
    for T_i, seed in zip(T, seeds):
        t0 = time.perf_counter()
        result = plugin.getPositionIK(T_i, seed.tolist(), ALL)
        seconds.append(time.perf_counter() - t0)
        sizes.append(len(result.solutions))
    figures["ALL ms"] = statistics.median(seconds) * 1e3
    figures["ALL size"] = statistics.median(sizes)
    exact = checked = 0
    for T_i, seed in zip(T[:args.checked], seeds[:args.checked]):
        solutions = np.array(plugin.getPositionIK(T_i, seed.tolist(), ALL).solutions).reshape(-1, 7)
        values = np.unique(solutions[:, joint])
        for value in rng.choice(values, min(2, len(values)), replace=False):
            ours = solutions[solutions[:, joint] == value]
            theirs = numerical_solutions(plugin, T_i, seed, joint, value, rng)
            checked += 1
            exact += len(theirs) == len(ours) and all(
                np.abs(ours - other).max(axis=1).min() < MATCH_TOLERANCE for other in theirs)
    figures["ALL exact"] = exact / max(checked, 1)
    figures["checked values"] = checked

    closed, numerical, nearer, farther = [], [], 0, 0
    for r, (T_i, seed) in enumerate(zip(T, seeds)):
        for which in ((0, 1) if r % 2 == 0 else (1, 0)):
            t0 = time.perf_counter()
            if which == 0:
                q_closed = distance.searchPositionIK(T_i, seed.tolist(), TIMEOUT).solution
                closed.append(time.perf_counter() - t0)
            else:
                q_numerical = IkSearch(distance.group_setup.solver, T_i[None], seed, timeout=TIMEOUT).run().solution
                numerical.append(time.perf_counter() - t0)
        d_closed = np.linalg.norm(np.array(q_closed) - seed) if q_closed is not None else np.inf
        d_numerical = np.linalg.norm(q_numerical - seed) if q_numerical is not None else np.inf
        nearer += d_closed < d_numerical - 1e-9
        farther += d_numerical < d_closed - 1e-9
    figures.update({"distance closed ms": statistics.median(closed) * 1e3,
                    "distance numerical ms": statistics.median(numerical) * 1e3,
                    "closed nearer": nearer / args.poses, "numerical nearer": farther / args.poses})

    speed_numerical, speed_closed, solved_numerical, solved_closed = [], [], 0, 0
    for r, (T_i, seed) in enumerate(zip(T, seeds)):
        for which in ((0, 1) if r % 2 == 0 else (1, 0)):
            t0 = time.perf_counter()
            if which == 0:
                solved_numerical += plugin.searchPositionIK(T_i, seed, TIMEOUT).success
                speed_numerical.append(time.perf_counter() - t0)
            else:
                solved_closed += one_dimensional_search(solver, T_i, seed, step, problem.lower[joint],
                                                        problem.upper[joint]) is not None
                speed_closed.append(time.perf_counter() - t0)
    figures.update({"speed numerical us": statistics.median(speed_numerical) * 1e6,
                    "speed numerical p95 us": float(np.percentile(speed_numerical, 95)) * 1e6,
                    "speed 1-D us": statistics.median(speed_closed) * 1e6,
                    "speed 1-D p95 us": float(np.percentile(speed_closed, 95)) * 1e6,
                    "speed numerical solved": solved_numerical / args.poses,
                    "speed 1-D solved": solved_closed / args.poses})
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--poses", type=int, default=200)
    parser.add_argument("--checked", type=int, default=20, help="poses whose ALL_DISCRETIZED sets are enumerated")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--robots", nargs="*", default=sorted(REDUNDANT_ROBOTS))
    args = parser.parse_args()
    print(f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}; {args.poses} poses per robot")
    for name in args.robots:
        figures = measure(name, args)
        print(f"\n{name}: {figures.pop('joint')}")
        for key, value in figures.items():
            shown = f"{value:.1%}" if key in SHARES else f"{value:.3f}"
            print(f"  {key:<24} {shown}")
    print(f"\nload average at the end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
