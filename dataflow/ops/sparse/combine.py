"""Values of ``SparseTensor``s combined: ``sparse.add``, ``maximum``/``minimum``,
``softmax``, ``reduce_max``, ``fill_empty_rows``, ``segment_sum``/``mean``/``sqrt_n``
and ``sparse_to_dense``, as composites over the three dense tensors of a sparse one.

Combining two sparse tensors works on row-major positions (``layout.linear``): the
entries of both are concatenated and stably sorted by position, a position unlike the
one before starts a group (a cumulative sum numbers them), and segment sums reduce each
group, per operand where it matters (a missing entry counts as 0, as in TF's kernels).
The groups come out in row-major order; a sort and a few linear passes, where ``unique``
(first-seen order) would cost several times more. ``softmax`` groups entries by their
coordinates but the last the same way. Gradients with respect to ``values`` (and dense
operands) flow through the gathers and segment sums; no dense tensor of the full shape
is built except where the result is dense.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...framework import dtypes
from ...framework.graph import Tensor, convert_to_tensor
from ...framework.scopes import name_scope
from ...framework.sparse_tensor import SparseTensor
from .. import array as array_ops
from .. import math as math_ops
from ..array.tensor_scatter import (
    tensor_scatter_nd_add,
    tensor_scatter_nd_max,
    tensor_scatter_nd_update,
)
from ..cast import cast
from ..control.group import stop_gradient
from .layout import groups_of, linear, retain, static_rank, unravel


def _union(a: SparseTensor, b: SparseTensor, what: str) -> tuple:
    """``(indices, values, group, from_a)``: the distinct positions of both operands'
    entries in row-major order (as coordinates), the entries' values in that order, each
    one's group (the number of its distinct position, increasing), and which entries
    come from ``a``."""
    rank = static_rank(a, what)
    if static_rank(b, what) != rank:
        raise ValueError(f"{what} needs operands of one rank")
    shape = a.dense_shape
    positions = linear(array_ops.concat([a.indices, b.indices], 0), shape, rank)
    order, group, distinct = groups_of(positions)
    values = array_ops.gather(array_ops.concat([a.values, b.values], 0), order)
    from_a = math_ops.less(order, array_ops.size(a.values))
    return unravel(distinct, shape, rank), values, group, from_a


def add(a: Any, b: Any, threshold: Any = None, thresh: Any = None) -> Any:
    """``a + b``. Two sparse tensors give a sparse one (entries in row-major order,
    those whose sum has magnitude below ``threshold`` dropped); a sparse and a dense
    one give a dense tensor.

    Raises:
        TypeError: neither operand is sparse.
    """
    threshold = thresh if threshold is None else threshold
    a_sparse, b_sparse = isinstance(a, SparseTensor), isinstance(b, SparseTensor)
    if not (a_sparse or b_sparse):
        raise TypeError("sparse.add needs at least one SparseTensor operand")
    if not (a_sparse and b_sparse):
        sp, dense = (a, b) if a_sparse else (b, a)
        with name_scope(None, "SparseTensorDenseAdd", [sp.values, dense]):
            dense = convert_to_tensor(dense, dtype=sp.dtype)
            return tensor_scatter_nd_add(dense, sp.indices, sp.values)
    with name_scope(None, "SparseAdd", [a.values, b.values]):
        indices, ordered, group, _ = _union(a, b, "sparse.add")
        values = math_ops.segment_sum(ordered, group)
        result = SparseTensor(indices, values, a.dense_shape)
        if threshold is None or (not isinstance(threshold, Tensor) and threshold == 0):
            return result
        limit = cast(convert_to_tensor(threshold), values.dtype)
        keep = math_ops.greater_equal(math_ops.abs(values), limit)
        return retain(result, keep)


def _extreme(sp_a: Any, sp_b: Any, name: str | None, op: Any, what: str) -> SparseTensor:
    a, b = SparseTensor.from_value(sp_a), SparseTensor.from_value(sp_b)
    with name_scope(name, what, [a.values, b.values]):
        indices, values, group, from_a = _union(a, b, f"sparse.{what}")
        zeros = array_ops.zeros_like(values)
        value_a = math_ops.segment_sum(math_ops.where(from_a, values, zeros), group)
        value_b = math_ops.segment_sum(math_ops.where(from_a, zeros, values), group)
        return SparseTensor(indices, op(value_a, value_b), a.dense_shape)


def maximum(sp_a: Any, sp_b: Any, name: str | None = None) -> SparseTensor:
    """The elementwise maximum of two sparse tensors of one shape, over the union of
    their entries (a missing entry counts as 0), in row-major order."""
    return _extreme(sp_a, sp_b, name, math_ops.maximum, "maximum")


def minimum(sp_a: Any, sp_b: Any, name: str | None = None) -> SparseTensor:
    """The elementwise minimum of two sparse tensors; as ``maximum`` otherwise."""
    return _extreme(sp_a, sp_b, name, math_ops.minimum, "minimum")


def softmax(sp_input: Any, name: str | None = None) -> SparseTensor:
    """The softmax of the present entries along the last dimension (missing entries take
    no part, and stay missing), each group of entries sharing all other coordinates.

    Raises:
        ValueError: a sparse tensor of rank below 2.
    """
    sp = SparseTensor.from_value(sp_input)
    with name_scope(name, "SparseSoftmax", [sp.indices, sp.values]):
        rank = static_rank(sp, "sparse.softmax")
        if rank < 2:
            raise ValueError(f"sparse.softmax needs a SparseTensor of rank >= 2, got rank {rank}")
        groups = linear(sp.indices[:, :-1], sp.dense_shape[:-1], rank - 1)
        distinct, group = array_ops.unique(groups)
        count = array_ops.size(distinct)
        # the group's max only shifts the exponents: softmax does not depend on it
        top = stop_gradient(math_ops.unsorted_segment_max(sp.values, group, count))
        e = math_ops.exp(sp.values - array_ops.gather(top, group))
        total = array_ops.unsorted_segment_sum(e, group, count)
        return SparseTensor(sp.indices, e / array_ops.gather(total, group), sp.dense_shape)


def reduce_max(
    sp_input: Any,
    axis: Any = None,
    keepdims: bool | None = None,
    reduction_axes: Any = None,
    keep_dims: bool | None = None,
) -> Tensor:
    """The maximum of the present entries over ``axis`` (all when ``None``): missing
    entries take no part (the result may be negative); an output element over no entry
    is 0, as in TF's kernel."""
    sp = SparseTensor.from_value(sp_input)
    axis = reduction_axes if axis is None else axis
    keep = bool(keepdims if keepdims is not None else keep_dims)
    with name_scope(None, "SparseReduceMax", [sp.indices, sp.values]):
        kind = np.dtype(sp.dtype.as_numpy_dtype)
        lowest = np.finfo(kind).min if kind.kind == "f" else np.iinfo(kind).min
        floor = array_ops.fill(sp.dense_shape, convert_to_tensor(lowest, dtype=sp.dtype))
        dense = tensor_scatter_nd_max(floor, sp.indices, sp.values)
        largest = math_ops.reduce_max(dense, axis, keepdims=keep)
        ones = array_ops.ones_like(sp.values, dtype=dtypes.int32)
        present = array_ops.scatter_nd(sp.indices, ones, sp.dense_shape)
        hit = math_ops.greater(math_ops.reduce_sum(present, axis, keepdims=keep), 0)
        return math_ops.where(hit, largest, array_ops.zeros_like(largest))


def fill_empty_rows(sp_input: Any, default_value: Any, name: str | None = None) -> tuple:
    """``(sp, empty_row_indicator)``: ``sp_input`` with an entry ``[r, 0, ...]`` holding
    ``default_value`` added for each row ``r`` that has none, entries ordered by row
    (stable within a row), and a bool vector marking those rows."""
    sp = SparseTensor.from_value(sp_input)
    with name_scope(name, "SparseFillEmptyRows", [sp.indices, sp.values]):
        rank = static_rank(sp, "sparse.fill_empty_rows")
        rows = cast(sp.dense_shape[0], dtypes.int32)
        row = cast(sp.indices[:, 0], dtypes.int32)
        present = array_ops.unsorted_segment_sum(array_ops.ones_like(row), row, rows)
        empty = math_ops.equal(present, 0)
        added = math_ops.where(empty)  # [k, 1] int64: the empty rows
        corner = array_ops.zeros(
            array_ops.stack([array_ops.shape(added)[0], rank - 1]), dtypes.int64
        )
        default = convert_to_tensor(default_value, dtype=sp.dtype)
        indices = array_ops.concat([sp.indices, array_ops.concat([added, corner], 1)], 0)
        values = array_ops.concat(
            [sp.values, array_ops.fill(array_ops.shape(added)[:1], default)], 0
        )
        order = math_ops.argsort(indices[:, 0], stable=True)
        filled = SparseTensor(
            array_ops.gather(indices, order), array_ops.gather(values, order), sp.dense_shape
        )
        return filled, empty


def _segment_reduce(
    data: Any, indices: Any, segment_ids: Any, num_segments: Any, scale: Any, name: str
) -> Tensor:
    with name_scope(None, name, [data, indices, segment_ids]):
        rows = array_ops.gather(convert_to_tensor(data), indices)
        ids = convert_to_tensor(segment_ids)
        if num_segments is None:
            total = math_ops.segment_sum(rows, ids)
            counts = math_ops.segment_sum(array_ops.ones_like(ids, dtype=rows.dtype), ids)
        else:
            total = array_ops.unsorted_segment_sum(rows, ids, num_segments)
            ones = array_ops.ones_like(ids, dtype=rows.dtype)
            counts = array_ops.unsorted_segment_sum(ones, ids, num_segments)
        if scale is None:
            return total
        norm = scale(math_ops.maximum(counts, array_ops.ones_like(counts)))
        shape = array_ops.concat(
            [array_ops.shape(norm), array_ops.ones_like(array_ops.shape(rows)[1:])], 0
        )
        return total / array_ops.reshape(norm, shape)


def segment_sum(
    data: Any,
    indices: Any,
    segment_ids: Any,
    name: str | None = None,
    num_segments: Any = None,
    sparse_gradient: bool = False,
) -> Tensor:
    """``segment_sum(gather(data, indices), segment_ids)`` (``unsorted_segment_sum``
    with ``num_segments``): the rows ``indices`` names, summed per segment."""
    return _segment_reduce(data, indices, segment_ids, num_segments, None, "SparseSegmentSum")


def segment_mean(
    data: Any,
    indices: Any,
    segment_ids: Any,
    name: str | None = None,
    num_segments: Any = None,
    sparse_gradient: bool = False,
) -> Tensor:
    """As ``segment_sum``, divided by each segment's count (empty segments are 0)."""
    return _segment_reduce(
        data, indices, segment_ids, num_segments, lambda n: n, "SparseSegmentMean"
    )


def segment_sqrt_n(
    data: Any,
    indices: Any,
    segment_ids: Any,
    name: str | None = None,
    num_segments: Any = None,
    sparse_gradient: bool = False,
) -> Tensor:
    """As ``segment_sum``, divided by the square root of each segment's count."""
    return _segment_reduce(
        data, indices, segment_ids, num_segments, math_ops.sqrt, "SparseSegmentSqrtN"
    )


def sparse_to_dense(
    sparse_indices: Any,
    output_shape: Any,
    sparse_values: Any,
    default_value: Any = 0,
    validate_indices: bool = True,
    name: str | None = None,
) -> Tensor:
    """TF1's ``tf.sparse_to_dense``: a dense ``output_shape`` holding ``sparse_values``
    (a vector, or a scalar for every index) at ``sparse_indices`` (a scalar, a vector
    of rows of a 1-D output, or a matrix of coordinates), ``default_value`` elsewhere."""
    with name_scope(name, "SparseToDense", [sparse_indices, sparse_values]):
        indices = cast(convert_to_tensor(sparse_indices), dtypes.int64)
        if indices.shape.rank is not None and indices.shape.rank < 2:
            indices = array_ops.reshape(indices, [-1, 1])
        values = convert_to_tensor(sparse_values)
        values = values + array_ops.zeros(array_ops.shape(indices)[:1], values.dtype)
        shape = cast(convert_to_tensor(output_shape), dtypes.int64)
        shape = array_ops.reshape(shape, [-1])
        default = convert_to_tensor(default_value, dtype=values.dtype)
        dense = array_ops.fill(shape, default)
        return tensor_scatter_nd_update(dense, indices, values)
