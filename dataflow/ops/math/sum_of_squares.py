"""``SumOfSquares``/``MeanOfSquares``: ``reduce_sum(square(x))`` and ``reduce_mean(square(x))``
as one kernel, which the plan compiler substitutes (``runtime/compile/fusion.py``); no builder
makes them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...framework import registry
from ...framework.graph import Operation
from .compare import NOT_DIFF
from .reduce import AxesReader, mean_kernel, reduction_kernel

# --- sums of squares: fused by the plan compiler (runtime/compile/fusion.py) --------------
# ``reduce_sum(square(x))`` and ``reduce_mean(square(x))`` (the L2 penalty, the squared
# error) over a whole float array are one BLAS dot product: one pass, no temporary, and
# vectorised where numpy's pairwise float sum is not (a [10000, 1] float32 residual: 1 us
# against 5 for square then mean). The dot accumulates in blocks rather than pairwise, so
# its rounding error grows faster with the size; up to _DOT_MAX elements it stays at the
# level of single precision. Other cases run the two kernels back to back.
_DOT_MAX = 1 << 16


def _reduce_of_squares_kernel(reduction: Callable, mean: bool) -> Callable:
    def factory(ctx: Any, attrs: dict) -> Any:
        xp = ctx.xp
        square, dot = xp.square, xp.dot
        unfused = reduction(ctx, attrs)
        keep = attrs["keep_dims"]
        read = AxesReader()

        def reduce_of_squares(x: Any, axes: Any = None) -> Any:
            if (
                not keep
                and 0 < x.size <= _DOT_MAX
                and x.dtype.kind == "f"
                and x.dtype.itemsize >= 4
                and x.flags.c_contiguous
                and read.whole(axes, x.ndim) is None
            ):
                flat = x.reshape(-1)
                total = dot(flat, flat)
                return total / x.size if mean else total
            return unfused(square(x), axes)

        return reduce_of_squares

    return factory


def made_by_fusion(op: Operation) -> list:
    """The rule of a fused op type: graphs never build one (the plan compiler makes it)."""
    raise TypeError(f"'{op.type}' is made by the plan compiler's fusion pass, not built in graphs")


registry.register(
    registry.OpDef(
        "SumOfSquares",
        made_by_fusion,
        _reduce_of_squares_kernel(reduction_kernel("sum", pass_dtype=True), False),
        NOT_DIFF,
        foldable=True,
    )
)
registry.register(
    registry.OpDef(
        "MeanOfSquares", made_by_fusion, _reduce_of_squares_kernel(mean_kernel, True), NOT_DIFF
    )
)
registry.register_fusion("Square", "Sum", "SumOfSquares")
registry.register_fusion("Square", "Mean", "MeanOfSquares")
