"""simulate_controllers without a controller configuration: the node serves one whole-robot controller,
``joint_trajectory_controller/follow_joint_trajectory``, starts the joints at ``initial_positions.<joint>`` where
given, else at the SRDF's first group state (the bundled UR5's ``home``, its elbow moved to 0.5 here), the node's
own state there from its first answer (not only once its joint_states reach its subscription), and executes
an execute_trajectory goal through it, joint_states ending at the trajectory's last point; a goal sent to it
directly naming a joint it does not control is aborted INVALID_JOINTS, the joints left where they are. A new
client's first goal, sent as soon as it discovered the action, is answered (the node's answer writer may not have
matched the client's reader yet: the answer is sent again until it is)."""
from __future__ import annotations

import numpy as np
from action_msgs.msg import GoalStatus
from control_msgs.action import FollowJointTrajectory
from moveit_msgs.action import ExecuteTrajectory
from moveit_msgs.msg import MoveItErrorCodes, PlanningSceneComponents, RobotTrajectory
from moveit_msgs.srv import GetPlanningScene
from node_harness import (
    CALL_TIMEOUT_S,
    UR5_JOINTS,
    UR5_MODEL,
    module_processes,  # noqa: F401 (fixture)
    serving_node,
    ur5_parameters,
    wait_for,
)
from rclpy.action import ActionClient, get_action_names_and_types
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from kinematics_py.model.srdf import SemanticModel
from kinematics_py.robots import bundled_robot_path
from kinematics_py.ros.demo.client import KinematicsClient
from kinematics_py.ros.messages.joint_trajectory import duration_msg

#: The bundled UR5's SRDF, its first group state ("home": all zeros) with the elbow at 0.5.
SRDF = bundled_robot_path("ur5", "srdf").read_text().replace('<joint name="elbow_joint" value="0"/>',
                                                             '<joint name="elbow_joint" value="0.5"/>', 1)
HOME = SemanticModel.from_srdf_string(SRDF, UR5_MODEL).group_states["ur_manipulator"]["home"]


def current_positions(node) -> np.ndarray:
    request = GetPlanningScene.Request()
    request.components.components = PlanningSceneComponents.ROBOT_STATE
    state = node.client.call(node.client.client(GetPlanningScene, f"{node.namespace}/get_planning_scene"), request,
                             CALL_TIMEOUT_S).scene.robot_state.joint_state
    values = dict(zip(state.name, state.position))
    return np.array([values.get(joint, np.nan) for joint in UR5_JOINTS])


def test_one_whole_robot_controller_from_the_srdf_state(module_processes, tmp_path):  # noqa: F811
    parameters = ur5_parameters(simulate_controllers=True, robot_description_semantic=SRDF,
                                initial_positions={"wrist_1_joint": -1.0})
    assert HOME["elbow_joint"] == 0.5
    with serving_node(module_processes, tmp_path, parameters, "simulating_ur5") as node:
        home = np.array([{**HOME, "wrist_1_joint": -1.0}[joint] for joint in UR5_JOINTS])
        np.testing.assert_allclose(current_positions(node), home, atol=1e-12, rtol=0,
                                   err_msg="the node's state is where its simulated joints start from its first answer")
        actions = {name for name, _ in get_action_names_and_types(node.node)}
        assert f"{node.namespace}/joint_trajectory_controller/follow_joint_trajectory" in actions, actions
        executing = ActionClient(node.node, ExecuteTrajectory, f"{node.namespace}/execute_trajectory")
        assert executing.wait_for_server(timeout_sec=30.0)
        end = home + 0.1
        goal = ExecuteTrajectory.Goal()
        goal.trajectory.joint_trajectory = JointTrajectory(joint_names=list(UR5_JOINTS), points=[
            JointTrajectoryPoint(positions=list(q), time_from_start=duration_msg(t)) for t, q in ((0.0, home),
                                                                                                   (1.0, end))])
        sent = executing.send_goal_async(goal)
        node.client.spin_until(sent, CALL_TIMEOUT_S)
        result = sent.result().get_result_async()
        node.client.spin_until(result, CALL_TIMEOUT_S)
        code = result.result().result.error_code
        assert (result.result().status, code.val) == (GoalStatus.STATUS_SUCCEEDED, MoveItErrorCodes.SUCCESS), \
            code.message
        assert "joint_trajectory_controller" in code.message
        wait_for(lambda: np.allclose(current_positions(node), end, atol=1e-12, rtol=0), 10.0, "the trajectory's end")
        controller = ActionClient(node.node, FollowJointTrajectory,
                                  f"{node.namespace}/joint_trajectory_controller/follow_joint_trajectory")
        assert controller.wait_for_server(timeout_sec=30.0)
        unknown = FollowJointTrajectory.Goal(trajectory=JointTrajectory(joint_names=["elbow"], points=[
            JointTrajectoryPoint(positions=[0.0], time_from_start=duration_msg(0.5))]))
        sent = controller.send_goal_async(unknown)
        node.client.spin_until(sent, CALL_TIMEOUT_S)
        result = sent.result().get_result_async()
        node.client.spin_until(result, CALL_TIMEOUT_S)
        answer = result.result().result
        assert (result.result().status, answer.error_code) == (GoalStatus.STATUS_ABORTED,
                                                               FollowJointTrajectory.Result.INVALID_JOINTS)
        assert "'elbow'" in answer.error_string, answer.error_string
        np.testing.assert_allclose(current_positions(node), end, atol=1e-12)


def test_a_new_clients_first_goal_sent_on_discovery_is_answered(module_processes, tmp_path):  # noqa: F811
    with serving_node(module_processes, tmp_path, ur5_parameters(simulate_controllers=True), "first_goals") as node:
        for index in range(4):
            client = KinematicsClient(node.namespace, node_name=f"pytest_new_action_client_{index}")
            executing = ActionClient(client.node, ExecuteTrajectory, f"{node.namespace}/execute_trajectory")
            try:
                assert executing.wait_for_server(timeout_sec=CALL_TIMEOUT_S)
                sent = executing.send_goal_async(ExecuteTrajectory.Goal(trajectory=RobotTrajectory()))  # no ping first
                client.spin_until(sent, CALL_TIMEOUT_S)
                assert sent.done() and sent.result().accepted, f"client {index}: its goal was not answered"
                result = sent.result().get_result_async()
                client.spin_until(result, CALL_TIMEOUT_S)
                assert result.done(), f"client {index}: its result was not answered"
                code = result.result().result.error_code
                assert code.val == MoveItErrorCodes.SUCCESS, code.message
            finally:
                executing.destroy()
                client.close()
