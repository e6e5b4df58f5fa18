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

Calibrated arms (issue 18; ``--calibrated-poses``, 0 skips): the UR5 and UR10 from their published DH parameters,
nominal and calibrated (DH deltas of 0.1-1 mm and 0.1-1 mrad, ``test/calibrated_arms.py``), and the KR 16 with its
joint origins moved by up to 1 mm / 1 mrad: per call, ``searchPositionIK`` (speed mode) and ``all_solutions`` on the
nominal and the calibrated arm, alternating block by block, with Robotics Toolbox's C++ ``ik_LM`` on the calibrated
arm; ratios calibrated / nominal (target <= 2) and calibrated / C++ LM (target < 1). Completeness: the share of
poses whose ``all_solutions`` equals a brute-force enumeration (numerical searches from --enumeration-seeds random
seeds, deduplicated; target >= 99 %).
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

from calibrated_arms import calibration_deltas, moved_joint_origins, ur_urdf  # noqa: E402
from closed_form_cases import (  # noqa: E402  (test helpers: robots, EAIK built from the same geometry)
    CLOSED_FORM_ROBOTS,
    eaik_branches,
    eaik_robot,
    in_limit_branches,
    random_configurations,
    solve_without_limits,
    solver,
)

from kinematics_py import DiscretizationMethod, KinematicsPlugin, KinematicsQueryOptions, RobotModel  # noqa: E402

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


def calibrated_arms(seed: int) -> dict[str, tuple[str, str, str, str]]:
    """name -> (nominal URDF, calibrated URDF, base link, tip link)."""
    rng = np.random.default_rng(seed)
    arms = {name: (ur_urdf(name), ur_urdf(name, calibration_deltas(rng, 1e-3, 1e-3)), "base_link", "tool0")
            for name in ("ur5", "ur10")}
    path, base, tip, _ = CLOSED_FORM_ROBOTS["kr16"]
    text = Path(path()).read_text()
    arms["kr16"] = (text, moved_joint_origins(text, rng, 1e-3, 1e-3), base, tip)
    return arms


def initialized(urdf: str, base: str, tip: str, **parameters) -> KinematicsPlugin:
    plugin = KinematicsPlugin()
    if not plugin.initialize(urdf, "arm", base, [tip], parameters=parameters):
        raise RuntimeError(plugin.last_error)
    return plugin


def cpp_lm(urdf: str, base: str, tip: str, chain):
    """Robotics Toolbox's C++ ik_LM on the URDF as a function (T_base_tip, seed) -> None, or None if not installed."""
    import contextlib
    import io
    import tempfile
    import warnings
    try:
        import roboticstoolbox as rtb
        from roboticstoolbox.models.URDF.URDFRobot import URDF_read
    except ImportError:
        return None
    with tempfile.TemporaryDirectory() as folder, warnings.catch_warnings(), \
            contextlib.redirect_stdout(io.StringIO()):
        warnings.simplefilter("ignore")
        path = Path(folder) / "arm.urdf"
        path.write_text(urdf)
        links, name, _ = URDF_read(str(path))
        ets = rtb.Robot(links, name=name).ets(start=base, end=tip)
    zero = np.zeros(chain.dof)
    T_rtb_base = ets.fkine(zero).A @ np.linalg.inv(chain.forward_kinematics(zero))

    def solve(T, seed):
        return ets.ik_LM(T_rtb_base @ T, q0=seed, tol=0.5 * 1e-5 ** 2, joint_limits=True)

    return solve


def alternating_per_call(calls: list, T, seeds, rounds: int, block: int) -> list[float]:
    """Median microseconds per call of each of ``calls`` (f(T[i], seeds[i])), alternating block by block."""
    samples = [[] for _ in calls]
    n = len(T)
    for r in range(rounds):
        start = (r * block) % max(1, n - block)
        order = range(len(calls)) if r % 2 == 0 else reversed(range(len(calls)))
        for which in order:
            call = calls[which]
            t0 = time.perf_counter()
            for i in range(start, min(n, start + block)):
                call(T[i], seeds[i])
            samples[which].append((time.perf_counter() - t0) / min(block, n) * 1e6)
    return [statistics.median(s) for s in samples]


def enumeration_agrees(plugin, numerical, chain, T, rng, seeds: int) -> tuple[bool, bool]:
    """(whether ``plugin.all_solutions(T)`` holds every distinct solution of numerical searches from ``seeds`` random
    seeds, whether it holds nothing else), whole turns aside; ``numerical`` solves to 1e-10."""
    def same(a, b):
        return float(np.max(np.abs((np.asarray(a) - b + np.pi) % (2 * np.pi) - np.pi))) < 1e-4

    ours = plugin.all_solutions(T)
    found = []
    for seed in random_configurations(chain, rng, seeds):
        result = numerical.searchPositionIK(T, seed, timeout=0.05)
        if result.success and not any(same(result.solution, other) for other in found):
            found.append(np.asarray(result.solution))
    return all(any(same(q, s) for s in ours) for q in found), all(any(same(s, q) for q in found) for s in ours)


def calibrated_report(args) -> None:
    print()
    print("Calibrated arms (issue 18): per call [us], nominal vs calibrated, and the C++ LM on the calibrated arm")
    print(f"{'robot':<6} {'search nom':>10} {'search cal':>10} {'ratio':>6} {'all nom':>8} {'all cal':>8} {'ratio':>6} "
          f"{'C++ LM':>8} {'cal/LM':>7} {'complete':>9} {'equal':>7}")
    for name, (nominal_urdf, calibrated_urdf, base, tip) in calibrated_arms(args.seed).items():
        nominal, calibrated = initialized(nominal_urdf, base, tip), initialized(calibrated_urdf, base, tip)
        numerical = initialized(calibrated_urdf, base, tip, closed_form_angle_tolerance=0.0,
                                closed_form_distance_tolerance=0.0, position_threshold=1e-10,
                                orientation_threshold=1e-10)
        chain = RobotModel.from_urdf_string(calibrated_urdf).chain(base, tip)
        nominal_chain = RobotModel.from_urdf_string(nominal_urdf).chain(base, tip)
        rng = np.random.default_rng(args.seed)
        q = random_configurations(chain, rng, args.calibrated_poses)
        T_cal, T_nom = chain.forward_kinematics(q), nominal_chain.forward_kinematics(q)
        seeds = random_configurations(chain, rng, args.calibrated_poses)
        lm = cpp_lm(calibrated_urdf, base, tip, chain)
        calls = [lambda i, s, p=nominal, T=T_nom: p.searchPositionIK(T[i], s),
                 lambda i, s, p=calibrated, T=T_cal: p.searchPositionIK(T[i], s),
                 lambda i, s, p=nominal, T=T_nom: p.all_solutions(T[i], s),
                 lambda i, s, p=calibrated, T=T_cal: p.all_solutions(T[i], s)]
        if lm:
            calls.append(lambda i, s, solve=lm, T=T_cal: solve(T[i], s))
        timings = alternating_per_call(calls, list(range(len(q))), seeds, args.rounds, args.block)
        search_nom, search_cal, all_nom, all_cal = timings[:4]
        lm_us = timings[4] if lm else float("nan")
        agreement = np.array([enumeration_agrees(calibrated, numerical, chain, T, rng, args.enumeration_seeds)
                              for T in T_cal[:args.enumeration_poses]])
        complete, only = agreement.mean(axis=0)
        print(f"{name:<6} {search_nom:>10.2f} {search_cal:>10.2f} {search_cal / search_nom:>6.2f} {all_nom:>8.2f} "
              f"{all_cal:>8.2f} {all_cal / all_nom:>6.2f} {lm_us:>8.1f} {search_cal / lm_us:>7.3f} {complete:>9.1%} "
              f"{only:>7.1%}")
    print("complete: share of poses whose all_solutions holds every solution of the brute-force enumeration; equal: "
          "and nothing else (the enumeration misses some: every one of ours is verified by the chain's FK)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--poses", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--block", type=int, default=100)
    parser.add_argument("--threads", type=int, default=2, help="EAIK's worker threads in the batch")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--robots", nargs="*", default=list(ROBOTS))
    parser.add_argument("--calibrated-poses", type=int, default=1000, help="poses per calibrated arm (0: skip)")
    parser.add_argument("--enumeration-poses", type=int, default=200, help="poses checked against the brute force")
    parser.add_argument("--enumeration-seeds", type=int, default=100, help="numerical searches per brute-force pose")
    parser.add_argument("--only-calibrated", action="store_true", help="the calibrated arms' section alone")
    args = parser.parse_args()
    if args.only_calibrated:
        calibrated_report(args)
        return
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
    if args.calibrated_poses:
        calibrated_report(args)


if __name__ == "__main__":
    main()
