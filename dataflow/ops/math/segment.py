"""Segment reductions and counting: ``SegmentSum/Mean/Max/Min/Prod`` (sorted
``segment_ids``, ``ids[-1] + 1`` segments), ``UnsortedSegmentMax/Min/Prod``
(``num_segments`` given; the sum is ``array.indexing``'s), ``unsorted_segment_mean``/
``sqrt_n`` (composites), and the counters ``Bincount`` and ``HistogramFixedWidth``.

An empty segment is 0 in the sorted ops (1 in ``SegmentProd``) and the reduction's
identity in the unsorted ones (the lowest value for max, the highest for min, 1 for
prod), as in TF. Gradients
are TF's: a sum or mean hands each element its segment's gradient (a gather); max/min
split it among the elements equal to the extreme; prod divides the product by the
element, with TF's care for zeros.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...framework import dtypes, errors, registry
from ...framework.graph import Operation, Tensor, convert_to_tensor
from ...framework.tensor_shape import TensorShape
from ...framework.tensor_util import constant_value
from .. import array as array_ops
from ..array.indexing import gather, unsorted_segment_sum
from ..array.shape_helpers import int_tensor, require_index_dtype
from ..build import apply_op
from ..cast import cast
from ..rules import is_int_or_float
from .arith import maximum, minimum, multiply, realdiv, sqrt
from .compare import equal, greater, where
from .reduce import reduce_max

_IDENTITY = {"max": "lowest", "min": "highest", "prod": 1, "sum": 0}


def _fill_value(kind: str, dtype: Any) -> Any:
    identity = _IDENTITY[kind]
    if identity == "lowest":
        return np.finfo(dtype).min if np.dtype(dtype).kind == "f" else np.iinfo(dtype).min
    if identity == "highest":
        return np.finfo(dtype).max if np.dtype(dtype).kind == "f" else np.iinfo(dtype).max
    return identity


def _reduce_at(xp: Any, kind: str, out: Any, ids: Any, data: Any) -> None:
    ufunc = {"max": xp.maximum, "min": xp.minimum, "prod": xp.multiply, "sum": xp.add}[kind]
    ufunc.at(out, ids, data)


def _reduce_sorted(xp: Any, kind: str, out: Any, ids: Any, data: Any) -> None:
    """``_reduce_at`` for increasing ``ids``: one ``ufunc.reduceat`` over the runs of
    equal ids (a linear pass, several times faster than the unbuffered ``ufunc.at``),
    written to the runs' segments; segments no id names keep their fill value."""
    if not ids.size:
        return
    ufunc = {"max": xp.maximum, "min": xp.minimum, "prod": xp.multiply, "sum": xp.add}[kind]
    starts = xp.flatnonzero(xp.concatenate([xp.ones(1, dtype=bool), ids[1:] != ids[:-1]]))
    out[ids[starts]] = ufunc.reduceat(data, starts, axis=0)


def _check_data(op: Operation) -> None:
    data, ids = op.inputs[:2]
    if not is_int_or_float(data.dtype):
        raise TypeError(f"'{op.type}' needs integer or floating-point data, got {data.dtype.name}")
    require_index_dtype(ids, "segment_ids", op.type)


# --- sorted segment ops --------------------------------------------------------------------
def _infer_segment(op: Operation) -> list:
    _check_data(op)
    data, ids = op.inputs
    if ids.shape.rank not in (None, 1):
        raise ValueError(f"segment_ids should be a vector, got shape {ids.shape}")
    if data.shape.rank is None:
        return [(data.dtype, TensorShape(None))]
    return [(data.dtype, TensorShape([None] + data.shape.as_list()[1:]))]


def _segment_kernel(ctx: Any, attrs: dict) -> Any:
    xp, kind = ctx.xp, attrs["kind"]

    def segment(data: Any, ids: Any) -> Any:
        if ids.shape[0] != data.shape[0]:
            raise errors.InvalidArgumentError(
                None,
                None,
                f"segment_ids should be the same size as dimension 0 of input, "
                f"got {ids.shape[0]} and {data.shape[0]}",
            )
        if ids.size and (bool((ids[1:] < ids[:-1]).any()) or int(ids[0]) < 0):
            raise errors.InvalidArgumentError(
                None, None, "segment ids are not increasing (or are negative)"
            )
        n = int(ids[-1]) + 1 if ids.size else 0
        if kind == "mean":
            total = xp.zeros((n,) + data.shape[1:], dtype=data.dtype)
            xp.add.at(total, ids, data)
            counts = xp.bincount(ids, minlength=n).reshape((n,) + (1,) * (data.ndim - 1))
            return (total / xp.maximum(counts, 1)).astype(data.dtype)
        out = xp.full((n,) + data.shape[1:], _fill_value(kind, data.dtype), dtype=data.dtype)
        _reduce_sorted(xp, kind, out, ids, data)
        if kind in ("max", "min"):  # an empty sorted segment is 0, not the identity
            present = xp.bincount(ids, minlength=n) > 0
            out[~present] = 0
        return out

    return segment


def _segment_grad(op: Operation, grad: Tensor) -> list:
    data, ids = op.inputs
    kind = op.attrs["kind"]
    if kind == "sum":
        return [gather(grad, ids), None]
    if kind == "mean":
        counts = segment_sum(array_ops.ones_like(ids, dtype=grad.dtype), ids)
        shape = array_ops.concat(
            [array_ops.shape(counts), array_ops.ones_like(array_ops.shape(data))[1:]], 0
        )
        return [gather(grad / maximum(array_ops.reshape(counts, shape), 1), ids), None]
    if kind == "prod":
        return [_prod_grad(op, grad, array_ops.shape(op.outputs[0])[0]), None]
    return [_extreme_grad(op, grad, lambda v: segment_sum(v, ids)), None]


def _extreme_grad(op: Operation, grad: Tensor, count: Any) -> Tensor:
    """TF's rule for max/min: the gradient split among the elements equal to it."""
    data, ids = op.inputs[:2]
    safe_ids = maximum(ids, 0)
    selected = equal(data, gather(op.outputs[0], safe_ids))
    num = count(cast(selected, grad.dtype))
    shares = gather(realdiv(grad, maximum(num, 1)), safe_ids)
    return where(selected, shares, array_ops.zeros_like(shares))


for _type in ("SegmentSum", "SegmentMean", "SegmentMax", "SegmentMin", "SegmentProd"):
    registry.register(registry.OpDef(_type, _infer_segment, _segment_kernel, _segment_grad))


def _segment_op(kind: str, data: Any, segment_ids: Any, name: str | None) -> Tensor:
    ids = convert_to_tensor(segment_ids)
    return apply_op(
        f"Segment{kind.title()}", [convert_to_tensor(data), ids], {"kind": kind}, name=name
    )


def segment_sum(data: Any, segment_ids: Any, name: str | None = None) -> Tensor:
    """Sums of the rows of ``data`` per segment; ``segment_ids`` sorted, one per row."""
    return _segment_op("sum", data, segment_ids, name)


def segment_prod(data: Any, segment_ids: Any, name: str | None = None) -> Tensor:
    """Products of the rows of ``data`` per segment (1 for a segment no id names);
    ``segment_ids`` sorted, one per row."""
    return _segment_op("prod", data, segment_ids, name)


def segment_mean(data: Any, segment_ids: Any, name: str | None = None) -> Tensor:
    """Means of the rows of ``data`` per segment (0 for an empty one)."""
    return _segment_op("mean", data, segment_ids, name)


def segment_max(data: Any, segment_ids: Any, name: str | None = None) -> Tensor:
    """Maxima of the rows of ``data`` per segment (0 for an empty one)."""
    return _segment_op("max", data, segment_ids, name)


def segment_min(data: Any, segment_ids: Any, name: str | None = None) -> Tensor:
    """Minima of the rows of ``data`` per segment (0 for an empty one)."""
    return _segment_op("min", data, segment_ids, name)


# --- unsorted segment ops ------------------------------------------------------------------
def _infer_unsorted(op: Operation) -> list:
    _check_data(op)
    data, ids, num = op.inputs
    n = constant_value(num)
    if data.shape.rank is None or ids.shape.rank is None:
        return [(data.dtype, TensorShape(None))]
    inner = data.shape.as_list()[ids.shape.rank :]
    return [(data.dtype, TensorShape([None if n is None else int(n)] + inner))]


def _unsorted_kernel(ctx: Any, attrs: dict) -> Any:
    xp, kind = ctx.xp, attrs["kind"]

    def unsorted_segment(data: Any, ids: Any, num: Any) -> Any:
        n = int(num)
        if ids.size and bool((ids >= n).any()):
            raise errors.InvalidArgumentError(
                None, None, f"segment_ids {ids[ids >= n].reshape(-1)[0]} is not in [0, {n})"
            )
        if ids.size and bool((ids < 0).any()):  # TF drops negative ids
            keep = ids >= 0
            ids, data = ids[keep], data[keep]
        out = xp.full(
            (n,) + data.shape[ids.ndim :], _fill_value(kind, data.dtype), dtype=data.dtype
        )
        _reduce_at(xp, kind, out, ids, data)
        return out

    return unsorted_segment


def _unsorted_grad(op: Operation, grad: Tensor) -> list:
    data, ids, num = op.inputs
    if op.attrs["kind"] in ("max", "min"):
        return [_extreme_grad(op, grad, lambda v: unsorted_segment_sum(v, ids, num)), None, None]
    return [_prod_grad(op, grad, num), None, None]


def _prod_grad(op: Operation, grad: Tensor, num: Any) -> Tensor:
    """A product's gradient, with TF's care for zeros: one zero makes the others'
    derivative the product of the rest, two make every derivative 0."""
    data, ids = op.inputs[:2]
    zero = equal(data, array_ops.zeros_like(data))
    zeros = unsorted_segment_sum(cast(zero, dtypes.int32), ids, num)
    grad = where(greater(zeros, 1), array_ops.zeros_like(grad), grad)
    nonzero_data = where(zero, array_ops.ones_like(data), data)
    nonzero_prod = unsorted_segment_prod(nonzero_data, ids, num)
    safe_ids = maximum(ids, 0)
    product = gather(op.outputs[0], safe_ids)
    derivative = where(zero, gather(nonzero_prod, safe_ids), realdiv(product, nonzero_data))
    return multiply(gather(grad, safe_ids), derivative)


for _type in ("UnsortedSegmentMax", "UnsortedSegmentMin", "UnsortedSegmentProd"):
    registry.register(registry.OpDef(_type, _infer_unsorted, _unsorted_kernel, _unsorted_grad))


def _unsorted_op(kind: str, data: Any, ids: Any, num: Any, name: str | None) -> Tensor:
    inputs = [convert_to_tensor(data), convert_to_tensor(ids), int_tensor(num)]
    return apply_op(f"UnsortedSegment{kind.title()}", inputs, {"kind": kind}, name=name)


def unsorted_segment_max(
    data: Any, segment_ids: Any, num_segments: Any, name: str | None = None
) -> Tensor:
    """Maxima per segment (the dtype's lowest value for an empty one)."""
    return _unsorted_op("max", data, segment_ids, num_segments, name)


def unsorted_segment_min(
    data: Any, segment_ids: Any, num_segments: Any, name: str | None = None
) -> Tensor:
    """Minima per segment (the dtype's highest value for an empty one)."""
    return _unsorted_op("min", data, segment_ids, num_segments, name)


def unsorted_segment_prod(
    data: Any, segment_ids: Any, num_segments: Any, name: str | None = None
) -> Tensor:
    """Products per segment (1 for an empty one)."""
    return _unsorted_op("prod", data, segment_ids, num_segments, name)


def _segment_counts(data: Tensor, ids: Tensor, num: Any) -> Tensor:
    """How many elements each segment has, shaped to broadcast against its sums."""
    counts = unsorted_segment_sum(array_ops.ones_like(ids, dtype=data.dtype), ids, num)
    extra = array_ops.ones_like(array_ops.shape(data))[array_ops.rank(ids) :]
    return maximum(
        array_ops.reshape(counts, array_ops.concat([array_ops.shape(counts), extra], 0)), 1
    )


def unsorted_segment_mean(
    data: Any, segment_ids: Any, num_segments: Any, name: str | None = None
) -> Tensor:
    """Means per segment (0 for an empty one)."""
    data, ids = convert_to_tensor(data), convert_to_tensor(segment_ids)
    total = unsorted_segment_sum(data, ids, num_segments)
    return realdiv(total, _segment_counts(data, ids, num_segments), name=name)


def unsorted_segment_sqrt_n(
    data: Any, segment_ids: Any, num_segments: Any, name: str | None = None
) -> Tensor:
    """Sums per segment divided by the square root of the segment's size."""
    data, ids = convert_to_tensor(data), convert_to_tensor(segment_ids)
    total = unsorted_segment_sum(data, ids, num_segments)
    return realdiv(total, sqrt(_segment_counts(data, ids, num_segments)), name=name)


# --- counting ------------------------------------------------------------------------------
def _infer_bincount(op: Operation) -> list:
    arr = op.inputs[0]
    if arr.dtype != dtypes.int32:
        raise TypeError(f"bincount takes int32 values, got {arr.dtype.name}")
    return [(op.attrs["dtype"], TensorShape([None]))]


def _bincount_kernel(ctx: Any, attrs: dict) -> Any:
    xp, out_type = ctx.xp, attrs["dtype"].as_numpy_dtype

    def bincount(arr: Any, size: Any, weights: Any) -> Any:
        flat = arr.reshape(-1)
        if flat.size and int(flat.min()) < 0:
            raise errors.InvalidArgumentError(None, None, "bincount: values must be non-negative")
        n = int(size)
        keep = flat < n
        w = weights.reshape(-1)[keep] if weights.size else None
        return xp.bincount(flat[keep], weights=w, minlength=n)[:n].astype(out_type)

    return bincount


registry.register(
    registry.OpDef("Bincount", _infer_bincount, _bincount_kernel, registry.NOT_DIFFERENTIABLE)
)


def bincount(
    arr: Any,
    weights: Any = None,
    minlength: Any = None,
    maxlength: Any = None,
    dtype: Any = dtypes.int32,
    name: str | None = None,
) -> Tensor:
    """How often each value ``0, 1, ...`` occurs in ``arr`` (or the sum of its
    ``weights``): ``max(arr) + 1`` counts, at least ``minlength``, at most ``maxlength``."""
    arr = convert_to_tensor(arr, dtype=dtypes.int32)
    size = maximum(reduce_max(arr) + 1, 0) if _has_elements(arr) else int_tensor(0)
    if minlength is not None:
        size = maximum(size, int_tensor(minlength))
    if maxlength is not None:
        size = minimum(size, int_tensor(maxlength))
    out_type = dtypes.as_dtype(dtype)
    w = (
        convert_to_tensor(weights, dtype=out_type)
        if weights is not None
        else array_ops.zeros([0], out_type)
    )
    return apply_op("Bincount", [arr, size, w], {"dtype": out_type}, name=name)


def _has_elements(t: Tensor) -> bool:
    size = t.shape.num_elements()
    return size is None or size > 0


def _infer_histogram(op: Operation) -> list:
    bins = constant_value(op.inputs[2])
    return [(op.attrs["dtype"], TensorShape([None if bins is None else int(bins)]))]


def _histogram_kernel(ctx: Any, attrs: dict) -> Any:
    xp, out_type = ctx.xp, attrs["dtype"].as_numpy_dtype

    def histogram_fixed_width(values: Any, value_range: Any, nbins: Any) -> Any:
        low, high = float(value_range[0]), float(value_range[1])
        n = int(nbins)
        # TF's rule: bins of width (high - low) / n; values outside go to the end bins.
        scaled = (values.reshape(-1).astype(xp.float64) - low) / (high - low) * n
        index = xp.clip(xp.floor(scaled), 0, n - 1).astype(xp.int64)
        return xp.bincount(index, minlength=n).astype(out_type)

    return histogram_fixed_width


registry.register(
    registry.OpDef(
        "HistogramFixedWidth", _infer_histogram, _histogram_kernel, registry.NOT_DIFFERENTIABLE
    )
)


def histogram_fixed_width(
    values: Any,
    value_range: Any,
    nbins: int = 100,
    dtype: Any = dtypes.int32,
    name: str | None = None,
) -> Tensor:
    """Counts of ``values`` in ``nbins`` equal bins spanning ``value_range``; values
    below or above the range count in the first or last bin."""
    values = convert_to_tensor(values)
    value_range = convert_to_tensor(value_range, dtype=values.dtype)
    attrs = {"dtype": dtypes.as_dtype(dtype)}
    return apply_op(
        "HistogramFixedWidth", [values, value_range, int_tensor(nbins)], attrs, name=name
    )
