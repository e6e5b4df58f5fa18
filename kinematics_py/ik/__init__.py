"""Inverse kinematics: the problem, the compiled searches, and KinematicsPlugin (MoveIt's KinematicsBase)."""
