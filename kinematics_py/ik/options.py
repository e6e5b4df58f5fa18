"""Query options of MoveIt's KinematicsBase: kinematics::KinematicsQueryOptions and DiscretizationMethods."""
from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum


class DiscretizationMethod(IntEnum):
    """kinematics::DiscretizationMethods."""

    NO_DISCRETIZATION = 1
    ALL_DISCRETIZED = 2
    SOME_DISCRETIZED = 3
    ALL_RANDOM_SAMPLED = 4
    SOME_RANDOM_SAMPLED = 5

@dataclass(frozen=True)
class KinematicsQueryOptions:
    """As kinematics::KinematicsQueryOptions."""

    lock_redundant_joints: bool = False
    return_approximate_solution: bool = False
    discretization_method: DiscretizationMethod = DiscretizationMethod.NO_DISCRETIZATION
