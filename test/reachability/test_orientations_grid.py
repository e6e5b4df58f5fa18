"""Tool orientations spread over the sphere, and the voxel grid's numbering."""
from __future__ import annotations

import math

import numpy as np
import pytest

from kinematics_py import KinematicsError
from kinematics_py.reachability import VoxelGrid, orientations_from_quaternions, sphere_orientations
from kinematics_py.reachability.grid import MAX_VOXELS
from kinematics_py.reachability.orientations import fibonacci_directions

ROTATION_TOLERANCE = 1e-12


@pytest.mark.parametrize(("directions", "rolls"), [(1, 1), (8, 4), (16, 2), (50, 3)])
def test_orientations_are_rotations_with_the_directions_and_rolls_asked_for(directions, rolls):
    R = sphere_orientations(directions, rolls)
    assert R.shape == (directions * rolls, 3, 3)
    assert np.allclose(R @ np.swapaxes(R, 1, 2), np.eye(3), atol=ROTATION_TOLERANCE)
    assert np.allclose(np.linalg.det(R), 1.0, atol=ROTATION_TOLERANCE)
    tool_axes = R[:, :, 2].reshape(directions, rolls, 3)
    assert np.allclose(tool_axes, fibonacci_directions(directions)[:, None, :], atol=ROTATION_TOLERANCE)
    x_axes = R[:, :, 0].reshape(directions, rolls, 3)
    step = np.einsum("dri,dri->dr", x_axes, np.roll(x_axes, -1, axis=1))
    assert np.allclose(step, math.cos(2 * math.pi / rolls), atol=1e-9)


def test_directions_are_spread_evenly():
    d = fibonacci_directions(64)
    assert np.allclose(np.linalg.norm(d, axis=1), 1.0)
    assert np.allclose(d.mean(axis=0), 0.0, atol=0.02)
    cosines = d @ d.T - 2 * np.eye(64)
    nearest = np.arccos(np.clip(cosines.max(axis=1), -1, 1))
    assert nearest.min() > 0.5 * nearest.max()  # no clusters, no holes


def test_given_orientations_and_bad_ones():
    R = orientations_from_quaternions([(0, 0, 0, 1), (1, 0, 0, 0), (0, 0, 0, 2)])
    assert np.allclose(R[0], np.eye(3)) and np.allclose(R[2], np.eye(3))
    assert np.allclose(R[1], np.diag([1.0, -1.0, -1.0]))
    for bad in ([(0, 0, 0, 0)], [], [(1, 2, 3)], [(np.nan, 0, 0, 1)]):
        with pytest.raises(KinematicsError, match="orientations"):
            orientations_from_quaternions(bad)
    with pytest.raises(KinematicsError, match=">= 1"):
        sphere_orientations(0, 4)


def test_grid_covers_the_box_and_numbers_its_voxels():
    grid = VoxelGrid.covering((-0.5, -0.2, 0.0), (0.5, 0.2, 0.35), 0.1)
    assert grid.shape == (10, 4, 4)
    centres = grid.centres()
    assert centres.shape == (grid.size, 3)
    assert np.all(centres.min(axis=0) > (-0.5, -0.2, -0.05)) and np.all(centres.max(axis=0) < (0.5, 0.2, 0.4))
    assert np.array_equal(grid.voxel_of(centres), np.arange(grid.size))
    assert np.array_equal(grid.voxel_of(centres + 0.049), np.arange(grid.size))
    assert list(grid.voxel_of([(2.0, 0.0, 0.1), (0.0, 0.0, -1.0)])) == [-1, -1]
    assert np.allclose(grid.centres(np.array([5]))[0], centres[5])


@pytest.mark.parametrize(("lower", "upper", "resolution", "message"), [
    ((0, 0, 0), (1, 1, 1), 0.0, "resolution"),
    ((0, 0, 0), (1, 1, 1), math.nan, "resolution"),
    ((0, 0, 0), (1, -1, 1), 0.1, "box"),
    ((0, 0), (1, 1), 0.1, "box"),
    ((0, 0, 0), (1, 1, 1), (1 / MAX_VOXELS) ** (1 / 3) / 2, "more than"),
])
def test_bad_grids_are_refused_saying_why(lower, upper, resolution, message):
    with pytest.raises(KinematicsError, match=message):
        VoxelGrid.covering(lower, upper, resolution)
