"""ServoCore, ROS-free: moveit_servo's settings, commands and safety rules on the bundled Panda and UR5.

Each test drives the core period by period from a fixed start (time in steps of publish_period) and checks the
property the issue's proof names: a constant twist moves the tip along it (direction within TWIST_ANGLE, speed
within SPEED_SHARE), a jog moves only its joint, a pose target is reached within the tolerances, the arm stops
short of a box, before a joint limit and at a singularity, and stops once commands are older than the timeout;
a malformed command gets a reason, not an exception. moveit_servo's panda_simulated_config.yaml (moveit2,
moveit_ros/moveit_servo/config, commit 3e28caf) loads unchanged.
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import yaml

from kinematics_py import CollisionChecker, KinematicsPlugin, ParameterError, SemanticModel
from kinematics_py.collision.geometry import Box
from kinematics_py.geometry.transforms import make_transform
from kinematics_py.robots import bundled_robot_path
from kinematics_py.servo import (
    CommandType,
    JointJogCommand,
    PoseCommand,
    ProximityProbe,
    ServoCore,
    ServoSettings,
    StatusCode,
    TwistCommand,
)

PANDA_CONFIG = Path(__file__).resolve().parents[1] / "data" / "moveit_servo" / "panda_simulated_config.yaml"
PANDA_READY = [0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785]
UR5_Q = [0.3, -1.0, 1.2, -0.4, 0.5, -0.6]
TWIST_ANGLE = math.radians(2.0)
SPEED_SHARE = 0.05
GROUPS = {"panda": "panda_arm", "ur5": "ur_manipulator"}


def plugin_of(robot: str) -> KinematicsPlugin:
    plugin = KinematicsPlugin()
    assert plugin.initialize(bundled_robot_path(robot).read_text(), GROUPS[robot],
                             robot_description_semantic=bundled_robot_path(robot, "srdf").read_text()), \
        plugin.last_error
    return plugin


def core_of(robot: str, start, proximity=None, **parameters) -> ServoCore:
    settings = ServoSettings.from_parameters({"move_group_name": GROUPS[robot], **parameters})
    core = ServoCore(plugin_of(robot), settings, proximity)
    core.reset(start)
    return core


def run(core: ServoCore, command, steps: int, start_time: float = 0.0):
    """Switch to ``command``'s type, send it every period for ``steps`` periods; the steps taken."""
    kind = {TwistCommand: CommandType.TWIST, JointJogCommand: CommandType.JOINT_JOG, PoseCommand: CommandType.POSE}
    if core.command_type != kind[type(command)]:
        assert core.switch_command_type(kind[type(command)])
    taken = []
    for k in range(steps):
        now = start_time + k * core.period
        if command is not None:
            assert core.command(command, now) == ""
        taken.append(core.step(now))
    return taken


def test_defaults_are_moveit_servos_and_its_panda_config_loads_unchanged():
    defaults = ServoSettings.from_parameters({})
    assert not defaults.enabled
    assert (defaults["publish_period"], defaults["scale.linear"], defaults["scale.rotational"],
            defaults["scale.joint"], defaults["incoming_command_timeout"], defaults["joint_limit_margins"],
            defaults["lower_singularity_threshold"], defaults["hard_stop_singularity_threshold"],
            defaults["command_out_type"]) == (0.01, 0.4, 0.8, 0.5, 0.1, (0.1,), 17.0, 30.0,
                                              "trajectory_msgs/JointTrajectory")
    loaded = ServoSettings.from_parameters(yaml.safe_load(PANDA_CONFIG.read_text()))
    assert loaded.enabled and loaded["move_group_name"] == "panda_arm" and loaded["publish_period"] == 0.034
    assert loaded["joint_limit_margins"] == (0.1,)  # its older joint_limit_margin, read as today's name
    assert {"use_gazebo", "planning_frame", "ee_frame_name", "low_latency_mode"} <= set(loaded.ignored)
    nested = ServoSettings.from_parameters({"moveit_servo": {"scale": {"linear": 0.2}},
                                            "moveit_servo.publish_period": 0.02})
    assert nested["scale.linear"] == 0.2 and nested["publish_period"] == 0.02
    with pytest.raises(ParameterError, match=r"one of \['unitless', 'speed_units'\]"):
        ServoSettings.from_parameters({"command_in_type": "metres"})
    with pytest.raises(ParameterError, match="publish_period.* must be within"):
        ServoSettings.from_parameters({"publish_period": 0.0})


@pytest.mark.parametrize("robot,start", [("panda", PANDA_READY), ("ur5", UR5_Q)])
def test_a_constant_twist_moves_the_tip_along_it_at_its_speed(robot, start):
    core = core_of(robot, start, command_in_type="speed_units")
    chain = core.chain
    twist = np.array([0.03, -0.05, 0.04, 0.0, 0.0, 0.0])
    before = chain.forward_kinematics(np.array(start))
    steps = run(core, TwistCommand(twist), 50)
    assert all(step.status == StatusCode.NO_WARNING for step in steps)
    after = chain.forward_kinematics(steps[-1].positions)
    moved = after[:3, 3] - before[:3, 3]
    angle = math.acos(np.dot(moved, twist[:3]) / np.linalg.norm(moved) / np.linalg.norm(twist[:3]))
    assert angle <= TWIST_ANGLE
    speed = np.linalg.norm(moved) / (50 * core.period)
    assert abs(speed - np.linalg.norm(twist[:3])) <= SPEED_SHARE * np.linalg.norm(twist[:3])
    assert np.linalg.norm(rotation_change(before, after)) < 1e-3  # no angular velocity asked: none given


def rotation_change(before, after):
    from kinematics_py.geometry.transforms import rotation_log
    return rotation_log(before[:3, :3].T @ after[:3, :3])


def test_a_twist_given_in_the_tip_frame_is_applied_in_its_axes():
    core = core_of("panda", PANDA_READY, command_in_type="speed_units")
    T_base_tip = core.chain.forward_kinematics(np.array(PANDA_READY))
    steps = run(core, TwistCommand(np.array([0.0, 0.0, 0.05, 0.0, 0.0, 0.0]), T_base_tip), 20)
    moved = core.chain.forward_kinematics(steps[-1].positions)[:3, 3] - T_base_tip[:3, 3]
    assert np.dot(moved / np.linalg.norm(moved), T_base_tip[:3, 2]) > math.cos(TWIST_ANGLE)  # along the tip's z


def test_a_joint_jog_moves_only_its_joint_at_the_scaled_speed():
    core = core_of("ur5", UR5_Q)
    steps = run(core, JointJogCommand(("elbow_joint",), (1.0,)), 10)
    change = steps[-1].positions - np.array(UR5_Q)
    assert change[2] == pytest.approx(10 * core.period * 0.5)  # unitless: times scale.joint
    assert not np.delete(change, 2).any()


def test_a_pose_target_is_reached_within_the_tolerances():
    core = core_of("panda", PANDA_READY)
    target = core.chain.forward_kinematics(np.array(PANDA_READY))
    target[:3, 3] += (0.05, 0.03, -0.04)
    steps = run(core, PoseCommand(target), 200)
    reached = core.chain.forward_kinematics(steps[-1].positions)
    assert np.linalg.norm(reached[:3, 3] - target[:3, 3]) <= core.settings["pose_tracking.linear_tolerance"]
    assert np.linalg.norm(rotation_change(target, reached)) <= core.settings["pose_tracking.angular_tolerance"]
    assert steps[-1].message == "pose target reached" and not steps[-1].velocities.any()


def test_the_arm_stops_before_a_joint_limit_less_its_margin():
    core = core_of("panda", PANDA_READY, command_in_type="speed_units")
    upper = core.upper[0]
    steps = run(core, JointJogCommand(("panda_joint1",), (1.0,)), 400)
    assert max(step.positions[0] for step in steps) <= upper - core.margins[0]
    assert steps[-1].status == StatusCode.JOINT_BOUND and not steps[-1].velocities.any()
    back = run(core, JointJogCommand(("panda_joint1",), (-1.0,)), 5, start_time=10.0)
    assert back[-1].status == StatusCode.NO_WARNING and back[-1].velocities[0] < 0  # away from the bound: moves


def test_the_arm_decelerates_and_stops_at_a_singularity_and_leaves_it():
    """UR5 wrist singularity (wrist_2 at 0): jogging wrist_2 toward it slows down, then halts before it."""
    start = list(UR5_Q)
    start[4] = 0.3
    core = core_of("ur5", start, command_in_type="speed_units")
    steps = run(core, JointJogCommand(("wrist_2_joint",), (-0.5,)), 300)
    statuses = [step.status for step in steps]
    assert StatusCode.DECELERATE_FOR_APPROACHING_SINGULARITY in statuses
    assert statuses[-1] == StatusCode.HALT_FOR_SINGULARITY and not steps[-1].velocities.any()
    assert min(step.positions[4] for step in steps) > 0.0
    away = run(core, JointJogCommand(("wrist_2_joint",), (0.5,)), 3, start_time=10.0)
    assert away[-1].velocities[4] > 0 and away[-1].status in (StatusCode.DECELERATE_FOR_LEAVING_SINGULARITY,
                                                                StatusCode.NO_WARNING)


def test_the_arm_stops_short_of_a_box_in_its_way():
    plugin = plugin_of("panda")
    model = plugin.robot_model
    checker = CollisionChecker(model, SemanticModel.from_srdf_string(bundled_robot_path("panda", "srdf").read_text(),
                                                                     model))
    T_base_tip = plugin.group_setup.problem.chains[0].forward_kinematics(np.array(PANDA_READY))
    box_x = T_base_tip[0, 3] + 0.15
    checker.scene.add_object("box", [Box((0.04, 0.4, 0.6))], pose=make_transform(None, (box_x, 0.0, 0.4)))
    settings = ServoSettings.from_parameters({"move_group_name": "panda_arm", "command_in_type": "speed_units",
                                              "collision_check_rate": 0.0})
    probe = ProximityProbe(checker, plugin.getJointNames(), settings["scene_collision_proximity_threshold"],
                           settings["self_collision_proximity_threshold"])
    core = ServoCore(plugin, settings, probe.distances)
    core.reset(PANDA_READY)
    steps = run(core, TwistCommand(np.array([0.1, 0.0, 0.0, 0.0, 0.0, 0.0])), 2000)
    statuses = [step.status for step in steps]
    assert StatusCode.DECELERATE_FOR_COLLISION in statuses and statuses[-1] == StatusCode.HALT_FOR_COLLISION
    state = dict(zip(plugin.getJointNames(), steps[-1].positions))
    assert not checker.is_colliding(state)
    assert probe.distances(steps[-1].positions)[0] < settings["scene_collision_proximity_threshold"]


def test_commands_older_than_the_timeout_stop_the_arm():
    core = core_of("ur5", UR5_Q)
    timeout = core.settings["incoming_command_timeout"]
    assert core.switch_command_type(CommandType.JOINT_JOG)
    assert core.command(JointJogCommand(("elbow_joint",), (1.0,)), 0.0) == ""
    assert core.step(timeout - core.period).velocities.any()
    late = core.step(timeout + core.period)
    assert not late.velocities.any() and late.message == "command timed out"


def test_malformed_commands_get_a_reason_and_pausing_stops():
    core = core_of("ur5", UR5_Q)
    assert "switch first" in core.command(JointJogCommand(("elbow_joint",), (1.0,)), 0.0)
    assert "twist takes 6 velocities" in core.command(TwistCommand(np.zeros(5)), 0.0)
    assert "not finite" in core.command(TwistCommand(np.array([np.nan] + [0.0] * 5)), 0.0)
    assert core.switch_command_type(0) and not core.switch_command_type(7)
    assert "unknown: ['no_such_joint']" in core.command(JointJogCommand(("no_such_joint",), (1.0,)), 0.0)
    assert core.command(JointJogCommand(("elbow_joint",), (1.0,)), 0.0) == ""
    core.paused = True
    assert core.step(0.01).message == "paused"
