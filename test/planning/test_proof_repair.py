"""A plan is free between its points, not only at them: a thin obstacle that a ball sweeps through between two
checked points (neither touches it) is never in a returned trajectory. With a second joint to lift the ball over
it, the segment is searched again with the ball's clearance grown and the plan goes over; with one joint there is
no other way, and the plan fails saying why."""
from __future__ import annotations

import numpy as np
import pytest

from kinematics_py import ErrorCode, KinematicsPlugin, RobotModel
from kinematics_py.collision.checker import CollisionChecker
from kinematics_py.collision.geometry import Box
from kinematics_py.geometry.transforms import make_transform
from kinematics_py.planning.goals import JointGoal
from kinematics_py.planning.motion import plan
from kinematics_py.planning.motion_bound import clearance_check, first_unproven
from kinematics_py.planning.options import PlanOptions
from kinematics_py.planning.path_check import PathCheck, densify
from kinematics_py.planning.proof_repair import ProvenMotions, nearest_segment

#: A 1 cm ball 1 m from a vertical axis, optionally on a vertical slide (the lift).
LIFT_JOINT = """<joint name="lift" type="prismatic"><parent link="base"/><child link="carriage"/><axis xyz="0 0 1"/>
    <limit lower="0" upper="0.1" effort="1" velocity="1"/></joint>"""
URDF = """<robot name="swing">
  <link name="base"/><link name="carriage"/>
  <link name="arm"><collision><origin xyz="1 0 0"/><geometry><sphere radius="0.01"/></geometry></collision></link>
  {lift}
  <joint name="turn" type="revolute"><parent link="{parent}"/><child link="arm"/><axis xyz="0 0 1"/>
    <limit lower="-3" upper="3" effort="1" velocity="1"/></joint>
</robot>"""
SRDF = """<robot name="swing"><group name="arm"><chain base_link="base" tip_link="arm"/></group></robot>"""
#: The plan's resolution [rad or m]: the ball moves 3 cm between two checked points.
STEP = 0.03
#: A 2 mm grain on the ball's circle half-way between turn 0 and turn STEP.
GRAIN = (np.cos(STEP / 2), np.sin(STEP / 2), 0.0)
#: Planning time of a plan that succeeds [s]: it ends as soon as it has a proven path, long before.
GENEROUS = 30.0
#: Densification of the returned trajectory's check [rad or m]: the ball moves 0.5 mm per state.
FINE = 0.0005


def swing(with_lift: bool):
    urdf = URDF.format(lift=LIFT_JOINT if with_lift else "", parent="carriage" if with_lift else "base")
    if not with_lift:
        urdf = urdf.replace('<link name="carriage"/>', "")
    checker = CollisionChecker(RobotModel.from_urdf_string(urdf))
    checker.scene.add_object("grain", [Box((0.002, 0.002, 0.002))], pose=make_transform(None, GRAIN))
    plugin = KinematicsPlugin()
    assert plugin.initialize(urdf, "arm", "base", "arm", robot_description_semantic=SRDF)
    return plugin, checker


def _ends(plugin) -> tuple[np.ndarray, np.ndarray]:
    start = np.zeros(len(plugin.getJointNames()))
    goal = start.copy()
    goal[plugin.getJointNames().index("turn")] = STEP
    return start, goal


@pytest.mark.parametrize("with_lift", [True, False])
def test_the_straight_motion_passes_its_point_checks_but_sweeps_through_the_grain(with_lift):
    plugin, checker = swing(with_lift)
    check = PathCheck(checker, plugin.getJointNames(), resolution=STEP)
    start, goal = _ends(plugin)
    assert check.segment_free(start, goal)
    assert check.first_invalid(densify(np.array([start, goal]), FINE)) >= 0


def test_a_plan_goes_over_the_grain_proven_free_between_its_points():
    plugin, checker = swing(with_lift=True)
    start, goal = _ends(plugin)
    options = PlanOptions(resolution=STEP, search_resolution=STEP, planning_time=GENEROUS)
    result = plan(plugin, checker, start, [JointGoal(goal)], options)
    assert result.success, result.message
    check = PathCheck(checker, plugin.getJointNames())
    assert check.first_invalid(densify(result.positions, FINE)) < 0
    assert first_unproven(PathCheck(checker, plugin.getJointNames(), resolution=STEP), result.positions) == -1
    assert result.positions[:, plugin.getJointNames().index("lift")].max() > 0


def test_without_a_way_around_the_plan_fails_saying_why():
    plugin, checker = swing(with_lift=False)
    start, goal = _ends(plugin)
    result = plan(plugin, checker, start, [JointGoal(goal)],
                  PlanOptions(resolution=STEP, search_resolution=STEP, planning_time=0.2))
    assert (result.error_code, result.failure) == (ErrorCode.PLANNING_FAILED, "blocked_path")
    assert "not proven free" in result.message
    assert not len(result.positions)


def test_a_detour_is_searched_with_motions_the_proof_proves():
    plugin, checker = swing(with_lift=True)
    check = PathCheck(checker, plugin.getJointNames(), resolution=STEP)
    start, goal = _ends(plugin)
    halving = next(h for h in range(8) if clearance_check(check, h).state_free(start))  # the grain is 4 mm away
    proven = ProvenMotions(check, clearance_check(check, halving), halvings=halving + 2)
    assert proven.state_free(start) and proven.state_free(goal)
    assert check.segment_free(start, goal) and not proven.segment_free(start, goal)  # through the grain
    lifted_start, lifted_goal = start.copy(), goal.copy()
    lifted_start[plugin.getJointNames().index("lift")] = lifted_goal[plugin.getJointNames().index("lift")] = 0.05
    assert proven.path_proven(np.array([start, lifted_start, lifted_goal, goal]))
    assert first_unproven(check, densify(np.array([start, lifted_start, lifted_goal, goal]), STEP)) == -1


def test_the_nearest_segment_of_a_point():
    points = np.array([[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]])
    assert [nearest_segment(points, np.array(q)) for q in ([0.5, 0.1], [0.9, 0.5], [0.4, 0.95])] == [0, 1, 2]
