"""What kinematics_node's requests read, in-process (no ROS process started): ServingState, StateStore and
JointPositions change only by whole swaps, a new robot keeps the world of the old one, and what requests read with a
new robot is ready before it serves."""
from __future__ import annotations

import threading

import numpy as np
import pytest

from kinematics_py.collision.geometry import Box
from kinematics_py.collision.octree import OCTOMAP_ID, Octree
from kinematics_py.geometry.transforms import make_transform
from kinematics_py.robot_setup import SetupInputs, build_robot_setup
from kinematics_py.robots import bundled_robot_path
from kinematics_py.ros.messages.robot_state import JointPositions
from kinematics_py.ros.serving_state import ServiceSettings, ServingState, StateStore, carried_over
from kinematics_py.ros.setup_updates import SetupUpdates

THREADS = 8
CHANGES_PER_THREAD = 200


def setup_of(robot: str, **fields):
    return build_robot_setup(SetupInputs(bundled_robot_path(robot).read_text(),
                                         bundled_robot_path(robot, "srdf").read_text(), **fields))


@pytest.fixture(scope="module")
def ur5():
    return setup_of("ur5")


@pytest.fixture
def serving(ur5) -> ServingState:
    state = ServingState(ServiceSettings(10.0, "error")).with_setup(ur5)
    scene = state.scene.copy()
    scene.add_object("table", [Box((1.0, 1.0, 0.1))], pose=make_transform(None, (0.5, 0.0, -0.1)))
    scene.attach_object("tool", "tool0", shapes=[Box((0.05, 0.05, 0.05))])
    return state.with_scene(scene)


def test_the_checker_is_bound_to_the_state_scene(serving):
    assert serving.checker.scene is serving.scene
    assert set(serving.scene.world_objects) == {"table"} and set(serving.scene.attached_objects) == {"tool"}


def test_the_same_robot_keeps_the_scene(serving, ur5):
    again = build_robot_setup(SetupInputs(ur5.inputs.urdf, ur5.inputs.srdf, group_parameters={
        "ur_manipulator": {"solve_mode": "distance"}}), ur5)
    after = serving.with_setup(again)
    assert after.scene is serving.scene and carried_over(serving, after) == ""
    assert after.setup is again and after.checker.scene is serving.scene


def test_a_new_robot_keeps_the_world_objects_and_drops_the_attached_ones(serving):
    panda = setup_of("panda")
    after = serving.with_setup(panda)
    assert after.scene.robot_model is panda.model and after.checker.scene is after.scene
    assert set(after.scene.world_objects) == {"table"} and not after.scene.attached_objects
    assert np.allclose(after.scene.world_objects["table"].T_parent_object,
                       serving.scene.world_objects["table"].T_parent_object)
    assert carried_over(serving, after) == ("planning scene of the new robot description: world objects ['table'] "
                                            "kept, ['tool'] dropped (attached objects are dropped)")
    assert set(serving.scene.world_objects) == {"table"} and set(serving.scene.attached_objects) == {"tool"}, \
        "the old state is unchanged"


def test_a_new_robot_keeps_the_octomap_point_clouds_and_scene_settings(serving, ur5):
    scene = serving.scene.copy()
    scene.set_octomap(Octree.from_points([[0.5, 0.0, 0.5], [0.6, 0.0, 0.5]], 0.05))
    scene.add_point_cloud("scan", [[0.0, 0.5, 0.5]], 0.05)
    scene.change_settings(name="cell", link_padding={"tool0": 0.01}, object_colors={"table": (1.0, 0.0, 0.0, 1.0)})
    before = serving.with_scene(scene)
    panda = setup_of("panda")
    after = before.with_setup(panda)
    assert set(after.scene.world_objects) == {"table", "scan", OCTOMAP_ID}
    assert after.scene.world_objects[OCTOMAP_ID] is scene.world_objects[OCTOMAP_ID]
    settings = after.scene.settings
    assert settings.name == "cell" and dict(settings.object_colors) == {"table": (1.0, 0.0, 0.0, 1.0)}
    assert dict(settings.link_padding) == {}, "the UR5's tool0 is not a Panda link"
    assert after.checker.scene is after.scene
    assert carried_over(before, after) == ("planning scene of the new robot description: world objects ['table', "
                                           f"'{OCTOMAP_ID}', 'scan'] kept, ['tool'] dropped (attached objects are "
                                           "dropped)")


def test_concurrent_changes_are_never_lost(ur5):
    store = StateStore(ServingState(ServiceSettings(10.0, "error"), problem=""))

    def change():
        for _ in range(CHANGES_PER_THREAD):
            store.change(lambda state: state.with_problem(state.problem + "x"))

    threads = [threading.Thread(target=change) for _ in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(store.current.problem) == THREADS * CHANGES_PER_THREAD


def test_joint_states_merge_without_losing_updates():
    positions = JointPositions()
    seen = positions.current

    def publish(index: int):
        for step in range(CHANGES_PER_THREAD):
            positions.update([f"joint_{index}_{step}", "shared"], [float(step), float("nan")])

    threads = [threading.Thread(target=publish, args=(index,)) for index in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(positions.current) == THREADS * CHANGES_PER_THREAD, "non-finite positions are skipped"
    assert positions.current["joint_3_7"] == 7.0
    assert not seen, "a mapping once read never changes"
    with pytest.raises(TypeError):
        positions.current["joint_0_0"] = 1.0


class _Log:
    def __init__(self):
        self.lines = []

    def info(self, line):
        self.lines.append(line)

    error = warning = info


def test_what_requests_read_with_a_new_set_up_is_ready_before_it_serves():
    """``SetupUpdates`` calls ``on_installing`` under the store's lock before the swap (the node starts its
    simulated joints there: a request that reads the new robot reads their positions too), ``on_served`` after."""
    urdf, srdf = bundled_robot_path("ur5").read_text(), bundled_robot_path("ur5", "srdf").read_text()
    store = StateStore(ServingState(ServiceSettings(10.0, "error")))
    positions, seen = JointPositions(), []

    def installing(setup):
        assert store.lock._is_owned()  # noqa: SLF001 (RLock's own check: held by this thread)
        seen.append(("installing", store.current.setup, setup))
        positions.update(["shoulder_pan_joint"], [0.5])

    def served(setup):
        seen.append(("served", store.current.setup, setup))

    updates = SetupUpdates(store, lambda changes: SetupInputs(urdf, srdf), _Log(), served, installing)
    updates.serve("test", wait=None)
    (first, before, setup), (second, after, same) = seen
    assert (first, before, second) == ("installing", None, "served")
    assert after is setup and same is setup and store.current.setup is setup
    assert positions.current["shoulder_pan_joint"] == 0.5
