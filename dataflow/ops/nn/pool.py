"""Max and average pooling (``tf.nn.max_pool``, ``avg_pool``) and their gradients,
closed under differentiation. The window geometry (TF's SAME/VALID rules, NCHW as a
view) is shared with ``nn/conv/conv2d.py``; see its module docstring.

The approach: the forward pass reduces the KH*KW shifted, strided slices of the padded
input elementwise (``maximum``/``add`` into one output: contiguous along C, no window
copy, a loop over kernel offsets, never over pixels).

* ``MaxPoolGrad(x, y, dy)`` routes each output gradient to the *first* maximal element
  of its window (TF's tie rule), found, as TF does, by comparing each shifted input
  slice with the pooled output ``y``, keeping a "not yet routed" mask. Routed values are
  masked multiplies (no branches), except for non-finite gradients, which go through
  ``where`` so a NaN reaches only its own element (as TF). Its gradient is
  ``MaxPoolGradGrad(x, y, ddx)``, which gathers ``ddx`` at the same positions (shape of
  ``y``); the gradient of that is ``MaxPoolGrad`` again. Both are linear in the routed
  gradient and piecewise constant in ``x``/``y``, so nothing flows to those.
* ``AvgPool`` divides each window sum by its count of real (unpadded) elements (TF's
  SAME rule). ``AvgPoolGrad(shape, dy)`` is its adjoint: ``dy / count`` added back over
  each window; each is the other's gradient.

Tiling windows (``ksize == strides``, as ``max_pooling2d(2, 2)``) take a fast path in
all three max kernels: the padded input (cropped to whole windows) is viewed, without a
copy, as ``[N*Ho, KH, Wo, KW, C]``, so each window row is a contiguous slab. The forward
pass takes the maximum of the KH row slabs, then of the KW column blocks; on numpy, when
the windows cover the input exactly, it instead takes maxima of whole shifted runs of a
block of rows (``_tile_max_in_blocks``: every operand contiguous, numpy's fast loop);
with numba (the ``fast`` extra) float 2x2 windows of ``compiled_pools.COMPILED_FROM``
elements or more are one compiled pass (``nn/compiled_pools.py``) taking ``maximum`` in
the same order (rows, then columns) with its rule (NaN wins), so the values, NaNs
included, are the numpy path's (MNIST's first pool on the AVX-512 VM, timed alone on
warm arrays: 0.4 against 1.2 ms; less inside a step).
The gradient compares the whole input with the broadcast output in one pass, keeps the
first hit per window with in-place boolean passes over the KH*KW offset views, and
writes the mask into a float buffer multiplied in place by the broadcast gradient (on
MNIST's 28x28x32 pool at batch 128: 4 ms against 26 for the general path). After a
ReLU, the plan compiler fuses the gradient with the ReLU's (``nn/pool_relu.py``).

Example: 2x2 windows, stride 2, over ``[[1, 3], [3, 2]]``: the max is 3, and its
gradient goes to the first 3 (row 0, column 1) only.
"""

from __future__ import annotations

from typing import Any

from ..._util.recycler import Recycler
from ...framework import registry
from ...framework.graph import Operation, Tensor
from ...framework.tensor_shape import TensorShape
from ..build import apply_op
from ..host import is_host_namespace
from . import compiled_pools
from .conv.geometry import (
    Params,
    WindowGeometry,
    crop,
    format_shape,
    from_nhwc,
    geometry_cache,
    nhwc_dims,
    normalize_data_format,
    offset_slices,
    out_and_pads,
    pad_window,
    padded_zeros,
    padding_attrs,
    params,
    shape_of,
    sizes_dims,
    sizes_nhwc,
    spatial_list,
    to_nhwc,
)


def _apply(op_type: str, inputs: list, attrs: dict, name: str | None = None) -> Tensor:
    return apply_op(op_type, inputs, dict(attrs), name=name)


def _pool_attrs(op: Operation) -> dict:
    a = op.attrs
    return {
        "ksize": a["ksize"],
        "strides": a["strides"],
        "padding": a["padding"],
        "explicit_paddings": (),
        "data_format": a["data_format"],
    }


def pool_kernel_hw(attrs: dict) -> tuple[int, int]:
    k = attrs["ksize"]
    return (k[2], k[3]) if attrs["data_format"] == "NCHW" else (k[1], k[2])


def _pool_out_shape(op: Operation, x: Tensor) -> TensorShape:
    p = params(op.attrs)
    kh, kw = pool_kernel_hw(op.attrs)
    n, h, w, c = nhwc_dims(x, p.nchw, "input")
    ho = out_and_pads(h, kh, p.sh, 1, p.padding, None)[0]
    wo = out_and_pads(w, kw, p.sw, 1, p.padding, None)[0]
    return format_shape([n, ho, wo, c], p.nchw)


def _infer_max_pool(op: Operation) -> list:
    x = op.inputs[0]
    if not (x.dtype.is_floating or x.dtype.is_integer):
        raise TypeError(f"MaxPool needs a real input, got {x.dtype.name}")
    return [(x.dtype, _pool_out_shape(op, x))]


def _lowest(xp: Any, dtype: Any) -> Any:
    """The padding value of max pooling: below every element."""
    return -xp.inf if dtype.kind == "f" else xp.iinfo(dtype).min


def _tiles(p: Params, kh: int, kw: int) -> bool:
    """Whether the windows tile the (padded) input: stride equal to the window."""
    return p.sh == kh and p.sw == kw


def _tile_view(xpad: Any, g: WindowGeometry) -> Any:
    """The padded input cropped to whole windows (VALID drops a remainder; SAME pads to
    exactly ``Ho*KH``), as ``[N*Ho, KH, Wo, KW, C]`` (a view when nothing is dropped)."""
    rows, cols = g.ho * g.kh, g.wo * g.kw
    if xpad.shape[1:3] != (rows, cols):
        xpad = xpad[:, :rows, :cols, :]
    return xpad.reshape(g.n * g.ho, g.kh, g.wo, g.kw, g.c)


def _slab_max(xp: Any, slabs: Any, out: Any) -> Any:
    """``out[...] = max over axis 1 of slabs`` (``[B, K, ...]``), a pass per slab."""
    if slabs.shape[1] == 1:
        out[...] = slabs[:, 0]
        return out
    xp.maximum(slabs[:, 0], slabs[:, 1], out=out)
    for i in range(2, slabs.shape[1]):
        xp.maximum(out, slabs[:, i], out=out)
    return out


# Window rows per block of ``_tile_max_in_blocks`` keep a block near this many elements
# (measured on MNIST's first pool: 2^17 beat 2^16 and 2^15, each block being a few
# Python-level calls).
_BLOCK_ELEMENTS = 1 << 17


def _max_of_shifts(xp: Any, run: Any, length: int, shift: int, count: int, out: Any) -> None:
    """``out[:length] = max over k < count of run[k*shift : k*shift + length]``."""
    if count == 1:
        xp.copyto(out[:length], run[:length])
        return
    xp.maximum(run[:length], run[shift : shift + length], out=out[:length])
    for k in range(2, count):
        xp.maximum(out[:length], run[k * shift : k * shift + length], out=out[:length])


def _tile_max_in_blocks(xp: Any, x: Any, g: WindowGeometry, buffers: Recycler) -> Any:
    """``[N, Ho, Wo, C]``: the window maxima of a C-contiguous (padded) NHWC ``x`` that
    the windows cover exactly, a block of window rows at a time, with contiguous operands only
    (numpy's loops over strided ones are several times slower). In a block's flat run,
    the maximum of each element with the one ``i`` image rows below (``i < KH``), then
    of that with the one ``j`` pixels further (``j < KW``), is at each window's first
    element its maximum; the other positions (pairs across windows) are not read."""
    row = x.shape[2] * g.c  # the padded width
    flat = x.reshape(g.n * g.ho, g.kh * row)
    step = max(1, _BLOCK_ELEMENTS // (g.kh * row))
    rows_max = buffers.empty((step * g.kh * row,), x.dtype)
    both_max = buffers.empty((step * g.kh * row,), x.dtype)
    out = buffers.empty((g.n * g.ho, g.wo, g.c), x.dtype)
    for start in range(0, g.n * g.ho, step):
        stop = min(start + step, g.n * g.ho)
        run = flat[start:stop].reshape(-1)
        length = run.size - (g.kh - 1) * row
        _max_of_shifts(xp, run, length, row, g.kh, rows_max)
        _max_of_shifts(xp, rows_max, length - (g.kw - 1) * g.c, g.c, g.kw, both_max)
        firsts = both_max[: run.size].reshape(stop - start, g.kh, g.wo, g.kw, g.c)[:, 0, :, 0]
        xp.copyto(out[start:stop], firsts)
    return out.reshape(g.n, g.ho, g.wo, g.c)


def _tile_max(xp: Any, v: Any, g: WindowGeometry, buffers: Recycler) -> Any:
    """``[N, Ho, Wo, C]``: the window maxima of a tile view, over the KH row slabs
    (contiguous ``[Wo*KW*C]`` runs) first, then over the KW column blocks."""
    rows = v.reshape(g.n * g.ho, g.kh, g.wo * g.kw * g.c)
    m = _slab_max(xp, rows, buffers.empty((g.n * g.ho, g.wo * g.kw * g.c), v.dtype))
    cols = m.reshape(g.n * g.ho * g.wo, g.kw, g.c)
    out = _slab_max(xp, cols, buffers.empty((g.n * g.ho * g.wo, g.c), v.dtype))
    return out.reshape(g.n, g.ho, g.wo, g.c)


def _tile_first_hits(xp: Any, v: Any, y: Any, g: WindowGeometry, buffers: Recycler) -> Any:
    """A boolean tile view: True at each window's *first* element equal to its maximum
    ``y`` (TF's tie rule; ties are common after a ReLU: windows of zeros). One compare
    over the whole input, then a running "not yet hit" mask over the KH*KW offsets, in
    window order, each step in place on an offset view."""
    hit = xp.equal(v, y.reshape(g.n * g.ho, 1, g.wo, 1, g.c), out=buffers.empty(v.shape, bool))
    # The mask passes run on the 0/1 bytes of a C run packed into the widest unsigned
    # words that divide it (8 channels per uint64 op): the same bitwise result, as
    # "not yet hit" is kept as 1 - hit (``^ ones``), never as ``~`` of a word.
    width = next(b for b in (8, 4, 2, 1) if g.c % b == 0)
    words = hit if width == 1 else hit.view(getattr(xp, f"uint{8 * width}"))
    ones = words.dtype.type(int("01" * width, 16)) if width > 1 else True  # 1 in each byte
    free = None
    last = (g.kh - 1, g.kw - 1)
    for i in range(g.kh):
        for j in range(g.kw):
            here = words[:, i, :, j]
            if free is None:
                free = here ^ ones
                continue
            here &= free
            if (i, j) != last:
                free ^= here  # here is a subset of free: this clears the new hits
    return hit


def _tile_scatter(xp: Any, hit: Any, dy: Any, g: WindowGeometry, buffers: Recycler) -> Any:
    """``dy`` broadcast over each window where ``hit``, else 0, as a padded NHWC array
    (zeros in a dropped VALID remainder). Finite gradients: the mask is written into a
    float buffer and multiplied in place (faster than a bool * float multiply); others
    go through ``where`` so that a NaN reaches only its own element (as TF)."""
    dyb = dy.reshape(g.n * g.ho, 1, g.wo, 1, g.c)
    if bool(xp.isfinite(dy).all()):
        dv = buffers.empty(hit.shape, dy.dtype)
        xp.copyto(dv, hit)
        dv *= dyb
    else:
        dv = xp.where(hit, dyb, dy.dtype.type(0))
    rows, cols = g.ho * g.kh, g.wo * g.kw
    dv = dv.reshape(g.n, rows, cols, g.c)
    pt, pb, pl, pr = g.pads
    full = (g.h + pt + pb, g.w + pl + pr)
    if full == (rows, cols):
        return dv
    dpad = buffers.zeros((g.n, *full, g.c), dy.dtype)
    dpad[:, :rows, :cols, :] = dv
    return dpad


def _max_pool_kernel(ctx: Any, attrs: dict) -> Any:
    xp, p = ctx.xp, params(attrs)
    kh, kw = pool_kernel_hw(attrs)
    geometry = geometry_cache(p)
    tiles = _tiles(p, kh, kw)
    buffers = Recycler(xp)

    def max_pool(x: Any) -> Any:
        x = to_nhwc(xp, x, p.nchw)
        g = geometry(x.shape, kh, kw)
        xpad = pad_window(xp, x, g, _lowest(xp, x.dtype), buffers=buffers)
        if tiles and g.ho and g.wo:
            exact = xpad.shape[1:3] == (g.ho * kh, g.wo * kw) and xpad.flags.c_contiguous
            if exact and is_host_namespace(xp):
                out = compiled_pools.max_2x2(xpad, g, buffers)
                if out is None:
                    out = _tile_max_in_blocks(xp, xpad, g, buffers)
                return from_nhwc(xp, out, p.nchw)
            return from_nhwc(xp, _tile_max(xp, _tile_view(xpad, g), g, buffers), p.nchw)
        slices = offset_slices(g, p)
        # Elementwise maximum over the KH*KW shifted slices (contiguous along C; faster
        # than reducing the strided window view over two inner axes).
        out = xp.array(xpad[slices[0]])
        for where in slices[1:]:
            xp.maximum(out, xpad[where], out=out)
        return from_nhwc(xp, out, p.nchw)

    return max_pool


def _max_pool_grad(op: Operation, grad: Tensor) -> list:
    x = op.inputs[0]
    return [_apply("MaxPoolGrad", [x, op.outputs[0], grad], _pool_attrs(op))]


def _first_max_hits(xp: Any, xpad: Any, y: Any, g: WindowGeometry, p: Params) -> Any:
    """Yields ``(where, hit)`` per kernel offset, in window order: ``hit[n, oh, ow, c]``
    marks the outputs whose window has its *first* maximal element at this offset (TF's
    tie rule). Elementwise compares of shifted slices against the pooled output ``y``:
    no argmax over a strided window axis, no window copy."""
    free = None
    for where in offset_slices(g, p):
        hit = xpad[where] == y
        if free is None:
            free = ~hit
        else:
            hit &= free
            free &= ~hit
        yield where, hit


def _route(xp: Any, values: Any, hit: Any, finite: bool) -> Any:
    """``values`` where ``hit``, else 0. A multiply by the mask is ~10x faster than
    ``where`` on irregular masks (no branches), but 0 * NaN is NaN: non-finite values
    take the ``where`` path, so they reach only the element they are routed to (TF)."""
    if finite:
        return values * hit
    return xp.where(hit, values, values.dtype.type(0))


def _infer_max_pool_grad(op: Operation) -> list:
    x, y, dy = op.inputs
    if x.dtype != dy.dtype or y.dtype != x.dtype:
        raise TypeError("MaxPoolGrad inputs must share one dtype")
    want = _pool_out_shape(op, x)
    for t, what in ((y, "orig_output"), (dy, "grad")):
        if not t.shape.is_compatible_with(want):
            raise ValueError(f"{what} has shape {t.shape}, but the pooling produces {want}")
    return [(x.dtype, x.shape)]


def max_pool_grad_kernel(ctx: Any, attrs: dict) -> Any:
    xp, p = ctx.xp, params(attrs)
    kh, kw = pool_kernel_hw(attrs)
    geometry = geometry_cache(p)

    disjoint = p.sh >= kh and p.sw >= kw
    tiles = _tiles(p, kh, kw)
    buffers = Recycler(xp)

    def max_pool_grad(x: Any, y: Any, dy: Any) -> Any:
        x, y, dy = (to_nhwc(xp, t, p.nchw) for t in (x, y, dy))
        g = geometry(x.shape, kh, kw)
        xpad = pad_window(xp, x, g, _lowest(xp, x.dtype), buffers=buffers)
        if tiles and g.ho and g.wo:
            hit = _tile_first_hits(xp, _tile_view(xpad, g), y, g, buffers)
            dv = _tile_scatter(xp, hit, dy, g, buffers)
            return from_nhwc(xp, crop(dv, g), p.nchw)
        dpad = padded_zeros(xp, g, dy.dtype, buffers=buffers)
        finite = bool(xp.isfinite(dy).all())
        for where, hit in _first_max_hits(xp, xpad, y, g, p):
            contrib = _route(xp, dy, hit, finite)
            if disjoint:  # each input element lies in at most one window
                dpad[where] = contrib
            else:
                dpad[where] += contrib
        return from_nhwc(xp, crop(dpad, g), p.nchw)

    return max_pool_grad


def _max_pool_grad_grad(op: Operation, grad: Tensor) -> list:
    x, y, _ = op.inputs
    # Piecewise constant in x and y (the argmax routing); linear in the routed grad.
    return [None, None, _apply("MaxPoolGradGrad", [x, y, grad], _pool_attrs(op))]


def _infer_max_pool_grad_grad(op: Operation) -> list:
    x, y, ddx = op.inputs
    if x.dtype != ddx.dtype or y.dtype != x.dtype:
        raise TypeError("MaxPoolGradGrad inputs must share one dtype")
    if not ddx.shape.is_compatible_with(x.shape):
        raise ValueError(f"grad has shape {ddx.shape}, but orig_input has {x.shape}")
    return [(x.dtype, _pool_out_shape(op, x))]


def _max_pool_grad_grad_kernel(ctx: Any, attrs: dict) -> Any:
    xp, p = ctx.xp, params(attrs)
    kh, kw = pool_kernel_hw(attrs)
    geometry = geometry_cache(p)

    tiles = _tiles(p, kh, kw)
    buffers = Recycler(xp)

    def max_pool_grad_grad(x: Any, y: Any, ddx: Any) -> Any:
        x, y, ddx = (to_nhwc(xp, t, p.nchw) for t in (x, y, ddx))
        g = geometry(x.shape, kh, kw)
        xpad, ddpad = pad_window(xp, x, g, _lowest(xp, x.dtype)), pad_window(xp, ddx, g)
        finite = bool(xp.isfinite(ddx).all())
        if tiles and g.ho and g.wo:
            hit = _tile_first_hits(xp, _tile_view(xpad, g), y, g, buffers)
            picked = _route(xp, _tile_view(ddpad, g), hit, finite)
            out = picked.sum(axis=(1, 3))  # exactly one hit per window: exact
            return from_nhwc(xp, out.reshape(y.shape), p.nchw)
        out = xp.zeros(y.shape, dtype=ddx.dtype)
        for where, hit in _first_max_hits(xp, xpad, y, g, p):
            out += _route(xp, ddpad[where], hit, finite)  # exactly one hit per output
        return from_nhwc(xp, out, p.nchw)

    return max_pool_grad_grad


def _max_pool_grad_grad_grad(op: Operation, grad: Tensor) -> list:
    x, y, _ = op.inputs
    return [None, None, _apply("MaxPoolGrad", [x, y, grad], _pool_attrs(op))]


def _avg_counts(xp: Any, g: WindowGeometry, p: Params, dtype: Any) -> Any:
    """(Ho, Wo, 1): how many real (unpadded) elements each window averages."""
    pt, _, pl, _ = g.pads

    def counts(out: int, size: int, k: int, stride: int, before: int) -> Any:
        start = xp.arange(out) * stride - before
        return xp.minimum(start + k, size) - xp.maximum(start, 0)

    ch = counts(g.ho, g.h, g.kh, p.sh, pt)
    cw = counts(g.wo, g.w, g.kw, p.sw, pl)
    return (ch[:, None] * cw[None, :]).astype(dtype)[:, :, None]


def _infer_avg_pool(op: Operation) -> list:
    x = op.inputs[0]
    if not x.dtype.is_floating:
        raise TypeError(f"AvgPool needs a floating point input, got {x.dtype.name}")
    return [(x.dtype, _pool_out_shape(op, x))]


def _avg_pool_kernel(ctx: Any, attrs: dict) -> Any:
    xp, p = ctx.xp, params(attrs)
    kh, kw = pool_kernel_hw(attrs)
    geometry = geometry_cache(p)
    counts_cache: dict = {}

    def avg_pool(x: Any) -> Any:
        x = to_nhwc(xp, x, p.nchw)
        g = geometry(x.shape, kh, kw)
        key = (g, x.dtype)
        counts = counts_cache.get(key)
        if counts is None:
            counts = counts_cache[key] = _avg_counts(xp, g, p, x.dtype)
        xpad = pad_window(xp, x, g)
        slices = offset_slices(g, p)
        out = xp.array(xpad[slices[0]])
        for where in slices[1:]:
            xp.add(out, xpad[where], out=out)
        out /= counts
        return from_nhwc(xp, out, p.nchw)

    return avg_pool


def _avg_pool_grad(op: Operation, grad: Tensor) -> list:
    return [_apply("AvgPoolGrad", [shape_of(op.inputs[0]), grad], _pool_attrs(op))]


def _infer_avg_pool_grad(op: Operation) -> list:
    sizes, dy = op.inputs
    if not dy.dtype.is_floating:
        raise TypeError(f"AvgPoolGrad needs a floating point grad, got {dy.dtype.name}")
    p = params(op.attrs)
    dims = sizes_dims(sizes, p.nchw)
    return [(dy.dtype, format_shape(dims, p.nchw))]


def _avg_pool_grad_kernel(ctx: Any, attrs: dict) -> Any:
    xp, p = ctx.xp, params(attrs)
    kh, kw = pool_kernel_hw(attrs)
    geometry = geometry_cache(p)

    def avg_pool_grad(sizes: Any, dy: Any) -> Any:
        dy = to_nhwc(xp, dy, p.nchw)
        g = geometry(sizes_nhwc(sizes, p.nchw), kh, kw)
        share = dy / _avg_counts(xp, g, p, dy.dtype)
        dpad = padded_zeros(xp, g, dy.dtype)
        for where in offset_slices(g, p):
            dpad[where] += share
        return from_nhwc(xp, crop(dpad, g), p.nchw)

    return avg_pool_grad


def _avg_pool_grad_grad(op: Operation, grad: Tensor) -> list:
    return [None, _apply("AvgPool", [grad], _pool_attrs(op))]


registry.register(registry.OpDef("MaxPool", _infer_max_pool, _max_pool_kernel, _max_pool_grad))
registry.register(
    registry.OpDef(
        "MaxPoolGrad",
        _infer_max_pool_grad,
        max_pool_grad_kernel,
        _max_pool_grad_grad,
        shape_of_input=0,
    )
)
registry.register(
    registry.OpDef(
        "MaxPoolGradGrad",
        _infer_max_pool_grad_grad,
        _max_pool_grad_grad_kernel,
        _max_pool_grad_grad_grad,
    )
)
registry.register(registry.OpDef("AvgPool", _infer_avg_pool, _avg_pool_kernel, _avg_pool_grad))
registry.register(
    registry.OpDef("AvgPoolGrad", _infer_avg_pool_grad, _avg_pool_grad_kernel, _avg_pool_grad_grad)
)


def _make_pool_attrs(ksize: Any, strides: Any, padding: Any, data_format: Any) -> dict:
    fmt = normalize_data_format(data_format)
    mode, _ = padding_attrs(padding, fmt)
    if mode == "EXPLICIT":
        raise ValueError("pooling takes padding 'SAME' or 'VALID'")
    return {
        "ksize": spatial_list(ksize, "ksize", fmt),
        "strides": spatial_list(strides, "strides", fmt),
        "padding": mode,
        "explicit_paddings": (),
        "data_format": fmt,
    }


def max_pool(
    value: Any,
    ksize: Any,
    strides: Any,
    padding: str,
    data_format: str = "NHWC",
    name: str | None = None,
    input: Any = None,
) -> Tensor:
    """Max pooling over the spatial dimensions of a 4-D tensor.

    Args:
        value: a tensor of shape ``[batch, height, width, channels]`` (NHWC) or NCHW.
            ``input`` is an alias.
        ksize: an int or a list of 1, 2 or 4 ints: the window size (4-lists in
            ``data_format`` order, with 1 in batch and depth).
        strides: an int or list like ``ksize``: the window's step.
        padding: ``'SAME'`` (windows hanging over the border ignore the outside) or
            ``'VALID'`` (only whole windows).
        data_format: ``'NHWC'`` (default) or ``'NCHW'``.
        name: a name for the op.

    Returns:
        The max-pooled tensor, of the dtype of ``value``.
    """
    value = input if value is None else value
    return apply_op(
        "MaxPool", [value], _make_pool_attrs(ksize, strides, padding, data_format), name=name
    )


def avg_pool(
    value: Any,
    ksize: Any,
    strides: Any,
    padding: str,
    data_format: str = "NHWC",
    name: str | None = None,
    input: Any = None,
) -> Tensor:
    """Average pooling over the spatial dimensions of a 4-D tensor.

    With ``'SAME'`` padding each window averages only its real (unpadded) elements, as
    in TF. Arguments as for ``max_pool``.
    """
    value = input if value is None else value
    return apply_op(
        "AvgPool", [value], _make_pool_attrs(ksize, strides, padding, data_format), name=name
    )


def max_pool2d(
    input: Any,
    ksize: Any,
    strides: Any,
    padding: str,
    data_format: str = "NHWC",
    name: str | None = None,
) -> Tensor:
    """``max_pool`` under its TF2 name (``input`` first)."""
    return max_pool(input, ksize, strides, padding, data_format=data_format, name=name)


def avg_pool2d(
    input: Any,
    ksize: Any,
    strides: Any,
    padding: str,
    data_format: str = "NHWC",
    name: str | None = None,
) -> Tensor:
    """``avg_pool`` under its TF2 name (``input`` first)."""
    return avg_pool(input, ksize, strides, padding, data_format=data_format, name=name)
