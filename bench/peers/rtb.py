"""Robotics Toolbox for Python's compiled (C++) Levenberg-Marquardt solver, `ETS.ik_LM`."""
from __future__ import annotations

import contextlib
import io
import warnings

import numpy as np

from .common import SolverAdapter, SolverUnavailable, check_fk_agrees


class RoboticsToolboxLM(SolverAdapter):
    """`ETS.ik_LM` with its defaults (Chan damping, 30 iterations x up to 100 random searches).

    Notes:
        It stops when E = 1/2 |e|^2 < tol, so it is given tol = tolerance^2 / 2 (a residual norm
        of `tolerance`, like the others). It has no wall-clock limit: its time is what it takes.
        `Robot.ets(start=base)` includes the fixed transform of the joint *into* the base link
        (Kinova: a 90 deg turn about z), so targets are expressed in that frame before solving.
    """

    key = "rtb"
    label = "Robotics Toolbox ik_LM (C++)"

    def __init__(self, robot, settings):
        super().__init__(robot, settings)
        try:
            import roboticstoolbox as rtb
            from roboticstoolbox.models.URDF.URDFRobot import URDF_read
        except ImportError as error:
            raise SolverUnavailable(f"roboticstoolbox-python not installed ({error})") from error
        with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
            warnings.simplefilter("ignore")
            links, name, _ = URDF_read(str(robot.urdf_file))
            model = rtb.Robot(links, name=name)
            self._ets = model.ets(start=robot.spec.base_link, end=robot.spec.tip_link)
        if self._ets.n != robot.chain.dof:
            raise SolverUnavailable(f"Robotics Toolbox sees {self._ets.n} joints, the chain has {robot.chain.dof}")
        zero = np.zeros(robot.chain.dof)
        self._T_rtb_base = self._ets.fkine(zero).A @ np.linalg.inv(robot.reference.T_base_tip(zero))
        T_base_rtb = np.linalg.inv(self._T_rtb_base)
        check_fk_agrees(self.label, robot, lambda q: T_base_rtb @ self._ets.fkine(q).A)
        self._tol = 0.5 * settings.tolerance**2

    def prepare(self, T_base_target):
        return self._T_rtb_base @ T_base_target

    def solve(self, target, q_start):
        solution = self._ets.ik_LM(target, q0=q_start, tol=self._tol, joint_limits=True)
        return solution.q if solution.success else None
