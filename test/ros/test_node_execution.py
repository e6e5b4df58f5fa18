"""execute_trajectory over DDS, forwarded to a controller of the tests' own: the node (its own process) reads
moveit_resources' Panda moveit_controllers.yaml unchanged, and a stand-in FollowJointTrajectory server (another
process: processes/standin_controller.py) records what it receives and publishes joint_states.

Properties: a trajectory is forwarded to ``panda_arm_controller/follow_joint_trajectory`` as sent and the goal
succeeds; a start away from the current state is CONTROL_FAILED naming the joint, a bad trajectory
INVALID_MOTION_PLAN with the reason, and neither reaches the controller; a controller that rejects or aborts is
CONTROL_FAILED with its reason; an overrun is TIMED_OUT once duration x scaling + margin has passed (never
before; and long before a goal left to hang would end), and the controller is cancelled; a cancel is PREEMPTED and
cancels the controller; a goal the controller accepts after the node gave up waiting for its answer is cancelled
there; a controller that dies mid-execution ends the goal CONTROL_FAILED long before its trajectory
would have ended, and a client that leaves has its goal's controller cancelled as long before; a second goal on
joints being moved is refused with the reason. move_action: with
plan_only nothing is sent; else the plan (around planning_scene_diff's objects, which the node does not keep) starts
at the current state, is forwarded as planned and is collision-free.
"""
from __future__ import annotations

import json
import math
import signal
import time

import numpy as np
import pytest
import yaml
from action_msgs.msg import GoalStatus
from moveit_msgs.action import ExecuteTrajectory, MoveGroup
from moveit_msgs.msg import MoveItErrorCodes, PlanningSceneComponents
from moveit_msgs.srv import GetPlanningScene
from node_harness import (
    CALL_TIMEOUT_S,
    PROCESSES,
    REPO,
    NodeUnderTest,
    accepted_goal,
    goal_result,
    module_processes,  # noqa: F401 (fixture)
    serving_node,
    wait_for,
)
from rclpy.action import ActionClient
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from kinematics_py.collision.checker import CollisionChecker
from kinematics_py.collision.geometry import Box
from kinematics_py.geometry.transforms import make_transform
from kinematics_py.model.robot_model import RobotModel
from kinematics_py.model.srdf import SemanticModel
from kinematics_py.planning.path_check import PathCheck, densify
from kinematics_py.robots import bundled_robot_path
from kinematics_py.ros.demo.client import box_object, joint_goal, motion_plan_request
from kinematics_py.ros.messages.joint_trajectory import duration_msg
from kinematics_py.ros.transport.controller_clients import GOAL_RESPONSE_WAIT_S

PANDA_CONFIG = REPO / "test" / "data" / "moveit_resources" / "panda_moveit_config" / "config"
JOINTS = tuple(f"panda_joint{i}" for i in range(1, 8))
READY = (0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785)
MODEL = RobotModel.from_urdf_string(bundled_robot_path("panda").read_text())
CONTROLLER_ACTION = "panda_arm_controller/follow_joint_trajectory"
STANDIN = PROCESSES / "standin_controller.py"
LEAVER = PROCESSES / "execute_and_leave.py"
LEAVER_TRAJECTORY_S = 60.0  # execute_and_leave.py's trajectory
RESULT_TIMEOUT_S = 30.0
# How soon a goal ends once its controller is gone, it is cancelled or it overran is a latency, which depends on the
# machine's load: its figures against issue 29's 1 s target are bench/execution_latency.py's (docs/benchmarks.md,
# "Execution"). The tests below assert what always holds: the end comes from the event, not from the alternative
# (the trajectory running to its end, or a hanging controller's goal never ending), with bounds far apart.
#: moveit_controllers.yaml's allowed execution: duration x scaling + margin [s].
ALLOWED_SCALING, ALLOWED_MARGIN_S = 1.2, 0.5
#: A trajectory that is cancelled, or whose controller dies or whose client leaves, mid-execution [s]: long, so that
#: ending "long before it would have" is far from any latency.
LONG_TRAJECTORY_S = 60.0
#: "Long before the trajectory would have ended": within this part of its duration (15 s of 60 s, against a
#: latency of about half a second at most on the development machine, docs/benchmarks.md).
LONG_BEFORE_FRACTION = 0.25
#: A goal left to hang by the node (no timeout, no cancel) ends only when this test's client gives up
#: (RESULT_TIMEOUT_S); an overrun's end is at its allowed duration plus a latency, far below this bound.
LEFT_TO_HANG_S = RESULT_TIMEOUT_S / 2
#: Left to a controller that has a goal before it is killed, for its acceptance to reach the node [s].
SETTLE_S = 1.0
#: How late the stand-in accepts goals in mode "late": after the node has given up waiting for the answer [s].
LATE_ACCEPTANCE_S = GOAL_RESPONSE_WAIT_S + 1.0


def panda_parameters(**extra) -> dict:
    """The bundled Panda with moveit_resources' moveit_controllers.yaml as move_group loads it (unchanged)."""
    return {"robot_description": bundled_robot_path("panda").read_text(),
            "robot_description_semantic": bundled_robot_path("panda", "srdf").read_text(),
            **yaml.safe_load((PANDA_CONFIG / "moveit_controllers.yaml").read_text()), **extra}


def trajectory(times=(0.0, 0.5, 1.0), offsets=(0.0, 0.05, 0.1), start=READY) -> JointTrajectory:
    """The arm from ``start``, each point's joints moved by its offset."""
    msg = JointTrajectory(joint_names=list(JOINTS))
    for t, offset in zip(times, offsets):
        msg.points.append(JointTrajectoryPoint(positions=[v + offset for v in start], time_from_start=duration_msg(t)))
    return msg


class ExecutingNode(NodeUnderTest):
    def __init__(self, process, namespace):
        super().__init__(process, namespace)
        self.execute_client = ActionClient(self.node, ExecuteTrajectory, f"{namespace}/execute_trajectory")
        self.server_before_use(self.execute_client, "execute_trajectory")
        self.scene_client = self.client.client(GetPlanningScene, f"{namespace}/get_planning_scene")
        self.move_client = ActionClient(self.node, MoveGroup, f"{namespace}/move_action")
        self.server_before_use(self.move_client, "move_action")

    def send(self, joint_trajectory: JointTrajectory):
        goal = ExecuteTrajectory.Goal()
        goal.trajectory.joint_trajectory = joint_trajectory
        self.feedback = []
        return accepted_goal(self.client, self.execute_client, goal, self.feedback, RESULT_TIMEOUT_S)

    def result(self, handle):
        """(status, error_code) of a goal once it ended."""
        status, result = goal_result(self.client, handle, RESULT_TIMEOUT_S)
        return status, result.error_code

    def execute(self, joint_trajectory: JointTrajectory):
        return self.result(self.send(joint_trajectory))

    def current_positions(self) -> list[float]:
        """The arm's joints as the node has them (get_planning_scene's robot state)."""
        request = GetPlanningScene.Request()
        request.components.components = PlanningSceneComponents.ROBOT_STATE
        state = self.client.call(self.scene_client, request, CALL_TIMEOUT_S).scene.robot_state.joint_state
        values = dict(zip(state.name, state.position))
        return [values.get(joint, math.nan) for joint in JOINTS]

    def wait_at(self, positions, what: str, timeout: float = 10.0, process=None) -> None:
        """Return once the node's state has the arm exactly at ``positions`` (joint_states reach it a little after
        the controller's result, later on a busy machine)."""
        wait_for(lambda: np.allclose(self.current_positions(), positions, atol=1e-12, rtol=0), timeout, what, process)


@pytest.fixture(scope="module")
def node(module_processes, tmp_path_factory):  # noqa: F811
    with serving_node(module_processes, tmp_path_factory.mktemp("execution"), panda_parameters(), "execution_node",
                      tip="panda_link8", client_class=ExecutingNode) as node:
        yield node


class StandIn:
    """A stand-in controller process at ``positions``, what it recorded, and the mode of its next goals."""

    _started = 0

    def __init__(self, processes, node: ExecutingNode, directory, positions):
        StandIn._started += 1
        name = f"standin_{StandIn._started}"
        self.record, self.mode_file = directory / f"{name}.jsonl", directory / f"{name}.mode"
        self.process = processes.start(
            STANDIN, "--action", f"{node.namespace}/{CONTROLLER_ACTION}", "--joint-states",
            f"{node.namespace}/joint_states", "--joints", *JOINTS, "--positions", *map(str, positions), "--record",
            str(self.record), "--mode-file", str(self.mode_file), "--late-s", str(LATE_ACCEPTANCE_S), name=name)
        node.wait_at(positions, "the stand-in's joint_states at the node", 60.0, self.process)

    def set_mode(self, mode: str) -> None:
        self.mode_file.write_text(mode)

    def received(self) -> list:
        return [json.loads(line) for line in self.record.read_text().splitlines()] if self.record.exists() else []


@pytest.fixture(scope="module")
def stand_ins(module_processes, node, tmp_path_factory):  # noqa: F811
    """Starts stand-ins one at a time (a new one stops the one before): the module's at READY, serving every test
    that changes its mode, and one per test that kills it."""
    directory = tmp_path_factory.mktemp("stand_ins")
    running = []

    def start(positions=READY) -> StandIn:
        for old in running:
            module_processes.stop(old.process)
        running[:] = [StandIn(module_processes, node, directory, positions)]
        return running[0]
    return start


@pytest.fixture
def standin(stand_ins):
    """The module's stand-in (started on first use), in ``mode``."""
    def use(mode: str = "follow") -> StandIn:
        global _MODULE_STANDIN
        if _MODULE_STANDIN is None:
            _MODULE_STANDIN = stand_ins()
        _MODULE_STANDIN.set_mode(mode)
        return _MODULE_STANDIN
    return use


_MODULE_STANDIN: StandIn | None = None


def test_a_trajectory_is_forwarded_as_sent_and_succeeds(node, standin):
    """There and back: the second trajectory starts where the first ended (the stand-in's joint_states)."""
    controller = standin("follow")
    there = trajectory()
    back = trajectory(offsets=(0.1, 0.05, 0.0))
    for sent in (there, back):
        status, code = node.execute(sent)
        assert (status, code.val) == (GoalStatus.STATUS_SUCCEEDED, MoveItErrorCodes.SUCCESS), code.message
        if sent is back:  # (the first goal's feedback may be sent before the feedback topic is matched)
            wait_for(lambda: len(node.feedback) >= 2 or node.client.spin_once(0.05), 10.0,
                     f"the feedback {node.feedback}")
            # move_group's states; the last, IDLE, is dropped by a client that has the result by then
            assert node.feedback[:2] == ["MONITOR", code.message] and node.feedback[2:] in ([], ["IDLE"]), \
                node.feedback
        received = controller.received()[-1]
        assert received["joint_names"] == list(JOINTS)
        assert received["times"] == pytest.approx([0.0, 0.5, 1.0], abs=1e-9)
        np.testing.assert_allclose(received["positions"], [list(p.positions) for p in sent.points], atol=1e-12)
        node.wait_at(sent.points[-1].positions, "joint_states at the trajectory's end")
    assert len(controller.received()) == 2


def test_a_start_away_from_the_current_state_is_refused_naming_the_joint(node, standin):
    controller = standin("follow")
    before = len(controller.received())
    away = trajectory(start=READY[:3] + (READY[3] + 0.05,) + READY[4:])
    status, code = node.execute(away)
    assert (status, code.val) == (GoalStatus.STATUS_ABORTED, MoveItErrorCodes.CONTROL_FAILED)
    assert "'panda_joint4'" in code.message and "0.05" in code.message, code.message
    assert len(controller.received()) == before


@pytest.mark.parametrize("bad, reason", [
    (lambda: trajectory(times=(0.0, 0.5, 0.5)), "must increase"),
    (lambda: trajectory(offsets=(0.0, 0.05, 3.0)), "outside its limits"),
    (lambda: JointTrajectory(joint_names=["panda_joint1", "elbow"], points=[
        JointTrajectoryPoint(positions=[0.0, 0.0])]), "'elbow'"),
    (lambda: JointTrajectory(joint_names=list(JOINTS), points=[JointTrajectoryPoint(positions=[0.0])]),
     "1 positions for 7 joints"),
])
def test_a_bad_trajectory_is_an_invalid_motion_plan_and_never_sent(node, standin, bad, reason):
    controller = standin("follow")
    before = len(controller.received())
    status, code = node.execute(bad())
    assert (status, code.val) == (GoalStatus.STATUS_ABORTED, MoveItErrorCodes.INVALID_MOTION_PLAN), code.message
    assert reason in code.message, code.message
    assert len(controller.received()) == before


@pytest.mark.parametrize("mode, reason", [("reject", "rejected"), ("abort", "path tolerance violated")])
def test_a_controller_that_rejects_or_aborts_is_a_control_failure(node, standin, mode, reason):
    standin(mode)
    status, code = node.execute(trajectory())
    assert (status, code.val) == (GoalStatus.STATUS_ABORTED, MoveItErrorCodes.CONTROL_FAILED)
    assert "panda_arm_controller" in code.message and reason in code.message, code.message


def test_an_overrun_times_out_and_cancels_the_controller(node, standin):
    """moveit_controllers.yaml: 1.0 s x 1.2 + 0.5 s allowed; never ended before that (the lower bound holds on
    any machine), and ended by the timeout, not left to hang with its controller."""
    controller = standin("hang")
    cancels = controller.received().count("cancel")
    sent = trajectory()
    end = sent.points[-1].time_from_start
    allowed = (end.sec + end.nanosec * 1e-9) * ALLOWED_SCALING + ALLOWED_MARGIN_S
    began = time.monotonic()
    status, code = node.execute(sent)
    took = time.monotonic() - began
    assert (status, code.val) == (GoalStatus.STATUS_ABORTED, MoveItErrorCodes.TIMED_OUT), code.message
    assert allowed <= took < LEFT_TO_HANG_S, (allowed, took)
    wait_for(lambda: controller.received().count("cancel") > cancels, 5.0, "the controller's cancel")


def test_a_cancel_preempts_and_cancels_the_controller(node, standin):
    controller = standin("hang")
    cancels = controller.received().count("cancel")
    handle = node.send(trajectory(times=(0.0, LONG_TRAJECTORY_S / 2, LONG_TRAJECTORY_S)))
    time.sleep(0.5)
    began = time.monotonic()
    cancelled = handle.cancel_goal_async()
    node.client.spin_until(cancelled, RESULT_TIMEOUT_S)
    status, code = node.result(handle)
    took = time.monotonic() - began
    assert (status, code.val) == (GoalStatus.STATUS_CANCELED, MoveItErrorCodes.PREEMPTED), code.message
    assert took < LONG_BEFORE_FRACTION * LONG_TRAJECTORY_S, f"ended {took:.1f} s after the cancel"
    assert controller.received().count("cancel") > cancels


def test_one_execution_at_a_time_per_joint(node, standin):
    standin("hang")
    first = node.send(trajectory(times=(0.0, 5.0, 10.0)))
    time.sleep(0.3)
    status, code = node.execute(trajectory())
    assert (status, code.val) == (GoalStatus.STATUS_ABORTED, MoveItErrorCodes.CONTROL_FAILED)
    assert "being moved by another execution" in code.message and "panda_joint1" in code.message, code.message
    node.client.spin_until(first.cancel_goal_async(), RESULT_TIMEOUT_S)
    assert node.result(first)[1].val == MoveItErrorCodes.PREEMPTED


def test_a_goal_accepted_after_the_node_gave_up_on_it_is_cancelled_at_the_controller(node, standin):
    """The stand-in accepts the goal after the node's wait for its answer (and would then follow its 60 s
    trajectory): the execution ends CONTROL_FAILED and the controller gets a cancel, long before the trajectory would
    have ended."""
    controller = standin("late")
    cancels, goals = controller.received().count("cancel"), len(controller.received())
    status, code = node.execute(trajectory(times=(0.0, LONG_TRAJECTORY_S / 2, LONG_TRAJECTORY_S)))
    assert (status, code.val) == (GoalStatus.STATUS_ABORTED, MoveItErrorCodes.CONTROL_FAILED), code.message
    assert "did not answer the goal" in code.message, code.message
    assert len(controller.received()) > goals
    wait_for(lambda: controller.received().count("cancel") > cancels, LONG_BEFORE_FRACTION * LONG_TRAJECTORY_S,
             "the late goal's cancel")


def move_group_goal(goal, plan_only: bool, start=None) -> MoveGroup.Goal:
    """A MoveGroup goal to the joint configuration ``goal`` (from ``start``, when given)."""
    request = motion_plan_request("panda_arm", [joint_goal(dict(zip(JOINTS, goal)))], dict(zip(JOINTS, start))
                                  if start is not None else {}).motion_plan_request
    result = MoveGroup.Goal(request=request)
    result.planning_options.plan_only = plan_only
    return result


def move(node: ExecutingNode, goal: MoveGroup.Goal):
    """(status, result) of a move_action goal."""
    sent = node.move_client.send_goal_async(goal)
    node.client.spin_until(sent, RESULT_TIMEOUT_S)
    assert sent.result().accepted
    result = sent.result().get_result_async()
    node.client.spin_until(result, 120.0)
    assert result.done()
    return result.result().status, result.result().result


def points(robot_trajectory) -> np.ndarray:
    return np.array([list(p.positions) for p in robot_trajectory.joint_trajectory.points])


MOVE_GOAL = (0.8, -0.3, 0.2, -2.0, 0.1, 1.8, 0.5)


def test_move_action_plan_only_plans_from_the_request_and_sends_nothing(node, standin):
    controller = standin("follow")
    before = len(controller.received())
    start = np.array(READY) + 0.02
    status, result = move(node, move_group_goal(MOVE_GOAL, plan_only=True, start=start))
    assert (status, result.error_code.val) == (GoalStatus.STATUS_SUCCEEDED, MoveItErrorCodes.SUCCESS), \
        result.error_code.message
    planned = points(result.planned_trajectory)
    np.testing.assert_allclose(planned[0], start, atol=1e-9)
    np.testing.assert_allclose(planned[-1], MOVE_GOAL, atol=1e-3)
    assert not result.executed_trajectory.joint_trajectory.points and result.planning_time > 0
    assert len(controller.received()) == before


def test_move_action_plans_around_its_scene_diff_from_the_current_state_and_executes(node, standin):
    """The request's start state is ignored (the motion starts at /joint_states); a box of planning_scene_diff on
    the straight motion is planned around and not kept in the node's scene."""
    controller = standin("follow")
    before = len(controller.received())
    box_at = MODEL.link_poses(dict(zip(JOINTS, (np.array(READY) + MOVE_GOAL) / 2)))["panda_hand"][:3, 3]
    box = box_object("diff_box", 0.12, make_transform(None, box_at), "panda_link0")
    checker = CollisionChecker(MODEL, SemanticModel.from_srdf_string(bundled_robot_path("panda", "srdf").read_text(),
                                                                     MODEL))
    checker.scene.add_object("diff_box", [Box((0.12,) * 3)], pose=make_transform(None, box_at))
    check = PathCheck(checker, JOINTS)
    assert check.first_invalid(densify(np.array([READY, MOVE_GOAL]), 0.01)) >= 0, "the straight motion hits the box"
    goal = move_group_goal(MOVE_GOAL, plan_only=False, start=np.array(READY) + 0.3)
    goal.planning_options.planning_scene_diff.is_diff = True
    goal.planning_options.planning_scene_diff.world.collision_objects = [box]
    status, result = move(node, goal)
    assert (status, result.error_code.val) == (GoalStatus.STATUS_SUCCEEDED, MoveItErrorCodes.SUCCESS), \
        result.error_code.message
    forwarded = np.array(controller.received()[-1]["positions"])
    assert len(controller.received()) == before + 1
    np.testing.assert_allclose(forwarded, points(result.planned_trajectory), atol=1e-12)
    np.testing.assert_allclose(points(result.executed_trajectory), forwarded, atol=1e-12)
    np.testing.assert_allclose(forwarded[0], READY, atol=1e-9)
    np.testing.assert_allclose(forwarded[-1], MOVE_GOAL, atol=1e-3)
    assert check.first_invalid(densify(forwarded, 0.01)) < 0, "collision-free around the box"
    # the arm stays at the goal for the tests after this one, which read where it is
    node.wait_at(forwarded[-1], "joint_states at the executed trajectory's end")
    request = GetPlanningScene.Request()
    request.components.components = PlanningSceneComponents.WORLD_OBJECT_NAMES
    assert node.client.call(node.scene_client, request, CALL_TIMEOUT_S).scene.world.collision_objects == []


def test_a_move_action_goal_it_cannot_plan_ends_with_moveit_s_code(node, standin):
    controller = standin("follow")
    before = len(controller.received())
    goal = move_group_goal(MOVE_GOAL, plan_only=False)
    goal.request.group_name = "no_such_group"
    status, result = move(node, goal)
    assert (status, result.error_code.val) == (GoalStatus.STATUS_ABORTED, MoveItErrorCodes.INVALID_GROUP_NAME)
    assert "no_such_group" in result.error_code.message, result.error_code.message
    assert len(controller.received()) == before


def test_a_goal_whose_client_leaves_is_cancelled_at_the_controller(node, standin, module_processes):  # noqa: F811
    """Its client (another process) stops mid-execution of a 60 s trajectory, and no other client of
    execute_trajectory is left (this one's leaves for the test): the node cancels the controller long before the
    trajectory would have ended (nor is it its overrun's timeout, 72.5 s)."""
    controller = standin("hang")
    cancels, goals = controller.received().count("cancel"), len(controller.received())
    node.execute_client.destroy()
    try:
        leaver = module_processes.start(LEAVER, "--action", f"{node.namespace}/execute_trajectory", "--joints",
                                        *JOINTS, "--positions", *map(str, node.current_positions()),
                                        name="execute_and_leave")
        wait_for(lambda: "accepted" in leaver.stdout(), 60.0, "the goal accepted", leaver)
        wait_for(lambda: len(controller.received()) > goals or "result" in leaver.stdout(), 10.0,
                 "the goal at the controller", leaver)
        assert len(controller.received()) > goals, leaver.output()
        leaver.popen.send_signal(signal.SIGTERM)
        leaver.popen.wait(10.0)
        left = time.monotonic()
        long_before = LONG_BEFORE_FRACTION * LEAVER_TRAJECTORY_S
        wait_for(lambda: controller.received().count("cancel") > cancels, long_before, "the controller cancelled")
        assert time.monotonic() - left < long_before
    finally:
        node.execute_client = ActionClient(node.node, ExecuteTrajectory, f"{node.namespace}/execute_trajectory")
        assert node.execute_client.wait_for_server(timeout_sec=30.0)


@pytest.mark.parametrize("how", [signal.SIGTERM, signal.SIGKILL])
def test_a_controller_that_dies_mid_execution_ends_the_goal_long_before_its_trajectory(node, stand_ins, how):
    """Last in the module: each kills a stand-in of its own (at a start of its own, seen at the node). The goal
    ends CONTROL_FAILED "gone" long before its 60 s trajectory would have ended (or timed out, 72.5 s)."""
    controller = stand_ins(READY[:6] + (READY[6] + 1e-4 * how,))
    start = READY[:6] + (READY[6] + 1e-4 * how,)
    handle = node.send(trajectory(times=(0.0, LONG_TRAJECTORY_S / 2, LONG_TRAJECTORY_S), start=start))
    wait_for(lambda: controller.received() or handle.status >= GoalStatus.STATUS_SUCCEEDED
             or node.client.spin_once(0.05), 10.0, "the goal at the controller")
    assert controller.received(), node.result(handle)[1].message
    # mid-execution: the controller's acceptance at the node too (a controller that dies before its answer reaches
    # the node: the next test)
    time.sleep(SETTLE_S)
    controller.process.popen.send_signal(how)
    controller.process.popen.wait(10.0)
    died = time.monotonic()
    status, code = node.result(handle)
    took = time.monotonic() - died
    assert took < LONG_BEFORE_FRACTION * LONG_TRAJECTORY_S, f"ended {took:.1f} s after the kill: {code.message}"
    assert (status, code.val) == (GoalStatus.STATUS_ABORTED, MoveItErrorCodes.CONTROL_FAILED)
    assert "gone" in code.message, code.message


@pytest.mark.parametrize("how", [signal.SIGTERM, signal.SIGKILL])
def test_a_controller_that_dies_before_answering_its_goal_ends_the_goal_gone(node, stand_ins, how):
    """Last in the module too: a stand-in that has the goal but never answers it is killed; the goal ends
    CONTROL_FAILED "gone" (its action server left, or its joints left joint_states), not "did not answer"."""
    start = READY[:6] + (READY[6] + 2e-4 * how,)
    controller = stand_ins(start)
    controller.set_mode("mute")
    handle = node.send(trajectory(times=(0.0, LONG_TRAJECTORY_S / 2, LONG_TRAJECTORY_S), start=start))
    wait_for(lambda: controller.received() or handle.status >= GoalStatus.STATUS_SUCCEEDED
             or node.client.spin_once(0.05), 10.0, "the goal at the controller")
    assert controller.received(), node.result(handle)[1].message
    controller.process.popen.send_signal(how)
    controller.process.popen.wait(10.0)
    status, code = node.result(handle)
    assert (status, code.val) == (GoalStatus.STATUS_ABORTED, MoveItErrorCodes.CONTROL_FAILED), code.message
    assert "gone" in code.message and "before answering the goal" in code.message, code.message
