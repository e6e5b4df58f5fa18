"""The viewer's update rate with live IK while a target is dragged (issue 22: at least 30 updates/s).

    .venv/bin/python bench/viewer_rate.py                    # UR5, a browser on the page, 5 s of dragging
    .venv/bin/python bench/viewer_rate.py --seconds 10 --no-browser

Protocol: a RobotViewer of the bundled UR5 with a box in its world (every branch is collision-checked); a
headless chromium (Debian's, driven by Playwright) shows the page, so each update is also sent over the websocket
and drawn. The target moves along a circle in front of the robot, offered as a drag does (``IkTarget.move_to``,
what the gizmo's on_update calls) at --offer-hz, faster than it can be solved: the IK thread solves only the newest
pending target. One update = every IK branch (``KinematicsPlugin.all_solutions``), each collision-checked, the
nearest collision-free one shown (robot frames moved, links recoloured, contacts marked, sliders synced, the branch
list refreshed). Reported: updates per second over --seconds (solved targets / wall time), and the median time
of one update when targets are offered one after another (each waited for).
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "test"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "test" / "viewer"))
from browser import Screen, browser_or_skip, close_browser  # noqa: E402
from viewer_fixtures import obstacle_checker, ur5_setup  # noqa: E402

from kinematics_py.viewer import RobotViewer  # noqa: E402

TARGET = 30.0


def circle_targets(viewer: RobotViewer, count: int) -> list[np.ndarray]:
    """Tip poses on a circle of 0.15 m around a pose in front of the robot (orientation kept)."""
    viewer.show_configuration(dict(zip(viewer.plugin.getJointNames(), (0.0, -1.2, 1.5, -1.9, -1.57, 0.0))))
    centre = viewer.tip_pose()
    targets = []
    for angle in np.linspace(0.0, 2 * np.pi, count, endpoint=False):
        T = centre.copy()
        T[:3, 3] += 0.15 * np.array([0.0, np.cos(angle), np.sin(angle)])
        targets.append(T)
    return targets


def dragging(viewer: RobotViewer, targets: list[np.ndarray], seconds: float, offer_hz: float) -> float:
    """Updates per second while targets are offered at ``offer_hz`` for ``seconds``."""
    viewer.ik.wait_idle(60.0)
    solved, started = viewer.ik.solved, time.perf_counter()
    k = 0
    while time.perf_counter() - started < seconds:
        viewer.ik.move_to(targets[k % len(targets)])
        k += 1
        time.sleep(1.0 / offer_hz)
    viewer.ik.wait_idle(60.0)
    return (viewer.ik.solved - solved) / (time.perf_counter() - started)


def one_by_one(viewer: RobotViewer, targets: list[np.ndarray]) -> float:
    """Median time [s] of one update, each target waited for before the next."""
    times = []
    for T in targets:
        started = time.perf_counter()
        viewer.ik.move_to(T)
        viewer.ik.wait_idle(60.0)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--offer-hz", type=float, default=200.0, help="drag events offered per second")
    parser.add_argument("--no-browser", action="store_true", help="no page open (the server side alone)")
    args = parser.parse_args(argv)
    setup = ur5_setup()
    viewer = RobotViewer(setup, port=0, log=print)
    viewer.show_scene(obstacle_checker(setup))
    browser = screen = None
    if not args.no_browser:
        playwright, browser = browser_or_skip()
        screen = Screen(browser, viewer.url)
        screen.wait_for(lambda image: screen.robot(image).sum() > 1000, "the robot")
    try:
        targets = circle_targets(viewer, 120)
        one_by_one(viewer, targets[:20])  # warm: every kernel compiled and cached
        rate = dragging(viewer, targets, args.seconds, args.offer_hz)
        single = one_by_one(viewer, targets)
    finally:
        if screen is not None:
            screen.close()
            close_browser(playwright, browser)
        viewer.close()
    where = "no browser" if args.no_browser else "headless chromium on the page"
    print(f"live IK while dragging (UR5, a box in the world, {where}): {rate:.0f} updates/s over {args.seconds:g} s "
          f"(targets offered at {args.offer_hz:g}/s; target >= {TARGET:g}); one update alone: "
          f"{single * 1e3:.2f} ms (median of {len(targets)})")
    return 0 if rate >= TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
