"""One execution at a time per joint: a goal on joints another execution moves is refused with the reason,
goals on disjoint joints run side by side."""
from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterable, Iterator

from ..errors import ErrorCode, RequestError


class JointLocks:
    """The joints being moved, and by which execution."""

    def __init__(self):
        self._lock = threading.Lock()
        self._owners: dict[str, str] = {}

    @contextlib.contextmanager
    def held(self, joints: Iterable[str], owner: str) -> Iterator[None]:
        """Hold ``joints`` for ``owner`` while the block runs; CONTROL_FAILED naming the joints and their
        execution when another holds any of them."""
        joints = tuple(joints)
        with self._lock:
            busy = {joint: self._owners[joint] for joint in joints if joint in self._owners}
            if busy:
                raise RequestError(ErrorCode.CONTROL_FAILED, f"joints {sorted(busy)} are being moved by another "
                                   f"execution ({', '.join(sorted(set(busy.values())))}): one execution at a time "
                                   f"per joint")
            self._owners.update(dict.fromkeys(joints, owner))
        try:
            yield
        finally:
            with self._lock:
                for joint in joints:
                    self._owners.pop(joint, None)

    def busy(self) -> dict[str, str]:
        """joint -> the execution moving it."""
        with self._lock:
            return dict(self._owners)
