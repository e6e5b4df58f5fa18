"""Robots and helpers shared by the closed-form IK tests.

Real arms from example-robot-data (UR5, UR10, Kinova Gen2 j2s6s200 with its spherical wrist, Unitree Z1)
and the small 6R URDFs in ``test/data/urdf`` written from published dimensions (KUKA KR 16, PUMA 560) or
made up to cover each arrangement of axes.
"""
from __future__ import annotations

import numpy as np
from robots import example_robot_data_dir, example_robot_urdf, small_urdf

from kinematics_py import RobotModel
from kinematics_py.ik.closed_form import ChainGeometry, ClosedFormSolver, kernels
from kinematics_py.ik.closed_form.families import MAX_BRANCHES

#: name -> (URDF path getter, base link, tip link, expected family name).
CLOSED_FORM_ROBOTS = {
    "ur5": (lambda: example_robot_urdf("ur5"), "base_link", "tool0",
            "three parallel axes (2-4), axes 5 and 6 intersect"),
    "ur10": (lambda: example_robot_urdf("ur10"), "base_link", "tool0",
             "three parallel axes (2-4), axes 5 and 6 intersect"),
    "z1": (lambda: example_robot_data_dir() / "z1_description/urdf/z1.urdf", "link00", "link06",
           "three parallel axes (2-4), axes 5 and 6 intersect"),
    "kinova": (lambda: example_robot_urdf("kinova"), "j2s6s200_link_base", "j2s6s200_end_effector",
               "spherical wrist (axes 4-6 meet), axes 1 and 2 intersect"),
    "kr16": (lambda: small_urdf("kr16_spherical_wrist.urdf"), "base_link", "tool0",
             "spherical wrist (axes 4-6 meet), axes 2 and 3 are parallel"),
    "puma560": (lambda: small_urdf("puma560_spherical_wrist.urdf"), "base_link", "tool0",
                "spherical wrist (axes 4-6 meet), axes 1 and 2 intersect"),
    "intersecting-23": (lambda: small_urdf("spherical_wrist_23_intersect.urdf"), "base_link", "tool0",
                        "spherical wrist (axes 4-6 meet), axes 2 and 3 intersect"),
    "parallel-12": (lambda: small_urdf("spherical_wrist_12_parallel.urdf"), "base_link", "tool0",
                    "spherical wrist (axes 4-6 meet), axes 1 and 2 are parallel"),
    "spherical-shoulder": (lambda: small_urdf("spherical_shoulder.urdf"), "base_link", "tool0",
                           "spherical wrist (axes 1-3 meet), axes 4 and 5 are parallel"),
}
#: A solution reproduces its target when the FK error is below these [m], [rad] (the solver's own check).
POSITION_TOLERANCE = kernels.POSITION_TOLERANCE
ROTATION_TOLERANCE = kernels.ROTATION_TOLERANCE


def load_chain(name: str):
    path, base, tip, _ = CLOSED_FORM_ROBOTS[name]
    return RobotModel.from_urdf_file(path()).chain(base, tip)


def solver(name: str) -> ClosedFormSolver:
    return ClosedFormSolver.for_chain(load_chain(name))


def random_configurations(chain, rng, count: int) -> np.ndarray:
    """Uniform inside the limits (continuous joints over -pi..pi)."""
    lower = np.where(np.isfinite(chain.lower), chain.lower, -np.pi)
    upper = np.where(np.isfinite(chain.upper), chain.upper, np.pi)
    return rng.uniform(lower, upper, (count, chain.dof))


def wrapped(angles):
    """Angles wrapped into [-pi, pi)."""
    return (np.asarray(angles) + np.pi) % (2 * np.pi) - np.pi


def same_branch(q_a, q_b, tolerance: float) -> bool:
    return float(np.max(np.abs(wrapped(np.asarray(q_a) - np.asarray(q_b))))) < tolerance


def pose_errors(chain, q, T):
    """(position error [m], rotation error [rad]) of FK(q) against T, for q of shape (k, 6)."""
    T_q = chain.forward_kinematics(q)
    position = np.linalg.norm(T_q[..., :3, 3] - T[:3, 3], axis=-1)
    R_error = np.einsum("ji,...jk->...ik", T[:3, :3], T_q[..., :3, :3])
    cosine = np.clip((np.trace(R_error, axis1=-2, axis2=-1) - 1) / 2, -1, 1)
    return position, np.arccos(cosine)


def solve_without_limits(closed_form: ClosedFormSolver, T, seed) -> np.ndarray:
    """Every branch reaching T with the joint limits ignored (each joint's value nearest the seed)."""
    infinite = np.full(6, np.inf)
    q = np.empty((MAX_BRANCHES, 6))
    codes = np.empty(MAX_BRANCHES, dtype=np.int64)
    classification = closed_form.classification
    count, _ = kernels.solve_pose(np.ascontiguousarray(T), np.ascontiguousarray(seed, dtype=float),
                                  classification.packed, classification.config, *closed_form.chain.compiled,
                                  -infinite, infinite, MAX_BRANCHES, q, codes)
    return q[:count]


def eaik_robot(closed_form: ClosedFormSolver):
    """EAIK's robot built from the same joint axes, points on them and tip orientation at zero."""
    return eaik_robot_of_geometry(closed_form.classification.geometry)


def eaik_robot_of_geometry(g: ChainGeometry):
    """EAIK's robot of a chain geometry: axes H (6, 3), offsets between points on them P (7, 3), R0."""
    from eaik.pybindings.EAIK import Robot

    offsets = np.vstack([g.points[0], np.diff(g.points, axis=0), g.T_zero[:3, 3] - g.points[5]])
    return Robot(g.axes.T, offsets.T, g.T_zero[:3, :3], [], True)


def eaik_branches(chain, robot, T, tolerance: float = 1e-6) -> list[np.ndarray]:
    """EAIK's exact (not least-squares) solutions that reproduce T, one per branch modulo 2 pi."""
    solution = robot.calculate_IK(T)
    exact = [q for q, least_squares in zip(solution.Q, solution.is_LS) if not least_squares]
    branches = []
    for q in exact:
        position, rotation = pose_errors(chain, np.asarray(q)[None], T)
        if position[0] <= POSITION_TOLERANCE and rotation[0] <= ROTATION_TOLERANCE \
                and not any(same_branch(q, other, tolerance) for other in branches):
            branches.append(np.asarray(q))
    return branches


def in_limit_branches(chain, robot, T, seed) -> np.ndarray:
    """EAIK's branches with an in-limit whole-turn equivalent, each joint's nearest the seed (brute force)."""
    found = []
    for branch in eaik_branches(chain, robot, T):
        candidates = branch[None] + 2 * np.pi * np.arange(-3, 4)[:, None]
        inside = (candidates >= chain.lower - 1e-9) & (candidates <= chain.upper + 1e-9)
        if not np.all(inside.any(axis=0)):
            continue
        distance = np.where(inside, np.abs(candidates - seed), np.inf)
        found.append(candidates[np.argmin(distance, axis=0), np.arange(6)])
    return np.array(found).reshape(-1, 6)
