"""The property of issue 18 over perturbed real arms: ``initialize`` never raises, and every answer of a plugin it
set up is right.

``check_perturbed_arm(arm, kind, seed)`` perturbs one arm of ``ARMS`` (``perturbed_urdfs.random_changes``, numpy
seeded by ``seed``), initializes a plugin on it and checks, independently of kinematics_py (pinocchio FK, the limits
as the perturbed XML writes them): getPositionFK; searchPositionIK from random seeds to poses of random
configurations; all_solutions; a request with a NaN seed. Optionally, the node's robot set-up of the same URDF (its
primitive collision shapes kept, meshes left out) must be built, serving the group exactly when initialize accepted
it, or be refused with a SetupError. It returns what it saw (``ArmOutcome``); a non-empty ``ArmOutcome.problems``
is a defect. Used by test/ik/test_plugin_perturbed_urdfs.py and bench/fuzz_urdf_perturbations.py.
"""
from __future__ import annotations

import math
import time
import traceback
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from functools import cache

import numpy as np
import pinocchio as pin
from perturbed_urdfs import perturbed_urdf, random_changes
from reference import PinocchioReference
from robots import small_urdf
from test_plugin_conformance import ROBOTS, RobotCase

from kinematics_py import ErrorCode, KinematicsPlugin, Pose
from kinematics_py.robot_setup import SetupError, SetupInputs, complete_robot_setup, prepare_robot_setup

#: Per arm: searchPositionIK round trips, their timeout [s], and FK checks.
ROUND_TRIPS = 3
SEARCH_TIMEOUT = 0.05
FK_CHECKS = 2
#: Two double-precision FKs of the same arm agree to round-off of its size and reach [m]: this many times (1 + the
#: lengths of its joint origins + the distance of the target).
FK_ROUND_OFF = 1e-9
#: Slack on joint limits when checking a returned solution [rad or m].
LIMIT_TOLERANCE = 1e-9
#: Words of a refusal that hides a defect (the plugin's last line of defence, or a failed closed-form detection).
DEFECT_WORDS = ("internal error", "detection failed", "search failed")


#: The conformance table's arms (bundled and example-robot-data's, the planar and prismatic ones) and the other
#: small URDFs with a chain to solve; chains from ``base`` to ``tip``, no SRDF.
ARMS = {case.id: case for case in ROBOTS} | {case.id: case for case in [
    RobotCase(name, lambda file=file: small_urdf(file), base, tip) for name, file, base, tip in [
        ("lbr-iiwa-14", "lbr_iiwa_14_r820.urdf", "base_link", "tool0"),
        ("kr16", "kr16_spherical_wrist.urdf", "base_link", "tool0"),
        ("puma560", "puma560_spherical_wrist.urdf", "base_link", "tool0"),
        ("offset-wrist", "offset_wrist.urdf", "base_link", "tool0"),
        ("spherical-shoulder", "spherical_shoulder.urdf", "base_link", "tool0"),
        ("wrist-12-parallel", "spherical_wrist_12_parallel.urdf", "base_link", "tool0"),
        ("wrist-23-intersect", "spherical_wrist_23_intersect.urdf", "base_link", "tool0"),
        ("continuous", "continuous.urdf", "base_link", "tool"),
        ("fixed-between", "fixed_between.urdf", "root", "tool"),
        ("gantry", "gantry.urdf", "base_link", "tool"),
        ("tree-left", "tree.urdf", "torso", "left_tcp"),
    ]]}


@dataclass
class ArmOutcome:
    """What one perturbed arm gave: initialized or the refusal, the IK answers' codes, and the defects found."""

    initialized: bool = False
    refusal: str = ""
    closed_form: str = ""
    codes: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    seconds: float = 0.0


@cache
def arm_text(name: str) -> str:
    return ARMS[name].urdf().read_text()


def check_perturbed_arm(name: str, kind: str, seed: int, robot_setup: bool = False) -> tuple[str, ArmOutcome]:
    """(the perturbed URDF, what the plugin did with it) for arm ``name`` perturbed by ``kind`` with ``seed``."""
    rng = np.random.default_rng(seed)
    urdf = perturbed_urdf(arm_text(name), random_changes(arm_text(name), rng, kind))
    return urdf, check_arm(urdf, ARMS[name].base, ARMS[name].tip, rng, robot_setup)


def check_arm(urdf: str, base: str, tip: str, rng: np.random.Generator, robot_setup: bool = False) -> ArmOutcome:
    """Initialize a plugin on ``urdf`` (never raising), then check every answer it gives (see module doc); with
    ``robot_setup``, the node's robot set-up of it too."""
    started = time.perf_counter()
    outcome = ArmOutcome()
    plugin = KinematicsPlugin()
    try:
        outcome.initialized = plugin.initialize(urdf, "arm", base, [tip])
    except Exception as error:  # the property under test: initialize never raises
        outcome.problems.append(f"initialize raised {type(error).__name__}: {error}")
        return outcome
    if robot_setup:
        outcome.problems += _robot_setup_problems(urdf, base, tip, outcome.initialized)
    if not outcome.initialized:
        outcome.refusal = plugin.last_error
        if not plugin.last_error:
            outcome.problems.append("initialize returned False without a reason")
    else:
        outcome.closed_form = plugin.group_setup.closed_form_report
        try:
            _check_answers(plugin, urdf, base, tip, rng, outcome)
        except Exception as error:  # the property under test: no IK or FK call raises
            outcome.problems.append(f"a call raised {type(error).__name__}: {error}\n{traceback.format_exc()}")
    text = outcome.refusal + outcome.closed_form
    outcome.problems += [f"a defect behind {text!r}" for word in DEFECT_WORDS if word in text][:1]
    outcome.seconds = time.perf_counter() - started
    return outcome


def _robot_setup_problems(urdf: str, base: str, tip: str, initialized: bool) -> list[str]:
    """What is wrong with the node's robot set-up of ``urdf`` (group "arm" from base to tip): it must be built, or
    refused with a SetupError, and serve the group exactly when ``initialize`` accepted it (else say why not)."""
    try:
        setup = complete_robot_setup(prepare_robot_setup(SetupInputs(_without_meshes(urdf), base_frame=base,
                                                                     tip_frames=(tip,))))
    except SetupError as error:
        return [] if not initialized and str(error) else [f"the robot set-up was refused: {error}"]
    except Exception as error:  # the property under test: the robot set-up refuses, never raises
        return [f"the robot set-up raised {type(error).__name__}: {error}\n{traceback.format_exc()}"]
    if ("arm" in setup.groups) != initialized or not ("arm" in setup.groups or setup.unavailable.get("arm")):
        return [f"the robot set-up serves {sorted(setup.groups)}, unavailable {dict(setup.unavailable)}, while "
                f"initialize answered {initialized}"]
    return []


def _without_meshes(urdf: str) -> str:
    """The URDF without its mesh collision shapes (their hulls take seconds per arm), the primitives kept."""
    root = ET.fromstring(urdf)
    for link in root.iter("link"):
        for collision in link.findall("collision"):
            if collision.find("geometry/mesh") is not None:
                link.remove(collision)
    return ET.tostring(root, encoding="unicode")


class _Reference:
    """Independent FK of the perturbed arm (pinocchio) and its limits as the XML writes them."""

    def __init__(self, urdf: str, base: str, tip: str, joint_names: list[str]):
        self.pinocchio = PinocchioReference(urdf)
        self.base, self.tip, self.joint_names = base, tip, joint_names
        self.size = 1.0 + sum(math.hypot(*placement.translation) for placement in self.pinocchio.model.jointPlacements)
        self.limits = {}
        for joint in ET.fromstring(urdf).iter("joint"):
            limit = joint.find("limit")
            if joint.get("type") in ("revolute", "prismatic") and limit is not None:
                self.limits[joint.get("name")] = (float(limit.get("lower", 0.0)), float(limit.get("upper", 0.0)))

    def T_base_tip(self, q) -> np.ndarray:
        return self.pinocchio.chain_pose(dict(zip(self.joint_names, map(float, q))), self.base, self.tip)

    def random_configuration(self, rng: np.random.Generator) -> np.ndarray:
        values = []
        for name in self.joint_names:
            lower, upper = self.limits.get(name, (-math.pi, math.pi))
            values.append(float(rng.uniform(lower, upper)) if upper - lower < math.inf else 0.0)
        return np.array(values)

    def problems(self, q, T_target: np.ndarray, position_tolerance: float, rotation_tolerance: float) -> list[str]:
        """Why ``q`` does not reach ``T_target`` within the tolerances (plus round-off) inside the limits."""
        if q is None or len(q) != len(self.joint_names) or not np.all(np.isfinite(q)):
            return [f"no usable joint vector: {q!r}"]
        found = [f"{name}={value:.9g} not in [{self.limits[name][0]}, {self.limits[name][1]}]"
                 for name, value in zip(self.joint_names, q) if name in self.limits
                 and not self.limits[name][0] - LIMIT_TOLERANCE <= value <= self.limits[name][1] + LIMIT_TOLERANCE]
        return found + self.pose_problems(q, T_target, position_tolerance, rotation_tolerance)

    def pose_problems(self, q, T_target: np.ndarray, position_tolerance: float, rotation_tolerance: float
                      ) -> list[str]:
        """The FK error of ``q`` if over the tolerances plus round-off (of the arm's size and the target's distance:
        prismatic joints may reach far)."""
        T = self.T_base_tip(q)
        position = math.hypot(*(T[:3, 3] - T_target[:3, 3]))  # hypot: no overflow of the squares
        rotation = float(np.linalg.norm(pin.log3(T_target[:3, :3].T @ T[:3, :3])))
        round_off = FK_ROUND_OFF * (self.size + math.hypot(*T_target[:3, 3]))
        if position > position_tolerance + round_off or rotation > rotation_tolerance + FK_ROUND_OFF:
            return [f"FK error {position:.3g} m, {rotation:.3g} rad"]
        return []


def _pose(T: np.ndarray) -> Pose:
    quaternion = pin.Quaternion(T[:3, :3])
    return Pose(tuple(float(v) for v in T[:3, 3]), (quaternion.x, quaternion.y, quaternion.z, quaternion.w))


def _check_answers(plugin: KinematicsPlugin, urdf: str, base: str, tip: str, rng: np.random.Generator,
                   outcome: ArmOutcome) -> None:
    joint_names = plugin.getJointNames()
    try:
        reference = _Reference(urdf, base, tip, joint_names)
    except Exception as error:  # pinocchio refuses what kinematics_py accepted: nothing to verify against
        outcome.codes.append(f"unverified ({type(error).__name__})")
        return
    params = plugin.parameters
    tolerances = (params.position_threshold, params.orientation_threshold)
    for _ in range(FK_CHECKS):
        q = reference.random_configuration(rng)
        ok, poses = plugin.getPositionFK([tip], q.tolist())
        if not ok:
            outcome.problems.append(f"getPositionFK failed at {q.tolist()}")
            continue
        outcome.problems += [f"getPositionFK at {q.tolist()}: {p}"
                             for p in reference.pose_problems(q, _matrix(poses[0]), 0.0, 0.0)]
    for _ in range(ROUND_TRIPS):
        answer, seed = reference.random_configuration(rng), reference.random_configuration(rng)
        T_target = reference.T_base_tip(answer)
        if not np.all(np.isfinite(T_target)):
            continue
        result = plugin.searchPositionIK(_pose(T_target), seed.tolist(), SEARCH_TIMEOUT)
        outcome.codes.append(result.error_code.name)
        if result.success:
            outcome.problems += [f"searchPositionIK: {p}" for p in reference.problems(result.solution, T_target,
                                                                                      *tolerances)]
        elif not result.message:
            outcome.problems.append(f"searchPositionIK: {result.error_code.name} without a message")
        for solution in plugin.all_solutions(_pose(T_target), seed.tolist()):
            outcome.problems += [f"all_solutions: {p}" for p in reference.problems(solution, T_target, *tolerances)]
    nan_seed = plugin.searchPositionIK(Pose((0.1, 0.0, 0.1)), [math.nan] * len(joint_names), SEARCH_TIMEOUT)
    if nan_seed.error_code != ErrorCode.INVALID_ROBOT_STATE or not nan_seed.message:
        outcome.problems.append(f"a NaN seed gave {nan_seed.error_code.name}: {nan_seed.message!r}")


def _matrix(pose: Pose) -> np.ndarray:
    x, y, z, w = pose.orientation
    T = np.eye(4)
    T[:3, :3] = pin.Quaternion(w, x, y, z).normalized().toRotationMatrix()
    T[:3, 3] = pose.position
    return T
