"""check_state_validity (moveit_msgs/srv/GetStateValidity): joint limits, collisions (with contacts) and the
request's constraints of a robot state.

GetStateValidity has no error code: a request that cannot be checked (unknown group, bad joint names or values,
unusable constraints, collision checking unavailable) is logged and answered valid=false with no contacts and
no constraint results.
"""
from __future__ import annotations

import traceback
from collections.abc import Mapping
from typing import Any

from moveit_msgs.msg import ConstraintEvalResult
from moveit_msgs.srv import GetStateValidity

from ...errors import ErrorCode, RequestError
from ...ik.plugin import LIMIT_SLACK
from ...model.robot_model import RobotModel
from ...robot_setup import RobotSetup
from ..messages.constraints import request_constraints
from ..messages.conversions import contact_msg
from ..messages.robot_state import LinkPoses
from .request_collisions import request_checker
from .request_context import RequestContext


def check_state_validity(request: GetStateValidity.Request, response: GetStateValidity.Response,
                         context: RequestContext):
    logger = context.tools.logger
    try:
        reasons = _state_validity(request, response, context)
    except RequestError as error:
        logger.warning(f"check_state_validity: cannot check the request ({error.code.name}): {error}; "
                       f"answering valid=false")
        reasons, response.contacts, response.constraint_result = [str(error)], [], []
    except Exception as error:  # never a dead node
        logger.error(f"internal error answering check_state_validity: {error!r}\n{traceback.format_exc()}")
        reasons, response.contacts, response.constraint_result = [repr(error)], [], []
    else:
        if reasons:
            logger.debug(f"check_state_validity: not valid: {'; '.join(reasons)}")
    response.valid = not reasons
    return response


def _state_validity(request: GetStateValidity.Request, response: GetStateValidity.Response,
                    context: RequestContext) -> list[str]:
    """Fill contacts and constraint results; the reasons the state is not valid (none: valid). Collisions are
    limited to the links the group's joints move when a group is named, as in MoveIt."""
    setup = context.setup
    values = context.joint_values(request.robot_state)
    joints = _group_joints(setup, request.group_name) if request.group_name else setup.joint_names
    constraints = request_constraints(setup, context.frames, request.constraints, LinkPoses(setup.model, values))
    checker, _ = request_checker(context, True, request.robot_state, values)
    reasons = _limit_violations(setup.model, values, joints)
    if reasons:  # no field of the answer can show them
        context.tools.logger.info(f"check_state_validity: {'; '.join(reasons)}")
    if checker is not None:
        links = checker.links_moved_by(joints) if request.group_name else None
        bodies = len(checker.link_geometry) + len(checker.scene.world_objects) + len(checker.scene.attached_objects)
        report = checker.check(values, contacts=True, max_contacts=bodies ** 2, links=links)
        stamp = context.stamp()
        response.contacts = [contact_msg(contact, setup.model_frame, stamp) for contact in report.contacts]
        if report.in_collision:
            reasons.append(f"in collision: {report.describe()}")
    evaluated = constraints.evaluate(values, setup.model)
    response.constraint_result = [ConstraintEvalResult(result=reason is None, distance=distance)
                                  for reason, distance in evaluated]
    return reasons + [reason for reason, _ in evaluated if reason]


def _group_joints(setup: RobotSetup, group: str) -> tuple[str, ...]:
    """The joints of an SRDF group, or of a served group (no SRDF)."""
    if setup.semantic is not None and group in setup.semantic.groups:
        return setup.semantic.groups[group].joint_names
    if group in setup.groups:
        return tuple(setup.groups[group].getJointNames())
    known = sorted(set(setup.semantic.groups if setup.semantic else ()) | set(setup.groups))
    raise RequestError(ErrorCode.INVALID_GROUP_NAME, f"unknown group {group!r}; groups are {known}")


def _limit_violations(model: RobotModel, values: Mapping[str, Any], joints) -> list[str]:
    """'joint = value outside [lower, upper]' for every single-DOF joint of ``joints`` outside its limits."""
    violations = []
    for name in joints:
        joint = model.joints[name]
        value = values.get(name)
        if isinstance(value, float) and not joint.lower - LIMIT_SLACK <= value <= joint.upper + LIMIT_SLACK:
            violations.append(f"joint {name!r} = {value:.6g} outside its limits [{joint.lower:.6g}, {joint.upper:.6g}]")
    return violations
