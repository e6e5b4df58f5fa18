"""numba's on-disk cache stays valid across modules: editing a kernel module that another compiled module
calls into recompiles the caller (``kinematics_py.compiled``), so nobody has to touch files away."""
from __future__ import annotations

import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import kinematics_py
from kinematics_py.compiled import KERNEL_MARKER, PackageCacheLocator, kernel_sources_stamp

PACKAGE_DIR = Path(kinematics_py.__file__).resolve().parent
#: The IK task error (ik/task_error.py) compiles model/chain_kernels.chain_pose into itself.
TASK_ERROR_SCRIPT = textwrap.dedent("""
    import numpy as np
    from kinematics_py import RobotModel
    from kinematics_py.ik.problem import IkProblem
    from kinematics_py.robots import bundled_robot_path
    model = RobotModel.from_urdf_file(bundled_robot_path("ur5"))
    problem = IkProblem.build(model, "base_link", ["tool0"])
    print(repr(float(problem.task_errors(np.zeros(problem.dof), np.eye(4)[None])[0, 0])))
""")
#: An edit of the callee that moves every chain tip 1 m along the base x axis.
CALLEE_EDIT = ("    _apply_fixed(R, p, segments[m], scratch)\n    return True\n",
               "    _apply_fixed(R, p, segments[m], scratch)\n    p[0] += 1.0\n    return True\n")


def _position_error(package_root: Path) -> float:
    result = subprocess.run([sys.executable, "-c", TASK_ERROR_SCRIPT], capture_output=True, text=True, timeout=600,
                            cwd=package_root, env={"PYTHONPATH": str(package_root), "PATH": "/usr/bin:/bin"})
    assert result.returncode == 0, result.stderr
    return float(result.stdout.strip().splitlines()[-1])


def test_every_kernel_module_uses_the_package_cache():
    modules = sorted(p.relative_to(PACKAGE_DIR).as_posix() for p in PACKAGE_DIR.rglob("*.py")
                     if KERNEL_MARKER in p.read_text(encoding="utf-8"))
    assert {"model/chain_kernels.py", "ik/kernels.py", "ik/task_error.py", "collision/kernels.py"} <= set(modules)
    for path in PACKAGE_DIR.rglob("*.py"):
        assert "@njit" not in path.read_text(encoding="utf-8"), f"{path}: use @compiled_kernel, not numba.njit"
    from numba.core.caching import CacheImpl

    assert CacheImpl._locator_classes[0] is PackageCacheLocator
    assert len(kernel_sources_stamp()) == 32


def test_editing_a_callee_recompiles_its_callers(tmp_path):
    """A copy of the package: run a kernel (cached on disk), edit the kernel it calls in another module, run
    again in a fresh process: the answer must follow the edit, not come from the stale cache."""
    shutil.copytree(PACKAGE_DIR, tmp_path / "kinematics_py", ignore=shutil.ignore_patterns("__pycache__"))
    before = _position_error(tmp_path)
    assert _position_error(tmp_path) == before  # cached: same answer from a second process
    callee = tmp_path / "kinematics_py" / "model" / "chain_kernels.py"
    source = callee.read_text(encoding="utf-8")
    assert source.count(CALLEE_EDIT[0]) == 1
    callee.write_text(source.replace(*CALLEE_EDIT), encoding="utf-8")
    after = _position_error(tmp_path)
    assert abs(after - before) > 0.1, (before, after)
