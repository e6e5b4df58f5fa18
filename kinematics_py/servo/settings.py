"""moveit_servo's parameters (``parameters.SERVO_PARAMETERS``) read from a YAML dict or the node's flat names."""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from ..parameters import SERVO_NAMESPACE, SERVO_RENAMED, SERVO_SPECS_BY_NAME, validate_servo_parameter


@dataclass(frozen=True)
class ServoSettings:
    """Validated servo parameters: ``values`` by moveit_servo's name (``scale.linear``, ...), every one given or
    defaulted; ``ignored`` the names read but not moveit_servo's of today (e.g. ``use_gazebo`` of its older
    configs)."""

    values: Mapping[str, Any]
    ignored: tuple[str, ...] = ()

    @classmethod
    def from_parameters(cls, parameters: Mapping[str, Any] | None) -> ServoSettings:
        """From a moveit_servo YAML dict (nested ``scale: {linear: ...}`` or dotted ``scale.linear``, with or
        without the ``moveit_servo`` level); unknown names are kept in ``ignored``, bad values raise
        ParameterError naming what is valid."""
        flat = dict(_flatten(parameters or {}))
        values, ignored = {}, []
        for name, value in flat.items():
            name = SERVO_RENAMED.get(name, name)
            if name in SERVO_SPECS_BY_NAME:
                values[name] = validate_servo_parameter(name, value)
            else:
                ignored.append(name)
        defaults = {name: validate_servo_parameter(name, spec.default) for name, spec in SERVO_SPECS_BY_NAME.items()}
        return cls(MappingProxyType({**defaults, **values}), tuple(sorted(ignored)))

    def __getitem__(self, name: str) -> Any:
        return self.values[name]

    @property
    def enabled(self) -> bool:
        """Whether servoing runs: ``move_group_name`` is set."""
        return bool(self.values["move_group_name"])


def _flatten(parameters: Mapping[str, Any], prefix: str = ""):
    for key, value in parameters.items():
        name = f"{prefix}{key}"
        if name == SERVO_NAMESPACE and isinstance(value, Mapping):
            yield from _flatten(value)
        elif name.startswith(SERVO_NAMESPACE + "."):
            yield from _flatten({name[len(SERVO_NAMESPACE) + 1:]: value})
        elif isinstance(value, Mapping):
            yield from _flatten(value, name + ".")
        else:
            yield name, value
