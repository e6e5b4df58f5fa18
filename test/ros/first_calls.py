"""The first calls of every service of kinematics_node that computes something (shared by test_node_first_calls.py
and bench/first_call.py): FK, IK, the planning scene services, state validity with contacts (whole robot and
group), collision-aware IK and a collision-aware Cartesian path, on a bundled robot with a box around a link of
configuration A (``demo.OBSTACLE_SCENES``, as ``make run`` places it).
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
from moveit_msgs.msg import MoveItErrorCodes, PlanningScene, PlanningSceneComponents
from moveit_msgs.srv import ApplyPlanningScene, GetCartesianPath, GetPlanningScene, GetStateValidity

from kinematics_py.geometry.transforms import make_transform
from kinematics_py.model.robot_model import RobotModel
from kinematics_py.model.srdf import SemanticModel
from kinematics_py.robots import bundled_robot_path
from kinematics_py.ros.demo.client import (
    KinematicsClient,
    box_object,
    cartesian_path_request,
    fk_request,
    ik_request,
    state_validity_request,
)
from kinematics_py.ros.demo.walkthrough import GROUPS, OBSTACLE_ID, OBSTACLE_SCENES, OBSTACLE_SIZE

#: Service name -> type, of the services called besides compute_ik and compute_fk.
OTHER_SERVICES = {"check_state_validity": GetStateValidity, "compute_cartesian_path": GetCartesianPath,
                  "apply_planning_scene": ApplyPlanningScene, "get_planning_scene": GetPlanningScene}
#: IK time budget of the timed IK calls [s]: a warm node answers these in milliseconds.
IK_TIMEOUT_S = 0.5


@dataclass
class Call:
    label: str
    service: str
    request: object

    def answered_as_expected(self, response) -> str | None:
        """None if ``response`` is the answer this call must get, else what is wrong with it."""
        if isinstance(response, GetStateValidity.Response):
            touching = any(OBSTACLE_ID in (c.contact_body_1, c.contact_body_2) for c in response.contacts)
            return None if not response.valid and touching else f"valid={response.valid}, {len(response.contacts)} " \
                                                                  f"contacts, none with {OBSTACLE_ID!r}"
        if isinstance(response, ApplyPlanningScene.Response):
            return None if response.success else "not applied"
        if isinstance(response, GetPlanningScene.Response):
            ids = [o.id for o in response.scene.world.collision_objects]
            return None if ids == [OBSTACLE_ID] else f"world objects {ids}"
        code = response.error_code
        if code.val != MoveItErrorCodes.SUCCESS:
            return f"error code {code.val}: {code.message}"
        if isinstance(response, GetCartesianPath.Response) and response.fraction != 1.0:
            return f"fraction {response.fraction}"
        return None


def first_calls(robot: str) -> list[Call]:
    """The calls, in order: each one's answer is known (see ``Call.answered_as_expected``)."""
    model = RobotModel.from_urdf_file(bundled_robot_path(robot))
    group = SemanticModel.from_srdf_file(bundled_robot_path(robot, "srdf"), model).group(GROUPS[robot])
    values, link = OBSTACLE_SCENES[robot]
    q_a = dict(zip(group.joint_names, values))
    chain = model.chain(group.base_link, group.tip_link)
    q_free = dict(zip(group.joint_names, (np.maximum(chain.lower, -np.pi) + np.minimum(chain.upper, np.pi)) / 2))
    poses_a = model.link_poses(q_a)
    T_free = model.link_poses(q_free)[group.tip_link]
    T_up = T_free.copy()
    T_up[2, 3] += 0.05
    scene = PlanningScene(is_diff=True)
    scene.world.collision_objects = [box_object(OBSTACLE_ID, OBSTACLE_SIZE, make_transform(None, poses_a[link][:3, 3]),
                                                model.root_link)]
    every_component = GetPlanningScene.Request()
    every_component.components.components = sum(
        value for name, value in vars(PlanningSceneComponents).items() if name.isupper() and isinstance(value, int))
    return [
        Call("compute_fk", "compute_fk", fk_request([group.tip_link], q_free)),
        Call("compute_ik", "compute_ik", ik_request(group.name, T_free, seed=q_free, timeout=IK_TIMEOUT_S)),
        Call("apply_planning_scene (add a box)", "apply_planning_scene", ApplyPlanningScene.Request(scene=scene)),
        Call("get_planning_scene (every component)", "get_planning_scene", every_component),
        Call("check_state_validity (in collision, contacts)", "check_state_validity", state_validity_request(q_a)),
        Call("check_state_validity (the group)", "check_state_validity", state_validity_request(q_a, group.name)),
        Call("compute_ik, avoid_collisions", "compute_ik", ik_request(
            group.name, poses_a[group.tip_link], seed=q_a, timeout=IK_TIMEOUT_S, avoid_collisions=True)),
        Call("compute_cartesian_path, avoid_collisions", "compute_cartesian_path",
             cartesian_path_request(group.name, [T_up], 0.01, q_free)),
    ]


def answering_services(client: KinematicsClient, timeout: float) -> dict[str, object]:
    """Service name -> client, once each service has answered a request it refuses before computing anything
    (an unknown group or link, an empty scene diff) or answers without computing (the scene settings alone): DDS
    discovery is then complete both ways, and no kernel has run. TimeoutError if one does not answer within
    ``timeout`` [s]."""
    services = {"compute_ik": client.ik_client, "compute_fk": client.fk_client}
    services.update({name: client.client(kind, f"{client.prefix}{name}") for name, kind in OTHER_SERVICES.items()})
    pings = {"compute_ik": ik_request("no_such_group", np.eye(4)), "compute_fk": fk_request(["no_such_link"]),
             "check_state_validity": GetStateValidity.Request(group_name="no_such_group"),
             "compute_cartesian_path": GetCartesianPath.Request(group_name="no_such_group"),
             "apply_planning_scene": ApplyPlanningScene.Request(scene=PlanningScene(is_diff=True)),
             "get_planning_scene": GetPlanningScene.Request(
                 components=PlanningSceneComponents(components=PlanningSceneComponents.SCENE_SETTINGS))}
    deadline = time.monotonic() + timeout
    for name, ping in pings.items():
        if not client.wait_until_answering(services[name], ping, max(0.0, deadline - time.monotonic())):
            raise TimeoutError(f"{client.prefix}{name} did not answer within {timeout} s")
    return services
