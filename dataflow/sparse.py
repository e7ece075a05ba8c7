"""``tf.sparse``: the TF 1.15 names of the sparse ops (``ops/sparse/``: ``sparse_ops``,
``layout``, ``combine``, ``grouped``)."""
# ruff: noqa: F401, I001 - this module is a public namespace: explicit re-exports only

from ._util.missing_names import missing_name_hook
from .framework.sparse_tensor import SparseTensor as SparseTensor
from .ops.queue.sparse_accumulator import (
    SparseConditionalAccumulator as SparseConditionalAccumulator,
)
from .ops.sparse.combine import (
    add as add,
    fill_empty_rows as fill_empty_rows,
    maximum as maximum,
    minimum as minimum,
    reduce_max as reduce_max,
    segment_mean as segment_mean,
    segment_sqrt_n as segment_sqrt_n,
    segment_sum as segment_sum,
    softmax as softmax,
)
from .ops.sparse.grouped import (
    bincount as bincount,
    mask as mask,
    merge as merge,
    reduce_max_sparse as reduce_max_sparse,
    reduce_sum_sparse as reduce_sum_sparse,
)
from .ops.sparse.layout import (
    concat as concat,
    expand_dims as expand_dims,
    eye as eye,
    from_dense as from_dense,
    reorder as reorder,
    reset_shape as reset_shape,
    reshape as reshape,
    retain as retain,
    slice_ as slice,
    split as split,
    to_indicator as to_indicator,
    transpose as transpose,
)
from .ops.sparse.sparse_ops import (
    sparse_placeholder as placeholder,
    sparse_reduce_sum as reduce_sum,
    sparse_tensor_dense_matmul as matmul,
    sparse_tensor_dense_matmul as sparse_dense_matmul,
    to_dense as to_dense,
)

__getattr__ = missing_name_hook("sparse", __name__)

del missing_name_hook  # not a TF1 name: keep it out of the namespace
