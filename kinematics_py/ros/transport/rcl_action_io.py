"""An action server's requests taken and its answers sent through rcl_action itself, as ``rcl_service_io`` does for
services.

rclpy's ``ActionServer`` sends a goal's acceptance, a cancel's answer and a result with ``send_*_response``, which
turns RCL_RET_TIMEOUT (the client's reader not matched yet by the server's answer writer within rmw's wait, e.g.
discovery lagging on a loaded machine) into a RuntimeWarning and returns as if it had sent the answer: a goal
accepted whose client never hears it was. Sending through ``rcl_action_send_*_response`` gives the return code
(``Delivery``) and ``Resender`` sends such an answer again. The answer needs the request's header in C (the client's
GUID in it, which rclpy's header does not expose), so the requests are taken here too, with
``rcl_action_take_*_request``.

ROS-specific but executor-free: rcl_action's take and send functions are its stable C API.
"""
from __future__ import annotations

import ctypes

from rclpy.exceptions import InvalidHandle

from . import rcl_service_io as rcl
from .rcl_service_io import Delivery, MessageFunctions, RequestId, send_response

#: rcl_action's return code for "no request waiting" (rcl_action/types.h).
RCL_RET_ACTION_SERVER_TAKE_FAILED = 2201
#: An action's three services, by the kind of request they take: their types' names in ``<Action>.Impl``.
SERVICE_TYPES = {"goal": "SendGoalService", "cancel": "CancelGoalService", "result": "GetResultService"}

_rcl_action = rcl.loaded_library("rcl_action")
for _kind in SERVICE_TYPES:
    for _verb in (f"rcl_action_take_{_kind}_request", f"rcl_action_send_{_kind}_response"):
        getattr(_rcl_action, _verb).argtypes = [ctypes.c_void_p, ctypes.POINTER(RequestId), ctypes.c_void_p]
        getattr(_rcl_action, _verb).restype = ctypes.c_int32


class ActionIO:
    """One kind of request ("goal", "cancel" or "result") of an rclpy ``ActionServer``, taken and answered through
    rcl_action under the server's lock; an ``AnswerChannel`` for ``Resender``."""

    def __init__(self, server, action: str, kind: str):
        self._server, self.kind = server, kind
        self.name = f"{action}/_action/{'get_result' if kind == 'result' else kind}"
        service_type = getattr(server._action_type.Impl, SERVICE_TYPES[kind])
        self.request_functions = MessageFunctions(service_type.Request)
        self.response_functions = MessageFunctions(service_type.Response)
        self._take = getattr(_rcl_action, f"rcl_action_take_{kind}_request")
        self._send = getattr(_rcl_action, f"rcl_action_send_{kind}_response")

    def take(self) -> tuple[RequestId, object] | None:
        """(the request's header, its Python message), or None (none waits, or the server was destroyed)."""
        request_id = RequestId()
        c_message = self.request_functions.create()
        if not c_message:
            raise MemoryError(f"cannot allocate a {self.request_functions.name}")
        try:
            with self._server._lock, self._server._handle:
                result = self._take(self._server._handle.pointer, ctypes.byref(request_id), c_message)
            if result == rcl.RCL_RET_OK:
                return request_id, self.request_functions.to_python(c_message)
        except InvalidHandle:  # the node is stopping
            return None
        finally:
            self.request_functions.destroy(c_message)
        if result != RCL_RET_ACTION_SERVER_TAKE_FAILED:
            raise rcl.ServiceIOError(f"taking a {self.kind} request on {self.name} failed: {rcl.rcl_error_text()}")
        return None

    def send(self, request_id: RequestId, response) -> tuple[Delivery, str]:
        """Give ``response`` to rcl_action for the request ``request_id``: (what became of it, rcl's reason when
        not sent)."""
        def send_in_c(c_message: int) -> int:
            with self._server._lock, self._server._handle:
                return self.send_now(request_id, c_message)
        return send_response(self.response_functions, response, send_in_c)

    def send_now(self, request_id: RequestId, c_message: int) -> int:
        """One try: rcl_action's return code."""
        return self._send(self._server._handle.pointer, ctypes.byref(request_id), c_message)

    def describe(self, request_id: RequestId) -> str:
        return f"{self.kind} request {request_id.sequence_number} of client {bytes(request_id.writer_guid).hex()}"
