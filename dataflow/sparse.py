"""``tf.sparse``: the TF 1.15 names of the sparse ops (see ``ops/sparse/sparse_ops.py``)."""

from ._util.missing_names import missing_name_hook
from .framework.sparse_tensor import SparseTensor as SparseTensor

__getattr__ = missing_name_hook("sparse", __name__)

del missing_name_hook  # not a TF1 name: keep it out of the namespace
