"""The package's shape: layers, size limits and one exception root, checked on the source itself.

- Only ``kinematics_py/ros/`` imports rclpy, tf2_ros, launch, launch_ros or a ``*_msgs`` package; the rest
  (the ROS-free core) imports with those blocked.
- No module over MAX_MODULE_LINES lines, no class over MAX_CLASS_LINES, no function over MAX_FUNCTION_LINES;
  in ``planning/`` and ``ros/``, no function over MAX_PIPELINE_FUNCTION_LINES (pipelines as short steps).
- Every exception class defined in the package derives from ``KinematicsError``, and no module raises a builtin
  ValueError, TypeError, RuntimeError or KeyError of its own.
- No import ring anywhere (imports under TYPE_CHECKING count); ``ik/`` holds no ContextVar: what changes a
  search travels in its arguments.
- The ROS services stand side by side (none imports another); the group's base placement and the attached-link
  to tip mapping are each written once.
"""
from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
import re
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
QUERIES_LAYER = PACKAGE_DIR / "queries"


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
    """Only ros/, the request model above the core (queries/), planning/ itself, the public API (__init__) and the
    set-up's warm-up (which runs every kind of computation once) import kinematics_py.planning."""
    allowed = {PACKAGE_DIR / "__init__.py", PACKAGE_DIR / "warm_up.py"}
    above = (ROS_LAYER, QUERIES_LAYER, PLANNING_LAYER)
    offenders = [_relative(path) for path in _sources()
                 if path not in allowed and not any(layer in path.parents for layer in above)
                 and _imports_layer(path)]
    assert not offenders, f"modules below the planning layer import it: {offenders}"
    assert _imports_layer(QUERIES_LAYER / "cartesian.py")  # the check sees relative imports


EXECUTION_LAYER = PACKAGE_DIR / "execution"


def test_execution_sits_on_the_model():
    """execution/ (ROS-free) reads the robot model and the bottom layer only: no IK, collision checking, planning,
    robot set-up, viewer or ROS (the ROS layer brings those together)."""
    above = ("kinematics_py.ik", "kinematics_py.collision", "kinematics_py.planning", "kinematics_py.robot_setup",
             "kinematics_py.viewer", "kinematics_py.ros")
    offenders = {_relative(path): layer for path in sorted(EXECUTION_LAYER.rglob("*.py")) for layer in above
                 if _imports_layer(path, layer)}
    assert not offenders, f"execution/ imports layers above the model: {offenders}"
    assert _imports_layer(EXECUTION_LAYER / "trajectory.py", "kinematics_py.model")  # the check sees them


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
        if not info.name.endswith(".__main__"):  # a program: importing it runs it
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


#: Builtin exceptions the package never raises itself: it raises its own (KinematicsError subclasses, some of
#: which are also ValueErrors or KeyErrors), so that a caller catches them all with one except clause. None of
#: them is needed for rclpy's contract (no callback rclpy calls must raise one of these), so no module is exempt.
BUILTINS_NEVER_RAISED = ("ValueError", "TypeError", "RuntimeError", "KeyError")


def test_the_package_raises_no_builtin_error_of_its_own():
    """Errors of the package are KinematicsError subclasses (ParameterError, JointValueError ... which are
    ValueErrors too): a caller catches them all with one except clause."""
    offenders = {_relative(path): sorted(raised & set(BUILTINS_NEVER_RAISED)) for path in _sources()
                 if (raised := _raised_names(ast.parse(path.read_text()))) & set(BUILTINS_NEVER_RAISED)}
    assert not offenders, f"modules raising builtin exceptions themselves: {offenders}"
    for name in BUILTINS_NEVER_RAISED:  # the check sees them, called or not
        assert _raised_names(ast.parse(f"raise {name}('x')")) == {name} == _raised_names(ast.parse(f"raise {name}"))


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


def _package_import_graph(paths: list[Path]) -> dict[str, set[str]]:
    known = {_module_name(path) for path in paths}
    graph = {_module_name(path): _imports_within(path, known) - {_module_name(path)} for path in paths}
    package_of = {name: name.rsplit(".", 1)[0] for name in known}
    for name in graph:  # a package importing its own modules is no ring: they import it first
        graph[name] = {other for other in graph[name] if package_of.get(other) != name}
    return graph


def test_no_import_ring_anywhere():
    """Not even one held together by imports under TYPE_CHECKING, in any part of the package: each layer's data
    types import none of their users (e.g. the IK set-up's builder builds them; collision validity checks need only
    what a checker does, not the checker module)."""
    graph = _package_import_graph(_sources())
    assert not _import_rings(graph), f"import rings: {_import_rings(graph)}"
    assert _import_rings({"a": {"b"}, "b": {"a"}}) == [["a", "b"]]  # the check sees rings
    assert "kinematics_py.ik.plugin" in graph["kinematics_py.queries.ik"]  # ... and relative imports


SERVICES_LAYER = ROS_LAYER / "services"


def test_services_stand_side_by_side():
    """No service module imports another: what they share (the group request, the request context, the request's
    collision checker) lives in modules of its own."""
    services = sorted(SERVICES_LAYER.glob("*_service.py"))
    graph = _package_import_graph(services)
    assert len(services) >= 5, services
    assert not {name: imported for name, imported in graph.items() if imported}, graph


MAX_PIPELINE_FUNCTION_LINES = 60


def test_no_long_function_in_planning_and_ros():
    """planning/ and ros/ read as short steps: no function over MAX_PIPELINE_FUNCTION_LINES lines."""
    offenders = {}
    for path in _sources():
        if PLANNING_LAYER in path.parents or ROS_LAYER in path.parents:
            long = [f"{node.name} ({node.end_lineno - node.lineno + 1} lines)" for node in ast.walk(ast.parse(
                path.read_text())) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
                and node.end_lineno - node.lineno + 1 > MAX_PIPELINE_FUNCTION_LINES]
            if long:
                offenders[_relative(path)] = long
    assert not offenders, f"functions over {MAX_PIPELINE_FUNCTION_LINES} lines: {offenders}"


def _places_matching(pattern: str) -> list[str]:
    regex = re.compile(pattern)
    return [f"{_relative(path)}:{number}" for path in _sources()
            for number, line in enumerate(path.read_text().splitlines(), start=1) if regex.search(line)]


def test_request_set_up_is_written_once():
    """The group base frame's placement (T_base_model) is computed in one place (ros/frames.py, for the group
    request and the servo), and a pose of a link rigidly attached to a tip becomes the tip's pose in one place
    (model.attached_links)."""
    base_placement = _places_matching(r"T_base_model\s*=|invert_transform\([\w.]*poses\[\w*base\w*\]\)")
    assert [place.rsplit(":", 1)[0] for place in base_placement] == ["kinematics_py/ros/frames.py"], \
        base_placement
    link_to_tip = _places_matching(r"invert_transform\(\w+\[link\]\)|inv\(\w+\[link\]\)")
    assert link_to_tip and all(place.startswith("kinematics_py/model/attached_links.py") for place in link_to_tip), \
        link_to_tip


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
    "plan", "PlanOptions", "JointGoal", "PoseGoal", "Approach", "MotionPlan", "PlanningError", "GoalError",
    "StateCheck",
)


def test_public_names_stay_importable_from_the_package():
    missing = [name for name in PUBLIC_NAMES if not hasattr(kinematics_py, name)]
    assert not missing, f"no longer importable from kinematics_py: {missing}"
    assert set(PUBLIC_NAMES) <= set(kinematics_py.__all__)
