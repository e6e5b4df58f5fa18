"""Independent forward kinematics and Jacobian reference built on pinocchio (tests only).

The URDF is read twice, independently of ``kinematics_py``: pinocchio builds the kinematic tree
(``pin.buildModelFromXML`` with ``mimic=False``, so every mimic joint is an ordinary joint of its
own), and ``xml.etree`` reads joint types, limits, mimic tags and the tree for the bookkeeping
pinocchio does not do the way the ``kinematics_py`` contract does:

- mimic joints take ``multiplier * master + offset`` (computed here, not by pinocchio);
- a joint that is not given is 0 clamped into its limits (continuous, floating, planar: 0);
- floating joint values are ``(x, y, z, roll, pitch, yaw)`` [m, rad], converted to pinocchio's
  free-flyer ``(x, y, z, qx, qy, qz, qw)``;
- planar joint values are ``(x, y, theta)`` [m, rad] in the joint frame's xy plane (pinocchio's
  planar joint ignores the URDF axis, so only axis (0, 0, 1) is accepted here);
- continuous joints are pinocchio's 2-value ``(cos, sin)`` configurations.

Poses are ``T_root_link``: 4x4 homogeneous transforms of every link in the URDF root link's frame.
Jacobians are geometric, rows ``(vx, vy, vz, wx, wy, wz)``, expressed in a base link's frame with
the reference point at the tip link's origin; a mimic joint's column is folded into its master's.
"""
from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pinocchio as pin
from robots import example_robot_data_dir, example_robot_urdf

MOVABLE_TYPES = ("revolute", "continuous", "prismatic", "floating", "planar")
SINGLE_DOF_TYPES = ("revolute", "continuous", "prismatic")
#: Range [rad] sampled for continuous joints: a full turn either way, to catch wrongly clamped values.
CONTINUOUS_RANGE = (-2.0 * math.pi, 2.0 * math.pi)
#: Range [m] sampled for each translation of floating and planar joints.
TRANSLATION_RANGE = (-1.0, 1.0)


@dataclass(frozen=True)
class Mimic:
    master: str
    multiplier: float
    offset: float


@dataclass(frozen=True)
class UrdfJoint:
    """One URDF joint as written in the file (limits are those of the ``<limit>`` tag)."""

    name: str
    type: str
    parent: str
    child: str
    axis: tuple[float, float, float]
    lower: float
    upper: float
    mimic: Mimic | None


def _read_urdf_text(urdf: str | Path) -> str:
    text = str(urdf)
    if text.lstrip().startswith("<"):
        return text
    return Path(urdf).read_text()


def _parse_joints(root: ET.Element) -> list[UrdfJoint]:
    joints = []
    for element in root.findall("joint"):
        limit = element.find("limit")
        axis = element.find("axis")
        mimic = element.find("mimic")
        joints.append(
            UrdfJoint(
                name=element.get("name"),
                type=element.get("type"),
                parent=element.find("parent").get("link"),
                child=element.find("child").get("link"),
                axis=tuple(float(v) for v in axis.get("xyz").split()) if axis is not None else (1.0, 0.0, 0.0),
                lower=float(limit.get("lower", 0.0)) if limit is not None else 0.0,
                upper=float(limit.get("upper", 0.0)) if limit is not None else 0.0,
                mimic=None
                if mimic is None
                else Mimic(
                    master=mimic.get("joint"),
                    multiplier=float(mimic.get("multiplier", 1.0)),
                    offset=float(mimic.get("offset", 0.0)),
                ),
            )
        )
    return joints


class PinocchioReference:
    """FK and Jacobians of one URDF computed with pinocchio, following the kinematics_py contract."""

    def __init__(self, urdf: str | Path):
        xml = _read_urdf_text(urdf)
        root = ET.fromstring(xml)
        self.link_names = [link.get("name") for link in root.findall("link")]
        joints = _parse_joints(root)
        self.joints = {j.name: j for j in joints if j.type in MOVABLE_TYPES}
        self.parent_joint_of_link = {j.child: j for j in joints}
        children = set(self.parent_joint_of_link)
        roots = [name for name in self.link_names if name not in children]
        assert len(roots) == 1, f"URDF must have exactly one root link, found {roots}"
        self.root_link = roots[0]
        for joint in self.joints.values():
            if joint.type == "planar" and not np.allclose(joint.axis, (0.0, 0.0, 1.0)):
                raise NotImplementedError(f"planar joint {joint.name}: only axis (0 0 1) is supported")
        self.independent_joint_names = [n for n, j in self.joints.items() if j.mimic is None]
        self.model = pin.buildModelFromXML(xml, mimic=False)
        self.data = self.model.createData()

    # -- configurations -------------------------------------------------------------------------

    def random_configuration(self, rng: np.random.Generator) -> dict[str, float | tuple[float, ...]]:
        """A value for every independent joint, uniform within its URDF limits (see module ranges)."""
        q = {}
        for name in self.independent_joint_names:
            joint = self.joints[name]
            if joint.type == "continuous":
                q[name] = float(rng.uniform(*CONTINUOUS_RANGE))
            elif joint.type == "floating":
                q[name] = tuple(rng.uniform(*TRANSLATION_RANGE, 3)) + tuple(rng.uniform(-math.pi, math.pi, 3))
            elif joint.type == "planar":
                q[name] = tuple(rng.uniform(*TRANSLATION_RANGE, 2)) + (float(rng.uniform(-math.pi, math.pi)),)
            else:
                q[name] = float(rng.uniform(joint.lower, joint.upper))
        return q

    def full_configuration(self, joint_positions: dict) -> dict:
        """Every movable joint's value: given, else default, and mimic joints from their masters."""
        values = {}
        for name in self.independent_joint_names:
            joint = self.joints[name]
            if name in joint_positions:
                values[name] = joint_positions[name]
            elif joint.type in ("revolute", "prismatic"):
                values[name] = min(max(0.0, joint.lower), joint.upper)
            elif joint.type == "floating":
                values[name] = (0.0,) * 6
            elif joint.type == "planar":
                values[name] = (0.0,) * 3
            else:
                values[name] = 0.0
        for name, joint in self.joints.items():
            if joint.mimic is not None:
                values[name] = joint.mimic.multiplier * values[joint.mimic.master] + joint.mimic.offset
        return values

    def pin_configuration(self, joint_positions: dict) -> np.ndarray:
        q = pin.neutral(self.model)
        for name, value in self.full_configuration(joint_positions).items():
            jm = self.model.joints[self.model.getJointId(name)]
            i, joint_type = jm.idx_q, self.joints[name].type
            if joint_type == "floating":
                x, y, z, roll, pitch, yaw = value
                rotation = pin.rpy.rpyToMatrix(roll, pitch, yaw)
                q[i : i + 7] = np.concatenate([[x, y, z], pin.Quaternion(rotation).coeffs()])
            elif joint_type == "planar":
                x, y, theta = value
                q[i : i + 4] = [x, y, math.cos(theta), math.sin(theta)]
            elif jm.nq == 2:
                q[i : i + 2] = [math.cos(value), math.sin(value)]
            else:
                assert jm.nq == 1, f"unexpected pinocchio joint {jm.shortname()} for {name}"
                q[i] = value
        return q

    # -- kinematics -----------------------------------------------------------------------------

    def _update(self, joint_positions: dict) -> None:
        q = self.pin_configuration(joint_positions)
        pin.forwardKinematics(self.model, self.data, q)
        pin.updateFramePlacements(self.model, self.data)
        pin.computeJointJacobians(self.model, self.data, q)

    def _pose(self, link: str) -> np.ndarray:
        return self.data.oMf[self.model.getFrameId(link, pin.BODY)].homogeneous.copy()

    def link_poses(self, joint_positions: dict) -> dict[str, np.ndarray]:
        """``T_root_link`` (4x4) of every link of the URDF."""
        self._update(joint_positions)
        return {link: self._pose(link) for link in self.link_names}

    def chain_joints(self, base_link: str, tip_link: str) -> list[str]:
        """Movable joints on the path from ``base_link`` down to ``tip_link``, base first."""
        path = []
        link = tip_link
        while link != base_link:
            joint = self.parent_joint_of_link.get(link)
            if joint is None:
                raise ValueError(f"{base_link} is not an ancestor of {tip_link}")
            if joint.type in MOVABLE_TYPES:
                path.append(joint.name)
            link = joint.parent
        return path[::-1]

    def chain_variables(self, base_link: str, tip_link: str) -> list[str]:
        """The chain's variables: its joints with each mimic joint replaced by its master."""
        names = []
        for name in self.chain_joints(base_link, tip_link):
            mimic = self.joints[name].mimic
            master = mimic.master if mimic is not None else name
            if master not in names:
                names.append(master)
        return names

    def chain_pose(self, joint_positions: dict, base_link: str, tip_link: str) -> np.ndarray:
        """``T_base_tip`` (4x4)."""
        poses = self.link_poses(joint_positions)
        return np.linalg.inv(poses[base_link]) @ poses[tip_link]

    def jacobian(self, joint_positions: dict, base_link: str, tip_link: str, variables: list[str]) -> np.ndarray:
        """Geometric Jacobian (6, len(variables)) of the tip origin, in the base frame.

        Columns follow ``variables`` (chain variable names, see ``chain_variables``). Only joints
        on the base->tip path move the tip relative to the base; each contributes its world-aligned
        column rotated into the base frame, scaled by its mimic multiplier onto its master.
        """
        self._update(joint_positions)
        J_world = pin.getFrameJacobian(
            self.model, self.data, self.model.getFrameId(tip_link, pin.BODY), pin.LOCAL_WORLD_ALIGNED
        )
        R_world_base = self.data.oMf[self.model.getFrameId(base_link, pin.BODY)].rotation
        J = np.zeros((6, len(variables)))
        for name in self.chain_joints(base_link, tip_link):
            joint = self.joints[name]
            if joint.type not in SINGLE_DOF_TYPES:
                raise NotImplementedError(f"chain joint {name} of type {joint.type}")
            master, scale = (name, 1.0) if joint.mimic is None else (joint.mimic.master, joint.mimic.multiplier)
            column = J_world[:, self.model.joints[self.model.getJointId(name)].idx_v]
            J[:3, variables.index(master)] += scale * (R_world_base.T @ column[:3])
            J[3:, variables.index(master)] += scale * (R_world_base.T @ column[3:])
        return J


#: example-robot-data's SRDFs (their disabled collision pairs), under its ``robots`` folder.
EXAMPLE_ROBOT_SRDFS = {"panda": "panda_description/srdf/panda.srdf", "ur5": "ur_description/srdf/ur5.srdf"}

class PinocchioCollisions:
    """Independent collision reference: pinocchio loads the URDF and meshes itself (triangle BVHs), places
    them with its own kinematics, drops the SRDF's disabled pairs, and asks coal for every pair."""

    def __init__(self, robot: str, with_srdf: bool = True):
        urdf = str(example_robot_urdf(robot))
        package_dir = str(example_robot_data_dir().parent.parent)
        self.model = pin.buildModelFromUrdf(urdf)
        self.geometry = pin.buildGeomFromUrdf(self.model, urdf, pin.GeometryType.COLLISION, package_dirs=[package_dir])
        self.robot_objects = len(self.geometry.geometryObjects)
        self.geometry.addAllCollisionPairs()
        if with_srdf:
            srdf = example_robot_data_dir() / EXAMPLE_ROBOT_SRDFS[robot]
            pin.removeCollisionPairs(self.model, self.geometry, str(srdf))
        self.touching: dict[str, set[str]] = {}

    def body(self, index: int) -> str:
        name = self.geometry.geometryObjects[index].name
        return name.rsplit("_", 1)[0] if index < self.robot_objects else name

    def add_world_object(self, name: str, geometry, T_plan_object: np.ndarray) -> None:
        self._add(name, 0, pin.SE3(T_plan_object), geometry, touching=set())

    def attach(self, name: str, link: str, geometry, T_link_object: np.ndarray, touch_links) -> None:
        frame = self.model.frames[self.model.getFrameId(link)]
        self._add(name, frame.parentJoint, frame.placement * pin.SE3(T_link_object), geometry,
                  touching={link, *touch_links})

    def _add(self, name, joint, placement, geometry, touching) -> None:
        new = self.geometry.addGeometryObject(pin.GeometryObject(name, joint, placement, geometry))
        self.touching[name] = touching
        for other in range(new):
            other_body = self.body(other)
            world_pair = joint == 0 and self.geometry.geometryObjects[other].parentJoint == 0
            if not world_pair and other_body not in touching and name not in self.touching.get(other_body, ()):
                self.geometry.addCollisionPair(pin.CollisionPair(other, new))

    def colliding_pairs(self, joint_values: dict[str, float]) -> set[frozenset[str]]:
        q = pin.neutral(self.model)
        for name, value in joint_values.items():
            q[self.model.idx_qs[self.model.getJointId(name)]] = value
        if self.model.existJointName("panda_finger_joint2"):  # a mimic joint: pinocchio keeps it independent
            q[self.model.idx_qs[self.model.getJointId("panda_finger_joint2")]] = joint_values.get(
                "panda_finger_joint1", 0.0)
        data, geometry_data = self.model.createData(), pin.GeometryData(self.geometry)
        pin.computeCollisions(self.model, data, self.geometry, geometry_data, q, False)
        return {frozenset((self.body(pair.first), self.body(pair.second)))
                for pair, result in zip(self.geometry.collisionPairs, geometry_data.collisionResults)
                if result.isCollision()}
