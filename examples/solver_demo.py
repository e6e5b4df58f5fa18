"""A short demonstration of the core on the bundled UR5: FK, IK from random seeds, and a batch.

Run with ``.venv/bin/python examples/solver_demo.py``; no ROS needed.
"""
from __future__ import annotations

import argparse
import time

import numpy as np

from kinematics_py import KinematicsPlugin, SemanticModel
from kinematics_py.robots import bundled_robot_path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--robot", default="ur5", choices=("ur5", "panda"))
    parser.add_argument("--poses", type=int, default=1000, help="poses in the batch demonstration")
    args = parser.parse_args(argv)

    urdf = bundled_robot_path(args.robot).read_text()
    srdf = bundled_robot_path(args.robot, "srdf").read_text()
    started = time.perf_counter()
    plugin = KinematicsPlugin()
    group = {"ur5": "ur_manipulator", "panda": "panda_arm"}[args.robot]
    if not plugin.initialize(urdf, group, robot_description_semantic=srdf):
        print(plugin.last_error)
        return 1
    print(f"{args.robot}: group {group!r}, base {plugin.getBaseFrame()!r}, tip {plugin.getTipFrame()!r}, "
          f"joints {plugin.getJointNames()} (loaded in {time.perf_counter() - started:.2f} s)")

    semantic = SemanticModel.from_srdf_string(srdf, plugin.robot_model)
    for state, values in semantic.group_states.get(group, {}).items():
        q = [values[name] for name in plugin.getJointNames()]
        _, (pose,) = plugin.getPositionFK([plugin.getTipFrame()], q)
        print(f"FK  {state:>8}: position {np.round(pose.position, 4)}, "
              f"orientation (xyzw) {np.round(pose.orientation, 4)}")

    rng = np.random.default_rng(7)
    chain = plugin.robot_model.chain(plugin.getBaseFrame(), plugin.getTipFrame())
    for _ in range(3):
        goal = rng.uniform(chain.lower, chain.upper)
        _, (pose,) = plugin.getPositionFK([plugin.getTipFrame()], goal)
        seed = rng.uniform(chain.lower, chain.upper)
        t0 = time.perf_counter()
        result = plugin.searchPositionIK(pose, seed, timeout=0.005)
        elapsed = (time.perf_counter() - t0) * 1e3
        outcome = np.round(result.solution, 3) if result.success else result.message
        print(f"IK  {result.error_code.name} in {elapsed:.3f} ms: {outcome}")

    goals = rng.uniform(chain.lower, chain.upper, (args.poses, chain.dof))
    poses = [plugin.getPositionFK([plugin.getTipFrame()], q)[1][0] for q in goals]
    plugin.searchPositionIKBatch(poses[:2])
    t0 = time.perf_counter()
    results = plugin.searchPositionIKBatch(poses)
    elapsed = time.perf_counter() - t0
    solved = sum(result.success for result in results)
    print(f"batch: {solved}/{len(poses)} poses solved and verified in {elapsed * 1e3:.1f} ms "
          f"({solved / elapsed:,.0f} solutions/s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
