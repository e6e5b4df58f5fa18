"""kinematics_node validates a parameter change without side effects, and serves an accepted one.

The robot is test/data/urdf/tree.urdf without kinematics.yaml settings: first without an SRDF (one group 'arm'
from base_frame and tip_frame), then with one. The tests share one node and run in file order.
"""
from __future__ import annotations

import numpy as np
import pytest
from moveit_msgs.msg import MoveItErrorCodes
from node_harness import (
    TREE_URDF,
    ik_request,
    module_processes,  # noqa: F401 (fixture)
    serving_node,
    solution_values,
)

from kinematics_py.model.robot_model import RobotModel

#: 'arm' is a group of joints, not a chain: with this SRDF it cannot be served.
SRDF_WITHOUT_AN_ARM_CHAIN = """<?xml version="1.0"?>
<robot name="tree">
  <group name="arm"><joint name="left_shoulder_joint"/><joint name="right_shoulder_joint"/></group>
  <group name="left_arm"><chain base_link="torso" tip_link="left_tcp"/></group>
  <group name="right_arm"><chain base_link="torso" tip_link="right_tcp"/></group>
</robot>
"""
SRDF = SRDF_WITHOUT_AN_ARM_CHAIN.replace('<group name="arm"><joint name="left_shoulder_joint"/>'
                                         '<joint name="right_shoulder_joint"/></group>', "")
MODEL = RobotModel.from_urdf_file(TREE_URDF)
LEFT_ARM = ("torso_lift_joint", "left_shoulder_joint", "left_upper_arm_joint", "left_elbow_joint")


@pytest.fixture(scope="module")
def tree(module_processes, tmp_path_factory):  # noqa: F811
    parameters = {"robot_description": TREE_URDF.read_text(), "base_frame": "torso", "tip_frame": "left_tcp",
                  "collision_checking_unavailable_policy": "ignore_with_warning"}
    with serving_node(module_processes, tmp_path_factory.mktemp("parameters"), parameters, "parameters_node",
                      tip="left_tcp") as node:
        yield node


def kinematics_parameters(node) -> list[str]:
    from rcl_interfaces.srv import ListParameters

    client = node.client.client(ListParameters, f"{node.namespace}/kinematics_node/list_parameters")
    try:
        assert node.client.wait_until_answering(client, ListParameters.Request(), 30.0)
        request = ListParameters.Request(prefixes=["robot_description_kinematics"], depth=0)
        return sorted(node.client.call(client, request, 30.0).result.names)
    finally:
        node.node.destroy_client(client)


def test_a_refused_change_declares_nothing_and_logs_nothing(tree):
    declared = kinematics_parameters(tree)
    assert "robot_description_kinematics.arm.solve_mode" in declared, "the served group's parameters"
    log_before = tree.process.output()
    result = tree.set_parameters_atomically(**{"robot_description_semantic": SRDF_WITHOUT_AN_ARM_CHAIN,
                                               "robot_description_kinematics.arm.solve_mode": "distance"})
    assert not result.successful
    assert "'arm' is not a serial chain" in result.reason, result.reason
    assert kinematics_parameters(tree) == declared, "the SRDF's other groups got parameters"
    said = tree.process.output()[len(log_before):]
    assert "NOT served" not in said and "robot 'tree'" not in said, said
    response = tree.ik(ik_request("arm", MODEL.link_poses({})["left_tcp"]))
    assert response.error_code.val == MoveItErrorCodes.SUCCESS, "still the group without an SRDF"


def test_an_accepted_srdf_is_served_and_its_groups_get_parameters(tree):
    (result,) = tree.set_parameters(robot_description_semantic=SRDF)
    assert result.successful, result.reason
    declared = kinematics_parameters(tree)
    for group in ("left_arm", "right_arm"):
        assert f"robot_description_kinematics.{group}.solve_mode" in declared, declared
    (result,) = tree.set_parameters(**{"robot_description_kinematics.left_arm.kinematics_solver_timeout": 0.5})
    assert result.successful, result.reason
    state = {name: MODEL.joints[name].lower + 0.3 * (MODEL.joints[name].upper - MODEL.joints[name].lower)
             for name in LEFT_ARM}
    target = MODEL.link_poses(state)["left_tcp"]
    response = tree.ik(ik_request("left_arm", target, seed={name: value + 0.05 for name, value in state.items()}))
    assert response.error_code.val == MoveItErrorCodes.SUCCESS, response.error_code.message
    reached = MODEL.link_poses(solution_values(response))["left_tcp"]
    assert np.allclose(reached, target, atol=2e-5)
