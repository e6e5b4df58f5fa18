"""The node's own TF buffer (kinematics_py.ros.tf_buffer) answers as tf2's BufferCore: lookups at the latest
common time of the chain, interpolation, a cache of 10 s per frame, tf2's errors. Where tf2_ros is importable
(scripts/check_real_ros.sh), the same scenarios are also run through tf2_ros.Buffer and compared."""
from __future__ import annotations

import numpy as np
import pytest
from real_ros import requires_real_ros

from kinematics_py.geometry.transforms import make_transform, rotation_about_axis
from kinematics_py.ros.tf_buffer import FrameLookupError, TransformBuffer, interpolate_transform

S = 1_000_000_000  # ns per s
Z = np.array([0.0, 0.0, 1.0])


def turned(angle: float, x: float = 0.0) -> np.ndarray:
    return make_transform(rotation_about_axis(Z, angle), (x, 0.0, 0.0))


def moving_link_and_rock(rock_stamp_s: float, link_stamps_s) -> list[tuple[str, str, float, np.ndarray, bool]]:
    """(parent, child, stamp [s], T, static): 'link' turning under 'world' at ``link_stamps_s``, 'rock' placed
    under it once, and a static 'table'."""
    edges = [("world", "table", 0.0, turned(0.0, 1.0), True)]
    edges += [("world", "link", t, turned(0.1 * t), False) for t in link_stamps_s]
    edges.append(("link", "rock", rock_stamp_s, turned(0.0, 0.5), False))
    return edges


def own_buffer(edges) -> TransformBuffer:
    buffer = TransformBuffer()
    for parent, child, stamp_s, T, static in edges:
        buffer.set_transform(parent, child, round(stamp_s * S), T, static)
    return buffer


def test_lookup_at_the_latest_common_time_interpolates():
    buffer = own_buffer(moving_link_and_rock(2.5, [1.0, 2.0, 3.0]))
    expected = turned(0.25) @ turned(0.0, 0.5)  # 'link' at 2.5 s: halfway between 2 s and 3 s
    assert np.allclose(buffer.lookup_latest("world", "rock"), expected, atol=1e-12)
    assert np.allclose(buffer.lookup_latest("world", "link"), turned(0.3), atol=1e-12), "'link' alone: its latest"
    assert np.allclose(buffer.lookup_latest("table", "rock"), np.linalg.inv(turned(0.0, 1.0)) @ expected,
                       atol=1e-12), "static transforms hold at every time"


def test_a_frame_published_once_under_a_moving_link_goes_stale_after_the_cache_time():
    fresh = own_buffer(moving_link_and_rock(1.0, np.arange(1.0, 10.5, 0.5)))
    assert np.allclose(fresh.lookup_latest("world", "rock"), turned(0.1) @ turned(0.0, 0.5), atol=1e-12)
    stale = own_buffer(moving_link_and_rock(1.0, np.arange(1.0, 12.5, 0.5)))  # 'link' keeps 2.0 s .. 12.0 s
    with pytest.raises(FrameLookupError, match=r"extrapolation into the past. Requested time 1\.0+ but the "
                                               r"earliest data is at time 2\.0+.*from frame \[rock\] to frame "
                                               r"\[world\]"):
        stale.lookup_latest("world", "rock")


def test_a_single_transform_answers_only_at_its_own_time():
    buffer = own_buffer([("world", "link", 5.0, turned(0.5), False), ("link", "rock", 3.0, turned(0.0), False)])
    with pytest.raises(FrameLookupError, match=r"extrapolation at time 3\.0+, but only time 5\.0+ is in the buffer"):
        buffer.lookup_latest("world", "rock")


def test_stamp_zero_means_the_latest_and_a_newer_transform_replaces_it():
    buffer = TransformBuffer()
    buffer.set_transform("world", "a", 0, turned(0.1))
    buffer.set_transform("world", "a", 0, turned(0.2))
    assert np.allclose(buffer.lookup_latest("world", "a"), turned(0.2), atol=1e-12)


def test_data_older_than_the_cache_is_dropped_and_repeats_ignored():
    buffer = TransformBuffer(cache_time_s=10.0)
    buffer.set_transform("world", "a", 20 * S, turned(0.2))
    buffer.set_transform("world", "a", 5 * S, turned(0.9))  # 15 s older than the newest: dropped
    buffer.set_transform("world", "a", 20 * S, turned(0.2))  # an exact repeat
    buffer.set_transform("world", "c", 5 * S, turned(0.0))
    with pytest.raises(FrameLookupError, match=r"only time 20\.0+ is in the buffer of frame \[a\]"):
        buffer.lookup_latest("a", "c")  # the common time is 5 s: 'a' has no data then


def test_errors_name_the_missing_frame_and_unconnected_trees():
    buffer = own_buffer([("world", "a", 1.0, turned(0.0), True), ("moon", "rock", 1.0, turned(0.0), True)])
    with pytest.raises(FrameLookupError, match='"nowhere" passed to lookupTransform argument source_frame does not '
                                               'exist'):
        buffer.lookup_latest("world", "nowhere")
    with pytest.raises(FrameLookupError, match='"nowhere" passed to lookupTransform argument target_frame'):
        buffer.lookup_latest("nowhere", "a")
    with pytest.raises(FrameLookupError, match="Could not find a connection between 'a' and 'rock' because they "
                                               "are not part of the same tree"):
        buffer.lookup_latest("a", "rock")
    assert buffer.frames() == {"world", "a", "moon", "rock"}


def test_interpolation_is_linear_in_translation_and_slerp_in_rotation():
    T = interpolate_transform(turned(0.2, 1.0), turned(1.0, 3.0), 0.25)
    assert np.allclose(T, turned(0.4, 1.5), atol=1e-12)
    assert np.allclose(interpolate_transform(turned(0.3), turned(0.3), 0.7), turned(0.3), atol=1e-12)


SCENARIOS = {
    "interpolated": (moving_link_and_rock(2.5, [1.0, 2.0, 3.0]), ("world", "rock")),
    "static and moving": (moving_link_and_rock(2.5, [1.0, 2.0, 3.0]), ("table", "rock")),
    "fresh": (moving_link_and_rock(1.0, np.arange(1.0, 10.5, 0.5)), ("world", "rock")),
    "stale": (moving_link_and_rock(1.0, np.arange(1.0, 12.5, 0.5)), ("world", "rock")),
    "unknown": (moving_link_and_rock(1.0, [1.0]), ("world", "nowhere")),
}


@requires_real_ros
@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_same_answers_as_tf2_ros(scenario):
    import rclpy.time
    import tf2_ros
    from geometry_msgs.msg import TransformStamped

    from kinematics_py.ros.messages.conversions import transform_from_transform_msg, transform_msg_from_transform

    edges, (target, source) = SCENARIOS[scenario]
    theirs = tf2_ros.Buffer()
    for parent, child, stamp_s, T, static in edges:
        stamped = TransformStamped(transform=transform_msg_from_transform(T))
        stamped.header.frame_id, stamped.child_frame_id = parent, child
        stamped.header.stamp.sec, stamped.header.stamp.nanosec = divmod(round(stamp_s * S), S)
        (theirs.set_transform_static if static else theirs.set_transform)(stamped, "test")
    try:
        expected = transform_from_transform_msg(theirs.lookup_transform(target, source, rclpy.time.Time()).transform)
    except tf2_ros.TransformException as error:
        with pytest.raises(FrameLookupError) as ours:
            own_buffer(edges).lookup_latest(target, source)
        first_words = " ".join(str(error).split()[:4])
        assert first_words in str(ours.value), (str(error), str(ours.value))
        return
    assert np.allclose(own_buffer(edges).lookup_latest(target, source), expected, atol=1e-9)

