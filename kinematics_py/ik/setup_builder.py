"""Building a group's set-up (``group_setup.GroupSetup``) from URDF, SRDF and parameters, and loading its
compiled code ahead of the first request."""
from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import replace
from types import MappingProxyType
from typing import Any

import numpy as np

from ..errors import KinematicsError, UnknownJointError
from ..geometry.transforms import rotation_log
from ..model.attached_links import attached_tips
from ..model.robot_model import RobotModel
from ..model.srdf import SemanticModel
from ..parameters import SolverParameters
from . import kernels
from .closed_form import ClosedFormSolver
from .closed_form.branch_search import closed_form_of
from .closed_form.fast_path import ClosedFormFastPath
from .closed_form.locked_joint_search import redundant_closed_form_of
from .closed_form.redundant import RedundantChain
from .group_setup import GroupSetup
from .problem import IkProblem, SolverSetup
from .search import IkSearch

_log = logging.getLogger("kinematics_py.ik.setup_builder")


def build_group_setup(robot_description: str | RobotModel, group_name: str, base_frame: str,
                      tip_frames: str | Sequence[str], srdf_text: str | SemanticModel | None,
                      parameters: dict[str, Any] | None) -> GroupSetup:
    """A group's set-up from URDF (and SRDF) text, or from the models already built of them: KinematicsError says
    what is wrong.

    Checked in this order: URDF, SRDF, group, base frame, tip frames, chain from base to every tip, solver
    parameters. With an SRDF, an empty base/tip list takes the group's chain (``SemanticModel.chain_ends``).
    """
    model = robot_description if isinstance(robot_description, RobotModel) else \
        RobotModel.from_urdf_string(robot_description)
    tips = [tip_frames] if isinstance(tip_frames, str) else list(tip_frames)
    tips = [tip for tip in tips if tip]
    if srdf_text:
        semantic = srdf_text if isinstance(srdf_text, SemanticModel) else \
            SemanticModel.from_srdf_string(srdf_text, model)
        semantic.group(group_name)
        if not base_frame or not tips:
            try:
                group_base, group_tips = semantic.chain_ends(group_name)
            except KinematicsError as error:
                raise KinematicsError(f"{error}: give base_frame and tip_frames explicitly") from None
            base_frame = base_frame or group_base
            tips = tips or group_tips
    if not base_frame or not tips:
        raise KinematicsError("base_frame and at least one tip frame are required without an SRDF group")
    model.check_link(base_frame)
    for tip in tips:
        model.check_link(tip)
    problem = IkProblem.build(model, base_frame, tips)
    if problem.dof == 0:
        raise KinematicsError(f"no movable joints between {base_frame!r} and {tips}")
    solver = SolverSetup.build(problem, SolverParameters.from_dict(parameters))
    closed_form, report = _detected(_tried_closed_form, solver, group_name, "the closed-form detection")
    redundant, redundant_report = _detected(_tried_redundant_closed_form, solver, group_name,
                                            "the locked-joint closed-form search")
    attached = MappingProxyType(attached_tips(model, problem.variable_names, tips))
    return with_fast_path(GroupSetup(model, group_name, base_frame, tuple(tips), solver, closed_form=closed_form,
                                     closed_form_report="; ".join(filter(None, (report, redundant_report))),
                                     redundant_closed_form=redundant, attached_tips=attached))


def with_fast_path(setup: GroupSetup) -> GroupSetup:
    """``setup`` with the lean path of its plain requests, or none where they need the general path (no exact
    closed form, or another solve mode than speed)."""
    exact = setup.closed_form_is_exact and setup.solver.params.solve_mode == "speed"
    return replace(setup, fast_path=ClosedFormFastPath(setup.closed_form) if exact else None)


def with_redundant_joints(setup: GroupSetup, redundant_joints: Sequence[int | str]) -> GroupSetup:
    """``setup`` with these redundant joints (indices or names): UnknownJointError names one that is neither."""
    return with_fast_path(replace(setup, redundant_joints=redundant_joint_indices(setup, redundant_joints)))


def _detected(detect: Callable[[SolverSetup], tuple[Any, str]], solver: SolverSetup, group_name: str, what: str
              ) -> tuple[Any, str]:
    """``detect(solver)``: (a closed form or None, a sentence for the log). A failure inside it costs the group its
    closed form, not its set-up: logged (which group, what failed, the traceback), then the numerical search."""
    try:
        return detect(solver)
    except Exception as error:  # a defect in the closed forms must never make initialize raise
        reason = f"numerical search: {what} failed ({type(error).__name__}: {error})"
        _log.warning("group %r: %s", group_name, reason, exc_info=True)
        return None, reason


def _tried_closed_form(solver: SolverSetup) -> tuple[ClosedFormSolver | None, str]:
    """``closed_form_of(solver)``, its kernels run once (loaded now: the first request does not pay)."""
    closed_form, report = closed_form_of(solver)
    if closed_form is not None:
        q, (target,) = _middle_targets(solver.problem)
        closed_form.solve(target, q)
        closed_form.posture_code(q)
    return closed_form, report


def _tried_redundant_closed_form(solver: SolverSetup) -> tuple[RedundantChain | None, str]:
    """``redundant_closed_form_of(solver)``, its default joint's kernels run once."""
    redundant, report = redundant_closed_form_of(solver)
    if redundant is not None:
        q, (target,) = _middle_targets(solver.problem)
        joint = redundant.default_joint
        redundant.solvers[joint].solve(target, q, q[joint])
    return redundant, report


def _middle_targets(problem: IkProblem) -> tuple[np.ndarray, np.ndarray]:
    """(the middle of the joint ranges, each tip's pose there (tips, 4, 4))."""
    q = problem.middle
    return q, np.array([chain.forward_kinematics(q[columns]) for chain, columns in zip(problem.chains,
                                                                                       problem.chain_columns)])


def redundant_joint_indices(setup: GroupSetup, redundant_joints: Sequence[int | str]) -> tuple[int, ...]:
    """Sorted indices of joints given by index or name; UnknownJointError names one that is neither."""
    names = setup.problem.variable_names
    indices = set()
    for joint in redundant_joints:
        if isinstance(joint, str) and joint in names:
            indices.add(names.index(joint))
        elif isinstance(joint, (int, np.integer)) and not isinstance(joint, bool) and 0 <= joint < len(names):
            indices.add(int(joint))
        else:
            raise UnknownJointError(joint, names, f"the redundant joints of group {setup.group_name!r} "
                                                  f"(a name or an index into the valid ones)")
    return tuple(sorted(indices))


def warm_up(setup: GroupSetup) -> None:
    """Load the compiled search, its failure diagnosis and the rotation distance of two poses (``rotation_log``:
    Cartesian path steps, orientation constraints) from numba's on-disk cache now, so the first request does not pay
    (nor the first one that fails); ``build_group_setup`` ran the closed forms once already."""
    problem = setup.problem
    q, targets = _middle_targets(problem)
    IkSearch(setup.solver, targets, q, timeout=0.0, local_only=True).run()
    problem.task_errors(q, targets)
    kernels.wrap_near(q.copy(), q, problem.is_revolute, problem.lower, problem.upper)
    rotation_log(targets[0][:3, :3])

