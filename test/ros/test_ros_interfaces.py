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
    PlanningSceneComponents,
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
    "moveit_msgs/msg/AllowedCollisionEntry":
        "RIHS01_eeb7cc3f1bfdb8c778aa7454ae90037c2749dab3ca0abdfe3dad2ae8723977db",
    "moveit_msgs/msg/AllowedCollisionMatrix":
        "RIHS01_ac0159eec0d99f73158c7349c9d1c01b3dc7f749d75a2ea22e74a2a1091a9b05",
    "moveit_msgs/msg/DisplayRobotState":
        "RIHS01_ee204079ceb1e109a4b92a2a323427daefaf6d920672e105f4d9a8e821bf6376",
    "moveit_msgs/msg/DisplayTrajectory":
        "RIHS01_dd351cbd6d9986eb019306910ec09236a136a02dbc0b3465707cb62f2d56e22b",
    "moveit_msgs/msg/LinkPadding":
        "RIHS01_864762d9e19f758b0385427f75691374cae830495727c96405f2bad0eb20c766",
    "moveit_msgs/msg/LinkScale":
        "RIHS01_4666a0685f26365ccf4c9bfed0b14c654604fa0564be65c221d8d54fdc7a0f83",
    "moveit_msgs/msg/ObjectColor":
        "RIHS01_4f937f7b22942a9c4a6409c20255aaad1b5d9a003ae3c0edb779698be443c127",
    "moveit_msgs/msg/PlanningScene":
        "RIHS01_0f58540ad5eab4b9ea827d53b763c793d8cabd202b3b301fcee25afa4ce1bd80",
    "moveit_msgs/msg/PlanningSceneComponents":
        "RIHS01_76b77cb53f7a0b680d46fad6c0056d3710a74ec335dd5f361f3df62383313d69",
    "moveit_msgs/msg/PlanningSceneWorld":
        "RIHS01_e08e6a4a81ca6b6a6953ac758dadc2c949555093efea6a9a22d9accf62c2c099",
    "moveit_msgs/msg/RobotTrajectory":
        "RIHS01_af1dc87fb94d13e5f233e9c210d2662fa06143a8b3c6aec47c57ad45074fcce8",
    "moveit_msgs/srv/ApplyPlanningScene":
        "RIHS01_8e6134783db0987c0acedbfd2f16f608a8f7a54e83a7bbb372e851af419f4d72",
    "moveit_msgs/srv/ApplyPlanningScene_Event":
        "RIHS01_e693c244046a9210f9975fcd45c6f94d6900d537aa8d6f0c82d09e0b54cfa3f3",
    "moveit_msgs/srv/ApplyPlanningScene_Request":
        "RIHS01_4303c6065226e57f263fe7e1c03df94ea3ddbc120001cbbc4e757d7801da0a56",
    "moveit_msgs/srv/ApplyPlanningScene_Response":
        "RIHS01_8e618d93f6779a2e3f95d84c363f8cc996297b586b683a53750879506e8eaaf1",
    "moveit_msgs/srv/GetCartesianPath":
        "RIHS01_b19f501df5d378141d918199894c3ad24533e76021a880b15dc5d62fec8d7b1a",
    "moveit_msgs/srv/GetPlanningScene":
        "RIHS01_7ed7e96238b902174d985b0eb739ea08c95377e8e46a6a9014c22497faf79cd2",
    "moveit_msgs/srv/GetPlanningScene_Event":
        "RIHS01_ea35901dc17810124542acad506a91cac3ceed9169b1dd44e70ab61ebde8002c",
    "moveit_msgs/srv/GetPlanningScene_Request":
        "RIHS01_ac8ce45f7638bcc6d6661f66e836e4edd218107682f68e3292dac1f79f29c1ec",
    "moveit_msgs/srv/GetPlanningScene_Response":
        "RIHS01_8a2b63777b386eeffec08730a19dae73e4950fec294825d9d53f24b935e6ec95",
    "octomap_msgs/msg/Octomap":
        "RIHS01_9891a19a05b70ec20aa8f45db3f8300b9ab80afff32c61c549d25087da9625b0",
    "octomap_msgs/msg/OctomapWithPose":
        "RIHS01_e65f8760aa96a2acef86b6d206175cfc78420082b6159dd3fa6ebf93f5f81979",
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
    (PlanningSceneComponents, {"SCENE_SETTINGS": 1, "ROBOT_STATE": 2, "ROBOT_STATE_ATTACHED_OBJECTS": 4,
                               "WORLD_OBJECT_NAMES": 8, "WORLD_OBJECT_GEOMETRY": 16, "OCTOMAP": 32, "TRANSFORMS": 64,
                               "ALLOWED_COLLISION_MATRIX": 128, "LINK_PADDING_AND_SCALING": 256,
                               "OBJECT_COLORS": 512}),
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
    service, _, part = name.rpartition("_")
    if part in ("Request", "Response", "Event"):  # listed in the service's own description
        hashes = json.loads((share_directory(package) / kind / f"{service}.json").read_text())["type_hashes"]
        assert {h["type_name"]: h["hash_string"] for h in hashes}[type_name] == UPSTREAM_TYPE_HASHES[type_name]
        return
    description = share_directory(package) / kind / f"{name}.json"
    own_hash = json.loads(description.read_text())["type_hashes"][0]

    assert own_hash["type_name"] == type_name
    assert own_hash["hash_string"] == UPSTREAM_TYPE_HASHES[type_name]


@pytest.mark.parametrize("message_class, expected", CONSTANTS,
                         ids=[cls.__name__ for cls, _ in CONSTANTS])
def test_constants_equal_upstream(message_class, expected):
    assert constant_names(message_class) == set(expected)
    assert {name: getattr(message_class, name) for name in expected} == expected


#: The request, response and event types of services: listed in the service's own description file.
UPSTREAM_SERVICE_PART_HASHES = {
    "moveit_msgs/srv/GetCartesianPath_Request":
        "RIHS01_f82f5681778f78140f106beefcea74d2ce34c5e4bb048b56c90758e0d2d41384",
    "moveit_msgs/srv/GetCartesianPath_Response":
        "RIHS01_e2dc0013e5a4c0893c54b13b0efa5997041852006a5bafdb44e11224a4cfa46b",
    "moveit_msgs/srv/GetCartesianPath_Event":
        "RIHS01_e13dc5d8251a44352e9f0fe4df43f7ba2849753a0f52ab72a20458718a9a68d3",
}


@pytest.mark.parametrize("type_name", sorted(UPSTREAM_SERVICE_PART_HASHES))
def test_service_part_hash_equals_upstream(type_name):
    package, kind, part = type_name.split("/")
    description = share_directory(package) / kind / f"{part.rsplit('_', 1)[0]}.json"
    hashes = {entry["type_name"]: entry["hash_string"]
              for entry in json.loads(description.read_text())["type_hashes"]}

    assert hashes[type_name] == UPSTREAM_SERVICE_PART_HASHES[type_name]
