"""Motion planning above the IK and collision layers (ROS-free): Cartesian paths and their time parameterization."""
