"""``tf.contrib.layers.safe_embedding_lookup_sparse``: a combined embedding per row of
a ``SparseTensor`` of ids of any rank, robust to invalid ids and empty rows.

TF 1.15 prunes ids below 0 (and, unless the combiner is ``sum``, entries of
nonpositive weight), fills each empty row
with ``default_id`` (or 0, zeroed afterwards), and calls ``embedding_lookup_sparse``.
Here the same result is built directly: every kept entry's embedding (``embedding_lookup``
with the partition strategy and ``max_norm``), times its weight, summed per row over all
``prod(dense_shape[:-1])`` rows with ``unsorted_segment_sum``, divided by the row's
summed weights (``mean``) or the root of its summed squared weights (``sqrtn``). A row
with no kept entry is the embedding of ``default_id``, or zeros.
"""

from __future__ import annotations

from typing import Any

import dataflow as tf


def safe_embedding_lookup_sparse(
    embedding_weights: Any,
    sparse_ids: Any,
    sparse_weights: Any = None,
    combiner: str = "mean",
    default_id: int | None = None,
    name: str | None = None,
    partition_strategy: str = "div",
    max_norm: float | None = None,
) -> Any:
    """The ``combiner`` of the embeddings of each row of ``sparse_ids``
    (``[d0, ..., dn-1, k]``), shaped ``[d0, ..., dn-1, embedding_dim]``.

    Args:
        embedding_weights: a variable or tensor, or a list of partitions of one.
        sparse_ids: an int ``SparseTensor``; ids below 0 are ignored.
        sparse_weights: a float ``SparseTensor`` with the same indices, or None (all
            1.0); entries of weight <= 0 are ignored unless ``combiner`` is ``sum``.
        combiner: ``"sum"``, ``"mean"`` or ``"sqrtn"``.
        default_id: the id whose embedding an empty row gets; None for zeros.
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
    dtype = first.dtype.base_dtype if hasattr(first.dtype, "base_dtype") else first.dtype
    values = [sparse_ids.values] if sparse_weights is None else [sparse_weights.values]
    with tf.name_scope(name, "embedding_lookup", values):
        shape = tf.cast(sparse_ids.dense_shape, tf.int64)
        rank = sparse_ids.indices.shape.as_list()[1] if sparse_ids.indices.shape.rank else None
        outer = shape[:-1]
        rows = tf.reduce_prod(outer)
        # the row of each entry: its leading indices, flattened row-major
        strides = tf.math.cumprod(outer, exclusive=True, reverse=True)
        lead = tf.cast(sparse_ids.indices[:, :-1], tf.int64)
        row = tf.reduce_sum(lead * strides, axis=1)
        ids = sparse_ids.values
        if sparse_weights is None:
            weights = tf.ones_like(ids, dtype=dtype)
            keep = ids >= 0
        else:
            weights = tf.cast(sparse_weights.values, dtype)
            keep = ids >= 0 if combiner == "sum" else tf.logical_and(ids >= 0, weights > 0)
        ids, weights, row = (tf.boolean_mask(t, keep) for t in (ids, weights, row))
        embedded = tf.nn.embedding_lookup(
            embedding_weights, ids, partition_strategy=partition_strategy, max_norm=max_norm
        )
        total = tf.unsorted_segment_sum(embedded * weights[:, None], row, rows)
        if combiner == "mean":
            total = tf.math.divide_no_nan(
                total, tf.unsorted_segment_sum(weights, row, rows)[:, None]
            )
        elif combiner == "sqrtn":
            norm = tf.sqrt(tf.unsorted_segment_sum(tf.square(weights), row, rows))
            total = tf.math.divide_no_nan(total, norm[:, None])
        present = tf.unsorted_segment_sum(tf.ones_like(weights), row, rows) > 0
        if default_id is None:
            empty = tf.zeros_like(total)
        else:
            fill = tf.nn.embedding_lookup(
                embedding_weights,
                tf.constant([default_id], ids.dtype),
                partition_strategy=partition_strategy,
                max_norm=max_norm,
            )
            empty = tf.zeros_like(total) + fill
        result = tf.where(present, total, empty)
        out_shape = tf.concat([tf.cast(outer, tf.int32), tf.shape(result)[1:]], 0)
        result = tf.reshape(result, out_shape)
        if rank is not None:
            result.set_shape([None] * (rank - 1) + result.shape.as_list()[-1:])
        return result
