"""An action client whose goal futures always complete, and goals cancelled by their id.

rclpy 9.1.2's (Kilted's) ``ActionClient.send_goal_async`` registers the future of a goal's response under its lock,
then, after the lock, registers a second future in its place and returns that one (rclpy issue 1123, a backport
that kept both blocks). A response the executor takes in between completes the first future: the one returned
never completes, though the server accepted the goal. On a loaded machine that was a controller executing a goal
the node had given up on as unanswered. ``GoalClient`` registers the one future it returns before the request can
be answered, in the registries rclpy's ActionClient keeps (private attributes: test_goal_client runs it on the
installed rclpy, with the race widened).
"""
from __future__ import annotations

from rclpy.action import ActionClient
from rclpy.action.client import ClientGoalHandle
from rclpy.task import Future


class GoalClient(ActionClient):
    """rclpy's ActionClient with a race-free ``send_goal_async`` and ``cancel_by_id``."""

    def send_goal_async(self, goal, feedback_callback=None, goal_uuid=None) -> Future:
        request = self._action_type.Impl.SendGoalService.Request(
            goal_id=self._generate_random_uuid() if goal_uuid is None else goal_uuid, goal=goal)
        if feedback_callback is not None:
            self._feedback_callbacks[bytes(request.goal_id.uuid)] = feedback_callback
        future = Future()
        with self._lock:  # (the executor takes the response under this lock: it finds the future registered)
            sequence_number = self._client_handle.send_goal_request(request)
            self._pending_goal_requests[sequence_number] = future
            self._goal_sequence_number_to_goal_id[sequence_number] = request.goal_id
            future.add_done_callback(self._remove_pending_goal_request)
            self.add_future(future)
        return future

    def send_goal_with_id(self, goal) -> tuple[object, Future]:
        """The id (unique_identifier_msgs/UUID) of the goal sent and the future of its answer."""
        goal_id = self._generate_random_uuid()
        return goal_id, self.send_goal_async(goal, goal_uuid=goal_id)

    def cancel_by_id(self, goal_id) -> Future:
        """Cancel the goal ``goal_id`` whether or not its acceptance reached this client (a server that does not know
        it answers ERROR_UNKNOWN_GOAL_ID)."""
        return ClientGoalHandle(self, goal_id, self._action_type.Impl.SendGoalService.Response(accepted=True)) \
            .cancel_goal_async()

