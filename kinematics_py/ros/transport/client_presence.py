"""Which of a service's clients are gone, from the ROS graph: their waiting requests are then dropped.

The rmw names a request's client in its header (``rcl_service_io.TakenRequest.client``): rmw_fastrtps gives the
GUID of the client's response reader, other rmws that of its request writer. Both are endpoints of the ROS graph,
on the service's reply and request topics (``rr/<service>Reply``, ``rq/<service>Request``). A client counts as
gone when its identity was seen among those endpoints and no longer is: DDS announces a client that ends (or
whose process ends) at once, and one whose process was killed when its lease expires (about 15 s with Fast DDS's
defaults). An identity never seen (an rmw that does not list these endpoints, or a client not yet discovered) is
never taken for gone.
"""
from __future__ import annotations

import threading
from collections.abc import Iterable


def service_topics(service_name: str) -> tuple[str, str]:
    """The DDS topics of a service's requests and answers, as the ROS graph names them (``service_name``: fully
    qualified, as rclpy's ``Service.service_name``)."""
    name = service_name if service_name.startswith("/") else f"/{service_name}"
    return f"rq{name}Request", f"rr{name}Reply"


class ClientPresence:
    """Tells which clients of a node's services are gone (see the module docstring)."""

    def __init__(self, node, service_names: Iterable[str]):
        self._node = node
        self._service_names = tuple(service_names)
        self._lock = threading.Lock()
        self._seen: set[bytes] = set()
        self._unseen = False

    def note(self, client: bytes) -> None:
        """A request of ``client`` was taken (looked up in the graph at the next ``gone``)."""
        if client not in self._seen:
            self._unseen = True

    def present(self) -> set[bytes]:
        """The identities of the clients the graph lists now, as endpoints of the node's services."""
        present: set[bytes] = set()
        for name in self._service_names:
            request_topic, reply_topic = service_topics(name)
            endpoints = (self._node.get_publishers_info_by_topic(request_topic, no_mangle=True) +
                         self._node.get_subscriptions_info_by_topic(reply_topic, no_mangle=True))
            present.update(bytes(endpoint.endpoint_gid)[:16] for endpoint in endpoints)
        return present

    def gone(self, clients: Iterable[bytes]) -> set[bytes]:
        """Those of ``clients`` seen in the graph before and no longer listed (the graph is read only when some
        ``clients`` are given or a new client was noted)."""
        clients = set(clients)
        if not clients and not self._unseen:
            return set()
        self._unseen = False
        present = self.present()
        with self._lock:
            gone = (clients & self._seen) - present
            self._seen = present  # those no longer listed are gone: an identity is never used again
        return gone
