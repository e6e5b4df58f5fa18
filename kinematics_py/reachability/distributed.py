"""Chunks of a reachability map as Ray tasks (the optional ``ray`` extra: requirements/reach.txt).

``ray_runner(address)`` is a runner for ``compute_map``: it connects to the Ray cluster at ``address`` (or
RAY_ADDRESS), or with neither (or "local") starts a local Ray instance bound to this machine only: no
dashboard, and every Ray server listening on 127.0.0.1 (RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0, Ray's
single-machine mode, set before ray is first imported). It submits one task per chunk and yields each chunk
as it completes. The chunks are the local run's, and each is a pure function of the spec and its number, so
the map is the local run's bit for bit. Each task takes one CPU and runs its IK batch on one thread. Ray's
usage statistics are off (RAY_USAGE_STATS_ENABLED=0) unless the environment says otherwise. On a cluster,
every node needs kinematics_py (and the robot's mesh files, for collision checking) installed.
"""
from __future__ import annotations

import ipaddress
import os
from collections.abc import Iterator

from ..errors import KinematicsError
from .compute import ChunkResult, MapSpec, Runner, compute_chunk

#: The environment of every task: one IK thread per task, as Ray gives each task one CPU.
TASK_ENVIRONMENT = {"env_vars": {"NUMBA_NUM_THREADS": "1"}}


def cluster_address(address: str | None) -> str | None:
    """The cluster to connect to: ``address``, else RAY_ADDRESS; None (or "local"): a local instance."""
    address = address or os.environ.get("RAY_ADDRESS") or None
    return None if address == "local" else address


def import_ray(local: bool = True):
    """The ray module, for a local instance (``local``) or a cluster; KinematicsError saying how to install it
    when it is missing."""
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    if local:
        os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
    try:
        import ray
    except ImportError:
        raise KinematicsError("Ray is not installed: pip install -r requirements/reach.txt "
                              "(or scripts/setup_venv.sh reach)") from None
    return ray


def start_ray(address: str | None = None, num_cpus: int | None = None) -> bool:
    """Connect to the cluster at ``address`` (or RAY_ADDRESS), or start a local instance on 127.0.0.1 without a
    dashboard (``num_cpus``: default all). False if Ray was already initialised (then it is used as it is)."""
    address = cluster_address(address)
    ray = import_ray(local=address is None)
    if ray.is_initialized():
        return False
    if address:
        ray.init(address=address, log_to_driver=False)
    else:
        node_address = ray.util.get_node_ip_address()
        if not ipaddress.ip_address(node_address).is_loopback:
            raise KinematicsError(f"a local Ray instance would listen on {node_address}, not only on this machine: "
                                  f"ray was imported before kinematics_py set RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0; "
                                  f"set it in the environment (or import kinematics_py.reachability.distributed "
                                  f"and call import_ray() first)")
        ray.init(address="local", num_cpus=num_cpus, include_dashboard=False, log_to_driver=False)
    return True


def ray_runner(address: str | None = None, num_cpus: int | None = None) -> Runner:
    """A ``compute_map`` runner computing the chunks as Ray tasks (see the module docstring); a Ray instance it
    started is shut down when the map is done."""

    def run(spec: MapSpec, numbers: list[int]) -> Iterator[ChunkResult]:
        ray = import_ray(local=cluster_address(address) is None)
        started = start_ray(address, num_cpus)
        try:
            task = ray.remote(num_cpus=1, runtime_env=TASK_ENVIRONMENT)(compute_chunk)
            spec_ref = ray.put(spec)
            pending = [task.remote(spec_ref, number) for number in numbers]
            while pending:
                done, pending = ray.wait(pending, num_returns=1)
                yield ray.get(done[0])
        finally:
            if started:
                ray.shutdown()

    return run
