"""The benchmark's robots: where their URDFs are, the chain each one solves, and the reference FK.

Every solver is given the same kinematics-only URDF text (see `kinematics_only_urdf`), and every
answer is checked against pinocchio's FK of that text, never against the solver's own FK.
"""
from __future__ import annotations

import math
import sys
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

import numpy as np

BENCH_ROBOTS_DIR = Path(__file__).resolve().parent.parent / "robots"

# The tests' locator of example-robot-data's files (its wheel has no importable module).
sys.path.append(str(Path(__file__).resolve().parents[2] / "test"))
from robots import example_robot_data_dir  # noqa: E402

#: Joint types that move; `fixed` (and `floating`/`planar`, never in an arm chain) do not.
MOVING_JOINT_TYPES = ("revolute", "continuous", "prismatic")


@dataclass(frozen=True)
class RobotSpec:
    """Where a robot's URDF lives and which chain of it the benchmark solves."""

    name: str
    source: str  # "example-robot-data" or "bench"
    relative_path: str
    base_link: str
    tip_link: str


ROBOTS: dict[str, RobotSpec] = {
    spec.name: spec
    for spec in (
        RobotSpec("ur5", "example-robot-data", "ur_description/urdf/ur5_robot.urdf", "base_link", "tool0"),
        RobotSpec("ur10", "example-robot-data", "ur_description/urdf/ur10_robot.urdf", "base_link", "tool0"),
        RobotSpec("panda", "example-robot-data", "panda_description/urdf/panda.urdf", "panda_link0", "panda_link8"),
        RobotSpec(
            "kinova",
            "example-robot-data",
            "kinova_description/robots/kinova.urdf",
            "j2s6s200_link_base",
            "j2s6s200_end_effector",
        ),
        RobotSpec("iiwa", "bench", "kuka_iiwa14.urdf", "iiwa_link_0", "iiwa_link_ee"),
    )
}


def urdf_path(spec: RobotSpec) -> Path:
    """Path of the robot's original URDF file."""
    folder = example_robot_data_dir() if spec.source == "example-robot-data" else BENCH_ROBOTS_DIR
    return folder / spec.relative_path


def kinematics_only_urdf(urdf_text: str, continuous_as_revolute: bool = False) -> str:
    """The URDF with what kinematics does not need removed.

    Removes ``visual``, ``collision`` and ``inertial`` (meshes are ``package://`` paths that some
    loaders try to resolve; KDL warns about a root link with inertia) and ``safety_controller``
    (pytracik 0.0.3 reads its soft limits as zero-width ranges). With `continuous_as_revolute`,
    continuous joints become revolute joints limited to [-2 pi, 2 pi], for solvers that reject
    continuous joints (OptIK panics on them); the kinematics are unchanged.
    """
    root = ET.fromstring(urdf_text)
    for link in root.findall("link"):
        for tag in ("visual", "collision", "inertial"):
            for element in link.findall(tag):
                link.remove(element)
    for joint in root.findall("joint"):
        for element in joint.findall("safety_controller"):
            joint.remove(element)
        if continuous_as_revolute and joint.get("type") == "continuous":
            joint.set("type", "revolute")
            limit = joint.find("limit")
            if limit is None:
                limit = ET.SubElement(joint, "limit", effort="0", velocity="0")
            limit.set("lower", repr(-2 * math.pi))
            limit.set("upper", repr(2 * math.pi))
    return ET.tostring(root, encoding="unicode")


@dataclass(frozen=True)
class Chain:
    """The moving joints from base to tip, in that order, with their limits [rad or m].

    Continuous joints have infinite limits here; `sample_lower`/`sample_upper` are the range that
    random configurations are drawn from (the limits, or [-pi, pi] for a continuous joint).
    """

    joint_names: tuple[str, ...]
    joint_types: tuple[str, ...]
    lower: np.ndarray
    upper: np.ndarray
    sample_lower: np.ndarray
    sample_upper: np.ndarray

    @property
    def dof(self) -> int:
        return len(self.joint_names)

    @property
    def continuous(self) -> np.ndarray:
        return np.array([t == "continuous" for t in self.joint_types])


def parse_chain(urdf_text: str, base_link: str, tip_link: str) -> Chain:
    """The moving joints between `base_link` and `tip_link`, read from the URDF text."""
    root = ET.fromstring(urdf_text)
    joint_to_child = {j.find("child").get("link"): j for j in root.findall("joint")}
    joints = []
    link = tip_link
    while link != base_link:
        if link not in joint_to_child:
            raise ValueError(f"no chain from {base_link!r} to {tip_link!r}: {link!r} has no parent joint")
        joint = joint_to_child[link]
        if joint.get("type") in MOVING_JOINT_TYPES:
            joints.append(joint)
        link = joint.find("parent").get("link")
    joints.reverse()
    names, types, lower, upper, sample_lower, sample_upper = [], [], [], [], [], []
    for joint in joints:
        names.append(joint.get("name"))
        types.append(joint.get("type"))
        if joint.get("type") == "continuous":
            lower.append(-np.inf)
            upper.append(np.inf)
            sample_lower.append(-math.pi)
            sample_upper.append(math.pi)
        else:
            limit = joint.find("limit")
            lo, hi = float(limit.get("lower")), float(limit.get("upper"))
            lower.append(lo)
            upper.append(hi)
            sample_lower.append(lo)
            sample_upper.append(hi)
    return Chain(tuple(names), tuple(types), *(np.array(v) for v in (lower, upper, sample_lower, sample_upper)))


class ReferenceKinematics:
    """pinocchio FK of the chain, the independent judge of every solver's answer."""

    def __init__(self, urdf_text: str, chain: Chain, base_link: str, tip_link: str):
        import pinocchio as pin

        self._pin = pin
        full = pin.buildModelFromXML(kinematics_only_urdf(urdf_text, continuous_as_revolute=True))
        locked = [i for i in range(1, full.njoints) if full.names[i] not in chain.joint_names]
        self.model = pin.buildReducedModel(full, locked, pin.neutral(full)) if locked else full
        self.data = self.model.createData()
        self.q_index = np.array([self.model.idx_qs[self.model.getJointId(n)] for n in chain.joint_names])
        self.base_frame_id = self.model.getFrameId(base_link)
        self.tip_frame_id = self.model.getFrameId(tip_link)
        if self.model.nq != chain.dof:
            raise ValueError(f"reference model has {self.model.nq} coordinates, chain has {chain.dof}")

    def _pin_q(self, q: np.ndarray) -> np.ndarray:
        q_pin = np.empty(self.model.nq)
        q_pin[self.q_index] = q
        return q_pin

    def T_base_tip(self, q: np.ndarray) -> np.ndarray:
        """4x4 pose of the tip in the base frame for joint values `q` (chain order)."""
        self._pin.framesForwardKinematics(self.model, self.data, self._pin_q(np.asarray(q, float)))
        return (self.data.oMf[self.base_frame_id].actInv(self.data.oMf[self.tip_frame_id])).homogeneous

    def pose_errors(self, q: np.ndarray, T_base_target: np.ndarray) -> tuple[float, float]:
        """Position error [m] and rotation error [rad] of the tip at `q` against the target."""
        T = self.T_base_tip(q)
        position_error = float(np.linalg.norm(T[:3, 3] - T_base_target[:3, 3]))
        rotation_error = float(np.linalg.norm(self._pin.log3(T_base_target[:3, :3].T @ T[:3, :3])))
        return position_error, rotation_error


@dataclass(frozen=True)
class BenchRobot:
    """One robot as the solvers see it: URDF text and file, chain, limits and reference FK."""

    spec: RobotSpec
    urdf_text: str  # kinematics-only, continuous joints kept
    urdf_file: Path  # `urdf_text` written to disk, for solvers that load files
    bounded_urdf_file: Path  # continuous joints as revolute [-2 pi, 2 pi]
    chain: Chain
    reference: ReferenceKinematics


def load_robot(name: str, scratch_dir: Path) -> BenchRobot:
    """Read one robot of `ROBOTS` and write its kinematics-only URDFs into `scratch_dir`."""
    if name not in ROBOTS:
        raise KeyError(f"unknown robot {name!r}; known robots: {', '.join(ROBOTS)}")
    spec = ROBOTS[name]
    original = urdf_path(spec).read_text()
    text = kinematics_only_urdf(original)
    urdf_file = scratch_dir / f"{name}.urdf"
    urdf_file.write_text(text)
    bounded_file = scratch_dir / f"{name}_bounded.urdf"
    bounded_file.write_text(kinematics_only_urdf(original, continuous_as_revolute=True))
    chain = parse_chain(text, spec.base_link, spec.tip_link)
    reference = ReferenceKinematics(text, chain, spec.base_link, spec.tip_link)
    return BenchRobot(spec, text, urdf_file, bounded_file, chain, reference)
