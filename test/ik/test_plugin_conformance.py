"""KinematicsPlugin conformance, modelled on MoveIt's plugin-agnostic kinematics test.

Driven by a table of robot configurations (``ROBOTS``): UR5, UR10, Panda and Kinova Gen2 from
example-robot-data, the bundled UR5 and Panda (initialized from their SRDF groups), a 4-DOF planar
arm and a chain of revolute and prismatic joints on oblique axes. For each robot:

- getPositionFK equals the independent pinocchio reference (``reference.PinocchioReference``);
- FK -> IK -> FK round trips from random seeds succeed every time, each solution re-checked
  independently: inside the URDF limits, and its pinocchio FK within the verification tolerances;
- getPositionIK from a seed near a known answer converges to a solution near that answer;
- a random walk of small pose steps, each solved from the previous solution, moves the joints in
  small steps (no jumps to another branch);
- poses with known answers (the UR5's zero configuration from its DH table, the Panda's SRDF
  'ready' state) are solved back to those configurations.

Every random draw comes from ``numpy.random.default_rng(SEED)``; the plugin's own restart sampler
is seeded by its ``random_seed`` parameter (fixed default), so runs are reproducible.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest
from reference import PinocchioReference
from robots import bundled_robot, example_robot_urdf, small_urdf

from kinematics_py import ErrorCode, KinematicsPlugin, Pose

SEED = 20240917
#: Verification thresholds of issue 3 (looser than the solver's own 1e-5 thresholds) [m], [rad].
POSITION_TOLERANCE = 1e-4
ROTATION_TOLERANCE = 1e-3
#: FK of the plugin and of pinocchio are both double-precision products of a few transforms [m or unitless].
FK_TOLERANCE = 1e-9
#: Slack on joint limits when checking a returned solution [rad or m].
LIMIT_TOLERANCE = 1e-9
#: Search time per round-trip query [s]: the issue's budget is 5 ms; 0.1 s keeps the test stable on a loaded CI
#: machine while still catching a solver that needs restarts it cannot find.
ROUND_TRIP_TIMEOUT = 0.1
ROUND_TRIPS_PER_ROBOT = 100
FK_CONFIGURATIONS_PER_ROBOT = 20
#: Required share of round trips that succeed (MoveIt's test uses a per-robot threshold; ours is all of them).
ROUND_TRIP_SUCCESS_RATE = 1.0
#: Seeds for the nearby-seed test are the answer moved by up to this much per joint [rad or m] ...
NEARBY_SEED_OFFSET = 0.05
#: ... and the local solve must land within this distance of the answer in every joint [rad or m].
NEARBY_SOLUTION_DISTANCE = 2 * NEARBY_SEED_OFFSET
NEARBY_QUERIES_PER_ROBOT = 20
#: Random walk: each step moves every joint of the true configuration by at most this much [rad or m] ...
WALK_STEP = 0.02
WALK_STEPS = 50
#: ... and consecutive solutions may differ by at most this much in any joint [rad or m].
WALK_JUMP_LIMIT = 10 * WALK_STEP


@dataclass(frozen=True)
class RobotCase:
    """One row of the conformance table: a URDF, and either an SRDF group or an explicit base and tip."""

    id: str
    urdf: Callable[[], Path]
    base: str
    tip: str
    group: str = "arm"
    srdf: Callable[[], Path] | None = None


ROBOTS = [
    RobotCase("ur5", lambda: example_robot_urdf("ur5"), "base_link", "tool0"),
    RobotCase("ur10", lambda: example_robot_urdf("ur10"), "base_link", "tool0"),
    RobotCase("panda", lambda: example_robot_urdf("panda"), "panda_link0", "panda_link8"),
    RobotCase("kinova", lambda: example_robot_urdf("kinova"), "base", "j2s6s200_end_effector"),
    RobotCase("bundled-ur5", lambda: bundled_robot("ur5.urdf"), "base_link", "tool0", "ur_manipulator",
              lambda: bundled_robot("ur5.srdf")),
    RobotCase("bundled-panda", lambda: bundled_robot("panda.urdf"), "panda_link0", "panda_link8", "panda_arm",
              lambda: bundled_robot("panda.srdf")),
    RobotCase("planar-4dof", lambda: small_urdf("planar_arm_4dof.urdf"), "base_link", "tool"),
    RobotCase("prismatic", lambda: small_urdf("prismatic.urdf"), "base_link", "tool"),
]
ROBOT_PARAMS = [pytest.param(case, id=case.id) for case in ROBOTS]
CASES = {case.id: case for case in ROBOTS}


# ---------------------------------------------------------------------------------------- helpers
def make_plugin(case: RobotCase, parameters: dict | None = None) -> KinematicsPlugin:
    """A plugin initialized for ``case`` (through its SRDF group when it has one)."""
    plugin = KinematicsPlugin()
    urdf = case.urdf().read_text()
    if case.srdf is not None:
        ok = plugin.initialize(urdf, case.group, robot_description_semantic=case.srdf().read_text(),
                               parameters=parameters)
    else:
        ok = plugin.initialize(urdf, case.group, case.base, [case.tip], parameters=parameters)
    assert ok, plugin.last_error
    return plugin


@cache
def shared_plugin(case_id: str) -> KinematicsPlugin:
    """One plugin per robot with default parameters, reused by the tests of this module."""
    return make_plugin(CASES[case_id])


@cache
def reference_for(path: Path) -> PinocchioReference:
    return PinocchioReference(path)


def matrix_from_pose(pose) -> np.ndarray:
    """4x4 ``T`` of a Pose (x, y, z, w quaternion) computed with pinocchio, not kinematics_py."""
    x, y, z, w = pose.orientation
    T = np.eye(4)
    T[:3, :3] = pin.Quaternion(w, x, y, z).normalized().toRotationMatrix()
    T[:3, 3] = pose.position
    return T


def pose_from_matrix(T: np.ndarray) -> Pose:
    q = pin.Quaternion(T[:3, :3])
    return Pose(tuple(float(v) for v in T[:3, 3]), (q.x, q.y, q.z, q.w))


def pose_error(T_expected: np.ndarray, T_actual: np.ndarray) -> tuple[float, float]:
    """(position distance [m], rotation angle [rad]) between two 4x4 poses."""
    position = float(np.linalg.norm(T_expected[:3, 3] - T_actual[:3, 3]))
    rotation = float(np.linalg.norm(pin.log3(T_expected[:3, :3].T @ T_actual[:3, :3])))
    return position, rotation


class Verifier:
    """Independent checks of a plugin's answers with the pinocchio reference and the URDF's limits."""

    def __init__(self, plugin: KinematicsPlugin, urdf: Path):
        self.reference = reference_for(urdf)
        self.joint_names = plugin.getJointNames()
        self.base = plugin.getBaseFrame()
        self.tips = plugin.getTipFrames()

    def values(self, q) -> dict[str, float]:
        return dict(zip(self.joint_names, (float(v) for v in q)))

    def random_configuration(self, rng: np.random.Generator) -> np.ndarray:
        """A configuration of the group's joints, uniform within the URDF limits (continuous: two turns)."""
        values = self.reference.random_configuration(rng)
        return np.array([values[name] for name in self.joint_names])

    def tip_poses(self, q) -> list[np.ndarray]:
        """Reference ``T_base_tip`` of every tip (mimic joints follow their masters)."""
        poses = self.reference.link_poses(self.values(q))
        T_base = np.linalg.inv(poses[self.base])
        return [T_base @ poses[tip] for tip in self.tips]

    def targets(self, q) -> list[Pose]:
        return [pose_from_matrix(T) for T in self.tip_poses(q)]

    def limit_violations(self, q) -> list[str]:
        """Joints (mimic joints included) outside their URDF limits; continuous joints have none."""
        full = self.reference.full_configuration(self.values(q))
        return [f"{name}={value:.6g} not in [{joint.lower}, {joint.upper}]"
                for name, joint in self.reference.joints.items()
                for value in [full[name]]
                if joint.type in ("revolute", "prismatic")
                and not joint.lower - LIMIT_TOLERANCE <= value <= joint.upper + LIMIT_TOLERANCE]

    def errors(self, q, targets) -> tuple[float, float]:
        """Largest (position [m], rotation [rad]) error over the tips of ``q`` against ``targets``."""
        targets = [targets] if isinstance(targets, Pose) else targets
        pairs = [pose_error(matrix_from_pose(target), T) for target, T in zip(targets, self.tip_poses(q))]
        return max(p for p, _ in pairs), max(r for _, r in pairs)

    def problems(self, q, targets) -> list[str]:
        """Why ``q`` is not a valid solution for ``targets`` (empty if it is)."""
        found = []
        if q is None or len(q) != len(self.joint_names) or not np.all(np.isfinite(q)):
            return [f"no usable joint vector: {q!r}"]
        found += self.limit_violations(q)
        position, rotation = self.errors(q, targets)
        if position > POSITION_TOLERANCE or rotation > ROTATION_TOLERANCE:
            found.append(f"FK error {position:.3g} m, {rotation:.3g} rad")
        return found


def verifier_for(case: RobotCase, plugin: KinematicsPlugin) -> Verifier:
    return Verifier(plugin, case.urdf())


# ------------------------------------------------------------------------------------------ tests
def test_table_covers_the_robots_of_the_issue():
    """The parametrized tests run on every robot named in the brief; a missing file fails here."""
    assert {"ur5", "ur10", "panda", "kinova", "bundled-ur5", "bundled-panda"} <= set(CASES)
    for case in ROBOTS:
        assert case.urdf().is_file(), case.id


def test_verifier_rejects_wrong_solutions():
    """The independent check is not vacuous: it flags a solution off by a little, and one outside the limits."""
    plugin = shared_plugin("panda")
    check = verifier_for(CASES["panda"], plugin)
    q = np.array([0.1, -0.5, 0.2, -2.0, 0.3, 1.5, 0.4])
    (target,) = check.targets(q)
    assert check.problems(q, target) == []
    assert check.problems(q + np.r_[0.0, 1e-3, 0.0, 0.0, 0.0, 0.0, 0.0], target)
    assert check.problems(q + np.r_[0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 2e-3], target)
    outside = q.copy()
    outside[3] = 0.0
    assert any("panda_joint4" in problem for problem in check.problems(outside, check.targets(outside)))
    assert check.problems(None, target) and check.problems(q[:6], target)


@pytest.mark.parametrize("case", ROBOT_PARAMS)
def test_initialized_group_matches_the_chain(case):
    """Joints are the chain's movable joints from base to tip; frames as requested."""
    plugin = shared_plugin(case.id)
    reference = reference_for(case.urdf())
    assert plugin.getBaseFrame() == case.base
    assert plugin.getTipFrames() == [case.tip]
    assert plugin.getJointNames() == reference.chain_variables(case.base, case.tip)


@pytest.mark.parametrize("case", ROBOT_PARAMS)
def test_position_fk_matches_the_reference_for_every_link(case):
    """getPositionFK of the tip and of every group link equals pinocchio's ``T_base_link``."""
    plugin = shared_plugin(case.id)
    check = verifier_for(case, plugin)
    links = plugin.getLinkNames()
    assert case.tip in links
    rng = np.random.default_rng(SEED)
    for _ in range(FK_CONFIGURATIONS_PER_ROBOT):
        q = check.random_configuration(rng)
        ok, poses = plugin.getPositionFK(links, q)
        assert ok and len(poses) == len(links)
        expected = check.reference.link_poses(check.values(q))
        T_base = np.linalg.inv(expected[case.base])
        for link, pose in zip(links, poses):
            error = np.abs(matrix_from_pose(pose) - T_base @ expected[link]).max()
            assert error <= FK_TOLERANCE, f"{case.id}: {link} off by {error:.3g} at q={q.tolist()}"


@pytest.mark.parametrize("case", ROBOT_PARAMS)
def test_random_round_trips_always_succeed_with_verified_solutions(case):
    """FK -> searchPositionIK (random seed) -> FK: every target solved, every solution verified."""
    plugin = shared_plugin(case.id)
    check = verifier_for(case, plugin)
    rng = np.random.default_rng(SEED)
    failures = []
    for k in range(ROUND_TRIPS_PER_ROBOT):
        q_true, seed = check.random_configuration(rng), check.random_configuration(rng)
        target = check.targets(q_true)[0]
        result = plugin.searchPositionIK(target, seed.tolist(), ROUND_TRIP_TIMEOUT)
        if not result.success:
            failures.append(f"#{k} q={q_true.tolist()}: {result.error_code.name} {result.message}")
            continue
        assert result.error_code == ErrorCode.SUCCESS and not result.approximate
        problems = check.problems(result.solution, target)
        assert not problems, f"{case.id} #{k}: solution {result.solution} for q={q_true.tolist()}: {problems}"
    success_rate = 1 - len(failures) / ROUND_TRIPS_PER_ROBOT
    assert success_rate >= ROUND_TRIP_SUCCESS_RATE, f"{case.id}: {success_rate:.0%} solved; failed: {failures[:5]}"


@pytest.mark.parametrize("case", ROBOT_PARAMS)
def test_position_ik_from_a_nearby_seed_converges_to_the_nearby_solution(case):
    """getPositionIK (one local solve) from a seed close to the answer ends close to that answer."""
    plugin = shared_plugin(case.id)
    check = verifier_for(case, plugin)
    rng = np.random.default_rng(SEED)
    lower = np.array([check.reference.joints[n].lower for n in check.joint_names])
    upper = np.array([check.reference.joints[n].upper for n in check.joint_names])
    continuous = np.array([check.reference.joints[n].type == "continuous" for n in check.joint_names])
    for k in range(NEARBY_QUERIES_PER_ROBOT):
        q_true = check.random_configuration(rng)
        seed = q_true + rng.uniform(-NEARBY_SEED_OFFSET, NEARBY_SEED_OFFSET, q_true.shape)
        seed = np.where(continuous, seed, np.clip(seed, lower, upper))
        target = check.targets(q_true)[0]
        result = plugin.getPositionIK(target, seed.tolist())
        assert result.success, f"{case.id} #{k}: {result.error_code.name} {result.message} (q={q_true.tolist()})"
        assert not check.problems(result.solution, target)
        distance = np.abs(np.array(result.solution) - q_true).max()
        assert distance <= NEARBY_SOLUTION_DISTANCE, (
            f"{case.id} #{k}: solution {result.solution} is {distance:.3g} from the answer {q_true.tolist()}")


@pytest.mark.parametrize("case", ROBOT_PARAMS)
def test_random_walk_of_small_pose_steps_moves_the_joints_continuously(case):
    """Small pose steps, each solved from the previous solution: every solution verified, no joint jumps."""
    plugin = shared_plugin(case.id)
    check = verifier_for(case, plugin)
    rng = np.random.default_rng(SEED)
    lower = np.array([check.reference.joints[n].lower for n in check.joint_names])
    upper = np.array([check.reference.joints[n].upper for n in check.joint_names])
    margin = np.minimum(0.1 * (upper - lower), 0.3)
    q_true = np.clip(check.random_configuration(rng), lower + margin, upper - margin)
    previous = q_true.copy()
    for step in range(WALK_STEPS):
        q_true = np.clip(q_true + rng.uniform(-WALK_STEP, WALK_STEP, q_true.shape), lower, upper)
        target = check.targets(q_true)[0]
        result = plugin.searchPositionIK(target, previous.tolist(), ROUND_TRIP_TIMEOUT)
        assert result.success, f"{case.id} step {step}: {result.error_code.name} {result.message}"
        assert not check.problems(result.solution, target), f"{case.id} step {step}"
        solution = np.array(result.solution)
        jump = np.abs(solution - previous).max()
        assert jump <= WALK_JUMP_LIMIT, (
            f"{case.id} step {step}: joints jumped by {jump:.3g} from {previous.tolist()} to {result.solution}")
        previous = solution


#: UR5 DH parameters [m] (Universal Robots' published table): tool0 at zero joint angles sits at
#: (-(a2 + a3), d4 + d6, d1 - d5) in base_link (ROS's base_link is the DH base turned by pi about z).
UR5_D1, UR5_A2, UR5_A3, UR5_D4, UR5_D5, UR5_D6 = 0.089159, -0.425, -0.39225, 0.10915, 0.09465, 0.0823
UR5_ZERO_TOOL0 = Pose((-(UR5_A2 + UR5_A3), UR5_D4 + UR5_D6, UR5_D1 - UR5_D5),
                      (0.0, math.sqrt(0.5), math.sqrt(0.5), 0.0))
#: Panda SRDF 'ready' state (kinematics_py/robots/panda.srdf): flange 0.307 m ahead of and 0.590 m above
#: panda_link0, pointing down (Franka's DH table; the pose is checked against pinocchio below too).
PANDA_READY = [0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785]
PANDA_READY_FLANGE_POSITION = (0.3070, 0.0, 0.5903)
#: The Panda constants above are rounded to 0.1 mm [m].
ROUNDED_CONSTANT_TOLERANCE = 1e-4
KNOWN_ANSWER_SEARCHES = 20


def known_answers():
    return [
        pytest.param("bundled-ur5", [0.0] * 6, UR5_ZERO_TOOL0, id="ur5-zero"),
        pytest.param("bundled-panda", PANDA_READY, None, id="panda-ready"),
    ]


def test_panda_ready_state_is_read_from_the_srdf():
    """The Panda constant used below is the SRDF's 'ready' state, and its flange pose is as published."""
    from kinematics_py import RobotModel, SemanticModel
    model = RobotModel.from_urdf_file(bundled_robot("panda.urdf"))
    ready = SemanticModel.from_srdf_file(bundled_robot("panda.srdf"), model).group_states["panda_arm"]["ready"]
    plugin = shared_plugin("bundled-panda")
    assert [ready[name] for name in plugin.getJointNames()] == PANDA_READY
    T = verifier_for(CASES["bundled-panda"], plugin).tip_poses(PANDA_READY)[0]
    assert np.abs(T[:3, 3] - PANDA_READY_FLANGE_POSITION).max() <= ROUNDED_CONSTANT_TOLERANCE
    assert T[2, 2] == pytest.approx(-1.0, abs=1e-5), "the flange's z axis points down"


@pytest.mark.parametrize("case_id, answer, published_pose", known_answers())
def test_pose_with_a_known_answer(case_id, answer, published_pose):
    """FK of the known configuration is the published pose; IK from near it returns it; IK from random
    seeds reaches the pose."""
    case = CASES[case_id]
    plugin = shared_plugin(case_id)
    check = verifier_for(case, plugin)
    ok, (pose,) = plugin.getPositionFK([case.tip], answer)
    assert ok
    if published_pose is not None:
        position, rotation = pose_error(matrix_from_pose(published_pose), matrix_from_pose(pose))
        assert position <= FK_TOLERANCE and rotation <= FK_TOLERANCE, (position, rotation)
    target = published_pose or pose

    exact = plugin.getPositionIK(target, answer)
    assert exact.success and np.abs(np.array(exact.solution) - answer).max() <= NEARBY_SOLUTION_DISTANCE / 10
    rng = np.random.default_rng(SEED)
    nearby = np.array(answer) + rng.uniform(-NEARBY_SEED_OFFSET, NEARBY_SEED_OFFSET, len(answer))
    result = plugin.getPositionIK(target, nearby.tolist())
    assert result.success, result.message
    assert np.abs(np.array(result.solution) - answer).max() <= NEARBY_SOLUTION_DISTANCE
    for k in range(KNOWN_ANSWER_SEARCHES):
        result = plugin.searchPositionIK(target, check.random_configuration(rng).tolist(), ROUND_TRIP_TIMEOUT)
        assert result.success, f"#{k}: {result.message}"
        assert not check.problems(result.solution, target), f"#{k}: {result.solution}"
