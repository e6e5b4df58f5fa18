"""FK and Jacobian timing: kinematics_py chains against pinocchio on the same configurations.

    .venv/bin/python bench/fk_jacobian.py                  # Panda (7 joints) and UR5 (6 joints)
    .venv/bin/python bench/fk_jacobian.py --rounds 500 --block 50

Protocol: the bundled robots (kinematics_py/robots) loaded by both libraries; configurations
uniform within the joint limits (seed --seed). Each timed sample is one block of --block calls on
consecutive configurations, divided by the block size; the implementations alternate block by
block (the one going first alternates too), so background load falls on all alike. Every function
is called untimed first (numba compilation, caches). Reported: median microseconds per call over
--rounds samples, and the ratio kinematics_py / pinocchio (below 1: kinematics_py is faster).
Both sides return the same quantities: T_base_tip as a 4x4 / SE3, and the geometric Jacobian at
the tip origin in the base frame (pinocchio: LOCAL_WORLD_ALIGNED, base = the model root). The
pinocchio model is reduced to the chain's joints (the others locked), so neither side computes
joints off the chain. The answers are checked to agree before anything is timed. Batched FK: one call on --batch
configurations against a Python loop of pinocchio calls, in microseconds per configuration. Every link:
``RobotModel.link_poses`` (the whole tree, the chain's joints given by name) against pinocchio's full model.
"""
from __future__ import annotations

import argparse
import importlib.resources
import platform
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pinocchio as pin

try:
    import kinematics_py
except ImportError:  # running from a checkout without `pip install -e .`
    sys.path.append(str(Path(__file__).resolve().parents[1]))
    import kinematics_py

#: Max abs difference of any pose or Jacobian entry between the two libraries before timing.
AGREEMENT_TOLERANCE = 1e-9
WARMUP_CALLS = 200


@dataclass(frozen=True)
class BenchChain:
    label: str
    urdf: str
    base_link: str
    tip_link: str


CHAINS = (
    BenchChain("Panda (7)", "panda.urdf", "panda_link0", "panda_link8"),
    BenchChain("UR5 (6)", "ur5.urdf", "base_link", "tool0"),
)


class Subject:
    """One robot chain as both libraries see it, with the calls to time (each takes a config index)."""

    def __init__(self, spec: BenchChain, count: int, seed: int):
        path = importlib.resources.files(kinematics_py).joinpath("robots", spec.urdf)
        self.robot = kinematics_py.RobotModel.from_urdf_file(path)
        self.chain = self.robot.chain(spec.base_link, spec.tip_link)
        full_model = pin.buildModelFromUrdf(str(path))
        self.full_model, self.full_data = full_model, full_model.createData()
        others = [j for j in range(1, full_model.njoints) if full_model.names[j] not in self.chain.joint_names]
        self.model = pin.buildReducedModel(full_model, others, pin.neutral(full_model))
        self.data = self.model.createData()
        if self.model.frames[self.model.getFrameId(spec.base_link, pin.BODY)].parentJoint != 0:
            raise ValueError(f"{spec.base_link} must be the root link for the pinocchio side")
        self.frame = self.model.getFrameId(spec.tip_link, pin.BODY)
        rng = np.random.default_rng(seed)
        self.Q = rng.uniform(self.chain.lower, self.chain.upper, (count, len(self.chain.joint_names)))
        self.Q_pin = np.tile(pin.neutral(self.model), (count, 1))
        for column, name in enumerate(self.chain.joint_names):
            joint = self.model.joints[self.model.getJointId(name)]
            if joint.nq != 1:
                raise ValueError(f"joint {name} is not a 1-value joint in pinocchio")
            self.Q_pin[:, joint.idx_q] = self.Q[:, column]
        # Every link: the chain's joints set, the others at zero (in their limits, as both libraries default).
        self.values = [dict(zip(self.chain.joint_names, q.tolist())) for q in self.Q]
        self.Q_full = np.tile(pin.neutral(full_model), (count, 1))
        for column, name in enumerate(self.chain.joint_names):
            self.Q_full[:, full_model.joints[full_model.getJointId(name)].idx_q] = self.Q[:, column]
        self.link_frames = {link: full_model.getFrameId(link, pin.BODY) for link in self.robot.link_names}

    def kp_fk(self, i):
        return self.chain.forward_kinematics(self.Q[i])

    def kp_fk_then_jacobian(self, i):
        return self.chain.forward_kinematics(self.Q[i]), self.chain.jacobian(self.Q[i])

    def kp_fk_and_jacobian(self, i):
        return self.chain.forward_kinematics_and_jacobian(self.Q[i])

    def pin_fk(self, i):
        pin.forwardKinematics(self.model, self.data, self.Q_pin[i])
        return pin.updateFramePlacement(self.model, self.data, self.frame)

    def pin_fk_and_jacobian(self, i):
        J = pin.computeFrameJacobian(self.model, self.data, self.Q_pin[i], self.frame, pin.LOCAL_WORLD_ALIGNED)
        return self.data.oMf[self.frame], J

    def kp_link_poses(self, i):
        return self.robot.link_poses(self.values[i])

    def pin_link_poses(self, i):
        pin.forwardKinematics(self.full_model, self.full_data, self.Q_full[i])
        pin.updateFramePlacements(self.full_model, self.full_data)
        return self.full_data.oMf

    def kp_batch_fk(self, _i):
        return self.chain.forward_kinematics(self.Q)

    def pin_batch_fk(self, _i):
        return [self.pin_fk(i) for i in range(len(self.Q))]

    def check_agreement(self) -> None:
        columns = [self.model.joints[self.model.getJointId(n)].idx_v for n in self.chain.joint_names]
        for i in range(len(self.Q)):
            T, J = self.kp_fk_and_jacobian(i)
            M, J_pin = self.pin_fk_and_jacobian(i)
            error = max(np.abs(T - M.homogeneous).max(), np.abs(J - J_pin[:, columns]).max(),
                        np.abs(self.kp_fk(i) - self.pin_fk(i).homogeneous).max())
            poses, placements = self.kp_link_poses(i), self.pin_link_poses(i)
            error = max(error, max(np.abs(T - placements[self.link_frames[link]].homogeneous).max()
                                   for link, T in poses.items()))
            if error > AGREEMENT_TOLERANCE:
                raise AssertionError(f"libraries disagree by {error:.3g} at configuration {self.Q[i]}")


def median_us_per_call(functions, rounds: int, block: int, count: int, per_call_items: int = 1) -> list[float]:
    """Median [us] per call (per item when one call handles several) of each function, alternating."""
    for function in functions:
        for i in range(WARMUP_CALLS):
            function(i % count)
    samples = [[] for _ in functions]
    order = list(range(len(functions)))
    start = 0
    for _ in range(rounds):
        indices = [(start + k) % count for k in range(block)]
        for f in order:
            function = functions[f]
            t0 = time.perf_counter_ns()
            for i in indices:
                function(i)
            samples[f].append((time.perf_counter_ns() - t0) / (block * per_call_items) / 1e3)
        order = order[1:] + order[:1]
        start = (start + block) % count
    return [statistics.median(s) for s in samples]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=300, help="timed samples per function")
    parser.add_argument("--block", type=int, default=20, help="calls per timed sample")
    parser.add_argument("--batch", type=int, default=1000, help="configurations per batched FK call")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    rows = []
    for spec in CHAINS:
        subject = Subject(spec, args.batch, args.seed)
        subject.check_agreement()
        fk, pin_fk = median_us_per_call([subject.kp_fk, subject.pin_fk], args.rounds, args.block, args.batch)
        fk_j, fk_and_j, pin_fk_j = median_us_per_call(
            [subject.kp_fk_then_jacobian, subject.kp_fk_and_jacobian, subject.pin_fk_and_jacobian],
            args.rounds, args.block, args.batch)
        tree, pin_tree = median_us_per_call([subject.kp_link_poses, subject.pin_link_poses], args.rounds,
                                            args.block, args.batch)
        batch, pin_loop = median_us_per_call(
            [subject.kp_batch_fk, subject.pin_batch_fk], max(args.rounds // 30, 5), 1, args.batch,
            per_call_items=args.batch)
        rows += [
            (spec.label, "FK", "`forward_kinematics`", fk, pin_fk),
            (spec.label, "FK + Jacobian", "`forward_kinematics` + `jacobian`", fk_j, pin_fk_j),
            (spec.label, "FK + Jacobian", "`forward_kinematics_and_jacobian`", fk_and_j, pin_fk_j),
            (spec.label, f"FK, batch of {args.batch} (per config)", "`forward_kinematics(Q)`", batch, pin_loop),
            (spec.label, f"FK of every link ({len(subject.robot.link_names)})", "`RobotModel.link_poses`", tree,
             pin_tree),
        ]

    print(f"kinematics_py {getattr(kinematics_py, '__version__', '(checkout)')}, pinocchio {pin.__version__}, "
          f"numpy {np.__version__}, Python {platform.python_version()}, {platform.machine()}; "
          f"median of {args.rounds} blocks of {args.block} calls\n")
    print("| chain (joints) | operation | kinematics_py call | kinematics_py [us] | pinocchio [us] | ratio kp/pin |")
    print("|---|---|---|---:|---:|---:|")
    for label, operation, call, ours, theirs in rows:
        print(f"| {label} | {operation} | {call} | {ours:.2f} | {theirs:.2f} | {ours / theirs:.2f} |")
    print("\npinocchio: `forwardKinematics` + `updateFramePlacement` (FK); `computeFrameJacobian` "
          "LOCAL_WORLD_ALIGNED, which also places the frame (FK + Jacobian); a Python loop of FK calls (batch); "
          "`forwardKinematics` + `updateFramePlacements` on the whole model (every link; kinematics_py takes a "
          "dict of joint values and returns a dict of 4x4 poses).")


if __name__ == "__main__":
    main()
