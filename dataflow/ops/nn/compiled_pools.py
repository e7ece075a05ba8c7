"""The 2x2 tiling max pool and its fused ReLU gradient as compiled loops (numba, the
``fast`` extra; ``ops/compiled.py``), each one pass where the numpy paths of
``nn/pool.py`` and ``nn/pool_relu.py`` make several.

A CNN's pools are ``max_pooling2d(2, 2)`` over the largest arrays of the network
(MNIST's first block: 128x28x28x32 floats, 12.8 MB). Measured on the AVX-512 VM, alone
on arrays warm in the L3 cache: the forward pass 0.4 against 1.2 ms, ``MaxPoolGradRelu``
3.5 against 6.7 ms for the tutorial CNN's two blocks (TF1's kernels: 1.7 and 2.3 ms).
Inside a traced training step, where the first block's arrays come from memory, both
together save about 0.9 ms of ~100 (docs/performance.md).

Decisions, and why:

* **Branch-free.** Each comparison picks with a select, never an ``if``: on real data
  which element of a window is largest is random, and a branchy loop mispredicted
  nearly every comparison (10-13 ms for the gradient).
* **The numpy paths' values.** The forward pass takes ``maximum`` in the numpy path's
  order (the rows, then the two column maxima) with its rule (NaN where either is NaN);
  the gradient routes to TF's first maximum in scan order (a later element only when
  strictly greater), as ``MaxPoolGrad`` does, and applies the ReLU's mask there.
* **Hand-offs.** A NaN or infinite input, or a gradient that is not finite, stops the
  gradient loop, and the numpy path decides (it keeps TF's rules for them). Arrays
  under ``COMPILED_FROM`` elements, other dtypes and non-host arrays never come here:
  a small program should not pay numba's import and first compile to save microseconds.
* **Images on the step's threads.** The batch is cut into runs of about ``RUN_BYTES``
  of input, shared by the step's intra-op threads (``_util/intra_op``; the loops release
  the GIL). On two threads: the pool 1.4 -> 0.4-0.6 ms, its gradient 3.4 -> 1.9-2.2 ms
  for MNIST's first block (docs/performance.md).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..._util import intra_op
from ..._util.recycler import Recycler
from ..compiled import Kernel

COMPILED_FROM = 1 << 16
# Input bytes per run when a pool is split over the step's intra-op threads: a few runs
# per thread, each long beside the ~10-20 us a hand-over costs.
RUN_BYTES = 1 << 20


def _max_2x2_loop(x: Any, out: Any) -> None:
    """``out``: the maxima of NHWC ``x``'s 2x2 tiling windows: ``maximum`` (NaN where
    either is NaN; ``a`` where ``a > b``, else ``b``) of the rows, then of the two
    column maxima. (Which zero a tie of ``-0.0`` and ``0.0`` gives is numpy's loop's
    choice, and differs between its SIMD and scalar loops; this takes the second, as
    its x86 SIMD loop does.)"""
    n, ho, wo, c = out.shape
    for b in range(n):
        for i in range(ho):
            for j in range(wo):
                top, left = 2 * i, 2 * j
                for ch in range(c):
                    a0, a1 = x[b, top, left, ch], x[b, top, left + 1, ch]
                    a2, a3 = x[b, top + 1, left, ch], x[b, top + 1, left + 1, ch]
                    first = a0 if (a0 > a2) | (a0 != a0) else a2
                    second = a1 if (a1 > a3) | (a1 != a1) else a3
                    out[b, i, j, ch] = first if (first > second) | (first != first) else second


def _max_grad_relu_2x2_loop(x: Any, dy: Any, dx: Any) -> bool:
    """``dx``: ``dy`` routed to the first maximum of each 2x2 tiling window of NHWC
    ``x`` where that maximum is positive, 0 elsewhere; False (``dx`` then unfinished)
    where an input is NaN or infinite or a gradient is not finite. The maximum of each
    row pair, then of the two pairs, each comparison strict so that the first in scan
    order wins a tie; the gradient goes to one side, the other gets ``g - g`` or 0,
    exactly 0."""
    n, ho, wo, c = dy.shape
    zero = x.dtype.type(0)
    # Per channel: NaN once any input or gradient it saw was NaN or infinite.
    unordered = np.zeros(c, x.dtype)
    for b in range(n):
        for i in range(ho):
            for j in range(wo):
                top, left = 2 * i, 2 * j
                for ch in range(c):
                    a0, a1 = x[b, top, left, ch], x[b, top, left + 1, ch]
                    a2, a3 = x[b, top + 1, left, ch], x[b, top + 1, left + 1, ch]
                    g = dy[b, i, j, ch]
                    unordered[ch] += (a0 + a1 + a2 + a3 + g) * zero
                    upper = a1 if a1 > a0 else a0
                    lower = a3 if a3 > a2 else a2
                    peak = lower if lower > upper else upper
                    routed = g if peak > 0 else zero  # the ReLU's mask at the maximum
                    to_upper = routed if upper >= lower else zero
                    to_lower = routed - to_upper
                    first = to_upper if a0 >= a1 else zero
                    dx[b, top, left, ch] = first
                    dx[b, top, left + 1, ch] = to_upper - first
                    third = to_lower if a2 >= a3 else zero
                    dx[b, top + 1, left, ch] = third
                    dx[b, top + 1, left + 1, ch] = to_lower - third
    for ch in range(c):
        if unordered[ch] != 0:
            return False
    return True


MAX_2X2 = Kernel(_max_2x2_loop)
MAX_GRAD_RELU_2X2 = Kernel(_max_grad_relu_2x2_loop)


def _takes(*arrays: Any) -> bool:
    """Float host arrays of one dtype, C-contiguous, the first large enough."""
    dtype = arrays[0].dtype
    return (
        arrays[0].size >= COMPILED_FROM
        and dtype in (np.float32, np.float64)
        and all(type(a) is np.ndarray and a.dtype == dtype and a.flags.c_contiguous for a in arrays)
    )


def max_2x2(x: Any, g: Any, buffers: Recycler) -> Any:
    """The pooled ``[N, Ho, Wo, C]`` of NHWC ``x`` whose 2x2 windows (geometry ``g``)
    tile it exactly, or ``None`` where the compiled pass does not apply."""
    if (g.kh, g.kw) != (2, 2) or not _takes(x) or not MAX_2X2.compiled():
        return None
    out = buffers.empty((g.n, g.ho, g.wo, g.c), x.dtype)
    return out if _by_images(MAX_2X2, x, out) else None


def max_grad_relu_2x2(x: Any, dy: Any, g: Any, buffers: Recycler) -> Any:
    """``MaxPoolGradRelu`` of NHWC ``x`` (the ReLU's output and the pool's input) whose
    2x2 windows (geometry ``g``) tile it exactly, or ``None`` where the compiled pass
    does not apply or stopped."""
    if (g.kh, g.kw) != (2, 2) or not _takes(x, dy) or not MAX_GRAD_RELU_2X2.compiled():
        return None
    gradient = buffers.empty(x.shape, dy.dtype)
    return gradient if _by_images(MAX_GRAD_RELU_2X2, x, dy, gradient) else None


def _by_images(kernel: Kernel, *arrays: Any) -> bool:
    """``kernel`` over the images of ``arrays`` (their first axis), in runs of about
    ``RUN_BYTES`` of the first on the step's intra-op threads (``_util/intra_op``):
    whether every run ran and finished (a loop that returns False stopped)."""
    failed: list[int] = []

    def images(lo: int, hi: int) -> None:
        ran, result = kernel(*(a[lo:hi] for a in arrays))
        if not ran or result is False:
            failed.append(lo)

    first = arrays[0]
    intra_op.split(len(first), images, max(1, RUN_BYTES // max(1, first[0].nbytes)))
    return not failed
