"""`tf.random`: explicit re-exports only."""

# ruff: noqa: F401, I001 - this module is a public namespace: explicit re-exports only

# --- ops/random/random_ops.py --------------------------------------------------------------
from .ops.random.random_ops import (
    categorical as categorical,
    get_seed as get_seed,
    multinomial as multinomial,
    random_normal as normal,
    random_shuffle as shuffle,
    random_uniform as uniform,
    set_random_seed as set_random_seed,
    truncated_normal as truncated_normal,
)

from ._util.missing_names import missing_name_hook

__getattr__ = missing_name_hook("random", __name__)

del missing_name_hook  # not a TF1 name: keep it out of the namespace
