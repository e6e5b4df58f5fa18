"""VelocityIKSolver.cart_to_jnt against KDL's ChainIkSolverVel_pinv_nso (Debian's PyKDL), per call, same run.

    .venv/bin/python bench/velocity_ik.py [--states 2000] [--rounds 7] [--robots panda,ur5]

Both solvers get the same random states within the limits and random twists, with a null-space target and
non-uniform weights. Timed in alternating rounds (ours, KDL's, KDL's with its inputs converted from numpy, our
batch), each round over every state; the median round per call is printed, with the ratio ours / KDL's. KDL's
plain call is timed with its JntArray and Twist built beforehand (its best case); "KDL from numpy" builds them
from the same numpy arrays ours takes, as a caller holding numpy values would. The answers are compared too
(largest relative difference). Needs python3-pykdl (apt-get install python3-pykdl).
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
sys.path[:0] = [str(ROOT), str(ROOT / "test")]

from kdl_reference import build_chain, load_pykdl  # noqa: E402

from kinematics_py import KinematicsPlugin, VelocityIKSolver  # noqa: E402
from kinematics_py.robots import bundled_robot_path  # noqa: E402

GROUPS = {"panda": "panda_arm", "ur5": "ur_manipulator"}


def kdl_array(kdl, values):
    array = kdl.JntArray(len(values))
    for i, value in enumerate(values):
        array[i] = value
    return array


def kdl_twist(kdl, v):
    return kdl.Twist(kdl.Vector(v[0], v[1], v[2]), kdl.Vector(v[3], v[4], v[5]))


def bench_robot(kdl, robot: str, states: int, rounds: int) -> dict:
    urdf = bundled_robot_path(robot).read_text()
    plugin = KinematicsPlugin()
    assert plugin.initialize(urdf, GROUPS[robot], robot_description_semantic=bundled_robot_path(robot, "srdf")
                             .read_text()), plugin.last_error
    chain, names, lower, upper = build_chain(kdl, urdf, plugin.getBaseFrame(), plugin.getTipFrame())
    n = len(names)
    rng = np.random.default_rng(0)
    Q = rng.uniform(lower, upper, size=(states, n))
    twists = rng.normal(size=(states, 6))
    opt_pos, weights = rng.uniform(lower, upper), rng.uniform(0.1, 3.0, n)
    ours = VelocityIKSolver(plugin, opt_pos=opt_pos, weights=weights)
    theirs = kdl.ChainIkSolverVel_pinv_nso(chain)
    theirs.setOptPos(kdl_array(kdl, opt_pos))
    theirs.setWeights(kdl_array(kdl, weights))
    kdl_inputs = [(kdl_array(kdl, q), kdl_twist(kdl, v)) for q, v in zip(Q.tolist(), twists.tolist())]
    out = kdl.JntArray(n)
    rows = list(zip(Q, twists))

    def run_ours():
        for q, v in rows:
            ours.cart_to_jnt(q, v)

    def run_kdl():
        for q, v in kdl_inputs:
            theirs.CartToJnt(q, v, out)

    def run_kdl_numpy():
        for q, v in rows:
            theirs.CartToJnt(kdl_array(kdl, q.tolist()), kdl_twist(kdl, v.tolist()), out)
            [out[i] for i in range(n)]

    def run_batch():
        ours.cart_to_jnt_batch(Q, twists)

    runs = {"ours": run_ours, "KDL": run_kdl, "KDL from numpy": run_kdl_numpy, "ours, batch": run_batch}
    for run in runs.values():
        run()  # compiled and warm
    times = {name: [] for name in runs}
    for _ in range(rounds):
        for name, run in runs.items():
            start = time.perf_counter()
            run()
            times[name].append((time.perf_counter() - start) / states * 1e6)
    worst = 0.0
    for (q, v), (kq, kv) in zip(rows, kdl_inputs):
        theirs.CartToJnt(kq, kv, out)
        reference = np.array([out[i] for i in range(n)])
        worst = max(worst, np.abs(ours.cart_to_jnt(q, v).joint_velocities - reference).max() / np.abs(reference).max())
    return {name: statistics.median(values) for name, values in times.items()} | {"worst": worst}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--states", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--robots", default="panda,ur5")
    args = parser.parse_args()
    kdl = load_pykdl()
    if kdl is None:
        print("PyKDL is not importable: apt-get install python3-pykdl", file=sys.stderr)
        return 2
    print(f"load average before: {os.getloadavg()[0]:.1f}; {args.states} states x {args.rounds} rounds")
    print("| robot | ours [us/call] | KDL [us/call] | ours / KDL | KDL from numpy [us] | ours / that | "
          "batch [us/state] | max relative difference |")
    print("|---|---|---|---|---|---|---|---|")
    for robot in args.robots.split(","):
        r = bench_robot(kdl, robot, args.states, args.rounds)
        print(f"| {robot} | {r['ours']:.2f} | {r['KDL']:.2f} | {r['ours'] / r['KDL']:.2f} | "
              f"{r['KDL from numpy']:.2f} | {r['ours'] / r['KDL from numpy']:.2f} | {r['ours, batch']:.2f} | "
              f"{r['worst']:.1e} |")
    print(f"load average after: {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
