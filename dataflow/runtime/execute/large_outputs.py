"""Elementwise ops with large outputs: split over the step's threads, and written into
arrays kept from one step to the next when too large for malloc to reuse.

Two costs grow with an elementwise op's output and neither is arithmetic:

* **Memory bandwidth.** An op over a large array streams it from memory, and one core
  draws less of the bandwidth than two do (``_util/intra_op.STREAMED_FROM``). TF1's
  Eigen kernels run such an op on the session's intra-op pool; here its rows are split
  over the step's threads, each element computed by the same ufunc as the whole call
  would (so the same value).
* **Fresh pages.** glibc serves a block over its mmap threshold from fresh pages and
  unmaps it when freed, and that threshold is 32 MiB at most (``malloc_policy.py``
  raises it that far). So an elementwise op with a larger output pays for every page of
  it at every step: on the 2-core AMD EPYC VM ``X * 2`` over 40 MB took 7.6 ms into
  fresh memory against 3.0 ms into an array written before. TF1's allocator keeps its
  buffers, and a 40 MB fetch of ``X * 2`` on a worker spent half its kernel time on
  those pages.

So when a stage is compiled, a call of a plain elementwise op (``OpDef.ufunc``: one
numpy ufunc computes it) whose output's static shape is fully known and large gets a
kernel of its own: from ``STREAMED_FROM / 2`` bytes of output (its input's bytes read
and its output's written) it computes the ufunc in runs of rows over the step's
intra-op threads (``intra_op.split_streamed``); from ``REUSE_FROM`` bytes it computes
into an array of the op's own ``Recycler`` (``_util/recycler.py``): one that nothing
else holds any more (a value the program fetched and keeps, or a worker still lending
it to a client, is never handed out again; a fresh one is made instead). At most
``KEPT`` arrays per call stay between steps: the process keeps at most that much more
memory per such op, as TF1's allocator keeps what it had. Inputs of another dtype
than the output (numpy would upcast them), or a shape that turns out different at run
time, take the op's own kernel.

A value the step's reader maps rather than copies: where the op's output is fetched by
a distributed step's client (from ``HANDED_OFF_FROM`` bytes, split or not), the kernel
first asks the memory the worker set for the stage (``handing_off``: a slab of the
client's stream, ``runtime/dask/shared_memory/handoff.py``), and takes its own where
that has none.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from math import prod
from typing import Any

import numpy as np

from ..._util import intra_op
from ..._util.recycler import Recycler

REUSE_FROM = 32 << 20  # glibc's largest mmap threshold: smaller blocks it reuses itself
KEPT = 2  # arrays per call between steps: the one a program holds and the next

# The smallest fetched output worth the memory ``handing_off`` gives: a slab spares the
# socket's copies (from 1 MB the arena's two), and mapping a kept slab again costs less
# than they do from about this size on the 2-core AMD EPYC VM (a fetch step of ``X * 2``,
# slabs from 64 KiB against the socket, interleaved: 120 KB 1.12x, 240 KB 0.91x, 400 KB
# 0.84x, 1 MB 0.74x).
HANDED_OFF_FROM = 256 << 10

_memory = threading.local()


def handing_off(memory: Callable[[tuple, Any], Any] | None) -> Any:
    """Sets the calling thread's memory for the large outputs its stage's client
    fetches (``memory(shape, dtype)``: an array, or ``None`` where it has none);
    returns the memory it replaces."""
    before = getattr(_memory, "take", None)
    _memory.take = memory
    return before


def large_output_kernel(
    name: str | None, dtype: Any, shape: Any, xp: Any, kernel: Callable, fetched: bool = False
) -> Callable | None:
    """A kernel computing the ufunc ``name`` (an op's ``OpDef.ufunc``) split over the
    step's threads, and into recycled arrays where its output (``dtype``, static
    ``shape``) is large enough for either to be worth it (module docstring), else
    ``None``; ``fetched``: the output leaves for the client (``handing_off``)."""
    ufunc = getattr(xp, name, None) if name else None
    if ufunc is None or not shape.is_fully_defined() or dtype.is_complex:
        return None
    if dtype.base_dtype.name not in ("float16", "float32", "float64", "int32", "int64"):
        return None
    if xp is not np:  # (cupy: its own memory pool keeps its blocks, its kernels fill the GPU)
        return None
    np_dtype = xp.dtype(dtype.as_numpy_dtype)
    dims = tuple(shape.as_list())
    nbytes = prod(dims) * np_dtype.itemsize
    split = 2 * nbytes >= intra_op.STREAMED_FROM
    if not split and not (fetched and nbytes >= HANDED_OFF_FROM):
        return None
    buffers = Recycler(xp, KEPT) if nbytes >= REUSE_FROM else None
    empty = buffers.empty if buffers is not None else xp.empty
    rank = len(dims)

    def large(*inputs: Any) -> Any:
        if any(getattr(x, "dtype", None) != np_dtype for x in inputs):
            return kernel(*inputs)  # (a Python scalar, a mixed dtype: numpy's rules)
        take = getattr(_memory, "take", None) if fetched else None
        out = take(dims, np_dtype) if take is not None else None
        if out is None:
            out = empty(dims, np_dtype)
        try:
            if not split or intra_op.threads() < 2:
                return ufunc(*inputs, out=out)

            def rows(lo: int, hi: int) -> None:
                ufunc(*(_rows_of(x, lo, hi, rank) for x in inputs), out=out[lo:hi])

            intra_op.split_streamed(dims[0], rows)
            return out
        except ValueError:  # the inputs broadcast to another shape than the static one
            return kernel(*inputs)

    return large


def _rows_of(x: Any, lo: int, hi: int, rank: int) -> Any:
    """Rows ``lo:hi`` of input ``x`` of an elementwise op whose output has ``rank``
    dimensions: all of ``x`` where it is broadcast along the first one."""
    shape = x.shape
    if len(shape) < rank or shape[0] == 1:
        return x
    return x[lo:hi]
