"""OctoMap's binary and full octree streams are read and written as OctoMap does; malformed streams are refused
with the reason; voxel obstacles come from octomaps and point clouds."""
import struct

import numpy as np
import pytest

from kinematics_py.collision.backend import CoalBackend
from kinematics_py.collision.geometry import GeometryError, Sphere
from kinematics_py.collision.octomap_format import (
    KEY_OFFSET,
    MAX_VOXELS,
    TREE_DEPTH,
    OctomapFormatError,
    binary_stream,
    occupied_keys,
)
from kinematics_py.collision.octree import Octree


def sorted_keys(keys):
    return np.unique(np.asarray(keys).reshape(-1, 3), axis=0)


def full_stream(keys, log_odds=2.0, value_bytes=4):
    """A full (writeData) stream written independently: every occupied voxel a leaf at the finest level, every
    inner node with a value and its children byte."""
    out = bytearray()
    extra = b"\x00" * (value_bytes - 4)

    def node(members, depth):
        out.extend(struct.pack("<f", log_odds) + extra)
        if depth == TREE_DEPTH:
            out.append(0)
            return
        shift = TREE_DEPTH - depth - 1
        child = ((members[:, 0] >> shift) & 1) | (((members[:, 1] >> shift) & 1) << 1) | \
            (((members[:, 2] >> shift) & 1) << 2)
        out.append(sum(1 << c for c in range(8) if (child == c).any()))
        for c in range(8):
            if (child == c).any():
                node(members[child == c], depth + 1)
    node(np.asarray(keys), 0)
    return bytes(out)


@pytest.fixture(scope="module")
def random_keys():
    rng = np.random.default_rng(3)
    return sorted_keys(KEY_OFFSET + rng.integers(-40, 40, (3000, 3)))


def test_binary_stream_round_trip(random_keys):
    assert np.array_equal(sorted_keys(occupied_keys(binary_stream(random_keys), True)), random_keys)


def test_one_voxel_binary_stream_is_the_path_from_the_root():
    key = np.array([[KEY_OFFSET, KEY_OFFSET, KEY_OFFSET]])  # the voxel just above the origin: child 7, then 0s
    data = binary_stream(key)
    assert len(data) == 2 * TREE_DEPTH
    assert data[:2] == bytes((0, 0b11 << 6))  # child 7 (bits 6, 7 of the second byte) is an inner node
    assert data[-2:] == bytes((0b10, 0))  # at the last level, child 0 is an occupied leaf (bit 1)


def test_complete_octants_are_written_as_one_leaf_and_read_back_as_their_voxels():
    grid = np.stack(np.meshgrid(*[np.arange(4)] * 3, indexing="ij"), axis=-1).reshape(-1, 3) + KEY_OFFSET
    data = binary_stream(grid)
    assert len(data) == 2 * (TREE_DEPTH - 2)  # a 4x4x4 block is one leaf two levels above the finest
    assert np.array_equal(sorted_keys(occupied_keys(data, True)), sorted_keys(grid))


@pytest.mark.parametrize("tree_id, value_bytes", [("OcTree", 4), ("ColorOcTree", 7)])
def test_full_stream_reads_occupied_leaves(random_keys, tree_id, value_bytes):
    keys = random_keys[:300]
    assert np.array_equal(sorted_keys(occupied_keys(full_stream(keys, value_bytes=value_bytes), False, tree_id)),
                          keys)


def test_full_stream_free_leaves_are_not_obstacles(random_keys):
    assert len(occupied_keys(full_stream(random_keys[:50], log_odds=-1.0), False)) == 0


@pytest.mark.parametrize("damage, reason", [
    (lambda data: data[:-1], "ends early"),
    (lambda data: data + b"\x00", "left over"),
    (lambda data: b"\xff" * 40, "below level 16"),
])
def test_malformed_binary_streams_are_refused(random_keys, damage, reason):
    with pytest.raises(OctomapFormatError, match=reason):
        occupied_keys(damage(binary_stream(random_keys)), True)


def test_unknown_tree_types_and_huge_trees_are_refused():
    with pytest.raises(OctomapFormatError, match="CountingOcTree"):
        occupied_keys(b"\x00\x00", True, "CountingOcTree")
    root_leaf = struct.pack("<f", 1.0) + b"\x00"  # one occupied leaf: the whole 2^16 cube
    with pytest.raises(OctomapFormatError, match=f"at most MAX_VOXELS = {MAX_VOXELS}"):
        occupied_keys(root_leaf, False)


def test_streams_with_more_leaves_than_max_voxels_are_refused_before_memory_grows(monkeypatch):
    import kinematics_py.collision.octomap_format as octomap_format

    keys = KEY_OFFSET + np.stack(np.meshgrid(np.arange(4), np.arange(4), np.arange(1), indexing="ij"),
                                 axis=-1).reshape(-1, 3)
    data = binary_stream(keys)
    monkeypatch.setattr(octomap_format, "MAX_VOXELS", 8)
    with pytest.raises(OctomapFormatError, match="more than MAX_VOXELS = 8 occupied leaves"):
        octomap_format.occupied_keys(data, True)


def test_octree_collides_where_its_voxels_are():
    octree = Octree.from_points([[0.05, 0.05, 0.05], [1.05, 0.05, 0.05]], 0.1)
    backend = CoalBackend()
    octree_geometry = backend.geometry(octree, False)
    sphere = backend.geometry(Sphere(0.01), False)

    def hit(x):
        T = np.eye(4)
        T[0, 3], T[1, 3], T[2, 3] = x, 0.05, 0.05
        return backend.collide(octree_geometry, sphere, T)
    assert hit(0.05) and hit(1.02) and not hit(0.5)
    assert np.allclose(octree.centers, [[0.05, 0.05, 0.05], [1.05, 0.05, 0.05]])
    center, half = octree.local_bounds()
    assert np.allclose(center, [0.55, 0.05, 0.05]) and np.allclose(half, [0.55, 0.05, 0.05])


def test_point_cloud_drops_non_finite_points_and_clips():
    points = [[0.0, 0.0, 0.0], [np.nan, 0.0, 0.0], [0.5, 0.5, 0.5], [2.0, 0.0, 0.0]]
    assert len(Octree.from_points(points, 0.1)) == 3
    clipped = Octree.from_points(points, 0.1, clip_box=((-0.1, -0.1, -0.1), (1.0, 1.0, 1.0)))
    assert np.allclose(clipped.centers, [[0.05, 0.05, 0.05], [0.55, 0.55, 0.55]])
    with pytest.raises(GeometryError, match="clip box"):
        Octree.from_points(points, 0.1, clip_box=((5, 5, 5), (6, 6, 6)))
    with pytest.raises(GeometryError, match="shape"):
        Octree.from_points([1.0, 2.0, 3.0], 0.1)
    with pytest.raises(GeometryError, match="resolution"):
        Octree.from_points(points, 0.0)


def test_an_octrees_boxes_are_disjoint_and_hold_exactly_its_voxels(random_keys):
    """``Octree.boxes``: every voxel centre lies inside exactly one box, and the boxes hold as many voxels as there
    are (so no more space); a full slab of voxels is one box, an L of two runs two."""
    slab = KEY_OFFSET + np.stack(np.meshgrid(np.arange(7), np.arange(5), np.arange(2), indexing="ij"),
                                 axis=-1).reshape(-1, 3)
    blob = np.unique(KEY_OFFSET + np.random.default_rng(4).integers(-6, 6, (600, 3)), axis=0)
    for keys in (random_keys, slab, blob, np.vstack([slab, blob + [20, 0, 0]])):
        octree = Octree(keys, 0.05)
        lower, upper = octree.boxes
        assert (lower < upper).all()
        centres = octree.centers
        inside = ((centres[:, None] > lower[None]) & (centres[:, None] < upper[None])).all(axis=2)
        assert (inside.sum(axis=1) == 1).all()
        assert np.prod(np.round((upper - lower) / 0.05), axis=1).sum() == len(octree)
    assert len(Octree(slab, 0.05).boxes[0]) == 1
    ell = Octree(KEY_OFFSET + np.array([[0, 0, 0], [1, 0, 0], [2, 0, 0], [0, 1, 0]]), 0.05)
    assert np.allclose(ell.boxes[0], [[0.0, 0.0, 0.0], [0.0, 0.05, 0.0]])
    assert np.allclose(ell.boxes[1], [[0.15, 0.05, 0.05], [0.05, 0.1, 0.05]])
