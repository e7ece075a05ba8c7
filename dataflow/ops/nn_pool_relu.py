"""``MaxPoolGradRelu``: the ReLU gradient of a max pool's gradient, as one kernel.

Why: a CNN block is ``max_pool(relu(conv + b))``, so its backward pass computes
``ReluGrad(MaxPoolGrad(x, y, dy), x)`` with ``x`` the ReLU output, on the largest arrays
of the network (MNIST's first block: 128x28x28x32 floats, 12.8 MB). Done apart, the pool
gradient keeps TF's first-hit tie rule with boolean passes over the window offsets
(after a ReLU, windows of zeros tie everywhere) and the ReLU gradient makes two more
passes; together 8 ms of a 110 ms step. The plan compiler fuses the pair
(``runtime/fusion.py``); this kernel is called with ``(x, y, dy, features)`` and the
pool's attrs.

The fast path, for windows that tile the input (``ksize == strides``, no padding, as
``max_pooling2d(2, 2)``) when ``features`` is the pool's input:

* the ReLU mask of a routed element is ``y > 0`` (the element equals its window's
  maximum), so windows whose maximum is not positive get nothing, and the tie rule only
  matters inside windows with a positive maximum, where ties are rare;
* the input is taken a block of window rows at a time (a contiguous ``[rows, KH, Wo,
  KW, C]`` slab of 256 kB), and each block's ``y`` and ``dy`` are first spread over
  their windows (a broadcasting copy, which is fast): the compare with the input and
  the routing multiply then run on contiguous operands in cache. numpy's loops over
  broadcast or strided operands are several times slower than its contiguous ones
  (measured here: a strided add of 1.6M floats 0.4-1.2 ms against 0.16 contiguous);
* the elements equal to their (positive) window maximum are counted: one per positive
  window means no ties, and the result is exact. Otherwise, or when ``dy`` is not
  finite (a masked multiply would spread a NaN), the kernel computes the two ops'
  kernels one after the other, as unfused.
"""

from __future__ import annotations

import contextlib
from typing import Any

from ..framework import registry
from .conv_geometry import geometry_cache, params
from .math_sum_of_squares import made_by_fusion
from .nn_buffers import Recycler
from .nn_pool import max_pool_grad_kernel, pool_kernel_hw
from .nn_relu import relu_grad_kernel

# Rows of windows per block are chosen to keep a block near this many input elements
# (256 kB of float32): each block's passes run in cache.
_BLOCK_ELEMENTS = 1 << 16


def _quiet(xp: Any) -> Any:
    """Floating-point warnings off (numpy warns on 0 / 0; other namespaces do not)."""
    errstate = getattr(xp, "errstate", None)
    return errstate(divide="ignore", invalid="ignore") if errstate else contextlib.nullcontext()


def _max_pool_grad_relu_kernel(ctx: Any, attrs: dict) -> Any:
    xp, p = ctx.xp, params(attrs)
    kh, kw = pool_kernel_hw(attrs)
    geometry = geometry_cache(p)
    tiles = p.sh == kh and p.sw == kw and not p.nchw
    pool_grad = max_pool_grad_kernel(ctx, attrs)
    relu_grad = relu_grad_kernel(ctx, {})
    buffers = Recycler(xp)

    def unfused(x: Any, y: Any, dy: Any, features: Any) -> Any:
        return relu_grad(pool_grad(x, y, dy), features)

    def max_pool_grad_relu(x: Any, y: Any, dy: Any, features: Any) -> Any:
        if not (tiles and features is x and x.ndim == 4 and x.dtype.kind == "f"):
            return unfused(x, y, dy, features)
        g = geometry(x.shape, kh, kw)
        if any(g.pads) or (g.ho * kh, g.wo * kw) != (g.h, g.w) or not (g.ho and g.wo):
            return unfused(x, y, dy, features)
        if not bool(xp.isfinite(dy).all()):
            return unfused(x, y, dy, features)
        rows = g.n * g.ho
        # Windows whose maximum is not positive route nothing: y / (y > 0) is y where
        # y > 0, else NaN (0 / 0) or -inf, which no element of such a window equals
        # (one of -inf elements does, and the count below then takes the exact path).
        # One division: a masked copy of NaNs costs four times as much.
        is_positive = xp.greater(y, 0)
        positive = int(xp.count_nonzero(is_positive))
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
            hits += int(xp.count_nonzero(block_hit))
            block = dx[start:stop]
            xp.copyto(block, block_hit)
            block *= spread[:size]
        if hits != positive:  # a tie inside a window with a positive maximum
            return unfused(x, y, dy.reshape(y.shape), features)
        return dx.reshape(x.shape)

    return max_pool_grad_relu


registry.register(
    registry.OpDef("MaxPoolGradRelu", made_by_fusion, _max_pool_grad_relu_kernel, shape_of_input=0)
)
registry.register_fusion("MaxPoolGrad", "ReluGrad", "MaxPoolGradRelu")
