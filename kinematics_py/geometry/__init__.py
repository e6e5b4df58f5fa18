"""Rigid transforms (4x4 arrays, quaternions x, y, z, w) and the Pose value type."""
