"""EAIK (C++ via pybind11): every branch of a 6R arm in closed form, by subproblem decomposition."""
from __future__ import annotations

import numpy as np

from .common import SolverAdapter, SolverUnavailable, check_fk_agrees

#: EAIK's exact (not least-squares) branches count when their FK is within these [m], [rad]-like of the target.
BRANCH_TOLERANCE = 1e-6


class EAIK(SolverAdapter):
    """``Robot.calculate_IK(T)``: every branch; the answer is the exact branch whose whole-turn equivalents
    inside the limits lie nearest the start (the choice is part of the timed call, in numpy).

    Notes:
        EAIK takes the kinematics as joint axes and offsets (no URDF reader without extra packages): they are
        those kinematics_py reads from the same URDF at zero (``ChainGeometry``), checked against the
        reference FK before timing. Arms without a known decomposition (7 DOF, general 6R) are unavailable.
    """

    key = "eaik"
    label = "EAIK (closed form, all branches)"

    def __init__(self, robot, settings):
        super().__init__(robot, settings)
        try:
            from eaik.pybindings.EAIK import Robot
        except ImportError as error:
            raise SolverUnavailable(f"eaik not installed ({error})") from error
        from kinematics_py import RobotModel
        from kinematics_py.ik.closed_form import ChainGeometry

        spec = robot.spec
        chain = RobotModel.from_urdf_string(robot.urdf_text).chain(spec.base_link, spec.tip_link)
        if chain.dof != 6:
            raise SolverUnavailable(f"EAIK solves 6R arms in closed form; this chain has {chain.dof} joints")
        g = ChainGeometry.of_chain(chain)
        offsets = np.vstack([g.points[0], np.diff(g.points, axis=0), g.T_zero[:3, 3] - g.points[5]])
        self._robot = Robot(g.axes.T, offsets.T, g.T_zero[:3, :3], [], True)
        if not self._robot.has_known_decomposition():
            raise SolverUnavailable("EAIK knows no closed-form decomposition of this arm")
        check_fk_agrees(self.label, robot, self._robot.fwdkin)
        self._lower = np.where(np.isfinite(robot.chain.lower), robot.chain.lower, -np.inf)
        self._upper = np.where(np.isfinite(robot.chain.upper), robot.chain.upper, np.inf)
        self._turns = 2 * np.pi * np.arange(-2, 3)[:, None, None]

    def solve(self, target, q_start):
        solution = self._robot.calculate_IK(target)
        exact = np.asarray(solution.Q)[~np.asarray(solution.is_LS, dtype=bool)] if solution.num_solutions() else ()
        if not len(exact):
            return None
        candidates = exact[None] + self._turns  # (turns, branches, 6)
        inside = (candidates >= self._lower) & (candidates <= self._upper)
        distance = np.where(inside, np.abs(candidates - q_start), np.inf)
        best = np.argmin(distance, axis=0)  # per branch and joint: the nearest in-limit turn
        q = np.take_along_axis(candidates, best[None], axis=0)[0]
        total = np.take_along_axis(distance, best[None], axis=0)[0].sum(axis=1)
        if not np.isfinite(total).any():
            return None
        return q[int(np.argmin(total))]
