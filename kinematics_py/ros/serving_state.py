"""What the node serves, as one immutable value: the robot set-up, the planning scene kept from the scene
topics, the robot's collision checker on that scene, and the request settings.

Requests read ``StateStore.current`` once and use only that value, so an answer never mixes two robots, two
scenes or two settings. Every change (a new set-up, a scene update, new settings) builds a new
``ServingState`` from the current one and installs it by one assignment, under ``StateStore.lock``: writers
never lose each other's changes.
"""
from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, replace

from ..collision.checker import CollisionChecker
from ..collision.scene import PlanningScene, carried_to
from ..parameters import NODE_SPECS_BY_NAME
from ..robot_setup import RobotSetup

NO_DESCRIPTION_YET = ("no robot description yet: set the robot_description parameter or publish it on the "
                      "robot_description topic")


@dataclass(frozen=True)
class ServiceSettings:
    """The node parameters requests read."""

    #: Largest IK timeout a request may ask for [s].
    max_ik_timeout: float
    #: "error" or "ignore_with_warning" (parameters.COLLISION_POLICIES)
    collision_checking_unavailable_policy: str
    #: Most mesh triangles of one scene update's object (parameters.NODE_PARAMETERS).
    max_mesh_triangles: int = NODE_SPECS_BY_NAME["max_mesh_triangles"].default
    #: Most link names of one compute_fk request.
    max_fk_links: int = NODE_SPECS_BY_NAME["max_fk_links"].default


@dataclass(frozen=True, eq=False)
class ServingState:
    settings: ServiceSettings
    setup: RobotSetup | None = None
    #: The world and attached objects from the scene topics (never changed once in a ServingState).
    scene: PlanningScene | None = None
    #: The robot's checker on ``scene``; None when the robot's collision geometry cannot be loaded.
    checker: CollisionChecker | None = None
    #: Why there is no set-up (while ``setup`` is None).
    problem: str = NO_DESCRIPTION_YET

    def with_setup(self, setup: RobotSetup) -> ServingState:
        """This state serving ``setup``. The scene stays for the same robot model; for a new one its world objects
        (posed in the planning frame, the octomap too) and settings are carried over and the attached objects
        dropped (their links may be gone): see ``collision.scene.carried_to`` and ``carried_over``."""
        scene = self.scene
        if scene is None:
            scene = PlanningScene(setup.model)
        elif scene.robot_model is not setup.model:
            scene = carried_to(scene, setup.model)
        return replace(self, setup=setup, scene=scene, checker=_checker(setup, scene))

    def with_scene(self, scene: PlanningScene) -> ServingState:
        return replace(self, scene=scene, checker=_checker(self.setup, scene))

    def with_settings(self, settings: ServiceSettings) -> ServingState:
        return replace(self, settings=settings)

    def with_problem(self, problem: str) -> ServingState:
        return replace(self, problem=problem)


def _checker(setup: RobotSetup, scene: PlanningScene) -> CollisionChecker | None:
    robot_checker = setup.collision.checker
    return None if robot_checker is None else robot_checker.for_scene(scene)


def carried_over(before: ServingState, after: ServingState) -> str:
    """What became of the scene's objects when ``after`` replaced ``before``'s robot ("" if the scene stayed)."""
    old, new = before.scene, after.scene
    if old is None or old is new:
        return ""
    kept = [object_id for object_id in old.world_objects if object_id in new.world_objects]
    dropped = sorted(old.attached_objects) + [object_id for object_id in old.world_objects if object_id not in kept]
    if not kept and not dropped:
        return ""
    return (f"planning scene of the new robot description: world objects {kept} kept, {dropped} dropped (attached "
            f"objects are dropped)")


class StateStore:
    """The current ServingState: read without a lock, changed only under ``lock`` (reentrant), by one swap."""

    def __init__(self, state: ServingState):
        self.lock = threading.RLock()
        self._state = state

    @property
    def current(self) -> ServingState:
        return self._state

    def change(self, change: Callable[[ServingState], ServingState]) -> ServingState:
        """Install ``change(current)``; returns it."""
        with self.lock:
            self._state = change(self._state)
            return self._state
