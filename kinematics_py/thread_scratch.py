"""Scratch arrays kept per thread for the compiled kernels (workspaces, search trees): made once, reused by every
call of the thread (allocating a search's 2 MB of trees per plan cost about 26 us), never shared between threads."""
from __future__ import annotations

import threading
from collections.abc import Callable, Hashable
from typing import TypeVar

#: Scratch kept per thread and owner, at most this many (then all are dropped and made again as needed).
MAX_KEPT = 16

_KEPT = threading.local()
T = TypeVar("T")


def thread_scratch(owner: str, key: Hashable, make: Callable[[], T]) -> T:
    """The calling thread's scratch of ``owner`` (a module's name) for ``key``, made by ``make()`` the first time. A
    key naming an object by ``id()`` must have that object kept in the scratch (so that no other takes its id)."""
    kept = getattr(_KEPT, "kept", None)
    if kept is None:
        kept = _KEPT.kept = {}
    entries = kept.setdefault(owner, {})
    found = entries.get(key)
    if found is None:
        if len(entries) >= MAX_KEPT:
            entries.clear()
        found = entries[key] = make()
    return found
