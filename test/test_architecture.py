"""The package's shape: layers, size limits and one exception root, checked on the source itself.

- Only ``kinematics_py/ros/`` imports rclpy, tf2_ros, launch, launch_ros or a ``*_msgs`` package; the rest
  (the ROS-free core) imports with those blocked.
- No module over MAX_MODULE_LINES lines, no class over MAX_CLASS_LINES, no function over MAX_FUNCTION_LINES.
- Every exception class defined in the package derives from ``KinematicsError``, and no module raises a bare
  ValueError.
- ``ik/`` has no import ring (imports under TYPE_CHECKING count) and no ContextVar: what changes a search
  travels in its arguments.
"""
from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import kinematics_py
from kinematics_py.errors import KinematicsError

PACKAGE_DIR = Path(kinematics_py.__file__).resolve().parent
ROS_LAYER = PACKAGE_DIR / "ros"
MAX_MODULE_LINES = 600
MAX_CLASS_LINES = 300
MAX_FUNCTION_LINES = 100
ROS_ROOTS = ("rclpy", "tf2_ros", "launch", "launch_ros")


def _sources() -> list[Path]:
    return sorted(PACKAGE_DIR.rglob("*.py"))


def _is_ros_module(name: str) -> bool:
    root = name.split(".")[0]
    return root in ROS_ROOTS or root.endswith("_msgs")


def _imported_modules(tree: ast.AST) -> set[str]:
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module)
    return names


def _relative(path: Path) -> str:
    return str(path.relative_to(PACKAGE_DIR.parent))


def test_only_the_ros_layer_imports_ros():
    offenders = {}
    for path in _sources():
        if ROS_LAYER in path.parents:
            continue
        ros_imports = sorted(name for name in _imported_modules(ast.parse(path.read_text())) if _is_ros_module(name))
        if ros_imports:
            offenders[_relative(path)] = ros_imports
    assert not offenders, f"ROS imports outside kinematics_py/ros/: {offenders}"


def test_core_imports_with_ros_blocked():
    """Every module outside kinematics_py.ros imports with rclpy, tf2_ros, launch* and every *_msgs blocked."""
    script = textwrap.dedent("""
        import importlib, importlib.abc, pkgutil, sys
        class Block(importlib.abc.MetaPathFinder):
            def find_spec(self, name, path=None, target=None):
                root = name.split('.')[0]
                if root in ('rclpy', 'tf2_ros', 'launch', 'launch_ros') or root.endswith('_msgs'):
                    raise ImportError('blocked: ' + name)
        sys.meta_path.insert(0, Block())
        import kinematics_py
        for info in pkgutil.walk_packages(kinematics_py.__path__, 'kinematics_py.'):
            if not info.name.startswith('kinematics_py.ros'):
                importlib.import_module(info.name)
        print('ok')
    """)
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"


PLANNING_LAYER = PACKAGE_DIR / "planning"


def _imports_layer(path: Path, layer: str = "kinematics_py.planning") -> bool:
    """True if the module at ``path`` imports ``layer`` (default kinematics_py.planning; absolutely or
    relatively)."""
    package = path.relative_to(PACKAGE_DIR.parent).parent.parts
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package[:len(package) - node.level + 1] if node.level else ()
            module = ".".join((*base, *(node.module.split(".") if node.module else ())))
            names = [module] + [f"{module}.{alias.name}" for alias in node.names]
        else:
            continue
        if any(name == layer or name.startswith(f"{layer}.") for name in names):
            return True
    return False


def test_planning_is_a_layer_above_ik_and_collision():
    """Only ros/, planning/ itself, the public API (__init__) and the set-up's warm-up (which runs every kind of
    computation once) import kinematics_py.planning."""
    allowed = {PACKAGE_DIR / "__init__.py", PACKAGE_DIR / "warm_up.py"}
    offenders = [_relative(path) for path in _sources()
                 if path not in allowed and ROS_LAYER not in path.parents and PLANNING_LAYER not in path.parents
                 and _imports_layer(path)]
    assert not offenders, f"modules below the planning layer import it: {offenders}"
    assert _imports_layer(ROS_LAYER / "cartesian_path_service.py")  # the check sees relative imports


VIEWER_LAYER = PACKAGE_DIR / "viewer"


def test_the_viewer_is_a_layer_on_top_of_the_core():
    """Only ros/ (the node's viewer_port), the viewer itself and the command line (cli.py) import
    kinematics_py.viewer: the core never depends on the page that shows it."""
    allowed = {PACKAGE_DIR / "cli.py"}
    offenders = [_relative(path) for path in _sources()
                 if path not in allowed and ROS_LAYER not in path.parents and VIEWER_LAYER not in path.parents
                 and _imports_layer(path, "kinematics_py.viewer")]
    assert not offenders, f"modules below the viewer import it: {offenders}"
    assert _imports_layer(PACKAGE_DIR / "cli.py", "kinematics_py.viewer")  # the check sees relative imports


SERVO_LAYER = PACKAGE_DIR / "servo"


def test_servo_is_a_layer_above_ik_beside_planning():
    """Only ros/ and servo/ itself import kinematics_py.servo; servo/ imports neither planning/, viewer/ nor
    collision/ (the collision checker reaches it as a value, as it reaches planning/)."""
    offenders = [_relative(path) for path in _sources()
                 if ROS_LAYER not in path.parents and SERVO_LAYER not in path.parents
                 and _imports_layer(path, "kinematics_py.servo")]
    assert not offenders, f"modules below the servo layer import it: {offenders}"
    below = [_relative(path) for path in SERVO_LAYER.rglob("*.py")
             for layer in ("planning", "viewer", "collision") if _imports_layer(path, f"kinematics_py.{layer}")]
    assert not below, f"servo/ modules importing planning/, viewer/ or collision/: {below}"
    assert _imports_layer(SERVO_LAYER / "core.py", "kinematics_py.ik")  # the check sees relative imports


def _too_long(tree: ast.AST) -> list[str]:
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            limit = MAX_CLASS_LINES
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            limit = MAX_FUNCTION_LINES
        else:
            continue
        lines = node.end_lineno - node.lineno + 1
        if lines > limit:
            found.append(f"{node.name} ({lines} lines > {limit})")
    return found


def test_size_limits():
    offenders = {}
    for path in _sources():
        text = path.read_text()
        problems = _too_long(ast.parse(text))
        lines = text.count("\n") + 1
        if lines > MAX_MODULE_LINES:
            problems.insert(0, f"module ({lines} lines > {MAX_MODULE_LINES})")
        if problems:
            offenders[_relative(path)] = problems
    assert not offenders, f"over the size limits: {offenders}"


def _package_modules():
    for info in pkgutil.walk_packages(kinematics_py.__path__, "kinematics_py."):
        yield importlib.import_module(info.name)


@pytest.mark.ros
def test_every_exception_derives_from_kinematics_error():
    """Imports every module (the ROS layer too: its exceptions count)."""
    exceptions = {}
    for module in _package_modules():
        for name, value in vars(module).items():
            if inspect.isclass(value) and issubclass(value, BaseException) and value.__module__ == module.__name__:
                exceptions[f"{module.__name__}.{name}"] = value
    assert len(exceptions) >= 10, sorted(exceptions)  # the walk found the package's exceptions
    outside = sorted(name for name, cls in exceptions.items() if not issubclass(cls, KinematicsError))
    assert not outside, f"exceptions outside the KinematicsError tree: {outside}"


def _raised_names(tree: ast.AST) -> set[str]:
    """Names of the exceptions ``raise`` statements raise (``raise X(...)`` or ``raise X``)."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Raise) and node.exc is not None:
            raised = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
            if isinstance(raised, ast.Name):
                names.add(raised.id)
    return names


def test_the_package_raises_no_bare_value_error():
    """Errors of the package are KinematicsError subclasses (ParameterError, JointValueError ... which are
    ValueErrors too): a caller catches them all with one except clause."""
    offenders = [_relative(path) for path in _sources() if "ValueError" in _raised_names(ast.parse(path.read_text()))]
    assert not offenders, f"modules raising ValueError itself: {offenders}"
    assert "ValueError" in _raised_names(ast.parse("raise ValueError('x')"))  # the check sees them


IK_LAYER = PACKAGE_DIR / "ik"


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE_DIR.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports_within(path: Path, known: set[str]) -> set[str]:
    """The modules of ``known`` that ``path`` imports, at the top, in functions or under TYPE_CHECKING alike."""
    package = _module_name(path).split(".")
    if path.name != "__init__.py":
        package = package[:-1]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            candidates = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package[:len(package) - node.level + 1] if node.level else []
            module = ".".join([*base, *(node.module.split(".") if node.module else [])])
            candidates = [f"{module}.{alias.name}" for alias in node.names] + [module]
        else:
            continue
        for name in candidates:
            if name in known:
                found.add(name)
                break  # ``from .x import y``: the submodule x.y if there is one, else x
    return found


def _import_rings(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (or a module importing itself)."""
    index, low, stack, on_stack, rings, counter = {}, {}, [], set(), [], [0]

    def visit(name: str) -> None:
        index[name] = low[name] = counter[0]
        counter[0] += 1
        stack.append(name)
        on_stack.add(name)
        for other in graph[name]:
            if other not in index:
                visit(other)
                low[name] = min(low[name], low[other])
            elif other in on_stack:
                low[name] = min(low[name], index[other])
        if low[name] == index[name]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == name:
                    break
            if len(component) > 1 or name in graph[name]:
                rings.append(sorted(component))

    for name in sorted(graph):
        if name not in index:
            visit(name)
    return rings


def test_ik_has_no_import_ring():
    """Not even one held together by imports under TYPE_CHECKING: the set-up's data types import none of their
    users, and one builder module builds them."""
    paths = sorted(IK_LAYER.rglob("*.py"))
    known = {_module_name(path) for path in paths}
    graph = {_module_name(path): _imports_within(path, known) - {_module_name(path)} for path in paths}
    package_of = {name: name.rsplit(".", 1)[0] for name in known}
    for name in graph:  # a package importing its own modules is no ring: they import it first
        graph[name] = {other for other in graph[name] if package_of.get(other) != name}
    assert not _import_rings(graph), f"import rings inside ik/: {_import_rings(graph)}"
    assert _import_rings({"a": {"b"}, "b": {"a"}}) == [["a", "b"]]  # the check sees rings


def test_ik_holds_no_context_variables():
    """Values that change what a search does (the caller's deadline, its stop hook) are arguments."""
    offenders = [_relative(path) for path in sorted(IK_LAYER.rglob("*.py"))
                 if "contextvars" in _imported_modules(ast.parse(path.read_text()))]
    assert not offenders, f"ik/ modules importing contextvars: {offenders}"


#: Names users import from ``kinematics_py`` itself (issue 8: the redesign must not break their code).
PUBLIC_NAMES = (
    "KinematicsPlugin", "KinematicsQueryOptions", "IKResult", "IKDiagnostics", "JointLimitViolation", "Pose",
    "RobotModel", "SemanticModel", "Group", "EndEffector", "Chain", "ErrorCode", "KinematicsResultCode",
    "DiscretizationMethod", "Verdict", "SolverParameters", "CollisionChecker", "CollisionReport", "Contact",
    "BodyType", "PlanningScene", "CollisionObjectUpdate", "AttachedObjectUpdate", "Operation", "Box", "Sphere",
    "Cylinder", "Cone", "Mesh", "Plane", "Placed", "propose_disabled_pairs", "KinematicsError", "UrdfError",
    "SrdfError", "UnknownLinkError", "UnknownJointError", "UnknownGroupError", "ChainError", "JointValueError",
    "ParameterError", "GeometryError", "MeshLoadError", "SceneError", "RequestError",
)


def test_public_names_stay_importable_from_the_package():
    missing = [name for name in PUBLIC_NAMES if not hasattr(kinematics_py, name)]
    assert not missing, f"no longer importable from kinematics_py: {missing}"
    assert set(PUBLIC_NAMES) <= set(kinematics_py.__all__)
