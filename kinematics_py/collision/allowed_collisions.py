"""MoveIt's allowed collision matrix, over the robot's own rules.

The robot's own rules (adjacent links, the SRDF's disabled pairs) give every pair of its links with geometry an
entry: allowed or not. A matrix from a planning scene adds ``entries`` (a pair of names -> allowed), which win
over the robot's rules, and ``defaults`` (a name -> allowed) for pairs without an entry (an object and a link,
for instance): as MoveIt decides, a pair whose two names both have a default is allowed only if both are.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType

from ..errors import KinematicsError

#: The reason a pair allowed by a planning scene's matrix is left out of checks with.
ALLOWED_BY_MATRIX = "allowed collision matrix"


class CollisionMatrixError(KinematicsError, ValueError):
    """An allowed collision matrix whose sizes or names do not fit together."""


@dataclass(frozen=True)
class AllowedCollisionMatrix:
    """``entries``: frozenset({name, name}) -> allowed; ``defaults``: name -> allowed (read-only mappings)."""

    entries: Mapping[frozenset[str], bool] = field(default_factory=dict)
    defaults: Mapping[str, bool] = field(default_factory=dict)

    def __post_init__(self):
        object.__setattr__(self, "entries", MappingProxyType({frozenset(k): bool(v) for k, v in self.entries.items()}))
        object.__setattr__(self, "defaults", MappingProxyType({str(k): bool(v) for k, v in self.defaults.items()}))

    @classmethod
    def from_matrix(cls, names: Sequence[str], rows: Sequence[Sequence[bool]], default_names: Sequence[str] = (),
                    default_values: Sequence[bool] = ()) -> AllowedCollisionMatrix:
        """The matrix of moveit_msgs/AllowedCollisionMatrix: ``rows[i][j]`` says whether names i and j may collide
        (the upper triangle is read, as MoveIt does). CollisionMatrixError for sizes that differ or a name twice."""
        names, default_names = list(names), list(default_names)
        if len(rows) != len(names):
            raise CollisionMatrixError(f"allowed collision matrix: {len(names)} entry_names but {len(rows)} "
                                       f"entry_values")
        if len(default_names) != len(default_values):
            raise CollisionMatrixError(f"allowed collision matrix: {len(default_names)} default_entry_names but "
                                       f"{len(default_values)} default_entry_values")
        for what, listed in (("entry_names", names), ("default_entry_names", default_names)):
            twice = sorted({name for name in listed if listed.count(name) > 1})
            if twice:
                raise CollisionMatrixError(f"allowed collision matrix: {what} lists {twice} more than once")
        entries = {}
        for i, row in enumerate(rows):
            if len(row) != len(names):
                raise CollisionMatrixError(f"allowed collision matrix: entry_values[{i}] ({names[i]!r}) has "
                                           f"{len(row)} values; it needs one per entry name ({len(names)})")
            for j in range(i + 1, len(names)):
                entries[frozenset((names[i], names[j]))] = bool(row[j])
        return cls(entries, dict(zip(default_names, (bool(v) for v in default_values))))

    @property
    def is_empty(self) -> bool:
        return not self.entries and not self.defaults

    def _default(self, name_1: str, name_2: str) -> bool | None:
        values = [self.defaults[name] for name in (name_1, name_2) if name in self.defaults]
        return all(values) if values else None

    def disabled_pairs(self, robot_disabled: Mapping[frozenset[str], str], robot_links: Iterable[str],
                       bodies: Iterable[str]) -> dict[frozenset[str], str]:
        """The pairs to leave out of checks, with their reasons: ``robot_disabled`` (the robot's own rules for
        its ``robot_links``) changed by this matrix's entries, and its defaults for the pairs of ``bodies`` that
        have no entry (pairs of two robot links always have one)."""
        disabled = dict(robot_disabled)
        for pair, allowed in self.entries.items():
            if allowed:
                disabled.setdefault(pair, ALLOWED_BY_MATRIX)
            else:
                disabled.pop(pair, None)
        if self.defaults:
            links, bodies = set(robot_links), list(dict.fromkeys(bodies))
            for name in self.defaults:
                for other in bodies:
                    pair = frozenset((name, other))
                    if other == name or pair in self.entries or (name in links and other in links):
                        continue
                    if self._default(name, other):
                        disabled.setdefault(pair, ALLOWED_BY_MATRIX)
                    else:
                        disabled.pop(pair, None)
        return disabled

    def as_matrix(self, robot_disabled: Mapping[frozenset[str], str], robot_links: Sequence[str]
                  ) -> tuple[list[str], list[list[bool]], list[str], list[bool]]:
        """(names, rows, default names, default values) of the whole matrix as moveit_msgs/AllowedCollisionMatrix
        carries it: the robot's links with geometry and every name of this matrix, sorted, each pair as it is
        decided (an entry, the robot's rule, a default, else not allowed)."""
        links = set(robot_links)
        names = sorted(links | {name for pair in self.entries for name in pair} | set(self.defaults))
        rows = [[False] * len(names) for _ in names]
        for i, name_i in enumerate(names):
            for j in range(i + 1, len(names)):
                pair = frozenset((name_i, names[j]))
                if pair in self.entries:
                    allowed = self.entries[pair]
                elif name_i in links and names[j] in links:
                    allowed = pair in robot_disabled
                else:
                    allowed = bool(self._default(name_i, names[j]))
                rows[i][j] = rows[j][i] = allowed
        default_names = [name for name in names if name in self.defaults]
        return names, rows, default_names, [self.defaults[name] for name in default_names]
