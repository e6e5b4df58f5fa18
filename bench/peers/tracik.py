"""TRAC-IK through `pytracik` (C++; KDL Newton-Raphson and NLopt SQP racing in two threads)."""
from __future__ import annotations

from .common import SolverAdapter, SolverUnavailable, check_fk_agrees, position_and_quaternion


class TracIK(SolverAdapter):
    """TRAC-IK in Speed mode: returns the first solution found within the budget.

    Notes:
        pytracik 0.0.3 takes its limits from the URDF as float32 (a bound can move by ~2e-7 rad),
        and reads ``<safety_controller>`` soft limits as zero-width ranges; the benchmark's
        kinematics-only URDF has those tags removed. Its epsilon bounds every component of the
        pose error, so it is given the tolerance as is.
    """

    key = "tracik"
    label = "TRAC-IK (pytracik, Speed)"

    def __init__(self, robot, settings):
        super().__init__(robot, settings)
        try:
            import pytracik
        except ImportError as error:
            raise SolverUnavailable(f"pytracik not installed ({error})") from error
        self._pytracik = pytracik
        spec = robot.spec
        self._solver = pytracik.TRAC_IK(
            spec.base_link, spec.tip_link, robot.urdf_text, settings.budget_s, settings.tolerance, pytracik.Speed
        )
        dof = pytracik.get_num_joints(self._solver)
        if dof != robot.chain.dof:
            raise SolverUnavailable(f"pytracik sees {dof} joints, the chain has {robot.chain.dof}")
        check_fk_agrees(self.label, robot, lambda q: pytracik.fk(self._solver, q))

    def prepare(self, T_base_target):
        position, quaternion = position_and_quaternion(T_base_target)
        return tuple(float(v) for v in (*position, *quaternion))

    def solve(self, target, q_start):
        result = self._pytracik.ik(self._solver, q_start, *target)
        return result[1:] if result[0] >= 0 else None
