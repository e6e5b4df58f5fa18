"""kinematics_py: forward and inverse kinematics for robot arms, MoveIt-compatible.

The core (this package minus ``node`` and ``ros_conversions``) needs only numpy, numba and
urdf_parser_py; it never imports rclpy.
"""
from .chain import Chain
from .collision import BodyType, CollisionChecker, CollisionReport, Contact
from .collision_geometry import Box, Cone, Cylinder, GeometryError, Mesh, MeshLoadError, Placed, Plane, Sphere
from .collision_matrix import propose_disabled_pairs
from .exceptions import (
    ChainError,
    JointValueError,
    KinematicsError,
    SrdfError,
    UnknownGroupError,
    UnknownJointError,
    UnknownLinkError,
    UrdfError,
)
from .error_codes import DiscretizationMethod, ErrorCode, KinematicError
from .ik_solver import Verdict
from .parameters import ParameterError, SolverParameters
from .planning_scene import AttachedObjectUpdate, CollisionObjectUpdate, Operation, PlanningScene, SceneError
from .plugin import IKDiagnostics, IKResult, JointLimitViolation, KinematicsPlugin, KinematicsQueryOptions
from .poses import Pose
from .robot_model import RobotModel
from .srdf import EndEffector, Group, SemanticModel

__all__ = [
    "AttachedObjectUpdate",
    "BodyType",
    "Box",
    "CollisionChecker",
    "CollisionObjectUpdate",
    "CollisionReport",
    "Cone",
    "Contact",
    "Cylinder",
    "GeometryError",
    "IKDiagnostics",
    "JointLimitViolation",
    "Mesh",
    "MeshLoadError",
    "Operation",
    "Placed",
    "Plane",
    "PlanningScene",
    "SceneError",
    "Sphere",
    "propose_disabled_pairs",
    "Chain",
    "DiscretizationMethod",
    "ErrorCode",
    "IKResult",
    "KinematicError",
    "KinematicsPlugin",
    "KinematicsQueryOptions",
    "ParameterError",
    "Pose",
    "SolverParameters",
    "EndEffector",
    "Group",
    "SemanticModel",
    "ChainError",
    "JointValueError",
    "KinematicsError",
    "RobotModel",
    "SrdfError",
    "UnknownGroupError",
    "UnknownJointError",
    "UnknownLinkError",
    "UrdfError",
    "Verdict",
]
