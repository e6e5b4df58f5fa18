"""The robot state a request is answered in: the joint positions last published on joint_states, overlaid by
the request's own robot_state."""
from __future__ import annotations

import math
import threading
import time
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any

import numpy as np

from ...errors import ErrorCode, KinematicsError, RequestError
from ...model.robot_model import RobotModel
from ...robot_setup import RobotSetup
from .conversions import joint_values_from_robot_state


class JointPositions:
    """The latest position of every joint named on joint_states (any robot's: a request takes its own robot's
    joints). Each message is merged in by one atomic swap; ``current`` is an immutable mapping."""

    def __init__(self):
        self._lock = threading.Lock()
        self._current: Mapping[str, float] = MappingProxyType({})
        #: joint -> ``time.monotonic()`` when it was last on joint_states
        self.heard: dict[str, float] = {}

    @property
    def current(self) -> Mapping[str, float]:
        return self._current

    def update(self, names: Sequence[str], positions: Sequence[float]) -> None:
        """Merge in a JointState's finite positions [rad or m]."""
        received = {name: float(p) for name, p in zip(names, positions) if math.isfinite(p)}
        with self._lock:
            self._current = MappingProxyType({**self._current, **received})
            self.heard.update(dict.fromkeys(received, time.monotonic()))


def joint_values(setup: RobotSetup, current: Mapping[str, float], robot_state=None) -> dict[str, Any]:
    """Every movable joint's value: defaults, then ``current`` (joint_states), then the request's robot_state;
    RequestError(INVALID_ROBOT_STATE) for a robot_state that does not fit the robot."""
    model = setup.model
    values = {name: current[name] for name in setup.joint_names if name in current}
    if robot_state is not None:
        values.update(joint_values_from_robot_state(robot_state, model))
    try:
        return model.resolve_joint_values(values)
    except KinematicsError as error:
        raise RequestError(ErrorCode.INVALID_ROBOT_STATE, str(error)) from None


class LinkPoses(Mapping):
    """``T_model_link`` of every link for one state, computed on first use."""

    def __init__(self, model: RobotModel, values: Mapping[str, Any]):
        self._model, self._values, self._poses = model, values, None

    def _all(self) -> dict[str, np.ndarray]:
        if self._poses is None:
            self._poses = self._model.link_poses(self._values)
        return self._poses

    def __getitem__(self, link: str) -> np.ndarray:
        return self._all()[link]

    def __iter__(self):
        return iter(self._all())

    def __len__(self) -> int:
        return len(self._all())
