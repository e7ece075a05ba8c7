"""3-D max and average pooling (``tf.nn.max_pool3d``, ``avg_pool3d``) and their
gradients, over 5-D ``NDHWC`` (or ``NCDHW``, viewed as ``NDHWC``) tensors. Geometry
helpers are in ``nn/conv/volume.py``.

The approach: the forward passes reduce the strided window view of the padded input
(max over the window axes; a sum divided by each window's count of real, unpadded
elements for the average, TF's SAME rule). Gradients add back one strided slice per
kernel tap (a loop over the KD*KH*KW taps, never over elements):

* ``MaxPool3DGrad(x, y, dy)`` gives each output's gradient to *every* element of its
  window equal to the maximum, as TF's CPU kernel does (2-D ``MaxPool`` instead picks
  the first one). Its gradient is ``MaxPool3DGradGrad(x, y, ddx)``, which sums ``ddx``
  over the same positions (shape of ``y``), whose gradient is ``MaxPool3DGrad`` again;
  nothing flows to ``x`` or ``y`` (piecewise constant).
* ``AvgPool3DGrad(shape, dy)`` adds ``dy / count`` back over each window; it and
  ``AvgPool3D`` are each other's gradients (adjoint linear maps).

Example: ``[[1, 3, 3]]`` pooled by 3 gives 3 and sends its gradient to both 3s.
"""

from __future__ import annotations

from typing import Any

from ...framework import registry
from ...framework.graph import Operation, Tensor
from ..build import apply_op
from .conv import volume as vol
from .conv.geometry import shape_of


def _attrs(op: Operation) -> dict:
    return {k: op.attrs[k] for k in ("ksize", "strides", "padding", "data_format")}


def _geometry(attrs: dict, shape: tuple) -> vol.Volume:
    fmt = attrs["data_format"]
    k = vol.spatial(attrs["ksize"], fmt)
    return vol.volume(shape, k, vol.spatial(attrs["strides"], fmt), (1, 1, 1), attrs["padding"])


def _out_shape(attrs: dict, dims: list) -> Any:
    fmt = attrs["data_format"]
    k, s = vol.spatial(attrs["ksize"], fmt), vol.spatial(attrs["strides"], fmt)
    return vol.in_format([*vol.out_dims(dims, k, s, (1, 1, 1), attrs["padding"]), dims[4]], fmt)


def _require_float(op: Operation, t: Tensor) -> None:
    if not t.dtype.is_floating:
        raise TypeError(f"'{op.type}' needs a floating point input, got {t.dtype.name}")


def _infer_pool(op: Operation) -> list:
    x = op.inputs[0]
    _require_float(op, x)
    dims = vol.channels_last_dims(x, op.attrs["data_format"], "input")
    return [(x.dtype, _out_shape(op.attrs, dims))]


def _max_pool_kernel(ctx: Any, attrs: dict) -> Any:
    xp, fmt = ctx.xp, attrs["data_format"]

    def max_pool3d(x: Any) -> Any:
        x = vol.to_last(xp, x, fmt)
        g = _geometry(attrs, x.shape)
        view = vol.windows(xp, vol.pad(xp, x, g, fill=-xp.inf), g)
        return vol.from_last(xp, view.max(axis=(4, 5, 6)), fmt)

    return max_pool3d


def _max_pool_grad(op: Operation, grad: Tensor) -> list:
    return [_apply("MaxPool3DGrad", [op.inputs[0], op.outputs[0], grad], _attrs(op))]


def _infer_max_pool_grad(op: Operation) -> list:
    x, _, dy = op.inputs
    _require_float(op, dy)
    return [(dy.dtype, x.shape)]


def _max_pool_grad_kernel(ctx: Any, attrs: dict) -> Any:
    xp, fmt = ctx.xp, attrs["data_format"]

    def max_pool3d_grad(x: Any, y: Any, dy: Any) -> Any:
        x, y, dy = (vol.to_last(xp, a, fmt) for a in (x, y, dy))
        g = _geometry(attrs, x.shape)
        xpad = vol.pad(xp, x, g, fill=-xp.inf)
        dpad = vol.padded_zeros(xp, g, dy.dtype)
        for where in vol.tap_slices(g):
            dpad[where] += xp.where(xpad[where] == y, dy, 0)
        return vol.from_last(xp, vol.crop(dpad, g), fmt).astype(dy.dtype, copy=False)

    return max_pool3d_grad


def _max_pool_grad_grad(op: Operation, grad: Tensor) -> list:
    x, y, _ = op.inputs
    return [None, None, _apply("MaxPool3DGradGrad", [x, y, grad], _attrs(op))]


def _infer_max_pool_grad_grad(op: Operation) -> list:
    _, y, ddx = op.inputs
    _require_float(op, ddx)
    return [(ddx.dtype, y.shape)]


def _max_pool_grad_grad_kernel(ctx: Any, attrs: dict) -> Any:
    xp, fmt = ctx.xp, attrs["data_format"]

    def max_pool3d_grad_grad(x: Any, y: Any, ddx: Any) -> Any:
        x, y, ddx = (vol.to_last(xp, a, fmt) for a in (x, y, ddx))
        g = _geometry(attrs, x.shape)
        xpad, ddpad = vol.pad(xp, x, g, fill=-xp.inf), vol.pad(xp, ddx, g)
        out = xp.zeros(y.shape, dtype=ddx.dtype)
        for where in vol.tap_slices(g):
            out += xp.where(xpad[where] == y, ddpad[where], 0)
        return vol.from_last(xp, out, fmt)

    return max_pool3d_grad_grad


def _max_pool_grad_grad_grad(op: Operation, grad: Tensor) -> list:
    x, y, _ = op.inputs
    return [None, None, _apply("MaxPool3DGrad", [x, y, grad], _attrs(op))]


def _counts(xp: Any, g: vol.Volume, dtype: Any) -> Any:
    """``[Do, Ho, Wo, 1]``: how many real (unpadded) elements each window averages."""
    per_dim = []
    for out, size, k, s, (before, _) in zip(g.out, g.size, g.k, g.strides, g.pads):
        start = xp.arange(out) * s - before
        per_dim.append(xp.minimum(start + k, size) - xp.maximum(start, 0))
    cd, ch, cw = per_dim
    return (cd[:, None, None] * ch[None, :, None] * cw[None, None, :]).astype(dtype)[..., None]


def _avg_pool_kernel(ctx: Any, attrs: dict) -> Any:
    xp, fmt = ctx.xp, attrs["data_format"]

    def avg_pool3d(x: Any) -> Any:
        x = vol.to_last(xp, x, fmt)
        g = _geometry(attrs, x.shape)
        sums = vol.windows(xp, vol.pad(xp, x, g), g).sum(axis=(4, 5, 6))
        return vol.from_last(xp, (sums / _counts(xp, g, x.dtype)).astype(x.dtype), fmt)

    return avg_pool3d


def _avg_pool_grad(op: Operation, grad: Tensor) -> list:
    return [_apply("AvgPool3DGrad", [shape_of(op.inputs[0]), grad], _attrs(op))]


def _infer_avg_pool_grad(op: Operation) -> list:
    sizes, dy = op.inputs
    _require_float(op, dy)
    return [
        (
            dy.dtype,
            vol.in_format(vol.sizes_last(sizes, op.attrs["data_format"]), op.attrs["data_format"]),
        )
    ]


def _avg_pool_grad_kernel(ctx: Any, attrs: dict) -> Any:
    xp, fmt = ctx.xp, attrs["data_format"]

    def avg_pool3d_grad(sizes: Any, dy: Any) -> Any:
        dy = vol.to_last(xp, dy, fmt)
        g = _geometry(attrs, vol.shape_last(sizes, fmt))
        share = dy / _counts(xp, g, dy.dtype)
        dpad = vol.padded_zeros(xp, g, dy.dtype)
        for where in vol.tap_slices(g):
            dpad[where] += share
        return vol.from_last(xp, vol.crop(dpad, g), fmt)

    return avg_pool3d_grad


def _avg_pool_grad_grad(op: Operation, grad: Tensor) -> list:
    return [None, _apply("AvgPool3D", [grad], _attrs(op))]


registry.register(registry.OpDef("MaxPool3D", _infer_pool, _max_pool_kernel, _max_pool_grad))
registry.register(
    registry.OpDef(
        "MaxPool3DGrad", _infer_max_pool_grad, _max_pool_grad_kernel, _max_pool_grad_grad
    )
)
registry.register(
    registry.OpDef(
        "MaxPool3DGradGrad",
        _infer_max_pool_grad_grad,
        _max_pool_grad_grad_kernel,
        _max_pool_grad_grad_grad,
    )
)
registry.register(registry.OpDef("AvgPool3D", _infer_pool, _avg_pool_kernel, _avg_pool_grad))
registry.register(
    registry.OpDef(
        "AvgPool3DGrad", _infer_avg_pool_grad, _avg_pool_grad_kernel, _avg_pool_grad_grad
    )
)


def _apply(op_type: str, inputs: list, attrs: dict, name: str | None = None) -> Tensor:
    return apply_op(op_type, inputs, dict(attrs), name=name)


def make_pool3d_attrs(ksize: Any, strides: Any, padding: Any, data_format: Any) -> dict:
    """A 3-D pooling's attrs from TF1's arguments (checked at build time)."""
    fmt = vol.normalize_format(data_format)
    return {
        "ksize": vol.five_list(ksize, "ksize", fmt),
        "strides": vol.five_list(strides, "strides", fmt),
        "padding": vol.padding_mode(padding),
        "data_format": fmt,
    }


def max_pool3d(
    input: Any,
    ksize: Any,
    strides: Any,
    padding: str,
    data_format: str = "NDHWC",
    name: str | None = None,
) -> Tensor:
    """Max pooling over the depth, height and width of a 5-D tensor.

    Args:
        input: a float tensor ``[batch, depth, height, width, channels]`` (NDHWC) or
            NCDHW.
        ksize: an int or a list of 1, 3 or 5 ints: the window (5-lists in
            ``data_format`` order with 1 in batch and channels).
        strides: like ``ksize``: the window's step.
        padding: ``'SAME'`` or ``'VALID'``.
        data_format: ``'NDHWC'`` (default) or ``'NCDHW'``.
        name: a name for the op.
    """
    attrs = make_pool3d_attrs(ksize, strides, padding, data_format)
    return apply_op("MaxPool3D", [input], attrs, name=name)


def avg_pool3d(
    input: Any,
    ksize: Any,
    strides: Any,
    padding: str,
    data_format: str = "NDHWC",
    name: str | None = None,
) -> Tensor:
    """Average pooling over the depth, height and width of a 5-D tensor; with
    ``'SAME'`` each window averages only its real elements. Arguments as for
    ``max_pool3d``."""
    attrs = make_pool3d_attrs(ksize, strides, padding, data_format)
    return apply_op("AvgPool3D", [input], attrs, name=name)
