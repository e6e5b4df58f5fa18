"""The package builds with colcon as an ament_python package, as in a real ROS 2 workspace.

The bundled interface packages carry COLCON_IGNORE: in a real workspace moveit_msgs and tf2_msgs
come from the distribution, so colcon must see kinematics_py alone.
"""
import os
import shutil
import subprocess
import sys
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[2]
COLCON = Path(sys.executable).parent / "colcon"
NOT_SOURCES = shutil.ignore_patterns(".venv*", "build", "install", "log", ".git", "__pycache__", "*.egg-info",
                                     ".pytest_cache", "results")


def _colcon(workspace: Path, *arguments: str) -> subprocess.CompletedProcess:
    environment = {**os.environ, "AMENT_PREFIX_PATH": sys.prefix}
    return subprocess.run([str(COLCON), *arguments], cwd=workspace, env=environment, capture_output=True,
                          text=True, timeout=300)


def test_colcon_sees_only_kinematics_py_and_installs_it(tmp_path):
    shutil.copytree(REPOSITORY, tmp_path / "src" / "kinematics_py", ignore=NOT_SOURCES)

    listing = _colcon(tmp_path, "list", "--names-only")
    assert listing.returncode == 0, listing.stderr
    assert listing.stdout.split() == ["kinematics_py"]

    build = _colcon(tmp_path, "build", "--packages-select", "kinematics_py")
    assert build.returncode == 0, build.stdout + build.stderr
    share = tmp_path / "install" / "kinematics_py" / "share"
    assert (share / "ament_index" / "resource_index" / "packages" / "kinematics_py").is_file()
    assert (share / "kinematics_py" / "package.xml").is_file()
    installed = list((tmp_path / "install" / "kinematics_py" / "lib").glob("python3*/site-packages/kinematics_py"))
    assert installed, "the Python package was not installed"
    assert (installed[0] / "robots" / "ur5.urdf").is_file()
