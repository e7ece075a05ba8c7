"""Small TF1 top-level names with one obvious meaning here (issue 32): the unsigned
dtypes, the complex casts, ``get_logger``, ``convert_to_tensor_or_sparse_tensor`` and the
``tf.nest`` namespace; explicit re-exports only, taken whole by ``dataflow/__init__.py``."""
# ruff: noqa: I001 - this module is a public namespace: explicit re-exports only

from ..framework.dtypes import uint16 as uint16
from ..framework.dtypes import uint32 as uint32
from ..framework.dtypes import uint64 as uint64
from ..framework.sparse_tensor import (
    convert_to_tensor_or_sparse_tensor as convert_to_tensor_or_sparse_tensor,
)
from ..logging import get_logger as get_logger
from ..ops.cast import to_complex128 as to_complex128
from ..ops.cast import to_complex64 as to_complex64
from . import nest as nest

__all__ = [
    "convert_to_tensor_or_sparse_tensor",
    "get_logger",
    "nest",
    "to_complex128",
    "to_complex64",
    "uint16",
    "uint32",
    "uint64",
]
