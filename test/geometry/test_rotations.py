"""The rotation and transform primitives (geometry.kernels) and their numpy wrappers (geometry.transforms),
against independent formulas: scipy's matrix exponential and products of elementary rotations."""
from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.linalg import expm

from kinematics_py.geometry import kernels
from kinematics_py.geometry.transforms import (
    make_transform,
    pose_error,
    rotation_about_axis,
    rotation_from_rpy,
    rotation_log,
)

SEED = 5
#: Double-precision round-off on products of a few rotations.
TOLERANCE = 1e-12
#: Rotation vectors [rad] as the angle nears pi: arccos and 1 / sin(angle) lose digits there; within
#: kernels.NEAR_PI of pi the axis is read from R + I as if the angle were pi, an error of the order of pi - angle.
LOG_TOLERANCES = [(0.0, TOLERANCE), (1e-12, TOLERANCE), (1e-8, TOLERANCE), (1e-7, TOLERANCE), (0.3, TOLERANCE),
                  (2.0, TOLERANCE), (math.pi - 1e-3, 1e-8), (math.pi - 1e-5, 2e-5), (math.pi, 1e-7)]


def skew(v) -> np.ndarray:
    return np.array([[0.0, -v[2], v[1]], [v[2], 0.0, -v[0]], [-v[1], v[0], 0.0]])


def random_axis(rng) -> np.ndarray:
    axis = rng.normal(size=3)
    return axis / np.linalg.norm(axis)


def test_rotation_about_axis_is_the_exponential_of_its_rotation_vector():
    rng = np.random.default_rng(SEED)
    for _ in range(100):
        axis, angle = random_axis(rng), rng.uniform(-2 * math.pi, 2 * math.pi)
        R = rotation_about_axis(axis, angle)
        np.testing.assert_allclose(R, expm(skew(axis * angle)), rtol=0, atol=TOLERANCE)
    assert rotation_about_axis([0, 0, 1], math.pi / 2) @ [1, 0, 0] == pytest.approx([0, 1, 0])


def test_rpy_is_yaw_pitch_roll_about_fixed_axes():
    rng = np.random.default_rng(SEED)
    X, Y, Z = np.eye(3)
    for _ in range(100):
        roll, pitch, yaw = rng.uniform(-math.pi, math.pi, 3)
        expected = rotation_about_axis(Z, yaw) @ rotation_about_axis(Y, pitch) @ rotation_about_axis(X, roll)
        np.testing.assert_allclose(rotation_from_rpy(roll, pitch, yaw), expected, rtol=0, atol=TOLERANCE)


@pytest.mark.parametrize("angle, tolerance", LOG_TOLERANCES)
def test_rotation_log_inverts_the_exponential(angle, tolerance):
    rng = np.random.default_rng(SEED)
    for _ in range(50):
        axis = random_axis(rng)
        log = rotation_log(expm(skew(axis * angle)))
        if angle == math.pi:  # axis and -axis are the same rotation
            log = log if log @ axis >= 0 else -log
        np.testing.assert_allclose(log, axis * angle, rtol=0, atol=tolerance)


def test_rotation_vector_kernel_takes_views_and_matches_the_wrapper():
    T = make_transform(rotation_about_axis(np.array([0.0, 0.6, 0.8]), 1.2), (1.0, 2.0, 3.0))
    out = np.empty(3)
    kernels.rotation_vector(T[:3, :3], out)
    np.testing.assert_allclose(out, [0.0, 0.72, 0.96], rtol=0, atol=TOLERANCE)
    np.testing.assert_array_equal(out, rotation_log(T[:3, :3]))
    assert pose_error(T, T @ make_transform(rotation_about_axis([1, 0, 0], 0.25), (0, 0, 0.5))) == \
        pytest.approx((0.5, 0.25))


def test_compose_into_multiplies_rigid_transforms_even_in_place():
    rng = np.random.default_rng(SEED)
    A = make_transform(rotation_about_axis(random_axis(rng), 0.7), rng.normal(size=3))
    B = make_transform(rotation_about_axis(random_axis(rng), -1.9), rng.normal(size=3))
    out = np.full((4, 4), np.nan)
    kernels.compose_into(A, B, out)
    np.testing.assert_allclose(out, A @ B, rtol=0, atol=TOLERANCE)
    in_place = A.copy()
    kernels.compose_into(in_place, B, in_place)
    np.testing.assert_allclose(in_place, A @ B, rtol=0, atol=TOLERANCE)
