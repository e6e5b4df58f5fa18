"""Controllers read as move_group reads a config package's moveit_controllers.yaml: moveit_resources' Panda config
loads unchanged; every malformed entry is refused naming the parameter; MoveIt's defaults where a key is absent."""
from pathlib import Path

import pytest
import yaml

from kinematics_py.errors import KinematicsError
from kinematics_py.execution.controllers import (
    ControllerConfig,
    ControllerConfigError,
    ExecutionSettings,
    flatten,
    is_execution_parameter,
)

PANDA_CONFIG = Path(__file__).resolve().parents[1] / "data" / "moveit_resources" / "panda_moveit_config" / "config"
PANDA_JOINTS = tuple(f"panda_joint{i}" for i in range(1, 8))


def panda_parameters() -> dict:
    """moveit_controllers.yaml and initial_positions.yaml as move_group gets them (dotted parameters)."""
    return {**flatten(yaml.safe_load((PANDA_CONFIG / "moveit_controllers.yaml").read_text())),
            **flatten(yaml.safe_load((PANDA_CONFIG / "initial_positions.yaml").read_text()))}


def test_moveit_resources_panda_config_loads_unchanged():
    config = ControllerConfig.from_parameters(panda_parameters())
    (arm,) = config.controllers
    assert (arm.name, arm.type, arm.action_ns, arm.default, arm.joints) == (
        "panda_arm_controller", "FollowJointTrajectory", "follow_joint_trajectory", True, PANDA_JOINTS)
    assert arm.action_name == "panda_arm_controller/follow_joint_trajectory"
    assert config.settings == ExecutionSettings(1.2, 0.5, 0.01, True)
    assert config.initial_positions == {"panda_joint1": 0.0, "panda_joint2": -0.785, "panda_joint3": 0.0,
                                        "panda_joint4": -2.356, "panda_joint5": 0.0, "panda_joint6": 1.571,
                                        "panda_joint7": 0.785}
    assert all(is_execution_parameter(name) for name in panda_parameters())
    assert not is_execution_parameter("robot_description_kinematics.panda_arm.kinematics_solver_timeout")


def test_no_controllers_and_moveit_defaults():
    config = ControllerConfig.from_parameters({})
    assert config.controllers == () and config.initial_positions == {}
    assert config.settings == ExecutionSettings(1.1, 0.5, 0.01, True)


def test_the_duration_rule():
    """expected x scaling + margin; no limit without monitoring."""
    assert ExecutionSettings(1.2, 0.5, 0.01, True).allowed_duration(2.0) == pytest.approx(2.9)
    assert ExecutionSettings(1.2, 0.5, 0.01, False).allowed_duration(2.0) == float("inf")


@pytest.mark.parametrize("change, names", [
    ({"moveit_simple_controller_manager.controller_names": "panda_arm_controller"}, "controller_names"),
    ({"moveit_simple_controller_manager.controller_names": ["a", "a"]}, "twice"),
    ({"moveit_simple_controller_manager.panda_arm_controller.type": "JointTrajectory"}, ".type"),
    ({"moveit_simple_controller_manager.panda_arm_controller.action_ns": None}, ".action_ns"),
    ({"moveit_simple_controller_manager.panda_arm_controller.default": "yes"}, ".default"),
    ({"moveit_simple_controller_manager.panda_arm_controller.joints": []}, ".joints"),
    ({"moveit_simple_controller_manager.panda_arm_controller.joints": ["j", "j"]}, "twice"),
    ({"trajectory_execution.allowed_start_tolerance": -1.0}, "allowed_start_tolerance"),
    ({"trajectory_execution.allowed_goal_duration_margin": float("nan")}, "allowed_goal_duration_margin"),
    ({"trajectory_execution.execution_duration_monitoring": 1}, "execution_duration_monitoring"),
    ({"initial_positions.panda_joint1": "zero"}, "initial_positions.panda_joint1"),
])
def test_a_malformed_entry_is_refused_naming_it(change, names):
    parameters = {**panda_parameters(), **change}
    with pytest.raises(ControllerConfigError, match=names) as raised:
        ControllerConfig.from_parameters({k: v for k, v in parameters.items() if v is not None})
    assert isinstance(raised.value, KinematicsError)


def test_by_name_lists_the_configured_controllers():
    config = ControllerConfig.from_parameters(panda_parameters())
    assert config.by_name("panda_arm_controller").joints == PANDA_JOINTS
    with pytest.raises(ControllerConfigError, match="panda_arm_controller"):
        config.by_name("hand_controller")
