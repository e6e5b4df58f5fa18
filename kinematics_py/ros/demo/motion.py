"""The ``make run`` demo's motion plan: plan_kinematic_path from one side of the demo's obstacle to the other,
the straight joint motion between them passing through it."""
from __future__ import annotations

import time
from collections.abc import Mapping, Sequence

import numpy as np
from moveit_msgs.msg import MoveItErrorCodes
from moveit_msgs.srv import GetMotionPlan

from ...errors import error_code_name
from .client import KinematicsClient, joint_goal, motion_plan_request

#: The second and third joints moved this far either way of the obstacle's configuration [rad]: the start and the
#: goal, both free of the obstacle on the bundled robots.
OFFSET = 0.8
PLANNING_TIME_S = 5.0
CALL_TIMEOUT_S = 30.0


def motion_demo(client: KinematicsClient, group: str, joints: Sequence[str], through: Mapping[str, float]) -> bool:
    """Plan from ``through`` with its second and third joints moved by +OFFSET to -OFFSET (``through`` is in the
    obstacle); True if the plan succeeds with a detour. Where the node executes plans (simulate_controllers, or
    controllers of a MoveIt config), the arm is first moved to the start, then along the plan, each plan starting
    where the last motion ended."""
    moved = joints[1:3]
    start = {**through, **{name: through[name] + OFFSET for name in moved}}
    goal = {**through, **{name: through[name] - OFFSET for name in moved}}
    executes = _move_to(client, group, start)
    answer, elapsed = _plan(client, group, goal, {} if executes else start)
    good = _reported_plan(answer, elapsed, moved)
    if good and executes:
        good = _executed(client, answer.trajectory, "along the plan")
    return good


def _plan(client: KinematicsClient, group: str, goal: Mapping[str, float], start: Mapping[str, float]):
    """(plan_kinematic_path's answer to ``goal`` from ``start`` over the current state, seconds it took)."""
    planner = client.client(GetMotionPlan, f"{client.prefix}plan_kinematic_path")
    try:
        began = time.perf_counter()
        answer = client.call(planner, motion_plan_request(group, [joint_goal(goal)], start, PLANNING_TIME_S),
                             CALL_TIMEOUT_S).motion_plan_response
        return answer, time.perf_counter() - began
    finally:
        client.node.destroy_client(planner)


def _move_to(client: KinematicsClient, group: str, joints: Mapping[str, float]) -> bool:
    """Move the arm to ``joints`` (planned from where it is, executed); False when the node executes nothing."""
    answer, _elapsed = _plan(client, group, joints, {})
    if answer.error_code.val != MoveItErrorCodes.SUCCESS:
        return False
    return _executed(client, answer.trajectory, "to the plan's start", quiet_when_not_served=True)


def _executed(client: KinematicsClient, trajectory, what: str, quiet_when_not_served: bool = False) -> bool:
    """Whether execute_trajectory moved the arm along ``trajectory`` (printed; nothing printed when the node serves
    no execution and ``quiet_when_not_served``)."""
    points = trajectory.joint_trajectory.points
    duration = points[-1].time_from_start.sec + points[-1].time_from_start.nanosec * 1e-9 if points else 0.0
    began = time.perf_counter()
    result = client.execute(trajectory, duration * 2 + CALL_TIMEOUT_S)
    if result is None:
        if not quiet_when_not_served:
            print("execute_trajectory: not served (start the node with simulate_controllers:=true, or give it a "
                  "MoveIt config's moveit_controllers.yaml)")
        return False
    good = result.error_code.val == MoveItErrorCodes.SUCCESS
    message = result.error_code.message
    print(f"execute_trajectory {what}: {error_code_name(result.error_code.val)} in "
          f"{time.perf_counter() - began:.2f} s ({duration:.2f} s planned)" + (f": {message}" if message else "")
          + ("" if good else "  <-- NOT as expected"))
    return good


def _reported_plan(answer, elapsed: float, moved: Sequence[str]) -> bool:
    """Print the plan's answer; whether it succeeded with a detour around the obstacle."""
    code = error_code_name(answer.error_code.val)
    points = answer.trajectory.joint_trajectory.points
    good = answer.error_code.val == MoveItErrorCodes.SUCCESS and len(points) > 1
    detour = 0.0
    if good:
        positions = np.array([p.positions for p in points])
        straight = np.linspace(positions[0], positions[-1], len(positions))
        detour = float(np.abs(positions - straight).max())
        good = detour > 0.0
    end = points[-1].time_from_start if points else None
    duration = f", {end.sec + end.nanosec * 1e-9:.2f} s long" if end else ""
    print(f"plan_kinematic_path: {' and '.join(moved)} from +{OFFSET} to -{OFFSET} rad off A, around the obstacle: "
          f"{code} in {elapsed * 1e3:.0f} ms ({answer.planning_time * 1e3:.0f} ms planning), {len(points)} points"
          f"{duration}, up to {detour:.2f} rad off the straight joint motion: {answer.error_code.message}"
          + ("" if good else "  <-- NOT as expected"))
    return good
