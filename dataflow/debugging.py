"""`tf.debugging`: explicit re-exports only."""

from .ops.debug.check_ops import assert_equal as assert_equal
from .ops.debug.check_ops import assert_greater as assert_greater
from .ops.debug.check_ops import assert_greater_equal as assert_greater_equal
from .ops.debug.check_ops import assert_less as assert_less
from .ops.debug.check_ops import assert_less_equal as assert_less_equal
from .ops.debug.check_ops import assert_negative as assert_negative
from .ops.debug.check_ops import assert_non_negative as assert_non_negative
from .ops.debug.check_ops import assert_non_positive as assert_non_positive
from .ops.debug.check_ops import assert_none_equal as assert_none_equal
from .ops.debug.check_ops import assert_positive as assert_positive
from .ops.debug.debugging import (
    Assert as Assert,
)
from .ops.debug.debugging import (
    check_numerics as check_numerics,
)
