"""Test-session set-up: ROS 2 isolation for every process of the run, and child-process helpers.

At import, before any test module can import rclpy, the session's environment is set so that all
DDS traffic stays on loopback (``ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST``), the run uses its own
``ROS_DOMAIN_ID`` and ROS logs go to a folder of the run instead of ``~/.ros``. Child processes inherit the
same values (fixture ``ros_env``). The domain id (1..99, the first tried derived from the pid) is reserved for
the whole run with a lock file, so two runs on one machine (two worktrees, a CI job beside a developer's
run) never share a domain: their nodes would answer each other's clients.

Notes:
    The ROS 2 wheels install a ``.pth`` hook (ros-wheels-bootstrapper) that re-executes the
    interpreter with ``LD_LIBRARY_PATH`` set and exports ``_ROS_WHEELS_BOOTSTRAP_COMPLETE=1``.
    Children get that guard removed so each interpreter sets its own library path; the re-exec
    keeps the pid, so stopping a child by pid still works.
"""
from __future__ import annotations

import contextlib
import fcntl
import itertools
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
from _pytest.mark.expression import Expression  # pytest's own -m parser (pytest is pinned)

BOOTSTRAP_GUARD = "_ROS_WHEELS_BOOTSTRAP_COMPLETE"
STOP_GRACE_S = 5.0
"""Time a child gets to exit after SIGTERM before it is killed [s]."""

#: Domain ids the test runs take (scripts/check_real_ros.sh's smoke test takes 100..199).
TEST_DOMAIN_IDS = range(1, 100)
DOMAIN_LOCK_DIR = Path(tempfile.gettempdir()) / "kinematics_py-ros-domains"


def reserve_domain_id() -> tuple[int, object]:
    """A ROS_DOMAIN_ID of ``TEST_DOMAIN_IDS`` that no other test run on this machine holds, and the open lock
    file that holds it (an exclusive flock; the system releases it when this process ends, however it ends).
    The search starts at an id derived from the pid, so concurrent runs rarely try the same ones."""
    DOMAIN_LOCK_DIR.mkdir(exist_ok=True)
    with contextlib.suppress(PermissionError):  # another user's runs share the folder
        DOMAIN_LOCK_DIR.chmod(0o1777)
    first = os.getpid() % len(TEST_DOMAIN_IDS)
    for offset in range(len(TEST_DOMAIN_IDS)):
        domain = TEST_DOMAIN_IDS[(first + offset) % len(TEST_DOMAIN_IDS)]
        lock = open(DOMAIN_LOCK_DIR / f"{domain}.lock", "a")  # noqa: SIM115 (held for the whole run)
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:  # held by another run (or not ours to open)
            lock.close()
            continue
        return domain, lock
    raise RuntimeError(f"every ROS_DOMAIN_ID in {TEST_DOMAIN_IDS} is held by another test run "
                       f"(lock files in {DOMAIN_LOCK_DIR})")


RUN_DIR = Path(tempfile.mkdtemp(prefix="kinematics_py-tests-"))
DOMAIN_ID, _DOMAIN_LOCK = reserve_domain_id()
ROS_ENV = {
    "ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST",
    "ROS_DOMAIN_ID": str(DOMAIN_ID),
    "ROS_LOG_DIR": str(RUN_DIR / "ros_log"),
    "ROS_HOME": str(RUN_DIR / "ros_home"),
}
os.environ.update(ROS_ENV)
for _name in ("ROS_LOCALHOST_ONLY", "ROS_STATIC_PEERS"):
    os.environ.pop(_name, None)
os.environ.setdefault("AMENT_PREFIX_PATH", sys.prefix)


def child_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """Environment for a child process: this session's ROS isolation plus ``extra``."""
    env = dict(os.environ)
    env.pop(BOOTSTRAP_GUARD, None)
    env["PYTHONUNBUFFERED"] = "1"
    env["PYTHONFAULTHANDLER"] = "1"  # SIGABRT (``ChildProcess.finish``) prints every thread's stack
    env.update(extra or {})
    return env


@dataclass
class ChildProcess:
    """A started child; its output goes to ``<log_dir>/<name>.{out,err}``."""

    name: str
    popen: subprocess.Popen
    stdout_path: Path
    stderr_path: Path

    def output(self) -> str:
        """Everything the child wrote so far, for assertion messages."""
        return (
            f"--- {self.name} stdout ---\n{self.stdout_path.read_text(errors='replace')}"
            f"--- {self.name} stderr ---\n{self.stderr_path.read_text(errors='replace')}"
        )

    def stdout(self) -> str:
        return self.stdout_path.read_text(errors="replace")

    def finish(self, timeout: float) -> int:
        """The child's exit code once it ends within ``timeout`` [s]; otherwise the test fails with what the child
        wrote and where each of its threads was: SIGABRT makes Python's fault handler print their stacks."""
        try:
            return self.popen.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.popen.pid, signal.SIGABRT)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.popen.wait(timeout=STOP_GRACE_S)
            pytest.fail(f"{self.name} did not finish within {timeout} s; its threads at that moment are at the end "
                        f"of its stderr\n{self.output()}")


class PythonProcesses:
    """Runs Python scripts with this session's interpreter (``sys.executable``) and ROS environment.

    Each child leads its own process group; ``stop_all`` sends SIGTERM to every group, then SIGKILL
    to any still alive after ``STOP_GRACE_S``, so no child or grandchild outlives the test.
    """

    def __init__(self, log_dir: Path):
        self._log_dir = log_dir
        self._children: list[ChildProcess] = []

    def start(self, script: Path | str, *args: str, name: str,
              env: dict[str, str] | None = None) -> ChildProcess:
        """Start ``python script args...`` in the background."""
        stdout_path = self._log_dir / f"{name}.out"
        stderr_path = self._log_dir / f"{name}.err"
        with open(stdout_path, "wb") as out, open(stderr_path, "wb") as err:
            popen = subprocess.Popen(
                [sys.executable, str(script), *args],
                stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                env=child_env(env), start_new_session=True,
            )
        child = ChildProcess(name, popen, stdout_path, stderr_path)
        self._children.append(child)
        return child

    def run(self, script: Path | str, *args: str, name: str, timeout: float,
            env: dict[str, str] | None = None) -> ChildProcess:
        """Run ``python script args...`` to completion; fail the test if it exceeds ``timeout`` [s]."""
        child = self.start(script, *args, name=name, env=env)
        child.finish(timeout)
        return child

    def stop(self, child: ChildProcess) -> None:
        """Terminate the child's process group, then kill it if it does not exit in time."""
        for sig in (signal.SIGTERM, signal.SIGKILL):
            _signal_group(child.popen.pid, sig)
            if _wait_group_gone(child.popen, STOP_GRACE_S):
                return

    def stop_all(self) -> None:
        for child in reversed(self._children):
            self.stop(child)


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pgid, sig)


def _wait_group_gone(leader: subprocess.Popen, timeout: float) -> bool:
    """Reap the group leader and wait until no process of its group is left (True if none)."""
    deadline = time.monotonic() + timeout
    try:
        leader.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        return False
    while True:
        try:
            os.killpg(leader.pid, 0)
        except ProcessLookupError:
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)


@pytest.fixture(scope="session")
def ros_env() -> dict[str, str]:
    """The ROS isolation variables of this run (also set in ``os.environ``)."""
    return dict(ROS_ENV)


@pytest.fixture
def private_domain() -> int:
    """Another ROS_DOMAIN_ID reserved for one test, for programs that use root names (``ros2 launch`` of the
    package's launch file): a foreign program on the run's domain could serve or publish the same names."""
    domain, lock = reserve_domain_id()
    try:
        yield domain
    finally:
        lock.close()


@pytest.fixture
def python_processes(tmp_path: Path):
    """A ``PythonProcesses`` whose children are all stopped when the test ends."""
    processes = PythonProcesses(tmp_path)
    try:
        yield processes
    finally:
        processes.stop_all()


def pytest_report_header(config):
    return (f"ROS isolation: ROS_DOMAIN_ID={ROS_ENV['ROS_DOMAIN_ID']}, discovery LOCALHOST, "
            f"logs in {RUN_DIR}")


def pytest_sessionfinish(session, exitstatus):
    if exitstatus == 0 or not any(RUN_DIR.rglob("*")):
        shutil.rmtree(RUN_DIR, ignore_errors=True)


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    if exitstatus != 0 and RUN_DIR.exists():
        terminalreporter.write_line(f"ROS logs of this run kept in {RUN_DIR}")


ROS_TEST_DIR = Path(__file__).resolve().parent / "ros"


def pytest_collection_modifyitems(items):
    """Mark every test under test/ros/ ``ros``, so ``pytest -m "not ros"`` runs the core suite alone."""
    for item in items:
        if ROS_TEST_DIR in item.path.resolve().parents:
            item.add_marker(pytest.mark.ros)


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """Do not even import test/ros/ (rclpy, *_msgs) when ``-m`` deselects every ``ros`` test.

    So ``pytest -m "not ros"`` needs neither ROS nor the message packages, and proves the core suite does not.
    """
    if collection_path.resolve() == ROS_TEST_DIR and _deselects_every_ros_test(config.getoption("markexpr")):
        return True
    return None


def _deselects_every_ros_test(markexpr: str) -> bool:
    """Whether ``markexpr`` is false for a test marked ``ros``, whichever other markers it has."""
    if not markexpr:
        return False
    try:
        expression = Expression.compile(markexpr)
    except SyntaxError:
        return False  # pytest itself reports the malformed expression
    others = sorted(expression.idents() - {"ros"})
    for present in itertools.product((False, True), repeat=len(others)):
        if expression.evaluate(_has_marker({"ros", *itertools.compress(others, present)})):
            return False
    return True


def _has_marker(names: set[str]):
    """A ``-m`` matcher for a test carrying the markers ``names`` (marker arguments are not compared)."""
    return lambda name, **kwargs: name in names


@pytest.fixture
def target_parses(monkeypatch) -> list:
    """Calls of ``ik.request.target_transforms`` (the one reading of a request's target poses) during the
    test, wherever inside ``kinematics_py.ik`` it is called from: one entry per call."""
    from kinematics_py.ik import request

    calls, original = [], request.target_transforms

    def counting(*args):
        calls.append(args)
        return original(*args)

    for name, module in list(sys.modules.items()):
        if name.startswith("kinematics_py.ik") and getattr(module, "target_transforms", None) is original:
            monkeypatch.setattr(module, "target_transforms", counting)
    return calls


def free_port() -> int:
    """A TCP port free on 127.0.0.1 now (for a server a test starts: the viewer's page)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]
