"""After the set-up's warm-up (``python -m kinematics_py.warm_up``), a fresh kinematics_node compiles no numba kernel
for the first call of any of its services: FK, IK, the planning scene services, state validity with contacts,
collision-aware IK and Cartesian paths, on both bundled robots. (How long those first calls take is measured by
bench/first_call.py.)"""
from __future__ import annotations

import pytest
from conftest import PythonProcesses
from first_calls import answering_services, first_calls
from node_harness import CALL_TIMEOUT_S, NODE_READY_TIMEOUT_S, PROCESSES, serving_node, ur5_parameters
from processes.node_reporting_compiles import COMPILE_REPORT

from kinematics_py.robots import bundled_robot_path

#: The warm-up compiles every kernel when the cache is stale (a kernel module edited since the set-up ran).
WARM_UP_TIMEOUT_S = 1200.0
NODE_REPORTING_COMPILES = PROCESSES / "node_reporting_compiles.py"


@pytest.fixture(scope="module")
def warmed_up(tmp_path_factory):
    """numba's cache as the set-up leaves it (the warm-up compiles only what is missing)."""
    processes = PythonProcesses(tmp_path_factory.mktemp("warm_up"))
    try:
        warm_up = processes.run("-m", "kinematics_py.warm_up", name="warm_up", timeout=WARM_UP_TIMEOUT_S)
        assert warm_up.popen.returncode == 0, warm_up.output()
    finally:
        processes.stop_all()


def robot_parameters(robot: str) -> dict:
    if robot == "ur5":
        return ur5_parameters()
    return {"robot_description": bundled_robot_path(robot).read_text(encoding="utf-8"),
            "robot_description_semantic": bundled_robot_path(robot, "srdf").read_text(encoding="utf-8")}


@pytest.mark.parametrize("robot", ["ur5", "panda"])
def test_first_calls_compile_nothing_after_the_warm_up(warmed_up, python_processes, tmp_path, robot):
    calls = first_calls(robot)
    tip = calls[0].request.fk_link_names[0]
    with serving_node(python_processes, tmp_path, robot_parameters(robot), f"{robot}_first_calls", tip=tip,
                      script=NODE_REPORTING_COMPILES) as node:
        services = answering_services(node.client, NODE_READY_TIMEOUT_S)
        wrong = {}
        for call in calls:
            problem = call.answered_as_expected(node.client.call(services[call.service], call.request, CALL_TIMEOUT_S))
            if problem:
                wrong[call.label] = problem
        assert not wrong, wrong  # each call computed what it was meant to
        compiled = [line for line in node.process.output().splitlines() if COMPILE_REPORT in line]
        assert not compiled, "\n".join(compiled)
