"""A service's requests taken and answered through rcl itself: with the client's identity, the Python message
built only when the request runs, and an answer rmw did not send sent again instead of dropped.

rclpy's ``service_take_request`` gives a request header whose client (the request writer's GUID) Python cannot
read, and builds the Python message at once, in the taking thread and holding the GIL: a 10,000-name compute_fk
request took milliseconds there, while every request behind it in DDS waited. ``ServiceIO.take`` calls
``rcl_take_request_with_info`` (the GIL released while DDS deserializes) into a C message of the request's type,
made and converted by the type's own rosidl functions (the capsules rclpy uses); ``TakenRequest.message`` builds
the Python message when the request is about to run, and ``discard`` frees one that never will (its client
gone). ``ServiceIO.send`` calls ``rcl_send_response``: rclpy turns its RCL_RET_TIMEOUT (the answer's client
not matched by the service's response writer within rmw's wait, e.g. discovery lagging under load) into a
warning, and its other errors into an exception (e.g. "cannot publish data": the writer's history full of
answers slow clients have not acknowledged, when its blocking time ran out): either way the answer is lost. Here
they are ``Delivery.CLIENT_NOT_MATCHED`` and ``Delivery.NOT_WRITTEN``, and ``Resender`` sends them again.

ROS-specific but executor-free: rcl is the C library every ROS 2 client library is built on, and these two
functions and structures are its stable API (rmw_service_info_t since Foxy).
"""
from __future__ import annotations

import ctypes
import threading
import time
from collections import deque
from collections.abc import Callable
from enum import Enum
from typing import Protocol

from rclpy.exceptions import InvalidHandle

from ...errors import KinematicsError

#: An answer rmw did not send is sent again every RESEND_PERIOD_S [s] (rmw itself waits up to 0.1 s on each
#: send, for the client's match or for room in the writer's history), for RESEND_FOR_S [s] at most.
RESEND_PERIOD_S = 0.05
RESEND_FOR_S = 60.0
#: An answer sent again is a debug message while it is sent within LATE_ANSWER_S [s] of its first try (a client
#: not matched yet for a moment is ordinary on a loaded machine), a warning when later, an error when given up.
LATE_ANSWER_S = 1.0

#: rcl_ret_t values (rcl/types.h).
RCL_RET_OK = 0
RCL_RET_TIMEOUT = 2
RCL_RET_SERVICE_TAKE_FAILED = 601


class ServiceIOError(KinematicsError):
    """A request rcl could not take, or one already discarded; an answer that is not the service's response."""


class RequestId(ctypes.Structure):
    """rmw_request_id_t: the GUID the rmw names the client by (rmw_fastrtps: its response reader's) and the
    request's sequence number."""

    _fields_ = [("writer_guid", ctypes.c_uint8 * 16), ("sequence_number", ctypes.c_int64)]


class ServiceInfo(ctypes.Structure):
    """rmw_service_info_t."""

    _fields_ = [("source_timestamp", ctypes.c_int64), ("received_timestamp", ctypes.c_int64),
                ("request_id", RequestId)]


class _RclString(ctypes.Structure):
    _fields_ = [("data", ctypes.c_char_p), ("size", ctypes.c_size_t), ("capacity", ctypes.c_size_t)]


class _Sequence(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("size", ctypes.c_size_t), ("capacity", ctypes.c_size_t)]


class _Header(ctypes.Structure):
    """std_msgs/Header in C: builtin_interfaces/Time (int32 sec, uint32 nanosec), then the frame_id string."""

    _fields_ = [("sec", ctypes.c_int32), ("nanosec", ctypes.c_uint32), ("frame_id", _RclString)]


class _FkRequestStart(ctypes.Structure):
    """The start of moveit_msgs/srv/GetPositionFK_Request in C: its header, then fk_link_names."""

    _fields_ = [("header", _Header), ("fk_link_names", _Sequence)]


def fk_link_count(c_request: int) -> int:
    """How many names a GetPositionFK request in C asks for, read before building its Python message."""
    return int(_FkRequestStart.from_address(c_request).fk_link_names.size)


def loaded_library(name: str) -> ctypes.CDLL:
    """``lib<name>.so`` as rclpy has loaded it (its directory is on the loader's path in a ROS environment; else
    the loaded file itself, from this process's memory map)."""
    try:
        return ctypes.CDLL(f"lib{name}.so")
    except OSError:
        with open("/proc/self/maps", encoding="utf-8") as maps:
            for line in maps:
                path = line.split()[-1]
                if path.endswith(f"/lib{name}.so"):
                    return ctypes.CDLL(path)
        raise


_rcl = loaded_library("rcl")
_rcl.rcl_take_request_with_info.argtypes = [ctypes.c_void_p, ctypes.POINTER(ServiceInfo), ctypes.c_void_p]
_rcl.rcl_take_request_with_info.restype = ctypes.c_int32
_rcl.rcl_send_response.argtypes = [ctypes.c_void_p, ctypes.POINTER(RequestId), ctypes.c_void_p]
_rcl.rcl_send_response.restype = ctypes.c_int32
_rcutils = loaded_library("rcutils")


class _ErrorString(ctypes.Structure):
    _fields_ = [("text", ctypes.c_char * 1024)]  # rcutils_error_string_t (RCUTILS_ERROR_MESSAGE_MAX_LENGTH)


_rcutils.rcutils_get_error_string.restype = _ErrorString
_rcutils.rcutils_get_error_string.argtypes = []
_rcutils.rcutils_reset_error.restype = None


def rcl_error_text() -> str:
    """rcl's error message of this thread, and the error state reset."""
    text = _rcutils.rcutils_get_error_string().text.decode(errors="replace")
    _rcutils.rcutils_reset_error()
    return text


_capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_capsule_pointer.restype = ctypes.c_void_p


class MessageFunctions:
    """A message type's rosidl C functions (the capsules on its class): create, destroy, to and from Python."""

    def __init__(self, message_type: type):
        self.name = f"{message_type.__module__.split('.')[0]}/{message_type.__name__}"
        meta = type(message_type)
        if meta._CREATE_ROS_MESSAGE is None:
            meta.__import_type_support__()

        def function(name: str, prototype):
            return prototype(_capsule_pointer(getattr(meta, name), None))
        self.create = function("_CREATE_ROS_MESSAGE", ctypes.CFUNCTYPE(ctypes.c_void_p))
        self.destroy = function("_DESTROY_ROS_MESSAGE", ctypes.CFUNCTYPE(None, ctypes.c_void_p))
        # these two make or read Python objects: they run holding the GIL (PYFUNCTYPE)
        self.to_python = function("_CONVERT_TO_PY", ctypes.PYFUNCTYPE(ctypes.py_object, ctypes.c_void_p))
        self.from_python = function("_CONVERT_FROM_PY",
                                    ctypes.PYFUNCTYPE(ctypes.c_bool, ctypes.py_object, ctypes.c_void_p))


class Delivery(Enum):
    """What became of an answer given to rcl."""

    SENT = "sent"  # to DDS (or dropped by rmw because the client is gone)
    CLIENT_NOT_MATCHED = "client not matched"  # rmw did not send it: its client's reader is not matched yet
    NOT_WRITTEN = "not written"  # rmw could not write it (e.g. the answer writer's history full of answers
    # that slow clients have not acknowledged, until its blocking time ran out)
    SERVER_GONE = "server gone"  # its service or action server was destroyed: the node is stopping


def send_response(functions: MessageFunctions, response, send_in_c: Callable[[int], int]) -> tuple[Delivery, str]:
    """``response`` made in C and given to ``send_in_c`` (an rcl send, returning its rcl_ret_t): (what became of
    it, rcl's reason when not sent). RCL_RET_TIMEOUT is a client not matched yet; any other error an answer not
    written. ``send_in_c`` raises InvalidHandle once its service or action server is destroyed."""
    c_message = functions.create()
    if not c_message:
        raise MemoryError(f"cannot allocate a {functions.name}")
    try:
        if not functions.from_python(response, c_message):
            raise ServiceIOError(f"not a valid {functions.name}")
        try:
            result = send_in_c(c_message)
        except InvalidHandle:
            return Delivery.SERVER_GONE, "the service or action server was destroyed"
    finally:
        functions.destroy(c_message)
    if result == RCL_RET_OK:
        return Delivery.SENT, ""
    error = rcl_error_text()
    return (Delivery.CLIENT_NOT_MATCHED if result == RCL_RET_TIMEOUT else Delivery.NOT_WRITTEN), error


class TakenRequest:
    """One request taken from DDS: its client, its header's times, and its message (in C until ``message``)."""

    __slots__ = ("io", "request_id", "source_timestamp", "_c_message", "_message", "_lock")

    def __init__(self, io: ServiceIO, info: ServiceInfo, c_message: int):
        self.io = io
        self.request_id = RequestId()
        ctypes.pointer(self.request_id)[0] = info.request_id
        #: The client's clock when it sent the request [ns since the epoch] (0: not given by the rmw).
        self.source_timestamp = int(info.source_timestamp)
        self._c_message: int | None = c_message
        self._message = None
        self._lock = threading.Lock()

    @property
    def client(self) -> bytes:
        """The client's request writer GUID (16 bytes): the same for all of one client's requests."""
        return bytes(self.request_id.writer_guid)

    @property
    def sequence_number(self) -> int:
        return int(self.request_id.sequence_number)

    @property
    def c_message(self) -> int | None:
        """The address of the request in C (None once converted or discarded)."""
        return self._c_message

    def message(self):
        """The request as a Python message (built once, then the C copy is freed)."""
        with self._lock:
            if self._message is None:
                if self._c_message is None:
                    raise ServiceIOError("the request was discarded")
                self._message = self.io.request_functions.to_python(self._c_message)
                self.io.request_functions.destroy(self._c_message)
                self._c_message = None
            return self._message

    def discard(self) -> None:
        """Free the request in C without building its Python message (it will not be answered)."""
        with self._lock:
            if self._c_message is not None:
                self.io.request_functions.destroy(self._c_message)
                self._c_message = None

    def __del__(self):
        self.discard()


class ServiceIO:
    """Takes ``service``'s requests and sends its answers through rcl (see the module docstring)."""

    def __init__(self, service):
        self.service = service
        self.request_functions = MessageFunctions(service.srv_type.Request)
        self.response_functions = MessageFunctions(service.srv_type.Response)

    def take(self) -> TakenRequest | None:
        """The service's next waiting request, or None (none waits, or the service was destroyed)."""
        info = ServiceInfo()
        c_message = self.request_functions.create()
        if not c_message:
            raise MemoryError(f"cannot allocate a {self.service.srv_type.__name__} request")
        try:
            with self.service.handle:
                result = _rcl.rcl_take_request_with_info(self.service.handle.pointer, ctypes.byref(info), c_message)
        except InvalidHandle:  # the node is stopping
            result = RCL_RET_SERVICE_TAKE_FAILED
        if result != RCL_RET_OK:
            self.request_functions.destroy(c_message)
            if result != RCL_RET_SERVICE_TAKE_FAILED:
                raise ServiceIOError(f"taking a request of {self.service.service_name} failed: {rcl_error_text()}")
            return None
        return TakenRequest(self, info, c_message)

    def send(self, taken: TakenRequest, response) -> tuple[Delivery, str]:
        """Give ``response`` to rcl for ``taken``'s client: (what became of it, rcl's reason when not sent)."""
        if not isinstance(response, self.service.srv_type.Response):
            raise ServiceIOError(f"not a {self.service.srv_type.__name__} response: {type(response).__name__}")

        def send_in_c(c_message: int) -> int:
            with self.service.handle:
                return _rcl.rcl_send_response(self.service.handle.pointer, ctypes.byref(taken.request_id), c_message)
        return send_response(self.response_functions, response, send_in_c)

    @property
    def name(self) -> str:
        return self.service.service_name

    @staticmethod
    def describe(taken: TakenRequest) -> str:
        """A request as the logs name it."""
        return f"request {taken.sequence_number} of client {taken.client.hex()}"


class AnswerChannel(Protocol):
    """Where ``Resender`` sends answers: a ``ServiceIO``, or an action server's requests of one kind
    (``rcl_action_io.ActionIO``)."""

    name: str

    def send(self, taken, response) -> tuple[Delivery, str]: ...

    def describe(self, taken) -> str: ...


#: What ``Resender`` sends again.
RETRIED = frozenset((Delivery.CLIENT_NOT_MATCHED, Delivery.NOT_WRITTEN))


class Resender:
    """Sends answers (through an ``AnswerChannel``); one rmw did not send (its client not matched yet, or the
    answer writer's history full of answers that slow clients have not acknowledged) is sent again from a thread of
    its own, every RESEND_PERIOD_S while that lasts, until it is sent or its client is gone (rmw then drops it), for
    RESEND_FOR_S at most (then logged as undelivered): every request taken is answered. One sent more than
    LATE_ANSWER_S after its first try is logged as late."""

    def __init__(self, logger):
        self._logger = logger
        self._lock = threading.Condition()
        self._waiting: deque[tuple[float, AnswerChannel, object, object]] = deque()  # (first tried at, ...)
        self._thread: threading.Thread | None = None
        self._closed = False
        #: Answers not sent at the first try, those sent later than LATE_ANSWER_S, and those given up.
        self.retried = 0
        self.late = 0
        self.undelivered = 0

    def send(self, io: AnswerChannel, taken, response) -> None:
        first_try = time.monotonic()
        delivery, reason = io.send(taken, response)
        if delivery in RETRIED:
            self._logger.debug(f"answers on {io.name} not sent at once, sent again: {reason}",
                               throttle_duration_sec=5.0)
            with self._lock:
                self.retried += 1
                self._waiting.append((first_try, io, taken, response))
                if self._thread is None:
                    self._thread = threading.Thread(target=self._resend, name="resends", daemon=True)
                    self._thread.start()
                self._lock.notify()

    @property
    def waiting(self) -> int:
        """Answers waiting to be sent again."""
        return len(self._waiting)

    def close(self) -> None:
        with self._lock:
            self._closed = True
            self._lock.notify()

    def _resend(self) -> None:
        """Passes over the waiting answers, every RESEND_PERIOD_S while some are left. A pass sends each once, and
        ends at the first the writer had no room for (the rest would wait for the same room)."""
        while True:
            with self._lock:
                self._lock.wait_for(lambda: self._waiting or self._closed)
                if self._closed:
                    return
                waiting, self._waiting = self._waiting, deque()
            kept: deque = deque()
            while waiting:
                first_try, io, taken, response = entry = waiting.popleft()
                delivery, reason = io.send(taken, response)
                waited = time.monotonic() - first_try
                if delivery not in RETRIED:
                    if waited > LATE_ANSWER_S and delivery is Delivery.SENT:
                        self.late += 1
                        self._logger.warning(f"answer to {io.describe(taken)} on {io.name} sent {waited:.1f} s "
                                             "late: rmw could not send it before", throttle_duration_sec=5.0)
                    continue
                if waited < RESEND_FOR_S:
                    kept.append(entry)
                else:
                    self.undelivered += 1
                    self._logger.error(f"answer to {io.describe(taken)} on {io.name} not delivered within "
                                       f"{RESEND_FOR_S} s: {reason}")
                if delivery is Delivery.NOT_WRITTEN:
                    kept.extend(waiting)
                    break
            with self._lock:
                self._waiting.extendleft(reversed(kept))  # before those queued meanwhile
                if kept:
                    self._lock.wait(RESEND_PERIOD_S)
