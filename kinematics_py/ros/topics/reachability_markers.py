"""RViz markers of a reachability map, published on request.

A std_msgs/String on ``reachability_map`` names a map file (.npz, written by ``kinematics-py reach`` or
``ReachabilityMap.save``); the node answers with a visualization_msgs/MarkerArray on ``reachability_markers``
(transient local, so RViz displays it whenever it subscribes): one cube per reachable voxel, in the map's
base frame, coloured by the reachability index from red (few orientations) through yellow to green (all),
after a DELETEALL that clears the previous map. A file that cannot be read is logged with the reason and
publishes nothing.
"""
from __future__ import annotations

import numpy as np
from geometry_msgs.msg import Point
from rclpy.callback_groups import MutuallyExclusiveCallbackGroup
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from std_msgs.msg import ColorRGBA, String
from visualization_msgs.msg import Marker, MarkerArray

from ...errors import KinematicsError
from ...reachability.reach_map import ReachabilityMap

REQUEST_TOPIC = "reachability_map"
MARKERS_TOPIC = "reachability_markers"
MARKERS_QOS = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL)
NAMESPACE = "reachability"
ALPHA = 0.7
#: Cube edge as a fraction of the voxel edge (gaps show the grid).
CUBE_FILL = 0.9


def map_markers(reach_map: ReachabilityMap, stamp=None) -> MarkerArray:
    """A DELETEALL marker, then one CUBE_LIST with a coloured cube per reachable voxel (see the module docstring)."""
    clear = Marker(ns=NAMESPACE, action=Marker.DELETEALL)
    cubes = Marker(ns=NAMESPACE, id=0, type=Marker.CUBE_LIST, action=Marker.ADD)
    cubes.header.frame_id = reach_map.metadata.get("base_frame", "")
    if stamp is not None:
        cubes.header.stamp = stamp
    cubes.pose.orientation.w = 1.0
    cubes.scale.x = cubes.scale.y = cubes.scale.z = CUBE_FILL * reach_map.grid.resolution
    reached = np.flatnonzero(reach_map.index > 0)
    fraction = reach_map.fraction[reached]
    red, green = np.clip(2.0 * (1.0 - fraction), 0.0, 1.0), np.clip(2.0 * fraction, 0.0, 1.0)
    cubes.points = [Point(x=x, y=y, z=z) for x, y, z in reach_map.grid.centres(reached).tolist()]
    cubes.colors = [ColorRGBA(r=r, g=g, b=0.0, a=ALPHA) for r, g in zip(red.tolist(), green.tolist())]
    return MarkerArray(markers=[clear, cubes])


class ReachabilityMarkers:
    """Subscribes ``node`` to ``reachability_map`` and publishes the markers of each map file named there."""

    def __init__(self, node: Node):
        self._node = node
        self._publisher = node.create_publisher(MarkerArray, MARKERS_TOPIC, MARKERS_QOS)
        node.create_subscription(String, REQUEST_TOPIC, self._on_request, 10,
                                 callback_group=MutuallyExclusiveCallbackGroup())

    def _on_request(self, msg: String) -> None:
        logger = self._node.get_logger()
        try:
            reach_map = ReachabilityMap.load(msg.data)
        except KinematicsError as error:
            logger.error(f"{REQUEST_TOPIC}: {error}")
            return
        markers = map_markers(reach_map, self._node.get_clock().now().to_msg())
        self._publisher.publish(markers)
        logger.info(f"{MARKERS_TOPIC}: {len(markers.markers[1].points)} voxels of {msg.data!r} published in frame "
                    f"{markers.markers[1].header.frame_id!r}")
