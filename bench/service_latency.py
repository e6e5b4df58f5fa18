"""Round-trip latency and throughput of kinematics_node's compute_ik and compute_fk over DDS on loopback.

    .venv/bin/python bench/service_latency.py [--calls 2000] [--clients 1 2 4 8] [--duration 5]
                                              [--output bench/results/service_latency.json]

Starts kinematics_node on the bundled UR5 (config/kinematics.yaml) in its own process, with DDS discovery
limited to this machine, its own ROS_DOMAIN_ID (unless set) and namespace, and measures from client
processes (each call waits for its answer before the next is sent):

- latency, one client: compute_ik for poses of random configurations within +-pi (all reachable), seeded
  with a fixed state ("fixed seed") and with the target's configuration moved by 0.1 rad per joint
  ("nearby seed", as when a planner asks for a pose close to the current one); compute_fk of tool0.
  Every IK answer is checked (SUCCESS, FK of the answer reaches the target).
- throughput: N client processes calling compute_ik (fixed seed) back to back for --duration seconds.
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

import numpy as np
import yaml

REPO = Path(__file__).resolve().parent.parent
GROUP = "ur_manipulator"
POSITION_TOLERANCE_M = 2e-5


def percentiles(samples_s) -> dict[str, float]:
    ms = np.asarray(samples_s) * 1e3
    return {"p50_ms": float(np.percentile(ms, 50)), "p90_ms": float(np.percentile(ms, 90)),
            "p99_ms": float(np.percentile(ms, 99)), "max_ms": float(ms.max()), "calls": int(len(ms))}


# ------------------------------------------------------------------------------------------ client side
def _client(namespace: str, name: str):
    from kinematics_py.demo_client import KinematicsClient

    client = KinematicsClient(namespace, node_name=name)
    if not client.wait_for_services(120.0):
        raise SystemExit(f"{name}: services under {namespace} not found")
    return client


def _targets(count: int, seed: int):
    from kinematics_py.robot_model import RobotModel
    from kinematics_py.robots import bundled_robot_path

    chain = RobotModel.from_urdf_file(bundled_robot_path("ur5")).chain("base_link", "tool0")
    q = np.random.default_rng(seed).uniform(-np.pi, np.pi, (count, chain.dof))
    return chain, q, chain.forward_kinematics(q)


def latency(namespace: str, calls: int) -> dict:
    from kinematics_py.demo_client import fk_request, ik_request

    client = _client(namespace, "bench_latency")
    chain, configurations, targets = _targets(calls, seed=1)
    fixed_seed = dict(zip(chain.joint_names, np.full(chain.dof, 0.1)))
    results = {}
    try:
        for label, seed_of in (("compute_ik, fixed seed", lambda q: fixed_seed),
                               ("compute_ik, nearby seed", lambda q: dict(zip(chain.joint_names, q + 0.1)))):
            times, solved = [], 0
            for q, T in zip(configurations, targets):
                request = ik_request(GROUP, T, seed=seed_of(q))
                start = time.perf_counter()
                response = client.call(client.ik_client, request)
                times.append(time.perf_counter() - start)
                if response.error_code.val == 1:
                    values = dict(zip(response.solution.joint_state.name, response.solution.joint_state.position))
                    reached = chain.forward_kinematics([values[n] for n in chain.joint_names])
                    solved += int(np.linalg.norm(reached[:3, 3] - T[:3, 3]) <= POSITION_TOLERANCE_M)
            results[label] = {**percentiles(times[len(times) // 10:]), "solved": solved, "of": len(targets)}
        times = []
        for q in configurations:
            request = fk_request(["tool0"], dict(zip(chain.joint_names, q)))
            start = time.perf_counter()
            client.call(client.fk_client, request)
            times.append(time.perf_counter() - start)
        results["compute_fk"] = percentiles(times[len(times) // 10:])
    finally:
        client.close()
    return results


def worker(namespace: str, duration: float, seed: int, start_at: float) -> dict:
    from kinematics_py.demo_client import ik_request

    client = _client(namespace, f"bench_worker_{seed}")
    chain, _, targets = _targets(4096, seed=100 + seed)
    fixed_seed = dict(zip(chain.joint_names, np.full(chain.dof, 0.1)))
    requests = [ik_request(GROUP, T, seed=fixed_seed) for T in targets]
    time.sleep(max(0.0, start_at - time.time()))
    times, answered, failed = [], 0, 0
    deadline = time.perf_counter() + duration
    try:
        while time.perf_counter() < deadline:
            start = time.perf_counter()
            response = client.call(client.ik_client, requests[answered % len(requests)])
            times.append(time.perf_counter() - start)
            answered += 1
            failed += response.error_code.val != 1
    finally:
        client.close()
    return {"answered": answered, "failed": failed, "latencies_s": times}


# ------------------------------------------------------------------------------------------ orchestration
def start_node(directory: Path, namespace: str, env: dict) -> subprocess.Popen:
    from kinematics_py.robots import bundled_robot_path

    parameters = {
        "robot_description": bundled_robot_path("ur5").read_text(),
        "robot_description_semantic": bundled_robot_path("ur5", "srdf").read_text(),
        "robot_description_kinematics": yaml.safe_load((REPO / "config" / "kinematics.yaml").read_text()),
    }
    params_file = directory / "node.params.yaml"
    params_file.write_text(yaml.safe_dump({"/**": {"ros__parameters": parameters}}))
    log = open(directory / "node.log", "wb")
    return subprocess.Popen([sys.executable, "-m", "kinematics_py.node", "--ros-args", "--params-file",
                             str(params_file), "-r", f"__ns:={namespace}"], env=env, stdout=log,
                            stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)


def run_python(args: list[str], env: dict, timeout: float) -> dict:
    output = subprocess.run([sys.executable, __file__, *args], env=env, capture_output=True, text=True,
                            timeout=timeout)
    if output.returncode != 0:
        raise SystemExit(f"{args[0]} failed:\n{output.stderr[-3000:]}")
    return json.loads(output.stdout.strip().splitlines()[-1])


def throughput(namespace: str, clients: int, duration: float, env: dict) -> dict:
    start_at = time.time() + 3.0  # every worker has found the services by then
    processes = [subprocess.Popen([sys.executable, __file__, "--worker", namespace, "--duration", str(duration),
                                   "--seed", str(i), "--start-at", str(start_at)], env=env,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                 for i in range(clients)]
    results = []
    for process in processes:
        out, err = process.communicate(timeout=duration + 180)
        if process.returncode != 0:
            raise SystemExit(f"worker failed:\n{err[-3000:]}")
        results.append(json.loads(out.strip().splitlines()[-1]))
    answered = sum(r["answered"] for r in results)
    latencies = [t for r in results for t in r["latencies_s"]]
    return {"clients": clients, "answers_per_s": answered / duration, "failed": sum(r["failed"] for r in results),
            **percentiles(latencies)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=2000, help="calls per latency series")
    parser.add_argument("--clients", type=int, nargs="+", default=[1, 2, 4, 8])
    parser.add_argument("--duration", type=float, default=5.0, help="[s] per throughput run")
    parser.add_argument("--output", type=Path, help="also write the results as JSON here")
    parser.add_argument("--latency", metavar="NAMESPACE", help=argparse.SUPPRESS)
    parser.add_argument("--worker", metavar="NAMESPACE", help=argparse.SUPPRESS)
    parser.add_argument("--seed", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--start-at", type=float, default=0.0, help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.latency:
        print(json.dumps(latency(options.latency, options.calls)))
        return 0
    if options.worker:
        print(json.dumps(worker(options.worker, options.duration, options.seed, options.start_at)))
        return 0

    directory = Path(tempfile.mkdtemp(prefix="kinematics_py-bench-"))
    env = dict(os.environ)
    env.pop("_ROS_WHEELS_BOOTSTRAP_COMPLETE", None)
    env.setdefault("ROS_DOMAIN_ID", str(1 + os.getpid() % 100))
    env.update(ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST", ROS_LOG_DIR=str(directory / "ros_log"))
    namespace = f"/bench_{os.getpid()}"
    node = start_node(directory, namespace, env)
    try:
        results = {"machine": {"cpus": os.cpu_count(), "python": platform.python_version(),
                               "processor": platform.processor() or platform.machine()},
                   "latency": run_python(["--latency", namespace, "--calls", str(options.calls)], env, 900),
                   "throughput": [throughput(namespace, n, options.duration, env) for n in options.clients]}
    finally:
        node.terminate()
        node.wait(timeout=10)
    print(f"kinematics_node on the bundled UR5, DDS on loopback, {results['machine']['cpus']} CPUs "
          f"(one client, sequential calls; first 10 % dropped as warm-up):")
    for label, figures in results["latency"].items():
        solved = f", {figures['solved']}/{figures['of']} solved and verified" if "solved" in figures else ""
        print(f"  {label:<24} p50 {figures['p50_ms']:6.2f} ms  p90 {figures['p90_ms']:6.2f} ms  "
              f"p99 {figures['p99_ms']:6.2f} ms  max {figures['max_ms']:7.2f} ms{solved}")
    print(f"compute_ik throughput, clients calling back to back for {options.duration:g} s:")
    for figures in results["throughput"]:
        print(f"  {figures['clients']} client(s): {figures['answers_per_s']:7.0f} answers/s, "
              f"latency p50 {figures['p50_ms']:.2f} ms, p99 {figures['p99_ms']:.2f} ms, failed {figures['failed']}")
    if options.output:
        options.output.write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
