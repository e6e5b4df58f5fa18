"""The request model: queries answered by one call into the core, with the same answers as the plugin's API."""
from __future__ import annotations

import pickle

import numpy as np
import pytest
from robots import TREE_SRDF, bundled_robot, small_urdf

from kinematics_py import KinematicsPlugin
from kinematics_py.errors import ErrorCode
from kinematics_py.geometry.poses import transform_from_any_pose
from kinematics_py.model.constraints import JointBound, RequestConstraints
from kinematics_py.planning.time_parameterization import joint_limits
from kinematics_py.queries.cartesian import CartesianQuery, LinkSpeedLimit, plan_cartesian_query, time_cartesian_path
from kinematics_py.queries.ik import IkQuery, solve_ik_query
from kinematics_py.state_check import StateCheck

UR5_Q = np.array([0.3, -1.2, 1.5, -1.9, -1.57, 0.2])


def _plugin(urdf: str, srdf: str, group: str) -> KinematicsPlugin:
    plugin = KinematicsPlugin()
    assert plugin.initialize(urdf, group, robot_description_semantic=srdf), plugin.last_error
    return plugin


@pytest.fixture(scope="module")
def ur5() -> KinematicsPlugin:
    return _plugin(bundled_robot("ur5.urdf").read_text(), bundled_robot("ur5.srdf").read_text(), "ur_manipulator")


def _T_base_tips(plugin: KinematicsPlugin, q: np.ndarray) -> np.ndarray:
    ok, poses = plugin.getPositionFK(plugin.getTipFrames(), q.tolist())
    assert ok
    return np.array([transform_from_any_pose(pose) for pose in poses])


def _check(plugin: KinematicsPlugin, constraints=None, **kwargs) -> StateCheck:
    names = plugin.getJointNames()
    base = plugin.robot_model.resolve_joint_values()
    return StateCheck(names, base, constraints, **kwargs)


def test_an_ik_query_reaches_its_target_and_answers_the_whole_state(ur5):
    answer = solve_ik_query(ur5, IkQuery(_T_base_tips(ur5, UR5_Q), UR5_Q + 0.05, _check(ur5), 0.5))
    assert answer.result.success, answer.result.message
    solution = np.array([answer.state[name] for name in ur5.getJointNames()])
    assert np.allclose(_T_base_tips(ur5, solution), _T_base_tips(ur5, UR5_Q), atol=1e-6)
    assert set(answer.state) == set(ur5.robot_model.resolve_joint_values())


def test_an_ik_query_keeps_to_its_constraints_with_their_error_code(ur5):
    joint = ur5.getJointNames()[0]
    excluded = RequestConstraints(joint_bounds=(JointBound(joint, 2.49, 2.51, False, 2.5),))
    answer = solve_ik_query(ur5, IkQuery(_T_base_tips(ur5, UR5_Q), UR5_Q, _check(ur5, excluded), 0.05))
    assert not answer.result.success and answer.state is None
    allowed = RequestConstraints(joint_bounds=(JointBound(joint, UR5_Q[0] - 0.01, UR5_Q[0] + 0.01, False, UR5_Q[0]),))
    seed = UR5_Q.copy()
    seed[0] -= 1.0  # outside the bound: the query moves its seed inside
    answer = solve_ik_query(ur5, IkQuery(_T_base_tips(ur5, UR5_Q), seed, _check(ur5, allowed), 0.5))
    assert answer.result.success, answer.result.message
    assert abs(answer.state[joint] - UR5_Q[0]) <= 0.01 + 1e-9


def test_a_state_check_names_the_violation_with_its_code_and_survives_pickling(ur5):
    joint = ur5.getJointNames()[1]
    constraints = RequestConstraints(joint_bounds=(JointBound(joint, -0.1, 0.1, False, 0.0),))
    check = _check(ur5, constraints, violation_code=ErrorCode.GOAL_VIOLATES_PATH_CONSTRAINTS, prefix="path: ")
    copied = pickle.loads(pickle.dumps(check))
    for each in (check, copied):
        verdict = each.bound(ur5.robot_model)(UR5_Q)
        assert verdict.error_code == ErrorCode.GOAL_VIOLATES_PATH_CONSTRAINTS and verdict.reason.startswith("path: ")
        assert joint in verdict.reason
        assert each.bound(ur5.robot_model)(np.zeros(6)).error_code == ErrorCode.SUCCESS
    assert not _check(ur5) and check


def test_an_ik_query_of_a_two_tip_group_takes_its_targets_as_one_array():
    plugin = _plugin(small_urdf("tree.urdf").read_text(), TREE_SRDF, "arms")
    rng = np.random.default_rng(3)
    lower, upper = (np.array(v) for v in zip(*[(j.lower, j.upper) for j in
                                               (plugin.robot_model.joints[n] for n in plugin.getJointNames())]))
    q = rng.uniform(lower * 0.5, upper * 0.5)
    targets = _T_base_tips(plugin, q)
    assert targets.shape == (2, 4, 4)
    answer = solve_ik_query(plugin, IkQuery(targets, np.zeros(len(q)), _check(plugin), 1.0))
    assert answer.result.success, answer.result.message
    solution = np.array([answer.state[name] for name in plugin.getJointNames()])
    assert np.allclose(_T_base_tips(plugin, solution), targets, atol=1e-5)


def test_a_cartesian_query_follows_its_line_and_is_timed_within_its_limits(ur5):
    T_start = _T_base_tips(ur5, UR5_Q)[0]
    T_end = T_start.copy()
    T_end[:3, 3] += [0.0, 0.0, 0.05]
    limits = joint_limits(ur5.robot_model, ur5.getJointNames()).scaled(0.5, 0.5)
    tool = ur5.getTipFrames()[0]
    query = CartesianQuery(UR5_Q, T_end[None], 0.005, np.eye(4), _check(ur5), limits,
                           speed_limit=LinkSpeedLimit(tool, 0.02))
    path = plan_cartesian_query(ur5, query)
    assert path.complete and path.fraction == pytest.approx(1.0)
    reached = _T_base_tips(ur5, path.positions[-1])[0]
    assert np.allclose(reached[:3, 3], T_end[:3, 3], atol=1e-5)
    timing = time_cartesian_path(ur5, query, path)
    assert (np.abs(timing.velocities) <= limits.max_velocities * (1 + 1e-3) + 1e-9).all()
    # the tool's speed limit holds: 5 cm at <= 2 cm/s takes at least 2.5 s
    assert timing.time_from_start[-1] >= 2.5 - 1e-3


def test_a_state_check_on_a_mimic_joint_follows_its_master():
    """A joint bound on a mimic joint sees the value its master gives it (as resolve_joint_values derives it)."""
    from kinematics_py import RobotModel

    model = RobotModel.from_urdf_file(small_urdf("mimic.urdf"))
    mimic = next(name for name in model.joint_names if model.joints[name].mimic is not None)
    spec = model.joints[mimic].mimic
    master_value = 0.3
    expected = spec.multiplier * master_value + spec.offset
    bound = JointBound(mimic, expected - 1e-6, expected + 1e-6, False, expected)
    check = StateCheck([spec.joint], model.resolve_joint_values(), RequestConstraints(joint_bounds=(bound,)))
    assert check.bound(model)(np.array([master_value])).error_code == ErrorCode.SUCCESS
    assert check.bound(model)(np.array([master_value + 0.1])).error_code == ErrorCode.GOAL_CONSTRAINTS_VIOLATED
