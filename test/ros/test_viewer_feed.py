"""The node's page (``ros/viewer_feed``), in this process: it follows the served robot and scene as they are
swapped, draws the answers it is handed, and a handler it watches returns at once even while the page's thread is
busy (the viewer never slows a service)."""
from __future__ import annotations

import threading
import time

import numpy as np
import pytest
from moveit_msgs.srv import GetStateValidity

from kinematics_py import Box, PlanningScene
from kinematics_py.robot_setup import SetupInputs, build_robot_setup
from kinematics_py.robots import bundled_robot_path
from kinematics_py.ros.serving_state import ServiceSettings, ServingState, StateStore
from kinematics_py.ros.topics import viewer_feed
from kinematics_py.ros.topics.viewer_feed import ViewerFeed

WAIT_S = 120.0


class Logger:
    def __init__(self):
        self.lines = []

    def info(self, text):
        self.lines.append(text)

    error = info


def _setup(robot: str):
    return build_robot_setup(SetupInputs(bundled_robot_path(robot).read_text(),
                                         bundled_robot_path(robot, "srdf").read_text()))


def _eventually(condition, what: str):
    deadline = time.monotonic() + WAIT_S
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"the page never showed {what} within {WAIT_S} s")
        time.sleep(0.05)


@pytest.fixture
def store():
    return StateStore(ServingState(ServiceSettings(10.0, "error")))


@pytest.fixture
def feed(store):
    feed = ViewerFeed(store, "127.0.0.1", 0, Logger())
    yield feed
    feed.close()


def test_the_page_follows_robot_swaps_and_scene_updates(store, feed):
    ur5 = _setup("ur5")
    store.change(lambda state: state.with_setup(ur5))
    _eventually(lambda: feed.viewer is not None and feed.viewer.setup is ur5, "the UR5")
    assert feed.url.startswith("http://127.0.0.1:")
    scene = PlanningScene(ur5.model)
    T = np.eye(4)
    T[:3, 3] = (0.45, 0.1, 0.4)
    scene.add_object("table", [Box((0.4, 0.4, 0.4))], pose=T)
    store.change(lambda state: state.with_scene(scene))
    _eventually(lambda: feed.viewer.scene is scene and "table" in feed.viewer.world._objects, "the table")
    panda = _setup("panda")
    store.change(lambda state: state.with_setup(panda))
    _eventually(lambda: feed.viewer.setup is panda and "panda_arm" in feed.viewer.setup.groups, "the Panda")


def test_a_watched_handler_returns_while_the_page_is_busy(store, feed, monkeypatch):
    ur5 = _setup("ur5")
    store.change(lambda state: state.with_setup(ur5))
    _eventually(lambda: feed.viewer is not None, "the UR5")
    release, drawn = threading.Event(), []

    def blocked(viewer, request, response, context):
        release.wait(WAIT_S)
        drawn.append(request)

    monkeypatch.setitem(viewer_feed.DRAWERS, "check_state_validity", blocked)

    class Context:
        state = store.current

    handler = feed.watching("check_state_validity", lambda request, response, context: response)
    for k in range(200):  # all answered while the first one's drawing waits
        response = GetStateValidity.Response(valid=True)
        assert handler(k, response, Context()) is response
    release.set()
    _eventually(lambda: drawn and drawn[-1] == 199, "the newest answer")
    assert len(drawn) <= 2  # only the newest pending answer is drawn, not every one


def test_the_page_follows_an_arm_moving_on_joint_states(store, feed):
    """joint_states of a moving arm (the servo's stand-in controller, or the simulated controllers) move the drawn
    robot, message after message; the same positions again leave an answer drawn since in place."""
    ur5 = _setup("ur5")
    store.change(lambda state: state.with_setup(ur5))
    _eventually(lambda: feed.viewer is not None, "the UR5")
    names = ur5.groups["ur_manipulator"].getJointNames()
    start = np.array([0.3, -1.0, 1.2, -0.4, 0.5, -0.6])
    drawn_tips = []
    for k in range(5):
        q = start + 0.1 * k
        feed.joint_states({**dict(zip(names, q)), "a_joint_of_another_robot": 1.0})
        _eventually(lambda q=q: np.allclose([feed.viewer.joint_values[n] for n in names], q), f"joint_states {k}")
        expected = ur5.model.link_poses(dict(zip(names, q)))["tool0"][:3, 3]
        drawn = np.array(feed.viewer.robot._frames["tool0"].position)
        np.testing.assert_allclose(drawn, expected, atol=1e-6)
        drawn_tips.append(drawn)
    assert np.linalg.norm(drawn_tips[-1] - drawn_tips[0]) > 0.05  # it moved on the page
    answer = dict(zip(names, start - 0.2))
    feed.viewer.show_configuration(answer)  # as a compute_ik answer is drawn
    feed.joint_states(dict(zip(names, start + 0.4)))  # the arm has not moved since
    assert feed._worker.wait_idle(WAIT_S)
    assert np.allclose([feed.viewer.joint_values[n] for n in names], start - 0.2)
