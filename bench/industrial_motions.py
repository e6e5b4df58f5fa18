"""Industrial motions benchmark: planning time of PTP, LIN and CIRC items and of blended sequences
(``planning.industrial``, ``planning.sequence``), and how long a blended sequence takes to execute against the same
items stopping at each corner.

    .venv/bin/python bench/industrial_motions.py                  # Panda and UR5, 30 items of each kind, ~1 min
    .venv/bin/python bench/industrial_motions.py --robots panda --items 100 --seed 3

Protocol: the bundled robots (their URDF's collision shapes and the SRDF's disabled pairs, an empty scene), from
a fixed start (Panda: MoveIt's ready pose; UR5: a pose above the table). Per robot and kind, ``--items`` motions to
random tool targets (seed ``--seed``): PTP and LIN to the start pose moved by up to 0.2 m per axis, CIRC through an
interim point off the chord; a plan that is refused (a target out of reach, a flip) counts as refused, not timed.
Sequences: ``--items`` 4-item LIN sequences around a random rectangle (sides 0.1-0.2 m) with radii
0.05/0.05/0.03/0, and the same items with radii 0 (stopping at each corner); their planning times and the
trajectories' durations. Limits: the joints' URDF velocities, accelerations 5 rad/s^2, Pilz's documented
Cartesian limits, velocity scaling ``--velocity-scaling`` (0.2). One untimed warm-up of each kind first. Timing:
the whole call (``time.perf_counter``), everything included (IK steps, densifying, collision check of every point,
timing). Writes a Markdown report (stdout and ``--output``, default bench/results/industrial_motions.md).
"""
from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # the checkout's own kinematics_py

from kinematics_py import KinematicsPlugin, RobotModel, SemanticModel  # noqa: E402
from kinematics_py.collision.checker import CollisionChecker  # noqa: E402
from kinematics_py.planning.goals import PoseGoal  # noqa: E402
from kinematics_py.planning.industrial import (  # noqa: E402
    LINEAR_STEP,
    Circ,
    IndustrialOptions,
    IndustrialRun,
    Lin,
    Ptp,
    plan_motion,
)
from kinematics_py.planning.sequence import SequenceItem, plan_sequence  # noqa: E402
from kinematics_py.planning.time_parameterization import joint_limits  # noqa: E402
from kinematics_py.robots import bundled_robot_path  # noqa: E402

#: robot -> (group, base, tip, start)
ROBOTS = {"panda": ("panda_arm", "panda_link0", "panda_hand_tcp", (0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785)),
          "ur5": ("ur_manipulator", "base_link", "tool0", (0.3, -1.2, 1.5, -1.9, -1.57, 0.0))}
ACCELERATION = 5.0
RADII = (0.05, 0.05, 0.03, 0.0)


def _robot(name: str):
    urdf, srdf = bundled_robot_path(name).read_text(), bundled_robot_path(name, "srdf").read_text()
    model = RobotModel.from_urdf_string(urdf)
    checker = CollisionChecker(model, SemanticModel.from_srdf_string(srdf, model))
    plugin = KinematicsPlugin()
    group, base, tip, start = ROBOTS[name]
    assert plugin.initialize(urdf, group, base, tip, robot_description_semantic=srdf), plugin.last_error
    names = plugin.getJointNames()
    limits = joint_limits(model, names, {joint: {"max_acceleration": ACCELERATION} for joint in names})
    return plugin, checker, np.array(start), limits


def _moved(T: np.ndarray, offset) -> np.ndarray:
    T = T.copy()
    T[:3, 3] += offset
    return T


def _motions(kind: str, T_start: np.ndarray, rng: np.random.Generator, count: int) -> list:
    motions = []
    for _ in range(count):
        T_to = _moved(T_start, rng.uniform(-0.2, 0.2, 3))
        if kind == "PTP":
            motions.append(Ptp(PoseGoal(T_to)))
        elif kind == "LIN":
            motions.append(Lin(PoseGoal(T_to)))
        else:
            chord = T_to[:3, 3] - T_start[:3, 3]
            side = np.cross(chord, rng.normal(size=3))
            interim = T_start[:3, 3] + 0.5 * chord + 0.3 * np.linalg.norm(chord) * side / np.linalg.norm(side)
            motions.append(Circ(PoseGoal(T_to), interim, "interim"))
    return motions


def _rectangles(T_start: np.ndarray, rng: np.random.Generator, count: int, radii) -> list[list[SequenceItem]]:
    sequences = []
    for _ in range(count):
        a, b, up = rng.uniform(0.1, 0.2), rng.uniform(0.1, 0.2), rng.uniform(0.08, 0.15)
        corners = ((a, 0, 0), (a, b, 0), (0, b, 0), (0, b, up))
        sequences.append([SequenceItem(Lin(PoseGoal(_moved(T_start, c))), r) for c, r in zip(corners, radii)])
    return sequences


def _timed(call) -> tuple[float, object]:
    began = time.perf_counter()
    result = call()
    return time.perf_counter() - began, result


def _row(label: str, times: list[float], refused: int, extra: str = "") -> str:
    if not times:
        return f"| {label} | 0 | {refused} | - | - | - |{extra}"
    ms = np.array(times) * 1e3
    return (f"| {label} | {len(times)} | {refused} | {np.median(ms):.2f} | {np.percentile(ms, 90):.2f} | "
            f"{ms.max():.2f} |{extra}")


def bench_robot(name: str, items: int, seed: int, scaling: float, step: float) -> list[str]:
    plugin, checker, start, limits = _robot(name)
    options = IndustrialOptions(limits, velocity_scaling=scaling, step=step)
    T_start = IndustrialRun(plugin, checker, options).tool_poses(start[None])[0]
    rng = np.random.default_rng(seed)
    rows = []
    for kind in ("PTP", "LIN", "CIRC"):
        motions = _motions(kind, T_start, rng, items + 1)
        plan_motion(plugin, checker, start, motions[0], options)  # warm-up
        times, refused = [], 0
        for motion in motions[1:]:
            seconds, plan = _timed(lambda m=motion: plan_motion(plugin, checker, start, m, options))
            (times.append(seconds) if plan.success else None)
            refused += not plan.success
        rows.append(_row(f"{name} {kind}", times, refused, " |"))
    blended_rng, stopping_rng = np.random.default_rng(seed + 1), np.random.default_rng(seed + 1)
    blended = _rectangles(T_start, blended_rng, items + 1, RADII)
    stopping = _rectangles(T_start, stopping_rng, items + 1, (0.0,) * 4)
    plan_sequence(plugin, checker, start, blended[0], options)  # warm-up
    for label, sequences in (("blended", blended[1:]), ("stopping", stopping[1:])):
        times, durations, refused = [], [], 0
        for sequence in sequences:
            seconds, plan = _timed(lambda s=sequence: plan_sequence(plugin, checker, start, s, options))
            if plan.success:
                times.append(seconds)
                durations.append(plan.timing.time_from_start[-1])
            refused += not plan.success
        duration = f" {np.median(durations):.3f} |" if durations else " - |"
        rows.append(_row(f"{name} 4-LIN sequence, {label}", times, refused, duration))
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--robots", default="panda,ur5")
    parser.add_argument("--items", type=int, default=30)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--velocity-scaling", type=float, default=0.2)
    parser.add_argument("--step", type=float, default=LINEAR_STEP, help="tool travel per IK step [m]")
    parser.add_argument("--output", type=Path, default=ROOT / "bench" / "results" / "industrial_motions.md")
    args = parser.parse_args(argv)
    lines = [f"# Industrial motions ({platform.node()}, {os.cpu_count()} CPUs, load "
             f"{os.getloadavg()[0]:.1f}, seed {args.seed}, {args.items} per row, velocity scaling "
             f"{args.velocity_scaling}, IK step {args.step} m)", "",
             "| robot, motion | planned | refused | median [ms] | p90 [ms] | max [ms] | median duration [s] |",
             "|---|---|---|---|---|---|---|"]
    for robot in args.robots.split(","):
        lines += bench_robot(robot, args.items, args.seed, args.velocity_scaling, args.step)
    lines.append(f"\nload at the end: {os.getloadavg()[0]:.1f}")
    report = "\n".join(lines)
    print(report)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(report + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
