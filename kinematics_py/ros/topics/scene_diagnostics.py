"""Refused planning-scene updates on /diagnostics (diagnostic_msgs/DiagnosticArray), so that a client sees why
its object is not in the scene, not only the node's log.

One DiagnosticStatus per refused update: level ERROR (WARN when the node has no robot description yet), name
"<node>: planning scene", message "<update> refused: <reason>", and values ``object`` (the object's id; empty
for a whole scene message), ``source`` (topic or service), ``operation`` and ``reason``.
"""
from __future__ import annotations

from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from rclpy.node import Node

DIAGNOSTICS_TOPIC = "/diagnostics"


class SceneDiagnostics:
    """Publishes refused scene updates of ``node`` on /diagnostics."""

    def __init__(self, node: Node):
        self._node = node
        self._publisher = node.create_publisher(DiagnosticArray, DIAGNOSTICS_TOPIC, 10)
        self._name = f"{node.get_name()}: planning scene"

    def refused(self, what: str, reason: str, *, object_id: str, source: str, operation: str,
                error: bool = True) -> None:
        status = DiagnosticStatus(level=DiagnosticStatus.ERROR if error else DiagnosticStatus.WARN, name=self._name,
                                  message=f"{what} refused: {reason}", hardware_id="", values=[
                                      KeyValue(key="object", value=object_id), KeyValue(key="source", value=source),
                                      KeyValue(key="operation", value=operation), KeyValue(key="reason", value=reason)])
        array = DiagnosticArray(status=[status])
        array.header.stamp = self._node.get_clock().now().to_msg()
        self._publisher.publish(array)
