"""The viewer's answers without a browser: IK branches and failure reasons, collision highlights, paths, maps,
thinning of large scenes, and a server whose memory stays bounded however often it redraws."""
from __future__ import annotations

import numpy as np
import pytest
from viewer_fixtures import buffered_messages, obstacle_checker, ur5_setup

from kinematics_py import compute_cartesian_path
from kinematics_py.collision.octree import Octree
from kinematics_py.reachability.grid import VoxelGrid
from kinematics_py.reachability.reach_map import ReachabilityMap
from kinematics_py.viewer import RobotViewer, ShownPath
from kinematics_py.viewer.ik_target import NO_BRANCH
from kinematics_py.viewer.latest import LatestWins
from kinematics_py.viewer.world_layer import MAX_DISPLAY_VOXELS, thinned

WAIT_S = 60.0


@pytest.fixture(scope="module")
def setup():
    return ur5_setup()


@pytest.fixture
def viewer(setup):
    viewer = RobotViewer(setup, port=0, log=lambda message: None)
    yield viewer
    viewer.close()


def test_binds_to_the_loopback_address_by_default(viewer):
    assert viewer.url.startswith("http://127.0.0.1:")


def test_the_sliders_move_the_robot_as_fk_says(viewer, setup):
    viewer._sliders["shoulder_pan_joint"].value = 1.0
    expected = setup.model.link_poses({**viewer.joint_values, "shoulder_pan_joint": 1.0})[viewer.plugin.getTipFrame()]
    assert viewer.joint_values["shoulder_pan_joint"] == pytest.approx(1.0)
    np.testing.assert_allclose(viewer.tip_pose(), expected, atol=1e-12)


def test_ik_lists_every_branch_and_shows_a_reaching_one(viewer, setup):
    viewer.show_configuration({"shoulder_lift_joint": -1.2, "elbow_joint": 1.0, "wrist_2_joint": 0.5})
    target = viewer.tip_pose()
    viewer.show_configuration({"shoulder_lift_joint": -1.0, "elbow_joint": 0.8})
    viewer.show_ik_target(target)
    assert viewer.ik.wait_idle(WAIT_S)
    answer = viewer.ik.answer
    assert len(answer.branches) == 8 and not answer.reason
    np.testing.assert_allclose(viewer.tip_pose(), target, atol=1e-6)
    assert len(viewer.ik.branches.options) == 8
    assert len({branch.posture for branch in answer.branches}) == 8  # every closed-form posture once
    assert answer.branches[0].same_posture and "same posture" in viewer.ik.branches.options[0]
    viewer.ik.branches.value = viewer.ik.branches.options[3]  # another branch, on click
    np.testing.assert_allclose(viewer.tip_pose(), target, atol=1e-6)
    shown = [viewer.joint_values[name] for name in viewer.plugin.getJointNames()]
    assert shown == pytest.approx(list(answer.branches[3].joint_values.values()))


def test_an_unreachable_target_shows_the_reason(viewer):
    target = np.eye(4)
    target[:3, 3] = (3.0, 0.0, 0.5)
    viewer.show_ik_target(target)
    assert viewer.ik.wait_idle(WAIT_S)
    assert viewer.ik.answer.chosen == -1 and "NO_IK_SOLUTION" in viewer.ik.answer.reason
    assert viewer.ik.branches.options == (NO_BRANCH,)
    assert "No valid solution" in viewer.ik._status.content


def test_colliding_bodies_are_red_only_in_collision(viewer, setup):
    viewer.show_scene(obstacle_checker(setup))
    viewer.show_configuration({"shoulder_lift_joint": 0.0})
    assert not viewer.report.in_collision and not viewer.robot.highlighted and not viewer.world.highlighted
    viewer.show_configuration({"shoulder_lift_joint": -0.3})
    assert viewer.report.in_collision and viewer.report.contacts
    assert "table" in viewer.world.highlighted and viewer.robot.highlighted
    assert "in collision" in viewer._status.content
    viewer.show_configuration({"shoulder_lift_joint": 0.0})
    assert not viewer.robot.highlighted and not viewer.world.highlighted


def test_a_cartesian_path_plays_on_the_timeline_with_its_stop(viewer, setup):
    plugin = viewer.plugin
    start = [0.0, -1.2, 1.0, -1.2, -1.57, 0.0]
    ok, (pose,) = plugin.getPositionFK([plugin.getTipFrame()], start)
    T = np.eye(4)
    T[:3, 3] = pose.position
    T[:3, :3] = setup.model.link_poses(dict(zip(plugin.getJointNames(), start)))[plugin.getTipFrame()][:3, :3]
    far = T.copy()
    far[0, 3] += 5.0  # far out of reach: the path stops on the way
    path = compute_cartesian_path(plugin, start, [far], 0.01)
    assert path.stop_reason
    viewer.show_cartesian_path(path)
    slider = viewer.paths.slider
    assert slider.max == len(path.positions) - 1
    slider.value = slider.max
    last = dict(zip(path.joint_names, path.positions[-1]))
    assert all(viewer.joint_values[name] == pytest.approx(value) for name, value in last.items())
    assert "Stopped" in viewer.paths._summary.content


def test_a_failed_motion_plan_shows_its_reason(viewer):
    class Failed:  # the fields of planning.motion.MotionPlan the viewer reads
        joint_names = ("shoulder_pan_joint",)
        positions = np.empty((0, 0))
        success = False
        message = "every goal collides"

        class error_code:
            name = "GOAL_IN_COLLISION"

    viewer.show_motion_plan(Failed())
    assert "GOAL_IN_COLLISION: every goal collides" in viewer.paths._summary.content


def test_a_reachability_map_is_drawn_by_fraction_and_sliced(viewer):
    grid = VoxelGrid.covering((-0.5, -0.5, 0.0), (0.5, 0.5, 1.0), 0.1)
    reachable = np.zeros((grid.size, 4), dtype=bool)
    reachable[::3, :2] = True
    reachable[::6] = True
    reach_map = ReachabilityMap(grid, np.tile(np.eye(3), (4, 1, 1)), reachable, np.zeros(grid.size),
                                np.full((grid.size, 6), np.nan), np.zeros(grid.size, dtype=int))
    viewer.show_reach_map(reach_map)
    assert len(viewer.reach._nodes) == 1
    viewer.reach.set_slice("z", 3)
    assert len(viewer.reach._nodes) == 1 and "reached" in viewer.reach._summary.content


def test_large_octrees_are_thinned_with_a_note(viewer, setup):
    scene = obstacle_checker(setup).scene
    side = int(np.ceil((2 * MAX_DISPLAY_VOXELS) ** (1 / 3)))
    points = np.stack(np.meshgrid(*[(np.arange(side) + 0.5) * 0.01] * 3), axis=-1).reshape(-1, 3) + (1.0, 1.0, 0.0)
    scene.set_octomap(Octree.from_points(points, 0.01))
    viewer.show_scene(setup.collision.checker.for_scene(scene))
    assert f"{MAX_DISPLAY_VOXELS} of its {side ** 3} voxels drawn" in viewer._notes.content
    assert len(thinned(10, 20)) == 10 and len(thinned(100, 20)) == 20


def test_memory_stays_bounded_over_many_redraws(viewer, setup):
    checker = obstacle_checker(setup)
    path = ShownPath("p", viewer.plugin.getJointNames(), np.linspace(0, 1, 50)[:, None] * np.ones(6), "stopped")

    def cycle(k: int) -> None:
        viewer.show_scene(checker)
        viewer.show_configuration({"shoulder_lift_joint": -0.3 * (k % 2)})
        viewer.show_path(path)
        viewer.show_ik_target(viewer.tip_pose())
        assert viewer.ik.wait_idle(WAIT_S)

    cycle(0)
    cycle(1)
    before = buffered_messages(viewer)
    for k in range(30):
        cycle(k)
    assert buffered_messages(viewer) <= before


def test_a_robot_swap_replaces_the_robot(viewer, setup):
    other = ur5_setup()
    viewer.show_setup(other)
    assert viewer.setup is other and viewer.robot.setup is other


def test_latest_wins_keeps_only_the_newest_item_per_kind():
    seen, release = [], __import__("threading").Event()
    worker = LatestWins(lambda kind, item: (release.wait(WAIT_S), seen.append((kind, item))), "test-latest")
    try:
        worker.offer("a", 0)
        for k in range(1, 100):
            worker.offer("a", k)
        worker.offer("b", "x")
        release.set()
        assert worker.wait_idle(WAIT_S)
        assert seen[-2:] == [("a", 99), ("b", "x")] and len(seen) <= 3
    finally:
        worker.close()


def test_urdf_visuals_are_drawn_in_their_colours_and_links_without_by_their_collision_shapes(tmp_path):
    import trimesh

    from kinematics_py.collision.geometry import Box as CollisionBox
    from kinematics_py.collision.geometry import Placed
    from kinematics_py.viewer.shapes import LINK_COLOR, link_meshes

    trimesh.creation.icosphere(radius=0.1).export(tmp_path / "ball.stl")
    urdf = """<robot name="r"><material name="blue"><color rgba="0 0 1 1"/></material>
      <link name="a"><visual><geometry><box size="1 1 1"/></geometry><material name="blue"/></visual>
        <visual><geometry><mesh filename="ball.stl"/></geometry>
          <material name="x"><color rgba="1 0 0 1"/></material></visual></link>
      <link name="b"/>
      <joint name="j" type="fixed"><parent link="a"/><child link="b"/></joint></robot>"""
    meshes, note = link_meshes(urdf, {"b": (Placed(CollisionBox((0.1, 0.1, 0.1))),)}, base_dir=tmp_path)
    assert not note
    assert [mesh.color for mesh in meshes["a"]] == [(0, 0, 255), (255, 0, 0)]
    assert len(meshes["a"][1].faces) == len(trimesh.creation.icosphere(radius=0.1).faces)
    assert [mesh.color for mesh in meshes["b"]] == [LINK_COLOR]
    broken = urdf.replace("ball.stl", "missing.stl")
    meshes, note = link_meshes(broken, {"b": (Placed(CollisionBox((0.1, 0.1, 0.1))),)}, base_dir=tmp_path)
    assert "visual geometry not shown" in note and "missing.stl" in note and list(meshes) == ["b"]


@pytest.mark.parametrize("path", ["/etc/passwd", "/../../../../etc/passwd", "/%2e%2e/%2e%2e/etc/passwd",
                                  "/robot/base_link/visual_0"])
def test_the_page_serves_no_file_of_the_machine(viewer, path):
    import urllib.error
    import urllib.request

    try:
        with urllib.request.urlopen(viewer.url.rstrip("/") + path, timeout=30) as answer:
            body = answer.read()
    except urllib.error.HTTPError as error:
        body = error.read()
    assert b"root:" not in body  # at most viser's own client page


def test_a_planned_motion_plays_on_the_timeline(viewer, setup):
    from kinematics_py.planning.goals import JointGoal
    from kinematics_py.planning.motion import plan
    from kinematics_py.planning.options import PlanOptions

    plugin = viewer.plugin
    start, goal = [0.0, -1.2, 1.5, -1.9, -1.57, 0.0], [1.0, -1.0, 1.2, -1.6, -1.57, 0.5]
    motion = plan(plugin, setup.collision.checker, start, [JointGoal(goal)], PlanOptions(planning_time=5.0))
    assert motion.success, motion.message
    viewer.show_motion_plan(motion)
    slider = viewer.paths.slider
    assert slider.max == len(motion.positions) - 1 and "planned motion" in viewer.paths._summary.content
    slider.value = slider.max
    assert [viewer.joint_values[name] for name in plugin.getJointNames()] == pytest.approx(goal)


#: The links a sphere held at tool0 touches.
TOUCHING = ("wrist_2_link", "wrist_3_link")


def test_attached_objects_move_with_their_link_and_turn_red_in_collision(viewer, setup):
    from kinematics_py import PlanningScene, Sphere

    scene = PlanningScene(setup.model)
    scene.attach_object("tool", "tool0", TOUCHING, shapes=[Sphere(0.05)])
    viewer.show_scene(setup.collision.checker.for_scene(scene))
    viewer.show_configuration({"shoulder_lift_joint": -1.0})
    assert "tool" in viewer.world._objects and not viewer.world.highlighted
    tip = viewer.tip_pose()[:3, 3]
    inside = obstacle_checker(setup, centre=tuple(tip), edge=0.2).scene
    inside.attach_object("tool", "tool0", TOUCHING, shapes=[Sphere(0.05)])
    viewer.show_scene(setup.collision.checker.for_scene(inside))
    assert "tool" in viewer.world.highlighted and "table" in viewer.world.highlighted
