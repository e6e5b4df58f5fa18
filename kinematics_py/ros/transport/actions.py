"""Action servers on the node's executor: every goal accepted, every cancel request accepted, the execution run
on a pool thread that may wait for long (``DaemonPool.waiting_long``: the pool starts a thread more meanwhile, so
the callbacks the execution waits for never wait for its thread), and any exception ended as the result's error
code, never a goal left hanging: not even when an answer cannot be sent at once or publishing the goals' status
array fails (``GoalKeepingServer``)."""
from __future__ import annotations

import contextlib
import time
import traceback
from collections.abc import Callable

from action_msgs.msg import GoalInfo, GoalStatus
from rclpy.action import ActionServer
from rclpy.action.server import GoalEvent, ServerGoalHandle
from rclpy.executors import await_or_execute
from rclpy.impl.implementation_singleton import rclpy_implementation
from rclpy.task import Future

from ...errors import ErrorCode
from ..messages.conversions import error_code_msg
from .rcl_action_io import SERVICE_TYPES, ActionIO
from .rcl_service_io import Resender

#: An execution: (goal handle, result to fill, stop) -> (code, message); ``stop()`` says why the goal should stop
#: ("" while it runs on).
Execution = Callable[[object, object, Callable[[], str]], "tuple[ErrorCode, str]"]
RCLError = rclpy_implementation.RCLError
#: How often [s] the ROS graph is asked whether an action still has a client.
CLIENTS_CHECK_S = 0.1
#: How long [s] a goal's client may stay unseen in the node's ROS graph before it counts as gone. Its goal request
#: can arrive before the node has discovered its feedback subscription (DDS announces a participant's endpoints one
#: by one, later on a busy machine), and the client it replaced may have left the graph already: zero
#: subscribers then is discovery, not a departure.
CLIENT_DISCOVERY_S = 2.0


def waiting_long(node):
    """The node's executor's ``waiting_long`` (NodeExecutor), else a context that does nothing."""
    pool = getattr(node.executor, "pool", None)
    return pool.waiting_long() if hasattr(pool, "waiting_long") else contextlib.nullcontext()


def moveit_error_code(source: str, within: str = "") -> Callable[[object, ErrorCode, str], None]:
    """Sets a MoveIt action result's ``error_code`` (MoveItErrorCodes, with the message and ``source``), or its
    field ``within``'s (MoveGroupSequence's result holds it in ``response``)."""
    def fill(result, code: ErrorCode, message: str) -> None:
        (getattr(result, within) if within else result).error_code = error_code_msg(code, message, source)
    return fill


def serve_action(node, action_type, name: str, execution: Execution, callback_group,
                 fill: Callable[[object, ErrorCode, str], None]) -> ActionServer:
    """An action server of ``action_type`` on ``name``: each goal's result is filled by ``execution`` and by
    ``fill(result, code, message)`` from the (code, message) it returns; the goal ends canceled when its cancel was
    requested, succeeded on SUCCESS, aborted otherwise (as move_group ends its goals)."""
    logger = node.get_logger()

    def execute(goal_handle):
        result = action_type.Result()
        with waiting_long(node):
            try:
                code, message = execution(goal_handle, result, _Stop(node, name, goal_handle))
            except Exception as error:  # never a goal left hanging
                logger.error(f"internal error executing a {name} goal: {error!r}\n{traceback.format_exc()}")
                code, message = ErrorCode.FAILURE, f"internal error: {error!r}"
        fill(result, code, message)
        try:
            _end(goal_handle, code)
        except RCLError as error:
            if goal_handle.is_active:  # not a status left unpublished: the transition itself failed
                raise
            logger.warning(f"{goal_name(name, goal_handle)} ended; its status was not published: {error!r}")
            server.notify_goal_done()  # (rclpy's transition stopped before it)
        return result

    server = GoalKeepingServer(node, action_type, name, execute_callback=execute, callback_group=callback_group)
    return server


def _end(goal_handle, code: ErrorCode) -> None:
    """The goal canceled when its cancel was requested, succeeded on SUCCESS, aborted otherwise."""
    if goal_handle.is_cancel_requested and code != ErrorCode.SUCCESS:
        goal_handle.canceled()
    elif code == ErrorCode.SUCCESS:
        goal_handle.succeed()
    else:
        goal_handle.abort()


class GoalKeepingServer(ActionServer):
    """rclpy's ActionServer, but every goal accepted and executed, every cancel request accepted, and every request
    answered: rclpy's own request handling is replaced where it loses a goal or an answer.

    - An answer rmw did not send (the client's reader not matched yet by the server's answer writer, e.g. discovery
      lagging on a loaded machine) is sent again by the executor's ``Resender``. rclpy dropped it with a warning
      (RCL_RET_TIMEOUT) or a log line (other errors): a goal accepted but its client never told, a result or a
      cancel answer never received. The requests are taken and answered through rcl_action (``ActionIO``), which
      says when an answer was not sent.
    - rclpy publishes the status array of the goals right after answering a goal request "accepted", and at each
      transition of a goal. An error there (Fast DDS refused the write now and then on a loaded machine: RCLError
      "Failed publish goal status array: cannot publish data") ended rclpy's handling of the goal request with the
      goal accepted but never executed, and dropped the cancel and result requests taken with it. Here the goal
      executes all the same: the status array published at its next transition tells its state then."""

    def __init__(self, node, action_type, action: str, **kwargs):
        super().__init__(node, action_type, action, handle_accepted_callback=self._start, **kwargs)
        self._action, self._log = action, node.get_logger()
        self.requests = {kind: ActionIO(self, action, kind) for kind in SERVICE_TYPES}
        self._own_resender: Resender | None = None

    def take_data(self) -> dict:
        """rclpy's, but the requests taken through rcl_action (``ActionIO``), so that they can be answered through
        it."""
        data = {}
        for kind, ready in (("goal", self._is_goal_request_ready), ("cancel", self._is_cancel_request_ready),
                            ("result", self._is_result_request_ready)):
            if ready:
                taken = self.requests[kind].take()
                if taken is not None:
                    data[kind] = taken
        if self._is_goal_expired:
            with self._lock:
                data["expired"] = self._handle.expire_goals(len(self._goal_handles))
        return data

    async def execute(self, taken_data) -> None:
        failure = None
        for kind, data in taken_data.items():  # rclpy's order: goal, cancel, result, expired
            try:
                await super().execute({kind: data})
            except RCLError as error:
                failure = failure or error
        if failure is not None:
            raise failure

    async def _execute_goal_request(self, request_header_and_message) -> None:
        request_header, goal_request = request_header_and_message
        goal_info = GoalInfo(goal_id=goal_request.goal_id, stamp=self._node.get_clock().now().to_msg())
        goal_handle = self._accept(goal_info, goal_request.goal)
        self._answer("goal", request_header, self._action_type.Impl.SendGoalService.Response(
            accepted=goal_handle is not None, stamp=goal_info.stamp))
        if goal_handle is None:
            return
        try:
            self._handle.publish_status()
            await await_or_execute(self._handle_accepted_callback, goal_handle)
        except RCLError as error:
            if goal_handle.status != GoalStatus.STATUS_ACCEPTED:
                raise
            self._log.warning(f"{_goal_named(self._action, goal_info.goal_id)} accepted; its status was not "
                              f"published ({error!r}): it executes all the same")
            self._start(goal_handle)

    def _accept(self, goal_info: GoalInfo, goal) -> ServerGoalHandle | None:
        """The goal's handle, its result awaited; None when its id is taken already or rcl refused it."""
        with self._lock:
            if self._handle.goal_exists(goal_info):
                return None
            try:
                goal_handle = ServerGoalHandle(self, goal_info, goal)
            except RuntimeError as error:
                self._log.error(f"{_goal_named(self._action, goal_info.goal_id)} not accepted: {error}")
                return None
        uuid = bytes(goal_info.goal_id.uuid)
        self._goal_handles[uuid] = goal_handle  # (rclpy's own tables of goals and results)
        self._result_futures[uuid] = Future()
        self.add_future(self._result_futures[uuid])
        return goal_handle

    def _start(self, goal_handle) -> None:
        """An accepted goal's execution started (rclpy's default, but also when its EXECUTING status could not be
        published)."""
        try:
            goal_handle.execute()
        except RCLError:
            if goal_handle.status != GoalStatus.STATUS_EXECUTING:
                raise
            self.notify_execute(goal_handle, None)

    async def _execute_cancel_request(self, request_header_and_message) -> None:
        request_header, cancel_request = request_header_and_message
        with self._lock:
            response = self._handle.process_cancel_request(cancel_request,
                                                           self._action_type.Impl.CancelGoalService.Response)
        response.goals_canceling = [goal_info for goal_info in response.goals_canceling if self._cancel(goal_info)]
        self._answer("cancel", request_header, response)

    def _cancel(self, goal_info: GoalInfo) -> bool:
        """The goal's cancel requested (False: not a goal of this server, or one that ended meanwhile)."""
        goal_handle = self._goal_handles.get(bytes(goal_info.goal_id.uuid))
        if goal_handle is None:
            return False
        try:
            goal_handle._update_state(GoalEvent.CANCEL_GOAL)
        except RCLError:  # the goal ended meanwhile, or the CANCELING status was not published
            return goal_handle.status == GoalStatus.STATUS_CANCELING
        return True

    async def _execute_get_result_request(self, request_header_and_message) -> None:
        request_header, result_request = request_header_and_message
        result = self._result_futures.get(bytes(result_request.goal_id.uuid))
        if result is None:  # an unknown goal, or one expired
            self._answer("result", request_header, self._action_type.Impl.GetResultService.Response(
                status=GoalStatus.STATUS_UNKNOWN))
        else:
            result.add_done_callback(lambda done: self._answer("result", request_header, done.result()))

    def _answer(self, kind: str, request_header, response) -> None:
        if response is not None:
            self._resender().send(self.requests[kind], request_header, response)

    def _resender(self) -> Resender:
        """The node's executor's (NodeExecutor), else one of this server's own."""
        resender = getattr(self._node.executor, "resends", None)
        if resender is None:
            if self._own_resender is None:
                self._own_resender = Resender(self._log)
            resender = self._own_resender
        return resender


class _Stop:
    """Why a goal should stop ("" while it runs on): its client asked to cancel it, or no client of its action is
    left in the ROS graph (its client is gone, and with it anyone to tell the result: DDS announces a client that
    ends at once, one whose process was killed when its lease runs out). A client of the action counts as gone once
    one was seen during the goal, or CLIENT_DISCOVERY_S after the goal began (its client may not be discovered yet).
    rclpy does not name a goal's client, so a client that leaves while another client of the action stays is not
    seen."""

    def __init__(self, node, action: str, goal_handle, clock: Callable[[], float] = time.monotonic):
        self._node, self._goal_handle, self._clock = node, goal_handle, clock
        self._feedback_topic = f"{action}/_action/feedback"  # every rclpy and rclcpp action client subscribes to it
        self._next_check = 0.0
        self._unseen_until = clock() + CLIENT_DISCOVERY_S  # None once a client was seen

    def __call__(self) -> str:
        if self._goal_handle.is_cancel_requested:
            return "cancelled by its client"
        now = self._clock()
        if now >= self._next_check:
            self._next_check = now + CLIENTS_CHECK_S
            if self._node.count_subscribers(self._feedback_topic) > 0:
                self._unseen_until = None
            elif self._unseen_until is None or now >= self._unseen_until:
                return f"no client of {self._feedback_topic.split('/_action')[0]} is left: its client is gone"
        return ""


def feedback(goal_handle, action_type, state: str) -> None:
    """Publish move_group's feedback: the goal's ``state``."""
    goal_handle.publish_feedback(action_type.Feedback(state=state))


def goal_name(action: str, goal_handle) -> str:
    """A goal as logs and messages name it: its action and the start of its id."""
    return _goal_named(action, goal_handle.goal_id)


def _goal_named(action: str, goal_id) -> str:
    return f"{action} goal {bytes(goal_id.uuid).hex()[:8]}"
