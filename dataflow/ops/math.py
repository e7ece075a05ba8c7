"""Elementwise math, reductions, and their gradients (TF1's ``math_ops``): the public
names of the math family, which lives in six modules.

==================  =================================================================
module              holds
==================  =================================================================
``math_compare``    comparisons, logical ops and float classification (``Less ...
                    LogicalAnd ... IsFinite``), ``Select`` (three-argument
                    ``where``), ``Where`` (indices of true elements), ``Cast``; the
                    helpers every elementwise record is made with
``math_arith``      ``AddN``, binary arithmetic (``AddV2 Sub Mul RealDiv ... Pow
                    Maximum Minimum SquaredDifference``) and unary math (``Neg Abs
                    ... Sigmoid Erf ... Reciprocal``)
``math_reduce``     reductions (``Sum Mean Max Min Prod All Any``), ``ArgMax``/
                    ``ArgMin``, ``Cumsum``/``Cumprod``, and ``BroadcastReduced``, the adjoint of
                    a reduction that their gradients share
``math_segment``    segment reductions (``SegmentSum/Mean/Max/Min``,
                    ``UnsortedSegmentMax/Min/Prod``) and counters (``Bincount``,
                    ``HistogramFixedWidth``)
``math_sort``       ``TopKV2``, ``InTopKV2``, and ``sort``/``argsort`` on ``top_k``
``math_composite``  builders with no record of their own (``truediv``, ``div``,
                    ``clip_by_value``, ``reduce_logsumexp``, ``reduce_variance``,
                    ...) and the ``Tensor`` operator overloads (``x + 1``, ``-x``,
                    ``x < y``, ``a & b``, ...)
==================  =================================================================

Each module imports only the ones above it in this table (``math_compare`` is the
bottom: the arithmetic and reduction gradients are built from ``Select``, ``Cast`` and
the comparisons). This module holds no code: it re-exports every public builder, so
``from ..ops.math import multiply`` and ``math_ops.reduce_sum`` keep working, and
importing it registers every op type of the family.

Dtype rules follow TF1: the inputs of an n-ary op must share one dtype (no promotion:
a mismatch is a ``TypeError`` at build time); Python numbers take the dtype of the
tensor inputs (``apply_op``'s hint). Kernels return exactly the static dtype, so they
pass explicit ``dtype=`` to numpy reductions that would otherwise widen (``sum`` of
int32 gives int64 in numpy).

Gradient rules return full-shape gradients: the gradient pass undoes broadcasting once
(``SumToShape``). Reduction gradients re-insert the reduced dimensions with
``BroadcastReduced(grad, shape(x), axes)``; e.g. for ``y = reduce_sum(x, 1)`` with
``x`` of shape [2, 3], ``dx = BroadcastReduced(dy, [2, 3], [1])``: ``dy`` of shape [2]
is viewed as [2, 1] and broadcast to [2, 3].
"""

# --- re-exports: the public builders of the family, by defining module -------------------
from .cast import cast as cast
from .cast import to_double as to_double
from .cast import to_float as to_float
from .cast import to_int32 as to_int32
from .cast import to_int64 as to_int64
from .math_argmax_cumsum import argmax as argmax
from .math_argmax_cumsum import argmin as argmin
from .math_argmax_cumsum import cumprod as cumprod
from .math_argmax_cumsum import cumsum as cumsum
from .math_arith import abs as abs
from .math_arith import add as add
from .math_arith import add_n as add_n
from .math_arith import ceil as ceil
from .math_arith import cos as cos
from .math_arith import div_no_nan as div_no_nan
from .math_arith import erf as erf
from .math_arith import exp as exp
from .math_arith import expm1 as expm1
from .math_arith import floor as floor
from .math_arith import floordiv as floordiv
from .math_arith import floormod as floormod
from .math_arith import log as log
from .math_arith import log1p as log1p
from .math_arith import maximum as maximum
from .math_arith import minimum as minimum
from .math_arith import mod as mod
from .math_arith import multiply as multiply
from .math_arith import negative as negative
from .math_arith import pow as pow
from .math_arith import realdiv as realdiv
from .math_arith import reciprocal as reciprocal
from .math_arith import round as round
from .math_arith import rsqrt as rsqrt
from .math_arith import sigmoid as sigmoid
from .math_arith import sign as sign
from .math_arith import sin as sin
from .math_arith import sqrt as sqrt
from .math_arith import square as square
from .math_arith import squared_difference as squared_difference
from .math_arith import subtract as subtract
from .math_arith import tan as tan
from .math_arith import tanh as tanh
from .math_arith import truncatediv as truncatediv
from .math_arith import truncatemod as truncatemod
from .math_compare import equal as equal
from .math_compare import greater as greater
from .math_compare import greater_equal as greater_equal
from .math_compare import is_finite as is_finite
from .math_compare import is_inf as is_inf
from .math_compare import is_nan as is_nan
from .math_compare import less as less
from .math_compare import less_equal as less_equal
from .math_compare import logical_and as logical_and
from .math_compare import logical_not as logical_not
from .math_compare import logical_or as logical_or
from .math_compare import logical_xor as logical_xor
from .math_compare import not_equal as not_equal
from .math_compare import where as where
from .math_compare import where_v2 as where_v2
from .math_composite import clip_by_value as clip_by_value
from .math_composite import count_nonzero as count_nonzero
from .math_composite import div as div
from .math_composite import divide as divide
from .math_composite import reduce_logsumexp as reduce_logsumexp
from .math_composite import reduce_std as reduce_std
from .math_composite import reduce_variance as reduce_variance
from .math_composite import scalar_mul as scalar_mul
from .math_composite import truediv as truediv
from .math_reduce import reduce_all as reduce_all
from .math_reduce import reduce_any as reduce_any
from .math_reduce import reduce_max as reduce_max
from .math_reduce import reduce_mean as reduce_mean
from .math_reduce import reduce_min as reduce_min
from .math_reduce import reduce_prod as reduce_prod
from .math_reduce import reduce_sum as reduce_sum
from .math_segment import bincount as bincount
from .math_segment import histogram_fixed_width as histogram_fixed_width
from .math_segment import segment_max as segment_max
from .math_segment import segment_mean as segment_mean
from .math_segment import segment_min as segment_min
from .math_segment import segment_sum as segment_sum
from .math_segment import unsorted_segment_max as unsorted_segment_max
from .math_segment import unsorted_segment_mean as unsorted_segment_mean
from .math_segment import unsorted_segment_min as unsorted_segment_min
from .math_segment import unsorted_segment_prod as unsorted_segment_prod
from .math_segment import unsorted_segment_sqrt_n as unsorted_segment_sqrt_n
from .math_sort import argsort as argsort
from .math_sort import in_top_k as in_top_k
from .math_sort import sort as sort
from .math_sort import top_k as top_k
