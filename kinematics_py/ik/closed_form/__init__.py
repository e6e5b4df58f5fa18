"""Closed-form inverse kinematics of 6R arms found from the URDF: every branch, nearest the seed first.

``classify_chain`` reads the family from the joint axes at zero (spherical wrist, three parallel axes, each
also with the chain reversed; a chain within a ``FamilyTolerance`` of one takes its nearest ideal arm, see
``near_ideal``); ``ClosedFormSolver`` solves every branch by Paden-Kahan subproblems in one compiled call per pose,
or a batch in parallel.
"""
from .classification import ChainGeometry, Classification, ClosedFormFamily, classification_report, classify_chain
from .near_ideal import Deviation, FamilyTolerance
from .solver import ClosedFormSolver

__all__ = [
    "ChainGeometry",
    "Classification",
    "ClosedFormFamily",
    "ClosedFormSolver",
    "Deviation",
    "FamilyTolerance",
    "classification_report",
    "classify_chain",
]
