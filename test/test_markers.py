"""The ``ros`` marker: ``pytest -m "not ros"`` selects the core suite and runs it without ROS.

Every test under test/ros/ is marked ``ros`` (test/conftest.py); a ``-m`` expression that deselects them all
also keeps pytest from importing test/ros/, so the core suite runs where rclpy and the message packages are
missing, and a test outside test/ros/ that needs ROS fails there instead of passing by accident.
"""
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from conftest import _deselects_every_ros_test

REPOSITORY = Path(__file__).resolve().parents[1]
COLLECT_TIMEOUT_S = 300.0


@pytest.mark.parametrize("markexpr, deselects", [
    ("not ros", True),
    ("not ros and not ros", True),
    ("ros and not ros", True),
    ("not ros or ros", False),
    ("ros", False),
    ("", False),
    ("parametrize", False),        # a ros test may be parametrized
    ("not parametrize", False),    # or not
    ("not ros and parametrize", True),
    ("not (ros or", False),        # malformed: left to pytest to report
])
def test_which_expressions_deselect_every_ros_test(markexpr, deselects):
    assert _deselects_every_ros_test(markexpr) is deselects


def test_core_suite_collects_with_ros_blocked():
    """`pytest -m "not ros"` collects the core tests and nothing under test/ros/, importing no ROS module."""
    script = textwrap.dedent("""
        import importlib.abc, sys
        class BlockRos(importlib.abc.MetaPathFinder):
            def find_spec(self, name, path=None, target=None):
                root = name.split('.')[0]
                if root in ('rclpy', 'tf2_ros', 'launch', 'launch_ros') or root.endswith('_msgs') \\
                        or name.startswith('kinematics_py.ros'):
                    raise ImportError('blocked: ' + name)
        sys.meta_path.insert(0, BlockRos())
        import pytest
        sys.exit(pytest.main(['--collect-only', '-q', '-p', 'no:cacheprovider', '-m', 'not ros']))
    """)
    result = subprocess.run([sys.executable, "-c", script], cwd=REPOSITORY, capture_output=True, text=True,
                            timeout=COLLECT_TIMEOUT_S)
    assert result.returncode == 0, result.stdout + result.stderr
    collected = [line for line in result.stdout.splitlines() if "::" in line]
    assert collected, result.stdout
    assert not [line for line in collected if line.startswith("test/ros/")]
    assert any(line.startswith("test/ik/") for line in collected)
