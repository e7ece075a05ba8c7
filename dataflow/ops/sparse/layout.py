"""Where a ``SparseTensor``'s entries are: ``sparse.reorder``, ``reshape``, ``transpose``,
``expand_dims``, ``reset_shape``, ``retain``, ``slice``, ``split``, ``concat``,
``from_dense``, ``eye`` and ``to_indicator``, as composites over the three dense tensors
of a sparse one (as TF1 composes the Python-level ones).

The approach: an entry's coordinates ``indices[i]`` and ``dense_shape`` give its
row-major linear position ``linear(i) = (..(i0 * d1 + i1) * d2 + ..)`` (int64), and back
(``unravel``). Sorting entries is a stable argsort of the positions, so entries at the
same coordinates keep their order; reshaping is unravelling the same positions with
another shape. The loops run over the rank, which must be known at build time (the
width of ``indices`` or the length of ``dense_shape``), never over the entries.
Gradients with respect to ``values`` flow through the gathers.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...framework import dtypes
from ...framework.graph import Tensor, convert_to_tensor
from ...framework.scopes import name_scope
from ...framework.sparse_tensor import SparseTensor
from ...framework.tensor_util import constant_value
from .. import array as array_ops
from .. import math as math_ops
from ..cast import cast
from ..constant import constant


def static_rank(sp: SparseTensor, what: str) -> int:
    """The rank of ``sp``, from the width of ``indices`` or the length of ``dense_shape``.

    Raises:
        ValueError: neither is known at build time.
    """
    for dims in (sp.indices.shape.as_tuple(), sp.dense_shape.shape.as_tuple()):
        if dims is not None and dims[-1] is not None:
            return int(dims[-1])
    raise ValueError(f"{what} needs a SparseTensor of known rank")


def linear(indices: Tensor, shape: Tensor, rank: int) -> Tensor:
    """The row-major position (int64) of each row of ``indices`` in a ``shape`` array."""
    position = indices[:, 0]
    for d in range(1, rank):
        position = position * shape[d] + indices[:, d]
    return position


def unravel(position: Tensor, shape: Tensor, rank: int) -> Tensor:
    """The ``[n, rank]`` coordinates of row-major ``position``s in a ``shape`` array."""
    columns = []
    for d in reversed(range(rank)):
        columns.append(position % shape[d] if d else position)
        position = position // shape[d]
    return array_ops.stack(columns[::-1], axis=1)


def groups_of(keys: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    """``(order, group, distinct)`` for non-negative int64 ``keys``: the stable order
    sorting them, each sorted key's group (increasing from 0; a key unlike the one before
    starts a group) and the distinct keys, ascending."""
    order = math_ops.argsort(keys, stable=True)
    ordered = array_ops.gather(keys, order)
    # keys are >= 0, so -1 before the first makes it start a group (and no keys, none)
    before = array_ops.concat([constant([-1], dtypes.int64), ordered[:-1]], 0)
    fresh = math_ops.not_equal(ordered, before)
    group = math_ops.cumsum(cast(fresh, dtypes.int32)) - 1
    return order, group, array_ops.boolean_mask(ordered, fresh)


def sorted_sparse(indices: Tensor, values: Tensor, shape: Tensor, rank: int) -> SparseTensor:
    """The entries in row-major order (a stable sort: equal coordinates keep theirs)."""
    order = math_ops.argsort(linear(indices, shape, rank), stable=True)
    return SparseTensor(array_ops.gather(indices, order), array_ops.gather(values, order), shape)


def reorder(sp_input: Any, name: str | None = None) -> SparseTensor:
    """The same sparse tensor with its entries in row-major (canonical) order."""
    sp = SparseTensor.from_value(sp_input)
    with name_scope(name, "SparseReorder", [sp.indices, sp.values]):
        return sorted_sparse(sp.indices, sp.values, sp.dense_shape, static_rank(sp, "reorder"))


def _as_shape_vector(shape: Any) -> Tensor:
    return cast(convert_to_tensor(shape), dtypes.int64)


def reshape(sp_input: Any, shape: Any, name: str | None = None) -> SparseTensor:
    """The same entries in a sparse tensor of ``shape`` (one ``-1`` is inferred), in the
    same order: each keeps its row-major position.

    Raises:
        ValueError: ``shape``'s rank is unknown, or both shapes are known and hold
            different numbers of elements.
    """
    sp = SparseTensor.from_value(sp_input)
    with name_scope(name, "SparseReshape", [sp.indices, sp.values]):
        new = _as_shape_vector(shape)
        dims = new.shape.as_tuple()
        if dims is None or dims[0] is None:
            raise ValueError("sparse.reshape needs a shape of known length")
        known, wanted = sp.shape, constant_value(new)
        if known.is_fully_defined() and wanted is not None and -1 not in list(wanted):
            have, want = int(np.prod(np.array(known.as_list(), np.int64))), int(np.prod(wanted))
            if have != want:
                raise ValueError(
                    f"Cannot reshape a tensor with {have} elements to shape "
                    f"{list(wanted)} ({want} elements)"
                )
        total = math_ops.reduce_prod(sp.dense_shape)
        unknown = math_ops.equal(new, -1)
        rest = math_ops.reduce_prod(math_ops.where(unknown, array_ops.ones_like(new), new))
        out_shape = math_ops.where(
            unknown, array_ops.fill(array_ops.shape(new), total // rest), new
        )
        position = linear(sp.indices, sp.dense_shape, static_rank(sp, "sparse.reshape"))
        return SparseTensor(unravel(position, out_shape, int(dims[0])), sp.values, out_shape)


def transpose(sp_input: Any, perm: Any = None, name: str | None = None) -> SparseTensor:
    """The sparse tensor with its dimensions permuted by ``perm`` (reversed by default),
    entries in row-major order."""
    sp = SparseTensor.from_value(sp_input)
    with name_scope(name, "SparseTranspose", [sp.indices, sp.values]):
        rank = static_rank(sp, "sparse.transpose")
        perm = list(range(rank))[::-1] if perm is None else perm
        perm_t = cast(convert_to_tensor(perm), dtypes.int32)
        indices = array_ops.gather(sp.indices, perm_t, axis=1)
        shape = array_ops.gather(sp.dense_shape, perm_t)
        return sorted_sparse(indices, sp.values, shape, rank)


def expand_dims(sp_input: Any, axis: Any = None, name: str | None = None) -> SparseTensor:
    """The sparse tensor with a dimension of 1 inserted at ``axis`` (``-1``: last).

    Raises:
        ValueError: ``axis`` outside ``[-rank - 1, rank]``.
    """
    sp = SparseTensor.from_value(sp_input)
    with name_scope(name, "ExpandDims", [sp.indices, sp.values]):
        rank = static_rank(sp, "sparse.expand_dims")
        axis = int(-1 if axis is None else axis)
        if not -rank - 1 <= axis <= rank:
            raise ValueError(f"axis {axis} is outside [{-rank - 1}, {rank}] for sparse.expand_dims")
        axis = axis + rank + 1 if axis < 0 else axis
        zeros = array_ops.zeros_like(sp.indices[:, :1])
        indices = array_ops.concat([sp.indices[:, :axis], zeros, sp.indices[:, axis:]], 1)
        one = constant([1], dtypes.int64)
        shape = array_ops.concat([sp.dense_shape[:axis], one, sp.dense_shape[axis:]], 0)
        return SparseTensor(indices, sp.values, shape)


def reset_shape(sp_input: Any, new_shape: Any = None) -> SparseTensor:
    """The same entries with ``dense_shape`` set to ``new_shape``, or (``None``) to the
    tightest shape holding them: ``max(indices, axis=0) + 1``.

    Raises:
        ValueError: ``new_shape`` of another rank, or smaller than a known shape.
    """
    sp = SparseTensor.from_value(sp_input)
    with name_scope(None, "SparseReorder", [sp.indices, sp.values]):
        if new_shape is None:
            return SparseTensor(sp.indices, sp.values, math_ops.reduce_max(sp.indices, axis=0) + 1)
        shape = _as_shape_vector(new_shape)
        wanted, known = constant_value(shape), sp.shape
        if wanted is not None and known.rank is not None:
            if len(wanted) != known.rank:
                raise ValueError(
                    f"new_shape has rank {len(wanted)}, but the SparseTensor has rank {known.rank}"
                )
            if any(k is not None and w < k for w, k in zip(wanted, known.as_list())):
                raise ValueError(
                    f"new_shape {list(wanted)} is smaller than the SparseTensor's shape {known}"
                )
        return SparseTensor(sp.indices, sp.values, shape)


def retain(sp_input: Any, to_retain: Any) -> SparseTensor:
    """The entries for which the boolean vector ``to_retain`` is true.

    Raises:
        ValueError: ``to_retain`` is not a vector as long as ``values`` (when known).
    """
    sp = SparseTensor.from_value(sp_input)
    keep = convert_to_tensor(to_retain, dtype=dtypes.bool)
    if keep.shape.rank not in (None, 1) or not keep.shape.is_compatible_with(sp.values.shape):
        raise ValueError(
            f"to_retain of shape {keep.shape} must be a vector as long as the values "
            f"({sp.values.shape})"
        )
    where = array_ops.reshape(math_ops.where(keep), [-1])
    return SparseTensor(
        array_ops.gather(sp.indices, where), array_ops.gather(sp.values, where), sp.dense_shape
    )


def slice_(sp_input: Any, start: Any, size: Any, name: str | None = None) -> SparseTensor:
    """The entries inside the box ``[start, start + size)``, moved to start at 0, in a
    sparse tensor of shape ``min(start + size, dense_shape) - start`` (at least 0)."""
    sp = SparseTensor.from_value(sp_input)
    with name_scope(name, "SparseSlice", [sp.indices, sp.values]):
        start_t, size_t = _as_shape_vector(start), _as_shape_vector(size)
        end = math_ops.minimum(start_t + size_t, sp.dense_shape)
        inside = math_ops.logical_and(
            math_ops.greater_equal(sp.indices, start_t), math_ops.less(sp.indices, end)
        )
        kept = retain(sp, math_ops.reduce_all(inside, axis=1))
        shape = math_ops.maximum(end - start_t, array_ops.zeros_like(end))
        return SparseTensor(kept.indices - start_t, kept.values, shape)


def split(
    keyword_required: Any = None,
    sp_input: Any = None,
    num_split: Any = None,
    axis: Any = None,
    name: str | None = None,
    split_dim: Any = None,
) -> list[SparseTensor]:
    """``num_split`` sparse tensors along ``axis``: the first ``dim % num_split`` parts
    one longer than the others, as TF splits them.

    Raises:
        ValueError: arguments given by position, or ``num_split``/``axis`` missing.
    """
    if keyword_required is not None:
        raise ValueError("Keyword arguments are required for this function.")
    axis = split_dim if axis is None else axis
    if sp_input is None or num_split is None or axis is None:
        raise ValueError("sparse.split needs sp_input, num_split and axis")
    sp = SparseTensor.from_value(sp_input)
    with name_scope(name, "SparseSplit", [sp.indices, sp.values]):
        rank = static_rank(sp, "sparse.split")
        axis = int(axis) + rank if int(axis) < 0 else int(axis)
        n = int(num_split)
        dim = sp.dense_shape[axis]
        base, extra = dim // n, dim % n
        axis_hot = constant(np.eye(rank, dtype=np.int64)[axis])
        parts = []
        for i in range(n):
            begin = i * base + math_ops.minimum(constant(i, dtypes.int64), extra)
            length = base + cast(math_ops.less(constant(i, dtypes.int64), extra), dtypes.int64)
            start = axis_hot * begin
            size = sp.dense_shape + axis_hot * (length - dim)
            parts.append(slice_(sp, start, size))
        return parts


def concat(
    axis: Any,
    sp_inputs: Any,
    name: str | None = None,
    expand_nonconcat_dim: bool = False,
    concat_dim: Any = None,
    expand_nonconcat_dims: Any = None,
) -> SparseTensor:
    """The sparse tensors joined along ``axis``, entries in row-major order. The other
    dimensions must agree, or (``expand_nonconcat_dim``) take their largest size.

    Raises:
        ValueError: no inputs, or inputs of different ranks.
    """
    axis = concat_dim if axis is None else axis
    expand = expand_nonconcat_dims if expand_nonconcat_dims is not None else expand_nonconcat_dim
    sps = [SparseTensor.from_value(s) for s in sp_inputs]
    if not sps:
        raise ValueError("sparse.concat needs at least one SparseTensor")
    with name_scope(name, "SparseConcat", [s.values for s in sps]):
        ranks = {static_rank(s, "sparse.concat") for s in sps}
        if len(ranks) != 1:
            raise ValueError(f"sparse.concat needs inputs of one rank, got ranks {sorted(ranks)}")
        rank = ranks.pop()
        axis = int(axis) + rank if int(axis) < 0 else int(axis)
        axis_hot = constant(np.eye(rank, dtype=np.int64)[axis])
        indices, offset = [], constant(0, dtypes.int64)
        for s in sps:
            indices.append(s.indices + axis_hot * offset)
            offset = offset + s.dense_shape[axis]
        shape = sps[0].dense_shape
        if expand:
            for s in sps[1:]:
                shape = math_ops.maximum(shape, s.dense_shape)
        shape = shape + axis_hot * (offset - shape[axis])
        values = array_ops.concat([s.values for s in sps], 0)
        return sorted_sparse(array_ops.concat(indices, 0), values, shape, rank)


def from_dense(tensor: Any, name: str | None = None) -> SparseTensor:
    """The nonzero (non-empty, for strings) entries of ``tensor``, in row-major order."""
    with name_scope(name, "dense_to_sparse", [tensor]):
        dense = convert_to_tensor(tensor)
        indices = math_ops.where(math_ops.not_equal(dense, array_ops.zeros_like(dense)))
        return SparseTensor(
            indices,
            array_ops.gather_nd(dense, indices),
            array_ops.shape(dense, out_type=dtypes.int64),
        )


def eye(
    num_rows: Any, num_columns: Any = None, dtype: Any = dtypes.float32, name: str | None = None
) -> SparseTensor:
    """The ``[num_rows, num_columns]`` identity as a sparse tensor (ones on the diagonal)."""
    with name_scope(name, "eye", [num_rows, num_columns]):
        rows = cast(convert_to_tensor(num_rows), dtypes.int64)
        columns = (
            rows if num_columns is None else cast(convert_to_tensor(num_columns), dtypes.int64)
        )
        diagonal = array_ops.range_(math_ops.minimum(rows, columns))
        return SparseTensor(
            array_ops.stack([diagonal, diagonal], axis=1),
            array_ops.ones(array_ops.shape(diagonal), dtype=dtypes.as_dtype(dtype)),
            array_ops.stack([rows, columns]),
        )


def to_indicator(sp_input: Any, vocab_size: Any, name: str | None = None) -> Tensor:
    """A dense bool ``dense_shape[:-1] + [vocab_size]``: true at ``[..., id]`` when the
    row ``[...]`` of ``sp_input`` holds the id ``id``.

    Raises:
        TypeError: ``values`` are not int32 or int64.
    """
    sp = SparseTensor.from_value(sp_input)
    if sp.dtype not in (dtypes.int32, dtypes.int64):
        raise TypeError(f"sparse.to_indicator needs int32 or int64 values, got {sp.dtype.name}")
    with name_scope(name, "SparseToIndicator", [sp.indices, sp.values]):
        ids = array_ops.expand_dims(cast(sp.values, dtypes.int64), 1)
        indices = array_ops.concat([sp.indices[:, :-1], ids], 1)
        vocab = array_ops.reshape(cast(convert_to_tensor(vocab_size), dtypes.int64), [1])
        shape = array_ops.concat([sp.dense_shape[:-1], vocab], 0)
        hits = array_ops.scatter_nd(indices, array_ops.ones_like(sp.values, dtypes.int32), shape)
        return math_ops.greater(hits, 0)
