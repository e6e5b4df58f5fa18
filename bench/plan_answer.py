"""The node's own cost per plan answer (issue 30): plan_kinematic_path round trip against the library's plan()
on the same problems, in one run.

    .venv/bin/python bench/plan_answer.py [--repeats 15] [--straight 3] [--warm-up 120]
                                              [--planning-processes 1] [--domain N] [--against TREE]

Starts kinematics_node on the bundled UR5 (as bench/service_latency.py does: its own process, DDS on this
machine only, its own ROS_DOMAIN_ID and log folder; default parameters but ``--planning-processes``: with 1, the
default, plans run in a planning process once it has built the robot, so ``--warm-up`` seconds of plans come
first), publishes the ``make run`` demo's obstacle, and, from one client process that holds the same robot and obstacle
in kinematics_py itself, alternates on every problem a library call (``kinematics_py.planning.motion.plan`` with
the node's options: RRTConnect, one attempt, the URDF's limits) and a plan_kinematic_path round trip. Problems: the
demo's motion around the obstacle (a search: its time varies from plan to plan) and ``--straight`` joint goals
whose straight motion is free (the same answer every time: the difference of the two is the node's cost alone).

Prints, per kind of problem, p50 / p90 of both series, the difference of the p50s (issue 30's target: <= 2 ms),
the points of the library's trajectory and of the answer, and the breakdown of the node's work on one answer of
each kind, timed in the client process with the node's own functions (median of 50): the request's conversion to
a Python message, the points a controller needs picked in the planning process
(``controller_points.sparse_plan``), the plan's transfer from it (pickle both ways), the message building (the
RobotTrajectory and the start state), the serialisation of the answer and of the display_planned_path message
(built and published when that topic has subscribers, as RViz; none here). Last, the hop to a planning process:
the straight problems planned alternately in the client itself and in a planning process it starts as the node
does (``PlanningProcesses``, niced as the node's), the difference of the p50s being what every answer of the node
pays for planning outside its own process.

With ``--against TREE`` (another checkout of the package, e.g. ``git worktree add /tmp/before main``), a second
node runs that checkout's code beside the first (same parameters, its own namespace), and every problem's library
call is followed by a round trip to each node: a change's before and after measured in the same run, under the
same load, also per plan (each round trip minus its own library call).
"""
from __future__ import annotations

import argparse
import json
import os
import pickle
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from service_latency import _client, isolated_ros_env, run_python, start_node, stop_node

GROUP = "ur_manipulator"
#: Time [s] the node may take to serve (building the robot on a busy machine took two minutes).
NODE_START_S = 600.0
#: Time between two warm-up plans [s].
WARM_UP_PERIOD_S = 0.2
#: Repetitions of each timed step of the breakdown.
BREAKDOWN_REPEATS = 50


def _library_problems(straight: int):
    """(plugin, checker, [(kind, start, goal)], set-up) on the bundled UR5 with the demo's obstacle, as the node has
    it."""
    from planning_latency import _obstacle_and_motion

    from kinematics_py.collision.geometry import Box
    from kinematics_py.collision.scene import PlanningScene
    from kinematics_py.geometry.transforms import make_transform
    from kinematics_py.planning.path_check import PathCheck
    from kinematics_py.robot_setup import SetupInputs, build_robot_setup
    from kinematics_py.robots import bundled_robot_path
    from kinematics_py.ros.demo.walkthrough import OBSTACLE_SIZE

    setup = build_robot_setup(SetupInputs(bundled_robot_path("ur5").read_text(),
                                          bundled_robot_path("ur5", "srdf").read_text()))
    plugin = setup.groups[GROUP]
    box, start, goal = _obstacle_and_motion()
    checker = setup.collision.checker.for_scene(PlanningScene(setup.model))
    position = box.pose.position
    checker.scene.add_object("obstacle", [Box((OBSTACLE_SIZE,) * 3)],
                             pose=make_transform(None, (position.x, position.y, position.z)))
    names = list(plugin.getJointNames())
    check = PathCheck(checker, names)
    problems = [("around", start, goal)]
    q_start = np.array([start[name] for name in names])
    rng = np.random.default_rng(7)
    while len(problems) < 1 + straight:
        q_goal = q_start + rng.uniform(-1.5, 1.5, len(names))
        if check.first_invalid(q_goal[None, :]) < 0 and check.segment_free(q_start, q_goal):
            problems.append(("straight", start, dict(zip(names, q_goal.tolist()))))
    return plugin, checker, problems, setup


def _library_plan(plugin, checker, start: dict, goal: dict):
    from kinematics_py.planning.goals import JointGoal
    from kinematics_py.planning.motion import plan
    from kinematics_py.planning.options import PlanOptions
    from kinematics_py.planning.time_parameterization import joint_limits

    names = list(plugin.getJointNames())
    options = PlanOptions(planner_id="", attempts=1, planning_time=5.0,
                          limits=joint_limits(plugin.robot_model, names))
    return plan(plugin, checker, [start[n] for n in names], [JointGoal([goal[n] for n in names], "goal")], options,
                base_state=dict(start))


def _library_job(plugin, start: dict, goal: dict):
    """``_library_plan``'s call as the node sends it to a planning process."""
    from kinematics_py.planning.goals import JointGoal
    from kinematics_py.planning.options import PlanOptions
    from kinematics_py.planning.processes import PlanJob
    from kinematics_py.planning.time_parameterization import joint_limits

    names = list(plugin.getJointNames())
    options = PlanOptions(planner_id="", attempts=1, limits=joint_limits(plugin.robot_model, names))
    return PlanJob(GROUP, [start[n] for n in names], [JointGoal([goal[n] for n in names], "goal")], dict(start),
                   time.monotonic() + 5.0, None, options)


def process_hop(setup, plugin, checker, problems, repeats: int) -> dict:
    """The straight problems planned alternately on this thread (``run_job``) and in a planning process as the
    node's (``PlanningProcesses.run``, the process started here, niced as the node's): the hop's cost [s], which
    the node pays on every answer once its planning process has built the robot."""
    from kinematics_py.planning.processes import PlanningProcesses, run_job

    processes = PlanningProcesses(1)
    processes.prepare(setup)
    processes.start()
    try:
        until = time.monotonic() + NODE_START_S
        while not processes.has_built(setup):
            if time.monotonic() > until:
                return {}
            time.sleep(0.5)
        here, there = [], []
        for round_ in range(3 + repeats):
            for _kind, start, goal in problems[1:]:
                began = time.perf_counter()
                run_job(_library_job(plugin, start, goal), setup, checker, lambda: False)
                here_s = time.perf_counter() - began
                began = time.perf_counter()
                processes.run(_library_job(plugin, start, goal), setup, checker)
                if round_ >= 3:
                    here.append(here_s)
                    there.append(time.perf_counter() - began)
        return {"here": here, "there": there}
    finally:
        processes.close()


def _median_s(function) -> float:
    times = []
    for _ in range(BREAKDOWN_REPEATS):
        began = time.perf_counter()
        function()
        times.append(time.perf_counter() - began)
    return float(np.median(times))


def breakdown(request, result, names) -> dict:
    """The node's work on one answer, step by step [ms] (see the module docstring)."""
    from builtin_interfaces.msg import Time
    from moveit_msgs.msg import DisplayTrajectory
    from moveit_msgs.srv import GetMotionPlan
    from rclpy.serialization import deserialize_message, serialize_message

    from kinematics_py.planning.controller_points import sparse_plan
    from kinematics_py.ros.messages.conversions import robot_state_msg
    from kinematics_py.ros.messages.trajectories import trajectory_msg

    request_bytes = serialize_message(request)
    response = GetMotionPlan.Response()
    values = dict(zip(names, result.positions[0].tolist()))
    answered = sparse_plan(result)

    def build():
        answer = response.motion_plan_response
        answer.trajectory_start = robot_state_msg(names, values)
        answer.trajectory = trajectory_msg("base_link", names, answered.positions, answered.timing, Time())

    build()
    answer = response.motion_plan_response
    display = DisplayTrajectory(model_id="ur5", trajectory=[answer.trajectory],
                                trajectory_start=answer.trajectory_start)
    steps = {"request": _median_s(lambda: deserialize_message(request_bytes, GetMotionPlan.Request)),
             "points": _median_s(lambda: sparse_plan(result)),
             "transfer": _median_s(lambda: pickle.loads(pickle.dumps(answered))),
             "build": _median_s(build),
             "serialise_answer": _median_s(lambda: serialize_message(response)),
             "serialise_display": _median_s(lambda: serialize_message(display))}
    return {"ms": {k: v * 1e3 for k, v in steps.items()}, "points": len(answer.trajectory.joint_trajectory.points)}


def _warm_up(node, targets, problems, duration: float) -> None:
    """Straight plans, one every WARM_UP_PERIOD_S, for ``duration`` [s]: the node plans on its own threads until its
    planning process has built the robot (about a minute on a busy machine), then there, as it will from then on."""
    from kinematics_py.ros.demo.client import joint_goal, motion_plan_request

    _kind, start, goal = problems[-1]
    request = motion_plan_request(GROUP, [joint_goal(goal)], start, 5.0)
    until = time.monotonic() + duration
    while time.monotonic() < until:
        for plans in targets:
            node.call(plans, request, 60.0)
        time.sleep(WARM_UP_PERIOD_S)


def client(namespace: str, repeats: int, straight: int, warm_up_s: float, against: str | None = None) -> dict:
    """Alternate library calls and round trips on every problem (to the node in ``namespace``, then to the one in
    ``against``, if given); the breakdown of one answer of each kind."""
    from moveit_msgs.srv import GetMotionPlan

    from kinematics_py.ros.demo.client import joint_goal, motion_plan_request

    plugin, checker, problems, setup = _library_problems(straight)
    names = list(plugin.getJointNames())
    node = _client(namespace, "bench_plan_answer")
    plans = node.client(GetMotionPlan, f"{namespace}/plan_kinematic_path")
    other = node.client(GetMotionPlan, f"{against}/plan_kinematic_path") if against else None
    if other is not None and not other.wait_for_service(NODE_START_S):
        raise SystemExit(f"{against}/plan_kinematic_path not found")
    series: dict = {}
    try:
        _warm_up(node, [plans] + ([other] if other is not None else []), problems, warm_up_s)
        for warm_up in (True, False):
            for _ in range(3 if warm_up else repeats):
                for kind, start, goal in problems:
                    entry = series.setdefault(kind, {"library": [], "node": [], "handler": [], "library_points": [],
                                                     "answer_points": [], "failures": [], "against": []})
                    began = time.perf_counter()
                    result = _library_plan(plugin, checker, start, goal)
                    library_s = time.perf_counter() - began
                    request = motion_plan_request(GROUP, [joint_goal(goal)], start, 5.0)
                    began = time.perf_counter()
                    answer = node.call(plans, request, 60.0).motion_plan_response
                    node_s = time.perf_counter() - began
                    if other is not None:
                        began = time.perf_counter()
                        answered = node.call(other, request, 60.0).motion_plan_response
                        against_s = time.perf_counter() - began
                        if answered.error_code.val != 1:
                            entry["failures"].append(f"against {answered.error_code.message[:100]}")
                            continue
                    if not result.success or answer.error_code.val != 1:
                        entry["failures"].append(
                            f"library {result.message[:100]} | node {answer.error_code.message[:100]}")
                        continue
                    if warm_up:
                        continue
                    entry["library"].append(library_s)
                    entry["node"].append(node_s)
                    if other is not None:
                        entry["against"].append(against_s)
                    entry["handler"].append(answer.planning_time)
                    entry["library_points"].append(len(result.positions))
                    entry["answer_points"].append(len(answer.trajectory.joint_trajectory.points))
                    entry["breakdown"] = (request, result)
        series["floor"] = _fk_floor(node, names, problems[0][1])
    finally:
        node.close()
    series["hop"] = process_hop(setup, plugin, checker, problems, repeats)
    for entry in series.values():
        if "breakdown" not in entry:
            continue
        request, result = entry.pop("breakdown")
        entry["breakdown"] = breakdown(request, result, names)
    return series


def _fk_floor(node, names, start: dict) -> list[float]:
    """Round trips of compute_fk (one link) on the same node: what any answer costs over DDS here [s]."""
    from kinematics_py.ros.demo.client import fk_request

    times = []
    for _ in range(100):
        began = time.perf_counter()
        node.call(node.fk_client, fk_request(["tool0"], start))
        times.append(time.perf_counter() - began)
    return times[10:]


def _p(samples, q) -> float:
    return float(np.percentile(np.asarray(samples) * 1e3, q))


def report(series: dict, load: tuple[float, float]) -> None:
    print(f"kinematics_node (bundled UR5, the demo's obstacle, default parameters) against plan() in the client "
          f"process; load average {load[0]:.2f} at start, {load[1]:.2f} at end")
    print("| problems | plans | plan() p50 / p90 [ms] | round trip p50 / p90 [ms] | p50 difference [ms] | points "
          "(plan() / answer, median) |")
    print("|---|---|---|---|---|---|")
    floor, hop = series.pop("floor"), series.pop("hop")
    for kind, entry in series.items():
        if not entry["node"]:
            print(f"| {kind} | 0 | | | | |")
            continue
        library, node = entry["library"], entry["node"]
        print(f"| {kind} | {len(node)} | {_p(library, 50):.1f} / {_p(library, 90):.1f} | {_p(node, 50):.1f} / "
              f"{_p(node, 90):.1f} | {_p(node, 50) - _p(library, 50):+.1f} | "
              f"{np.median(entry['library_points']):.0f} / {np.median(entry['answer_points']):.0f} |")
    _report_against(series)
    print(f"\ncompute_fk round trip on the same node (the DDS and executor floor of any answer): p50 "
          f"{_p(floor, 50):.2f} p90 {_p(floor, 90):.2f} ms. Of the round trip, the answer's planning_time (from the "
          f"handler's start to the plan's return, planning process included) and the rest (DDS, queues, request "
          f"conversion, answer building and sending), p50 [ms]:")
    for kind, entry in series.items():
        if entry["node"]:
            rest = np.asarray(entry["node"]) - np.asarray(entry["handler"])
            print(f"  {kind}: planning_time {_p(entry['handler'], 50):.1f} (plan() p50 "
                  f"{_p(entry['library'], 50):.1f}), rest {_p(rest, 50):.1f}")
    if hop:
        print(f"\nA planning process's hop (the straight problems planned alternately in this process and in a "
              f"planning process of its own, as the node's): plan p50 {_p(hop['here'], 50):.2f} ms here, "
              f"{_p(hop['there'], 50):.2f} ms there, {_p(hop['there'], 50) - _p(hop['here'], 50):+.2f} ms.")
    print("\nThe node's work on one answer [ms, median of 50], in the client process with the node's functions:")
    print("| problems | points answered | request | points picked | transfer | build | serialise answer "
          "| serialise display | sum |")
    print("|---|---|---|---|---|---|---|---|---|")
    for kind, entry in series.items():
        if "breakdown" not in entry:
            continue
        steps = entry["breakdown"]["ms"]
        print(f"| {kind} | {entry['breakdown']['points']} | " + " | ".join(f"{v:.2f}" for v in steps.values())
              + f" | {sum(steps.values()):.2f} |")
    for kind, entry in series.items():
        for failure in sorted(set(entry["failures"])):
            print(f"  {kind} failed: {failure}")


def _report_against(series: dict) -> None:
    """With ``--against``: the round trips to both nodes, alternated on every problem."""
    if not any(entry["against"] for entry in series.values()):
        return
    print("\nThe same round trips to the node running --against's checkout, alternated with the first [ms]:")
    print("| problems | plans | plan() p50 | round trip p50 / p90 | against's p50 / p90 | difference of the p50s "
          "to plan() (this / against) | per plan, p50 of (round trip - its plan()) (this / against) |")
    print("|---|---|---|---|---|---|---|")
    for kind, entry in series.items():
        library, node, against = entry["library"], entry["node"], entry["against"]
        if not against:
            continue
        print(f"| {kind} | {len(node)} | {_p(library, 50):.2f} | {_p(node, 50):.2f} / {_p(node, 90):.2f} | "
              f"{_p(against, 50):.2f} / {_p(against, 90):.2f} | {_p(node, 50) - _p(library, 50):+.2f} / "
              f"{_p(against, 50) - _p(library, 50):+.2f} | {_p(np.subtract(node, library), 50):+.2f} / "
              f"{_p(np.subtract(against, library), 50):+.2f} |")


def _reserved_domain() -> int:
    """A ROS_DOMAIN_ID no test run (test/conftest.py's locks) or other holder of its lock uses, held until this
    process ends."""
    import fcntl

    folder = Path(tempfile.gettempdir()) / "kinematics_py-ros-domains"
    folder.mkdir(exist_ok=True)
    for offset in range(99):
        domain = 1 + (os.getpid() + offset) % 99
        lock = open(folder / f"{domain}.lock", "a")  # noqa: SIM115 (held for the whole run)
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            lock.close()
            continue
        _HELD.append(lock)
        return domain
    raise SystemExit("every ROS_DOMAIN_ID in 1..99 is held")


_HELD: list = []


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=15, help="round trips (and library calls) per problem")
    parser.add_argument("--straight", type=int, default=3, help="straight problems besides the demo's motion")
    parser.add_argument("--warm-up", type=float, default=120.0,
                        help="[s] of straight plans before the measurement (the planning process builds the robot)")
    parser.add_argument("--planning-processes", type=int, default=1,
                        help="the node's planning_processes parameter (0: plans on the node's own threads)")
    parser.add_argument("--domain", type=int, help="ROS_DOMAIN_ID of the run (default: one no test run holds)")
    parser.add_argument("--against", metavar="TREE", type=Path,
                        help="a second node from this checkout of the package, round trips alternated with the first")
    parser.add_argument("--client", metavar="NAMESPACE", help=argparse.SUPPRESS)
    parser.add_argument("--client-against", metavar="NAMESPACE", help=argparse.SUPPRESS)
    parser.add_argument("--wait", metavar="NAMESPACE", help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.wait:
        from kinematics_py.ros.demo.client import KinematicsClient

        waiting = KinematicsClient(options.wait, node_name="bench_wait")
        ready = waiting.wait_for_services(NODE_START_S)
        waiting.close()
        print(json.dumps({"ready": ready}))
        return 0 if ready else 1
    if options.client:
        series = client(options.client, options.repeats, options.straight, options.warm_up, options.client_against)
        print(json.dumps(series))
        return 0
    directory = Path(tempfile.mkdtemp(prefix="kinematics_py-bench-"))
    os.environ["ROS_DOMAIN_ID"] = str(options.domain if options.domain is not None else _reserved_domain())
    env = isolated_ros_env(directory)
    namespace = "/bench_plan_answer"
    load_start = os.getloadavg()[0]
    extra = {"planning_processes": options.planning_processes}
    nodes = [start_node(directory, namespace, env, extra=extra)]
    namespaces, against = [namespace], []
    try:
        if options.against:
            other = directory / "against"
            other.mkdir()
            # the checkout's package, not the working directory's (``python -m`` puts that first on sys.path)
            against_env = {**isolated_ros_env(other), "PYTHONPATH": str(options.against.resolve()),
                           "PYTHONSAFEPATH": "1"}
            nodes.append(start_node(other, f"{namespace}_against", against_env, extra=extra))
            namespaces.append(f"{namespace}_against")
            against = ["--client-against", namespaces[1]]
        for served in namespaces:
            run_python(["--wait", served], env, NODE_START_S + 60, __file__)  # its start takes minutes when busy
            run_python(["--scene", served], env, 300, str(Path(__file__).parent / "planning_latency.py"))
        series = run_python(["--client", namespace, "--repeats", str(options.repeats), "--straight",
                             str(options.straight), "--warm-up", str(options.warm_up), *against], env, 3600, __file__)
    finally:
        for node in nodes:
            stop_node(node)
    print(f"planning_processes {options.planning_processes}" +
          (f"; against: {options.against.resolve()}" if options.against else ""))
    report(series, (load_start, os.getloadavg()[0]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
