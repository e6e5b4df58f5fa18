"""KinematicsPlugin under concurrent set-up changes: every answer belongs to exactly one set-up.

One plugin instance is shared. Writer threads switch it between three set-ups (the bundled UR5; the
bundled Panda to panda_link8; the Panda to panda_hand_tcp, same joints, another tip) with ``initialize``,
and change its redundant joints, default timeout and search discretization, while READERS threads ask
for IK and FK with queries made for one of the set-ups. Each answer is checked against independent,
single-threaded plugins of every set-up:

- a successful IK answer reaches its target (FK within the verification tolerances) for exactly one
  set-up (a Panda query may be answered by either Panda set-up); a refused one refuses with a request
  error, never an exception;
- a successful FK answer equals that set-up's FK; ``getJointNames`` is one set-up's list;
- after the robot writer's ``initialize`` returns, the plugin serves that robot until the writer's next
  call (no other call may bring back an older set-up);
- the default timeout and the discretization read back are values some writer set.
"""
from __future__ import annotations

import sys
import threading
import time
from dataclasses import dataclass

import numpy as np
import pytest
from robots import bundled_robot

from kinematics_py import ErrorCode, KinematicsPlugin, KinematicsQueryOptions, Pose

READERS = 8
INITIALIZE_ROUNDS = 60
QUERIES_PER_SETUP = 40
#: Search time of one reader query [s]; failures to solve in time are allowed, wrong answers are not.
QUERY_TIMEOUT = 0.02
POSITION_TOLERANCE = 1e-4  # [m]
ROTATION_TOLERANCE = 1e-3  # [rad]
FK_TOLERANCE = 1e-9  # [m or unitless]
TIMEOUTS = (0.5, 0.25, 0.125)
DISCRETIZATIONS = (0.1, 0.2, 0.05)
#: Python switches threads this often [s] during the test (default 5 ms): races show up in short windows.
SWITCH_INTERVAL = 1e-5
#: Request errors a query for another set-up may meet (wrong joint count, unknown tip).
REFUSALS = {ErrorCode.INVALID_ROBOT_STATE, ErrorCode.INVALID_LINK_NAME}


@dataclass(frozen=True)
class SetupCase:
    name: str
    robot: str
    group: str
    tip: str


SETUPS = (
    SetupCase("ur5", "ur5", "ur_manipulator", "tool0"),
    SetupCase("panda", "panda", "panda_arm", "panda_link8"),
    SetupCase("panda-tcp", "panda", "panda_arm", "panda_hand_tcp"),
)


def initialize(plugin: KinematicsPlugin, case: SetupCase) -> bool:
    urdf = bundled_robot(f"{case.robot}.urdf").read_text()
    srdf = bundled_robot(f"{case.robot}.srdf").read_text()
    return plugin.initialize(urdf, case.group, "", [case.tip], robot_description_semantic=srdf)


@dataclass
class Reference:
    """A set-up's own single-threaded plugin, its joints and queries (target pose, seed) made for it."""

    case: SetupCase
    plugin: KinematicsPlugin
    joint_names: list[str]
    queries: list[tuple[Pose, list[float]]]
    fk_queries: list[tuple[list[float], Pose]]

    def reaches(self, solution: list[float], target: Pose) -> bool:
        if len(solution) != len(self.joint_names):
            return False
        ok, (pose,) = self.plugin.getPositionFK([self.case.tip], solution)
        assert ok
        position_error = np.linalg.norm(np.subtract(pose.position, target.position))
        dot = abs(float(np.dot(pose.orientation, target.orientation)))
        rotation_error = 2 * np.arccos(min(1.0, dot))
        return position_error <= POSITION_TOLERANCE and rotation_error <= ROTATION_TOLERANCE


def make_reference(case: SetupCase, rng: np.random.Generator) -> Reference:
    plugin = KinematicsPlugin()
    assert initialize(plugin, case), plugin.last_error
    names = plugin.getJointNames()
    model = plugin.robot_model
    lower = np.maximum([model.joints[n].lower for n in names], -np.pi)
    upper = np.minimum([model.joints[n].upper for n in names], np.pi)
    queries, fk_queries = [], []
    for _ in range(QUERIES_PER_SETUP):
        answer = rng.uniform(lower, upper).tolist()
        ok, (target,) = plugin.getPositionFK([case.tip], answer)
        assert ok
        queries.append((target, rng.uniform(lower, upper).tolist()))
        fk_queries.append((answer, target))
    return Reference(case, plugin, names, queries, fk_queries)


@pytest.fixture
def frequent_thread_switches():
    previous = sys.getswitchinterval()
    sys.setswitchinterval(SWITCH_INTERVAL)
    yield
    sys.setswitchinterval(previous)


@pytest.fixture(scope="module")
def references() -> dict[str, Reference]:
    rng = np.random.default_rng(7)
    return {case.name: make_reference(case, rng) for case in SETUPS}


def check_ik(result, reference: Reference, target: Pose, references: dict[str, Reference]) -> str | None:
    """Why ``result`` (for a query made for ``reference``) is not the answer of exactly one set-up, or None."""
    if not result.success:
        if result.error_code in REFUSALS or result.error_code == ErrorCode.NO_IK_SOLUTION:
            return None
        return f"unexpected failure {result.error_code!r}: {result.message}"
    reached = [name for name, other in references.items() if other.reaches(result.solution, target)]
    if len(reached) != 1:
        return f"solution {result.solution} of a {reference.case.name} query reaches the target for {reached}"
    return None


def check_fk(answer, reference: Reference, q: list[float], expected: Pose) -> str | None:
    ok, poses = answer
    if not ok:
        return None  # another robot's link or joint count: refused
    (pose,) = poses
    if not (np.allclose(pose.position, expected.position, atol=FK_TOLERANCE)
            and np.allclose(pose.orientation, expected.orientation, atol=FK_TOLERANCE)):
        return f"FK of {reference.case.name} at {q}: {pose} != {expected}"
    return None


def test_every_answer_belongs_to_one_setup_while_the_setup_changes(references, frequent_thread_switches):
    plugin = KinematicsPlugin()
    assert initialize(plugin, SETUPS[0])
    known_names = [reference.joint_names for reference in references.values()]
    problems: list[str] = []
    done = threading.Event()
    start = threading.Barrier(READERS + 3)
    counts = {"ik": 0, "ik_solved": 0, "initialize": 0}
    count_lock = threading.Lock()

    def record(problem: str | None) -> None:
        if problem:
            problems.append(problem)

    def guarded(work):
        def run(*args):
            try:
                start.wait()
                work(*args)
            except Exception as error:  # noqa: BLE001 - every exception is a failure, reported below
                problems.append(f"{work.__name__}{args}: {error!r}")
                done.set()
        return run

    def robot_writer():
        try:
            switch_robots()
        finally:
            done.set()

    def switch_robots():
        for round_ in range(INITIALIZE_ROUNDS):
            case = SETUPS[round_ % len(SETUPS)]
            if not initialize(plugin, case):
                record(f"initialize({case.name}) failed: {plugin.last_error}")
                continue
            counts["initialize"] += 1
            # Only this thread changes the robot: until its next call the plugin must serve this set-up.
            for _ in range(3):
                names = plugin.getJointNames()
                if names != references[case.name].joint_names or plugin.getTipFrames() != [case.tip]:
                    record(f"after initialize({case.name}): joints {names}, tips {plugin.getTipFrames()}")
                time.sleep(0.002)

    def settings_writer():
        step = 0
        while not done.is_set():
            plugin.setDefaultTimeout(TIMEOUTS[step % len(TIMEOUTS)])
            plugin.setSearchDiscretization(DISCRETIZATIONS[step % len(DISCRETIZATIONS)])
            step += 1
            time.sleep(0.0005)

    def redundancy_writer():
        step = 0
        while not done.is_set():
            joints = [[0], [1, 2], ["elbow_joint"], ["panda_joint3"], []][step % 5]
            plugin.setRedundantJoints(joints)  # False when the joints are not the current set-up's
            step += 1

    def reader(index: int):
        rng = np.random.default_rng(index)
        lock_options = KinematicsQueryOptions(lock_redundant_joints=True)
        while not done.is_set():
            reference = references[SETUPS[int(rng.integers(len(SETUPS)))].name]
            k = int(rng.integers(QUERIES_PER_SETUP))
            target, seed = reference.queries[k]
            draw = rng.random()
            if draw < 0.1:
                (result,) = plugin.searchPositionIKBatch([target], [seed], max_starts=16)
            else:
                options = lock_options if draw < 0.3 else None
                result = plugin.searchPositionIK(target, seed, QUERY_TIMEOUT, options=options)
            record(check_ik(result, reference, target, references))
            q, expected = reference.fk_queries[k]
            record(check_fk(plugin.getPositionFK([reference.case.tip], q), reference, q, expected))
            names = plugin.getJointNames()
            if names not in known_names:
                record(f"getJointNames() = {names}")
            if plugin.getDefaultTimeout() not in (KinematicsPlugin.DEFAULT_TIMEOUT, *TIMEOUTS):
                record(f"getDefaultTimeout() = {plugin.getDefaultTimeout()}")
            if plugin.getSearchDiscretization() not in (KinematicsPlugin.DEFAULT_SEARCH_DISCRETIZATION,
                                                        *DISCRETIZATIONS):
                record(f"getSearchDiscretization() = {plugin.getSearchDiscretization()}")
            with count_lock:
                counts["ik"] += 1
                counts["ik_solved"] += result.success

    threads = [threading.Thread(target=guarded(robot_writer)), threading.Thread(target=guarded(settings_writer)),
               threading.Thread(target=guarded(redundancy_writer))]
    threads += [threading.Thread(target=guarded(reader), args=(index,)) for index in range(READERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not any(thread.is_alive() for thread in threads), "a thread hung"
    assert not problems, f"{len(problems)} inconsistent answer(s), first ones: {problems[:5]}"
    assert counts["initialize"] == INITIALIZE_ROUNDS
    # The readers really raced the writers: many queries, many of them solved.
    assert counts["ik"] >= 10 * READERS and counts["ik_solved"] >= 5 * READERS, counts
