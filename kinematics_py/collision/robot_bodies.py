"""The bodies that move with a robot, as the checker's tables order them: its links with collision geometry, then the
objects attached to them, each with its shapes in the frame of the link it moves with.

The sphere tables (``sphere_world``), the witness points and the motion bound (``planning.motion_bound``) take a
robot's bodies from here, so an object held in the hand is checked, proven and bounded as one more body of its link.
"""
from __future__ import annotations

import weakref
from collections.abc import Mapping
from dataclasses import dataclass

from .geometry import Placed
from .scene import AttachedObject

_KEPT: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # checker -> (scene version, its bodies)
_POSED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # attached SceneObject -> its shapes on its link


@dataclass(frozen=True, eq=False)
class RobotBody:
    """A link with collision geometry (``attached`` None) or an object attached to ``link``."""

    name: str  # the link's name, or the attached object's id
    link: str  # the link it moves with (its own name for a link)
    shapes: tuple[Placed, ...]  # posed in ``link``'s frame
    attached: AttachedObject | None = None


def robot_bodies(checker) -> tuple[RobotBody, ...]:
    """The checker's links with geometry, then its scene's attached objects (kept per scene version; the shapes of a
    link are the checker's own ``Placed`` values, an attached object's are posed once per object)."""
    kept = _KEPT.get(checker)
    if kept is not None and kept[0] == checker.scene.version and kept[1] is checker.link_geometry:
        return kept[2]
    bodies = tuple(RobotBody(link, link, shapes) for link, shapes in checker.link_geometry.items()) + tuple(
        RobotBody(object_id, item.link, _posed(item), item)
        for object_id, item in checker.scene.attached_objects.items())
    _KEPT[checker] = (checker.scene.version, checker.link_geometry, bodies)
    return bodies


def _posed(item: AttachedObject) -> tuple[Placed, ...]:
    """An attached object's shapes in its link's frame, kept per object (a new attachment is a new object)."""
    posed = _POSED.get(item.object)
    if posed is None:
        T = item.object.T_parent_object
        posed = _POSED[item.object] = tuple(Placed(placed.shape, T @ placed.T_frame_shape)
                                            for placed in item.object.shapes)
    return posed


def body_growth(checker, body: RobotBody) -> float:
    """What the checker grows a body's shapes by [m]: a link's padding and offset, an attached object's offset."""
    return checker.offset(body.name) if body.attached else checker.padding(body.link) + checker.offset(body.link)


def pair_tested(a: RobotBody, b: RobotBody, disabled_pairs: Mapping[frozenset[str], str]) -> bool:
    """Whether the checker tests bodies ``a`` and ``b`` against each other: not a disabled pair, nor an attached object
    and its link or one of its touch links."""
    if frozenset((a.name, b.name)) in disabled_pairs:
        return False
    for held, other in ((a, b), (b, a)):
        if held.attached is not None and other.attached is None and \
                other.name in held.attached.touch_links | {held.link}:
            return False
    return True
