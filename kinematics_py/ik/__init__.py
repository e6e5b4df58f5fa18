"""Inverse kinematics: KinematicsPlugin (MoveIt's KinematicsBase) over compiled multi-start searches and, for
6R arms that have one, a closed form.

Layers, bottom up: ``kernel_data`` (the kernels' typed containers), ``task_error``, ``steps`` and
``kernels`` (compiled); ``problem`` (an IK problem and its solver set-up), ``search`` (one query within a
time budget), ``closed_form/`` (every branch of 6R arms) and ``analytic`` (it inside the searches),
``request`` / ``results`` (what a call takes and returns), ``solve`` (the one IK implementation),
``discretization``, ``collision_aware``, ``batch``, ``posture``; ``state`` (the plugin's immutable state)
and ``plugin``.
"""
