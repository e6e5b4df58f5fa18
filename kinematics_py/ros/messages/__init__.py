"""Conversions between ROS messages and the core's types: poses, robot states, constraints, planning scenes."""
