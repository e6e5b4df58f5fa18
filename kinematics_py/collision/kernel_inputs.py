"""A compiled kernel's tables and workspace as one object (a numba structref), for the calls a plan makes often.

numba types and unboxes every array of a call's arguments before its body runs: about 170 ns an array, so a kernel
given a chain's frames, a sphere table and a workspace as tuples (25-35 arrays) costs 4-6 us to enter, as much as a
few dozen sphere tests (a Panda plan made about nine such calls). Given as one ``KernelInputs`` it costs about 1.5 us
(bench figures: docs/benchmarks.md, "One object for a kernel's tables"). Kernels take it as ``inputs`` and read
``inputs.frames`` (a ``SphereChain``'s or a ``TreeTable``'s arrays), ``inputs.table`` (a ``SphereTable``'s) and
``inputs.work`` (a ``Workspace``); callers keep one per tables and workspace (``kept_inputs``). The exact checker's
placement takes its tables so too (``PlacementInputs``).
"""
from __future__ import annotations

from numba.core import types
from numba.experimental import structref

from ..compiled import compiled_kernel
from ..thread_scratch import thread_scratch


class _FieldsAsGiven(types.StructRef):
    """A structref type whose fields are typed as given, literals widened."""

    def preprocess_fields(self, fields):
        return tuple((name, types.unliteral(typ)) for name, typ in fields)


@structref.register
class KernelInputsType(_FieldsAsGiven):
    """The numba type of ``KernelInputs``."""


@structref.register
class PlacementInputsType(_FieldsAsGiven):
    """The numba type of ``PlacementInputs``."""


class KernelInputs(structref.StructRefProxy):
    """A kernel's frames, sphere table and workspace (made by ``inputs_of``, in compiled code, whose constructor is
    cached: the proxy's own would compile in every process)."""


structref.define_proxy(KernelInputs, KernelInputsType, ["frames", "table", "work"])


class PlacementInputs(structref.StructRefProxy):
    """The exact checker's tables for ``kernels.place_and_cull``: the robot's tree's (``TreeTable``), the shapes'
    (``ShapeTable``) and their convex forms' (``ConvexTable``) arrays (made by ``placement_inputs_of``; kept per
    tables version, ``tables.PairTables.placement``): 20 arrays that cost about 3.4 us to enter a call given apart."""


structref.define_proxy(PlacementInputs, PlacementInputsType, ["tree", "shapes", "convex"])


@compiled_kernel
def inputs_of(frames, table, work):
    """``KernelInputs`` of the plain tuples ``frames`` and ``table`` and the workspace ``work`` (the object holds
    them: they stay alive with it)."""
    return KernelInputs(frames, table, work)


@compiled_kernel
def placement_inputs_of(tree, shapes, convex):
    """``PlacementInputs`` of the plain tuples ``tree``, ``shapes`` and ``convex`` (held by it)."""
    return PlacementInputs(tree, shapes, convex)


def kept_inputs(frames: tuple, table: tuple, work) -> KernelInputs:
    """``inputs_of(frames, table, work)``, kept per thread with them (their margins as they are): the one object for
    as long as the caller keeps the three."""
    key = (id(frames), id(table), id(work))
    return thread_scratch(f"{__name__}.kept_inputs", key,
                          lambda: (frames, table, work, inputs_of(frames, table, work)))[3]
