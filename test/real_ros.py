"""Which upstream ROS 2 Python packages beyond the PyPI wheels are importable: launch, launch_ros, ros2cli
(`ros2 launch`, `ros2 run`) and tf2_ros. A ROS 2 install has them; the venv has them after
scripts/check_real_ros.sh built them from their sources. Tests that need them carry ``requires_real_ros``:
marked ``real_ros`` and skipped where they are absent."""
import importlib.util

import pytest

REAL_ROS_MODULES = ("launch", "launch_ros", "ros2cli", "tf2_ros")


def _importable(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ImportError:
        return False


#: Whether launch (the ROS one: launch.LaunchDescription), launch_ros, ros2cli and tf2_ros are all importable.
REAL_ROS = all(map(_importable, REAL_ROS_MODULES)) and _importable("launch.launch_description")
TF2_ROS = _importable("tf2_ros")

_SKIP_WITHOUT_REAL_ROS = pytest.mark.skipif(
    not REAL_ROS, reason=f"needs upstream {', '.join(REAL_ROS_MODULES)} (scripts/check_real_ros.sh builds them)")


def requires_real_ros(test):
    """Marks ``test`` ``real_ros`` and skips it where the upstream packages are absent."""
    return pytest.mark.real_ros(_SKIP_WITHOUT_REAL_ROS(test))
