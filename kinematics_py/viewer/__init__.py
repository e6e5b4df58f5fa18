"""A browser view of a robot, its planning scene and the answers computed for it (ROS-free; served by viser).

``RobotViewer(setup)`` serves the page (``viewer``); ``kinematics-py view`` starts one from the command line
(``cli``). docs/viewer.md says more.
"""
from .path_layer import ShownPath
from .viewer import DEFAULT_HOST, DEFAULT_PORT, RobotViewer

__all__ = ["DEFAULT_HOST", "DEFAULT_PORT", "RobotViewer", "ShownPath"]
