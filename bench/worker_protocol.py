"""The serving side of the benchmark's worker processes (bench/kdl_worker.py, bench/mplib_worker.py): one JSON
object per line on stdin, one reply per line. Standard library only: the workers run in other interpreters than the
benchmark (the system Python for KDL, the bench-peers venv for mplib); bench/peers/worker.py is the other side.

On start a worker writes {"ok": true, <name>: "ready"}, or {"ok": false, "error": ...} when its library cannot be
imported. {"op": "init", ...} builds the served object; every other op needs it. Every failure is a reply with
"ok": false and the error, never a traceback on the replies' stream.
"""
from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any, TextIO


def serve(name: str, import_library: Callable[[], Any], start: Callable[[Any, dict], tuple[Any, dict]],
          operations: dict[str, Callable[[Any, dict], dict]], replies: TextIO | None = None) -> int:
    """Serve ``operations`` (op -> fn(served, request) -> reply fields) on stdin until it closes; ``start(library,
    request)`` answers "init" with (the served object, reply fields). Replies go to ``replies`` (stdout)."""
    replies = replies or sys.stdout

    def reply(message: dict) -> None:
        replies.write(json.dumps(message) + "\n")
        replies.flush()

    try:
        library = import_library()
    except Exception as error:  # ImportError, or a binary that does not load
        reply({"ok": False, "error": f"{name} not importable by {sys.executable}: {type(error).__name__}: {error}"})
        return 1
    reply({"ok": True, name: "ready"})
    served = None
    for line in sys.stdin:
        try:
            request = json.loads(line)
            op = request["op"]
            if op == "init":
                served, fields = start(library, request)
                reply({"ok": True, **fields})
            elif served is None:
                reply({"ok": False, "error": f"{op!r} before 'init'"})
            elif op in operations:
                reply({"ok": True, **operations[op](served, request)})
            else:
                reply({"ok": False, "error": f"unknown op {op!r}; ops are {['init', *operations]}"})
        except Exception as error:  # report, keep serving
            reply({"ok": False, "error": f"{type(error).__name__}: {error}"})
    return 0
