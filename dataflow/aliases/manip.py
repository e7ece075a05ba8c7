"""``tf.manip``: TF 1.15's tensor manipulation aliases (``ops/array/``)."""
# ruff: noqa: I001 - this module is a public namespace: explicit re-exports only

from .._util.missing_names import missing_name_hook
from ..ops.array import (
    batch_to_space_nd as batch_to_space_nd,
    gather_nd as gather_nd,
    reshape as reshape,
    reverse as reverse,
    roll as roll,
    scatter_nd as scatter_nd,
    space_to_batch_nd as space_to_batch_nd,
    tile as tile,
)

__getattr__ = missing_name_hook("manip", __name__)

del missing_name_hook  # not a TF1 name: keep it out of the namespace
