"""CheapFirstQueue: cheap requests run before expensive ones, which run one at a time in arrival order; every
request submitted runs; request_cost reads the size of a request."""
from __future__ import annotations

import threading

from moveit_msgs.msg import AttachedCollisionObject, CollisionObject
from moveit_msgs.srv import ApplyPlanningScene, GetPositionFK, GetStateValidity, QueryPlannerInterfaces

from kinematics_py.ros.executor import DaemonPool
from kinematics_py.ros.request_queue import CHEAP_COST, CheapFirstQueue, request_cost

WAIT_S = 30.0


def test_cheap_requests_pass_expensive_ones_which_run_one_at_a_time():
    pool = DaemonPool(3, "test_queue", lambda error: None)
    queue = CheapFirstQueue(3, pool.submit)
    release, order, lock = threading.Event(), [], threading.Lock()
    started = {name: threading.Event() for name in ("big 1", "big 2", "big 3", "small 1", "small 2")}
    done = {name: threading.Event() for name in started}

    def work(name, blocking):
        def run():
            with lock:
                order.append(name)
            started[name].set()
            if blocking:
                release.wait(WAIT_S)
            done[name].set()
        return run
    for name in ("big 1", "big 2", "big 3"):
        queue.submit(CHEAP_COST + 1, work(name, True))
    queue.submit(1, work("small 1", False))
    queue.submit(1, work("small 2", False))
    assert done["small 1"].wait(WAIT_S) and done["small 2"].wait(WAIT_S)  # while big 1 still runs
    assert started["big 1"].is_set() and not started["big 2"].is_set()  # one expensive request at a time
    release.set()
    assert all(event.wait(WAIT_S) for event in done.values())
    assert [name for name in order if name.startswith("big")] == ["big 1", "big 2", "big 3"]
    assert pool.wait_idle(WAIT_S) and queue.waiting == 0


def test_request_cost_counts_what_a_request_asks_for():
    assert request_cost(GetPositionFK.Request(fk_link_names=["tool0"] * 500)) == 501
    scene = ApplyPlanningScene.Request()
    scene.scene.world.collision_objects = [CollisionObject(id=f"box_{i}") for i in range(100)]
    scene.scene.robot_state.attached_collision_objects = [AttachedCollisionObject()] * 3
    assert request_cost(scene) == 104
    validity = GetStateValidity.Request()
    validity.robot_state.attached_collision_objects = [AttachedCollisionObject()] * 2
    assert request_cost(validity) == 3
    assert request_cost(QueryPlannerInterfaces.Request()) == 1


def test_a_pool_calls_on_done_after_each_callable_once_it_has_room():
    seen = []
    done = threading.Event()

    def on_done():
        seen.append(pool.has_room)
        done.set()
    pool = DaemonPool(1, "test_on_done", lambda error: None, on_done)
    pool.submit(lambda: None)
    assert done.wait(WAIT_S) and seen == [True]
