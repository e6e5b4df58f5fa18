"""The scene topics and apply_planning_scene: the node's planning scene, kept as move_group keeps its world.

collision_object and attached_collision_object change one object each; moveit_msgs/PlanningScene messages (the
``planning_scene_topic`` and ``monitored_planning_scene_topic`` parameters, and the apply_planning_scene service)
are full scenes or diffs (``collision.scene_message``). Updates are applied one at a time, in the order
received, each to a copy of the current scene (robot links placed by the current joint_states), which then
replaces the scene in the node's state by one swap. A malformed update changes nothing; it is logged with the
reason and published on /diagnostics (``scene_diagnostics``).
"""
from __future__ import annotations

import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from moveit_msgs.msg import AttachedCollisionObject, CollisionObject, PlanningScene
from rclpy.callback_groups import MutuallyExclusiveCallbackGroup
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy

from ...collision.scene import Operation
from ...collision.scene import PlanningScene as Scene
from ...collision.scene_message import apply_planning_scene
from ...errors import KinematicsError
from ...robot_setup import RobotSetup
from ..frames import ModelFrames, TransformSource
from ..messages.conversions import attached_object_update, collision_object_update, operation_of
from ..messages.robot_state import JointPositions, joint_values
from ..messages.scene_conversions import planning_scene_message
from ..serving_state import StateStore
from .scene_diagnostics import SceneDiagnostics

#: World updates arrive in bursts (a scene set up object by object): keep them all, in order.
SCENE_QOS = QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.VOLATILE)


class SceneTopics:
    """Subscribes ``node`` to the scene topics and applies their updates to ``store``'s scene."""

    def __init__(self, node: Node, store: StateStore, positions: JointPositions, transforms: TransformSource,
                 planning_scene_topics: Sequence[str] = ()):
        self._logger = node.get_logger()
        self._store, self._positions, self._transforms = store, positions, transforms
        self._diagnostics = SceneDiagnostics(node)
        in_order = MutuallyExclusiveCallbackGroup()  # one update at a time, in the order published
        node.create_subscription(CollisionObject, "collision_object", self._on_collision_object, SCENE_QOS,
                                 callback_group=in_order)
        node.create_subscription(AttachedCollisionObject, "attached_collision_object",
                                 self._on_attached_collision_object, SCENE_QOS, callback_group=in_order)
        for topic in filter(None, planning_scene_topics):
            node.create_subscription(PlanningScene, topic, lambda msg, topic=topic: self.apply_scene_msg(topic, msg),
                                     SCENE_QOS, callback_group=in_order)

    def _on_collision_object(self, msg: CollisionObject) -> None:
        operation = _operation_name(operation_of(msg))
        self._update(Update(f"collision_object {msg.id!r} ({operation})", msg.id, "collision_object", operation),
                     lambda scene, frames: scene.apply(
                         collision_object_update(msg, frames.scene_resolver(scene), self._cap())))

    def _on_attached_collision_object(self, msg: AttachedCollisionObject) -> None:
        operation = _operation_name(operation_of(msg.object))
        what = f"attached_collision_object {msg.object.id!r} on link {msg.link_name!r} ({operation})"
        self._update(Update(what, msg.object.id, "attached_collision_object", operation),
                     lambda scene, frames: scene.apply_attached(
                         attached_object_update(msg, frames.scene_resolver(scene), self._cap())))

    def _cap(self) -> int:
        return self._store.current.settings.max_mesh_triangles

    def apply_scene_msg(self, source: str, msg: PlanningScene) -> bool:
        """Apply a moveit_msgs/PlanningScene (full or diff) from ``source``; False if it was refused."""
        kind = "diff" if msg.is_diff else "full"
        update = Update(f"planning scene {'diff' if msg.is_diff else '(full)'} {msg.name!r} from {source}", "",
                        source, kind)

        def apply(scene: Scene, frames: ModelFrames) -> None:
            apply_planning_scene(scene, planning_scene_message(msg, scene.robot_model, frames.scene_resolver(scene),
                                                               frames.is_model_frame, self._cap()))
        return self._update(update, apply)

    def apply_planning_scene(self, request, response, _context):
        """The apply_planning_scene service (moveit_msgs/srv/ApplyPlanningScene): success false if refused."""
        response.success = self.apply_scene_msg("apply_planning_scene", request.scene)
        return response

    def _update(self, update: Update, apply: Callable[[Scene, ModelFrames], None]) -> bool:
        """Apply one update to a copy of the scene and install it; under the store's lock, so that no set-up
        is installed in between (its scene would miss the update). False if it was refused."""
        what = update.what
        with self._store.lock:
            state = self._store.current
            setup: RobotSetup | None = state.setup
            if setup is None:
                self._logger.warning(f"{what} ignored: no robot description yet")
                self._refused(update, "no robot description yet", error=False)
                return False
            scene = state.scene.copy()
            scene.max_object_triangles = self._cap()
            try:
                scene.set_robot_state(joint_values(setup, self._positions.current))
                apply(scene, ModelFrames(setup, self._transforms))
            except (KinematicsError, ValueError) as error:  # SceneError, GeometryError
                self._logger.error(f"{what} refused, the planning scene is unchanged: {error}")
                self._refused(update, str(error))
                return False
            except Exception as error:  # never a dead node
                self._logger.error(f"{what}: internal error, the planning scene is unchanged: {error!r}\n"
                                   f"{traceback.format_exc()}")
                self._refused(update, f"internal error: {error!r}")
                return False
            if scene.version == state.scene.version:
                return True  # nothing the checks see changed (e.g. a diff of move_group's robot state)
            self._store.change(lambda current: current.with_scene(scene))
        # debug, as MoveIt's scene monitor: move_group sends diffs many times a second, and each rclpy log
        # call looks up its caller's source position
        self._logger.debug(f"{what} applied; world objects {sorted(scene.world_objects)}, attached objects "
                           f"{sorted(scene.attached_objects)}")
        return True


    def _refused(self, update: Update, reason: str, error: bool = True) -> None:
        self._diagnostics.refused(update.what, reason, object_id=update.object_id, source=update.source,
                                  operation=update.operation, error=error)


@dataclass(frozen=True)
class Update:
    """What an update is, for the log and /diagnostics: a description, the object's id ("" for a whole scene),
    the topic or service it came from and its operation (ADD, ..., or "diff" / "full" for a scene)."""

    what: str
    object_id: str
    source: str
    operation: str


def _operation_name(operation: int) -> str:
    try:
        return Operation(operation).name
    except ValueError:
        return f"operation {operation}"
