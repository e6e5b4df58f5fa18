"""README.md and docs/: their Python examples run, their links lead somewhere, and every shell command they
show is run by a test (named in COMMANDS) or COMMANDS says why it cannot run here.

Examples that talk to a running node (they import rclpy) are only compiled here: running them needs a
node, and the core suite starts none.
"""
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPOSITORY = Path(__file__).resolve().parents[1]
README = REPOSITORY / "README.md"
DOCS = sorted((REPOSITORY / "docs").glob("*.md"))
DOCUMENTS = [README, *DOCS]
PYTHON_BLOCK = re.compile(r"^```python\n(.*?)^```", re.MULTILINE | re.DOTALL)
LINK = re.compile(r"\]\(([^)\s]+)\)")
HEADING = re.compile(r"^#+ (.+)$", re.MULTILINE)


def _name(document: Path) -> str:
    return str(document.relative_to(REPOSITORY))


def _anchor(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


@pytest.mark.parametrize("document", DOCUMENTS, ids=_name)
def test_python_examples_run(document):
    """The blocks of one document run in order in one namespace (later blocks use earlier names)."""
    blocks = PYTHON_BLOCK.findall(document.read_text())
    namespace = {"__name__": "__doc_example__"}
    for index, block in enumerate(blocks):
        code = compile(block, f"{_name(document)} python block {index + 1}", "exec")
        if "rclpy" not in block:
            exec(code, namespace)


def _resolves(document: Path, target: str) -> bool:
    """Whether a relative link of ``document`` names an existing file (and, in Markdown, heading)."""
    path, _, anchor = target.partition("#")
    linked = (document.parent / path).resolve() if path else document
    if not linked.exists():
        return False
    return not anchor or linked.suffix != ".md" or anchor in map(_anchor, HEADING.findall(linked.read_text()))


@pytest.mark.parametrize("document", DOCUMENTS, ids=_name)
def test_relative_links_resolve(document):
    links = [target for target in LINK.findall(document.read_text()) if not re.match(r"[a-z]+://", target)]
    broken = [target for target in links if not _resolves(document, target)]
    assert not broken, f"{_name(document)}: links to nothing: {broken}"


def test_docs_are_linked_from_the_readme():
    readme = README.read_text()
    unlinked = [_name(document) for document in DOCS if f"({_name(document)})" not in readme]
    assert not unlinked, f"not linked from README.md: {unlinked}"


# ------------------------------------------------------------------------------------------ shell commands
ROS2_LAUNCH_TEST = "test/ros/test_node_launch.py::test_ros2_launch_serves_and_stops_on_sigint"
#: The start of every shell command the documents show -> the test that runs it ("file::function"), or why
#: no test runs it here. A new command in a document needs an entry (test_every_documented_command_...).
COMMANDS = {
    "make run": "test/ros/test_node_launch.py::test_make_run_demo_once",
    "make test": "not run by a test: it is the test run (CI: .ci/run)",
    "make lint": "not run by a test: part of the test run (CI: .ci/run)",
    "make bench": "not run here: benchmarks, minutes each",
    "make clean": "not run here: deletes the venv the tests run in",
    "make check-real-ros": "not run here: needs upstream ROS 2 sources (scripts/check_real_ros.sh)",
    "scripts/setup_venv.sh": "not run by a test: CI's make test runs it first",
    "scripts/check_real_ros.sh": "not run here: needs upstream ROS 2 sources; it runs this suite",
    ".venv/bin/python bench/": "not run here: benchmarks, minutes each",
    ".venv/bin/python -m pytest -m \"not ros\"": "test/test_markers.py::test_core_suite_collects_with_ros_blocked",
    ".venv/bin/python -m pytest": "not run by a test: it is the test run",
    ".venv/bin/ruff check": "not run by a test: part of the test run (make lint)",
    ".venv/bin/python examples/solver_demo.py": "test/test_docs.py::test_solver_demo_runs",
    ".venv/bin/kinematics-py view": "test/viewer/test_viewer_cli.py::test_view_command_serves_the_documented_robots",
    ".venv/bin/python examples/with_pymoveit2.py":
        "test/ros/test_pymoveit2.py::test_pymoveit2_example_runs_unchanged_against_the_node",
    ".venv/bin/python examples/move_with_pymoveit2.py":
        "test/ros/test_pymoveit2_execution.py::test_move_to_configuration_ends_at_the_goal",
    ".venv/bin/pip install pymoveit2": "not run by a test: requirements/test.txt installs the same pin",
    ".venv/bin/python scripts/interface_type_hashes.py": "not run here: needs upstream's definition files "
                                                         "(test/ros/upstream_interfaces.txt holds its output)",
    ".venv/bin/kinematics_node --parameters-markdown":
        "test/ros/test_node_launch.py::test_documented_parameter_tables_are_generated_from_the_specs",
    ".venv/bin/kinematics_description_publisher --urdf robot.urdf":
        "test/ros/test_node_launch.py::test_running_it_on_your_robot_works_for_a_urdf_with_colons_in_comments",
    ".venv/bin/kinematics_node --ros-args -p base_frame:=base_link":
        "test/ros/test_node_launch.py::test_running_it_on_your_robot_works_for_a_urdf_with_colons_in_comments",
    ".venv/bin/kinematics_node --ros-args --params-file": "test/ros/node_harness.py::start_node",
    "ros2 launch kinematics_py kinematics.launch.py": ROS2_LAUNCH_TEST,
    "ros2 run kinematics_py kinematics_node": ROS2_LAUNCH_TEST,
    "ros2 param describe": "not run here: needs ros2cli (test_node_parameters reads the same descriptions)",
    "ros2 topic echo /diagnostics": "not run here: needs ros2cli (test_node_planning_scene subscribes to /diagnostics)",
    "ros2 topic pub --once /reachability_map":
        "test/ros/test_node_reachability.py::test_node_publishes_the_markers_of_a_map_on_request",
    "colcon build --packages-select kinematics_py":
        "test/packaging/test_colcon_build.py::test_colcon_sees_only_kinematics_py_and_installs_it",
    "python3 -m kinematics_py.warm_up": "test/ros/test_node_launch.py::test_ros2_launch_from_a_colcon_workspace",
    "rosdep install": "not run here: no rosdep database or /opt/ros on this machine",
    "source ": "not run here: a ROS 2 install's or workspace's set-up script",
    "cd ": "not a command of the project",
}
SHELL_START = re.compile(r"(python3 -m |make |\.venv/bin/|ros2 \S+ \S|scripts/|colcon |source |cd |rosdep "
                         r"|kinematics_\w+ )")
CODE_SPAN = re.compile(r"`([^`\n]+)`")


def documented_commands(document: Path) -> list[str]:
    """Shell commands in the indented blocks and code spans of ``document`` (Python blocks left out)."""
    text = re.sub(r"^```.*?^```", "", document.read_text(), flags=re.MULTILINE | re.DOTALL)
    lines = [line for block in re.findall(r"(?:^    .*\n)+", text, flags=re.MULTILINE)
             for line in block.replace("\\\n", " ").splitlines()]
    lines += CODE_SPAN.findall(text)
    commands = (line.split("  #")[0].strip() for line in lines)
    return [command for command in commands if SHELL_START.match(command) and " " in command]


def _entry(command: str) -> str | None:
    starts = sorted((start for start in COMMANDS if command.startswith(start)), key=len, reverse=True)
    return COMMANDS[starts[0]] if starts else None


@pytest.mark.parametrize("document", DOCUMENTS, ids=_name)
def test_every_documented_command_is_run_by_a_test_or_says_why_not(document):
    missing = [command for command in documented_commands(document) if _entry(command) is None]
    assert not missing, f"{_name(document)}: commands no test runs and COMMANDS does not explain: {missing}"


@pytest.mark.parametrize("start", sorted(COMMANDS))
def test_the_tests_named_for_commands_exist(start):
    entry = COMMANDS[start]
    if entry.startswith("not "):
        return
    path, function = entry.split("::")
    assert re.search(rf"^def {function}\(", (REPOSITORY / path).read_text(), re.MULTILINE), entry


def test_solver_demo_runs():
    """library.md's `.venv/bin/python examples/solver_demo.py`, with a small batch."""
    run = subprocess.run([sys.executable, str(REPOSITORY / "examples" / "solver_demo.py"), "--poses", "20"],
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "batch: 20/20 poses solved and verified" in run.stdout, run.stdout
