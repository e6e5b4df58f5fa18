"""scripts/register_package.py registers the venv install as colcon does, so `ros2 run` / `ros2 launch` find
kinematics_py there: the ament index entry, share/kinematics_py/, executables under lib/kinematics_py/, and
the venv on AMENT_PREFIX_PATH of its interpreter."""
import os
import runpy
import sys
from pathlib import Path

import pytest

REPOSITORY = Path(__file__).resolve().parents[2]
REGISTER = runpy.run_path(str(REPOSITORY / "scripts" / "register_package.py"))
SCRIPTS = ("kinematics_node", "kinematics_description_publisher", "kinematics_demo_client")


def _assert_registered(prefix: Path) -> None:
    assert (prefix / "share" / "ament_index" / "resource_index" / "packages" / "kinematics_py").is_file()
    share = prefix / "share" / "kinematics_py"
    for file in ("package.xml", "launch/kinematics.launch.py", "config/kinematics.yaml"):
        assert (share / file).read_text() == (REPOSITORY / Path(file).name if file == "package.xml"
                                              else REPOSITORY / file).read_text(), file
    for script in SCRIPTS:
        executable = prefix / "lib" / "kinematics_py" / script
        assert os.access(executable, os.X_OK), executable
        assert executable.resolve() == (prefix / "bin" / script).resolve()


@pytest.fixture
def venv(tmp_path):
    """A directory laid out as a venv with the console scripts in bin/, registered."""
    (tmp_path / "bin").mkdir()
    for script in SCRIPTS:
        (tmp_path / "bin" / script).write_text("#!/bin/sh\n")
        (tmp_path / "bin" / script).chmod(0o755)
    REGISTER["register"](tmp_path)
    return tmp_path


def test_register_lays_out_the_prefix_like_colcon(venv):
    _assert_registered(venv)
    REGISTER["register"](venv)  # again: replaces, never fails on existing links
    _assert_registered(venv)


@pytest.mark.ros
def test_ament_index_finds_the_registered_package(venv, monkeypatch):
    from ament_index_python.packages import get_package_prefix, get_package_share_directory

    monkeypatch.setenv("AMENT_PREFIX_PATH", str(venv))
    assert Path(get_package_prefix("kinematics_py")) == venv
    assert Path(get_package_share_directory("kinematics_py")) == venv / "share" / "kinematics_py"


def test_the_pth_appends_the_venv_to_ament_prefix_path_once(venv, monkeypatch):
    (pth,) = venv.glob("lib/python3*/site-packages/kinematics_py_ament_prefix.pth")
    line = pth.read_text()
    assert line.startswith("import "), "a .pth line runs only when it starts with 'import'"
    for given, expected in (("", [sys.prefix]), ("/opt/ros/x", ["/opt/ros/x", sys.prefix]),
                            (f"{sys.prefix}:/opt/ros/x", [sys.prefix, "/opt/ros/x"])):
        monkeypatch.setenv("AMENT_PREFIX_PATH", given)
        exec(line)
        assert os.environ["AMENT_PREFIX_PATH"].split(os.pathsep) == expected


def test_this_venv_is_registered_when_setup_venv_made_it():
    if not (Path(sys.prefix) / ".kinematics_py-stamps").is_dir():
        pytest.skip(f"{sys.prefix} was not made by scripts/setup_venv.sh")
    _assert_registered(Path(sys.prefix))
