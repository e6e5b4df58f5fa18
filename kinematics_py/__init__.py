"""kinematics_py: forward and inverse kinematics for robot arms, MoveIt-compatible.

The names exported here are the ROS-free public API (numpy, numba; coal and trimesh for
collision checking). The ROS 2 layer lives in ``kinematics_py.ros`` and is never imported from here.
"""
from .collision.allowed_collisions import AllowedCollisionMatrix
from .collision.checker import BodyType, CollisionChecker, CollisionReport, Contact
from .collision.geometry import Box, Cone, Cylinder, GeometryError, Mesh, MeshLoadError, Placed, Plane, Sphere
from .collision.matrix import propose_disabled_pairs
from .collision.octree import Octree
from .collision.scene import AttachedObjectUpdate, CollisionObjectUpdate, Operation, PlanningScene, SceneError
from .collision.scene_message import OctomapUpdate, PlanningSceneMessage, apply_planning_scene
from .errors import (
    ChainError,
    ErrorCode,
    JointValueError,
    KinematicsError,
    KinematicsResultCode,
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
from .ik.velocity import (
    SVDResult,
    VelocityIKBatch,
    VelocityIKCode,
    VelocityIKError,
    VelocityIKOptions,
    VelocityIKResult,
    VelocityIKSolver,
)
from .model.chain import Chain
from .model.robot_model import RobotModel
from .model.srdf import EndEffector, Group, SemanticModel
from .parameters import ParameterError, SolverParameters
from .planning.cartesian_limits import CartesianLimits, CartesianLimitsError, load_cartesian_limits
from .planning.cartesian_path import CartesianPath, CartesianPathError, JumpThresholds, compute_cartesian_path
from .planning.goals import GoalError, JointGoal, PoseGoal
from .planning.industrial import Circ, Free, IndustrialOptions, Lin, Ptp, plan_motion
from .planning.motion import MotionPlan, plan
from .planning.options import Approach, PlanningError, PlanOptions
from .planning.sequence import SequenceItem, plan_sequence
from .planning.time_parameterization import (
    JointLimits,
    TimedPath,
    TimeParameterizationError,
    joint_limits,
    time_parameterize,
)
from .state_check import StateCheck

__all__ = [
    "AllowedCollisionMatrix",
    "Octree",
    "OctomapUpdate",
    "PlanningSceneMessage",
    "apply_planning_scene",
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
    "KinematicsResultCode",
    "KinematicsPlugin",
    "KinematicsQueryOptions",
    "SVDResult",
    "VelocityIKBatch",
    "VelocityIKCode",
    "VelocityIKError",
    "VelocityIKOptions",
    "VelocityIKResult",
    "VelocityIKSolver",
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
    "CartesianPath",
    "CartesianPathError",
    "JumpThresholds",
    "compute_cartesian_path",
    "JointLimits",
    "TimedPath",
    "TimeParameterizationError",
    "joint_limits",
    "time_parameterize",
    "Approach",
    "GoalError",
    "JointGoal",
    "MotionPlan",
    "PlanOptions",
    "PlanningError",
    "PoseGoal",
    "StateCheck",
    "plan",
    "CartesianLimits",
    "CartesianLimitsError",
    "Circ",
    "Free",
    "IndustrialOptions",
    "Lin",
    "Ptp",
    "SequenceItem",
    "load_cartesian_limits",
    "plan_motion",
    "plan_sequence",
]
