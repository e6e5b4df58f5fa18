"""What a KinematicsPlugin holds: the set-up of its group and its settings, as immutable values.

The data types only: ``setup_builder`` builds them. Every plugin call reads ``PluginState`` once and uses
only that snapshot; every change builds a new one and swaps it in under the plugin's lock, so a call never
sees half of a change (e.g. the joints of one robot with the solver of another).
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from ..errors import ErrorCode, RequestError
from ..model.robot_model import RobotModel
from ..parameters import SolverParameters
from .closed_form.kernels import POSITION_TOLERANCE, ROTATION_TOLERANCE
from .problem import IkProblem, SolverSetup

if TYPE_CHECKING:
    from .closed_form import ClosedFormSolver
    from .closed_form.fast_path import ClosedFormFastPath
    from .closed_form.redundant import RedundantChain

DEFAULT_TIMEOUT = 1.0
DEFAULT_SEARCH_DISCRETIZATION = 0.1


def closed_form_check_suffices(params: SolverParameters) -> bool:
    """Whether the closed form's own FK check is as strict as the solver's thresholds."""
    return params.position_threshold >= POSITION_TOLERANCE and params.orientation_threshold >= ROTATION_TOLERANCE


@dataclass(frozen=True, eq=False)
class GroupSetup:
    """Everything ``initialize`` establishes for one planning group."""

    model: RobotModel
    group_name: str
    base_frame: str
    tip_frames: tuple[str, ...]
    solver: SolverSetup
    redundant_joints: tuple[int, ...] = ()
    #: The closed form of a 6R chain, or None: the numerical search alone.
    closed_form: ClosedFormSolver | None = None
    #: Which closed-form family was found, or why none applies (for the log).
    closed_form_report: str = ""
    #: A 7-joint arm's closed forms with one joint locked, or None.
    redundant_closed_form: RedundantChain | None = None
    #: The lean path of plain requests, or None where they take the general one.
    fast_path: ClosedFormFastPath | None = None
    #: link -> the tip it is rigidly attached to (itself for a tip): ``model.attached_links.attached_tips``.
    attached_tips: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))

    @property
    def problem(self) -> IkProblem:
        return self.solver.problem

    @property
    def closed_form_applies(self) -> bool:
        """Whether requests go to the closed form first (a closed form, no redundant joints)."""
        return self.closed_form is not None and not self.redundant_joints

    @property
    def closed_form_is_exact(self) -> bool:
        """Whether the closed form answers requests alone: it applies and its own FK check is as strict as the
        solver's thresholds (no other verification needed)."""
        return self.closed_form_applies and closed_form_check_suffices(self.solver.params)


@dataclass(frozen=True, eq=False)
class PluginState:
    """Everything a KinematicsPlugin holds."""

    setup: GroupSetup | None = None
    default_timeout: float = DEFAULT_TIMEOUT
    #: One step [rad or m] for every joint, or per joint index (read-only).
    search_discretization: float | Mapping[int, float] = DEFAULT_SEARCH_DISCRETIZATION
    #: The ``collision.CollisionChecker`` used by ``avoid_collisions`` (or None).
    collision_checker: Any = None

    def require_setup(self) -> GroupSetup:
        if self.setup is None:
            raise RequestError(ErrorCode.FAILURE, "the plugin is not initialized: call initialize() first")
        return self.setup

    def discretization(self, joint_index: int | None = None) -> float:
        """The step [rad or m] of joint ``joint_index`` (None: joint 0, as MoveIt's default argument)."""
        value = self.search_discretization
        if isinstance(value, Mapping):
            return value.get(0 if joint_index is None else joint_index, DEFAULT_SEARCH_DISCRETIZATION)
        return value

    def with_discretization(self, discretization: float | Mapping[int, float]) -> PluginState:
        if isinstance(discretization, Mapping):
            discretization = MappingProxyType(dict(discretization))
        return replace(self, search_discretization=discretization)
