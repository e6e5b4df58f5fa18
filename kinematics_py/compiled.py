"""The decorator of every compiled (numba) kernel in the package, with an on-disk cache that stays valid.

numba caches each compiled function next to its source file and, by default, revalidates the cache
against that one file only. Kernels here call kernels of other modules (the IK search compiles the
chain FK into itself), so an edit to a callee left the caller's cached machine code stale. Kernels
declared with ``compiled_kernel`` are cached under a stamp of every kernel module of the package:
editing any of them recompiles all of them on next use (a few seconds, once).
"""
from __future__ import annotations

import functools
import hashlib
import threading
from pathlib import Path

from numba import njit
from numba.core.caching import CacheImpl, InTreeCacheLocator
from numba.core.cpu import CPUTargetOptions
from numba.core.options import TargetOptions

PACKAGE_DIR = Path(__file__).resolve().parent
#: numba's workqueue threading layer (its fallback when neither OpenMP nor TBB is usable) must not be entered
#: from two threads at once: hold this around every call of a ``parallel=True`` kernel.
PARALLEL_KERNEL_LOCK = threading.Lock()
#: A module holding kernels contains this text (its decorator's name).
KERNEL_MARKER = "@compiled_kernel"


#: ``fastmath`` of the sphere kernels (``collision.sphere_kernels`` and the planning kernels built on them): a multiply
#: and an add fused into one instruction (rounded once: as exact or more), nothing else of fastmath (the tables hold
#: infinities). The Panda's sphere checks 3-4 % faster.
FUSED_MULTIPLY_ADD = {"contract"}  # (numba takes a set, not a frozenset: never changed)


@functools.lru_cache(maxsize=8)
def _kernel_sources_stamp(stat_key: tuple) -> bytes:
    digest = hashlib.sha256()
    for path, _, _ in stat_key:
        digest.update(path.encode())
        digest.update(Path(path).read_bytes())
    return digest.digest()


def kernel_sources_stamp() -> bytes:
    """sha256 over the source of every kernel module of the package (re-read when one changes on disk)."""
    files = sorted(path for path in PACKAGE_DIR.rglob("*.py") if KERNEL_MARKER in path.read_text(encoding="utf-8"))
    return _kernel_sources_stamp(tuple((str(p), p.stat().st_mtime_ns, p.stat().st_size) for p in files))


class PackageCacheLocator(InTreeCacheLocator):
    """numba's in-tree cache for this package's kernels, stamped with all kernel modules' sources."""

    def get_source_stamp(self):
        return kernel_sources_stamp()

    @classmethod
    def from_function(cls, py_func, py_file):
        if PACKAGE_DIR not in Path(py_file).resolve().parents:
            return None
        return super().from_function(py_func, py_file)


if PackageCacheLocator not in CacheImpl._locator_classes:
    CacheImpl._locator_classes.insert(0, PackageCacheLocator)


#: ``compiled_kernel(noalias=True)``: LLVM's noalias on the kernel's array arguments (numba's compiler has the flag,
#: its decorator no option for it), so that loops over arrays it writes and reads become vector instructions (without
#: it, LLVM cannot tell an output from an input and unrolls the loop into scalar code). Only for a kernel whose
#: arguments never share memory that it writes (``collision.sphere_lanes``).
if not hasattr(CPUTargetOptions, "noalias"):
    CPUTargetOptions.noalias = TargetOptions.Mapping("noalias")


def compiled_kernel(function=None, **options):
    """``numba.njit(cache=True, nogil=True, **options)`` (options win), cached under ``PackageCacheLocator``.

    Use as ``@compiled_kernel`` or ``@compiled_kernel(inline="always")``; ``noalias=True``: the note above.
    """
    decorate = njit(**{"cache": True, "nogil": True, **options})
    return decorate if function is None else decorate(function)
