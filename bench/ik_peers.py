"""IK benchmark: kinematics_py against the IK solvers that install here, on the same targets.

    .venv/bin/python bench/ik_peers.py                       # everything, 1000 targets per robot
    .venv/bin/python bench/ik_peers.py --targets 200 --robots ur5,panda --solvers rtb,tracik

Protocol (shared/notes/peers.md): per robot, targets are the pinocchio FK of configurations drawn
uniformly within the URDF limits (seed --seed), and each target has one random start within the
limits (seed --seed + 1). Every solver gets the same target and start; the solvers take turns
on each target, in a random order, so background load falls on all alike. Only the solve call is
timed, after 3 untimed warm-up solves. An answer counts as a success only if it is finite, inside
the limits (+1e-6) and within 1e-4 m and 1e-3 rad of the target by pinocchio's FK, whatever the
solver claims. Writes a Markdown table (stdout and <output-dir>/ik_peers.md) and a plot
(<output-dir>/ik_peers.png).
"""
from __future__ import annotations

import argparse
import importlib.metadata
import os
import platform
import shlex
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

BENCH_DIR = Path(__file__).resolve().parent
# bench/ for the adapters; the checkout's root so that a fresh clone benchmarks its own kinematics_py.
sys.path[:0] = [str(BENCH_DIR), str(BENCH_DIR.parent)]

from peers import SOLVERS, KinematicsPyImportError, SolverAdapter, SolverUnavailable, SolveSettings  # noqa: E402
from peers.robots import ROBOTS, BenchRobot, load_robot  # noqa: E402

WARMUP_SOLVES = 3
LIMIT_SLACK = 1e-6  # [rad or m]
POSITION_TOLERANCE = 1e-4  # [m]
ROTATION_TOLERANCE = 1e-3  # [rad]
REFERENCE_SOLVER = "kinematics_py"
BATCH_ROBOT = "panda"  # issue 3's batch figure: 1,000 Panda poses
PACKAGES = ("pytracik", "roboticstoolbox-python", "optik-py", "eaik", "pin", "numpy", "numba")


@dataclass
class SolverRecord:
    """Per-target times [s] and verified outcomes of one solver on one robot."""

    label: str
    seconds: np.ndarray
    verified: np.ndarray
    exceptions: int = 0
    first_exception: str = ""
    solutions: list = field(default_factory=list)  # answers until verified, then dropped

    def success_percent(self) -> float:
        return 100.0 * float(self.verified.mean())

    def in_budget_percent(self, budget_s: float) -> float:
        return 100.0 * float((self.verified & (self.seconds <= budget_s)).mean())

    def median_ms(self) -> float:
        return 1e3 * float(np.median(self.seconds))

    def p95_ms(self) -> float:
        return 1e3 * float(np.percentile(self.seconds, 95))


def empty_record(label: str, count: int) -> SolverRecord:
    return SolverRecord(label, np.full(count, np.nan), np.zeros(count, bool), solutions=[None] * count)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--robots", default=",".join(ROBOTS), help=f"comma-separated, from: {', '.join(ROBOTS)}")
    parser.add_argument("--solvers", default=",".join(SOLVERS), help=f"comma-separated, from: {', '.join(SOLVERS)}")
    parser.add_argument("--targets", type=int, default=1000, help="targets per robot (default 1000)")
    parser.add_argument("--budget-ms", type=float, default=5.0, help="wall-clock budget of one solve [ms]")
    parser.add_argument("--tolerance", type=float, default=1e-5, help="pose residual asked of each solver")
    parser.add_argument("--seed", type=int, default=0, help="targets use this seed, starts seed + 1")
    parser.add_argument(
        "--batch-size", type=int, default=1000,
        help="poses in kinematics_py's batch measurement on Panda (0: skip; needs kinematics_py in --solvers)",
    )
    parser.add_argument(
        "--output-dir", type=Path, default=BENCH_DIR / "results", help="where the .md and .png go"
    )
    args = parser.parse_args(argv)
    for option, known in (("robots", ROBOTS), ("solvers", SOLVERS)):
        names = [n.strip() for n in getattr(args, option).split(",") if n.strip()]
        unknown = [n for n in names if n not in known]
        if unknown or not names:
            parser.error(f"--{option}: unknown {unknown or 'empty list'}; choose from {', '.join(known)}")
        setattr(args, option, names)
    if args.targets < 1 or args.budget_ms <= 0 or args.tolerance <= 0 or args.batch_size < 0:
        parser.error("--targets, --budget-ms and --tolerance must be positive, --batch-size >= 0")
    return args


def draw_problems(robot: BenchRobot, count: int, seed: int) -> tuple[list[np.ndarray], np.ndarray]:
    """`count` target poses (FK of uniform configurations) and one uniform start for each."""
    chain = robot.chain
    configurations = np.random.default_rng(seed).uniform(chain.sample_lower, chain.sample_upper, (count, chain.dof))
    starts = np.random.default_rng(seed + 1).uniform(chain.sample_lower, chain.sample_upper, (count, chain.dof))
    return [robot.reference.T_base_tip(q) for q in configurations], starts


def verify(robot: BenchRobot, q: np.ndarray | None, T_base_target: np.ndarray) -> bool:
    """The benchmark's own success test, independent of what the solver claims."""
    if q is None:
        return False
    q = np.asarray(q, dtype=float).reshape(-1)
    chain = robot.chain
    if q.shape != (chain.dof,) or not np.all(np.isfinite(q)):
        return False
    if np.any(q < chain.lower - LIMIT_SLACK) or np.any(q > chain.upper + LIMIT_SLACK):
        return False
    position_error, rotation_error = robot.reference.pose_errors(q, T_base_target)
    return position_error <= POSITION_TOLERANCE and rotation_error <= ROTATION_TOLERANCE


def start_solvers(robot: BenchRobot, keys: list[str], settings: SolveSettings,
                  unavailable: dict) -> list[SolverAdapter]:
    """Construct the adapters that can run on this robot; note why the others cannot."""
    adapters = []
    for key in keys:
        try:
            adapters.append(SOLVERS[key](robot, settings))
        except KinematicsPyImportError:
            raise
        except SolverUnavailable as error:
            unavailable[(robot.spec.name, key)] = str(error)
        except BaseException as error:  # noqa: BLE001 - a peer's setup crash (Rust panics included)
            if key == REFERENCE_SOLVER or isinstance(error, (KeyboardInterrupt, SystemExit)):
                raise
            unavailable[(robot.spec.name, key)] = f"setup failed: {type(error).__name__}: {error}"
    return adapters


def safe_solve(adapter: SolverAdapter, target: object, q_start: np.ndarray, record: SolverRecord, index: int) -> None:
    """One timed solve; an exception from a peer counts as a failure and is noted."""
    try:
        q, seconds = adapter.timed_solve(target, q_start)
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as error:  # noqa: BLE001 - Rust panics are BaseException
        if adapter.key == REFERENCE_SOLVER:
            raise
        record.exceptions += 1
        record.first_exception = record.first_exception or f"{type(error).__name__}: {error}"
        q, seconds = None, np.nan
    record.seconds[index] = seconds
    record.solutions[index] = q


def run_robot(robot, keys, settings, targets_count, seed, unavailable, progress) -> dict[str, SolverRecord]:
    """All solvers on one robot, alternating per target; returns records keyed by solver.

    Each target's solvers run in a fresh random order (seed + 2), so no solver always follows the
    same one (whose threads or cache footprint could slow the next call).
    """
    adapters = start_solvers(robot, keys, settings, unavailable)
    try:
        targets, starts = draw_problems(robot, targets_count + WARMUP_SOLVES, seed)
        records = {a.key: empty_record(a.label, targets_count) for a in adapters}
        prepared = {a.key: [a.prepare(T) for T in targets] for a in adapters}
        for adapter in adapters:
            warmup = empty_record(adapter.label, WARMUP_SOLVES)  # results dropped
            for i in range(WARMUP_SOLVES):
                safe_solve(adapter, prepared[adapter.key][i], starts[i], warmup, i)
        order_rng = np.random.default_rng(seed + 2)
        for i in range(targets_count):
            j = WARMUP_SOLVES + i
            for k in order_rng.permutation(len(adapters)):
                adapter = adapters[k]
                safe_solve(adapter, prepared[adapter.key][j], starts[j], records[adapter.key], i)
            progress.update(1)
        for _key, record in records.items():
            record.verified = np.array([verify(robot, q, targets[WARMUP_SOLVES + i])
                                        for i, q in enumerate(record.solutions)])
            record.seconds = np.where(np.isnan(record.seconds), settings.budget_s, record.seconds)
            record.solutions = []
        return records
    finally:
        for adapter in adapters:
            adapter.close()


@dataclass
class BatchRecord:
    """kinematics_py's batch call: `size` poses, wall-clock seconds of each repeat, verified count."""

    robot: str
    size: int
    seconds: list[float]
    verified: int
    error: str = ""

    def solutions_per_second(self) -> float:
        return self.verified / float(np.median(self.seconds))


def run_batch(robot: BenchRobot, settings: SolveSettings, size: int, seed: int, repeats: int = 3) -> BatchRecord:
    """Time `searchPositionIKBatch` on `size` fresh targets (after one untimed warm-up call)."""
    adapter = SOLVERS[REFERENCE_SOLVER](robot, settings)
    targets, starts = draw_problems(robot, size, seed + 3)
    prepared = [adapter.prepare(T) for T in targets]
    try:
        adapter.solve_batch(prepared[:WARMUP_SOLVES], starts[:WARMUP_SOLVES])
    except SolverUnavailable as error:
        return BatchRecord(robot.spec.name, size, [np.nan], 0, str(error))
    seconds = []
    for _ in range(repeats):
        began = time.perf_counter()
        solutions = adapter.solve_batch(prepared, starts)
        seconds.append(time.perf_counter() - began)
    verified = sum(verify(robot, q, T) for q, T in zip(solutions, targets))
    return BatchRecord(robot.spec.name, size, seconds, verified)


def machine_description() -> str:
    cpu = platform.processor() or "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{cpu}, {os.cpu_count()} logical cores, Python {platform.python_version()}"


def package_versions() -> str:
    versions = []
    for name in PACKAGES:
        try:
            versions.append(f"{name} {importlib.metadata.version(name)}")
        except importlib.metadata.PackageNotFoundError:
            versions.append(f"{name} (not installed)")
    try:
        kdl = subprocess.run(["dpkg-query", "-W", "-f", "${Version}", "python3-pykdl"], capture_output=True, text=True)
        versions.append(f"python3-pykdl {kdl.stdout.strip() or '(not installed)'}")
    except OSError:
        versions.append("python3-pykdl (no dpkg)")
    return ", ".join(versions)


def format_ratio(reference: SolverRecord | None, record: SolverRecord, key: str) -> str:
    if reference is None or key == REFERENCE_SOLVER:
        return ""
    return f"{reference.median_ms() / record.median_ms():.2f}"


def markdown_report(results, unavailable, batch, args, settings, command, runtime_s, load) -> str:
    budget_ms = 1e3 * settings.budget_s
    lines = [
        "# IK benchmark: kinematics_py and peers",
        "",
        f"Command: `{command}`  ",
        f"Machine: {machine_description()}  ",
        f"Packages: {package_versions()}  ",
        f"Protocol: {args.targets} targets per robot (seed {args.seed}, starts seed {args.seed + 1}), "
        f"{WARMUP_SOLVES} warm-up solves, budget {budget_ms:g} ms, tolerance {settings.tolerance:g}; success = "
        f"finite, in limits (+{LIMIT_SLACK:g}), FK error <= {POSITION_TOLERANCE:g} m and <= {ROTATION_TOLERANCE:g} rad "
        "(pinocchio). Times are of every call, failures included. Ratio = kinematics_py median / solver median "
        "(< 1: kinematics_py faster).  ",
        f"Runtime: {runtime_s:.0f} s; load average (1 min) at start {load[0]:.2f}, at end {load[1]:.2f} "
        "(other processes slow the multi-threaded TRAC-IK and OptIK most)",
        "",
        f"| robot | solver | success % | success within {budget_ms:g} ms % | median ms | p95 ms "
        "| kinematics_py / solver median |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    notes = []
    for robot_name, records in results.items():
        reference = records.get(REFERENCE_SOLVER)
        for key in args.solvers:
            if key in records:
                r = records[key]
                lines.append(
                    f"| {robot_name} | {r.label} | {r.success_percent():.1f} "
                    f"| {r.in_budget_percent(settings.budget_s):.1f} | {r.median_ms():.3f} | {r.p95_ms():.3f} "
                    f"| {format_ratio(reference, r, key)} |"
                )
                if r.exceptions:
                    notes.append(f"- {robot_name} / {r.label}: {r.exceptions} solves raised ({r.first_exception})")
            elif (robot_name, key) in unavailable:
                lines.append(f"| {robot_name} | {SOLVERS[key].label} | unavailable | | | | |")
                notes.append(f"- {robot_name} / {SOLVERS[key].label} unavailable: {unavailable[(robot_name, key)]}")
    if batch is not None:
        lines.append("")
        if batch.error:
            lines.append(f"Batch ({batch.robot}, {batch.size} poses): not measured: {batch.error}")
        else:
            lines.append(
                f"Batch: kinematics_py `searchPositionIKBatch`, {batch.size} {batch.robot} poses in one call: "
                f"{batch.verified}/{batch.size} verified in {1e3 * float(np.median(batch.seconds)):.1f} ms "
                f"(median of {len(batch.seconds)}), {batch.solutions_per_second():,.0f} verified solutions/s"
            )
    if notes:
        lines += ["", "Notes:", *notes]
    return "\n".join(lines) + "\n"


def plot(results, args, settings, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    robots = list(results)
    keys = [k for k in args.solvers if any(k in results[r] for r in robots)]
    width = 0.8 / max(len(keys), 1)
    figure, axes = plt.subplots(figsize=(max(8, 2.2 * len(robots)), 5.5))
    for n, key in enumerate(keys):
        xs, medians, p95s, labels = [], [], [], []
        for x, robot_name in enumerate(robots):
            record = results[robot_name].get(key)
            if record is None:
                continue
            xs.append(x - 0.4 + width * (n + 0.5))
            medians.append(record.median_ms())
            p95s.append(record.p95_ms())
            success = record.success_percent()
            labels.append("100%" if success == 100.0 else f"{min(success, 99.9):.1f}%")
        if not xs:
            continue
        bars = axes.bar(xs, medians, width, label=SOLVERS[key].label)
        axes.scatter(xs, p95s, marker="_", color="black", s=60, zorder=3)
        for bar, text in zip(bars, labels):
            axes.annotate(
                text, (bar.get_x() + bar.get_width() / 2, bar.get_height()), ha="center", va="bottom",
                fontsize=7, rotation=90, xytext=(0, 2), textcoords="offset points",
            )
    axes.axhline(1e3 * settings.budget_s, color="grey", linestyle="--", linewidth=1, label="budget")
    axes.set_yscale("log")
    axes.set_xticks(range(len(robots)), robots)
    axes.set_ylabel("solve time [ms]: bar = median, dash = p95")
    axes.set_title(f"IK solve time and verified success %, {args.targets} targets per robot")
    axes.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    from tqdm import tqdm

    settings = SolveSettings(budget_s=args.budget_ms / 1e3, tolerance=args.tolerance, seed=args.seed)
    python = sys.executable
    if python.startswith(os.getcwd() + os.sep):
        python = os.path.relpath(python)
    command = shlex.join([python, *sys.argv])
    results: dict[str, dict[str, SolverRecord]] = {}
    unavailable: dict[tuple[str, str], str] = {}
    began = time.perf_counter()
    load_at_start = os.getloadavg()[0]
    if load_at_start > 0.5:
        print(f"warning: load average {load_at_start:.2f}: other processes are running; timings will suffer",
              file=sys.stderr)
    batch = None
    with tempfile.TemporaryDirectory(prefix="ik_peers_") as scratch, tqdm(
        total=len(args.robots) * args.targets, unit="target", dynamic_ncols=True
    ) as progress:
        for robot_name in args.robots:
            progress.set_description(robot_name)
            robot = load_robot(robot_name, Path(scratch))
            try:
                results[robot_name] = run_robot(robot, args.solvers, settings, args.targets, args.seed, unavailable,
                                                progress)
            except KinematicsPyImportError as error:
                progress.close()
                print(f"error: {error}", file=sys.stderr)
                return 2
        if args.batch_size and REFERENCE_SOLVER in args.solvers:
            progress.set_description(f"batch ({BATCH_ROBOT})")
            batch = run_batch(load_robot(BATCH_ROBOT, Path(scratch)), settings, args.batch_size, args.seed)
    load = (load_at_start, os.getloadavg()[0])
    report = markdown_report(results, unavailable, batch, args, settings, command, time.perf_counter() - began, load)
    args.output_dir.mkdir(parents=True, exist_ok=True)
    (args.output_dir / "ik_peers.md").write_text(report)
    plot(results, args, settings, args.output_dir / "ik_peers.png")
    print(report)
    print(f"wrote {args.output_dir / 'ik_peers.md'} and {args.output_dir / 'ik_peers.png'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
