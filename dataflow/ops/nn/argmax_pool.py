"""``tf.nn.max_pool_with_argmax``: 2-D max pooling that also returns where each maximum
came from, and its gradient. NHWC only, as TF.

* ``MaxPoolWithArgmax(x)`` takes the strided window view of the input padded with
  ``-inf`` (``nn/conv/geometry.py``), copies it to ``[N, Ho, Wo, KH*KW, C]`` and takes
  the first maximum of each window (row-major order, TF's tie rule). The flat index of
  an element ``(b, y, x, c)`` is ``((b * H + y) * W + x) * C + c``, without the ``b``
  term unless ``include_batch_in_index``.
* ``MaxPoolGradWithArgmax(x, dy, argmax)`` adds each ``dy`` at its index (one
  ``bincount``, no loop), and its gradient with respect to ``dy`` gathers at the same
  indices (a composite); nothing flows to ``x`` or ``argmax``.

Example: a 2x2 window over ``[[1, 3], [4, 2]]`` (one channel) gives 4 at index 2.
"""

from __future__ import annotations

from typing import Any

from ...framework import dtypes, registry
from ...framework.graph import Operation, Tensor, convert_to_tensor
from .. import array as array_ops
from .. import math as math_ops
from ..build import apply_op, apply_op_n
from .conv.geometry import (
    format_shape,
    geometry_cache,
    nhwc_dims,
    out_and_pads,
    pad_window,
    params,
    spatial_list,
    windows_view,
)


def _attrs(op: Operation) -> dict:
    keys = ("ksize", "strides", "padding", "data_format", "include_batch_in_index")
    return {k: op.attrs[k] for k in keys}


def _infer(op: Operation) -> list:
    x = op.inputs[0]
    if not (x.dtype.is_floating or x.dtype.is_integer):
        raise TypeError(f"MaxPoolWithArgmax needs a real input, got {x.dtype.name}")
    p = params(op.attrs)
    _, kh, kw, _ = op.attrs["ksize"]
    n, h, w, c = nhwc_dims(x, False, "input")
    ho = out_and_pads(h, kh, p.sh, 1, p.padding, None)[0]
    wo = out_and_pads(w, kw, p.sw, 1, p.padding, None)[0]
    shape = format_shape([n, ho, wo, c], False)
    return [(x.dtype, shape), (op.attrs["Targmax"], shape)]


def _kernel(ctx: Any, attrs: dict) -> Any:
    xp, p = ctx.xp, params(attrs)
    _, kh, kw, _ = attrs["ksize"]
    geometry = geometry_cache(p)
    with_batch = attrs["include_batch_in_index"]
    index_dtype = attrs["Targmax"].as_numpy_dtype

    def max_pool_with_argmax(x: Any) -> tuple:
        g = geometry(x.shape, kh, kw)
        fill = -xp.inf if x.dtype.kind == "f" else xp.iinfo(x.dtype).min
        view = windows_view(xp, pad_window(xp, x, g, fill=fill), g, p)
        flat = view.reshape(g.n, g.ho, g.wo, kh * kw, g.c)
        tap = xp.argmax(flat, axis=3)
        y = xp.take_along_axis(flat, tap[:, :, :, None, :], axis=3)[:, :, :, 0, :]
        pt, _, pl, _ = g.pads
        rows = xp.arange(g.ho)[None, :, None, None] * p.sh + tap // kw - pt
        cols = xp.arange(g.wo)[None, None, :, None] * p.sw + tap % kw - pl
        index = (rows * g.w + cols) * g.c + xp.arange(g.c)[None, None, None, :]
        if with_batch:
            index = index + xp.arange(g.n)[:, None, None, None] * (g.h * g.w * g.c)
        return y, index.astype(index_dtype)

    return max_pool_with_argmax


def _grad(op: Operation, grad_y: Tensor, grad_argmax: Tensor) -> list:
    x, (_, argmax) = op.inputs[0], op.outputs
    return [apply_op("MaxPoolGradWithArgmax", [x, grad_y, argmax], _attrs(op))]


def _infer_grad(op: Operation) -> list:
    x, dy, _ = op.inputs
    return [(dy.dtype, x.shape)]


def _grad_kernel(ctx: Any, attrs: dict) -> Any:
    xp = ctx.xp
    with_batch = attrs["include_batch_in_index"]

    def max_pool_grad_with_argmax(x: Any, dy: Any, argmax: Any) -> Any:
        index = argmax.astype(xp.int64)
        per_image = x[0].size if x.shape[0] else 0
        if not with_batch:
            index = index + xp.arange(x.shape[0])[:, None, None, None] * per_image
        sums = xp.bincount(index.ravel(), weights=dy.ravel(), minlength=x.size)
        return sums.reshape(x.shape).astype(dy.dtype)

    return max_pool_grad_with_argmax


def _grad_grad(op: Operation, grad: Tensor) -> list:
    x, _, argmax = op.inputs
    index = math_ops.cast(argmax, dtypes.int64)
    if not op.attrs["include_batch_in_index"]:
        sizes = math_ops.cast(array_ops.shape(x), dtypes.int64)
        per_image = sizes[1] * sizes[2] * sizes[3]
        batch = math_ops.cast(array_ops.range_(array_ops.shape(x)[0]), dtypes.int64)
        index = index + array_ops.reshape(batch * per_image, [-1, 1, 1, 1])
    return [None, array_ops.gather(array_ops.reshape(grad, [-1]), index), None]


registry.register(registry.OpDef("MaxPoolWithArgmax", _infer, _kernel, _grad))
registry.register(registry.OpDef("MaxPoolGradWithArgmax", _infer_grad, _grad_kernel, _grad_grad))


def max_pool_with_argmax(
    input: Any,
    ksize: Any,
    strides: Any,
    padding: str,
    data_format: str = "NHWC",
    Targmax: Any = None,
    name: str | None = None,
    output_dtype: Any = None,
    include_batch_in_index: bool = False,
) -> tuple:
    """Max pooling of an NHWC tensor, with the flat index of each maximum.

    Args:
        input: ``[batch, height, width, channels]``, real.
        ksize, strides: an int or a list of 1, 2 or 4 ints (as ``max_pool``).
        padding: ``'SAME'`` or ``'VALID'``.
        data_format: ``'NHWC'`` only.
        Targmax, output_dtype: the indices' dtype, ``int64`` (default) or ``int32``;
            give at most one.
        name: a name for the op.
        include_batch_in_index: count the batch in the flat index.

    Returns:
        ``(output, argmax)``.

    Raises:
        ValueError: another data format, both dtypes given, or a bad padding.
    """
    if data_format != "NHWC":
        raise ValueError("Data formats other than 'NHWC' are not yet supported")
    if Targmax is not None and output_dtype is not None and Targmax != output_dtype:
        raise ValueError("Cannot specify both Targmax and output_dtype")
    index_dtype = dtypes.as_dtype(Targmax or output_dtype or dtypes.int64)
    if index_dtype not in (dtypes.int32, dtypes.int64):
        raise TypeError(f"Targmax must be int32 or int64, got {index_dtype.name}")
    mode = str(padding).upper()
    if mode not in ("SAME", "VALID"):
        raise ValueError(f"padding must be 'SAME' or 'VALID', got {padding!r}")
    attrs = {
        "ksize": spatial_list(ksize, "ksize", "NHWC"),
        "strides": spatial_list(strides, "strides", "NHWC"),
        "padding": mode,
        "explicit_paddings": (),
        "data_format": "NHWC",
        "Targmax": index_dtype,
        "include_batch_in_index": bool(include_batch_in_index),
    }
    op = apply_op_n("MaxPoolWithArgmax", [convert_to_tensor(input)], attrs, name=name)
    return tuple(op.outputs)
