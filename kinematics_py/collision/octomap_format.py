"""OctoMap's serialised octrees (what octomap_msgs/Octomap carries in ``data``), read and written without OctoMap.

An OctoMap octree has 16 levels below its root; a voxel of the finest level is a cube of edge ``resolution``
[m] with integer key k (0 <= k < 65536 per axis) spanning [(k - 32768) r, (k - 32767) r) along that axis. A node
at depth d covers 2^(16 - d) keys per axis; its child i (0..7) takes the upper half along x when bit 0 of i is
set, along y for bit 1, along z for bit 2. Both streams list nodes depth first, children in order 0..7:

- binary (``writeBinaryData``, ``binary: true``): per inner node two bytes, two bits per child (children 0-3
  in the first byte, 4-7 in the second, child i's bits at 2i and 2i+1 of its byte): 00 unknown, 10 (bit 2i)
  a free leaf, 01 (bit 2i+1) an occupied leaf, 11 an inner node, whose own two bytes follow later;
- full (``writeData``, ``binary: false``): per node its value, the log-odds occupancy as a little-endian float32
  (followed by 3 colour bytes in a ColorOcTree), then one byte whose bit i says child i exists, then the
  existing children. A leaf is occupied when its log-odds is >= 0 (OctoMap's default threshold, p = 0.5).

``occupied_keys`` gives the finest-level keys of every occupied voxel (a coarser occupied leaf expands into all
the voxels it covers); ``binary_stream`` writes keys back as a binary stream, merging complete octants.
"""
from __future__ import annotations

import numpy as np

from ..compiled import compiled_kernel
from ..errors import KinematicsError

TREE_DEPTH = 16
#: Key of the voxel whose lower corner is the origin (OctoMap's tree_max_val).
KEY_OFFSET = 2 ** (TREE_DEPTH - 1)
#: Tree types read, with the bytes of a node's value in the full stream (the binary stream is the same for all).
NODE_VALUE_BYTES = {"OcTree": 4, "ColorOcTree": 7}
#: Most occupied voxels (finest level) an octree may expand into.
MAX_VOXELS = 2_000_000

_OK, _TRUNCATED, _TOO_DEEP, _TOO_MANY = 0, 1, 2, 3


class OctomapFormatError(KinematicsError, ValueError):
    """A serialised octree that cannot be read; the message says why."""


def occupied_keys(data: bytes | np.ndarray, binary: bool, tree_id: str = "OcTree") -> np.ndarray:
    """(n, 3) int64 keys of the occupied finest-level voxels of a serialised octree (each once).

    OctomapFormatError for an unknown ``tree_id``, a truncated stream, bytes left over, a node
    below the 16th level, or more than MAX_VOXELS occupied voxels."""
    if tree_id not in NODE_VALUE_BYTES:
        raise OctomapFormatError(f"octree type {tree_id!r} is not supported; supported are {sorted(NODE_VALUE_BYTES)}")
    stream = np.frombuffer(bytes(data) if not isinstance(data, np.ndarray) else data.astype(np.int8).tobytes(),
                           dtype=np.uint8)
    if len(stream) == 0:
        return np.zeros((0, 3), dtype=np.int64)
    capacity = min(4 * len(stream), MAX_VOXELS) + 1  # leaves: at most 4 per byte, each at least one voxel
    origins = np.empty((capacity, 3), dtype=np.int64)
    depths = np.empty(capacity, dtype=np.int64)
    value_bytes = 0 if binary else NODE_VALUE_BYTES[tree_id]
    count, status, position = _read_leaves(stream, value_bytes, origins, depths)
    what = "binary" if binary else f"full {tree_id}"
    if status == _TRUNCATED:
        raise OctomapFormatError(f"{what} octree stream ends early (after {len(stream)} bytes)")
    if status == _TOO_DEEP:
        raise OctomapFormatError(f"{what} octree stream has nodes below level {TREE_DEPTH} (byte {position})")
    if status == _TOO_MANY:
        raise OctomapFormatError(f"{what} octree stream has more than MAX_VOXELS = {MAX_VOXELS} occupied leaves")
    if position != len(stream):
        raise OctomapFormatError(f"{what} octree stream has {len(stream) - position} bytes left over after its "
                                 f"last node (byte {position} of {len(stream)})")
    return _expand(origins[:count], depths[:count])


def _expand(origins: np.ndarray, depths: np.ndarray) -> np.ndarray:
    """Every finest-level key covered by leaves at ``origins`` (lower corner keys) and ``depths``."""
    edges = 2 ** (TREE_DEPTH - depths)
    total = int(np.sum(edges.astype(float) ** 3))
    if total > MAX_VOXELS:
        raise OctomapFormatError(f"the octree has {total} occupied voxels at its finest level; at most "
                                 f"MAX_VOXELS = {MAX_VOXELS} are accepted")
    parts = [origins[edges == 1]]
    for edge in np.unique(edges[edges > 1]):
        grid = np.stack(np.meshgrid(*[np.arange(edge)] * 3, indexing="ij"), axis=-1).reshape(-1, 3)
        parts.append((origins[edges == edge][:, None, :] + grid[None]).reshape(-1, 3))
    return np.concatenate(parts)  # the leaves of a tree are disjoint: no key twice


@compiled_kernel
def _read_leaves(stream, value_bytes, origins, depths):
    """Occupied leaves (lower-corner key, depth) of a binary (value_bytes 0) or full stream:
    (count, status, bytes read)."""
    # Pending nodes, depth first: (depth, key x, key y, key z); children pushed in reverse order.
    stack = np.empty((TREE_DEPTH * 8 + 8, 4), dtype=np.int64)
    stack[0, :] = 0
    top, count, position = 1, 0, 0
    size = len(stream)
    while top > 0:
        top -= 1
        depth, kx, ky, kz = stack[top, 0], stack[top, 1], stack[top, 2], stack[top, 3]
        half = 2 ** (TREE_DEPTH - depth - 1) if depth < TREE_DEPTH else 0
        if value_bytes == 0:
            if position + 2 > size:
                return count, _TRUNCATED, position
            if depth >= TREE_DEPTH:
                return count, _TOO_DEEP, position
            bits = np.int64(stream[position]) | (np.int64(stream[position + 1]) << 8)
            position += 2
            for i in range(7, -1, -1):
                code = (bits >> (2 * i)) & 3
                cx, cy, cz = kx + half * (i & 1), ky + half * ((i >> 1) & 1), kz + half * ((i >> 2) & 1)
                if code == 2:  # occupied leaf
                    if count == len(depths):
                        return count, _TOO_MANY, position
                    origins[count, 0], origins[count, 1], origins[count, 2] = cx, cy, cz
                    depths[count] = depth + 1
                    count += 1
                elif code == 3:  # inner node: read later, in child order
                    stack[top, 0], stack[top, 1], stack[top, 2], stack[top, 3] = depth + 1, cx, cy, cz
                    top += 1
        else:
            if position + value_bytes + 1 > size:
                return count, _TRUNCATED, position
            log_odds = stream[position:position + 4].copy().view(np.float32)[0]
            children = stream[position + value_bytes]
            position += value_bytes + 1
            if children == 0:
                if log_odds >= 0.0:
                    if count == len(depths):
                        return count, _TOO_MANY, position
                    origins[count, 0], origins[count, 1], origins[count, 2] = kx, ky, kz
                    depths[count] = depth
                    count += 1
                continue
            if depth >= TREE_DEPTH:
                return count, _TOO_DEEP, position
            for i in range(7, -1, -1):
                if (children >> i) & 1:
                    stack[top, 0], stack[top, 1] = depth + 1, kx + half * (i & 1)
                    stack[top, 2], stack[top, 3] = ky + half * ((i >> 1) & 1), kz + half * ((i >> 2) & 1)
                    top += 1
    return count, _OK, position


def binary_stream(keys: np.ndarray) -> bytes:
    """The binary stream of the octree whose occupied finest-level voxels are ``keys`` ((n, 3) ints); octants
    whose eight children are all occupied are written as one occupied leaf. Empty for no keys."""
    codes = np.unique(morton_codes(np.asarray(keys, dtype=np.int64).reshape(-1, 3)))
    if len(codes) == 0:
        return b""
    out = np.empty(2 * 16 * len(codes) + 2, dtype=np.uint8)
    return out[:_write_nodes(codes, out)].tobytes()


def morton_codes(keys: np.ndarray) -> np.ndarray:
    """Each key's path from the root: 3 bits per level, the root's child index in the top bits (sorting the codes
    lists voxels depth first, children in order)."""
    codes = np.zeros(len(keys), dtype=np.int64)
    for bit in range(TREE_DEPTH):
        for axis in range(3):
            codes |= ((keys[:, axis] >> bit) & 1) << (3 * bit + axis)
    return codes


@compiled_kernel
def _write_nodes(codes, out):
    """Write the binary stream of sorted unique Morton ``codes`` into ``out``; returns its length."""
    stack = np.empty((TREE_DEPTH * 8 + 8, 3), dtype=np.int64)  # (depth, first code, end)
    stack[0, 0], stack[0, 1], stack[0, 2] = 0, 0, len(codes)
    top, length = 1, 0
    starts = np.empty(9, dtype=np.int64)
    while top > 0:
        top -= 1
        depth, first, end = stack[top, 0], stack[top, 1], stack[top, 2]
        shift = 3 * (TREE_DEPTH - depth - 1)
        starts[0] = first
        for child in range(8):  # the codes of child c are contiguous, in child order
            index = starts[child]
            while index < end and ((codes[index] >> shift) & 7) == child:
                index += 1
            starts[child + 1] = index
        bits = np.int64(0)
        for child in range(8):
            count = starts[child + 1] - starts[child]
            if count == 0:
                continue
            if count == np.int64(1) << shift:  # every voxel of the octant: one occupied leaf
                bits |= np.int64(2) << (2 * child)
            else:
                bits |= np.int64(3) << (2 * child)
        out[length], out[length + 1] = bits & 0xFF, bits >> 8
        length += 2
        for child in range(7, -1, -1):
            count = starts[child + 1] - starts[child]
            if count > 0 and count != np.int64(1) << shift:
                stack[top, 0], stack[top, 1], stack[top, 2] = depth + 1, starts[child], starts[child + 1]
                top += 1
    return length


def key_centers(keys: np.ndarray, resolution: float) -> np.ndarray:
    """Centres [m] of the voxels with these keys, in the octree's frame."""
    return (np.asarray(keys, dtype=float) - KEY_OFFSET + 0.5) * resolution


def keys_of_points(points: np.ndarray, resolution: float) -> np.ndarray:
    """Keys of the voxels holding these points [m] (as OctoMap's coordToKey); callers keep points within range."""
    return np.floor(np.asarray(points, dtype=float) / resolution).astype(np.int64) + KEY_OFFSET
