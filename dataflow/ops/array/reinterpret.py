"""``bitcast`` (``Bitcast``: the same bytes read as another dtype) and
``saturate_cast`` (a cast whose values are first clipped to the target's range).

``Bitcast`` of ``[..., k]`` bytes-per-element ratios: to a narrower dtype the output
gains a last dimension of ``itemsize_in / itemsize_out``; to a wider one the input's
last dimension must equal ``itemsize_out / itemsize_in`` and disappears. The kernel is
``xp.ndarray.view`` on a contiguous copy (little-endian, as TF's CPU kernels). Not
differentiable (TF1 registers no gradient either).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...framework import dtypes, registry
from ...framework.graph import Operation, Tensor, convert_to_tensor, get_default_graph
from ...framework.tensor_shape import TensorShape
from ..build import apply_op


def _size(d: dtypes.DType) -> int:
    return int(np.dtype(d.as_numpy_dtype).itemsize)


def _infer_bitcast(op: Operation) -> list:
    x, out = op.inputs[0], op.attrs["type"]
    for d in (x.dtype, out):
        if not (d.is_numeric or d.is_bool) or d == dtypes.string:
            raise TypeError(f"Bitcast: {d.name} is not a numeric dtype")
    a, b = _size(x.dtype), _size(out)
    if a == b or x.shape.rank is None:
        return [(out, x.shape if a == b else TensorShape(None))]
    if a > b:
        return [(out, x.shape.concatenate([a // b]))]
    last = x.shape.as_list()[-1] if x.shape.rank else None
    if x.shape.rank == 0 or (last is not None and last != b // a):
        raise ValueError(
            f"Bitcast: cannot bitcast from {x.dtype.name} to {out.name}: the last dimension "
            f"of shape {x.shape} must be {b // a}"
        )
    return [(out, x.shape[:-1])]


def _bitcast_kernel(ctx: Any, attrs: dict) -> Any:
    xp, out = ctx.xp, attrs["type"].as_numpy_dtype
    out_size = _size(attrs["type"])

    def bitcast(x: Any) -> Any:
        viewed = xp.ascontiguousarray(x).view(out)
        in_size = x.dtype.itemsize
        if in_size > out_size:
            return viewed.reshape(*x.shape, in_size // out_size)
        if in_size < out_size:
            return viewed.reshape(x.shape[:-1])
        return viewed

    return bitcast


registry.register(
    registry.OpDef("Bitcast", _infer_bitcast, _bitcast_kernel, registry.NOT_DIFFERENTIABLE)
)


def bitcast(input: Any, type: Any, name: str | None = None) -> Tensor:
    """``input``'s bytes read as ``type`` (``tf.bitcast``): a narrower type adds a last
    dimension of the size ratio, a wider one consumes a last dimension of that size.

    Raises:
        TypeError: a non-numeric dtype.
        ValueError: to a wider dtype, a last dimension other than the size ratio.
    """
    x = convert_to_tensor(input, name="input")
    return apply_op("Bitcast", [x], {"type": dtypes.as_dtype(type)}, name=name)


def saturate_cast(value: Any, dtype: Any, name: str | None = None) -> Tensor:
    """``value`` cast to ``dtype`` after clipping it to ``dtype``'s range, so integer
    overflow saturates (``tf.saturate_cast``); the clip's gradient passes inside the
    range."""
    from ..cast import cast
    from ..math.arith import maximum, minimum

    with get_default_graph().name_scope(name or "saturate_cast"):
        x = convert_to_tensor(value, name="value")
        dtype = dtypes.as_dtype(dtype)
        if x.dtype.is_complex and not dtype.is_complex:
            raise TypeError("saturate_cast: use real() or abs() to drop an imaginary part")
        lo, hi = dtype.min, dtype.max
        if not dtype.is_bool and x.dtype.min < lo:
            x = maximum(x, cast(lo, x.dtype) if x.dtype.is_integer else float(lo))
        if not dtype.is_bool and x.dtype.max > hi:
            x = minimum(x, cast(hi, x.dtype) if x.dtype.is_integer else float(hi))
        return cast(x, dtype)
