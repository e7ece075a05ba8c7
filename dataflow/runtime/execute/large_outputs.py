"""Elementwise ops whose outputs are too large for malloc to reuse write into arrays kept
from one step to the next.

glibc serves a block over its mmap threshold from fresh pages and unmaps it when freed,
and that threshold is 32 MiB at most (``malloc_policy.py`` raises it that far). So an
elementwise op with a larger output pays for every page of it at every step: on the
2-core AMD EPYC VM ``X * 2`` over 40 MB took 7.6 ms into fresh memory against 3.0 ms
into an array written before. TF1's allocator keeps its buffers, and a 40 MB fetch of
``X * 2`` on a worker spent half its kernel time on those pages.

So when a stage is compiled, a call of a plain elementwise op (``OpDef.ufunc``: one
numpy ufunc computes it) whose output's static shape is fully known and at least
``REUSE_FROM`` bytes gets a kernel that computes the same ufunc into an array of the
op's own ``Recycler`` (``_util/recycler.py``): one that nothing else holds any more (a
value the program fetched and keeps, or a worker still lending it to a client, is
never handed out again; a fresh one is made instead). At most ``KEPT`` arrays per call
stay between steps: the process keeps at most that much more memory per such op, as
TF1's allocator keeps what it had. Inputs of another dtype than the output (numpy would
upcast them), or a shape that turns out different at run time, take the op's own
kernel.
"""

from __future__ import annotations

from collections.abc import Callable
from math import prod
from typing import Any

import numpy as np

from ..._util.recycler import Recycler

REUSE_FROM = 32 << 20  # glibc's largest mmap threshold: smaller blocks it reuses itself
KEPT = 2  # arrays per call between steps: the one a program holds and the next


def reusing_kernel(
    name: str | None, dtype: Any, shape: Any, xp: Any, kernel: Callable
) -> Callable | None:
    """A kernel computing the ufunc ``name`` (an op's ``OpDef.ufunc``) into recycled
    arrays where its output (``dtype``, static ``shape``) is large enough to be worth
    it, else ``None``."""
    ufunc = getattr(xp, name, None) if name else None
    if ufunc is None or not shape.is_fully_defined() or dtype.is_complex:
        return None
    if dtype.base_dtype.name not in ("float16", "float32", "float64", "int32", "int64"):
        return None
    np_dtype = xp.dtype(dtype.as_numpy_dtype)
    dims = tuple(shape.as_list())
    if prod(dims) * np_dtype.itemsize < REUSE_FROM:
        return None
    if xp is not np:  # (cupy: its own memory pool keeps its blocks)
        return None
    buffers = Recycler(xp, KEPT)

    def into_reused(*inputs: Any) -> Any:
        if any(getattr(x, "dtype", None) != np_dtype for x in inputs):
            return kernel(*inputs)  # (a Python scalar, a mixed dtype: numpy's rules)
        out = buffers.empty(dims, np_dtype)
        try:
            return ufunc(*inputs, out=out)
        except ValueError:  # the inputs broadcast to another shape than the static one
            return kernel(*inputs)

    return into_reused
