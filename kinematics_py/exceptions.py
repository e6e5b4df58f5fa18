"""One exception tree for programmer errors (bad descriptions, unknown names, bad joint values).

Request failures on the IK/FK API are reported with MoveIt error codes instead (see ``error_codes``).
"""
from __future__ import annotations

from collections.abc import Iterable


class KinematicsError(Exception):
    """Root of every exception raised by kinematics_py."""


class UrdfError(KinematicsError):
    """The robot description (URDF/xacro) is missing, malformed or inconsistent."""


class SrdfError(KinematicsError):
    """The semantic description (SRDF) is malformed or refers to unknown names."""


def _listing(valid_names: Iterable[str], limit: int = 40) -> str:
    names = sorted(valid_names)
    shown = ", ".join(repr(n) for n in names[:limit])
    more = f", ... ({len(names) - limit} more)" if len(names) > limit else ""
    return f"[{shown}{more}]"


class UnknownNameError(KinematicsError, KeyError):
    """A name that the model does not know; the message lists the valid ones."""

    kind = "name"

    def __init__(self, name: str, valid_names: Iterable[str], context: str = ""):
        self.name = name
        self.valid_names = tuple(sorted(valid_names))
        where = f" in {context}" if context else ""
        super().__init__(f"unknown {self.kind} {name!r}{where}; valid {self.kind}s are {_listing(self.valid_names)}")

    def __str__(self) -> str:  # KeyError would quote the message
        return self.args[0]


class UnknownLinkError(UnknownNameError):
    kind = "link"


class UnknownJointError(UnknownNameError):
    kind = "joint"


class UnknownGroupError(UnknownNameError):
    kind = "group"


class ChainError(KinematicsError):
    """The requested base/tip pair does not form a usable serial chain."""


class JointValueError(KinematicsError, ValueError):
    """Joint values of the wrong shape, or not finite."""
