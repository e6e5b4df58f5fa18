"""The collision checker a request is checked with: the node's scene, or a request-scoped copy of it holding the
request's attached objects; without collision geometry, what collision_checking_unavailable_policy says."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...collision.checker import CollisionChecker
from ...collision.scene import Operation, PlanningScene
from ...errors import ErrorCode, KinematicsError, RequestError
from ..messages.conversions import attached_object_update
from .request_context import RequestContext


def request_checker(context: RequestContext, wanted: bool, robot_state,
                    values: Mapping[str, Any]) -> tuple[CollisionChecker | None, str]:
    """(checker for this request or None, note for the answer's message). Without collision geometry the policy
    decides: COLLISION_CHECKING_UNAVAILABLE, or no check and a note saying so."""
    if not wanted:
        return None, ""
    state = context.state
    if state.checker is not None:
        return _with_request_objects(context, robot_state, values), ""
    setup = context.setup
    problem = setup.collision.problem
    if state.settings.collision_checking_unavailable_policy == "error":
        raise RequestError(ErrorCode.COLLISION_CHECKING_UNAVAILABLE,
                           f"collisions cannot be checked for robot {setup.model.name!r}: {problem}; send "
                           f"avoid_collisions=false, or set collision_checking_unavailable_policy to "
                           f"ignore_with_warning (MoveIt's srv_kinematics_plugin always sends true)")
    context.tools.logger.warning(f"collisions NOT checked ({problem}; "
                                 f"collision_checking_unavailable_policy=ignore_with_warning)",
                                 throttle_duration_sec=10.0)
    return None, f" (collisions NOT checked: {problem})"


def _with_request_objects(context: RequestContext, robot_state, values: Mapping[str, Any]) -> CollisionChecker:
    """The node's checker, or one for a copy of its scene with the request's attached objects. As in MoveIt, a
    robot_state naming joints with is_diff=false replaces the scene's attached objects by its own; with
    is_diff=true its attached objects are applied over the scene's."""
    state = context.state
    replaces = not robot_state.is_diff and bool(robot_state.joint_state.name or
                                                robot_state.multi_dof_joint_state.joint_names)
    if not robot_state.attached_collision_objects and not (replaces and state.scene.attached_objects):
        return state.checker
    scene = state.scene.copy()
    scene.set_robot_state(values)
    if replaces:
        for object_id in list(scene.attached_objects):
            _forget_attached(scene, object_id)
    resolve = context.frames.scene_resolver(scene)
    for index, msg in enumerate(robot_state.attached_collision_objects):
        try:
            update = attached_object_update(msg, resolve, state.settings.max_mesh_triangles)
            if update.object.operation == Operation.REMOVE and update.object.id:
                _forget_attached(scene, update.object.id)  # MoveIt drops it from the state
            else:
                scene.apply_attached(update)
        except (KinematicsError, ValueError) as error:
            raise RequestError(ErrorCode.INVALID_ROBOT_STATE,
                               f"robot_state.attached_collision_objects[{index}]: {error}") from None
    return state.checker.for_scene(scene)


def _forget_attached(scene: PlanningScene, object_id: str) -> None:
    """Remove an attached object from a request-scoped scene altogether."""
    scene.detach_object(object_id)
    scene.remove_object(object_id)
