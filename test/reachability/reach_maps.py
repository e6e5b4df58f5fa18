"""Small maps shared by the reachability tests (the UR5's closed form, coarse grids: seconds, not minutes),
each built once per test session."""
from __future__ import annotations

import functools

from kinematics_py.reachability import MapSpec, RobotSource, VoxelGrid, compute_map, sphere_orientations
from kinematics_py.robots import bundled_robot_path

#: A coarse grid over the UR5's reach: 8 x 8 x 8 voxels of 0.25 m.
UR5_BOX = ((-1.0, -1.0, -0.9), (1.0, 1.0, 1.1))


@functools.cache
def bundled_source(robot: str, group: str) -> RobotSource:
    return RobotSource(bundled_robot_path(robot).read_text(), bundled_robot_path(robot, "srdf").read_text(), group,
                       name=robot)


@functools.cache
def ur5_spec() -> MapSpec:
    return MapSpec(bundled_source("ur5", "ur_manipulator"), VoxelGrid.covering(*UR5_BOX, 0.25),
                   sphere_orientations(4, 2), chunk_voxels=100)


@functools.cache
def ur5_map():
    return compute_map(ur5_spec())
