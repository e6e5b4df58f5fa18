"""numba's on-disk cache stays valid across modules: editing a kernel module that another compiled module
calls into recompiles the caller (``kinematics_py.compiled``), so nobody has to touch files away. The set-up's
warm-up (``python -m kinematics_py.warm_up``) reaches every kernel that Python code calls, so that none is first
compiled inside a request, where its seconds come out of the request's time."""
from __future__ import annotations

import ast
import json
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
#: Prints, after the warm-up, which of the kernels named on stdin (module, name) have no compiled signature.
UNREACHED_SCRIPT = textwrap.dedent("""
    import importlib, json, sys
    from kinematics_py.warm_up import main
    kernels = json.loads(sys.stdin.read())
    main()
    print(json.dumps([[module, name] for module, name in kernels
                      if not getattr(importlib.import_module(module), name).signatures]))
""")
#: The warm-up compiles every kernel when the cache is stale (a kernel module edited since the set-up ran).
WARM_UP_TIMEOUT_S = 1200.0
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


def _is_kernel(function: ast.FunctionDef) -> bool:
    return any(isinstance(name, ast.Name) and name.id == "compiled_kernel"
               for decorator in function.decorator_list
               for name in [decorator.func if isinstance(decorator, ast.Call) else decorator])


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE_DIR.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def kernels_python_calls() -> set[tuple[str, str]]:
    """(module, name) of every module-level compiled kernel of the package that a function which is not a kernel
    calls: by its name (defined in or imported into the caller's module), or as an attribute of its module."""
    trees = {_module_name(path): (ast.parse(path.read_text(encoding="utf-8")), path.name == "__init__.py")
             for path in sorted(PACKAGE_DIR.rglob("*.py"))}
    kernels = {(module, node.name) for module, (tree, _) in trees.items()
               for node in tree.body if isinstance(node, ast.FunctionDef) and _is_kernel(node)}
    called = set()
    for module, (tree, is_package) in trees.items():
        names = {name: (module, name) for owner, name in kernels if owner == module}
        modules = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level:
                package = module.split(".")[:len(module.split(".")) + int(is_package) - node.level]
                source = ".".join(package + ([node.module] if node.module else []))
                for alias in node.names:
                    if (source, alias.name) in kernels:
                        names[alias.asname or alias.name] = (source, alias.name)
                    modules[alias.asname or alias.name] = f"{source}.{alias.name}"
        for function in ast.walk(tree):
            if isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef) and not _is_kernel(function):
                for call in (node.func for node in ast.walk(function) if isinstance(node, ast.Call)):
                    if isinstance(call, ast.Name) and call.id in names:
                        called.add(names[call.id])
                    elif isinstance(call, ast.Attribute) and isinstance(call.value, ast.Name) and (
                            modules.get(call.value.id), call.attr) in kernels:
                        called.add((modules[call.value.id], call.attr))
    return called


def test_the_warm_up_compiles_every_kernel_that_python_code_calls():
    """A kernel first compiled inside a request costs seconds of its time (a plan's repair ran out of it so)."""
    kernels = sorted(kernels_python_calls())
    assert {("kinematics_py.collision.sphere_kernels", "chain_states_free"),
            ("kinematics_py.planning.straight_timing", "timed_moves"),
            ("kinematics_py.model.tree_kernels", "joint_motion")} <= set(kernels)
    result = subprocess.run([sys.executable, "-c", UNREACHED_SCRIPT], input=json.dumps(kernels), capture_output=True,
                            text=True, timeout=WARM_UP_TIMEOUT_S)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout.strip().splitlines()[-1]) == []
