"""Executing planned trajectories (ROS-free): the controllers a MoveIt config names (``controllers``), the checks
and the split before a trajectory is sent (``trajectory``), the duration rule, one execution at a time per joint
(``joint_locks``) and a simulated trajectory follower (``follower``)."""
