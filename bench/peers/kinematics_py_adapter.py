"""kinematics_py's MoveIt-style plugin class, `KinematicsPlugin.searchPositionIK`."""
from __future__ import annotations

import numpy as np

from .common import SolverAdapter, SolverUnavailable, position_and_quaternion


class KinematicsPyImportError(ImportError):
    """kinematics_py cannot be imported: the benchmark stops instead of leaving its row out."""


class KinematicsPy(SolverAdapter):
    """`searchPositionIK(pose, seed, timeout=budget)` of a plugin initialised on the chain.

    Notes:
        Uses the plugin's default parameters; the tolerance check is the benchmark's own.
    """

    key = "kinematics_py"
    label = "kinematics_py"

    def __init__(self, robot, settings):
        super().__init__(robot, settings)
        try:
            from kinematics_py import KinematicsPlugin, Pose
        except ImportError as error:
            raise KinematicsPyImportError(
                f"cannot import KinematicsPlugin and Pose from kinematics_py ({error}); install the package "
                "into this venv (pip install -e .) or leave it out with --solvers"
            ) from error
        self._Pose = Pose
        spec = robot.spec
        self._plugin = KinematicsPlugin()
        if not self._plugin.initialize(robot.urdf_text, f"{spec.name}_arm", spec.base_link, [spec.tip_link]):
            raise RuntimeError(f"KinematicsPlugin.initialize failed for {spec.name} "
                               f"({spec.base_link} -> {spec.tip_link})")
        names = tuple(self._plugin.getJointNames())
        if names != robot.chain.joint_names:
            raise RuntimeError(f"kinematics_py joints {names} differ from the chain's {robot.chain.joint_names}")

    def prepare(self, T_base_target):
        position, quaternion = position_and_quaternion(T_base_target)
        return self._Pose(position=tuple(position), orientation=tuple(quaternion))

    def solve(self, target, q_start):
        result = self._plugin.searchPositionIK(target, list(q_start), self.settings.budget_s)
        return np.asarray(result.solution, float) if result.success else None

    def solve_batch(self, targets: list, q_starts: np.ndarray) -> list[np.ndarray | None]:
        """All targets in one `searchPositionIKBatch` call (one start per target)."""
        batch = getattr(self._plugin, "searchPositionIKBatch", None)
        if batch is None:
            raise SolverUnavailable("this kinematics_py has no KinematicsPlugin.searchPositionIKBatch")
        results = batch(targets, [list(q) for q in q_starts])
        return [np.asarray(r.solution, float) if r.success else None for r in results]
