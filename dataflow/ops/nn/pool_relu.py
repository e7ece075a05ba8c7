"""``MaxPoolGradRelu``: the ReLU gradient of a max pool's gradient, as one kernel.

Why: a CNN block is ``max_pool(relu(conv + b))``, so its backward pass computes
``ReluGrad(MaxPoolGrad(x, y, dy), x)`` with ``x`` the ReLU output, on the largest arrays
of the network (MNIST's first block: 128x28x28x32 floats, 12.8 MB). Done apart, the pool
gradient keeps TF's first-hit tie rule with boolean passes over the window offsets
(after a ReLU, windows of zeros tie everywhere) and the ReLU gradient makes two more
passes; together 8 ms of a 110 ms step. The plan compiler fuses the pair
(``runtime/compile/fusion.py``); this kernel is called with ``(x, y, dy, features)`` and the
pool's attrs.

The fast path, for windows that tile the input (``ksize == strides``, no padding, as
``max_pooling2d(2, 2)``) when ``features`` is the pool's input:

* the ReLU mask of a routed element is ``y > 0`` (the element equals its window's
  maximum), so windows whose maximum is not positive get nothing, and the tie rule only
  matters inside windows with a positive maximum, where ties are rare;
* the input is taken a block of window rows at a time (a contiguous ``[rows, KH, Wo,
  KW, C]`` slab of 1 MB), and each block's ``y`` and ``dy`` are first spread over
  their windows (a broadcasting copy, which is fast): the compare with the input and
  the routing multiply then run on contiguous operands. numpy's loops over
  broadcast or strided operands are several times slower than its contiguous ones
  (measured here: a strided add of 1.6M floats 0.4-1.2 ms against 0.16 contiguous);
* the elements equal to their (positive) window maximum are counted per block: one per
  positive window means no ties. A block with ties keeps the first hit of each window
  itself when the windows are 2x2 and C is a multiple of 8 (``_FirstHits2x2``, the
  common case); other windows with ties, a gradient that is not finite (a masked
  multiply would spread a NaN) or a negative maximum send the call to the two ops'
  kernels one after the other, as unfused.

With numba (the ``fast`` extra, ``ops/compiled.py``) and float host arrays of
``compiled_pools.COMPILED_FROM`` elements or more, tiling 2x2 windows take one compiled
pass instead (``nn/compiled_pools.py``):
each window's first maximum in TF's scan order (row by row, a later element only when
strictly greater, as TF's ``MaxPoolGrad`` finds it) and every element of the window
written once, ``dy`` at that maximum when it is positive, else 0. It reads the input
once and writes the gradient once where the numpy path makes about a dozen passes
(MNIST's two blocks on the AVX-512 VM, timed alone on warm arrays: 3.5 against 6.7 ms;
inside a step, where the first block comes from memory, 5.6 against 6.1 ms). An input that is NaN or
infinite, or a gradient that is not finite, stops it, and the numpy path decides as
before.
"""

from __future__ import annotations

import contextlib
from typing import Any

from ..._util.recycler import Recycler
from ...framework import registry
from ..math.sum_of_squares import made_by_fusion
from . import compiled_pools
from .conv.geometry import geometry_cache, params
from .pool import max_pool_grad_kernel, pool_kernel_hw
from .relu import relu_grad_kernel

# Rows of windows per block are chosen to keep a block near this many input elements
# (1 MB of float32: each block is some ten Python-level calls, and on MNIST's first pool
# 2^18 measured faster than 2^17 and 2^16 although its arrays outgrow L2).
_BLOCK_ELEMENTS = 1 << 18


def _quiet(xp: Any) -> Any:
    """Floating-point warnings off (numpy warns on 0 / 0; other namespaces do not)."""
    errstate = getattr(xp, "errstate", None)
    return errstate(divide="ignore", invalid="ignore") if errstate else contextlib.nullcontext()


class _FirstHits2x2:
    """Keeps, in each 2x2 window of a block's hit mask, only the first hit in TF's order
    ((0, 0), (0, 1), (1, 0), (1, 1)): exact for tied maxima, which real images make
    (a blank background gives equal positive outputs after a bias).

    Works on the mask's bytes packed eight to a uint64 word, with whole-array shifts:
    one pixel is C bytes and one image row W*C bytes, whole words when C % 8 == 0, so
    every pass is one contiguous word operation (the 0/1 bytes are negated by XOR with
    0x0101..., never with ``~``). First the second column's hit is cleared where the
    first column hit; then the window row's "any hit" is spread over its two columns
    and clears the second row. Two byte masks (first column, first row) are made once
    per block shape."""

    def __init__(self, xp: Any, block_shape: tuple) -> None:
        step, _, wo, _, c = block_shape
        self.xp = xp
        first_column = xp.zeros(block_shape, xp.uint8)
        first_column[:, :, :, 0] = 1
        first_row = xp.zeros(block_shape, xp.uint8)
        first_row[:, 0] = 1
        self.first_column = first_column.reshape(-1).view(xp.uint64)
        self.first_row = first_row.reshape(-1).view(xp.uint64)
        self.ones = xp.uint64(0x0101010101010101)
        self.pixel, self.row = c // 8, wo * 2 * c // 8  # in words

    def apply(self, hit: Any, scratch: Recycler) -> None:
        """Resolves ``hit`` (a contiguous bool block) in place; two word arrays of
        scratch come from the kernel's ``Recycler`` (steps running at once each get
        their own)."""
        xp, ones, px, row = self.xp, self.ones, self.pixel, self.row
        words = hit.reshape(-1).view(xp.uint64)
        n = words.size
        m = n - px
        size = self.first_column.shape
        a, b = scratch.empty(size, xp.uint64)[:n], scratch.empty(size, xp.uint64)[:n]
        # Second column: cleared where the first column of its window hit.
        xp.bitwise_and(words[:m], self.first_column[:m], out=a[:m])
        a[:m] ^= ones
        words[px:] &= a[:m]
        # Each window row's "any hit", at its first column, then spread to both.
        xp.bitwise_or(words[:m], words[px:], out=a[:m])
        a[:m] &= self.first_column[:m]
        a[m:] = 0
        b[:px] = a[:px]
        xp.bitwise_or(a[px:], a[:m], out=b[px:])
        # Second row: cleared where the first row of its window hit.
        xp.bitwise_and(b[: n - row], self.first_row[: n - row], out=a[: n - row])
        a[: n - row] ^= ones
        words[row:] &= a[: n - row]


def _max_pool_grad_relu_kernel(ctx: Any, attrs: dict) -> Any:
    xp, p = ctx.xp, params(attrs)
    kh, kw = pool_kernel_hw(attrs)
    geometry = geometry_cache(p)
    tiles = p.sh == kh and p.sw == kw and not p.nchw
    pool_grad = max_pool_grad_kernel(ctx, attrs)
    relu_grad = relu_grad_kernel(ctx, {})
    buffers = Recycler(xp)
    first_hits_of: dict[tuple, _FirstHits2x2] = {}  # masks by block shape (read-only)

    def unfused(x: Any, y: Any, dy: Any, features: Any) -> Any:
        return relu_grad(pool_grad(x, y, dy), features)

    def max_pool_grad_relu(x: Any, y: Any, dy: Any, features: Any) -> Any:
        if not (tiles and features is x and x.ndim == 4 and x.dtype.kind == "f"):
            return unfused(x, y, dy, features)
        g = geometry(x.shape, kh, kw)
        if any(g.pads) or (g.ho * kh, g.wo * kw) != (g.h, g.w) or not (g.ho and g.wo):
            return unfused(x, y, dy, features)
        gradient = compiled_pools.max_grad_relu_2x2(x, dy, g, buffers)
        if gradient is not None:
            return gradient
        # A masked multiply would spread a NaN gradient; a negative maximum (not a ReLU
        # output) would make -inf peaks below, which its elements could equal.
        if not bool(xp.isfinite(dy).all()) or bool(xp.less(y, 0).any()):
            return unfused(x, y, dy, features)
        rows = g.n * g.ho
        # Windows whose maximum is not positive route nothing: y / (y > 0) is y where
        # y > 0, else NaN (0 / 0, or a NaN maximum), which no element equals. One
        # division: a masked copy of NaNs costs four times as much.
        is_positive = xp.greater(y, 0)
        positive = int(xp.count_nonzero(is_positive))
        positive_rows = is_positive.reshape(rows, -1)

        def positives_in(start: int, stop: int) -> int:
            return int(xp.count_nonzero(positive_rows[start:stop]))

        peaks = buffers.empty(y.shape, y.dtype)
        with _quiet(xp):
            xp.divide(y, is_positive, out=peaks)
        windows = (rows, kh, g.wo, kw, g.c)
        x_windows = x.reshape(windows)
        dx = buffers.empty(windows, dy.dtype)
        step = max(1, _BLOCK_ELEMENTS // (kh * g.w * g.c))
        block_shape = (step, kh, g.wo, kw, g.c)
        peak = buffers.empty(block_shape, y.dtype)
        spread = buffers.empty(block_shape, dy.dtype)
        hit = buffers.empty(block_shape, bool)
        first_hits = None
        if (kh, kw) == (2, 2) and g.c % 8 == 0:
            first_hits = first_hits_of.get(block_shape)
            if first_hits is None:
                first_hits = first_hits_of[block_shape] = _FirstHits2x2(xp, block_shape)
        peaks = peaks.reshape(rows, 1, g.wo, 1, g.c)
        dy = dy.reshape(rows, 1, g.wo, 1, g.c)
        hits = 0
        for start in range(0, rows, step):
            stop = min(start + step, rows)
            size = stop - start
            # The block's peaks and gradients spread over their windows first, so the
            # compare and the multiply see contiguous operands only (numpy's fast loop;
            # broadcasting or strided operands take a loop several times slower).
            xp.copyto(peak[:size], peaks[start:stop])
            xp.copyto(spread[:size], dy[start:stop])
            block_hit = xp.equal(x_windows[start:stop], peak[:size], out=hit[:size])
            block_hits = int(xp.count_nonzero(block_hit))
            # One hit per positive window: no ties. Otherwise 2x2 windows keep their
            # first hits here; other windows are counted and take the exact path.
            if first_hits is not None:
                positives = positives_in(start, stop)
                if block_hits != positives:
                    first_hits.apply(block_hit, buffers)
                    block_hits = positives
            hits += block_hits
            block = dx[start:stop]
            xp.copyto(block, block_hit)
            block *= spread[:size]
        if hits != positive:  # a tie in a positive window that was not resolved
            return unfused(x, y, dy.reshape(y.shape), features)
        return dx.reshape(x.shape)

    return max_pool_grad_relu


registry.register(
    registry.OpDef("MaxPoolGradRelu", made_by_fusion, _max_pool_grad_relu_kernel, shape_of_input=0)
)
registry.register_fusion("MaxPoolGrad", "ReluGrad", "MaxPoolGradRelu")
