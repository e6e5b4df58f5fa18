"""Inverse kinematics: KinematicsPlugin (MoveIt's KinematicsBase) over compiled multi-start searches.

Layers, bottom up: ``kernel_data`` (the kernels' typed containers), ``task_error``, ``steps`` and
``kernels`` (compiled); ``problem`` (an IK problem and its solver set-up), ``search`` (one query within a
time budget), ``request`` / ``results`` (what a call takes and returns), ``solve`` (the one IK
implementation), ``discretization``, ``collision_aware``, ``batch``; ``state`` (the plugin's immutable
state) and ``plugin``.
"""
