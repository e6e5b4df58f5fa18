"""A GetPositionFK service in one process answers a client in another over DDS on loopback."""
import json
import re
import subprocess
import sys
from pathlib import Path

from conftest import child_env
from moveit_msgs.msg import MoveItErrorCodes

PROCESSES = Path(__file__).parent / "processes"
SERVICE = "/kinematics_py_test/fk_echo"
#: How long the client waits for the server to be discovered [s] (a loaded machine starts the server slowly).
DISCOVERY_WAIT_S = 60.0
CLIENT_TIMEOUT_S = DISCOVERY_WAIT_S + 60.0
SERVER_LIFETIME_S = 2 * CLIENT_TIMEOUT_S


def test_session_keeps_ros_traffic_local(ros_env):
    assert ros_env["ROS_AUTOMATIC_DISCOVERY_RANGE"] == "LOCALHOST"
    assert 1 <= int(ros_env["ROS_DOMAIN_ID"]) <= 100
    assert Path(ros_env["ROS_LOG_DIR"]).is_absolute()


#: A test session's set-up in a child: prints the domain id it reserved, holds it until its stdin closes.
HOLD_A_DOMAIN = """
import shutil, sys
sys.path.insert(0, sys.argv[1])
import conftest
print(conftest.DOMAIN_ID, flush=True)
sys.stdin.read()
shutil.rmtree(conftest.RUN_DIR, ignore_errors=True)
"""


def test_concurrent_runs_get_distinct_domain_ids(ros_env):
    """Runs started at once (here: this one and two more holding theirs) never share a ROS_DOMAIN_ID."""
    runs = [subprocess.Popen([sys.executable, "-c", HOLD_A_DOMAIN, str(Path(__file__).parents[1])],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=child_env())
            for _ in range(2)]
    try:
        domains = [int(run.stdout.readline()) for run in runs]
    finally:
        for run in runs:
            run.communicate(timeout=60)
    assert len({int(ros_env["ROS_DOMAIN_ID"]), *domains}) == 3, (ros_env["ROS_DOMAIN_ID"], domains)


def test_fk_service_round_trip_between_processes(python_processes):
    server = python_processes.start(
        PROCESSES / "fk_echo_server.py", "--service", SERVICE,
        "--lifetime", str(SERVER_LIFETIME_S), name="server")
    client = python_processes.run(
        PROCESSES / "fk_client.py", "--service", SERVICE, "--wait", str(DISCOVERY_WAIT_S),
        name="client", timeout=CLIENT_TIMEOUT_S)

    assert client.popen.returncode == 0, client.output() + server.output()
    with_links, without_links = json.loads(client.stdout())

    assert with_links["error_code"] == MoveItErrorCodes.SUCCESS
    assert with_links["fk_link_names"] == ["shoulder_link", "tool0"]
    assert with_links["frame_ids"] == ["world", "world"]
    assert with_links["positions"] == [[0.0, 0.0, 0.75], [1.0, 0.0, 0.75]]
    assert with_links["message"] == "echoed 2 links"
    assert with_links["source"] == "fk_echo_server"

    assert without_links["error_code"] == MoveItErrorCodes.INVALID_LINK_NAME
    assert without_links["fk_link_names"] == []
    assert without_links["message"] == "fk_link_names is empty"

    assert server.popen.poll() is None, "server stopped while serving\n" + server.output()


def test_ik_callbacks_learn_how_long_their_request_was_under_way(python_processes):
    """kinematics_node's executor takes IK requests itself to keep the DDS source timestamp: the callback sees
    the request's transit (the budget counts from the client's send), between 0 and the trusted bound."""
    from kinematics_py.ros.transport.request_transit import TRUSTED_TRANSIT_S

    service = SERVICE + "_transit"
    server = python_processes.start(PROCESSES / "fk_echo_server.py", "--service", service, "--report-transit",
                                     "--lifetime", str(SERVER_LIFETIME_S), name="transit_server")
    client = python_processes.run(PROCESSES / "fk_client.py", "--service", service, "--wait", str(DISCOVERY_WAIT_S),
                                  name="transit_client", timeout=CLIENT_TIMEOUT_S)
    assert client.popen.returncode == 0, client.output() + server.output()
    answers = json.loads(client.stdout())
    transits = [float(re.search(r"transit ([0-9.]+) s$", answer["message"]).group(1)) for answer in answers]
    assert answers[0]["message"].startswith("echoed 2 links")
    assert any(transit > 0.0 for transit in transits), transits
    assert all(0.0 <= transit <= TRUSTED_TRANSIT_S for transit in transits), transits
