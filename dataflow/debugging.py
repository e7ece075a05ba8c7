"""`tf.debugging`: explicit re-exports only."""

# ruff: noqa: F401, I001 - this module is a public namespace: explicit re-exports only

from .ops.debug.check_ops import (
    assert_equal as assert_equal,
    assert_greater as assert_greater,
    assert_greater_equal as assert_greater_equal,
    assert_less as assert_less,
    assert_less_equal as assert_less_equal,
    assert_negative as assert_negative,
    assert_non_negative as assert_non_negative,
    assert_non_positive as assert_non_positive,
    assert_none_equal as assert_none_equal,
    assert_positive as assert_positive,
)
from .ops.debug.checks.ranks import (
    assert_rank as assert_rank,
    assert_rank_at_least as assert_rank_at_least,
    assert_rank_in as assert_rank_in,
    assert_scalar as assert_scalar,
    assert_shapes as assert_shapes,
)
from .ops.debug.checks.values import (
    assert_integer as assert_integer,
    assert_near as assert_near,
    assert_proper_iterable as assert_proper_iterable,
    assert_same_float_dtype as assert_same_float_dtype,
    assert_type as assert_type,
    is_non_decreasing as is_non_decreasing,
    is_numeric_tensor as is_numeric_tensor,
    is_strictly_increasing as is_strictly_increasing,
)
from .ops.debug.debugging import (
    Assert as Assert,
    check_numerics as check_numerics,
    verify_tensor_all_finite as assert_all_finite,
)
from .ops.math.compare import (
    is_finite as is_finite,
    is_inf as is_inf,
    is_nan as is_nan,
)
from .runtime.config import (
    get_log_device_placement as get_log_device_placement,
    set_log_device_placement as set_log_device_placement,
)
from ._util.missing_names import missing_name_hook

__getattr__ = missing_name_hook("debugging", __name__)

del missing_name_hook  # not a TF1 name: keep it out of the namespace
