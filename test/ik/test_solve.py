"""``ik.solve``: a request parsed once, one strategy chosen per set-up and request, bad input answered."""
from __future__ import annotations

import numpy as np
import pytest
from robots import UR5_Q, UR5_UNREACHABLE_POSITION, bundled_robot

from kinematics_py import (
    CollisionChecker,
    DiscretizationMethod,
    ErrorCode,
    KinematicsPlugin,
    KinematicsQueryOptions,
    Pose,
    SemanticModel,
)
from kinematics_py.geometry import poses
from kinematics_py.ik import request as request_module
from kinematics_py.ik import solve as solve_module
from kinematics_py.ik.group_setup import PluginState
from kinematics_py.ik.request import IkRequest
from kinematics_py.ik.solve import solve

PANDA_READY = np.array([0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785])
UNREACHABLE = Pose(UR5_UNREACHABLE_POSITION, (0.0, 0.0, 0.0, 1.0))


def _plugin(robot: str, group: str, parameters: dict | None = None) -> KinematicsPlugin:
    plugin = KinematicsPlugin()
    assert plugin.initialize(bundled_robot(f"{robot}.urdf").read_text(), group,
                             robot_description_semantic=bundled_robot(f"{robot}.srdf").read_text(),
                             parameters=parameters), plugin.last_error
    return plugin


@pytest.fixture(scope="module")
def ur5() -> KinematicsPlugin:
    plugin = _plugin("ur5", "ur_manipulator")
    model = plugin.robot_model
    plugin.setCollisionChecker(CollisionChecker(model, SemanticModel.from_srdf_string(
        bundled_robot("ur5.srdf").read_text(), model)))
    return plugin


@pytest.fixture(scope="module")
def panda() -> KinematicsPlugin:
    return _plugin("panda", "panda_arm")


def _reachable(plugin: KinematicsPlugin, q: np.ndarray) -> Pose:
    ok, (pose,) = plugin.getPositionFK(plugin.getTipFrames(), q.tolist())
    assert ok
    return pose


@pytest.mark.parametrize("kind", ["plain", "callback", "avoid_collisions"])
def test_a_request_reads_its_target_once_whatever_path_it_takes(ur5, target_parses, monkeypatch, kind):
    """An unreachable Pose goes through every step (the lean path, the closed form, the numerical search, and
    for avoid_collisions the diagnosis of the failure): its target is read and converted once."""
    conversions = []
    convert = poses.transform_from_any_pose

    def counting(pose):
        conversions.append(pose)
        return convert(pose)
    for module in (solve_module, request_module):
        monkeypatch.setattr(module, "transform_from_any_pose", counting)
    callback = (lambda pose, solution: True) if kind == "callback" else None
    result = ur5.searchPositionIK(UNREACHABLE, [0.0] * 6, 0.02, solution_callback=callback,
                                  avoid_collisions=kind == "avoid_collisions")
    assert not result.success, result.message
    assert len(conversions) == 1
    assert len(target_parses) == 1


def test_the_closed_form_answers_6r_arms(ur5):
    result = ur5.searchPositionIK(_reachable(ur5, np.array(UR5_Q)), (np.array(UR5_Q) + 0.05).tolist(), 0.5,
                                  solution_callback=lambda pose, solution: True)
    assert result.success and "closed form" in result.message
    assert np.allclose(result.solution, UR5_Q, atol=1e-6)


def test_a_plain_request_to_a_6r_arm_takes_the_lean_path(ur5):
    result = ur5.searchPositionIK(_reachable(ur5, np.array(UR5_Q)), (np.array(UR5_Q) + 0.05).tolist())
    assert result.success and "the branch nearest the seed" in result.message


def test_the_numerical_search_answers_plain_requests_to_7_joint_arms(panda):
    result = panda.searchPositionIK(_reachable(panda, PANDA_READY + 0.1), PANDA_READY.tolist(), 0.5)
    assert result.success and "local search" in result.message


def test_a_discretization_method_on_a_7_joint_arm_takes_the_locked_joint_closed_form(panda):
    options = KinematicsQueryOptions(discretization_method=DiscretizationMethod.ALL_DISCRETIZED)
    result = panda.searchPositionIK(_reachable(panda, PANDA_READY), PANDA_READY.tolist(), 1.0, options=options)
    assert result.success and "closed form" in result.message and len(result.solutions) > 1


def test_solve_answers_an_uninitialized_state_with_an_error_code():
    result = solve(PluginState(), IkRequest(np.eye(4), [0.0] * 6))
    assert result.error_code == ErrorCode.FAILURE and "initialize" in result.message


def test_the_callbacks_get_the_pose_as_given_and_the_solution_as_a_list(ur5):
    seen = []

    def callback(pose, solution):
        seen.append((pose, solution))
        return True
    target = _reachable(ur5, np.array(UR5_Q))
    assert ur5.searchPositionIK(target, list(UR5_Q), 0.5, solution_callback=callback).success
    assert seen and all(pose is target and type(solution) is list and all(type(v) is float for v in solution)
                        for pose, solution in seen)
