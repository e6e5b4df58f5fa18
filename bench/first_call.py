"""The first call of each of kinematics_node's services in a fresh node process, after the set-up.

    .venv/bin/python bench/first_call.py [--robot ur5|panda] [--output bench/results/first_call_<robot>.json]

Run it after ``scripts/setup_venv.sh`` (which fills numba's cache: ``python -m kinematics_py.warm_up``). It starts
kinematics_node on a bundled robot in a new process (its own ROS_DOMAIN_ID unless set, discovery on this machine),
waits until compute_fk serves and every service has answered a request it refuses before computing (so DDS
discovery is complete), then times from this process the first call that computes of each service, in the order
of ``test/ros/first_calls.py``: compute_fk, compute_ik, apply_planning_scene (a box around a link of
configuration A, as ``make run`` places it), get_planning_scene, check_state_validity of A (contacts; whole
robot, then the group), collision-aware compute_ik and compute_cartesian_path. Then each call once more (warm).
The node runs under ``test/ros/processes/node_reporting_compiles.py``, and the numba kernels it compiled (none
when the warm-up covers them) are listed. Target: every first call within 100 ms.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parent.parent
NODE_SCRIPT = REPO / "test" / "ros" / "processes" / "node_reporting_compiles.py"
sys.path[:0] = [str(REPO / "test" / "ros"), str(NODE_SCRIPT.parent)]  # first_calls, COMPILE_REPORT
READY_S = 240.0
CALL_TIMEOUT_S = 60.0
TARGET_MS = 100.0


def start_node(robot: str, namespace: str, log_dir: Path) -> subprocess.Popen:
    from kinematics_py.robots import bundled_robot_path

    parameters = {"robot_description": bundled_robot_path(robot).read_text(encoding="utf-8"),
                  "robot_description_semantic": bundled_robot_path(robot, "srdf").read_text(encoding="utf-8")}
    if robot == "ur5":
        parameters["robot_description_kinematics"] = yaml.safe_load((REPO / "config" / "kinematics.yaml").read_text())
    params = log_dir / "node.params.yaml"
    params.write_text(yaml.safe_dump({"/**": {"ros__parameters": parameters}}), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != "_ROS_WHEELS_BOOTSTRAP_COMPLETE"}
    with open(log_dir / "node.log", "wb") as log:
        return subprocess.Popen([sys.executable, str(NODE_SCRIPT), "--ros-args", "--params-file", str(params),
                                 "-r", f"__ns:={namespace}"], stdin=subprocess.DEVNULL, stdout=log,
                                stderr=subprocess.STDOUT, env=env)


def timed_first_calls(robot: str, namespace: str) -> list[dict]:
    """Each call's first and warm round trip [ms] and whether its answer was the expected one."""
    from first_calls import answering_services, first_calls

    from kinematics_py.ros.demo.client import KinematicsClient

    calls = first_calls(robot)
    client = KinematicsClient(namespace, node_name="bench_first_call")
    try:
        tip = calls[0].request.fk_link_names[0]
        if not client.wait_until_serving(tip, READY_S):
            raise SystemExit(f"the node did not serve compute_fk of {tip!r} within {READY_S} s")
        services = answering_services(client, READY_S)
        rows = {call.label: {"call": call.label, "ms": []} for call in calls}
        for _ in range(2):
            for call in calls:
                start = time.perf_counter()
                response = client.call(services[call.service], call.request, CALL_TIMEOUT_S)
                rows[call.label]["ms"].append((time.perf_counter() - start) * 1e3)
                rows[call.label].setdefault("wrong_answer", call.answered_as_expected(response))
        return list(rows.values())
    finally:
        client.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--robot", default="ur5", choices=("ur5", "panda"))
    parser.add_argument("--output", type=Path, help="default: bench/results/first_call_<robot>.json")
    options = parser.parse_args()
    os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    os.environ.setdefault("ROS_DOMAIN_ID", str(120 + os.getpid() % 100))
    from node_reporting_compiles import COMPILE_REPORT

    log_dir = Path(tempfile.mkdtemp(prefix="kinematics_py-first-call-"))
    namespace = f"/first_call_{os.getpid()}"
    node = start_node(options.robot, namespace, log_dir)
    try:
        rows = timed_first_calls(options.robot, namespace)
    finally:
        node.terminate()
        node.wait(10.0)
    log = (log_dir / "node.log").read_text(errors="replace")
    compiled = [line.split(COMPILE_REPORT, 1)[1].strip() for line in log.splitlines() if COMPILE_REPORT in line]
    print(f"kinematics_node on {options.robot} in a fresh process (log: {log_dir / 'node.log'})\n")
    print("| call | first [ms] | warm [ms] |\n|---|---:|---:|")
    for row in rows:
        first, warm = row["ms"]
        notes = [f"over {TARGET_MS:.0f} ms"] * (first > TARGET_MS) + [f"WRONG ANSWER: {row['wrong_answer']}"] * bool(
            row["wrong_answer"])
        print(f"| {row['call']} | {first:.1f}{' (' + '; '.join(notes) + ')' if notes else ''} | {warm:.1f} |")
    print(f"\nnumba kernels the node compiled: {len(compiled)}" + "".join(f"\n  {line}" for line in compiled))
    output = options.output or REPO / "bench" / "results" / f"first_call_{options.robot}.json"
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(json.dumps({"robot": options.robot, "machine": platform.machine(), "cpus": os.cpu_count(),
                                  "date": time.strftime("%Y-%m-%d %H:%M"), "calls": rows, "compiled": compiled},
                                 indent=1))
    return 1 if any(row["wrong_answer"] for row in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
