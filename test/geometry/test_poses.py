"""Pose validation: a single pose and a batch follow one rule set and give the same reasons."""
from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest

from kinematics_py.geometry.poses import Pose, PoseError, transform_from_any_pose, transforms_from_poses
from kinematics_py.geometry.transforms import make_transform, rotation_about_axis, unit_quaternion, unit_quaternions

GOOD = Pose((0.1, 0.2, 0.3), (0.0, 0.0, math.sin(0.25), math.cos(0.25)))
BAD = [
    pytest.param(Pose((math.nan, 0.0, 0.5)), "finite", id="nan-position"),
    pytest.param(Pose((0.3, math.inf, 0.5)), "finite", id="inf-position"),
    pytest.param(Pose((0.3, 0.0, 0.5), (0.0, math.nan, 0.0, 1.0)), "finite", id="nan-quaternion"),
    pytest.param(Pose((0.3, 0.0, 0.5), (0.0, 0.0, 0.0, 0.0)), "is zero", id="zero-quaternion"),
    pytest.param(Pose((0.3, 0.0), (0.0, 0.0, 0.0, 1.0)), "3 position and 4 quaternion", id="short-position"),
    pytest.param("not a pose", "cannot read a pose", id="unreadable"),
]


@pytest.mark.parametrize("pose, reason", BAD)
def test_single_and_batch_refuse_a_pose_for_the_same_reason(pose, reason):
    with pytest.raises(PoseError, match=reason) as refused:
        transform_from_any_pose(pose)
    T, bad = transforms_from_poses([GOOD, pose, GOOD])
    assert bad == {1: str(refused.value)}
    np.testing.assert_array_equal(T[1], np.eye(4))
    np.testing.assert_allclose(T[0], transform_from_any_pose(GOOD), rtol=0, atol=1e-15)


def test_poses_of_every_form_agree():
    expected = make_transform(rotation_about_axis([0.0, 0.0, 1.0], 0.5), (0.1, 0.2, 0.3))
    message = SimpleNamespace(position=SimpleNamespace(x=0.1, y=0.2, z=0.3),
                              orientation=SimpleNamespace(**dict(zip("xyzw", GOOD.orientation))))
    stamped = SimpleNamespace(pose=message, header=None)
    scaled = Pose(GOOD.position, tuple(2.0 * v for v in GOOD.orientation))  # normalised first
    for pose in (GOOD, message, stamped, scaled, expected):
        np.testing.assert_allclose(transform_from_any_pose(pose), expected, rtol=0, atol=1e-15)
    T, bad = transforms_from_poses([GOOD, message, stamped, scaled])
    assert bad == {}
    np.testing.assert_allclose(T, np.broadcast_to(expected, (4, 4, 4)), rtol=0, atol=1e-15)


def test_arrays_must_be_finite_transforms():
    with pytest.raises(PoseError, match="finite 4x4"):
        transform_from_any_pose(np.eye(3))
    broken = np.array([np.eye(4), np.full((4, 4), np.nan), np.eye(4)])
    with pytest.raises(PoseError, match="finite 4x4") as refused:
        transform_from_any_pose(broken[1])
    T, bad = transforms_from_poses(broken)
    assert bad == {1: str(refused.value)}
    np.testing.assert_array_equal(T, np.broadcast_to(np.eye(4), (3, 4, 4)))


@pytest.mark.parametrize("scale", [1e200, 1e300, 1.7e308, 1e-5, 1e-150], ids=str)
def test_quaternions_of_any_finite_magnitude_normalise_without_overflow(scale):
    scaled = Pose(GOOD.position, tuple(scale * v for v in GOOD.orientation))
    huge_w = Pose(GOOD.position, (0.0, 0.0, 0.0, scale))
    expected = transform_from_any_pose(GOOD)
    T, bad = transforms_from_poses([scaled, huge_w])
    if scale < 1e-6:  # too short to carry an orientation: refused, single and batch alike
        with pytest.raises(PoseError, match="is zero"):
            transform_from_any_pose(scaled)
        assert set(bad) == {0, 1}
        return
    assert bad == {}
    np.testing.assert_allclose(transform_from_any_pose(scaled), expected, rtol=0, atol=1e-15)
    np.testing.assert_allclose(T[0], expected, rtol=0, atol=1e-15)
    np.testing.assert_array_equal(transform_from_any_pose(huge_w), make_transform(None, GOOD.position))
    np.testing.assert_array_equal(T[1], make_transform(None, GOOD.position))


def test_unit_quaternions_refuse_only_non_finite_or_zero():
    assert unit_quaternion(1e308, 1e308, -1e308, 1e308) == (0.5, 0.5, -0.5, 0.5)
    np.testing.assert_array_equal(unit_quaternions([(1e308, 1e308, -1e308, 1e308)]), [(0.5, 0.5, -0.5, 0.5)])
    for q in [(0.0, 0.0, 0.0, 0.0), (math.nan, 0.0, 0.0, 1.0), (1.0, math.nan, 0.0, 0.0), (math.inf, 0.0, 0.0, 1.0),
              (1e308, -math.inf, 0.0, 0.0), (0.0, 0.0, 0.0, 1e-13)]:
        with pytest.raises(ValueError, match="no orientation"):
            unit_quaternion(*q)
        with pytest.raises(ValueError, match="no orientation"):
            unit_quaternions([(0.0, 0.0, 0.0, 1.0), q])
