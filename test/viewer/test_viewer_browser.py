"""The viewer in a real browser (headless chromium, WebGL in software): what a person sees on the page.

- the robot is drawn where forward kinematics puts it, for two configurations;
- a colliding link (and the object it hits) is red, and nothing is red while the state is valid;
- a path's frames advance the robot along it on the timeline.

Each check polls screenshots until the page shows it (generous waits, no timing asserts). With
KINEMATICS_PY_SCREENSHOTS=folder the collision and the Cartesian-path screenshots are saved there (docs/).
"""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
from browser import NO_RED, RED_PIXELS, ROBOT_PIXELS, Screen, module_browser, project, scene_mask  # noqa: F401
from scipy.ndimage import binary_dilation
from viewer_fixtures import obstacle_checker, ur5_setup

from kinematics_py import compute_cartesian_path
from kinematics_py.viewer import RobotViewer
from kinematics_py.viewer.shapes import display_mesh

SCREENSHOTS = os.environ.get("KINEMATICS_PY_SCREENSHOTS")
#: A predicted point of the robot is on it when a drawn robot pixel lies within this many pixels [px].
MATCH_PX = 4
#: The fraction of the predicted points that must be on the drawn robot, and how many fewer of another
#: configuration's points may be.
MATCHED = 0.95
MARGIN = 0.2


@pytest.fixture(scope="module")
def setup():
    return ur5_setup()


@pytest.fixture(scope="module")
def viewer(setup):
    viewer = RobotViewer(setup, port=0, log=lambda message: None)
    viewer.ik.controls.visible = False  # its red, green and blue handles are not the robot
    yield viewer
    viewer.close()


@pytest.fixture
def screen(module_browser, viewer):  # noqa: F811
    screen = Screen(module_browser, viewer.url)
    yield screen
    screen.close()


def _camera(viewer):
    camera = viewer.server.initial_camera
    return camera.position, camera.look_at


def predicted_points(viewer, setup, joint_values, screen) -> np.ndarray:
    """(n, 2) pixels where forward kinematics puts the robot: every vertex of every link's shapes, projected."""
    values = setup.model.resolve_joint_values({**viewer.joint_values, **joint_values})
    poses = setup.model.link_poses(values)
    points = []
    for link, shapes in setup.collision.checker.link_geometry.items():
        for placed in shapes:
            mesh = display_mesh(placed, (0, 0, 0))
            T = poses[link] @ mesh.T_frame_shape
            points.append(mesh.vertices @ T[:3, :3].T + T[:3, 3])
    return project(np.concatenate(points), *_camera(viewer), screen.canvas)


def on_robot(image: np.ndarray, points: np.ndarray, screen) -> float:
    """The fraction of ``points`` (pixels in the scene's part of the screen) on the robot's drawn pixels (within
    MATCH_PX)."""
    drawn = binary_dilation(screen.robot(image), iterations=MATCH_PX)
    xy = np.round(points).astype(int)
    inside = (xy[:, 0] >= 0) & (xy[:, 0] < image.shape[1]) & (xy[:, 1] >= 0) & (xy[:, 1] < image.shape[0])
    xy = xy[inside]
    xy = xy[scene_mask(image, screen.canvas)[xy[:, 1], xy[:, 0]]]
    return float(drawn[xy[:, 1], xy[:, 0]].mean()) if len(xy) else 0.0


def drawn_as(screen, expected: np.ndarray, others: list[np.ndarray]):
    """A screen condition: the robot drawn over (nearly) every point of ``expected``, and over clearly fewer of
    each of ``others`` (other configurations' points)."""
    def condition(image):
        own = on_robot(image, expected, screen)
        return own >= MATCHED and all(on_robot(image, other, screen) < own - MARGIN for other in others)
    return condition


def test_the_robot_is_drawn_where_fk_puts_it(screen, viewer, setup, tmp_path):
    viewer.show_scene(setup.collision.checker)
    poses = {"along_x": {"shoulder_pan_joint": 0.0, "shoulder_lift_joint": -0.6},
             "turned": {"shoulder_pan_joint": -1.5, "shoulder_lift_joint": -0.6}}
    expected = {name: predicted_points(viewer, setup, values, screen) for name, values in poses.items()}
    for name, values in poses.items():
        viewer.show_configuration(values)
        screen.wait_for(drawn_as(screen, expected[name], [points for key, points in expected.items() if key != name]),
                        f"the robot {name} where forward kinematics puts it", tmp_path / f"{name}.png")


def test_a_colliding_link_is_red_and_only_then(screen, viewer, setup, tmp_path):
    viewer.show_scene(obstacle_checker(setup))
    viewer.show_configuration({"shoulder_pan_joint": 0.0, "shoulder_lift_joint": 0.0})
    assert not viewer.report.in_collision
    screen.wait_for(lambda image: screen.robot(image).sum() > ROBOT_PIXELS and screen.red(image).sum() < NO_RED,
                    "the robot in a valid state, nothing red", tmp_path / "valid.png")
    viewer.show_configuration({"shoulder_lift_joint": -0.3})
    assert viewer.report.in_collision
    screen.wait_for(lambda image: screen.red(image).sum() > RED_PIXELS, "the colliding link and box red",
                    tmp_path / "colliding.png")
    if SCREENSHOTS:
        screen.save(Path(SCREENSHOTS) / "viewer_collision.png")
    viewer.show_configuration({"shoulder_lift_joint": 0.0})
    screen.wait_for(lambda image: screen.red(image).sum() < NO_RED, "no red once the state is valid again",
                    tmp_path / "valid_again.png")


def test_a_paths_frames_advance_the_robot(screen, viewer, setup, tmp_path):
    viewer.show_scene(setup.collision.checker)
    plugin = viewer.plugin
    start = [0.0, -1.2, 1.6, -1.9, -1.57, 0.0]
    viewer.show_configuration(dict(zip(plugin.getJointNames(), start)))
    T_end = viewer.tip_pose()
    T_end[:3, 3] += (0.25, 0.2, -0.3)  # a straight line across the screen and down
    path = compute_cartesian_path(plugin, start, [T_end], 0.01)
    assert path.complete
    viewer.show_cartesian_path(path)
    last = int(viewer.paths.slider.max)
    assert last == len(path.positions) - 1
    frames = (0, last // 2, last)
    expected = {frame: predicted_points(viewer, setup, dict(zip(path.joint_names, path.positions[frame])),
                                        screen)
                for frame in frames}
    for frame in frames:
        viewer.paths.slider.value = frame
        others = [points for key, points in expected.items() if key != frame]
        screen.wait_for(drawn_as(screen, expected[frame], others),
                        f"frame {frame} of {last} where forward kinematics puts it", tmp_path / f"frame_{frame}.png")
    if SCREENSHOTS:
        viewer.paths.slider.value = frames[1]
        screen.wait_for(drawn_as(screen, expected[frames[1]], []), "the middle frame")
        screen.save(Path(SCREENSHOTS) / "viewer_cartesian_path.png")
