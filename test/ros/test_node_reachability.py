"""Reachability maps in RViz: a map file named on reachability_map comes back as a MarkerArray on
reachability_markers (transient local); a file that cannot be read publishes nothing and the node lives on."""
from __future__ import annotations

import numpy as np
import pytest
from node_harness import module_processes, serving_node, ur5_parameters, wait_for  # noqa: F401 (fixture)
from rclpy.task import Future
from std_msgs.msg import String
from visualization_msgs.msg import Marker, MarkerArray

from kinematics_py.reachability import MapSpec, RobotSource, VoxelGrid, compute_map, sphere_orientations
from kinematics_py.robots import bundled_robot_path
from kinematics_py.ros.topics.reachability_markers import MARKERS_QOS, MARKERS_TOPIC, REQUEST_TOPIC, map_markers

WAIT_S = 60.0


@pytest.fixture(scope="module")
def saved_map(tmp_path_factory):
    robot = RobotSource(bundled_robot_path("ur5").read_text(), bundled_robot_path("ur5", "srdf").read_text(),
                        "ur_manipulator", name="ur5")
    spec = MapSpec(robot, VoxelGrid.covering((-1.0, -1.0, -0.9), (1.0, 1.0, 1.1), 0.25), sphere_orientations(4, 2))
    reach_map = compute_map(spec)
    return reach_map, reach_map.save(tmp_path_factory.mktemp("map") / "ur5.npz")


def test_markers_show_every_reachable_voxel_in_the_base_frame(saved_map):
    reach_map, _ = saved_map
    clear, cubes = map_markers(reach_map).markers
    assert clear.action == Marker.DELETEALL
    assert (cubes.type, cubes.action, cubes.header.frame_id) == (Marker.CUBE_LIST, Marker.ADD, "base_link")
    reached = np.flatnonzero(reach_map.index > 0)
    assert np.allclose([(p.x, p.y, p.z) for p in cubes.points], reach_map.grid.centres(reached))
    assert cubes.scale.x == pytest.approx(0.9 * reach_map.grid.resolution)
    colours = np.array([(c.r, c.g, c.b) for c in cubes.colors])
    full = reach_map.fraction[reached] == 1.0
    assert full.any() and np.allclose(colours[full], (0.0, 1.0, 0.0))
    assert np.all(np.diff(colours[np.argsort(reach_map.fraction[reached]), 1]) >= 0)  # greener with the index


def test_node_publishes_the_markers_of_a_map_on_request(module_processes, tmp_path, saved_map):  # noqa: F811
    reach_map, path = saved_map
    with serving_node(module_processes, tmp_path, ur5_parameters(), "reachability_node") as node:
        received, first = [], Future()

        def on_markers(msg: MarkerArray) -> None:
            received.append(msg)
            if not first.done():
                first.set_result(msg)

        node.node.create_subscription(MarkerArray, f"{node.namespace}/{MARKERS_TOPIC}", on_markers, MARKERS_QOS)
        requests = node.node.create_publisher(String, f"{node.namespace}/{REQUEST_TOPIC}", 10)
        wait_for(lambda: requests.get_subscription_count() > 0, WAIT_S, "the node's reachability_map subscription")
        (tmp_path / "broken.npz").write_bytes(b"not a map")
        for name in (str(tmp_path / "missing.npz"), str(tmp_path / "broken.npz"), str(path)):
            requests.publish(String(data=name))
        node.client.spin_until(first, WAIT_S)
        assert first.done(), node.process.output()
        cubes = received[0].markers[1]  # the broken files published nothing before it
        assert cubes.header.frame_id == "base_link"
        assert len(cubes.points) == np.count_nonzero(reach_map.index)
        node.assert_alive()
        assert "not a readable reachability map" in node.process.output()
