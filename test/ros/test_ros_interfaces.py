"""The interface types in use are identical to upstream moveit_msgs 2.6 (ros2) and tf2_msgs.

RIHS01 type hashes cover field names, types and nesting; constants are checked separately.
"""
import json
from importlib import import_module
from pathlib import Path

import pytest
from moveit_msgs.msg import (
    CollisionObject,
    ContactInformation,
    MoveItErrorCodes,
    OrientationConstraint,
    VisibilityConstraint,
)

UPSTREAM_TYPE_HASHES = {
    "moveit_msgs/srv/GetPositionIK":
        "RIHS01_054ed6f6f71a09b01b5246c5d80beb4dacc6f444f58df039849c76292933e9e3",
    "moveit_msgs/srv/GetPositionFK":
        "RIHS01_2f16ec361a135d84b85a29385abeb9eeb025e39c09038bd6b2826645edc7edad",
    "moveit_msgs/srv/GetStateValidity":
        "RIHS01_e9fcd24ae0fd8c2f16d4afe397efaf03427d1f899fe91ecf6cb7f7f1c6ca8720",
    "moveit_msgs/msg/PositionIKRequest":
        "RIHS01_200709be614f71f4d11d0bdd672785db28d27f7a10b516d9b961706a0c7f6d7d",
    "moveit_msgs/msg/RobotState":
        "RIHS01_7c516dc15713e545cb2836c5ca745fbdcfcc10de4855a41c83e6b4bf1afc3f83",
    "moveit_msgs/msg/MoveItErrorCodes":
        "RIHS01_dcda8a9950cf6dd6ac221c2c0d2509f52f136afa0403dd19beacdf07e83e4a07",
    "moveit_msgs/msg/Constraints":
        "RIHS01_71718200459ae8fecdc4f2c9631215f7eba5ff686c701a32e231ba8b11b3592b",
    "moveit_msgs/msg/CollisionObject":
        "RIHS01_74b0acd6d56be032bf4f764b2c2633f50588b5fb2bd71e97206c59052747cf7e",
    "moveit_msgs/msg/AttachedCollisionObject":
        "RIHS01_7fdfe7951a33a857f20fc42c9ed410a38d06dd0c209ac774ecea746dc487dc41",
    "moveit_msgs/msg/ContactInformation":
        "RIHS01_47c926e539a1f54729ec4a9edc568a983678beefb908841d68fbb3cff3feeecb",
    "object_recognition_msgs/msg/ObjectType":
        "RIHS01_5eb3ee3976403366d7c50d7dbee8bec96b3bced1e752674a7194a35841632134",
    "tf2_msgs/msg/TFMessage":
        "RIHS01_e369d0f05a23ae52508854b66f6aa0437f3449d652e8cbf22d5abe85d020f087",
    "tf2_msgs/msg/TF2Error":
        "RIHS01_db2485e7d6a0ec75bf087e058ee45df682acc3a621ca7780503d10aac141809a",
    "tf2_msgs/srv/FrameGraph":
        "RIHS01_0d1fbc6222c018ba5f33822904a2fdd4063705289956d3fdde07cd8c50fe8067",
    "tf2_msgs/action/LookupTransform":
        "RIHS01_0b8adf6bc0b5958879e3265b41a457e03558fe523890a81252c70eba97a82c5d",
}

MOVEIT_ERROR_CODES = {
    "SUCCESS": 1, "UNDEFINED": 0, "FAILURE": 99999,
    "PLANNING_FAILED": -1, "INVALID_MOTION_PLAN": -2,
    "MOTION_PLAN_INVALIDATED_BY_ENVIRONMENT_CHANGE": -3, "CONTROL_FAILED": -4,
    "UNABLE_TO_AQUIRE_SENSOR_DATA": -5, "TIMED_OUT": -6, "PREEMPTED": -7,
    "START_STATE_IN_COLLISION": -10, "START_STATE_VIOLATES_PATH_CONSTRAINTS": -11,
    "START_STATE_INVALID": -26, "GOAL_IN_COLLISION": -12, "GOAL_VIOLATES_PATH_CONSTRAINTS": -13,
    "GOAL_CONSTRAINTS_VIOLATED": -14, "GOAL_STATE_INVALID": -27, "UNRECOGNIZED_GOAL_TYPE": -28,
    "INVALID_GROUP_NAME": -15, "INVALID_GOAL_CONSTRAINTS": -16, "INVALID_ROBOT_STATE": -17,
    "INVALID_LINK_NAME": -18, "INVALID_OBJECT_NAME": -19, "FRAME_TRANSFORM_FAILURE": -21,
    "COLLISION_CHECKING_UNAVAILABLE": -22, "ROBOT_STATE_STALE": -23, "SENSOR_INFO_STALE": -24,
    "COMMUNICATION_FAILURE": -25, "CRASH": -29, "ABORT": -30, "NO_IK_SOLUTION": -31,
}

CONSTANTS = [
    (MoveItErrorCodes, MOVEIT_ERROR_CODES),
    (CollisionObject, {"ADD": b"\x00", "REMOVE": b"\x01", "APPEND": b"\x02", "MOVE": b"\x03"}),
    (ContactInformation, {"ROBOT_LINK": 0, "WORLD_OBJECT": 1, "ROBOT_ATTACHED": 2}),
    (OrientationConstraint, {"XYZ_EULER_ANGLES": 0, "ROTATION_VECTOR": 1}),
    (VisibilityConstraint, {"SENSOR_Z": 0, "SENSOR_Y": 1, "SENSOR_X": 2}),
]


def share_directory(package: str) -> Path:
    """share/<package> of the prefix the imported Python package comes from.

    <prefix>/lib/pythonX.Y/site-packages/<package>/__init__.py -> <prefix>/share/<package>
    """
    module_file = Path(import_module(package).__file__).resolve()
    return module_file.parents[4] / "share" / package


def constant_names(message_class) -> set[str]:
    """Names of the message's constants (generated as properties of its metaclass)."""
    return {name for name, value in vars(type(message_class)).items() if isinstance(value, property)}


@pytest.mark.parametrize("type_name", sorted(UPSTREAM_TYPE_HASHES))
def test_type_hash_equals_upstream(type_name):
    package, kind, name = type_name.split("/")
    description = share_directory(package) / kind / f"{name}.json"
    own_hash = json.loads(description.read_text())["type_hashes"][0]

    assert own_hash["type_name"] == type_name
    assert own_hash["hash_string"] == UPSTREAM_TYPE_HASHES[type_name]


@pytest.mark.parametrize("message_class, expected", CONSTANTS,
                         ids=[cls.__name__ for cls, _ in CONSTANTS])
def test_constants_equal_upstream(message_class, expected):
    assert constant_names(message_class) == set(expected)
    assert {name: getattr(message_class, name) for name in expected} == expected
