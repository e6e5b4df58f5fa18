"""Postures (which branch of a closed form a configuration is in) and IK that keeps a reference's posture, as
industrial arms' software offers it (``KinematicsPlugin.compute_inverse_kinematics``, ``posture_of``)."""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..errors import ErrorCode, KinematicsError, RequestError
from ..geometry.poses import transforms_from_poses
from .closed_form.solver import Posture
from .request import joint_vector
from .search import IkSearch

if TYPE_CHECKING:
    from .group_setup import GroupSetup, PluginState


def posture_of(state: PluginState, q) -> Posture:
    """The posture of configuration ``q`` [rad]; KinematicsError when the group has no closed form (postures
    are its branches) or ``q`` is not a configuration of the group."""
    setup = state.require_setup()
    closed_form = _closed_form(setup)
    code = closed_form.posture_code(joint_vector(setup, q, "q"))
    if code is None:
        raise KinematicsError(f"no posture for {list(q)}: no branch of the closed form reproduces it")
    return closed_form.posture(code)


def solutions_in_posture(state: PluginState, poses, reference_configuration) -> list[list[float] | None]:
    """Per pose (a sequence of poses or an (N, 4, 4) array of ``T_base_tip``), the solution in the posture of
    ``reference_configuration`` (each joint's whole-turn equivalent nearest it, within the limits), or None.

    Groups without a closed form get a local search from the reference (the solution it converges to, which
    is usually, not always, in the reference's posture). Raises RequestError (a KinematicsError) on a bad
    reference; an unusable pose gets None.
    """
    setup = state.require_setup()
    reference = joint_vector(setup, reference_configuration, "reference_configuration")
    if len(setup.tip_frames) != 1:
        raise RequestError(ErrorCode.INVALID_LINK_NAME, f"postures are defined for one tip; the group has "
                           f"{list(setup.tip_frames)}")
    T, bad = transforms_from_poses(poses)
    if setup.closed_form_is_exact:
        code = setup.closed_form.posture_code(reference)
        branches, codes, counts = setup.closed_form.solve_batch(T, reference)
        answers = []
        for i in range(len(T)):
            rows = np.flatnonzero(codes[i, :counts[i]] == code) if code is not None and i not in bad else ()
            answers.append(branches[i, rows[0]].tolist() if len(rows) else None)
        return answers
    answers = []
    for i, T_base_tip in enumerate(T):
        solution = None if i in bad else IkSearch(setup.solver, T_base_tip[None], reference, timeout=0.0,
                                                   local_only=True).run().solution
        answers.append(None if solution is None else solution.tolist())
    return answers


def _closed_form(setup: GroupSetup):
    if not setup.closed_form_applies:
        reason = "redundant joints are declared" if setup.closed_form is not None else setup.closed_form_report
        raise KinematicsError(f"postures are the branches of a closed form, which group {setup.group_name!r} "
                              f"does not use ({reason})")
    return setup.closed_form
