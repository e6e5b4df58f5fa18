"""Cartesian limits of a tool's motion (ROS-free), as Pilz's ``pilz_cartesian_limits.yaml`` gives them.

The file holds ``cartesian_limits: {max_trans_vel [m/s], max_trans_acc [m/s^2], max_trans_dec [m/s^2, negative],
max_rot_vel [rad/s]}``, at its top or under ``robot_description_planning`` (as a node's parameters hold it). As
Pilz, the rotation accelerates in the same ratio as the translation: max_trans_acc / max_trans_vel * max_rot_vel.
"""
from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from dataclasses import dataclass

from ..errors import KinematicsError

#: The keys of ``cartesian_limits``.
CARTESIAN_LIMIT_KEYS = ("max_trans_vel", "max_trans_acc", "max_trans_dec", "max_rot_vel")


class CartesianLimitsError(KinematicsError):
    """Cartesian limits that are missing, not numbers or of the wrong sign (names the keys)."""


@dataclass(frozen=True)
class CartesianLimits:
    """The tool's translational speed [m/s], acceleration and deceleration [m/s^2] (the deceleration negative,
    as Pilz writes it) and rotational speed [rad/s]; defaults: moveit_resources' Panda."""

    max_trans_vel: float = 1.0
    max_trans_acc: float = 2.25
    max_trans_dec: float = -5.0
    max_rot_vel: float = 1.57

    def __post_init__(self):
        for key in CARTESIAN_LIMIT_KEYS:
            value = getattr(self, key)
            sign = -1.0 if key == "max_trans_dec" else 1.0
            if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value) \
                    or sign * value <= 0:
                raise CartesianLimitsError(f"cartesian_limits.{key} must be a finite number "
                                           f"{'< 0' if sign < 0 else '> 0'}; got {value!r}")
            object.__setattr__(self, key, float(value))

    @property
    def max_rot_acc(self) -> float:
        """[rad/s^2]: the translation's acceleration ratio applied to the rotation."""
        return self.max_trans_acc / self.max_trans_vel * self.max_rot_vel

    def scaled(self, velocity_scaling: float, acceleration_scaling: float) -> CartesianLimits:
        return CartesianLimits(self.max_trans_vel * velocity_scaling, self.max_trans_acc * acceleration_scaling,
                               self.max_trans_dec * acceleration_scaling, self.max_rot_vel * velocity_scaling)


def cartesian_limits_from_mapping(values: Mapping) -> CartesianLimits:
    """The limits of a parsed pilz_cartesian_limits.yaml (or a mapping holding ``robot_description_planning``)."""
    if isinstance(values, Mapping) and "robot_description_planning" in values:
        values = values["robot_description_planning"]
    limits = values.get("cartesian_limits") if isinstance(values, Mapping) else None
    if not isinstance(limits, Mapping):
        raise CartesianLimitsError(f"no cartesian_limits mapping with keys {list(CARTESIAN_LIMIT_KEYS)}")
    missing = [key for key in CARTESIAN_LIMIT_KEYS if key not in limits]
    if missing:
        raise CartesianLimitsError(f"cartesian_limits lacks {missing}; it needs {list(CARTESIAN_LIMIT_KEYS)}")
    return CartesianLimits(*(limits[key] for key in CARTESIAN_LIMIT_KEYS))


def load_cartesian_limits(text: str) -> CartesianLimits:
    """The limits of the text of a pilz_cartesian_limits.yaml file."""
    import yaml

    try:
        values = yaml.safe_load(text)
    except yaml.YAMLError as error:
        raise CartesianLimitsError(f"pilz_cartesian_limits.yaml is not YAML: {error}") from None
    return cartesian_limits_from_mapping(values if isinstance(values, Mapping) else {})
