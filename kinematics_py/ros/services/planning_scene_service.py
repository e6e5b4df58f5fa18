"""The get_planning_scene service (moveit_msgs/srv/GetPlanningScene): the node's planning scene, with the
requested components (none requested: all of them), as move_group's service answers it. The robot state is
the current one (joint_states); without a robot description yet the scene is empty."""
from __future__ import annotations

import traceback

from ..messages.scene_conversions import planning_scene_msg
from .request_context import RequestContext


def get_planning_scene(request, response, context: RequestContext):
    try:
        return _answer(request, response, context)
    except Exception as error:  # never a dead node: an empty scene, and the reason in the log
        context.tools.logger.error(f"internal error answering get_planning_scene: {error!r}\n"
                                   f"{traceback.format_exc()}")
        return type(response)()


def _answer(request, response, context: RequestContext):
    state = context.state
    if state.setup is None:
        return response
    checker = state.checker
    robot_disabled = checker.disabled_pairs if checker is not None else {}
    robot_links = list(checker.link_geometry) if checker is not None else []
    model = state.setup.model
    response.scene = planning_scene_msg(state.scene, request.components.components, robot_disabled, robot_links,
                                        list(model.single_dof_joint_names), context.joint_values())
    return response
