"""Errors of kinematics_py: one exception tree and MoveIt's error codes.

Every exception the package raises derives from ``KinematicsError``. Programmer errors (a bad
description, an unknown name, a wrong joint vector) raise a subclass whose message names the valid
choices. Request failures on the IK/FK APIs are answered with an ``ErrorCode`` (MoveIt's values) and a
message; ``RequestError`` carries such a code where a request is refused part-way through.
"""
from __future__ import annotations

from collections.abc import Iterable
from enum import IntEnum
from typing import NamedTuple


class ErrorCode(IntEnum):
    """Exactly the values of moveit_msgs/msg/MoveItErrorCodes."""

    UNDEFINED = 0
    SUCCESS = 1
    FAILURE = 99999
    PLANNING_FAILED = -1
    INVALID_MOTION_PLAN = -2
    MOTION_PLAN_INVALIDATED_BY_ENVIRONMENT_CHANGE = -3
    CONTROL_FAILED = -4
    UNABLE_TO_AQUIRE_SENSOR_DATA = -5
    TIMED_OUT = -6
    PREEMPTED = -7
    START_STATE_IN_COLLISION = -10
    START_STATE_VIOLATES_PATH_CONSTRAINTS = -11
    START_STATE_INVALID = -26
    GOAL_IN_COLLISION = -12
    GOAL_VIOLATES_PATH_CONSTRAINTS = -13
    GOAL_CONSTRAINTS_VIOLATED = -14
    GOAL_STATE_INVALID = -27
    UNRECOGNIZED_GOAL_TYPE = -28
    INVALID_GROUP_NAME = -15
    INVALID_GOAL_CONSTRAINTS = -16
    INVALID_ROBOT_STATE = -17
    INVALID_LINK_NAME = -18
    INVALID_OBJECT_NAME = -19
    FRAME_TRANSFORM_FAILURE = -21
    COLLISION_CHECKING_UNAVAILABLE = -22
    ROBOT_STATE_STALE = -23
    SENSOR_INFO_STALE = -24
    COMMUNICATION_FAILURE = -25
    CRASH = -29
    ABORT = -30
    NO_IK_SOLUTION = -31



def error_code_name(code: int) -> str:
    """The ErrorCode name of a MoveItErrorCodes value, or the number itself for one MoveIt does not define."""
    return ErrorCode(code).name if code in ErrorCode._value2member_map_ else str(code)


class KinematicsResultCode(IntEnum):
    """kinematics::KinematicErrors (the KinematicsResult codes)."""

    OK = 1
    UNSUPORTED_DISCRETIZATION_REQUESTED = 2
    DISCRETIZATION_NOT_INITIALIZED = 3
    MULTIPLE_TIPS_NOT_SUPPORTED = 4
    EMPTY_TIP_POSES = 5
    IK_SEED_OUTSIDE_LIMITS = 6
    SOLVER_NOT_ACTIVE = 7
    NO_SOLUTION = 8



class KinematicsError(Exception):
    """Root of every exception raised by kinematics_py."""


class UrdfError(KinematicsError):
    """The robot description (URDF/xacro) is missing, malformed or inconsistent."""


class SrdfError(KinematicsError):
    """The semantic description (SRDF) is malformed or refers to unknown names."""


def _listing(valid_names: Iterable[str], limit: int = 40) -> str:
    names = sorted(valid_names)
    shown = ", ".join(repr(n) for n in names[:limit])
    more = f", ... ({len(names) - limit} more)" if len(names) > limit else ""
    return f"[{shown}{more}]"


class UnknownNameError(KinematicsError, KeyError):
    """A name that the model does not know; the message lists the valid ones."""

    kind = "name"

    def __init__(self, name: str, valid_names: Iterable[str], context: str = ""):
        self.name = name
        self.valid_names = tuple(sorted(valid_names))
        where = f" in {context}" if context else ""
        super().__init__(f"unknown {self.kind} {name!r}{where}; valid {self.kind}s are {_listing(self.valid_names)}")

    def __str__(self) -> str:  # KeyError would quote the message
        return self.args[0]


class UnknownLinkError(UnknownNameError):
    kind = "link"


class UnknownJointError(UnknownNameError):
    kind = "joint"


class UnknownGroupError(UnknownNameError):
    kind = "group"


class ChainError(KinematicsError):
    """The requested base/tip pair does not form a usable serial chain."""


class JointValueError(KinematicsError, ValueError):
    """Joint values of the wrong shape, or not finite."""


class PoseError(KinematicsError, ValueError):
    """A pose that cannot be used: not finite, or a quaternion without orientation."""


class Verdict(NamedTuple):
    """A validity check's answer with its reason, e.g. (GOAL_IN_COLLISION, "panda_link7 touches table")."""

    error_code: ErrorCode
    reason: str = ""

    def described(self) -> str:
        """The code's name and the reason, as the answers' messages quote a verdict: "GOAL_IN_COLLISION: ..."."""
        return f"{self.error_code.name}: {self.reason}" if self.reason else self.error_code.name


class RequestError(KinematicsError):
    """A request that cannot be answered as asked; ``code`` is the MoveItErrorCodes value to answer with."""

    def __init__(self, code: ErrorCode, message: str):
        super().__init__(message)
        self.code = code
