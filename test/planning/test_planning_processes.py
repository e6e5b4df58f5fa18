"""PlanningProcesses (ROS-free): plans computed in processes of their own equal the plans of this process (valid,
collision-free by this process's checker at every point), follow the scene as it changes, take their goal and
path constraints along, stop when asked, and say why when they cannot be computed (busy, closed, a killed
process, which is replaced), and send a robot's inputs only to a process that does not keep them."""
import dataclasses
import os
import signal
import threading
import time

import numpy as np
import pytest

from kinematics_py import ErrorCode
from kinematics_py.collision.geometry import Box
from kinematics_py.collision.scene import PlanningScene
from kinematics_py.geometry.transforms import make_transform
from kinematics_py.model.constraints import SPHERE, JointBound, PositionRegion, RequestConstraints
from kinematics_py.planning.goals import JointGoal, PoseGoal
from kinematics_py.planning.options import PlanningError
from kinematics_py.planning.processes import (
    INPUTS_KEPT,
    InputsKept,
    PlanJob,
    PlanningProcessError,
    PlanningProcesses,
    SceneContent,
)
from kinematics_py.robot_setup import SetupInputs, build_robot_setup
from kinematics_py.robots import bundled_robot_path
from kinematics_py.state_check import StateCheck

GROUP = "panda_arm"
LEFT = [1.2, 0.6, 0.0, -1.6, 0.0, 2.2, 0.785]
RIGHT = [-1.2, 0.6, 0.0, -1.6, 0.0, 2.2, 0.785]
WALL = ("wall", (0.04, 1.2, 0.6), (0.5, 0.0, 0.32))
#: Long enough never to be reached on a loaded machine by the plans that must end otherwise [s].
LONG = 120.0


@pytest.fixture(scope="module")
def robot():
    inputs = SetupInputs(urdf=bundled_robot_path("panda").read_text(encoding="utf-8"),
                         srdf=bundled_robot_path("panda", "srdf").read_text(encoding="utf-8"))
    setup = build_robot_setup(inputs)
    processes = PlanningProcesses(1)
    processes.prepare(setup)
    processes.start()
    _wait_until_built(processes, setup)
    yield setup, processes
    processes.close()


def _wait_until_built(processes: PlanningProcesses, setup) -> None:
    while not processes.has_built(setup):  # no time limit here: pytest's timeout ends a hung test
        time.sleep(0.05)


def _checker(setup, *objects):
    checker = setup.collision.checker.for_scene(PlanningScene(setup.model))
    for name, size, centre in objects:
        checker.scene.add_object(name, [Box(size)], pose=make_transform(None, centre))
    return checker


def _job(setup, goals, *, deadline=None, **fields) -> PlanJob:
    return PlanJob(GROUP, LEFT, goals, setup.model.resolve_joint_values({}),
                   time.monotonic() + 10.0 if deadline is None else deadline, **fields)


def _assert_collision_free(setup, checker, result, goal):
    assert result.success, result.message
    names = setup.groups[GROUP].getJointNames()
    assert np.allclose(result.positions[0], LEFT) and np.allclose(result.positions[-1], goal, atol=1e-6)
    colliding = checker.check_batch(result.positions, joint_names=names,
                                    base_state=setup.model.resolve_joint_values({}))
    assert not np.any(colliding)


def test_a_plan_in_a_process_is_collision_free_in_this_process(robot):
    setup, processes = robot
    checker = _checker(setup, WALL)
    result = processes.run(_job(setup, [JointGoal(RIGHT)]), setup, checker)
    _assert_collision_free(setup, checker, result, RIGHT)
    assert len(result.waypoints) > 2  # the straight motion hits the wall: a detour


def test_a_job_for_a_controller_answers_with_the_points_it_needs(robot):
    from kinematics_py.planning.controller_points import needed_points, sparse_plan

    setup, processes = robot
    checker = _checker(setup, WALL)
    result = processes.run(_job(setup, [JointGoal(RIGHT)]), setup, checker)
    sparse = processes.run(_job(setup, [JointGoal(RIGHT)], controller_points=True), setup, checker)
    assert sparse.success and sparse.controller_points_only and not result.controller_points_only
    assert len(sparse.positions) < len(result.positions) // 10
    kept = needed_points(result.positions, result.timing)
    reduced = sparse_plan(result)
    np.testing.assert_array_equal(reduced.positions, result.positions[kept])
    np.testing.assert_array_equal(reduced.timing.time_from_start, result.timing.time_from_start[kept])
    assert sparse_plan(reduced) is reduced  # never reduced twice
    assert np.allclose(sparse.positions[0], LEFT) and np.allclose(sparse.positions[-1], RIGHT, atol=1e-6)


def test_the_process_follows_the_scene_as_it_changes(robot):
    setup, processes = robot
    checker = _checker(setup)
    assert len(processes.run(_job(setup, [JointGoal(RIGHT)]), setup, checker).waypoints) == 2  # straight
    checker.scene.add_object(WALL[0], [Box(WALL[1])], pose=make_transform(None, WALL[2]))
    result = processes.run(_job(setup, [JointGoal(RIGHT)]), setup, checker)
    _assert_collision_free(setup, checker, result, RIGHT)
    assert len(result.waypoints) > 2
    checker.scene.add_object("block", [Box((0.3, 0.3, 0.3))], pose=make_transform(None, _tip_position(setup, RIGHT)))
    blocked = processes.run(_job(setup, [JointGoal(RIGHT)]), setup, checker)
    assert (blocked.error_code, blocked.failure) == (ErrorCode.GOAL_IN_COLLISION, "blocked_goals"), blocked.message


def test_goal_and_path_constraints_are_checked_in_the_process(robot):
    setup, processes = robot
    checker = _checker(setup)
    names = setup.groups[GROUP].getJointNames()
    tip = setup.groups[GROUP].getTipFrames()[0]
    base = setup.model.resolve_joint_values({})
    pose = setup.model.link_poses({**base, **dict(zip(names, RIGHT))})[tip]
    # the check travels to the process and filters the pose's IK solutions there: joint 1 on RIGHT's side
    right_side = JointBound(names[0], -3.0, 0.0, False, -1.2)
    result = processes.run(_job(setup, [PoseGoal(pose, check=StateCheck(
        names, base, RequestConstraints(joint_bounds=(right_side,))))]), setup, checker)
    assert result.success, result.message
    assert -3.0 <= result.positions[-1][0] <= 0.0
    nowhere = JointBound(names[0], 5.0, 6.0, False, 5.5)
    refused = processes.run(_job(setup, [PoseGoal(pose, check=StateCheck(
        names, base, RequestConstraints(joint_bounds=(nowhere,))))]), setup, checker)
    assert not refused.success and "panda_joint1" in refused.message, refused.message
    # a path constraint joint 1 keeps: the first joint may not pass 0, so RIGHT cannot be reached
    positive = JointBound(names[0], 0.0, 3.0, False, 1.0)
    refused = processes.run(_job(setup, [JointGoal(RIGHT)], path_check=StateCheck(
        names, base, RequestConstraints(joint_bounds=(positive,)))), setup, checker)
    assert not refused.success and refused.failure == "blocked_goals", refused.message


def _tip_position(setup, q):
    names = setup.groups[GROUP].getJointNames()
    tip = setup.groups[GROUP].getTipFrames()[0]
    return setup.model.link_poses({**setup.model.resolve_joint_values({}), **dict(zip(names, q))})[tip][:3, 3]


def _endless_job(setup) -> PlanJob:
    """A plan that searches until its deadline: the tip must stay in one of two small disjoint spheres, one
    around the start's tip, one around the goal's."""
    names = setup.groups[GROUP].getJointNames()
    tip = setup.groups[GROUP].getTipFrames()[0]
    spheres = tuple((SPHERE, (0.05,), make_transform(None, _tip_position(setup, q))) for q in (LEFT, RIGHT))
    region = PositionRegion(tip, np.zeros(3), setup.model.root_link, np.eye(4), spheres)
    check = StateCheck(names, setup.model.resolve_joint_values({}), RequestConstraints(position_regions=(region,)))
    return _job(setup, [JointGoal(RIGHT)], deadline=time.monotonic() + LONG, path_check=check)


def test_should_stop_ends_the_plan_in_the_process(robot):
    setup, processes = robot
    began = time.monotonic()
    result = processes.run(_endless_job(setup), setup, _checker(setup), lambda: time.monotonic() > began + 0.3)
    assert (result.error_code, result.failure) == (ErrorCode.PREEMPTED, "stopped"), result.message


def test_a_job_waits_for_a_busy_process_until_its_deadline(robot):
    setup, processes = robot
    stop = threading.Event()
    first = _Background(lambda: processes.run(_endless_job(setup), setup, _checker(setup), stop.is_set))
    first.started_in(processes)
    with pytest.raises(PlanningProcessError, match="busy") as raised:
        processes.run(_job(setup, [JointGoal(RIGHT)], deadline=time.monotonic() + 0.2), setup, _checker(setup))
    assert raised.value.busy
    stop.set()
    assert first.result().failure == "stopped"


def test_a_killed_process_fails_its_job_and_is_replaced(robot):
    setup, processes = robot
    job = _Background(lambda: processes.run(_endless_job(setup), setup, _checker(setup)))
    (pid,) = job.started_in(processes)
    os.kill(pid, signal.SIGKILL)
    with pytest.raises(PlanningProcessError, match="ended while planning"):
        job.result()
    assert pid not in processes.pids()
    _wait_until_built(processes, setup)  # the replacement builds the prepared set-up by itself
    checker = _checker(setup, WALL)
    _assert_collision_free(setup, checker, processes.run(_job(setup, [JointGoal(RIGHT)]), setup, checker), RIGHT)


def test_a_malformed_job_is_a_planning_error_and_the_process_serves_on(robot):
    setup, processes = robot
    with pytest.raises(PlanningError, match="goal 0: a joint goal needs"):  # found malformed in the process
        processes.run(_job(setup, [JointGoal(RIGHT[:3])]), setup, _checker(setup))
    with pytest.raises(PlanningError, match="panda_arm"):
        processes.run(PlanJob("arm", LEFT, [JointGoal(RIGHT)], {}, time.monotonic() + 5.0), setup, _checker(setup))
    assert processes.run(_job(setup, [JointGoal(RIGHT)]), setup, _checker(setup)).success


def test_closed_processes_refuse_jobs():
    processes = PlanningProcesses(1)
    processes.close()
    processes.start()
    assert processes.pids() == []
    with pytest.raises(PlanningProcessError, match="closed") as raised:
        processes.run(PlanJob(GROUP, LEFT, [JointGoal(RIGHT)], {}, time.monotonic() + 1.0), None, None)
    assert raised.value.closed
    with pytest.raises(PlanningError, match="at least 1"):
        PlanningProcesses(0)


class _Background:
    """A call on a thread of its own; ``result()`` returns or raises what it did."""

    def __init__(self, call):
        self._outcome: list = []
        self._thread = threading.Thread(target=self._run, args=(call,), daemon=True)
        self._thread.start()

    def _run(self, call):
        try:
            self._outcome.append((True, call()))
        except BaseException as error:  # handed to result()
            self._outcome.append((False, error))

    def started_in(self, processes: PlanningProcesses) -> list[int]:
        """The processes' pids once the call has taken one (it is busy)."""
        while not processes.busy_pids():
            time.sleep(0.01)
        return processes.busy_pids()

    def result(self):
        self._thread.join()
        ok, value = self._outcome[0]
        if not ok:
            raise value
        return value


def test_scene_content_is_the_same_only_as_the_same_objects(robot):
    """Equal fixed frames in a new settings object are new content (their arrays are not compared: numpy
    refuses their truth value)."""
    setup, _processes = robot
    scene = PlanningScene(setup.model)
    scene.change_settings(fixed_frames={"fixture": np.eye(4)})
    checker = setup.collision.checker.for_scene(scene)
    before = SceneContent.of(checker)
    assert before.same_as(SceneContent.of(checker))
    scene.change_settings(fixed_frames={"fixture": np.eye(4)})
    assert not before.same_as(SceneContent.of(checker))


def test_inputs_kept_are_the_most_recently_used():
    kept = InputsKept()
    inputs = [SetupInputs(urdf=f"<robot name='r{key}'/>") for key in range(INPUTS_KEPT + 1)]
    assert kept.use(0, None) is None
    for key in range(INPUTS_KEPT):
        assert kept.use(key, inputs[key]) is inputs[key]
    assert kept.use(0, None) is inputs[0]  # used: now the most recent
    assert kept.use(INPUTS_KEPT, inputs[INPUTS_KEPT]) is inputs[INPUTS_KEPT]  # one too many: key 1 goes
    assert kept.use(1, None) is None and not kept.keeps(1) and kept.keeps(0)
    assert all(kept.use(key, None) is inputs[key] for key in (0, *range(2, INPUTS_KEPT + 1)))


class _RecordingPipe:
    """A worker's end of its pipe, recording the messages sent through it."""

    def __init__(self, conn):
        self.conn, self.sent = conn, []

    def send(self, message):
        self.sent.append(message)
        self.conn.send(message)

    def __getattr__(self, name):
        return getattr(self.conn, name)


def test_a_job_sends_the_robots_inputs_only_to_a_process_that_does_not_keep_them(robot):
    """Jobs on one set-up carry its inputs (a URDF, an SRDF) once; a process that was sent INPUTS_KEPT other
    set-ups' since is sent them again, and builds it again from them."""
    setup, _ = robot
    processes = PlanningProcesses(1)
    try:
        processes.start()
        (worker,) = processes._workers
        pipe = worker.conn = _RecordingPipe(worker.conn)
        checker = _checker(setup, WALL)
        carried = []
        # set-ups of the same robot (each a key of its own): the fixture's, a second one, the fixture's again,
        # INPUTS_KEPT - 1 others (the process keeps the fixture's and those: not the second one's), the second
        first, second, *others = [setup] + [dataclasses.replace(setup) for _ in range(INPUTS_KEPT)]
        for used in [first, second, first, *others, second]:
            for _ in range(2):
                result = processes.run(_job(used, [JointGoal(RIGHT)]), used, checker)
                assert result.success, result.message
                carried.append(pipe.sent[-1][3])
        assert [inputs is not None for inputs in carried] == \
            [True, False] * 2 + [False, False] + [True, False] * INPUTS_KEPT
        assert all(inputs is None or inputs is setup.inputs for inputs in carried)
        assert [message[0] for message in pipe.sent] == ["plan"] * len(carried)
    finally:
        processes.close()
