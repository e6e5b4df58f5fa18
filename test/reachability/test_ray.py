"""The map on a local Ray instance (2 CPUs, no dashboard, loopback only) is the local run's, bit for bit."""
from __future__ import annotations

import importlib.util
import ipaddress
import shutil
import subprocess
from dataclasses import replace

import pytest
from reach_maps import ur5_map, ur5_spec

from kinematics_py.reachability import compute_map
from kinematics_py.reachability.distributed import import_ray, ray_runner, start_ray

pytestmark = pytest.mark.skipif(importlib.util.find_spec("ray") is None,
                                reason="the reach extra (requirements/reach.txt) is not installed")


@pytest.fixture(scope="module")
def local_ray():
    ray = import_ray(local=True)  # first: a local instance then binds to 127.0.0.1 only
    assert start_ray("local", num_cpus=2)
    yield ray
    ray.shutdown()


def test_ray_map_is_identical_to_the_local_map(local_ray):
    """Every Ray server listens on 127.0.0.1 only; the chunks come back in any order and assemble the same map."""
    assert {node["NodeManagerAddress"] for node in local_ray.nodes()} == {"127.0.0.1"}
    on_ray = compute_map(ur5_spec(), ray_runner())
    assert on_ray.same_as(ur5_map())
    if shutil.which("ss"):  # iproute2: every listening socket of Ray's processes, workers too
        listening = subprocess.run(["ss", "-Hltnup"], capture_output=True, text=True).stdout.splitlines()
        names = ('"raylet"', '"gcs_server"', '"ray::')  # Ray's own processes (this one may hold ROS sockets)
        ray_sockets = [line for line in listening if any(name in line for name in names)]
        assert ray_sockets and all(_on_loopback(line.split()[4]) for line in ray_sockets), ray_sockets


def test_numerical_map_on_ray_is_identical_too(local_ray):
    """The numerical solver's seeds come from the chunk, not from the worker."""
    spec = replace(ur5_spec(), solver="numerical", chunk_voxels=128)
    assert compute_map(spec, ray_runner()).same_as(compute_map(spec))


def _on_loopback(local_address: str) -> bool:
    """Whether ss's 'address:port' (IPv4, [IPv6] or [::ffff:IPv4]) is a loopback address."""
    address = ipaddress.ip_address(local_address.rsplit(":", 1)[0].strip("[]"))
    return (getattr(address, "ipv4_mapped", None) or address).is_loopback
