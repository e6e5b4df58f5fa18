"""VelocityIKSolver: KDL's ChainIkSolverVel_pinv_nso (Debian's PyKDL 1.5.1 as the reference) and what it adds.

Against KDL, on the bundled Panda (7 joints) and UR5 (6): the same joint velocities within KDL_RELATIVE (the
largest difference over the largest velocity) over random states and twists, without and with the null-space
term (non-uniform weights), and near and at singularities; the error code +1 exactly where KDL's plain
ChainIkSolverVel_pinv reports a singular answer. Without KDL: the twist is met (J qdot = twist away from
singularities), the null-space term leaves it unchanged, the SVD reconstructs J, the batch equals single calls,
the options (damping, joint-limit pull, task weights) do what they say, and bad input raises naming what is valid.
Fixed seeds.
"""
from __future__ import annotations

import numpy as np
import pytest
from kdl_reference import build_chain, pykdl_or_skip
from robots import small_urdf

from kinematics_py import (
    JointValueError,
    KinematicsPlugin,
    UnknownLinkError,
    VelocityIKCode,
    VelocityIKError,
    VelocityIKOptions,
    VelocityIKSolver,
)
from kinematics_py.robots import bundled_robot_path

#: KDL's ChainIkSolverVel_pinv::E_CONVERGE_PINV_SINGULAR (not in PyKDL's bindings): more zeroed singular values
#: than the Jacobian's columns exceed its rows.
KDL_PINV_SINGULAR = 100
#: Largest joint-velocity difference to KDL's, relative to the largest joint velocity.
KDL_RELATIVE = 1e-9
#: How closely J qdot meets the twist away from singularities (relative to the twist).
TWIST_RELATIVE = 1e-9
STATES = 200
SEED = 31
GROUPS = {"panda": "panda_arm", "ur5": "ur_manipulator"}
#: Singular configurations: the Panda stretched out (joints 1, 3 and 5 about one line), the UR5 with its wrist
#: axes 4 and 6 aligned (wrist_2 at 0); the joint moved to come near them (the smallest singular value grows as
#: about 0.6 times the distance on both).
SINGULAR = {"panda": ([0.0, 0.0, 0.0, 0.0, 0.0, 1.5, 0.0], 1),
            "ur5": ([0.3, -1.0, 1.2, -0.4, 0.0, -0.6], 4)}
#: Distances [rad] from the singular configuration: singular values well above eps, near it, below it, zero.
NEAR = (1e-1, 1e-3, 1e-7, 0.0)


def bundled_plugin(robot: str) -> KinematicsPlugin:
    plugin = KinematicsPlugin()
    assert plugin.initialize(bundled_robot_path(robot).read_text(), GROUPS[robot],
                             robot_description_semantic=bundled_robot_path(robot, "srdf").read_text()), \
        plugin.last_error
    return plugin


@pytest.fixture(scope="module", params=sorted(GROUPS))
def robot(request):
    return request.param, bundled_plugin(request.param)


class Kdl:
    """KDL's _nso and plain pinv solvers on the same chain as the plugin's group."""

    def __init__(self, robot: str, plugin: KinematicsPlugin):
        self.kdl = kdl = pykdl_or_skip()
        chain, names, self.lower, self.upper = build_chain(kdl, bundled_robot_path(robot).read_text(),
                                                           plugin.getBaseFrame(), plugin.getTipFrame())
        assert names == plugin.getJointNames()
        self.n = len(names)
        self.chain = chain
        self.nso = kdl.ChainIkSolverVel_pinv_nso(chain)
        self.pinv = kdl.ChainIkSolverVel_pinv(chain)
        self.jacobian = kdl.ChainJntToJacSolver(chain)

    def array(self, values):
        array = self.kdl.JntArray(self.n)
        for i, value in enumerate(values):
            array[i] = float(value)
        return array

    def twist(self, v):
        return self.kdl.Twist(self.kdl.Vector(*v[:3]), self.kdl.Vector(*v[3:]))

    def nso_velocities(self, q, v, opt_pos, weights, alpha):
        """KDL's answer; without opt_pos it is given q (A = 0: no null-space term), as KDL needs one."""
        assert self.nso.setOptPos(self.array(q if opt_pos is None else opt_pos)) == 0
        assert self.nso.setWeights(self.array(weights)) == 0
        self.nso.setAlpha(alpha)
        out = self.kdl.JntArray(self.n)
        code = self.nso.CartToJnt(self.array(q), self.twist(v), out)
        assert code == 0, self.nso.strError(code)
        return np.array([out[i] for i in range(self.n)])

    def pinv_singular(self, q, v) -> bool:
        out = self.kdl.JntArray(self.n)
        code = self.pinv.CartToJnt(self.array(q), self.twist(v), out)
        assert code in (0, KDL_PINV_SINGULAR), self.pinv.strError(code)
        return code != 0


def relative_difference(ours: np.ndarray, reference: np.ndarray) -> float:
    return float(np.max(np.abs(ours - reference)) / max(np.max(np.abs(reference)), 1e-300))


@pytest.mark.parametrize("null_space", [False, True])
def test_same_joint_velocities_as_kdl_over_random_states(robot, null_space):
    name, plugin = robot
    kdl = Kdl(name, plugin)
    solver = VelocityIKSolver(plugin)
    rng = np.random.default_rng(SEED)
    worst = 0.0
    for _ in range(STATES):
        q = rng.uniform(kdl.lower, kdl.upper)
        v = rng.normal(size=6)
        opt_pos = rng.uniform(kdl.lower, kdl.upper) if null_space else None
        weights = rng.uniform(0.1, 3.0, kdl.n) if null_space else np.ones(kdl.n)
        alpha = float(rng.uniform(0.05, 1.0))
        solver.opt_pos, solver.weights, solver.alpha = opt_pos, weights, alpha
        result = solver.cart_to_jnt(q, v)
        reference = kdl.nso_velocities(q, v, opt_pos, weights, alpha)
        worst = max(worst, relative_difference(result.joint_velocities, reference))
        assert result.error == (VelocityIKCode.E_DEGRADED if kdl.pinv_singular(q, v) else VelocityIKCode.E_NOERROR)
    assert worst <= KDL_RELATIVE


@pytest.mark.parametrize("distance", NEAR)
def test_same_joint_velocities_as_kdl_near_and_at_singularities(robot, distance):
    """Near a singularity the velocities grow as 1/s; below eps KDL cuts the singular value off, and so do we,
    answering +1 (KDL's _nso says 0 there: its plain pinv solver says singular)."""
    name, plugin = robot
    kdl = Kdl(name, plugin)
    singular, joint = SINGULAR[name]
    rng = np.random.default_rng(SEED)
    solver = VelocityIKSolver(plugin, opt_pos=np.clip(np.array(singular) + 0.5, kdl.lower, kdl.upper),
                              weights=rng.uniform(0.1, 3.0, kdl.n))
    for _ in range(20):
        q = np.array(singular, dtype=float)
        q[joint] += distance
        v = rng.normal(size=6)
        result = solver.cart_to_jnt(q, v)
        reference = kdl.nso_velocities(q, v, solver.opt_pos, solver.weights, solver.alpha)
        assert relative_difference(result.joint_velocities, reference) <= KDL_RELATIVE
        smallest = solver.svd_result.singular_values[-1]
        degraded = smallest < solver.eps
        assert degraded == (distance <= 1e-7) == kdl.pinv_singular(q, v)
        assert result.error == (VelocityIKCode.E_DEGRADED if degraded else VelocityIKCode.E_NOERROR)


def test_the_twist_is_met_and_the_null_space_term_leaves_it_unchanged(robot):
    _, plugin = robot
    chain = plugin.group_setup.problem.chains[0]
    rng = np.random.default_rng(SEED)
    plain = VelocityIKSolver(plugin)
    pulled = VelocityIKSolver(plugin, opt_pos=chain.lower / 2, weights=rng.uniform(0.5, 2.0, chain.dof), alpha=1.0)
    for _ in range(50):
        q = rng.uniform(np.maximum(chain.lower, -3), np.minimum(chain.upper, 3))
        v = rng.normal(size=6)
        J = chain.jacobian(q)
        for solver in (plain, pulled):
            qdot = solver.cart_to_jnt(q, v).joint_velocities
            assert np.linalg.norm(J @ qdot - v) <= TWIST_RELATIVE * np.linalg.norm(v)
        if chain.dof > 6:
            difference = pulled.cart_to_jnt(q, v).joint_velocities - plain.cart_to_jnt(q, v).joint_velocities
            assert np.linalg.norm(difference) > 1e-6  # the null space moves the redundant arm
        svd = plain.svd_result
        assert svd.code == 0
        assert np.allclose(svd.U @ np.diag(svd.singular_values) @ svd.V.T, J, atol=1e-12)
        assert np.all(np.diff(svd.singular_values) <= 0)


def test_the_lq_solve_and_the_svd_give_the_same_answers_and_the_svd_is_the_one_the_call_made(robot):
    """Away from singularities the answer is solved through the LQ decomposition, without the SVD; a solver
    allowed fewer sweeps than that path needs always makes the SVD: the two agree to round-off, and the SVD
    svd_result makes on demand is the one the SVD-only call made."""
    _, plugin = robot
    chain = plugin.group_setup.problem.chains[0]
    rng = np.random.default_rng(SEED)
    opt_pos, weights = chain.lower / 2, rng.uniform(0.5, 2.0, chain.dof)
    lq = VelocityIKSolver(plugin, opt_pos=opt_pos, weights=weights)
    svd = VelocityIKSolver(plugin, opt_pos=opt_pos, weights=weights, maxiter=15)
    for _ in range(50):
        q = rng.uniform(np.maximum(chain.lower, -3), np.minimum(chain.upper, 3))
        v = rng.normal(size=6)
        ours, reference = lq.cart_to_jnt(q, v), svd.cart_to_jnt(q, v)
        assert ours.error == reference.error
        assert relative_difference(ours.joint_velocities, reference.joint_velocities) <= 1e-12
        made, on_demand = svd.svd_result, lq.svd_result
        assert on_demand.code == made.code == 0
        for field in ("singular_values", "U", "V"):
            assert np.array_equal(getattr(on_demand, field), getattr(made, field))


def test_the_condition_number_is_numpys(robot):
    _, plugin = robot
    chain = plugin.group_setup.problem.chains[0]
    solver = VelocityIKSolver(plugin)
    rng = np.random.default_rng(SEED)
    for _ in range(50):
        q = rng.uniform(np.maximum(chain.lower, -3), np.minimum(chain.upper, 3))
        values = np.linalg.svd(chain.jacobian(q), compute_uv=False)
        assert solver.condition_number(q) == pytest.approx(values[0] / values[-1], rel=1e-9)
    with pytest.raises(JointValueError, match="shoulder|panda_joint1"):
        solver.condition_number(np.zeros(chain.dof + 1))


def test_a_batch_is_the_single_calls(robot):
    _, plugin = robot
    chain = plugin.group_setup.problem.chains[0]
    rng = np.random.default_rng(SEED)
    solver = VelocityIKSolver(plugin, opt_pos=chain.upper / 3, options=VelocityIKOptions(joint_limit_gain=0.2))
    Q = rng.uniform(np.maximum(chain.lower, -3), np.minimum(chain.upper, 3), size=(64, chain.dof))
    Q[0, :] = SINGULAR[robot[0]][0]
    twists = rng.normal(size=(64, 6))
    batch = solver.cart_to_jnt_batch(Q, twists)
    for q, v, qdot, code in zip(Q, twists, batch.joint_velocities, batch.errors):
        single = solver.cart_to_jnt(q, v)
        assert np.array_equal(single.joint_velocities, qdot)
        assert single.error == code
    assert batch.errors[0] == VelocityIKCode.E_DEGRADED and not batch.errors[1:].any()


def test_damping_bounds_the_velocities_through_a_singularity_and_is_off_away_from_it():
    plugin = bundled_plugin("ur5")
    singular, joint = SINGULAR["ur5"]
    damped = VelocityIKSolver(plugin, options=VelocityIKOptions(damping=0.05, damping_threshold=0.1))
    plain = VelocityIKSolver(plugin)
    v = np.array([0.05, 0.05, 0.05, 0.1, 0.2, 0.3])
    speeds = []
    for distance in (1e-1, 1e-2, 1e-3, 1e-4, 1e-6, 0.0):
        q = np.array(singular)
        q[joint] += distance
        speeds.append(np.linalg.norm(damped.cart_to_jnt(q, v).joint_velocities))
        if distance >= 1e-4:  # nearer, KDL's cut-off (plain) zeroes what the damping shrinks to s / lambda^2
            assert np.linalg.norm(plain.cart_to_jnt(q, v).joint_velocities) >= speeds[-1] - 1e-12
    assert max(speeds) < 10.0  # undamped: 1 / s grows past 1e3 rad/s at 1e-4 rad from the singularity
    q = np.array(singular)
    q[joint] = 1.0
    far_damped, far_plain = damped.cart_to_jnt(q, v), plain.cart_to_jnt(q, v)
    assert damped.svd_result.singular_values[-1] > 0.1  # every singular value above the threshold: undamped
    assert np.array_equal(far_damped.joint_velocities, far_plain.joint_velocities)


def test_the_joint_limit_pull_moves_a_joint_near_its_limit_back_without_changing_the_twist():
    plugin = bundled_plugin("panda")
    chain = plugin.group_setup.problem.chains[0]
    q = np.array([0.0, 0.3, 0.0, -1.5, 0.0, 1.5, 0.0])
    q[0] = chain.upper[0] - 0.05
    v = np.zeros(6)
    pulled = VelocityIKSolver(plugin, options=VelocityIKOptions(joint_limit_gain=0.5)).cart_to_jnt(q, v)
    middle, half = (chain.upper + chain.lower) / 2, (chain.upper - chain.lower) / 2
    assert np.dot((q - middle) / half, pulled.joint_velocities) < -0.01  # toward the middle of the ranges
    assert np.linalg.norm(chain.jacobian(q) @ pulled.joint_velocities) < 1e-12
    assert not VelocityIKSolver(plugin).cart_to_jnt(q, v).joint_velocities.any()


def test_task_weights_drop_a_component_and_keep_the_others():
    plugin = bundled_plugin("ur5")
    chain = plugin.group_setup.problem.chains[0]
    solver = VelocityIKSolver(plugin, options=VelocityIKOptions(task_weights=(1, 1, 1, 1, 1, 0)))
    q, v = np.array([0.3, -1.0, 1.2, -0.4, 0.5, -0.6]), np.array([0.1, -0.2, 0.05, 0.3, -0.1, 5.0])
    result = solver.cart_to_jnt(q, v)
    assert result.error == VelocityIKCode.E_NOERROR  # five components of six: no singular value is missing
    reached = chain.jacobian(q) @ result.joint_velocities
    assert np.allclose(reached[:5], v[:5], atol=1e-12) and abs(reached[5] - v[5]) > 1.0


def test_a_named_tip_of_a_multi_tip_group_moves_only_its_chain():
    plugin = KinematicsPlugin()
    assert plugin.initialize(small_urdf("tree.urdf").read_text(), "arms", "torso", ["left_tcp", "right_tcp"]), \
        plugin.last_error
    solver = VelocityIKSolver(plugin, tip="right_tcp")
    qdot = solver.cart_to_jnt(np.full(len(solver.joint_names), 0.2), [0.0, 0.01, 0.01, 0.0, 0.0, 0.0])
    moving = {name for name, value in zip(solver.joint_names, qdot.joint_velocities) if abs(value) > 1e-12}
    assert moving and all(not name.startswith("left_") for name in moving)
    with pytest.raises(UnknownLinkError, match="'left_tcp', 'right_tcp'"):
        VelocityIKSolver(plugin, tip="head")


def test_an_svd_out_of_sweeps_answers_svd_failed_with_zero_velocities():
    plugin = bundled_plugin("panda")
    solver = VelocityIKSolver(plugin, maxiter=1)
    result = solver.cart_to_jnt([0.1, 0.3, -0.2, -1.5, 0.4, 1.5, 0.3], np.ones(6))
    assert result.error == VelocityIKCode.E_SVD_FAILED and not result.joint_velocities.any()
    assert solver.svd_result.code == -2


def test_settings_read_back_and_bad_input_names_what_is_valid():
    plugin = bundled_plugin("ur5")
    solver = VelocityIKSolver(plugin)
    assert solver.opt_pos is None and np.array_equal(solver.weights, np.ones(6)) and solver.alpha == 0.25
    solver.opt_pos, solver.weights, solver.alpha = np.arange(6.0), np.full(6, 2.0), 0.5
    assert np.array_equal(solver.opt_pos, np.arange(6.0)) and np.array_equal(solver.weights, np.full(6, 2.0))
    assert solver.alpha == 0.5
    joints = "'shoulder_pan_joint', 'shoulder_lift_joint'"
    q = np.zeros(6)
    with pytest.raises(JointValueError, match=f"6 values, one per joint of .*{joints}"):
        solver.cart_to_jnt(np.zeros(5), np.zeros(6))
    with pytest.raises(JointValueError, match="not finite for \\['elbow_joint'\\]"):
        solver.cart_to_jnt([0, 0, np.nan, 0, 0, 0], np.zeros(6))
    with pytest.raises(VelocityIKError, match="twist .*'vx'.*'wz'.* takes 6 finite numbers"):
        solver.cart_to_jnt(q, [0, 0, 0, np.inf, 0, 0])
    with pytest.raises(VelocityIKError, match="twist .* takes 6"):
        solver.cart_to_jnt(q, np.zeros(7))
    with pytest.raises(VelocityIKError, match="twist .* must be numbers"):
        solver.cart_to_jnt(q, ["a"] * 6)
    with pytest.raises(JointValueError, match="opt_pos takes 6 values"):
        solver.opt_pos = [0.0] * 7
    with pytest.raises(VelocityIKError, match="weights must be >= 0"):
        solver.weights = [-1.0] + [1.0] * 5
    with pytest.raises(VelocityIKError, match="alpha must be a finite number"):
        solver.alpha = float("nan")
    with pytest.raises(VelocityIKError, match="maxiter must be an integer >= 1"):
        VelocityIKSolver(plugin, maxiter=0)
    with pytest.raises(VelocityIKError, match="eps must be a finite number >= 0"):
        VelocityIKSolver(plugin, eps=-1.0)
    with pytest.raises(VelocityIKError, match="task_weights .* must be >= 0, not all 0"):
        VelocityIKOptions(task_weights=(0,) * 6)
    with pytest.raises(VelocityIKError, match="damping must be a finite number >= 0"):
        VelocityIKOptions(damping=-0.1)
    with pytest.raises(VelocityIKError, match=r"Q must be \(B, 6\)"):
        solver.cart_to_jnt_batch(np.zeros((3, 5)), np.zeros((3, 6)))
    with pytest.raises(VelocityIKError, match=r"not finite in rows \[1\]"):
        solver.cart_to_jnt_batch(np.zeros((3, 6)), [[0] * 6, [np.nan] * 6, [0] * 6])
