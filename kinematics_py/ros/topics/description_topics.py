"""The robot descriptions from their topics, and what the node does while the robot's has not come.

``robot_description`` and ``robot_description_semantic`` (std_msgs/String, transient local) are published once:
robot_state_publisher, move_group and kinematics_description_publisher publish them when they start, and a
subscriber that joins later gets the last one from the publisher's history, and never another. The executor
takes a subscription's message only when its wait set reports the subscription ready; for a topic published
once, one report that never comes (the sample already in the reader, the wake-up lost between DDS, rmw and the
wait loop) leaves the node without a robot for good, and nothing would ever try again.

So, while the node has no ``robot_description`` (its parameter empty and nothing received), every
WAIT_CHECK_S ``DescriptionTopics``:

- takes what the description readers hold, reported or not (a take is the executor's own, from the same
  reader: a message is delivered once, by whichever takes it first);
- asks robot_state_publisher's ``robot_description`` parameter through its ``get_parameters`` service, as
  MoveIt's tools do (``robot_state_publisher`` in the node's namespace: ``/robot_state_publisher`` for a node
  in the root namespace; the service exists only where robot_state_publisher runs);
- every WAIT_LOG_S, logs what it waits for: the topic's publishers, and robot_state_publisher's answer.

It stops once the robot's description has come, and the semantic one too where a publisher offers it.
"""
from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping

from rcl_interfaces.msg import ParameterType
from rcl_interfaces.srv import GetParameters
from rclpy.exceptions import InvalidHandle
from rclpy.impl.implementation_singleton import rclpy_implementation
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from std_msgs.msg import String

#: robot_state_publisher's and move_group's QoS for the descriptions: the last one kept for late subscribers.
DESCRIPTION_QOS = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                             durability=DurabilityPolicy.TRANSIENT_LOCAL)
URDF, SRDF = "robot_description", "robot_description_semantic"
#: Where a description came from, as the node's logs say it ("from the ..."): its topic, or robot_state_publisher.
TOPIC = "topic"
#: How often [s] the waiting node takes what the description readers hold and asks robot_state_publisher.
WAIT_CHECK_S = 1.0
#: How often [s] the waiting node says what it waits for.
WAIT_LOG_S = 5.0
#: The node whose ``robot_description`` parameter the waiting node asks for (relative: in the node's namespace).
STATE_PUBLISHER = "robot_state_publisher"
STATE_PUBLISHER_PARAMETER = f"{STATE_PUBLISHER}'s parameter"


class DescriptionTopics:
    """Subscribes ``node`` to ``robot_description`` and ``robot_description_semantic``; each message, and the
    URDF robot_state_publisher's parameter gives while the node waits for one, goes to
    ``on_descriptions({which: text}, source)`` (those one wait check takes, together). ``missing(which)``:
    whether the node still has no such description (its parameter empty and none received)."""

    def __init__(self, node: Node, on_descriptions: Callable[[Mapping[str, str], str], None],
                 missing: Callable[[str], bool], callback_group=None):
        self._node, self._on_descriptions, self._missing = node, on_descriptions, missing
        self._logger = node.get_logger()
        self._subscriptions = {which: node.create_subscription(
            String, which, lambda msg, which=which: on_descriptions({which: msg.data}, TOPIC), DESCRIPTION_QOS,
            callback_group=callback_group) for which in (URDF, SRDF)}
        self._state_publisher = node.create_client(GetParameters, f"{STATE_PUBLISHER}/get_parameters",
                                                   callback_group=callback_group)
        self._state_publisher_service = node.resolve_service_name(self._state_publisher.srv_name)
        self._checking = threading.Lock()  # one check at a time (the timer's group is reentrant)
        self._asked = None
        #: What robot_state_publisher answered last ("" until it did).
        self._answered = ""
        self._started = time.monotonic()
        self._next_log = self._started + WAIT_LOG_S
        self._timer = node.create_timer(WAIT_CHECK_S, self.check, callback_group=callback_group)

    @property
    def waiting(self) -> bool:
        """Whether the wait check still runs."""
        return self._timer is not None

    def check(self) -> None:
        """One wait check (see the module docstring); the last once nothing is waited for. Skipped while another
        runs (one handing a description over waits while its robot is built, up to robot_setup_wait)."""
        if not self._checking.acquire(blocking=False):
            return
        try:
            if self._timer is not None:
                self._check()
        finally:
            self._checking.release()

    def _check(self) -> None:
        taken = {which: message for which, subscription in self._subscriptions.items()
                 if self._missing(which) and (message := self._take(which, subscription)) is not None}
        if taken:
            now = time.time_ns()
            self._logger.info("taken from the reader by the wait check, not by the executor: " + ", ".join(
                f"{which} ({(now - received) * 1e-9:.2f} s after it arrived)"
                for which, (_, received) in taken.items()))
            self._on_descriptions({which: text for which, (text, _) in taken.items()}, TOPIC)
        if self._missing(URDF):
            self._ask_state_publisher()
            if time.monotonic() >= self._next_log:
                self._next_log = time.monotonic() + WAIT_LOG_S
                self._logger.info(self._waiting_for())
        elif not (self._missing(SRDF) and self._node.count_publishers(self._subscriptions[SRDF].topic_name)):
            self._stop()

    def _ask_state_publisher(self) -> None:
        """Ask robot_state_publisher's robot_description parameter (one request at a time); a non-empty answer
        is the node's robot_description."""
        if self._asked is not None:
            if not self._asked.done():
                return
            text = _string_parameter(self._asked.result())
            self._asked = None
            self._answered = f"its robot_description parameter is {'set' if text else 'empty or unset'}"
            if text:
                self._logger.info(f"{URDF} from {self._state_publisher_service}")
                self._on_descriptions({URDF: text}, STATE_PUBLISHER_PARAMETER)
            return
        if self._state_publisher.service_is_ready():
            self._asked = self._state_publisher.call_async(GetParameters.Request(names=[URDF]))

    def _waiting_for(self) -> str:
        topic = self._subscriptions[URDF].topic_name
        publishers = self._node.count_publishers(topic)
        state_publisher = self._answered or ("asked, no answer yet" if self._asked is not None
                                             else "no such service")
        return (f"no robot yet, {time.monotonic() - self._started:.0f} s after start: waiting for {topic} "
                f"({publishers} publisher(s), nothing received) or {self._state_publisher_service} "
                f"({state_publisher}); the {URDF} parameter is empty")

    def _take(self, which: str, subscription) -> tuple[str, int] | None:
        """The text of the message ``subscription``'s reader holds, taken, and when it arrived there [ns since the
        epoch] (None: none, or rcl failed to take it: logged, tried again at the next check)."""
        try:
            with subscription.handle:
                taken = subscription.handle.take_message(subscription.msg_type, subscription.raw)
        except (InvalidHandle, rclpy_implementation.RCLError) as error:
            self._logger.warning(f"{which}: taking from the reader failed: {error}", throttle_duration_sec=WAIT_LOG_S)
            return None
        return None if taken is None else (taken[0].data, taken[1]["received_timestamp"])

    def _stop(self) -> None:
        self._node.destroy_timer(self._timer)
        self._node.destroy_client(self._state_publisher)
        self._timer = None


def _string_parameter(response) -> str:
    """The string value a GetParameters answer gives for its one name ("" when unset or not a string)."""
    values = response.values if response is not None else []
    if len(values) != 1 or values[0].type != ParameterType.PARAMETER_STRING:
        return ""
    return values[0].string_value
