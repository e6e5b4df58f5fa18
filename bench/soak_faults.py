"""bench/soak.py's fault scenarios (issue 23): requests through robot swaps, a killed client's queue, a burst of huge
FK requests beside a small one. Each runs from client processes against one node (``soak.py --only swaps killed
burst``).

- swaps: --clients processes send IK requests (reachable poses of the UR5 and of the Panda in turn, 0.5 s
  timeouts, IN_FLIGHT at a time each, every one waited for up to 30 s) while the robot is swapped UR5 <-> Panda
  (robot_description and robot_description_semantic set atomically) every 0.5 s: every request counted against
  its answer (unanswered, wrong: a SUCCESS whose FK misses its pose, codes).
- killed: a client sends 4 unreachable IK requests (3 s timeouts) and 20 compute_fk requests for --fk-links
  links each (10,000), then is killed (SIGKILL); the first FK and IK latency of a client running beside it, five
  times.
- burst: one client keeps 20 compute_fk requests of --fk-links links in flight while another measures a
  one-link FK: its p50 / p99.
"""
from __future__ import annotations

import os
import subprocess
import sys
import time

import numpy as np

GROUPS = {"ur5": ("ur_manipulator", "tool0"), "panda": ("panda_arm", "panda_link8")}
CALL_WAIT_S = 30.0
#: IK requests each swap client keeps in flight.
IN_FLIGHT = 8


def _robot(name: str):
    from kinematics_py.model.robot_model import RobotModel
    from kinematics_py.robots import bundled_robot_path

    model = RobotModel.from_urdf_file(bundled_robot_path(name))
    group, tip = GROUPS[name]
    root = "base_link" if name == "ur5" else "panda_link0"
    return model.chain(root, tip), group


def swap_client(namespace: str, duration: float, seed: int, client_factory) -> dict:
    """IK requests for both robots in turn for ``duration`` [s], IN_FLIGHT at a time; every request counted
    against its answer (a request without one after CALL_WAIT_S is unanswered)."""
    from kinematics_py.ros.demo.client import ik_request

    rng = np.random.default_rng(seed)
    robots = [_robot("ur5"), _robot("panda")]
    client = client_factory(namespace, f"soak_swap_client_{seed}")
    pending: list = []  # (future, sent at, chain, group, target)
    sent, unanswered, wrong, codes = 0, 0, [], {}
    end = time.monotonic() + duration
    try:
        while pending or time.monotonic() < end:
            while time.monotonic() < end and len(pending) < IN_FLIGHT:
                chain, group = robots[sent % 2]
                target = chain.forward_kinematics(rng.uniform(np.maximum(chain.lower, -np.pi),
                                                              np.minimum(chain.upper, np.pi)))
                future = client.ik_client.call_async(ik_request(group, target, timeout=0.5))
                pending.append((future, time.monotonic(), chain, group, target))
                sent += 1
            client._executor.spin_once(timeout_sec=0.005)
            still = []
            for future, sent_at, chain, group, target in pending:
                if not future.done():
                    if time.monotonic() - sent_at > CALL_WAIT_S:
                        client.ik_client.remove_pending_request(future)
                        unanswered += 1
                    else:
                        still.append((future, sent_at, chain, group, target))
                    continue
                response = future.result()
                code = int(response.error_code.val)
                codes[code] = codes.get(code, 0) + 1
                if code == 1:
                    wrong += _missed(response, chain, group, target)
            pending = still
    finally:
        client.close()
    return {"sent": sent, "unanswered": unanswered, "wrong": wrong[:10], "codes": codes}


def _missed(response, chain, group: str, target) -> list[str]:
    """Why a SUCCESS answer is wrong ([] when its solution reaches ``target``)."""
    values = dict(zip(response.solution.joint_state.name, response.solution.joint_state.position))
    if not all(name in values for name in chain.joint_names):
        return [f"SUCCESS for {group} without its joints"]
    reached = chain.forward_kinematics([values[name] for name in chain.joint_names])
    return [f"SUCCESS for {group} misses the pose"] if np.linalg.norm(reached[:3, 3] - target[:3, 3]) > 2e-5 else []


def swap_robots(namespace: str, swaps: int, period: float, client_factory) -> int:
    """Set the UR5 and the Panda in turn (description and SRDF at once), ``swaps`` times; the count accepted."""
    from rcl_interfaces.srv import SetParametersAtomically
    from rclpy.parameter import Parameter

    from kinematics_py.robots import bundled_robot_path

    texts = {name: (bundled_robot_path(name).read_text(), bundled_robot_path(name, "srdf").read_text())
             for name in GROUPS}
    client = client_factory(namespace, "soak_robot_swapper")
    service = client.client(SetParametersAtomically, f"{client.prefix}kinematics_node/set_parameters_atomically")
    accepted = 0
    try:
        for swap in range(swaps):
            urdf, srdf = texts["panda" if swap % 2 == 0 else "ur5"]
            request = SetParametersAtomically.Request(parameters=[
                Parameter("robot_description", value=urdf).to_parameter_msg(),
                Parameter("robot_description_semantic", value=srdf).to_parameter_msg()])
            accepted += bool(client.call(service, request, 60.0).result.successful)
            time.sleep(period)
    finally:
        client.close()
    return accepted


def swaps(namespace: str, clients: int, count: int, env: dict, script: str, client_factory) -> dict:
    duration = count * 0.5 + 5.0
    workers = [subprocess.Popen([sys.executable, script, "--swap-client", namespace, "--duration", str(duration),
                                 "--seed", str(i)], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
               for i in range(clients)]
    time.sleep(3.0)  # the clients are sending
    accepted = swap_robots(namespace, count, 0.5, client_factory)
    results = [_json_result(process, duration + 120) for process in workers]
    codes: dict = {}
    for result in results:
        for code, n in result["codes"].items():
            codes[code] = codes.get(code, 0) + n
    return {"swaps accepted": accepted, "requests": sum(r["sent"] for r in results),
            "unanswered within 30 s": sum(r["unanswered"] for r in results),
            "wrong": [w for r in results for w in r["wrong"]][:10], "codes": codes}


def killed_client(namespace: str, links: int, client_factory) -> None:
    """4 unreachable 3 s IK requests and 20 FK requests of ``links`` links, then wait to be killed."""
    from kinematics_py.geometry.transforms import make_transform
    from kinematics_py.ros.demo.client import fk_request, ik_request

    client = client_factory(namespace, f"soak_killed_{os.getpid()}")
    futures = [client.ik_client.call_async(ik_request("ur_manipulator", make_transform(None, (0.0, 0.0, 0.5)),
                                                      timeout=3.0)) for _ in range(4)]
    futures += [client.fk_client.call_async(fk_request(["tool0"] * links)) for _ in range(20)]
    print("sent", flush=True)
    for future in futures:
        client.spin_until(future, 60.0)


def killed(namespace: str, rounds: int, links: int, env: dict, script: str, client_factory) -> dict:
    """The first FK and IK of a client that was already running when the other was killed."""
    from kinematics_py.ros.demo.client import fk_request, ik_request

    chain, group = _robot("ur5")
    target = chain.forward_kinematics([0.3, -1.2, 1.4, -1.6, -1.5, 0.2])
    fk_times, ik_times, codes = [], [], []
    client = client_factory(namespace, "soak_after_killed")
    try:
        for _ in range(rounds):
            victim = subprocess.Popen([sys.executable, script, "--killed-client", namespace, "--fk-links",
                                       str(links)], env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                      text=True)
            victim.stdout.readline()
            time.sleep(0.2)
            victim.kill()
            victim.wait()
            began = time.perf_counter()
            client.call(client.fk_client, fk_request(["tool0"]), 60.0)
            fk_times.append(time.perf_counter() - began)
            began = time.perf_counter()
            codes.append(int(client.call(client.ik_client, ik_request(group, target, timeout=0.05), 60.0)
                             .error_code.val))
            ik_times.append(time.perf_counter() - began)
            time.sleep(8.0)  # the node finishes the dead client's work before the next round
    finally:
        client.close()
    return {"FK links of the killed client's requests": links,
            "first FK after a killed client [ms]": [round(t * 1e3, 1) for t in fk_times],
            "first IK after it [ms]": [round(t * 1e3, 1) for t in ik_times], "IK codes": codes}


def burst_client(namespace: str, duration: float, links: int, client_factory) -> None:
    """Keep 20 FK requests of ``links`` links in flight for ``duration`` [s]."""
    from kinematics_py.ros.demo.client import fk_request

    client = client_factory(namespace, "soak_burst")
    pending = []
    end = time.monotonic() + duration
    print("started", flush=True)
    try:
        while time.monotonic() < end:
            pending = [f for f in pending if not f.done()]
            while len(pending) < 20:
                pending.append(client.fk_client.call_async(fk_request(["tool0"] * links)))
            client._executor.spin_once(timeout_sec=0.01)
    finally:
        client.close()


def burst(namespace: str, calls: int, links: int, env: dict, script: str, client_factory, percentiles) -> dict:
    from kinematics_py.ros.demo.client import fk_request

    client = client_factory(namespace, "soak_small_fk")
    quiet = []
    for _ in range(calls):
        began = time.perf_counter()
        client.call(client.fk_client, fk_request(["tool0"]), 60.0)
        quiet.append(time.perf_counter() - began)
    heavy = subprocess.Popen([sys.executable, script, "--burst-client", namespace, "--duration", "300",
                              "--fk-links", str(links)], env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                             text=True)
    heavy.stdout.readline()
    time.sleep(2.0)
    beside = []
    try:
        for _ in range(calls):
            began = time.perf_counter()
            client.call(client.fk_client, fk_request(["tool0"]), 60.0)
            beside.append(time.perf_counter() - began)
    finally:
        heavy.kill()
        heavy.wait()
        client.close()
    return {"small FK alone": percentiles(quiet),
            f"small FK beside 20 x {links}-link FK in flight": percentiles(beside)}


def _json_result(process: subprocess.Popen, timeout: float) -> dict:
    import json

    out, err = process.communicate(timeout=timeout)
    if process.returncode != 0:
        raise SystemExit(f"client failed:\n{err[-3000:]}")
    return json.loads(out.strip().splitlines()[-1])
