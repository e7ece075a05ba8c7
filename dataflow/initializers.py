"""`tf.initializers`: explicit re-exports only."""

# ruff: noqa: F401, I001 - this module is a public namespace: explicit re-exports only

# --- ops/state/initializers.py -------------------------------------------------------------
from .ops.state.initializers import (
    Constant as constant,
    GlorotNormal as glorot_normal,
    GlorotUniform as glorot_uniform,
    Identity as identity,
    Ones as ones,
    Orthogonal as orthogonal,
    RandomNormal as random_normal,
    RandomUniform as random_uniform,
    TruncatedNormal as truncated_normal,
    UniformUnitScaling as uniform_unit_scaling,
    VarianceScaling as variance_scaling,
    Zeros as zeros,
    he_normal as he_normal,
    he_uniform as he_uniform,
    lecun_normal as lecun_normal,
    lecun_uniform as lecun_uniform,
)

# --- ops/state/variables.py ----------------------------------------------------------------
from .ops.state.variables import (
    global_variables_initializer as global_variables,
    local_variables_initializer as local_variables,
    variables_initializer as variables,
)

# --- ops/lookup/tables.py ------------------------------------------------------------------
from .ops.lookup.tables import tables_initializer as tables_initializer

from ._util.missing_names import missing_name_hook

__getattr__ = missing_name_hook("initializers", __name__)

del missing_name_hook  # not a TF1 name: keep it out of the namespace
