"""OptIK (`optik-py`, Rust): SLSQP on the SE(3) log error with bounds, parallel random restarts."""
from __future__ import annotations

import numpy as np

from .common import SolverAdapter, SolverUnavailable, check_fk_agrees


class OptIK(SolverAdapter):
    """OptIK in speed mode with the budget as `max_time`.

    Notes:
        Its objective is |log6(error)|^2, so it is given tol_f = tolerance^2. It panics on
        continuous joints, so it loads the URDF with those as revolute [-2 pi, 2 pi] joints (same
        kinematics). It runs restarts on all cores.
    """

    key = "optik"
    label = "OptIK (optik-py)"

    def __init__(self, robot, settings):
        super().__init__(robot, settings)
        try:
            import optik
        except ImportError as error:
            raise SolverUnavailable(f"optik-py not installed ({error})") from error
        try:
            self._robot = optik.Robot.from_urdf_file(
                str(robot.bounded_urdf_file), robot.spec.base_link, robot.spec.tip_link
            )
        except BaseException as error:  # a Rust panic arrives as PanicException (a BaseException)
            raise SolverUnavailable(f"OptIK cannot load {robot.spec.name}: {error}") from error
        if self._robot.num_positions() != robot.chain.dof:
            raise SolverUnavailable(
                f"OptIK sees {self._robot.num_positions()} joints, the chain has {robot.chain.dof}"
            )
        check_fk_agrees(self.label, robot, self._robot.fk)
        self._config = optik.SolverConfig(
            solution_mode="speed", max_time=settings.budget_s, tol_f=settings.tolerance**2
        )

    def solve(self, target, q_start):
        result = self._robot.ik(self._config, target, q_start)
        return None if result is None else np.asarray(result[0])
