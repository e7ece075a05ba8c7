"""Ops on ``SparseTensor``s (``tf.sparse``)."""
