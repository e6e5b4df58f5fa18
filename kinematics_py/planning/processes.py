"""Motion plans in processes of their own (ROS-free), so that a server that plans keeps its other answers fast.

OMPL's bindings hold the GIL while they search: a plan on one of a server's threads makes every other thread of
that process wait for it. ``PlanningProcesses`` runs ``motion.plan`` in worker processes (multiprocessing's
spawn start method). Each worker builds the robot set-up from the same ``SetupInputs`` the server built its own
from, once per robot (``prepare``, at robot set-up, for the processes ``start`` started), loads the kernels of a
plan on it then (``kernel_warm_up``: not in its first job), and keeps the
scene of its last job: a job sends the scene's immutable objects and settings (``SceneContent``) only when they
changed since that worker's last job. A job (``PlanJob``) holds what ``plan`` takes: its ``PlanOptions``, its
goals (a pose goal with its ``check``) and its path check, ``StateCheck`` values that the worker's ``plan`` binds to
its own robot model and checker. It ends at its deadline (the
monotonic clock is the machine's: the worker's deadline is the caller's) or when the caller's ``should_stop``
says so. A worker that dies is replaced, and its job's caller gets PlanningProcessError.
"""
from __future__ import annotations

import contextlib
import copyreg
import itertools
import multiprocessing
import os
import threading
import time
import traceback
import weakref
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from types import MappingProxyType

from ..collision.checker import CollisionChecker
from ..collision.scene import AttachedObject, SceneObject, SceneSettings, scene_of
from ..errors import KinematicsError
from ..ik.budget import Budget
from ..robot_setup import RobotSetup, SetupInputs, build_robot_setup
from ..state_check import StateCheck
from .controller_points import sparse_plan
from .goals import Goal
from .kernel_warm_up import warm_up_setup
from .motion import MotionPlan, plan
from .options import PlanningError, PlanOptions


def read_only(items: dict) -> MappingProxyType:
    """The scene's mappings are read-only views: they travel as dicts and are views again on arrival."""
    return MappingProxyType(items)


copyreg.pickle(MappingProxyType, lambda proxy: (read_only, (dict(proxy),)))

#: How often [s] a caller waiting for a worker's answer checks its ``should_stop`` and the worker's life.
POLL_S = 0.01
#: Robot set-ups a worker keeps (the current one and the one before it, for answers under way during a swap).
SETUPS_KEPT = 2
#: Errors of a job as given (a malformed goal, an unknown planner): PlanningError here as in ``plan``'s caller.
REQUEST_ERRORS = ("PlanningError", "PlannerError", "GoalError")
#: How much less CPU priority a planning process has than its server (Linux nice levels): a server's short
#: answers take a CPU before the plan's search does, on a machine with fewer CPUs than work.
NICENESS = 5
#: How long [s] ``close`` waits for a worker to end before it is killed.
CLOSE_WAIT_S = 1.0
#: Robot set-up inputs a planning process keeps, the most recently used (``InputsKept``).
INPUTS_KEPT = 4


class PlanningProcessError(KinematicsError):
    """A plan that could not be computed in a planning process: the processes are closed, busy until the
    deadline (``busy``), or the worker ended while planning."""

    def __init__(self, message: str, *, busy: bool = False, closed: bool = False):
        super().__init__(message)
        self.busy, self.closed = busy, closed


@dataclass(frozen=True, eq=False)
class SceneContent:
    """What a planning process needs of a planning scene: its world and attached objects and its settings (all
    immutable: the same content is the same objects)."""

    world: Mapping[str, SceneObject]
    attached: Mapping[str, AttachedObject]
    settings: SceneSettings

    @classmethod
    def of(cls, checker: CollisionChecker) -> SceneContent:
        scene = checker.scene
        return cls(scene.world_objects, scene.attached_objects, scene.settings)

    def same_as(self, other: SceneContent | None) -> bool:
        """Whether ``other`` is this content: the same objects (a scene replaces them on every change; comparing
        their values would compare the fixed frames' arrays, whose truth value numpy refuses)."""
        return other is not None and self.world is other.world and self.attached is other.attached and \
            self.settings is other.settings


class InputsKept:
    """Set-up inputs by key, the INPUTS_KEPT most recently used. A planning process keeps those it was sent in one;
    the server keeps the same record of each process's, updated by the same messages in the same order (the pipe
    keeps their order), so that it sends a set-up's inputs only to a process that does not keep them."""

    def __init__(self) -> None:
        self._kept: OrderedDict[int, SetupInputs] = OrderedDict()

    def keeps(self, key: int) -> bool:
        return key in self._kept

    def use(self, key: int, inputs: SetupInputs | None) -> SetupInputs | None:
        """The inputs of ``key``: ``inputs`` when given (kept from now), else the ones kept (None: none are)."""
        if inputs is not None:
            self._kept[key] = inputs
        inputs = self._kept.get(key)
        if inputs is not None:
            self._kept.move_to_end(key)
            while len(self._kept) > INPUTS_KEPT:
                self._kept.popitem(last=False)
        return inputs


@dataclass(frozen=True)
class PlanJob:
    """One call of ``motion.plan`` for ``group``, picklable: its ``planning_time`` is what is left until
    ``deadline`` (a ``time.monotonic()``) when the plan begins; ``path_check`` holds along the path;
    ``controller_points``: the plan answers with the points a controller needs alone
    (``controller_points.sparse_plan``: less to send back)."""

    group: str
    start: Sequence[float]
    goals: Sequence[Goal]
    base_state: Mapping[str, object]
    deadline: float
    path_check: StateCheck | None = None
    options: PlanOptions = field(default_factory=PlanOptions)
    controller_points: bool = False


def run_job(job: PlanJob, setup: RobotSetup, checker: CollisionChecker, should_stop: Callable[[], bool]) -> MotionPlan:
    """``job`` planned here, on ``setup``'s plugin of its group and ``checker``."""
    if job.group not in setup.groups:
        raise PlanningError(f"group {job.group!r} is not served; served groups are {sorted(setup.groups)}")
    options = replace(job.options, planning_time=max(job.deadline - time.monotonic(), 1e-3))
    result = plan(setup.groups[job.group], checker, job.start, job.goals, options, base_state=job.base_state,
                  path_check=job.path_check, budget=Budget(should_stop, job.deadline))
    return sparse_plan(result) if job.controller_points else result


class PlanningProcesses:
    """Up to ``count`` planning processes; ``run`` plans a job in an idle one (waiting for one until the job's
    deadline). Thread-safe."""

    def __init__(self, count: int):
        if count < 1:
            raise PlanningError(f"count must be at least 1; got {count}")
        self._context = multiprocessing.get_context("spawn")
        self._count = count
        self._lock = threading.Condition()
        self._workers: list[_Worker] = []
        self._idle: list[_Worker] = []
        self._closed = False
        self._keys: weakref.WeakKeyDictionary[RobotSetup, int] = weakref.WeakKeyDictionary()
        self._next_key = itertools.count(1)
        self._next_job = itertools.count(1)
        #: (key, inputs) of the set-up last prepared, for processes started after it.
        self._latest: tuple[int, SetupInputs] | None = None

    def prepare(self, setup: RobotSetup) -> None:
        """``setup`` is the one to plan on from now: the running processes build it now (a busy one with its next
        job), and processes started later at once."""
        key = self._key(setup)
        with self._lock:
            self._latest = (key, setup.inputs)
            idle = list(self._idle)
        for worker in idle:
            worker.send_quietly(key, setup.inputs)

    def start(self) -> None:
        """Start the processes that are not running (they build the prepared set-up first). Returns at once."""
        with self._lock:
            while not self._closed and len(self._workers) < self._count:
                self._start_worker()

    def has_built(self, setup: RobotSetup) -> bool:
        """Whether a process has ``setup`` built, so that a job on it waits for no build (only, perhaps, for the
        process to finish another job)."""
        key = self._key(setup)
        with self._lock:
            return any(key in (worker.built() if worker in self._idle else worker.known_built)
                       for worker in self._workers)

    def run(self, job: PlanJob, setup: RobotSetup, checker: CollisionChecker,
            should_stop: Callable[[], bool] = lambda: False) -> MotionPlan:
        """``job`` planned in a process, on ``setup`` (built there from its inputs) and ``checker``'s scene (the
        checker's own configuration is the set-up's). PlanningProcessError when it cannot be."""
        worker = self._acquire(job.deadline, should_stop)
        job_id = next(self._next_job)
        try:
            key, content = self._key(setup), SceneContent.of(checker)
            known = worker.scene is not None and worker.scene[0] == key and content.same_as(worker.scene[1])
            worker.scene = None  # unknown until the process has it
            worker.send_job(job_id, key, setup.inputs, None if known else content, job)
            worker.scene = (key, content)
            reply = worker.answer(job_id, should_stop)
        except (EOFError, OSError) as error:
            self._replace(worker)
            if self._closed:
                raise PlanningProcessError("the planning processes were closed while planning", closed=True) from None
            raise PlanningProcessError(f"the planning process ended while planning ({worker.describe_end()}; "
                                       f"{error!r}); it is restarted") from None
        except BaseException:
            self._replace(worker)  # e.g. a job that does not pickle: the worker may hold half a message
            raise
        self._release(worker)
        kind, *rest = reply
        if kind == "done":
            return rest[0]
        name, message = rest
        if name in REQUEST_ERRORS:
            raise PlanningError(message)
        raise PlanningProcessError(f"planning failed in the planning process: {name}: {message}")

    def pids(self) -> list[int]:
        """The running processes' ids."""
        with self._lock:
            return [worker.process.pid for worker in self._workers]

    def busy_pids(self) -> list[int]:
        """The ids of the processes planning a job now."""
        with self._lock:
            return [worker.process.pid for worker in self._workers if worker not in self._idle]

    def close(self) -> None:
        """End every process; jobs waiting for one get PlanningProcessError."""
        with self._lock:
            self._closed = True
            workers, self._workers, self._idle = self._workers, [], []
            self._lock.notify_all()
        for worker in workers:
            worker.hang_up()
        for worker in workers:
            worker.end()

    def _key(self, setup: RobotSetup) -> int:
        with self._lock:
            key = self._keys.get(setup)
            if key is None:
                key = self._keys[setup] = next(self._next_key)
            return key

    def _acquire(self, deadline: float, should_stop: Callable[[], bool]) -> _Worker:
        with self._lock:
            while True:
                if self._closed:
                    raise PlanningProcessError("the planning processes are closed", closed=True)
                if self._idle:
                    return self._idle.pop()
                if not self._workers:
                    raise PlanningProcessError("no planning process is running (start starts them)")
                left = deadline - time.monotonic()
                if left <= 0 or should_stop():
                    raise PlanningProcessError(f"all {self._count} planning processes were busy until the "
                                               f"request's deadline", busy=True)
                self._lock.wait(min(left, POLL_S * 10))

    def _release(self, worker: _Worker) -> None:
        with self._lock:
            if worker in self._workers:
                self._idle.append(worker)
                self._lock.notify()

    def _replace(self, worker: _Worker) -> None:
        worker.end()
        with self._lock:
            if worker in self._workers:
                self._workers.remove(worker)
                if not self._closed:
                    self._start_worker()
                self._lock.notify()

    def _start_worker(self) -> None:
        """Start one more process (lock held), building the latest set-up at once."""
        worker = _Worker(self._context)
        self._workers.append(worker)
        self._idle.append(worker)
        if self._latest is not None:
            worker.send_quietly(*self._latest)


class _Worker:
    """One planning process and the node's end of its pipe (used by one thread at a time: the one holding it)."""

    def __init__(self, context):
        self.conn, child_end = context.Pipe()
        self.cancelled = context.RawValue("q", 0)
        self.process = context.Process(target=_process_main, args=(child_end, self.cancelled),
                                       name="kinematics_planning", daemon=True)
        self.process.start()
        child_end.close()
        #: (set-up key, content) of the scene the process has.
        self.scene: tuple[int, SceneContent] | None = None
        #: Set-up keys the process said it has built (as last read).
        self.known_built: set[int] = set()
        #: The record of the inputs the process keeps (the process's own, as it will be once it has read the pipe).
        self.inputs = InputsKept()
        self._send_lock = threading.Lock()

    def send_job(self, job_id: int, key: int, inputs: SetupInputs, content: SceneContent | None, job: PlanJob) -> None:
        """Send a job on set-up ``key`` (its ``inputs`` only if the process does not keep them)."""
        with self._send_lock:
            carried = None if self.inputs.keeps(key) else inputs
            self.inputs.use(key, carried)  # as the process will on reading the job
            self.conn.send(("plan", job_id, key, carried, content, job))

    def send_quietly(self, key: int, inputs: SetupInputs) -> None:
        """Have the process build set-up ``key``, or leave it to the next job if the process is gone (``run``
        replaces it then)."""
        with contextlib.suppress(OSError, EOFError), self._send_lock:
            self.inputs.use(key, inputs)
            self.conn.send(("setup", key, inputs))

    def built(self) -> set[int]:
        """The set-up keys the process said it has built (reading what it said since)."""
        while self.conn.poll(0):
            kind, key = self.conn.recv()
            if kind == "built":
                self.known_built.add(key)
        return self.known_built

    def answer(self, job_id: int, should_stop: Callable[[], bool]) -> tuple:
        """The process's reply to job ``job_id``; asks it to stop early once ``should_stop()``."""
        while True:
            while not self.conn.poll(POLL_S):
                if should_stop():
                    self.cancelled.value = job_id
                if not self.process.is_alive() and not self.conn.poll(0):
                    raise EOFError("the planning process is gone")
            reply = self.conn.recv()
            if reply[0] == "built":
                self.known_built.add(reply[1])
            elif reply[1] == job_id:
                return reply[0], *reply[2:]

    def describe_end(self) -> str:
        code = self.process.exitcode
        return "still running" if code is None else f"exit code {code}"

    def hang_up(self) -> None:
        """Close the pipe: an idle process ends at once, a busy one once its job is done."""
        with contextlib.suppress(OSError):
            self.conn.close()

    def end(self) -> None:
        self.hang_up()
        self.process.join(CLOSE_WAIT_S)
        if self.process.is_alive():
            self.process.kill()
            self.process.join(CLOSE_WAIT_S)


def _process_main(conn, cancelled) -> None:
    os.nice(NICENESS)
    serve(conn, cancelled)
    os._exit(0)  # nothing to save: skip the teardown of the compiled code and collision structures (seconds)


def serve(conn, cancelled) -> None:
    """A planning process's loop: build the set-ups it is sent, plan the jobs, until its pipe closes."""
    setups: OrderedDict[int, RobotSetup] = OrderedDict()
    scene: tuple[int, SceneContent, CollisionChecker] | None = None
    kept = InputsKept()

    def setup_of(key: int, carried: SetupInputs | None) -> RobotSetup:
        inputs = kept.use(key, carried)  # kept as the server's record of this process says, whether built or not
        if key not in setups:
            if inputs is None:
                raise PlanningError(f"the planning process has no inputs for robot set-up {key}")
            setups[key] = build_robot_setup(inputs)
            warm_up_setup(setups[key])  # the plan kernels loaded now, not in the first job
            while len(setups) > SETUPS_KEPT:
                setups.popitem(last=False)
        setups.move_to_end(key)
        return setups[key]

    while True:
        try:
            message = conn.recv()
        except (EOFError, OSError):
            return
        if message[0] == "setup":
            _, key, inputs = message
            try:
                setup_of(key, inputs)
                conn.send(("built", key))
            except (KinematicsError, OSError):
                pass  # the node refused these inputs as well; a job on them reports the error
            continue
        _, job_id, key, inputs, content, job = message
        try:
            setup = setup_of(key, inputs)
            if content is not None or scene is None or scene[0] != key:
                if content is None:
                    raise PlanningError("the planning process has no scene for this robot")
                scene = (key, content, scene_checker(setup, content))
            reply = ("done", job_id, run_job(job, setup, scene[2], lambda job_id=job_id: cancelled.value == job_id))
        except KinematicsError as error:
            reply = ("error", job_id, type(error).__name__, str(error))
        except Exception as error:  # never a silent worker: the caller gets the traceback
            reply = ("error", job_id, type(error).__name__, f"{error}\n{traceback.format_exc()}")
        try:
            conn.send(reply)
        except (EOFError, OSError):
            return


def scene_checker(setup: RobotSetup, content: SceneContent) -> CollisionChecker:
    """``setup``'s collision checker over ``content`` (PlanningError when the robot has no collision geometry)."""
    robot_checker = setup.collision.checker if setup.collision is not None else None
    if robot_checker is None:
        raise PlanningError(f"robot {setup.model.name!r} has no collision geometry: "
                            f"{setup.collision.problem if setup.collision else 'not built'}")
    return robot_checker.for_scene(scene_of(setup.model, content.world, content.attached, content.settings))
