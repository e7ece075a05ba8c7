"""`tf.debugging`: explicit re-exports only."""

# ruff: noqa: F401 - this module is a public namespace

from .ops.debugging import (
    Assert as Assert,
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
    check_numerics as check_numerics,
)
