"""Load and soak of kinematics_node over DDS on loopback: deadlines, starvation, mixed load, shutdown (issue 9).

    .venv/bin/python bench/soak.py [--duration 30] [--clients 4] [--output bench/results/soak.json]
                                   [--only deadlines starvation orphans mixed shutdown swaps killed burst]

Starts kinematics_node on the bundled UR5 (config/kinematics.yaml) in its own process (its own namespace,
ROS_DOMAIN_ID unless set, discovery limited to this machine) and runs these scenarios, each from client
processes:

- deadlines: unreachable poses (every search runs its whole budget) at 5 ms, 50 ms and 0.5 s, with and without
  avoid_collisions, one at a time: how late past its timeout each answer arrives (p50, p99, max [ms]); beside
  them, the DDS baseline: FK round trips [ms] of the same client, each after idling as long as the budget.
- starvation: 12 searches of 2 s sent at once, then a 5 ms IK of a reachable pose and an FK: their latency
  (target 200 ms), five times.
- orphans: a client sends six 2 s searches and is killed (SIGKILL) 0.2 s later; another client's 50 ms IK
  and FK right after: their latency, five times.
- mixed: --clients processes for --duration s, each a random mix of IK (reachable and unreachable poses,
  5-50 ms, avoid_collisions or not), FK, check_state_validity and collision_object updates, while this script
  swaps the robot description (the UR5 and an edited copy) every 2 s: answers per second, p50/p99 per service,
  IK deadline overshoot (answer time - timeout: p50, p99, max; in all, without and with avoid_collisions),
  wrong answers (a SUCCESS whose FK misses the goal, a code the docs do not list), internal errors in the
  node's log, the node's RSS before and after.
- shutdown: a fresh node with six 10 s searches running gets SIGINT (then SIGTERM): time to exit, exit code,
  what the searches were answered, anything on stderr beside the node's INFO lines.

- swaps, killed, burst: the fault scenarios of ``soak_faults`` (requests counted through robot swaps, a killed
  client's queue, huge FK requests beside a small one); not run unless named.

Figures depend on the machine's load: run it on a quiet machine and compare runs side by side.
"""
from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import soak_faults
from service_latency import isolated_ros_env, percentiles, start_node, stop_node  # bench/ is the script's folder

REPO = Path(__file__).resolve().parent.parent
GROUP = "ur_manipulator"
#: A position the UR5's tool0 cannot take with the base's orientation (its wrist point would be on the base axis),
#: which the closed form cannot rule out at once: the search runs to its timeout (a pose beyond the arm's reach
#: is answered at once, test/robots.py's UR5_UNREACHABLE_POSITION).
UNREACHABLE = (0.0, 0.0, 0.5)
POSITION_TOLERANCE_M = 2e-5
STARVATION_SEARCHES = 12
#: Codes an IK answer may carry under this load (docs/node.md).
IK_CODES = {1, -31, -6, -12}


# ------------------------------------------------------------------------------------------ client side
def _client(namespace: str, name: str):
    from kinematics_py.ros.demo.client import KinematicsClient

    client = KinematicsClient(namespace, node_name=name)
    if not client.wait_for_services(120.0):
        raise SystemExit(f"{name}: services under {namespace} not found")
    return client


def _chain():
    from kinematics_py.model.robot_model import RobotModel
    from kinematics_py.robots import bundled_robot_path

    return RobotModel.from_urdf_file(bundled_robot_path("ur5")).chain("base_link", "tool0")


def _timed_call(client, service, request, timeout: float = 60.0):
    started = time.perf_counter()
    response = client.call(service, request, timeout)
    return response, time.perf_counter() - started


def deadlines(namespace: str, calls: int) -> dict:
    from kinematics_py.geometry.transforms import make_transform
    from kinematics_py.ros.demo.client import fk_request, ik_request

    client = _client(namespace, "soak_deadlines")
    results = {}
    try:
        for budget in (0.005, 0.05, 0.5):
            for avoid in (False, True):
                request = ik_request(GROUP, make_transform(None, UNREACHABLE), timeout=budget, avoid_collisions=avoid)
                late = []
                for _ in range(calls if budget < 0.5 else max(10, calls // 10)):
                    response, elapsed = _timed_call(client, client.ik_client, request)
                    late.append(elapsed - budget)
                label = f"{budget * 1e3:g} ms, avoid_collisions={str(avoid).lower()}"
                results[label] = {**_overshoot(late), "codes": _counts([response.error_code.val])}
            round_trips = []
            for _ in range(calls if budget < 0.5 else max(10, calls // 10)):
                time.sleep(budget)
                round_trips.append(_timed_call(client, client.fk_client, fk_request(["tool0"]))[1])
            ms = np.asarray(round_trips) * 1e3
            results[f"{budget * 1e3:g} ms, FK round trip after as long idle (DDS baseline)"] = {
                "p50_ms": float(np.percentile(ms, 50)), "p99_ms": float(np.percentile(ms, 99)),
                "max_ms": float(ms.max())}
    finally:
        client.close()
    return results


def _overshoot(late_s) -> dict:
    ms = np.asarray(late_s) * 1e3
    return {"late_p50_ms": float(np.percentile(ms, 50)), "late_p99_ms": float(np.percentile(ms, 99)),
            "late_max_ms": float(ms.max()), "calls": int(len(ms))}


def _counts(values) -> dict:
    keys, counts = np.unique(np.asarray(values), return_counts=True)
    return {str(k): int(c) for k, c in zip(keys, counts)}


def starvation(namespace: str, rounds: int) -> dict:
    from kinematics_py.geometry.transforms import make_transform
    from kinematics_py.ros.demo.client import fk_request, ik_request

    client = _client(namespace, "soak_starvation")
    target = _chain().forward_kinematics([0.3, -1.2, 1.4, -1.6, -1.5, 0.2])
    ik_times, fk_times, codes = [], [], []
    try:
        for _ in range(rounds):
            searches = [client.ik_client.call_async(ik_request(GROUP, make_transform(None, UNREACHABLE), timeout=2.0))
                        for _ in range(STARVATION_SEARCHES)]
            time.sleep(0.3)
            response, elapsed = _timed_call(client, client.ik_client, ik_request(GROUP, target, timeout=0.005))
            ik_times.append(elapsed)
            codes.append(response.error_code.val)
            fk_times.append(_timed_call(client, client.fk_client, fk_request(["tool0"]))[1])
            for future in searches:
                client.spin_until(future, 10.0)
    finally:
        client.close()
    return {"5 ms IK behind 12 x 2 s searches": {**percentiles(ik_times), "codes": _counts(codes)},
            "FK behind 12 x 2 s searches": percentiles(fk_times)}


def orphan_client(namespace: str) -> None:
    """Send six 2 s searches and wait (to be killed)."""
    from kinematics_py.geometry.transforms import make_transform
    from kinematics_py.ros.demo.client import ik_request

    client = _client(namespace, f"soak_orphan_{os.getpid()}")
    futures = [client.ik_client.call_async(ik_request(GROUP, make_transform(None, UNREACHABLE), timeout=2.0))
               for _ in range(6)]
    print("sent", flush=True)
    for future in futures:
        client.spin_until(future, 30.0)


def orphans(namespace: str, rounds: int, env: dict) -> dict:
    from kinematics_py.ros.demo.client import fk_request, ik_request

    client = _client(namespace, "soak_after_orphans")
    target = _chain().forward_kinematics([0.3, -1.2, 1.4, -1.6, -1.5, 0.2])
    ik_times, fk_times, codes = [], [], []
    try:
        for _ in range(rounds):
            orphan = subprocess.Popen([sys.executable, __file__, "--orphan", namespace], env=env,
                                      stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
            orphan.stdout.readline()
            time.sleep(0.2)
            orphan.kill()
            orphan.wait()
            response, elapsed = _timed_call(client, client.ik_client, ik_request(GROUP, target, timeout=0.05))
            ik_times.append(elapsed)
            codes.append(response.error_code.val)
            fk_times.append(_timed_call(client, client.fk_client, fk_request(["tool0"]))[1])
            time.sleep(2.0)
    finally:
        client.close()
    return {"50 ms IK after a client killed with 6 x 2 s searches": {**percentiles(ik_times), "codes": _counts(codes)},
            "FK after it": percentiles(fk_times)}


def worker(namespace: str, duration: float, seed: int) -> dict:
    """A random mix of requests for ``duration`` [s]; every answer checked."""
    from moveit_msgs.msg import CollisionObject
    from moveit_msgs.srv import GetStateValidity

    from kinematics_py.geometry.transforms import make_transform
    from kinematics_py.ros.demo.client import box_object, fk_request, ik_request, state_validity_request
    from kinematics_py.ros.topics.scene_topics import SCENE_QOS

    rng = np.random.default_rng(seed)
    chain = _chain()
    client = _client(namespace, f"soak_worker_{seed}")
    validity = client.client(GetStateValidity, f"{client.prefix}check_state_validity")
    # a request sent before the service's answers can reach this client goes unanswered (KinematicsClient)
    if not client.wait_until_answering(validity, GetStateValidity.Request(), 120.0):
        raise SystemExit(f"soak_worker_{seed}: check_state_validity not answering")
    scene = client.node.create_publisher(CollisionObject, f"{client.prefix}collision_object", SCENE_QOS)
    latencies = {"ik": [], "fk": [], "validity": []}
    late, wrong, codes = {False: [], True: []}, [], []  # lateness by avoid_collisions
    end = time.monotonic() + duration
    try:
        while time.monotonic() < end:
            kind = rng.choice(["ik", "ik", "fk", "validity", "scene"])
            q = rng.uniform(-np.pi, np.pi, chain.dof)
            if kind == "scene":
                box = box_object(f"box_{seed}", 0.1, make_transform(None, (3.0, 3.0, float(rng.uniform(0, 1)))), "")
                scene.publish(box)
                continue
            if kind == "ik":
                budget = float(rng.uniform(0.005, 0.05))
                target = make_transform(None, UNREACHABLE) if rng.random() < 0.2 else chain.forward_kinematics(q)
                avoid = bool(rng.random() < 0.5)
                request = ik_request(GROUP, target, timeout=budget, avoid_collisions=avoid)
                response, elapsed = _timed_call(client, client.ik_client, request)
                late[avoid].append(elapsed - budget)
                code = response.error_code.val
                codes.append(code)
                if code not in IK_CODES or "internal error" in response.error_code.message:
                    wrong.append(f"IK {code}: {response.error_code.message[:200]}")
                elif code == 1:
                    values = dict(zip(response.solution.joint_state.name, response.solution.joint_state.position))
                    reached = chain.forward_kinematics([values[name] for name in chain.joint_names])
                    if np.linalg.norm(reached[:3, 3] - target[:3, 3]) > POSITION_TOLERANCE_M:
                        wrong.append("IK SUCCESS misses the goal")
            elif kind == "fk":
                response, elapsed = _timed_call(client, client.fk_client, fk_request(["tool0"],
                                                                                     dict(zip(chain.joint_names, q))))
                T = chain.forward_kinematics(q)
                position = response.pose_stamped[0].pose.position if response.pose_stamped else None
                if response.error_code.val != 1 or position is None or \
                        np.linalg.norm(np.array([position.x, position.y, position.z]) - T[:3, 3]) > 1e-9:
                    wrong.append(f"FK {response.error_code.val}: {response.error_code.message[:200]}")
            else:
                response, elapsed = _timed_call(client, validity, state_validity_request(
                    dict(zip(chain.joint_names, q)), GROUP))
            latencies[kind].append(elapsed)
    finally:
        client.close()
    return {"latencies_s": latencies, "late_s": late[False], "late_avoiding_s": late[True], "wrong": wrong,
            "codes": codes}


# ------------------------------------------------------------------------------------------ node side
def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def swap_descriptions(namespace: str, stop_at: float) -> int:
    """Set robot_description to the UR5 and an edited copy in turn, every 2 s, until ``stop_at``; the count."""
    from rcl_interfaces.srv import SetParameters
    from rclpy.parameter import Parameter

    from kinematics_py.robots import bundled_robot_path

    client = _client(namespace, "soak_swapper")
    urdf = bundled_robot_path("ur5").read_text()
    service = client.client(SetParameters, f"{client.prefix}kinematics_node/set_parameters")
    swaps = 0
    try:
        while time.monotonic() < stop_at:
            text = urdf if swaps % 2 else urdf.replace("</robot>", f"<!-- swap {swaps} --></robot>")
            request = SetParameters.Request(parameters=[Parameter("robot_description", value=text).to_parameter_msg()])
            if client.call(service, request, 60.0).results[0].successful:
                swaps += 1
            time.sleep(2.0)
    finally:
        client.close()
    return swaps


def mixed(namespace: str, clients: int, duration: float, env: dict, node: subprocess.Popen, log: Path) -> dict:
    rss_before = rss_mb(node.pid)
    workers = [subprocess.Popen([sys.executable, __file__, "--worker", namespace, "--duration", str(duration),
                                 "--seed", str(i)], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
               for i in range(clients)]
    swaps = swap_descriptions(namespace, time.monotonic() + duration + 3.0)
    results = []
    for process in workers:
        out, err = process.communicate(timeout=duration + 300)
        if process.returncode != 0:
            raise SystemExit(f"worker failed:\n{err[-3000:]}")
        results.append(json.loads(out.strip().splitlines()[-1]))
    answered = {kind: [t for r in results for t in r["latencies_s"][kind]] for kind in ("ik", "fk", "validity")}
    plain, avoiding = ([t for r in results for t in r[key]] for key in ("late_s", "late_avoiding_s"))
    return {"clients": clients, "duration_s": duration, "robot swaps": swaps,
            "answers_per_s": sum(len(v) for v in answered.values()) / duration,
            **{kind: percentiles(times) for kind, times in answered.items() if times},
            "ik deadline": _overshoot(plain + avoiding), "ik deadline without avoid_collisions": _overshoot(plain),
            "ik deadline with avoid_collisions": _overshoot(avoiding),
            "ik codes": _counts([c for r in results for c in r["codes"]]),
            "wrong": [w for r in results for w in r["wrong"]][:20],
            "internal errors in the node's log": log.read_text(errors="replace").count("internal error"),
            "rss_mb": {"before": rss_before, "after": rss_mb(node.pid)}}


def shutdown(directory: Path, namespace: str, env: dict, number: signal.Signals) -> dict:
    from kinematics_py.geometry.transforms import make_transform
    from kinematics_py.ros.demo.client import ik_request

    node = start_node(directory, namespace, env)
    client = _client(namespace, "soak_shutdown")
    try:
        client.wait_until_serving("tool0", 120.0)
        futures = [client.ik_client.call_async(ik_request(GROUP, make_transform(None, UNREACHABLE), timeout=10.0))
                   for _ in range(6)]
        client.spin_until(futures[0], 1.0)
        sent = time.perf_counter()
        node.send_signal(number)
        node.wait(timeout=30.0)
        exit_s = time.perf_counter() - sent
        for future in futures:
            client.spin_until(future, 2.0)
    finally:
        client.close()
        stop_node(node)
    output = (directory / "node.log").read_text(errors="replace").splitlines()
    return {"exit_s": exit_s, "exit_code": node.returncode,
            "answers": _counts([f.result().error_code.val if f.done() else "none" for f in futures]),
            "noise": [line for line in output if not line.startswith("[INFO]")][:10]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--duration", type=float, default=30.0, help="[s] of mixed load")
    parser.add_argument("--clients", type=int, default=4, help="client processes of the mixed load")
    parser.add_argument("--calls", type=int, default=200, help="calls per deadline series")
    parser.add_argument("--only", nargs="+", default=["deadlines", "starvation", "orphans", "mixed", "shutdown"])
    parser.add_argument("--output", type=Path, help="also write the results as JSON here")
    parser.add_argument("--worker", metavar="NAMESPACE", help=argparse.SUPPRESS)
    parser.add_argument("--orphan", metavar="NAMESPACE", help=argparse.SUPPRESS)
    parser.add_argument("--deadlines", metavar="NAMESPACE", help=argparse.SUPPRESS)
    parser.add_argument("--starvation", metavar="NAMESPACE", help=argparse.SUPPRESS)
    parser.add_argument("--seed", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--swaps", type=int, default=42, help="robot swaps of the swaps scenario")
    parser.add_argument("--fk-links", type=int, default=10_000, help="links per FK request of killed and burst")
    parser.add_argument("--swap-client", metavar="NAMESPACE", help=argparse.SUPPRESS)
    parser.add_argument("--killed-client", metavar="NAMESPACE", help=argparse.SUPPRESS)
    parser.add_argument("--burst-client", metavar="NAMESPACE", help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.swap_client:
        print(json.dumps(soak_faults.swap_client(options.swap_client, options.duration, options.seed, _client)))
        return 0
    if options.killed_client:
        soak_faults.killed_client(options.killed_client, options.fk_links, _client)
        return 0
    if options.burst_client:
        soak_faults.burst_client(options.burst_client, options.duration, options.fk_links, _client)
        return 0
    if options.worker:
        print(json.dumps(worker(options.worker, options.duration, options.seed)))
        return 0
    if options.orphan:
        orphan_client(options.orphan)
        return 0

    directory = Path(tempfile.mkdtemp(prefix="kinematics_py-soak-"))
    env = isolated_ros_env(directory)
    os.environ.update(env)
    namespace = f"/soak_{os.getpid()}"
    results = {"machine": {"cpus": os.cpu_count(), "load average (1 min) at start": os.getloadavg()[0]}}
    if {"deadlines", "starvation", "orphans", "mixed", "swaps", "killed", "burst"} & set(options.only):
        node = start_node(directory, namespace, env)
        try:
            _client(namespace, "soak_ready").close()
            if "deadlines" in options.only:
                results["deadlines"] = deadlines(namespace, options.calls)
            if "starvation" in options.only:
                results["starvation"] = starvation(namespace, 5)
            if "orphans" in options.only:
                results["orphans"] = orphans(namespace, 5, env)
            if "mixed" in options.only:
                results["mixed"] = mixed(namespace, options.clients, options.duration, env, node,
                                         directory / "node.log")
            if "killed" in options.only:
                results["killed"] = soak_faults.killed(namespace, 5, options.fk_links, env, __file__, _client)
            if "burst" in options.only:
                results["burst"] = soak_faults.burst(namespace, options.calls, options.fk_links, env, __file__, _client,
                                                     percentiles)
            if "swaps" in options.only:
                results["swaps"] = soak_faults.swaps(namespace, options.clients, options.swaps, env, __file__, _client)
        finally:
            stop_node(node)
    if "shutdown" in options.only:
        results["shutdown"] = {number.name: shutdown(directory / number.name, f"{namespace}_{number.name}", env,
                                                     number)
                               for number in (signal.SIGINT, signal.SIGTERM)
                               if (directory / number.name).mkdir() is None}
    results["machine"]["load average (1 min) at end"] = os.getloadavg()[0]
    text = json.dumps(results, indent=1)
    print(text)
    if options.output:
        options.output.parent.mkdir(parents=True, exist_ok=True)
        options.output.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
