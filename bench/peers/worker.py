"""The benchmark's side of a peer that runs in a process of its own (another interpreter or venv), speaking JSON
lines (bench/worker_protocol.py is the worker's side)."""
from __future__ import annotations

import json
import subprocess


class JsonLinesWorker:
    """A worker process: ``call(op=..., ...)`` sends one request and returns its reply. ``unavailable`` is raised
    (with ``hint``, how to install the peer) when the worker cannot start its library, exits or answers an error."""

    def __init__(self, command: list[str], name: str, unavailable: type[Exception], hint: str, *,
                 quiet: bool = False):
        self.name, self.unavailable = name, unavailable
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.DEVNULL if quiet else None, text=True, bufsize=1)
        hello = self._receive()
        if not hello.get("ok"):
            self.close()
            raise unavailable(f"{hello.get('error')}; {hint}")

    def _receive(self) -> dict:
        line = self.process.stdout.readline()
        if not line:
            raise self.unavailable(f"{self.name} worker exited (code {self.process.poll()})")
        return json.loads(line)

    def call(self, **request) -> dict:
        self.process.stdin.write(json.dumps(request) + "\n")
        answer = self._receive()
        if not answer.get("ok"):
            raise self.unavailable(f"{self.name} worker: {answer.get('error')}")
        return answer

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.stdin.close()
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
