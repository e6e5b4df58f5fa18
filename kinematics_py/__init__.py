"""kinematics_py: forward and inverse kinematics for robot arms, MoveIt-compatible.

The names exported here are the ROS-free public API (numpy, numba, urdf_parser_py; coal and trimesh for
collision checking). The ROS 2 layer lives in ``kinematics_py.ros`` and is never imported from here.
"""
from .collision.checker import BodyType, CollisionChecker, CollisionReport, Contact
from .collision.geometry import Box, Cone, Cylinder, GeometryError, Mesh, MeshLoadError, Placed, Plane, Sphere
from .collision.matrix import propose_disabled_pairs
from .collision.scene import AttachedObjectUpdate, CollisionObjectUpdate, Operation, PlanningScene, SceneError
from .errors import (
    ChainError,
    ErrorCode,
    JointValueError,
    KinematicError,
    KinematicsError,
    RequestError,
    SrdfError,
    UnknownGroupError,
    UnknownJointError,
    UnknownLinkError,
    UrdfError,
    Verdict,
)
from .geometry.poses import Pose
from .ik.closed_form import ClosedFormSolver, classify_chain
from .ik.options import DiscretizationMethod, KinematicsQueryOptions
from .ik.plugin import IKDiagnostics, IKResult, JointLimitViolation, KinematicsPlugin, Posture
from .model.chain import Chain
from .model.robot_model import RobotModel
from .model.srdf import EndEffector, Group, SemanticModel
from .parameters import ParameterError, SolverParameters

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
    "ClosedFormSolver",
    "Posture",
    "classify_chain",
    "Chain",
    "DiscretizationMethod",
    "ErrorCode",
    "IKResult",
    "KinematicError",
    "KinematicsPlugin",
    "KinematicsQueryOptions",
    "ParameterError",
    "RequestError",
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
