"""Near and at singularities (wrist straight, arm stretched, wrist centre on the base axis): every solution
reaches the pose, the configuration itself is among them, none twice, and no branch EAIK finds is lost."""
import numpy as np
import pytest
from closed_form_cases import eaik_branches, eaik_robot, random_configurations, same_branch, solver
from test_solver import check_solutions

from kinematics_py.ik.closed_form import ClosedFormFamily, families

pytest.importorskip("eaik", reason="EAIK (pip install eaik==1.2.2) is a test requirement")

#: Distances from the singular value [rad]: exactly on it, then nearer than the subproblems' round-off.
OFFSETS = (0.0, 1e-10, 1e-8, 1e-6, 1e-4)
#: At a singularity the angles are found to about the square root of the round-off [rad].
SINGULAR_TOLERANCE = 1e-5
#: Next to a straight wrist the pose fixes the turn about the aligned wrist axes only to about this over the
#: distance to the singularity [rad]: the round-off of the arm angles (~1e-12) amplified by 1 / sin(theta5).
WRIST_ROUND_OFF = 1e-11
#: Near one, EAIK's and our branches agree to this [rad].
MATCH_TOLERANCE = 1e-4
SEED = 20261202


def aligning_angle(k, p, q):
    """The angle about unit k turning p's component perpendicular to k onto q's."""
    p = p - np.dot(k, p) * k
    q = q - np.dot(k, q) * k
    return float(np.arctan2(np.dot(k, np.cross(p, q)), np.dot(p, q)))


def rotated(k, angle, v):
    return v * np.cos(angle) + np.cross(k, v) * np.sin(angle) + k * np.dot(k, v) * (1 - np.cos(angle))


def singular_joint_values(closed_form, q):
    """{kind: (joint index, singular value)} for configuration q (its other joints unchanged)."""
    packed, config = closed_form.classification.packed, closed_form.classification.config
    h, P = packed[0:6], packed[6:12]
    W0 = packed[families.WRIST_POINT_ROW]
    three_parallel = closed_form.classification.family is ClosedFormFamily.THREE_PARALLEL
    wrist_reference = h[1] if three_parallel else h[3]
    values = {"wrist straight": (4, aligning_angle(h[4], h[5], wrist_reference))}
    if three_parallel:
        values["arm stretched"] = (2, aligning_angle(h[2], P[3] - P[2], P[2] - P[1]))
    elif config[1] == families.AXES_12_INTERSECT:
        O = packed[families.SHOULDER_POINT_ROW]
        values["arm stretched"] = (2, aligning_angle(h[2], W0 - P[2], P[2] - O))
    elif config[1] == families.AXES_23_PARALLEL:
        values["arm stretched"] = (2, aligning_angle(h[2], W0 - P[2], P[2] - P[1]))
        # The wrist centre on axis 1: swing axis 2 until it crosses the axis (an arm that moves in a plane).
        w3 = P[2] + rotated(h[2], q[2], W0 - P[2])
        across = np.cross(h[1], h[0])
        a, b = np.dot(across, w3 - P[1] - np.dot(h[1], w3 - P[1]) * h[1]), np.dot(across, np.cross(h[1], w3 - P[1]))
        rhs = np.dot(across, P[0] - P[1]) - np.dot(h[1], w3 - P[1]) * np.dot(across, h[1])
        if abs(rhs) < np.hypot(a, b):
            values["wrist centre on axis 1"] = (1, float(np.arctan2(b, a) + np.arccos(rhs / np.hypot(a, b))))
    elif config[1] == families.AXES_12_PARALLEL:
        w3 = P[2] + rotated(h[2], q[2], W0 - P[2])
        values["arm stretched"] = (1, aligning_angle(h[1], w3 - P[1], P[1] - P[0]))
    return values


def nearest_in_limits(chain, joint, value):
    """value or value + pi (both singular: stretched or folded, wrist straight or flipped) moved into the
    limits, nearest zero; None if neither fits."""
    candidates = value + np.arange(-4, 5) * np.pi
    inside = candidates[(candidates >= chain.lower[joint]) & (candidates <= chain.upper[joint])]
    return None if inside.size == 0 else float(inside[np.argmin(np.abs(inside))])


# Not the Z1: its limits keep it out of these singularities (joint 5 within +-77 deg, joint 3 short of folded).
@pytest.mark.parametrize("name", ["ur5", "ur10", "kinova", "kr16", "puma560", "parallel-12"])
def test_near_singular_configurations(name):
    closed_form = solver(name)
    chain = closed_form.chain
    robot = eaik_robot(closed_form)
    rng = np.random.default_rng(SEED)
    tried = set()
    for base in random_configurations(chain, rng, 10):
        for kind, (joint, value) in singular_joint_values(closed_form, base).items():
            for offset in OFFSETS:
                q = base.copy()
                singular = nearest_in_limits(chain, joint, value + offset)
                if singular is None:
                    continue
                q[joint] = singular
                T = chain.forward_kinematics(q)
                solutions, _ = closed_form.solve(T, q)
                check_solutions(chain, solutions, T, q)
                wrist = kind == "wrist straight" and offset > 0
                tolerance = SINGULAR_TOLERANCE + (WRIST_ROUND_OFF / offset if wrist else 0.0)
                assert any(same_branch(q, s, tolerance) for s in solutions), (kind, offset)
                if offset >= 1e-6:
                    for branch in eaik_branches(chain, robot, T, MATCH_TOLERANCE):
                        if np.all(chain.within_limits(branch + 2 * np.pi * np.round((q - branch) / (2 * np.pi)))):
                            assert any(same_branch(branch, s, MATCH_TOLERANCE) for s in solutions), (kind, offset)
                tried.add(kind)
    assert {"wrist straight", "arm stretched"} <= tried
    if name == "kr16":
        assert "wrist centre on axis 1" in tried
