"""A damped-least-squares IK loop on pinocchio (`pin`), with random restarts until the budget."""
from __future__ import annotations

import time

import numpy as np

from .common import SolverAdapter, SolverUnavailable
from .robots import ReferenceKinematics


class PinocchioDLS(SolverAdapter):
    """The CLIK loop of pinocchio's documentation, made a global search by random restarts.

    Notes:
        Error e = log6(T_tip^-1 T_target) in the tip frame; step dq = -J^T (J J^T + damping I)^-1 e
        with J = -Jlog6 J_tip. An attempt ends after `ITERATIONS` steps or at a converged answer
        outside the limits; the next starts from a random configuration, until the budget is spent.
    """

    key = "pinocchio"
    label = "pinocchio DLS + restarts"
    ITERATIONS = 100
    STEP = 1.0
    DAMPING = 1e-6

    def __init__(self, robot, settings):
        super().__init__(robot, settings)
        try:
            import pinocchio as pin
        except ImportError as error:
            raise SolverUnavailable(f"pin not installed ({error})") from error
        self._pin = pin
        # An own model and data (the reference's stay the judge's).
        kinematics = ReferenceKinematics(robot.urdf_text, robot.chain, robot.spec.base_link, robot.spec.tip_link)
        self._model, self._data = kinematics.model, kinematics.model.createData()
        self._q_index = kinematics.q_index  # chain position -> pinocchio position
        to_pin = np.argsort(self._q_index)  # reorders chain-order values into pinocchio's order
        self._tip = kinematics.tip_frame_id
        pin.framesForwardKinematics(self._model, self._data, pin.neutral(self._model))
        self._T_world_base = self._data.oMf[kinematics.base_frame_id].copy()
        chain = robot.chain
        self._to_pin = to_pin
        self._lower, self._upper = chain.lower[to_pin], chain.upper[to_pin]
        self._sample_lower, self._sample_upper = chain.sample_lower[to_pin], chain.sample_upper[to_pin]
        self._rng = np.random.default_rng(settings.seed)

    def prepare(self, T_base_target):
        return self._T_world_base * self._pin.SE3(T_base_target)

    def solve(self, target, q_start):
        pin, model, data = self._pin, self._model, self._data
        deadline = time.perf_counter() + self.settings.budget_s
        tolerance, identity = self.settings.tolerance, np.eye(6)
        q = np.asarray(q_start, float)[self._to_pin]
        while True:
            for _ in range(self.ITERATIONS):
                pin.forwardKinematics(model, data, q)
                T_tip_target = pin.updateFramePlacement(model, data, self._tip).actInv(target)
                error = pin.log6(T_tip_target).vector
                if np.linalg.norm(error) < tolerance:
                    if np.all(q >= self._lower) and np.all(q <= self._upper):
                        return q[self._q_index]
                    break
                J = pin.computeFrameJacobian(model, data, q, self._tip)
                J = -pin.Jlog6(T_tip_target.inverse()) @ J
                step = -J.T @ np.linalg.solve(J @ J.T + self.DAMPING * identity, error)
                q = pin.integrate(model, q, self.STEP * step)
                if time.perf_counter() > deadline:
                    return None
            q = self._rng.uniform(self._sample_lower, self._sample_upper)
