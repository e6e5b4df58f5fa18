"""Adapters that put each IK solver of the benchmark behind one interface (`SolverAdapter`)."""
from .common import SolverAdapter, SolverUnavailable, SolveSettings
from .eaik import EAIK
from .kdl import KDL
from .kinematics_py_adapter import KinematicsPy, KinematicsPyImportError
from .optik import OptIK
from .pinocchio_dls import PinocchioDLS
from .rtb import RoboticsToolboxLM
from .tracik import TracIK

#: Command-line key -> adapter class, in the order the results list them.
SOLVERS: dict[str, type[SolverAdapter]] = {
    cls.key: cls for cls in (KinematicsPy, EAIK, TracIK, RoboticsToolboxLM, OptIK, PinocchioDLS, KDL)
}

__all__ = ["SOLVERS", "KinematicsPyImportError", "SolveSettings", "SolverAdapter", "SolverUnavailable"]
