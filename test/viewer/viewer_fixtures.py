"""Shared by the viewer tests: the bundled UR5's set-up, a viewer on a free port, a box obstacle."""
from __future__ import annotations

import numpy as np

from kinematics_py import Box, PlanningScene
from kinematics_py.robot_setup import SetupInputs, build_robot_setup
from kinematics_py.robots import bundled_robot_path

#: A box in front of the UR5 that its arm hits when the shoulder lifts forward and down.
OBSTACLE_CENTRE = (0.45, 0.1, 0.4)


def ur5_setup():
    return build_robot_setup(SetupInputs(bundled_robot_path("ur5").read_text(),
                                         bundled_robot_path("ur5", "srdf").read_text()))


def obstacle_checker(setup, centre=OBSTACLE_CENTRE, edge: float = 0.4):
    """The set-up's checker on a scene holding one box ``table`` of ``edge`` [m] at ``centre``."""
    scene = PlanningScene(setup.model)
    T = np.eye(4)
    T[:3, 3] = centre
    scene.add_object("table", [Box((edge, edge, edge))], pose=T)
    return setup.collision.checker.for_scene(scene)


def buffered_messages(viewer) -> int:
    """How many messages the viewer's server keeps for clients that connect later (what its memory holds)."""
    return len(viewer.server._websock_server._broadcast_buffer.message_from_id)
