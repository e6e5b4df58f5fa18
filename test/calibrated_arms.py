"""Calibrated arms for the tests and benchmarks: real kinematics that are near a closed-form family, not in it.

A UR's factory calibration changes its DH parameters (delta_theta, a, d, alpha per joint); the UR description
packages turn them into the URDF's joint origins. ``ur_urdf`` does the same from the published nominal DH parameters
of the UR5 and UR10 plus given deltas; ``calibration_deltas`` draws deltas of a given size. ``moved_joint_origins``
moves the joint origins of any URDF (a KR-type arm's calibration, the KUKA iiwa's published offsets).
"""
from __future__ import annotations

import math
import re

import numpy as np

#: Published nominal DH parameters (d [m], a [m], alpha [rad]) per joint, standard DH convention.
UR_DH = {
    "ur5": ((0.089159, 0.0, math.pi / 2), (0.0, -0.425, 0.0), (0.0, -0.39225, 0.0), (0.10915, 0.0, math.pi / 2),
            (0.09465, 0.0, -math.pi / 2), (0.0823, 0.0, 0.0)),
    "ur10": ((0.1273, 0.0, math.pi / 2), (0.0, -0.612, 0.0), (0.0, -0.5723, 0.0), (0.163941, 0.0, math.pi / 2),
             (0.1157, 0.0, -math.pi / 2), (0.0922, 0.0, 0.0)),
}
UR_JOINTS = ("shoulder_pan_joint", "shoulder_lift_joint", "elbow_joint", "wrist_1_joint", "wrist_2_joint",
             "wrist_3_joint")


def calibration_deltas(rng: np.random.Generator, length: float, angle: float) -> np.ndarray:
    """Deltas (6, 4): delta_theta [rad], delta_a [m], delta_d [m], delta_alpha [rad] per joint, each uniform with a
    magnitude between a tenth of and the given ``length`` [m] / ``angle`` [rad] and a random sign."""
    magnitudes = rng.uniform(0.1, 1.0, (6, 4)) * np.array([angle, length, length, angle])
    return magnitudes * rng.choice((-1.0, 1.0), (6, 4))


def _rpy(R: np.ndarray) -> tuple[float, float, float]:
    """URDF roll, pitch, yaw of R = Rz(yaw) Ry(pitch) Rx(roll)."""
    pitch = math.atan2(-R[2, 0], math.hypot(R[0, 0], R[1, 0]))
    return math.atan2(R[2, 1], R[2, 2]), pitch, math.atan2(R[1, 0], R[0, 0])


def _dh_link(theta: float, d: float, a: float, alpha: float) -> np.ndarray:
    """Rz(theta) Tz(d) Tx(a) Rx(alpha)."""
    ct, st, ca, sa = math.cos(theta), math.sin(theta), math.cos(alpha), math.sin(alpha)
    return np.array([[ct, -st * ca, st * sa, a * ct], [st, ct * ca, -ct * sa, a * st], [0.0, sa, ca, d],
                     [0.0, 0.0, 0.0, 1.0]])


def _origin(T: np.ndarray) -> str:
    xyz = " ".join(f"{v:.12g}" for v in T[:3, 3])
    rpy = " ".join(f"{v:.12g}" for v in _rpy(T[:3, :3]))
    return f'<origin xyz="{xyz}" rpy="{rpy}"/>'


def ur_urdf(name: str, deltas: np.ndarray | None = None) -> str:
    """A URDF of the UR5 or UR10 (links base_link .. tool0, joints ``UR_JOINTS``, limits +-2 pi) whose kinematics are
    its nominal DH parameters plus ``deltas`` (6, 4) as ``calibration_deltas`` gives them (None: nominal). Joint k
    turns about its own z; the fixed transform after it is Rz(delta_theta) Tx(a) Rx(alpha) Tz(next d)."""
    deltas = np.zeros((6, 4)) if deltas is None else np.asarray(deltas, dtype=float)
    dh = [(d + dd, a + da, alpha + dalpha, dtheta)
          for (d, a, alpha), (dtheta, da, dd, dalpha) in zip(UR_DH[name], deltas)]
    origins = [np.array([[1.0, 0, 0, 0], [0, 1.0, 0, 0], [0, 0, 1.0, dh[0][0]], [0, 0, 0, 1.0]])]
    for k in range(6):
        d_next = dh[k + 1][0] if k < 5 else 0.0
        _, a, alpha, dtheta = dh[k]
        origins.append(_dh_link(dtheta, 0.0, a, alpha) @ _dh_link(0.0, d_next, 0.0, 0.0))
    links = ["base_link"] + [f"link{k + 1}" for k in range(6)] + ["tool0"]
    parts = [f'<?xml version="1.0"?>\n<robot name="{name}_calibrated">']
    parts += [f'  <link name="{link}"/>' for link in links]
    for k, joint in enumerate(UR_JOINTS):
        parts.append(f'  <joint name="{joint}" type="revolute"><parent link="{links[k]}"/>'
                     f'<child link="{links[k + 1]}"/>{_origin(origins[k])}<axis xyz="0 0 1"/>'
                     f'<limit lower="{-2 * math.pi}" upper="{2 * math.pi}" effort="150" velocity="3.15"/></joint>')
    parts.append(f'  <joint name="flange" type="fixed"><parent link="link6"/><child link="tool0"/>'
                 f'{_origin(origins[6])}</joint>')
    parts.append("</robot>")
    return "\n".join(parts)


_ORIGIN = re.compile(r'(<joint\s[^>]*type="(?:revolute|continuous)"[^>]*>(?:(?!</joint>).)*?)<origin\s+([^>]*?)/>',
                     re.S)
_ATTRIBUTE = re.compile(r'(xyz|rpy)\s*=\s*"([^"]*)"')


def moved_joint_origins(urdf: str, rng: np.random.Generator, length: float, angle: float) -> str:
    """``urdf`` with the origin of every revolute or continuous joint moved by up to ``length`` [m] along each axis
    and turned by up to ``angle`` [rad] in each of roll, pitch and yaw (uniform), as a calibration does."""
    def moved(match: re.Match) -> str:
        values = {"xyz": [0.0, 0.0, 0.0], "rpy": [0.0, 0.0, 0.0]}
        for key, text in _ATTRIBUTE.findall(match[2]):
            values[key] = [float(v) for v in text.split()]
        xyz = np.array(values["xyz"]) + rng.uniform(-length, length, 3)
        rpy = np.array(values["rpy"]) + rng.uniform(-angle, angle, 3)
        return (f'{match[1]}<origin xyz="{" ".join(f"{v:.12g}" for v in xyz)}" '
                f'rpy="{" ".join(f"{v:.12g}" for v in rpy)}"/>')

    return _ORIGIN.sub(moved, urdf)
