"""Changing the robot the node serves, without holding anything else behind the build.

A change of the set-up's inputs (a parameter set, a description on its topic) is decided at once: a parameter
set is validated synchronously by ``prepare_robot_setup`` (model, SRDF, limits, the groups' plugins: linear in
the description, so a cyclic URDF or a NaN limit is refused in milliseconds) and refused with the reason when
unusable. The slow part, ``complete_robot_setup`` (mesh files, bounding-volume trees, compiled kernels loaded),
runs on one background thread while the previous robot keeps serving; the finished set-up is installed by one
swap of the node's ``StateStore``. Whoever asked waits for that a bounded time (the ``robot_setup_wait``
parameter: a parameter set returns with the new robot serving unless its build takes longer); at start-up,
until it is served.

Builds run one at a time, each on the inputs current when it starts; a build whose inputs are no longer the
current ones when it finishes is dropped (the change that replaced them has its own build queued).
"""
from __future__ import annotations

import queue
import threading
import traceback
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..robot_setup import LogLine, RobotSetup, SetupError, SetupInputs, complete_robot_setup, prepare_robot_setup
from .node_parameters import split_kinematics_parameter
from .serving_state import StateStore, carried_over


class SetupUpdates:
    """Validates, builds and installs robot set-ups for a node.

    ``inputs(changes)`` gives the set-up inputs of the current parameters and topics with ``changes`` (parameter
    name -> value, not yet set) applied; ``on_installing(setup)`` runs just before a set-up is installed, under the
    store's lock (what a request reads with it must be ready then: the simulated joints' initial positions);
    ``on_served(setup)`` runs after (the node declares the new groups' parameters)."""

    def __init__(self, store: StateStore, inputs: Callable[[Mapping[str, Any] | None], SetupInputs], logger,
                 on_served: Callable[[RobotSetup], None], on_installing: Callable[[RobotSetup], None]):
        self._store, self._inputs, self._logger, self._on_served = store, inputs, logger, on_served
        self._on_installing = on_installing
        self._lock = threading.Lock()
        #: The set-up the last accepted parameter change gives, prepared while validating it.
        self._validated: RobotSetup | None = None
        #: (reason, set when done) of every build asked for, in order; a daemon thread works through them (it
        #: never holds up the process's exit).
        self._queue: queue.SimpleQueue = queue.SimpleQueue()
        self._worker = threading.Thread(target=self._work, name="robot_setup", daemon=True)
        self._worker.start()

    def refusal(self, changes: Mapping[str, Any]) -> str:
        """Why the parameter ``changes`` give no usable set-up ("" if they do): prepared now, the rest built once
        the change is set."""
        inputs = self._inputs(changes)
        try:
            setup = prepare_robot_setup(inputs, self._reusable(inputs))
        except SetupError as error:
            return str(error)
        for name in changes:
            split = split_kinematics_parameter(name)
            if split and split[0] in setup.unavailable:
                return setup.unavailable[split[0]]
        with self._lock:
            self._validated = setup
        return ""

    def serve(self, reason: str, wait: float | None) -> None:
        """Build and install the set-up of the current inputs (unless served already), waiting for it at most
        ``wait`` seconds (None: until it is served). Asked from the build thread itself (declaring a new
        group's parameters sets them), it only queues the build."""
        done = threading.Event()
        self._queue.put((reason, done))
        if threading.current_thread() is not self._worker and not done.wait(wait):
            self._logger.info(f"{reason}: the new robot set-up is still being built (collision geometry); the "
                              f"previous one serves until it is ready")

    def _work(self) -> None:
        while True:
            reason, done = self._queue.get()
            self._build_and_install(reason)
            done.set()

    def _reusable(self, inputs: SetupInputs) -> RobotSetup | None:
        """A set-up whose model (and collision world) ``inputs`` can reuse: the one validated last or the one
        served, whichever was built from the same URDF."""
        with self._lock:
            validated = self._validated
        served = self._store.current.setup
        for candidate in (validated, served):
            if candidate is not None and candidate.inputs.urdf == inputs.urdf:
                return candidate
        return served

    def _build_and_install(self, reason: str) -> None:
        try:
            self._build_and_install_unguarded(reason)
        except Exception as error:  # never a dead build thread
            self._logger.error(f"{reason}: internal error building the robot set-up: {error!r}\n"
                               f"{traceback.format_exc()}")

    def _build_and_install_unguarded(self, reason: str) -> None:
        inputs = self._inputs(None)
        current = self._store.current.setup
        if current is not None and current.inputs == inputs:
            return
        with self._lock:
            validated, self._validated = self._validated, None
        try:
            prepared = validated if validated is not None and validated.inputs == inputs else \
                prepare_robot_setup(inputs, self._reusable(inputs))
        except SetupError as error:
            problem = str(error)
            self._store.change(lambda state: state.with_problem(problem))
            self._logger.error(f"{reason}: {problem}" + ("; keeping the previous robot" if current else ""))
            return
        setup = complete_robot_setup(prepared, current)
        with self._store.lock:
            if self._inputs(None) != setup.inputs:  # changed meanwhile: the build of the change is queued
                return
            _print(self._logger, setup.log)
            before = self._store.current
            self._on_installing(setup)
            note = carried_over(before, self._store.change(lambda state: state.with_setup(setup)))
        if note:
            self._logger.info(note)
        self._on_served(setup)
        served = sorted(setup.groups)
        self._logger.info(f"{reason}: serving group(s) {served}" if served else f"{reason}: NO group can be served")


def _print(logger, lines: Sequence[LogLine]) -> None:
    """Log each line at its level (rclpy wants one level per call site)."""
    for line in lines:
        if line.level == "error":
            logger.error(line.text)
        elif line.level == "warning":
            logger.warning(line.text)
        else:
            logger.info(line.text)
