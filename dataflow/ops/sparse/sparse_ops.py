"""Ops on ``SparseTensor``s (TF1's ``sparse_ops``): ``sparse_placeholder``,
``sparse_tensor_to_dense``, ``sparse_reduce_sum``, ``sparse_tensor_dense_matmul``,
``sparse_add``-free basics, and ``nn.embedding_lookup_sparse``.

They are composites over the three dense tensors of a sparse one, so gradients with
respect to its ``values`` (and the dense operands) come from gathers and segment sums.
``sparse_tensor_to_dense`` and ``sparse_reduce_sum`` materialize the dense shape.
"""

from __future__ import annotations

from typing import Any

from ...framework import dtypes
from ...framework.graph import Tensor, convert_to_tensor
from ...framework.scopes import name_scope
from ...framework.sparse_tensor import SparseTensor
from ...framework.tensor_shape import TensorShape
from .. import array as array_ops
from ..array.indexing import gather, scatter_nd, unsorted_segment_sum
from ..cast import cast
from ..constant import constant, placeholder
from ..control.group import identity
from ..math.arith import maximum, sqrt
from ..math.compare import greater, where
from ..math.reduce import reduce_sum
from ..math.segment import segment_sum
from ..nn.impl import embedding_lookup


def sparse_placeholder(dtype: Any, shape: Any = None, name: str | None = None) -> SparseTensor:
    """A ``SparseTensor`` of placeholders: feed it a ``SparseTensorValue``. A fully known
    ``shape`` makes ``dense_shape`` a constant (still feedable), as in TF1."""
    prefix = name or "Placeholder"
    dims = TensorShape(shape)
    rank = dims.rank
    if dims.is_fully_defined():
        dense_shape: Tensor = constant(dims.as_list(), dtypes.int64, name=f"{prefix}/shape")
    else:
        dense_shape = placeholder(dtypes.int64, [rank], name=f"{prefix}/shape")
    return SparseTensor(
        placeholder(dtypes.int64, [None, rank], name=f"{prefix}/indices"),
        placeholder(dtype, [None], name=f"{prefix}/values"),
        dense_shape,
    )


def sparse_tensor_to_dense(
    sp_input: Any, default_value: Any = 0, validate_indices: bool = True, name: str | None = None
) -> Tensor:
    """The dense tensor: ``values`` at ``indices``, ``default_value`` elsewhere."""
    sp = SparseTensor.from_value(sp_input)
    with name_scope(name, "SparseToDense", [sp.indices, sp.values]):
        scattered = scatter_nd(sp.indices, sp.values, sp.dense_shape)
        default = convert_to_tensor(default_value, dtype=sp.dtype)
        present = scatter_nd(
            sp.indices, array_ops.ones_like(sp.values, dtype=dtypes.int32), sp.dense_shape
        )
        return where(greater(present, 0), scattered, default * array_ops.ones_like(scattered))


def sparse_reduce_sum(
    sp_input: Any,
    axis: Any = None,
    keepdims: bool | None = None,
    reduction_axes: Any = None,
    keep_dims: bool | None = None,
) -> Tensor:
    """The sum of the present values over ``axis`` (all when ``None``)."""
    axis = reduction_axes if axis is None else axis
    keep = bool(keepdims if keepdims is not None else keep_dims)
    return reduce_sum(sparse_tensor_to_dense(sp_input), axis, keepdims=keep)


def sparse_tensor_dense_matmul(
    sp_a: Any, b: Any, adjoint_a: bool = False, adjoint_b: bool = False, name: str | None = None
) -> Tensor:
    """``sp_a @ b`` for a sparse matrix ``sp_a`` ``[m, k]`` and a dense ``b`` ``[k, n]``
    (``adjoint_*`` transpose first)."""
    sp = SparseTensor.from_value(sp_a)
    with name_scope(name, "SparseTensorDenseMatMul", [sp.indices, sp.values, b]):
        b = convert_to_tensor(b, dtype=sp.dtype)
        if adjoint_b:
            b = array_ops.transpose(b)
        elif b.op.type == "ReadVariableOp":
            # TF's op has a dense gradient for ``b``; a gather straight from a variable
            # read would give IndexedSlices (``array.indexing``), an Identity does not.
            b = identity(b)
        row, column = sp.indices[:, 0], sp.indices[:, 1]
        rows = sp.dense_shape[0]
        if adjoint_a:
            row, column, rows = column, row, sp.dense_shape[1]
        contributions = array_ops.expand_dims(sp.values, 1) * gather(b, column)
        return unsorted_segment_sum(contributions, row, cast(rows, dtypes.int32))


def embedding_lookup_sparse(
    params: Any,
    sp_ids: Any,
    sp_weights: Any,
    partition_strategy: str = "mod",
    name: str | None = None,
    combiner: str | None = None,
    max_norm: float | None = None,
) -> Tensor:
    """One embedding per row of ``sp_ids``: the rows of ``params`` its ids name,
    combined by ``combiner`` (``"mean"``, the default, ``"sum"`` or ``"sqrtn"``),
    weighted by ``sp_weights`` if given. Rows are those of ``sp_ids.indices[:, 0]``
    (sorted), as TF1 segments them.

    Raises:
        ValueError: an unknown ``combiner``.
    """
    combiner = combiner or "mean"
    if combiner not in ("mean", "sum", "sqrtn"):
        raise ValueError("combiner must be one of 'mean', 'sqrtn' or 'sum'")
    ids = SparseTensor.from_value(sp_ids)
    with name_scope(name, "embedding_lookup_sparse", [params, ids.indices, ids.values]):
        segments = cast(ids.indices[:, 0], dtypes.int32)
        rows = embedding_lookup(
            params, ids.values, partition_strategy=partition_strategy, max_norm=max_norm
        )
        if sp_weights is None:
            weights = array_ops.ones_like(ids.values, dtype=rows.dtype)
        else:
            weights = cast(SparseTensor.from_value(sp_weights).values, rows.dtype)
        weighted = rows * array_ops.expand_dims(weights, 1)
        total = segment_sum(weighted, segments)
        if combiner == "sum":
            return total
        if combiner == "mean":
            norm = segment_sum(weights, segments)
        else:
            norm = sqrt(segment_sum(weights * weights, segments))
        return total / array_ops.expand_dims(maximum(norm, 1e-30), 1)


def to_dense(
    sp_input: Any, default_value: Any = None, validate_indices: bool = True, name: str | None = None
) -> Tensor:
    """``tf.sparse.to_dense``: ``sparse_tensor_to_dense`` with ``default_value`` 0 when
    ``None``."""
    default = 0 if default_value is None else default_value
    return sparse_tensor_to_dense(sp_input, default, validate_indices, name)
