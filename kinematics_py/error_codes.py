"""MoveIt's error codes (moveit_msgs/MoveItErrorCodes values) and KinematicsBase's enums, ROS-free."""
from __future__ import annotations

from enum import IntEnum


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


class DiscretizationMethod(IntEnum):
    """kinematics::DiscretizationMethods."""

    NO_DISCRETIZATION = 1
    ALL_DISCRETIZED = 2
    SOME_DISCRETIZED = 3
    ALL_RANDOM_SAMPLED = 4
    SOME_RANDOM_SAMPLED = 5


class KinematicError(IntEnum):
    """kinematics::KinematicErrors (the KinematicsResult codes)."""

    OK = 1
    UNSUPORTED_DISCRETIZATION_REQUESTED = 2
    DISCRETIZATION_NOT_INITIALIZED = 3
    MULTIPLE_TIPS_NOT_SUPPORTED = 4
    EMPTY_TIP_POSES = 5
    IK_SEED_OUTSIDE_LIMITS = 6
    SOLVER_NOT_ACTIVE = 7
    NO_SOLUTION = 8
