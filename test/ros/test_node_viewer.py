"""The node's page in the browser (``viewer_port``): served for the robot the node serves, it shows the state of
the last check_state_validity (colliding links red, nothing red for a valid state) and the last Cartesian path;
a node without the parameter serves no page. Node in its own process, headless chromium on the page."""
from __future__ import annotations

import re

import numpy as np
import pytest
from browser import NO_RED, RED_PIXELS, ROBOT_PIXELS, Screen, module_browser  # noqa: F401
from conftest import free_port
from moveit_msgs.srv import GetCartesianPath
from node_harness import (
    CALL_TIMEOUT_S,
    NodeUnderTest,
    module_processes,  # noqa: F401
    serving_node,
    state_validity_request,
    ur5_parameters,
    wait_for,
)

from kinematics_py.ros.demo.client import cartesian_path_request, fk_request
from kinematics_py.ros.messages.conversions import transform_from_pose_msg

JOINTS = ("shoulder_pan_joint", "shoulder_lift_joint", "elbow_joint", "wrist_1_joint", "wrist_2_joint",
          "wrist_3_joint")
#: The forearm folded back onto the base and upper arm: a self-collision of many links.
Q_FOLDED = (0.0, -0.5, 2.9, 0.0, 0.0, 0.0)
Q_FREE = (0.0, -1.2, 1.5, -1.9, -1.57, 0.0)
WAIT_S = 180.0


@pytest.fixture(scope="module")
def viewer_node(module_processes, tmp_path_factory):  # noqa: F811
    port = free_port()
    with serving_node(module_processes, tmp_path_factory.mktemp("viewer"), ur5_parameters(viewer_port=port),
                      "viewer_node") as node:
        said = wait_for(lambda: re.search(r"viewer: (http://\S+)", node.process.output()), WAIT_S,
                        "the node to log its page's address", node.process)
        node.url = said.group(1)
        yield node


def test_the_page_is_served_on_the_loopback_address_of_viewer_port(viewer_node):
    assert re.fullmatch(r"http://127\.0\.0\.1:\d+/", viewer_node.url)


def test_the_page_shows_the_last_validity_check_and_cartesian_path(viewer_node: NodeUnderTest, module_browser,  # noqa: F811
                                                                    tmp_path):
    screen = Screen(module_browser, viewer_node.url)
    try:
        screen.wait_for(lambda image: screen.robot(image).sum() > ROBOT_PIXELS, "the node's robot",
                        tmp_path / "robot.png")
        answer = viewer_node.state_validity(state_validity_request(dict(zip(JOINTS, Q_FOLDED))))
        assert not answer.valid
        screen.wait_for(lambda image: screen.red(image).sum() > RED_PIXELS, "the colliding links red",
                        tmp_path / "folded.png")
        screen.page.get_by_text(re.compile(r"check_state_validity .*invalid")).wait_for(timeout=WAIT_S * 1000)
        assert viewer_node.state_validity(state_validity_request(dict(zip(JOINTS, Q_FREE)))).valid
        screen.wait_for(lambda image: screen.red(image).sum() < NO_RED, "no red for the valid state",
                        tmp_path / "free.png")

        start = dict(zip(JOINTS, Q_FREE))
        (pose,) = viewer_node.fk(fk_request(["tool0"], start)).pose_stamped
        T_end = transform_from_pose_msg(pose.pose)
        T_end[:3, 3] += (0.0, 0.0, -0.2)
        cartesian = viewer_node.client.client(GetCartesianPath, f"{viewer_node.namespace}/compute_cartesian_path")
        response = viewer_node.client.call(cartesian, cartesian_path_request("ur_manipulator", [T_end], 0.01, start),
                                           CALL_TIMEOUT_S)
        assert response.fraction == pytest.approx(1.0)
        points = len(response.solution.joint_trajectory.points)
        screen.page.get_by_text(f"compute_cartesian_path (ur_manipulator): {points} points").wait_for(
            timeout=WAIT_S * 1000)
    finally:
        screen.close()
    viewer_node.assert_alive()


def test_no_page_without_viewer_port(module_processes, tmp_path):  # noqa: F811
    with serving_node(module_processes, tmp_path, ur5_parameters(), "no_viewer_node") as node:
        assert "viewer:" not in node.process.output()
        assert np.isfinite(node.fk(fk_request(["tool0"], dict(zip(JOINTS, Q_FREE)))).pose_stamped[0].pose.position.x)
