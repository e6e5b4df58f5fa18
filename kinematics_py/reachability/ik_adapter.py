"""The one place the reachability maps meet the IK: a batch solver over every branch the arm has.

``ReachIK.solve(T_base_tip, seeds)`` answers many poses at once. Arms with a closed form use
``ClosedFormSolver.solve_batch`` (every branch, inside the joint limits, on all cores); others use
``KinematicsPlugin.searchPositionIKBatch`` (one verified solution per reachable pose). Nothing else of the
IK layer is used by this package, so a change there is reconciled here.
"""
from __future__ import annotations

import numpy as np

from ..errors import ChainError, ErrorCode, KinematicsError
from ..ik.closed_form import ClosedFormSolver, FamilyTolerance
from ..ik.plugin import KinematicsPlugin
from ..model.chain import Chain

#: Solver choices: the closed form when the arm has one, else the numerical batch; or either one forced.
SOLVERS = ("auto", "closed_form", "numerical")
#: Random starts per pose of the numerical batch (after the seed); ``verification`` uses many more.
NUMERICAL_STARTS = 32


class ReachIK:
    """Batch IK of one chain: ``solve`` returns (solutions (N, B, dof) [rad or m], counts (N,)).

    Row i holds counts[i] solutions, each inside the joint limits and reaching pose i; B is the most
    solutions a pose can get (every branch of a closed form, 1 for the numerical batch).
    """

    def __init__(self, plugin: KinematicsPlugin, solver: str = "auto", max_starts: int = NUMERICAL_STARTS):
        if solver not in SOLVERS:
            raise KinematicsError(f"unknown IK solver {solver!r}; choices are {list(SOLVERS)}")
        self.plugin = plugin
        self.chain: Chain = plugin.robot_model.chain(plugin.getBaseFrame(), plugin.getTipFrame())
        self.max_starts = max_starts
        self.closed_form: ClosedFormSolver | None = None
        if solver != "numerical":
            try:
                self.closed_form = ClosedFormSolver.for_chain(self.chain,
                                                              FamilyTolerance.of_parameters(plugin.parameters))
            except ChainError as error:
                if solver == "closed_form":
                    raise KinematicsError(f"solver 'closed_form' asked for, but {error}") from None
        #: For the map's metadata: which solver answered.
        self.name = f"closed form: {self.closed_form.name}" if self.closed_form else \
            f"numerical batch ({max_starts} starts)"

    @property
    def pose_tolerance(self) -> tuple[float, float]:
        """The largest pose error a solution may have: ([m], [rad]), the plugin's verification thresholds."""
        parameters = self.plugin.parameters
        return parameters.position_threshold, parameters.orientation_threshold

    @property
    def uses_seeds(self) -> bool:
        """Whether the seeds change the answer: the numerical batch starts from them; the closed form finds
        every branch whatever the seed (it then takes the joint values nearest zero)."""
        return self.closed_form is None

    def solve(self, T_base_tip: np.ndarray, seeds: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Solutions for poses (N, 4, 4) from seeds (N, dof) (default: the middle of the joint ranges for the
        numerical batch); see the class docstring."""
        if self.closed_form is not None:
            solutions, _, counts = self.closed_form.solve_batch(T_base_tip)
            return solutions, counts
        results = self.plugin.searchPositionIKBatch(np.ascontiguousarray(T_base_tip), seeds, self.max_starts)
        solutions = np.zeros((len(results), 1, self.chain.dof))
        counts = np.zeros(len(results), dtype=np.int64)
        for k, result in enumerate(results):
            if result.error_code == ErrorCode.SUCCESS:
                solutions[k, 0], counts[k] = result.solution, 1
        return solutions, counts


def initialized_plugin(urdf_xml: str, srdf_xml: str, group: str, base_link: str, tip_link: str) -> KinematicsPlugin:
    """A plugin for one tip: the SRDF group's chain, or ``base_link`` -> ``tip_link``; raises saying why not."""
    plugin = KinematicsPlugin()
    if not plugin.initialize(urdf_xml, group or "manipulator", base_link, tip_link,
                             robot_description_semantic=srdf_xml or None):
        raise KinematicsError(plugin.last_error)
    if len(plugin.getTipFrames()) != 1:
        raise KinematicsError(f"a reachability map is for one tip; group {group!r} has tips {plugin.getTipFrames()}")
    return plugin
