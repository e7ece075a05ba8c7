"""``tf.nn.safe_embedding_lookup_sparse``: a combined embedding per row of a
``SparseTensor`` of ids of any rank, robust to invalid ids and empty rows.

TF 1.15 prunes ids below 0 (and, unless the combiner is ``sum``, entries of nonpositive
weight), fills each empty row with ``default_id`` (or 0, zeroed afterwards), and calls
``embedding_lookup_sparse``. Here the same result is built directly: every kept entry's
embedding (``embedding_lookup`` with the partition strategy and ``max_norm``), times its
weight, summed per row over all ``prod(dense_shape[:-1])`` rows with
``unsorted_segment_sum``, divided by the row's summed weights (``mean``) or the root of
its summed squared weights (``sqrtn``). A row with no kept entry is the embedding of
``default_id``, or zeros. The gradient is the graph's (to the embedding rows gathered
and to the weights).
"""

from __future__ import annotations

from typing import Any

from ...framework import dtypes
from ...framework.graph import Tensor, convert_to_tensor
from ...framework.scopes import name_scope
from .. import array as array_ops
from .. import math as math_ops
from ..math.arith import div_no_nan
from .impl import embedding_lookup


def safe_embedding_lookup_sparse(
    embedding_weights: Any,
    sparse_ids: Any,
    sparse_weights: Any = None,
    combiner: str = "mean",
    default_id: int | None = None,
    name: str | None = None,
    partition_strategy: str = "div",
    max_norm: float | None = None,
) -> Tensor:
    """The ``combiner`` of the embeddings of each row of ``sparse_ids``
    (``[d0, ..., dn-1, k]``), shaped ``[d0, ..., dn-1, embedding_dim]``.

    Args:
        embedding_weights: a variable or tensor, or a list of partitions of one.
        sparse_ids: an int ``SparseTensor``; ids below 0 are ignored.
        sparse_weights: a float ``SparseTensor`` with the same indices, or None (all
            1.0); entries of weight <= 0 are ignored unless ``combiner`` is ``sum``.
        combiner: ``"sum"``, ``"mean"`` or ``"sqrtn"``.
        default_id: the id whose embedding an empty row gets; None for zeros.
        name: a name scope (default ``embedding_lookup``).
        partition_strategy: ``"div"`` or ``"mod"``, for a partitioned table.
        max_norm: clip each embedding to this L2 norm first.

    Raises:
        ValueError: no embedding weights, or an unknown combiner.
    """
    if embedding_weights is None:
        raise ValueError(f"Missing embedding_weights {embedding_weights}.")
    if isinstance(embedding_weights, (list, tuple)):
        embedding_weights = list(embedding_weights)
        if not embedding_weights:
            raise ValueError(f"Missing embedding_weights {embedding_weights}.")
    if combiner not in ("sum", "mean", "sqrtn"):
        raise ValueError("combiner must be one of 'mean', 'sqrtn' or 'sum'")
    first = embedding_weights[0] if isinstance(embedding_weights, list) else embedding_weights
    dtype = getattr(first.dtype, "base_dtype", first.dtype)
    with name_scope(name, "embedding_lookup"):
        shape = math_ops.cast(sparse_ids.dense_shape, dtypes.int64)
        indices_shape = sparse_ids.indices.shape
        rank = indices_shape.as_list()[1] if indices_shape.rank else None
        outer = shape[:-1]
        rows = math_ops.reduce_prod(outer)
        # the row of each entry: its leading indices, flattened row-major
        strides = math_ops.cumprod(outer, exclusive=True, reverse=True)
        lead = math_ops.cast(sparse_ids.indices[:, :-1], dtypes.int64)
        row = math_ops.reduce_sum(lead * strides, axis=1)
        ids = sparse_ids.values
        valid = math_ops.greater_equal(ids, math_ops.cast(0, ids.dtype))
        if sparse_weights is None:
            weights = array_ops.ones_like(ids, dtype=dtype)
            keep = valid
        else:
            weights = math_ops.cast(sparse_weights.values, dtype)
            positive = math_ops.greater(weights, math_ops.cast(0, dtype))
            keep = valid if combiner == "sum" else math_ops.logical_and(valid, positive)
        ids, weights, row = (array_ops.boolean_mask(t, keep) for t in (ids, weights, row))
        embedded = embedding_lookup(
            embedding_weights, ids, partition_strategy=partition_strategy, max_norm=max_norm
        )
        total = array_ops.unsorted_segment_sum(
            embedded * array_ops.expand_dims(weights, 1), row, rows
        )
        if combiner == "mean":
            divisor = array_ops.unsorted_segment_sum(weights, row, rows)
            total = div_no_nan(total, array_ops.expand_dims(divisor, 1))
        elif combiner == "sqrtn":
            norm = math_ops.sqrt(
                array_ops.unsorted_segment_sum(math_ops.square(weights), row, rows)
            )
            total = div_no_nan(total, array_ops.expand_dims(norm, 1))
        present = math_ops.greater(
            array_ops.unsorted_segment_sum(array_ops.ones_like(weights), row, rows),
            math_ops.cast(0, dtype),
        )
        empty = array_ops.zeros_like(total)
        if default_id is not None:
            fill = embedding_lookup(
                embedding_weights,
                convert_to_tensor([default_id], dtype=ids.dtype),
                partition_strategy=partition_strategy,
                max_norm=max_norm,
            )
            empty = empty + fill
        present = math_ops.logical_and(
            array_ops.expand_dims(present, 1), array_ops.ones_like(total, dtype=dtypes.bool)
        )
        result = math_ops.where(present, total, empty)
        out_shape = array_ops.concat(
            [math_ops.cast(outer, dtypes.int32), array_ops.shape(result)[1:]], 0
        )
        result = array_ops.reshape(result, out_shape)
        if rank is not None:
            result.set_shape([None] * (rank - 1) + result.shape.as_list()[-1:])
        return result
