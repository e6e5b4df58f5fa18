"""Inverse kinematics: KinematicsPlugin (MoveIt's KinematicsBase) over compiled multi-start searches and, for
6R arms that have one, a closed form.

Layers, bottom up: ``kernel_data`` (the kernels' typed containers), ``task_error``, ``steps`` and
``kernels`` (compiled); ``budget`` (the caller's limits), ``problem`` (an IK problem and its solver set-up),
``search`` (one query within a time budget); ``closed_form/`` (every branch of 6R arms, and its use in the
searches); ``group_setup`` (the plugin's immutable data), ``request`` / ``results`` (what a call takes and
returns), ``solve`` (the strategy for a request), ``discretization``, ``collision_aware``, ``batch``,
``posture``; ``setup_builder`` and ``plugin``.
"""
