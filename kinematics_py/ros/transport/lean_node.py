"""``LeanNode``: an rclpy ``Node`` whose topics have no QoS event handlers unless asked for.

Each event handler is a waitable that every pass of the executor's wait loop builds and checks in Python; with
rclpy's two defaults on every publisher and subscription they made half of the kinematics node's cost per request.
The kinematics node and the servo process's node are both lean.
"""
from __future__ import annotations

from rclpy.event_handler import PublisherEventCallbacks, SubscriptionEventCallbacks
from rclpy.node import Node


class LeanNode(Node):
    """rclpy's Node, without QoS event handlers on its topics except those named in ``EVENT_TOPICS``."""

    #: Topics whose subscriptions keep rclpy's default event handlers (QoS a publisher easily gets wrong).
    EVENT_TOPICS: tuple[str, ...] = ()

    def create_subscription(self, msg_type, topic, callback, qos_profile, **options):
        if "event_callbacks" not in options and topic not in self.EVENT_TOPICS:
            options["event_callbacks"] = SubscriptionEventCallbacks(use_default_callbacks=False)
        return super().create_subscription(msg_type, topic, callback, qos_profile, **options)

    def create_publisher(self, msg_type, topic, qos_profile, **options):
        options.setdefault("event_callbacks", PublisherEventCallbacks(use_default_callbacks=False))
        return super().create_publisher(msg_type, topic, qos_profile, **options)
