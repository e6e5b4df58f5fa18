"""Collision checking: URDF collision geometry, the planning scene, the checker and disabled-pair sampling."""
