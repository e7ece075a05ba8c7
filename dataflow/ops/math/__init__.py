"""Elementwise math, reductions, and their gradients (TF1's ``math_ops``): the public
names of the math family, which lives in the modules below.

=============  =================================================================
module         holds
=============  =================================================================
``compare``    comparisons, logical ops and float classification (``Less ...
               LogicalAnd ... IsFinite``), ``Select`` (three-argument
               ``where``), ``Where`` (indices of true elements), ``Cast``; the
               helpers every elementwise record is made with
``arith``      ``AddN``, binary arithmetic (``AddV2 Sub Mul RealDiv ... Pow
               Maximum Minimum SquaredDifference``) and unary math (``Neg Abs
               ... Sigmoid Erf ... Reciprocal``)
``reduce``     reductions (``Sum Mean Max Min Prod All Any``), ``ArgMax``/
               ``ArgMin``, ``Cumsum``/``Cumprod``, and ``BroadcastReduced``, the adjoint of
               a reduction that their gradients share
``segment``    segment reductions (``SegmentSum/Mean/Max/Min``,
               ``UnsortedSegmentMax/Min/Prod``) and counters (``Bincount``,
               ``HistogramFixedWidth``)
``ordering``   ``TopKV2``, ``InTopKV2``, and ``sort``/``argsort`` on ``top_k``
``bitwise``    integer bitwise ops (``BitwiseAnd BitwiseOr BitwiseXor
               LeftShift RightShift Invert``), no gradients
``special``    inverse trigonometric and hyperbolic functions (``Asin ...
               Atan2 Sinh Cosh Asinh Acosh Atanh``), ``Rint``, and ``Lgamma
               Digamma Polygamma Erfc`` (``scipy.special``'s kernels)
``composite``  builders with no record of their own (``truediv``, ``div``,
               ``clip_by_value``, ``reduce_logsumexp``, ``reduce_variance``,
               ...) and the ``Tensor`` operator overloads (``x + 1``, ``-x``,
               ``x < y``, ``a & b``, ...)
=============  =================================================================

Issue 32's long tail adds, above ``special``: ``bessel`` (``BesselI0 ... BesselY1``),
``special_functions`` (``Igamma Igammac IgammaGradA Betainc Zeta Erfinv Ndtri Dawsn
Expint FresnelCos FresnelSin Spence Xlogy Xdivy Xlog1py MulNoNan NextAfter
CumulativeLogsumexp``),
``complex_parts`` (``Complex Real Imag Conj Angle ComplexAbs``: complex numbers from and
to their parts) and ``composite_tail`` (``polyval``, ``lbeta`` and the other builders
with no record of their own).

``elementwise_kernels``, between ``compare`` and ``arith``, holds the kernels of
``arith``'s records that are more than a ufunc (the divisions, ``Sigmoid``, ``Erf``) and
the ``scipy.special`` helpers. ``+ - * /``, ``Neg Square Exp Log Sqrt Reciprocal Pow``,
``Sum Mean Prod`` and ``Equal``/``NotEqual`` take complex tensors as TF1's do, with TF's
conjugate gradients.

Each module imports only the ones above it in this table (``compare`` is the
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

# --- re-exports: the public builders of the family, by defining module ------------------
from ..cast import cast as cast
from ..cast import to_double as to_double
from ..cast import to_float as to_float
from ..cast import to_int32 as to_int32
from ..cast import to_int64 as to_int64
from .argmax_cumsum import argmax as argmax
from .argmax_cumsum import argmin as argmin
from .argmax_cumsum import cumprod as cumprod
from .argmax_cumsum import cumsum as cumsum
from .arith import add as add
from .arith import add_n as add_n
from .arith import ceil as ceil
from .arith import cos as cos
from .arith import div_no_nan as div_no_nan
from .arith import erf as erf
from .arith import exp as exp
from .arith import expm1 as expm1
from .arith import floor as floor
from .arith import floordiv as floordiv
from .arith import floormod as floormod
from .arith import log as log
from .arith import log1p as log1p
from .arith import maximum as maximum
from .arith import minimum as minimum
from .arith import mod as mod
from .arith import multiply as multiply
from .arith import negative as negative
from .arith import pow as pow
from .arith import realdiv as realdiv
from .arith import reciprocal as reciprocal
from .arith import round as round
from .arith import rsqrt as rsqrt
from .arith import sigmoid as sigmoid
from .arith import sign as sign
from .arith import sin as sin
from .arith import sqrt as sqrt
from .arith import square as square
from .arith import squared_difference as squared_difference
from .arith import subtract as subtract
from .arith import tan as tan
from .arith import tanh as tanh
from .arith import truncatediv as truncatediv
from .arith import truncatemod as truncatemod
from .bessel import bessel_i0 as bessel_i0
from .bessel import bessel_i0e as bessel_i0e
from .bessel import bessel_i1 as bessel_i1
from .bessel import bessel_i1e as bessel_i1e
from .bessel import bessel_j0 as bessel_j0
from .bessel import bessel_j1 as bessel_j1
from .bessel import bessel_k0 as bessel_k0
from .bessel import bessel_k0e as bessel_k0e
from .bessel import bessel_k1 as bessel_k1
from .bessel import bessel_k1e as bessel_k1e
from .bessel import bessel_y0 as bessel_y0
from .bessel import bessel_y1 as bessel_y1
from .bitwise import bitwise_and as bitwise_and
from .bitwise import bitwise_or as bitwise_or
from .bitwise import bitwise_xor as bitwise_xor
from .bitwise import invert as invert
from .bitwise import left_shift as left_shift
from .bitwise import right_shift as right_shift
from .compare import equal as equal
from .compare import greater as greater
from .compare import greater_equal as greater_equal
from .compare import is_finite as is_finite
from .compare import is_inf as is_inf
from .compare import is_nan as is_nan
from .compare import less as less
from .compare import less_equal as less_equal
from .compare import logical_and as logical_and
from .compare import logical_not as logical_not
from .compare import logical_or as logical_or
from .compare import logical_xor as logical_xor
from .compare import not_equal as not_equal
from .compare import where as where
from .compare import where_v2 as where_v2
from .complex_parts import abs as abs
from .complex_parts import angle as angle
from .complex_parts import complex as complex
from .complex_parts import complex_abs as complex_abs
from .complex_parts import conj as conj
from .complex_parts import imag as imag
from .complex_parts import real as real
from .composite import clip_by_value as clip_by_value
from .composite import count_nonzero as count_nonzero
from .composite import div as div
from .composite import divide as divide
from .composite import reduce_logsumexp as reduce_logsumexp
from .composite import reduce_std as reduce_std
from .composite import reduce_variance as reduce_variance
from .composite import scalar_mul as scalar_mul
from .composite import truediv as truediv
from .composite_tail import accumulate_n as accumulate_n
from .composite_tail import approx_max_k as approx_max_k
from .composite_tail import approx_min_k as approx_min_k
from .composite_tail import erfcinv as erfcinv
from .composite_tail import is_non_decreasing as is_non_decreasing
from .composite_tail import is_strictly_increasing as is_strictly_increasing
from .composite_tail import lbeta as lbeta
from .composite_tail import log_sigmoid as log_sigmoid
from .composite_tail import polyval as polyval
from .composite_tail import reciprocal_no_nan as reciprocal_no_nan
from .composite_tail import reduce_euclidean_norm as reduce_euclidean_norm
from .composite_tail import zero_fraction as zero_fraction
from .ordering import argsort as argsort
from .ordering import in_top_k as in_top_k
from .ordering import sort as sort
from .ordering import top_k as top_k
from .reduce import reduce_all as reduce_all
from .reduce import reduce_any as reduce_any
from .reduce import reduce_max as reduce_max
from .reduce import reduce_mean as reduce_mean
from .reduce import reduce_min as reduce_min
from .reduce import reduce_prod as reduce_prod
from .reduce import reduce_sum as reduce_sum
from .segment import bincount as bincount
from .segment import histogram_fixed_width as histogram_fixed_width
from .segment import segment_max as segment_max
from .segment import segment_mean as segment_mean
from .segment import segment_min as segment_min
from .segment import segment_prod as segment_prod
from .segment import segment_sum as segment_sum
from .segment import unsorted_segment_max as unsorted_segment_max
from .segment import unsorted_segment_mean as unsorted_segment_mean
from .segment import unsorted_segment_min as unsorted_segment_min
from .segment import unsorted_segment_prod as unsorted_segment_prod
from .segment import unsorted_segment_sqrt_n as unsorted_segment_sqrt_n
from .special import acos as acos
from .special import acosh as acosh
from .special import asin as asin
from .special import asinh as asinh
from .special import atan as atan
from .special import atan2 as atan2
from .special import atanh as atanh
from .special import cosh as cosh
from .special import digamma as digamma
from .special import erfc as erfc
from .special import lgamma as lgamma
from .special import polygamma as polygamma
from .special import rint as rint
from .special import sinh as sinh
from .special_functions import betainc as betainc
from .special_functions import cumulative_logsumexp as cumulative_logsumexp
from .special_functions import dawsn as dawsn
from .special_functions import erfinv as erfinv
from .special_functions import expint as expint
from .special_functions import fresnel_cos as fresnel_cos
from .special_functions import fresnel_sin as fresnel_sin
from .special_functions import igamma as igamma
from .special_functions import igamma_grad_a as igamma_grad_a
from .special_functions import igammac as igammac
from .special_functions import mul_no_nan as mul_no_nan
from .special_functions import ndtri as ndtri
from .special_functions import nextafter as nextafter
from .special_functions import spence as spence
from .special_functions import xdivy as xdivy
from .special_functions import xlog1py as xlog1py
from .special_functions import xlogy as xlogy
from .special_functions import zeta as zeta
