"""A load client: N compute_ik and N compute_fk calls on the bundled UR5, each answer checked; JSON summary on stdout.

IK targets are poses of random configurations (seeded by --seed); an answer is correct when it is SUCCESS
and the core model's FK of the returned joints reaches the target. FK answers are compared with the core
model. Exit codes: 0 done (see the JSON for correctness), 2 services not found within --wait.
"""
import argparse
import json
import sys
import time

import numpy as np

from kinematics_py.geometry.poses import transform_from_any_pose
from kinematics_py.model.robot_model import RobotModel
from kinematics_py.robots import bundled_robot_path
from kinematics_py.ros.demo.client import KinematicsClient, fk_request, ik_request

GROUP = "ur_manipulator"
TOLERANCE_M = 2e-5
TOLERANCE_RAD = 2e-5
#: Generous, so that every answer is a solution however loaded the machine (the node's default, 50 ms, counts the
#: wait behind the other clients' requests; bench/soak.py measures deadlines under load).
IK_TIMEOUT_S = 5.0
CALL_TIMEOUT_S = 30.0


def pose_errors(T_a, T_b):
    R = T_a[:3, :3].T @ T_b[:3, :3]
    return float(np.linalg.norm(T_a[:3, 3] - T_b[:3, 3])), float(np.arccos(np.clip((np.trace(R) - 1) / 2, -1, 1)))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--namespace", required=True)
    parser.add_argument("--requests", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--wait", type=float, default=60.0, help="[s]")
    args = parser.parse_args()

    model = RobotModel.from_urdf_file(bundled_robot_path("ur5"))
    chain = model.chain("base_link", "tool0")
    rng = np.random.default_rng(args.seed)
    client = KinematicsClient(args.namespace, node_name=f"ik_load_client_{args.seed}")
    try:
        if not client.wait_for_services(args.wait):
            print(f"services not found within {args.wait} s", file=sys.stderr)
            return 2
        failures, ik_ok, fk_ok, latencies = [], 0, 0, []
        seed = dict(zip(chain.joint_names, np.full(chain.dof, 0.1)))
        for index in range(args.requests):
            q = rng.uniform(-np.pi, np.pi, chain.dof)
            target = chain.forward_kinematics(q)
            start = time.perf_counter()
            try:
                response = client.call(client.ik_client, ik_request(GROUP, target, seed=seed, timeout=IK_TIMEOUT_S),
                                       CALL_TIMEOUT_S)
            except TimeoutError as error:
                failures.append(f"ik {index}: {error}")
                continue
            latencies.append(time.perf_counter() - start)
            if response.error_code.val != 1:
                failures.append(f"ik {index}: {response.error_code.val} {response.error_code.message}")
            else:
                values = dict(zip(response.solution.joint_state.name, response.solution.joint_state.position))
                reached = chain.forward_kinematics([values[name] for name in chain.joint_names])
                position_error, rotation_error = pose_errors(reached, target)
                if position_error <= TOLERANCE_M and rotation_error <= TOLERANCE_RAD:
                    ik_ok += 1
                else:
                    failures.append(f"ik {index}: off by {position_error:.2e} m, {rotation_error:.2e} rad")
            try:
                response = client.call(client.fk_client, fk_request(["tool0"], dict(zip(chain.joint_names, q))),
                                       CALL_TIMEOUT_S)
            except TimeoutError as error:
                failures.append(f"fk {index}: {error}")
                continue
            answered = transform_from_any_pose(response.pose_stamped[0].pose) if response.pose_stamped else None
            if response.error_code.val == 1 and answered is not None and max(pose_errors(answered, target)) < 1e-7:
                fk_ok += 1
            else:
                failures.append(f"fk {index}: {response.error_code.val} {response.error_code.message}")
        print(json.dumps({"ik_ok": ik_ok, "fk_ok": fk_ok, "failures": failures[:10],
                          "ik_p50_ms": float(np.percentile(latencies, 50) * 1e3)}))
        return 0
    finally:
        client.close()


if __name__ == "__main__":
    sys.exit(main())
