"""Sparse results grouped by coordinates: ``sparse.reduce_sum_sparse``/
``reduce_max_sparse``, ``sparse.merge`` and ``sparse.mask`` (of ``IndexedSlices``), as
composites over the dense tensors of a sparse one.

A reduction keeps the coordinates outside ``axis``: their row-major position
(``layout.linear``) numbers each entry's group through ``unique``, segment sums (or
maxima) reduce the present values of each group, and a stable argsort of the distinct
positions gives the output in row-major order. Only groups holding an entry appear, as
in TF's kernels. ``mask`` finds which indices are masked the same way: ``unique`` over the
mask's indices followed by the slices', a segment count of the mask's per slot.
"""

from __future__ import annotations

from typing import Any

from ...framework import dtypes
from ...framework.graph import convert_to_tensor
from ...framework.indexed_slices import IndexedSlices
from ...framework.scopes import name_scope
from ...framework.sparse_tensor import SparseTensor
from .. import array as array_ops
from .. import math as math_ops
from ..cast import cast
from ..constant import constant
from .layout import groups_of, linear, sorted_sparse, static_rank, unravel


def _reduce_sparse(
    sp_input: Any, axis: Any, keepdims: Any, reduction_axes: Any, keep_dims: Any, kind: str
) -> SparseTensor:
    sp = SparseTensor.from_value(sp_input)
    axis = reduction_axes if axis is None else axis
    keep = bool(keepdims if keepdims is not None else keep_dims)
    with name_scope(None, f"SparseReduce{kind}Sparse", [sp.indices, sp.values]):
        rank = static_rank(sp, f"sparse.reduce_{kind.lower()}_sparse")
        axes = list(range(rank)) if axis is None else [axis] if isinstance(axis, int) else axis
        reduced = {int(a) + rank if int(a) < 0 else int(a) for a in axes}
        if any(not 0 <= a < rank for a in reduced):
            raise ValueError(f"axis {axis} is out of range for a SparseTensor of rank {rank}")
        kept = [d for d in range(rank) if d not in reduced]
        kept_t = constant(kept, dtypes.int32)
        kept_shape = array_ops.gather(sp.dense_shape, kept_t)
        if kept:
            position = linear(array_ops.gather(sp.indices, kept_t, axis=1), kept_shape, len(kept))
        else:
            position = array_ops.zeros_like(sp.indices[:, 0])
        distinct, group = array_ops.unique(position)
        count = array_ops.size(distinct)
        if kind == "Sum":
            totals = array_ops.unsorted_segment_sum(sp.values, group, count)
        else:
            totals = math_ops.unsorted_segment_max(sp.values, group, count)
        order = math_ops.argsort(distinct, stable=True)
        at = array_ops.gather(distinct, order)
        values = array_ops.gather(totals, order)
        if not keep and not kept:  # a scalar: one entry at no coordinates
            no_columns = array_ops.zeros(array_ops.stack([array_ops.size(at), 0]), dtypes.int64)
            return SparseTensor(no_columns, values, kept_shape)
        coordinates = unravel(at, kept_shape, len(kept)) if kept else None
        if not keep:
            return SparseTensor(coordinates, values, kept_shape)
        columns = array_ops.unstack(coordinates, len(kept), axis=1) if kept else []
        zeros, one = array_ops.zeros_like(at), constant(1, dtypes.int64)
        pieces = iter(columns)
        full = [zeros if d in reduced else next(pieces) for d in range(rank)]
        shape = array_ops.stack([one if d in reduced else sp.dense_shape[d] for d in range(rank)])
        return SparseTensor(array_ops.stack(full, axis=1), values, shape)


def reduce_sum_sparse(
    sp_input: Any,
    axis: Any = None,
    keepdims: bool | None = None,
    reduction_axes: Any = None,
    keep_dims: bool | None = None,
) -> SparseTensor:
    """The sum of the present entries over ``axis`` (all when ``None``), as a sparse
    tensor holding the output elements that sum at least one entry, in row-major order.

    Raises:
        ValueError: an axis outside the rank.
    """
    return _reduce_sparse(sp_input, axis, keepdims, reduction_axes, keep_dims, "Sum")


def reduce_max_sparse(
    sp_input: Any,
    axis: Any = None,
    keepdims: bool | None = None,
    reduction_axes: Any = None,
    keep_dims: bool | None = None,
) -> SparseTensor:
    """The maximum of the present entries over ``axis``; as ``reduce_sum_sparse``
    otherwise (missing entries take no part)."""
    return _reduce_sparse(sp_input, axis, keepdims, reduction_axes, keep_dims, "Max")


def merge(
    sp_ids: Any,
    sp_values: Any,
    vocab_size: Any,
    name: str | None = None,
    already_sorted: bool = False,
) -> SparseTensor:
    """TF1's ``sparse_merge``: a sparse tensor whose last coordinate is the id of
    ``sp_ids`` (``values`` at those coordinates from ``sp_values``), of last dimension
    ``vocab_size``, in row-major order unless ``already_sorted``.

    Raises:
        TypeError: ids that are not int32 or int64.
    """
    ids, weights = SparseTensor.from_value(sp_ids), SparseTensor.from_value(sp_values)
    if ids.dtype not in (dtypes.int32, dtypes.int64):
        raise TypeError(f"sp_ids.values must be int32 or int64, got {ids.dtype.name}")
    with name_scope(name, "SparseMerge", [ids.indices, ids.values, weights.values]):
        column = array_ops.expand_dims(cast(ids.values, dtypes.int64), 1)
        indices = array_ops.concat([ids.indices[:, :-1], column], 1)
        size = array_ops.reshape(cast(convert_to_tensor(vocab_size), dtypes.int64), [1])
        shape = array_ops.concat([ids.dense_shape[:-1], size], 0)
        if already_sorted:
            return SparseTensor(indices, weights.values, shape)
        return sorted_sparse(indices, weights.values, shape, static_rank(ids, "sparse.merge"))


def mask(a: IndexedSlices, mask_indices: Any, name: str | None = None) -> IndexedSlices:
    """The slices of ``a`` whose index is not in ``mask_indices``, in their order."""
    with name_scope(name, "sparse_mask", [a.indices, a.values, mask_indices]):
        masked = convert_to_tensor(mask_indices, dtype=a.indices.dtype)
        both = array_ops.concat([array_ops.reshape(masked, [-1]), a.indices], 0)
        distinct, slot = array_ops.unique(both)
        count = array_ops.size(masked)
        hits = array_ops.unsorted_segment_sum(
            array_ops.ones_like(slot[:count]), slot[:count], array_ops.size(distinct)
        )
        keep = math_ops.equal(array_ops.gather(hits, slot[count:]), 0)
        where = array_ops.reshape(math_ops.where(keep), [-1])
        return IndexedSlices(
            array_ops.gather(a.values, where), array_ops.gather(a.indices, where), a.dense_shape
        )


def bincount(
    values: Any,
    weights: Any = None,
    axis: int | None = 0,
    minlength: Any = None,
    maxlength: Any = None,
    binary_output: bool = False,
    name: str | None = None,
) -> SparseTensor:
    """How often each non-negative integer occurs in ``values`` (dense or sparse), as a
    sparse tensor holding the present counts: over everything (``axis=0``, a vector of
    length ``max(values) + 1``, at least ``minlength``, at most ``maxlength``, values
    beyond it dropped), or per row of a matrix (``axis=-1``). ``weights`` (of ``values``'
    structure) are summed instead of ones; ``binary_output`` gives 1 for present values.
    Counts have ``values``' dtype, weighted sums ``weights``'.

    Raises:
        ValueError: an ``axis`` other than 0 or -1, or ``axis=-1`` on a tensor not of
            rank 2.
    """
    if axis not in (0, -1, None):
        raise ValueError(f"sparse.bincount supports axis 0 and -1, got {axis}")
    with name_scope(name, "count", [values, weights]):
        rank: int | None
        if isinstance(values, SparseTensor):
            ids, rank = values.values, static_rank(values, "sparse.bincount")
            rows, num_rows = values.indices[:, 0], values.dense_shape[0]
            weight = SparseTensor.from_value(weights).values if weights is not None else None
        else:
            dense = convert_to_tensor(values)
            rank = dense.shape.rank
            ids = array_ops.reshape(dense, [-1])
            shape = array_ops.shape(dense, out_type=dtypes.int64)
            num_rows = shape[0]
            width = shape[-1] if rank else constant(1, dtypes.int64)
            rows = array_ops.range_(array_ops.size(ids, out_type=dtypes.int64)) // width
            weight = None if weights is None else array_ops.reshape(weights, [-1])
        by_row = axis == -1 and rank != 1
        if by_row and rank != 2:
            raise ValueError(f"sparse.bincount with axis=-1 needs rank 2 values, got rank {rank}")
        key = cast(ids, dtypes.int64)
        largest = math_ops.reduce_max(array_ops.concat([key, constant([-1], dtypes.int64)], 0))
        size = largest + 1
        if minlength is not None:
            size = math_ops.maximum(size, cast(convert_to_tensor(minlength), dtypes.int64))
        if maxlength is not None:
            size = math_ops.minimum(size, cast(convert_to_tensor(maxlength), dtypes.int64))
            kept = array_ops.reshape(math_ops.where(math_ops.less(key, size)), [-1])
            key, rows = array_ops.gather(key, kept), array_ops.gather(rows, kept)
            weight = None if weight is None else array_ops.gather(weight, kept)
        if by_row:
            key = rows * size + key
        order, group, distinct = groups_of(key)
        if binary_output:
            dtype = ids.dtype if weight is None else weight.dtype
            counts = array_ops.ones_like(distinct, dtype=dtype)
        elif weight is None:
            counts = math_ops.segment_sum(array_ops.ones_like(key, dtype=ids.dtype), group)
        else:
            counts = math_ops.segment_sum(array_ops.gather(weight, order), group)
        if by_row:
            return SparseTensor(
                array_ops.stack([distinct // size, distinct % size], axis=1),
                counts,
                array_ops.stack([num_rows, size]),
            )
        return SparseTensor(
            array_ops.expand_dims(distinct, 1), counts, array_ops.reshape(size, [1])
        )
