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
- floor: the same compute_fk and compute_ik (nearby seed) calls against a bare rclpy server that answers both
  at once with an empty SUCCESS (bench/bare_server.py), alternated with the node's in blocks: the node's own
  cost per request is the difference, and its ratio to the floor is the figure.
- collision-aware, on a second node with example-robot-data's UR5 (its collision meshes) and a world of a
  table under the robot and a box in its workspace, sent on the node's collision_object topic: compute_ik
  with avoid_collisions=true for poses of random collision-free configurations (fixed and nearby seed),
  every answer checked collision free with kinematics_py's checker in the client process; and
  check_state_validity of random configurations.
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
sys.path.append(str(REPO / "test"))  # the tests' locator of example-robot-data (its wheel has no module)
GROUP = "ur_manipulator"
POSITION_TOLERANCE_M = 2e-5
#: The collision series' world: name -> (box size, centre) [m] in the model frame. The table top is 5 mm
#: below the robot's base plate.
SCENE = {"table": ((1.2, 1.6, 0.1), (0.3, 0.0, -0.055)), "box": ((0.2, 0.2, 0.3), (0.45, -0.3, 0.15))}


def percentiles(samples_s) -> dict[str, float]:
    ms = np.asarray(samples_s) * 1e3
    return {"p50_ms": float(np.percentile(ms, 50)), "p90_ms": float(np.percentile(ms, 90)),
            "p99_ms": float(np.percentile(ms, 99)), "max_ms": float(ms.max()), "calls": int(len(ms))}


# ------------------------------------------------------------------------------------------ client side
def _client(namespace: str, name: str):
    from kinematics_py.ros.demo.client import KinematicsClient

    client = KinematicsClient(namespace, node_name=name)
    if not client.wait_for_services(120.0):
        raise SystemExit(f"{name}: services under {namespace} not found")
    return client


def _targets(count: int, seed: int):
    from kinematics_py.model.robot_model import RobotModel
    from kinematics_py.robots import bundled_robot_path

    chain = RobotModel.from_urdf_file(bundled_robot_path("ur5")).chain("base_link", "tool0")
    q = np.random.default_rng(seed).uniform(-np.pi, np.pi, (count, chain.dof))
    return chain, q, chain.forward_kinematics(q)


def latency(namespace: str, calls: int) -> dict:
    from kinematics_py.ros.demo.client import fk_request, ik_request

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


def floor(namespaces: list[str], calls: int, block: int = 100) -> dict:
    """compute_fk and compute_ik (nearby seed) round trips of each namespace's server, in alternating blocks of
    ``block`` calls (so both see the same machine), the first block of each dropped as warm-up."""
    from kinematics_py.ros.demo.client import fk_request, ik_request

    clients = [_client(namespace, f"bench_floor_{index}") for index, namespace in enumerate(namespaces)]
    chain, configurations, targets = _targets(calls, seed=5)
    times = [{"compute_fk": [], "compute_ik": []} for _ in namespaces]
    try:
        for start in range(0, calls, block):
            for client, series in zip(clients, times):
                for q, T in zip(configurations[start:start + block], targets[start:start + block]):
                    for label, service, request in (
                            ("compute_fk", client.fk_client, fk_request(["tool0"], dict(zip(chain.joint_names, q)))),
                            ("compute_ik", client.ik_client,
                             ik_request(GROUP, T, seed=dict(zip(chain.joint_names, q + 0.1))))):
                        began = time.perf_counter()
                        client.call(service, request)
                        if start:
                            series[label].append(time.perf_counter() - began)
    finally:
        for client in clients:
            client.close()
    return {namespace: {label: percentiles(samples) for label, samples in series.items()}
            for namespace, series in zip(namespaces, times)}


def collision_latency(namespace: str, calls: int) -> dict:
    """compute_ik with avoid_collisions and check_state_validity on the collision node, world SCENE."""
    from moveit_msgs.msg import CollisionObject
    from moveit_msgs.srv import GetStateValidity
    from shape_msgs.msg import SolidPrimitive

    from kinematics_py.geometry.transforms import make_transform
    from kinematics_py.ros.demo.client import ik_request
    from kinematics_py.ros.messages.conversions import pose_msg_from_transform

    client = _client(namespace, "bench_collision")
    checker, chain = _collision_checker()
    rng = np.random.default_rng(2)
    states = rng.uniform(-np.pi, np.pi, (20 * calls, chain.dof))
    free = states[~checker.check_batch(states)][:calls]
    validity = client.client(GetStateValidity, f"{namespace}/check_state_validity")
    publisher = client.node.create_publisher(CollisionObject, f"{namespace}/collision_object", 100)
    try:
        objects = []
        for name, (size, center) in SCENE.items():
            msg = CollisionObject(id=name, operation=CollisionObject.ADD,
                                  pose=pose_msg_from_transform(make_transform(None, center)),
                                  primitives=[SolidPrimitive(type=SolidPrimitive.BOX, dimensions=list(size))])
            msg.primitive_poses = [pose_msg_from_transform(np.eye(4))]
            objects.append(msg)
        witnesses = _colliding_states(checker, chain, rng)
        deadline = time.monotonic() + 60.0
        while not all(_contacts(client, validity, chain, q) >= {name} for name, q in witnesses.items()):
            if time.monotonic() > deadline:
                raise SystemExit("the collision node did not take the scene within 60 s")
            for msg in objects:
                publisher.publish(msg)
            time.sleep(0.2)

        fixed_seed = dict(zip(chain.joint_names, np.full(chain.dof, 0.1)))
        results = {}
        for label, seed_of in (("compute_ik, avoid_collisions, fixed seed", lambda q: fixed_seed),
                               ("compute_ik, avoid_collisions, nearby seed",
                                lambda q: dict(zip(chain.joint_names, q + 0.1)))):
            times, verified = [], 0
            for q in free:
                target = chain.forward_kinematics(q)
                request = ik_request(GROUP, target, seed=seed_of(q), avoid_collisions=True)
                start = time.perf_counter()
                response = client.call(client.ik_client, request)
                times.append(time.perf_counter() - start)
                if response.error_code.val == 1:
                    values = dict(zip(response.solution.joint_state.name, response.solution.joint_state.position))
                    answer = [values[n] for n in chain.joint_names]
                    reached = chain.forward_kinematics(answer)
                    verified += int(np.linalg.norm(reached[:3, 3] - target[:3, 3]) <= POSITION_TOLERANCE_M
                                    and not checker.is_colliding(dict(zip(chain.joint_names, answer))))
            results[label] = {**percentiles(times[len(times) // 10:]), "solved": verified, "of": len(free)}
        times = []
        for q in states[:calls]:
            start = time.perf_counter()
            _contacts(client, validity, chain, q)
            times.append(time.perf_counter() - start)
        results["check_state_validity, random state"] = percentiles(times[len(times) // 10:])
    finally:
        client.close()
    return results


def _collision_checker():
    """kinematics_py's checker of example-robot-data's UR5 with SCENE, and the UR5's chain."""
    from robots import example_robot_urdf, ur5_collision_srdf

    from kinematics_py import Box, CollisionChecker, RobotModel, SemanticModel
    from kinematics_py.geometry.transforms import make_transform

    model = RobotModel.from_urdf_file(example_robot_urdf("ur5"))
    checker = CollisionChecker(model, SemanticModel.from_srdf_string(ur5_collision_srdf(), model))
    for name, (size, center) in SCENE.items():
        checker.scene.add_object(name, [Box(size)], pose=make_transform(None, center))
    return checker, model.chain("base_link", "tool0")


def _colliding_states(checker, chain, rng) -> dict:
    """object -> a configuration colliding with that object (to see when the node has the scene)."""
    found = {}
    while len(found) < len(SCENE):
        q = rng.uniform(-np.pi, np.pi, chain.dof)
        pairs = checker.check(dict(zip(chain.joint_names, q))).pairs
        for name in SCENE:
            if name not in found and any(name in pair for pair in pairs):
                found[name] = q
    return found


def _contacts(client, validity, chain, q) -> set[str]:
    """Bodies in contact in the node's answer to check_state_validity for ``q``."""
    from moveit_msgs.srv import GetStateValidity

    request = GetStateValidity.Request(group_name=GROUP)
    request.robot_state.joint_state.name = list(chain.joint_names)
    request.robot_state.joint_state.position = [float(v) for v in q]
    response = client.call(validity, request)
    return {body for c in response.contacts for body in (c.contact_body_1, c.contact_body_2)}


def worker(namespace: str, duration: float, seed: int, start_at: float) -> dict:
    from kinematics_py.ros.demo.client import ik_request

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
def start_node(directory: Path, namespace: str, env: dict, collision: bool = False,
               extra: dict | None = None) -> subprocess.Popen:
    """The node on the bundled UR5, or (``collision``) on example-robot-data's UR5 with its collision meshes;
    ``extra``: further node parameters."""
    from robots import example_robot_urdf, ur5_collision_srdf

    from kinematics_py.robots import bundled_robot_path

    parameters = {
        "robot_description": example_robot_urdf("ur5").read_text() if collision else
        bundled_robot_path("ur5").read_text(),
        "robot_description_semantic": ur5_collision_srdf() if collision else
        bundled_robot_path("ur5", "srdf").read_text(),
        "robot_description_kinematics": yaml.safe_load((REPO / "config" / "kinematics.yaml").read_text()),
        **(extra or {}),
    }
    name = "collision_node" if collision else "node"
    params_file = directory / f"{name}.params.yaml"
    params_file.write_text(yaml.safe_dump({"/**": {"ros__parameters": parameters}}))
    with open(directory / f"{name}.log", "wb") as log:  # the child keeps its own copy of the file
        return subprocess.Popen([sys.executable, "-m", "kinematics_py.ros.node", "--ros-args", "--params-file",
                                 str(params_file), "-r", f"__ns:={namespace}"], env=env, stdout=log,
                                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)


def stop_node(node: subprocess.Popen, grace_s: float = 10.0) -> None:
    """SIGTERM, then SIGKILL if the node has not exited within ``grace_s`` [s] (said on stderr: the figures
    are complete by then)."""
    node.terminate()
    try:
        node.wait(timeout=grace_s)
    except subprocess.TimeoutExpired:
        print(f"kinematics_node (pid {node.pid}) did not exit within {grace_s:g} s of SIGTERM: killed",
              file=sys.stderr)
        node.kill()
        node.wait()


def run_python(args: list[str], env: dict, timeout: float, script: str = __file__) -> dict:
    """The JSON a run of ``script`` (default: this one) with ``args`` prints last."""
    output = subprocess.run([sys.executable, script, *args], env=env, capture_output=True, text=True,
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


def _print_floor(figures: dict, namespace: str) -> None:
    node, bare = figures[namespace], figures[f"{namespace}_bare"]
    print("kinematics_node (bundled UR5) against a bare rclpy server answering an empty SUCCESS, same client, "
          "alternating blocks:")
    for label in ("compute_fk", "compute_ik"):
        ours, floor_ = node[label], bare[label]
        print(f"  {label}: node p50 {ours['p50_ms']:.3f} p99 {ours['p99_ms']:.3f} ms | bare p50 "
              f"{floor_['p50_ms']:.3f} p99 {floor_['p99_ms']:.3f} ms | p50 x{ours['p50_ms'] / floor_['p50_ms']:.2f}, "
              f"p99 x{ours['p99_ms'] / floor_['p99_ms']:.2f}")


def isolated_ros_env(directory: Path) -> dict[str, str]:
    """This process's environment for the node and its clients: DDS on this machine only, a domain of its own
    (unless ROS_DOMAIN_ID is set), ROS logs in ``directory``."""
    env = dict(os.environ)
    env.pop("_ROS_WHEELS_BOOTSTRAP_COMPLETE", None)
    env.setdefault("ROS_DOMAIN_ID", str(1 + os.getpid() % 100))
    env.update(ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST", ROS_LOG_DIR=str(directory / "ros_log"))
    return env


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=2000, help="calls per latency series")
    parser.add_argument("--clients", type=int, nargs="+", default=[1, 2, 4, 8])
    parser.add_argument("--duration", type=float, default=5.0, help="[s] per throughput run")
    parser.add_argument("--output", type=Path, help="also write the results as JSON here")
    parser.add_argument("--latency", metavar="NAMESPACE", help=argparse.SUPPRESS)
    parser.add_argument("--collision-latency", metavar="NAMESPACE", help=argparse.SUPPRESS)
    parser.add_argument("--worker", metavar="NAMESPACE", help=argparse.SUPPRESS)
    parser.add_argument("--seed", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--start-at", type=float, default=0.0, help=argparse.SUPPRESS)
    parser.add_argument("--only-floor", action="store_true", help="only the node against the bare server")
    parser.add_argument("--floor", metavar="NAMESPACE", nargs=2, help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.floor:
        print(json.dumps(floor(options.floor, options.calls)))
        return 0
    if options.latency:
        print(json.dumps(latency(options.latency, options.calls)))
        return 0
    if options.collision_latency:
        print(json.dumps(collision_latency(options.collision_latency, options.calls)))
        return 0
    if options.worker:
        print(json.dumps(worker(options.worker, options.duration, options.seed, options.start_at)))
        return 0

    directory = Path(tempfile.mkdtemp(prefix="kinematics_py-bench-"))
    env = isolated_ros_env(directory)
    namespace = f"/bench_{os.getpid()}"
    node = start_node(directory, namespace, env)
    bare = subprocess.Popen([sys.executable, str(REPO / "bench" / "bare_server.py"), "--namespace",
                             f"{namespace}_bare"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        results = {"machine": {"cpus": os.cpu_count(), "python": platform.python_version(),
                               "processor": platform.processor() or platform.machine()},
                   "floor": run_python(["--floor", namespace, f"{namespace}_bare", "--calls", str(options.calls)],
                                       env, 900)}
        if not options.only_floor:
            results["latency"] = run_python(["--latency", namespace, "--calls", str(options.calls)], env, 900)
            results["throughput"] = [throughput(namespace, n, options.duration, env) for n in options.clients]
    finally:
        stop_node(node)
        stop_node(bare)
    _print_floor(results["floor"], namespace)
    if options.only_floor:
        return 0
    collision_node = start_node(directory, f"{namespace}_collision", env, collision=True)
    try:
        results["collision latency"] = run_python(["--collision-latency", f"{namespace}_collision", "--calls",
                                                   str(options.calls)], env, 900)
    finally:
        stop_node(collision_node)
    print(f"kinematics_node on the bundled UR5, DDS on loopback, {results['machine']['cpus']} CPUs "
          f"(one client, sequential calls; first 10 % dropped as warm-up):")
    for label, figures in results["latency"].items():
        solved = f", {figures['solved']}/{figures['of']} solved and verified" if "solved" in figures else ""
        print(f"  {label:<24} p50 {figures['p50_ms']:6.2f} ms  p90 {figures['p90_ms']:6.2f} ms  "
              f"p99 {figures['p99_ms']:6.2f} ms  max {figures['max_ms']:7.2f} ms{solved}")
    print("kinematics_node on example-robot-data's UR5 (collision meshes), world: a table under the robot and a "
          "box in its workspace; random collision-free targets:")
    for label, figures in results["collision latency"].items():
        solved = f", {figures['solved']}/{figures['of']} solved, verified collision free" if "solved" in figures \
            else ""
        print(f"  {label:<42} p50 {figures['p50_ms']:6.2f} ms  p90 {figures['p90_ms']:6.2f} ms  "
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
