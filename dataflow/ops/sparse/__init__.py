"""Ops on ``SparseTensor``s (``tf.sparse``), composites over their three dense tensors:
``sparse_ops`` (placeholders, to_dense, reduce_sum, sparse-dense matmul, embedding
lookups), ``layout`` (where entries are: reorder, reshape, transpose, slice, split,
concat, from_dense, ...), ``combine`` (values combined: add, maximum/minimum, softmax,
reduce_max, fill_empty_rows, segment reductions) and ``grouped`` (sparse reductions,
merge, mask)."""
