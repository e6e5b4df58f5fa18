"""What the node shows in RViz: planned Cartesian paths as moveit_msgs/DisplayTrajectory on
``display_planned_path`` (as move_group publishes its plans), and, when the ``ik_display_topic`` parameter names
a topic, every successful IK answer as moveit_msgs/DisplayRobotState there (latched: the last answer reaches
late subscribers)."""
from __future__ import annotations

import threading

from moveit_msgs.msg import DisplayRobotState, DisplayTrajectory, MoveItErrorCodes
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy

#: move_group's topic for planned paths (RViz's MotionPlanning display listens to it).
PLANNED_PATH_TOPIC = "display_planned_path"
PLANNED_PATH_QOS = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE,
                              durability=DurabilityPolicy.VOLATILE)
IK_ANSWER_QOS = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                           durability=DurabilityPolicy.TRANSIENT_LOCAL)


class DisplayPublishers:
    """The node's display topics; the IK answer topic follows the ``ik_display_topic`` parameter as it changes."""

    def __init__(self, node: Node):
        self._node = node
        self._planned_path = node.create_publisher(DisplayTrajectory, PLANNED_PATH_TOPIC, PLANNED_PATH_QOS)
        self._lock = threading.Lock()
        self._ik_answers: dict[str, object] = {}

    def planned_path(self, model_id: str, trajectory, trajectory_start) -> None:
        """The plan on display_planned_path, when the topic has subscribers (volatile: none would get it later; the
        message is not built and serialised for nobody)."""
        if self._planned_path.get_subscription_count() == 0:
            return
        self._planned_path.publish(DisplayTrajectory(model_id=model_id, trajectory=[trajectory],
                                                     trajectory_start=trajectory_start))

    def showing_ik_answers(self, handler):
        """``handler`` (a GetPositionIK handler) that also publishes each solution it answers with."""
        def answer(request, response, context):
            handler(request, response, context)
            topic = self._node.get_parameter("ik_display_topic").value
            if topic and response.error_code.val == MoveItErrorCodes.SUCCESS:
                publisher = self._ik_answer_publisher(topic)
                if publisher is not None:
                    publisher.publish(DisplayRobotState(state=response.solution))
            return response
        return answer

    def _ik_answer_publisher(self, topic: str):
        """The publisher of ``topic`` (created on first use); None, logged, for a topic name ROS refuses."""
        with self._lock:
            if topic not in self._ik_answers:
                try:
                    self._ik_answers[topic] = self._node.create_publisher(DisplayRobotState, topic, IK_ANSWER_QOS)
                except Exception as error:  # rclpy raises its own errors for invalid topic names
                    self._node.get_logger().error(f"ik_display_topic {topic!r}: cannot publish there: {error}")
                    self._ik_answers[topic] = None
            return self._ik_answers[topic]
