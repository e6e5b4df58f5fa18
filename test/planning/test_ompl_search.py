"""ompl_search (ROS-free): every segment of a path it returns is free by the path check it was given, also after
OMPL's simplification (whose partial shortcutting checks states at OMPL's own resolution, not by that check)."""
import itertools

import numpy as np
import pytest

from kinematics_py.collision.geometry import Box
from kinematics_py.collision.scene import PlanningScene
from kinematics_py.geometry.transforms import make_transform
from kinematics_py.planning.ompl_search import load_ompl, search_path, shorten
from kinematics_py.planning.path_check import PathCheck
from kinematics_py.robot_setup import SetupInputs, build_robot_setup
from kinematics_py.robots import bundled_robot_path

#: ``make run``'s UR5 scene (ros.demo.walkthrough, not imported: this suite runs without ROS): a box at the
#: forearm of THROUGH, and a motion of joints 2 and 3 by +-OFFSET through it.
THROUGH = (0.3, -1.2, 1.5, -1.9, -1.57, 0.0)
OBSTACLE_LINK, OBSTACLE_SIZE, OFFSET = "forearm_link", 0.15, 0.8


@pytest.fixture(scope="module")
def around_the_obstacle():
    """``make run``'s UR5 motion around its obstacle: (check, start, goal, bounds)."""
    setup = build_robot_setup(SetupInputs(urdf=bundled_robot_path("ur5").read_text(encoding="utf-8"),
                                          srdf=bundled_robot_path("ur5", "srdf").read_text(encoding="utf-8")))
    (plugin,) = setup.groups.values()
    joints = plugin.getJointNames()
    values, link = THROUGH, OBSTACLE_LINK
    through = np.array(values)
    checker = setup.collision.checker.for_scene(PlanningScene(setup.model))
    centre = setup.model.link_poses(dict(zip(joints, values)))[link][:3, 3]
    checker.scene.add_object("obstacle", [Box((OBSTACLE_SIZE,) * 3)], pose=make_transform(None, centre))
    offset = np.array([0.0, OFFSET, OFFSET, 0.0, 0.0, 0.0])
    lower = np.array([setup.model.joints[j].lower for j in joints])
    upper = np.array([setup.model.joints[j].upper for j in joints])
    return PathCheck(checker, joints, resolution=0.03), through + offset, through - offset, (lower, upper)


def test_every_segment_of_a_simplified_path_is_free_by_the_given_check(around_the_obstacle):
    check, start, goal, bounds = around_the_obstacle
    assert not check.segment_free(start, goal)
    for _ in range(30):  # before the fix about one path in twenty had a colliding segment
        waypoints = search_path(check, start, goal[None, :], bounds, "RRTConnect", 2.0).waypoints
        assert waypoints is not None
        assert all(check.segment_free(a, b) for a, b in itertools.pairwise(waypoints))


def test_the_bounds_widen_to_hold_the_start_and_goals(around_the_obstacle):
    """A goal beyond the bounds (a continuous joint's are a half turn either way of the plan's start; a detour's end
    may lie beyond them) is still planned to: OMPL refused it as an invalid goal state before."""
    check, start, goal, (lower, upper) = around_the_obstacle
    narrow = (np.where(goal < start, goal + 0.05, lower), np.where(goal > start, goal - 0.05, upper))
    assert not np.all((narrow[0] <= goal) & (goal <= narrow[1]))
    waypoints = search_path(check, start, goal[None, :], narrow, "RRTConnect", 2.0).waypoints
    assert waypoints is not None
    np.testing.assert_array_equal(waypoints[[0, -1]], [start, goal])
    assert all(check.segment_free(a, b) for a, b in itertools.pairwise(waypoints))


class _CuttingSimplifier:
    """A simplifier whose partial shortcut joins the path's ends straight (through the obstacle)."""

    def __init__(self, space_information, start, goal):
        self._information, self._ends = space_information, (start, goal)

    def reduceVertices(self, path, *_):  # noqa: N802 (OMPL's name)
        return False

    def partialShortcutPath(self, path, *_):  # noqa: N802 (OMPL's name)
        _, geometric = load_ompl()
        path.assign(geometric.PathGeometric(self._information, *self._ends))
        return True


def test_a_partial_shortcut_into_a_collision_is_undone(around_the_obstacle):
    check, start, goal, bounds = around_the_obstacle
    base, geometric = load_ompl()
    space = base.RealVectorStateSpace(len(start))
    limits = base.RealVectorBounds(len(start))
    for i, (low, high) in enumerate(zip(*bounds)):
        limits.setLow(i, float(low))
        limits.setHigh(i, float(high))
    space.setBounds(limits)
    information = base.SpaceInformation(space)
    states = []
    for q in (start, (start + goal) / 2 + np.array([0.0, -1.0, 0.0, 0.0, 0.0, 0.0]), goal):
        state = space.allocState()
        for i, value in enumerate(q):
            state[i] = float(value)
        states.append(state)
    path = geometric.PathGeometric(information, states)

    def segments_free(path) -> bool:
        waypoints = [np.array([path.getState(k)[i] for i in range(len(start))]) for k in range(path.getStateCount())]
        return all(check.segment_free(a, b) for a, b in itertools.pairwise(waypoints))
    shorten(_CuttingSimplifier(information, states[0], states[-1]), path, 0.05, segments_free)
    assert path.getStateCount() == 3  # the straight cut (in collision) was undone
