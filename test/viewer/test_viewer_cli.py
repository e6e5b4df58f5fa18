"""``kinematics-py view``: the documented commands serve the page (a bundled robot; a URDF file with an SRDF, a
scene file and a reachability map), on 127.0.0.1 by default; bad input is one line and exit code 2."""
from __future__ import annotations

import re
import sys
import time
import urllib.request
from pathlib import Path

import numpy as np
import pytest
from conftest import free_port

from kinematics_py.cli import main
from kinematics_py.reachability.grid import VoxelGrid
from kinematics_py.reachability.reach_map import ReachabilityMap
from kinematics_py.robots import bundled_robot_path

SCRIPT = Path(sys.prefix) / "bin" / "kinematics-py"
WAIT_S = 240.0
SCENE = """\
- id: table
  pose: {position: [0.6, 0.0, -0.05]}
  shapes:
    - box: [0.8, 1.2, 0.1]
"""


def served_page(process) -> str:
    """The address the command prints, once the page answers there."""
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        found = re.search(r"kinematics-py view: (http://\S+)", process.stdout())
        if found:
            with urllib.request.urlopen(found.group(1), timeout=30) as page:
                assert page.status == 200 and b"<html" in page.read(4096).lower()
            return found.group(1)
        if process.popen.poll() is not None:
            pytest.fail(f"kinematics-py view exited: {process.output()}")
        time.sleep(0.2)
    pytest.fail(f"kinematics-py view printed no address in {WAIT_S} s: {process.output()}")


def test_view_command_serves_the_documented_robots(python_processes, tmp_path):
    assert SCRIPT.exists(), "reinstall the project (scripts/setup_venv.sh test)"
    port = free_port()
    bundled = python_processes.start(SCRIPT, "view", "--robot", "ur5", "--port", str(port), name="view_ur5")
    assert served_page(bundled) == f"http://127.0.0.1:{port}/"
    python_processes.stop(bundled)

    urdf, srdf = tmp_path / "robot.urdf", tmp_path / "robot.srdf"
    urdf.write_text(bundled_robot_path("ur5").read_text())
    srdf.write_text(bundled_robot_path("ur5", "srdf").read_text())
    (tmp_path / "cell.yaml").write_text(SCENE)
    grid = VoxelGrid.covering((-0.5, -0.5, 0.0), (0.5, 0.5, 1.0), 0.25)
    ReachabilityMap(grid, np.eye(3)[None], np.ones((grid.size, 1), dtype=bool), np.ones(grid.size),
                    np.zeros((grid.size, 6)), np.zeros(grid.size, dtype=int),
                    {"base_frame": "base_link"}).save(tmp_path / "ur5.npz")
    port = free_port()
    described = python_processes.start(SCRIPT, "view", "--urdf", str(urdf), "--srdf", str(srdf), "--scene",
                                       str(tmp_path / "cell.yaml"), "--map", str(tmp_path / "ur5.npz"), "--port",
                                       str(port), name="view_urdf")
    assert served_page(described) == f"http://127.0.0.1:{port}/"
    python_processes.stop(described)


@pytest.mark.parametrize("argv", [["view"], ["view", "--urdf", "no_such_robot.urdf"],
                                  ["view", "--robot", "ur5", "--urdf", "robot.urdf"],
                                  ["view", "--robot", "ur5", "--scene", "missing.yaml"]])
def test_view_command_errors_are_one_line_and_exit_2(argv, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(argv + ["--port", str(free_port())]) == 2
    error = capsys.readouterr().err
    assert error.startswith("kinematics-py view: error:") and "Traceback" not in error


@pytest.mark.parametrize("argv", [["view", "ur5"], ["reach", "ur5", "-o", "x.npz"]])
def test_the_robot_is_given_in_one_form_only(argv, capsys):
    """``--robot NAME`` (or ``--urdf FILE``) in every command: a bare robot name is refused, as argparse refuses."""
    with pytest.raises(SystemExit) as exited:
        main(argv)
    assert exited.value.code == 2 and "unrecognized arguments: ur5" in capsys.readouterr().err
