"""``tf.bitwise``: TF 1.15's elementwise integer bitwise ops (``ops/math/bitwise.py``)."""
# ruff: noqa: I001 - this module is a public namespace: explicit re-exports only

from .._util.missing_names import missing_name_hook
from ..ops.math.bitwise import (
    bitwise_and as bitwise_and,
    bitwise_or as bitwise_or,
    bitwise_xor as bitwise_xor,
    invert as invert,
    left_shift as left_shift,
    right_shift as right_shift,
)

__getattr__ = missing_name_hook("bitwise", __name__)

del missing_name_hook  # not a TF1 name: keep it out of the namespace
