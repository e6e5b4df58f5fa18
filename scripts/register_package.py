"""Register the editable install of kinematics_py in a venv the way colcon installs an ament_python package,
so that `ros2 run` and `ros2 launch` find it: python scripts/register_package.py <venv>

- <venv>/share/ament_index/resource_index/packages/kinematics_py and every other data file setup.py lists
  (share/kinematics_py/package.xml, launch/, config/), as symlinks into the source tree (edits show at once,
  as with the editable install itself);
- <venv>/lib/kinematics_py/<script> for every console script of setup.py, linked to <venv>/bin/<script>
  (which stay where they are);
- <venv>/lib/python3.X/site-packages/kinematics_py_ament_prefix.pth, which appends the venv to
  AMENT_PREFIX_PATH for the venv's interpreter (the venv is an ament prefix: the ROS 2 wheels install there).
"""
from __future__ import annotations

import runpy
import sys
import sysconfig
from pathlib import Path
from unittest import mock

ROOT = Path(__file__).resolve().parents[1]
PTH_NAME = "kinematics_py_ament_prefix.pth"
PTH_LINE = ("import os, sys; os.environ['AMENT_PREFIX_PATH'] = os.pathsep.join(dict.fromkeys([*filter(None, "
            "os.environ.get('AMENT_PREFIX_PATH', '').split(os.pathsep)), sys.prefix]))\n")


def setup_arguments() -> dict:
    """The keyword arguments setup.py gives setuptools.setup."""
    captured = {}
    with mock.patch("setuptools.setup", lambda **kwargs: captured.update(kwargs)):
        runpy.run_path(str(ROOT / "setup.py"), run_name="__main__")
    return captured


def _link(link: Path, target: Path) -> None:
    link.parent.mkdir(parents=True, exist_ok=True)
    if link.is_symlink() or link.exists():
        link.unlink()
    link.symlink_to(target)


def register(venv: Path) -> list[Path]:
    """Create the links and files above; returns what was created."""
    arguments = setup_arguments()
    package = arguments["name"]
    created = []
    for folder, files in arguments["data_files"]:
        for file in files:
            link = venv / folder / Path(file).name
            _link(link, ROOT / file)
            created.append(link)
    for line in arguments["entry_points"]["console_scripts"]:
        script = line.split("=")[0].strip()
        link = venv / "lib" / package / script
        _link(link, venv / "bin" / script)
        created.append(link)
    site_packages = Path(sysconfig.get_paths(vars={"base": str(venv), "platbase": str(venv)})["purelib"])
    pth = site_packages / PTH_NAME
    pth.parent.mkdir(parents=True, exist_ok=True)
    pth.write_text(PTH_LINE, encoding="utf-8")
    created.append(pth)
    return created


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    for path in register(Path(sys.argv[1]).absolute()):
        print(path)
