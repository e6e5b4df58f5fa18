"""The robot model: URDF/xacro and SRDF loading, the kinematic tree, serial chains and their compiled FK/Jacobians."""
