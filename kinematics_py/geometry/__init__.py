"""Rigid transforms (4x4 arrays, quaternions x, y, z, w), their compiled primitives, and the Pose value type."""
