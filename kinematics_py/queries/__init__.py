"""The request model (ROS-free): each service's question as one typed query, answered by one call into the core.

A query holds what the core needs and nothing of the message it came from: ``T_base_tip`` arrays with their
shapes, joint vectors in the group's order, the rest of the robot's state, a ``Budget`` and one ``StateCheck``.
The ROS services build queries at their boundary (``ros/services``), library callers may build them directly.
"""
