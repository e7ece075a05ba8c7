"""The math family's rows of the op table (``tests/ops/op_table.py``).

Elementwise rows carry a sampler per input (``tests/ops/math/test_math.py`` sweeps them over
broadcastable shapes with hypothesis); their ``args`` are one draw, a [2, 3] and a [3]
input for binary ops so that every row also broadcasts. Samplers keep inputs away from
kinks and poles. Then reductions, arg-reductions, cumulative sums and the fused
``reduce_sum(square(x))``.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from typing import Any

import autograd.numpy as anp
import numpy as np
from autograd.scipy.special import digamma as ag_digamma
from autograd.scipy.special import erf as ag_erf
from autograd.scipy.special import erfc as ag_erfc
from autograd.scipy.special import gammaln as ag_gammaln
from autograd.scipy.special import logsumexp as ag_logsumexp
from autograd.scipy.special import polygamma as ag_polygamma

from dataflow.testing.op_spec import OpSpec, call


# --- input samplers ------------------------------------------------------------------------
def real(lo: float = -2.0, hi: float = 2.0) -> Callable:
    return lambda rng, shape: rng.uniform(lo, hi, shape)


def nonzero(lo: float = 0.3, hi: float = 2.0) -> Callable:
    """|x| in [lo, hi] with a random sign (away from kinks and poles at 0)."""
    return lambda rng, shape: rng.uniform(lo, hi, shape) * rng.choice([-1.0, 1.0], shape)


def positive(lo: float = 0.3, hi: float = 2.0) -> Callable:
    return real(lo, hi)


def boolean() -> Callable:
    return lambda rng, shape: rng.random(shape) < 0.5


ROW_SHAPES = {1: [(2, 3)], 2: [(2, 3), (3,)]}


def elementwise(
    name: str,
    path: str,
    reference: Callable,
    samplers: tuple,
    grad: int = 2,
    float_only: bool = True,
    **more: Any,
) -> OpSpec:
    """A row for an elementwise op; ``float_only`` ops refuse integer inputs at build time."""
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    args = tuple(np.asarray(s(rng, shape)) for s, shape in zip(samplers, ROW_SHAPES[len(samplers)]))
    tags = {"elementwise"} | ({"float_only"} if float_only else set())
    return OpSpec(
        name,
        call(path),
        reference,
        args,
        grad=grad,
        samplers=samplers,
        tags=frozenset(tags),
        **more,
    )


def _sigmoid(x):
    return 1 / (1 + anp.exp(-x))


UNARY = [
    elementwise("negative", "negative", anp.negative, (real(),), float_only=False),
    elementwise("abs", "abs", anp.abs, (nonzero(),), float_only=False),
    elementwise("sign", "sign", anp.sign, (nonzero(),), float_only=False),
    elementwise("square", "square", anp.square, (real(),), float_only=False),
    elementwise("sqrt", "sqrt", anp.sqrt, (positive(),)),
    elementwise("rsqrt", "math.rsqrt", lambda x: 1 / anp.sqrt(x), (positive(),)),
    elementwise("exp", "exp", anp.exp, (real(),)),
    elementwise("expm1", "math.expm1", anp.expm1, (real(),)),
    elementwise("log", "math.log", anp.log, (positive(),)),
    elementwise("log1p", "math.log1p", anp.log1p, (positive(-0.5, 2.0),)),
    elementwise("sin", "sin", anp.sin, (real(),)),
    elementwise("cos", "cos", anp.cos, (real(),)),
    elementwise("tan", "tan", anp.tan, (real(-1.2, 1.2),)),
    elementwise("tanh", "tanh", anp.tanh, (real(-3, 3),)),
    elementwise("sigmoid", "sigmoid", _sigmoid, (real(-5, 5),)),
    elementwise("erf", "math.erf", ag_erf, (real(),)),
    # Inverse trigonometric, hyperbolic and special functions (ops/math/special.py),
    # sampled inside their domains and away from their poles.
    elementwise("asin", "asin", anp.arcsin, (real(-0.9, 0.9),)),
    elementwise("acos", "math.acos", anp.arccos, (real(-0.9, 0.9),)),
    elementwise("atan", "atan", anp.arctan, (real(-3, 3),)),
    elementwise("sinh", "sinh", anp.sinh, (real(),)),
    elementwise("cosh", "math.cosh", anp.cosh, (real(),)),
    elementwise("asinh", "asinh", anp.arcsinh, (real(-3, 3),)),
    elementwise("acosh", "math.acosh", anp.arccosh, (positive(1.2, 3.0),)),
    elementwise("atanh", "atanh", anp.arctanh, (real(-0.9, 0.9),)),
    elementwise("lgamma", "lgamma", ag_gammaln, (positive(0.3, 5.0),)),
    elementwise("digamma", "math.digamma", ag_digamma, (positive(0.5, 5.0),)),
    elementwise("erfc", "math.erfc", ag_erfc, (real(),)),
    # Halves round to even; samples avoid them (grad=0: TF1 registers no gradient).
    elementwise("rint", "math.rint", np.rint, (real(-3, 3),), grad=0),
    elementwise("reciprocal", "math.reciprocal", lambda x: 1 / x, (nonzero(),)),
    elementwise("floor", "floor", np.floor, (real(-3, 3),), grad=0),
    elementwise("ceil", "math.ceil", np.ceil, (real(-3, 3),), grad=0),
    elementwise("round", "round", np.round, (real(-3, 3),), grad=0, float_only=False),
]

BINARY = [
    elementwise("add", "add", anp.add, (real(), real()), float_only=False),
    elementwise("subtract", "subtract", anp.subtract, (real(), real()), float_only=False),
    elementwise("multiply", "multiply", anp.multiply, (real(), real()), float_only=False),
    elementwise("divide", "divide", anp.true_divide, (real(), nonzero())),
    elementwise("truediv", "truediv", anp.true_divide, (real(), nonzero())),
    elementwise("realdiv", "realdiv", anp.true_divide, (real(), nonzero())),
    elementwise("div", "div", anp.true_divide, (real(), nonzero())),
    elementwise("div_no_nan", "math.divide_no_nan", anp.true_divide, (real(), nonzero())),
    elementwise(
        "floordiv",
        "math.floordiv",
        np.floor_divide,
        (real(-5, 5), nonzero(0.7, 2.0)),
        grad=0,
        float_only=False,
    ),
    elementwise(
        "mod", "math.floormod", anp.mod, (real(-5, 5), nonzero(0.7, 2.0)), float_only=False
    ),
    elementwise(
        "truncatediv",
        "truncatediv",
        lambda x, y: np.trunc(x / y),
        (real(-5, 5), nonzero(0.7, 2.0)),
        grad=0,
        float_only=False,
    ),
    elementwise(
        "truncatemod",
        "truncatemod",
        lambda x, y: x - anp.trunc(x / y) * y,
        (real(-5, 5), nonzero(0.7, 2.0)),
        float_only=False,
        tf_gradients=False,  # TF1 registers no gradient for TruncateMod
    ),
    elementwise("atan2", "atan2", anp.arctan2, (nonzero(), nonzero())),
    elementwise("pow", "pow", anp.power, (positive(), real()), float_only=False),
    elementwise("maximum", "maximum", anp.maximum, (real(), real()), float_only=False),
    elementwise("minimum", "minimum", anp.minimum, (real(), real()), float_only=False),
    elementwise(
        "squared_difference",
        "math.squared_difference",
        lambda x, y: (x - y) ** 2,
        (real(), real()),
        float_only=False,
    ),
]

COMPARISONS = [
    elementwise(n, n, getattr(np, n), (real(), real()), grad=0, float_only=False)
    for n in ("less", "less_equal", "greater", "greater_equal", "equal", "not_equal")
] + [
    elementwise("logical_and", "logical_and", np.logical_and, (boolean(), boolean()), grad=0),
    elementwise("logical_or", "logical_or", np.logical_or, (boolean(), boolean()), grad=0),
    elementwise("logical_xor", "math.logical_xor", np.logical_xor, (boolean(), boolean()), grad=0),
    elementwise("logical_not", "logical_not", np.logical_not, (boolean(),), grad=0),
    elementwise("is_finite", "math.is_finite", np.isfinite, (real(),), grad=0),
]


# Integer bitwise ops (ops/math/bitwise.py): no gradient (TF1: NotDifferentiable). The
# shift amounts include negative ones and ones past the width, which TF clamps.
_INTS = np.array([[5, -8, 0], [2**31 - 1, -(2**31), 77]], np.int32)
_BITS = np.array([3, 1, -2], np.int32)
_SHIFTS = np.array([0, 40, -3], np.int32)


def _clamped(shifts):
    return np.clip(shifts, 0, 31)


BITWISE = [
    OpSpec(name, call(f"bitwise.{name}"), ref, args, grad=0, tf_gradients=False)
    for name, ref, args in [
        ("bitwise_and", np.bitwise_and, (_INTS, _BITS)),
        ("bitwise_or", np.bitwise_or, (_INTS, _BITS)),
        ("bitwise_xor", np.bitwise_xor, (_INTS, _BITS)),
        ("invert", np.invert, (np.array([0, 7, 128, 255], np.uint8),)),
        ("left_shift", lambda x, y: np.left_shift(x, _clamped(y)), (_INTS, _SHIFTS)),
        ("right_shift", lambda x, y: np.right_shift(x, _clamped(y)), (_INTS, _SHIFTS)),
    ]
]

RNG = np.random.default_rng(11)


def rand(*shape):
    return RNG.standard_normal(shape)


def reduction(name: str, path: str, reference: Callable, x: np.ndarray, **kwargs) -> list[OpSpec]:
    """Rows of one reduction over all axes, one axis, and two axes with ``keepdims``."""
    forms = [("all", None, False), ("axis1", 1, False), ("axes02_keepdims", [0, 2], True)]
    return [
        OpSpec(
            f"{name}_{label}",
            call(path, axis=axis, keepdims=keepdims),
            lambda t, a=axis, k=keepdims: reference(
                t, axis=None if a is None else tuple(a) if isinstance(a, list) else a, keepdims=k
            ),
            (x,),
            **kwargs,
        )
        for label, axis, keepdims in forms
    ]


REDUCTIONS = [
    *reduction("reduce_sum", "reduce_sum", anp.sum, rand(2, 3, 2)),
    *reduction("reduce_mean", "reduce_mean", anp.mean, rand(2, 3, 2)),
    *reduction("reduce_max", "reduce_max", anp.max, rand(2, 3, 2)),
    *reduction("reduce_min", "reduce_min", anp.min, rand(2, 3, 2)),
    *reduction("reduce_prod", "reduce_prod", anp.prod, RNG.uniform(0.5, 1.5, (2, 3, 2))),
    *reduction("reduce_logsumexp", "reduce_logsumexp", ag_logsumexp, rand(2, 3, 2)),
    *reduction("reduce_variance", "math.reduce_variance", anp.var, rand(2, 3, 2)),
    *reduction("reduce_std", "math.reduce_std", anp.std, rand(2, 3, 2)),
    *reduction("reduce_all", "reduce_all", np.all, RNG.random((2, 3, 2)) < 0.7, grad=0),
    *reduction("reduce_any", "reduce_any", np.any, RNG.random((2, 3, 2)) < 0.3, grad=0),
]

OTHERS = [
    OpSpec("argmax", call("argmax", 1), lambda x: np.argmax(x, 1), (rand(3, 4),), grad=0),
    OpSpec("argmin", call("argmin", 0), lambda x: np.argmin(x, 0), (rand(3, 4),), grad=0),
    OpSpec("cumsum", call("cumsum", axis=1), lambda x: anp.cumsum(x, 1), (rand(2, 4),)),
    OpSpec(
        "cumsum_exclusive_reverse",
        call("cumsum", axis=0, exclusive=True, reverse=True),
        lambda x: anp.cumsum(x[::-1], 0)[::-1] - x,
        (rand(4, 2),),
    ),
    OpSpec(
        "is_nan",
        call("math.is_nan"),
        np.isnan,
        (np.array([0.0, np.nan, np.inf, -1.0]),),
        grad=0,
    ),
    OpSpec(
        "is_inf",
        call("math.is_inf"),
        np.isinf,
        (np.array([0.0, np.nan, np.inf, -np.inf]),),
        grad=0,
    ),
    # The order n (whole numbers) is not differentiated: TF1's gradient has none for it.
    # One shape for both inputs: autograd's polygamma gradient does not undo broadcasting.
    OpSpec(
        "polygamma",
        call("math.polygamma"),
        ag_polygamma,
        (
            np.array([[0.0, 1.0, 2.0], [3.0, 1.0, 0.0]]),
            np.array([[0.5, 1.7, 3.2], [0.8, 2.4, 4.1]]),
        ),
        wrt=(1,),
    ),
    # Compiled into one SumOfSquares / MeanOfSquares kernel (a registered fusion).
    OpSpec(
        "sum_of_squares",
        lambda tf, x: tf.reduce_sum(tf.square(x), axis=1),
        lambda x: anp.sum(x * x, axis=1),
        (rand(3, 4),),
    ),
    OpSpec(
        "mean_of_squares",
        lambda tf, x: tf.reduce_mean(tf.square(x)),
        lambda x: anp.mean(x * x),
        (rand(3, 4),),
    ),
]

ROWS = UNARY + BINARY + COMPARISONS + BITWISE + REDUCTIONS + OTHERS
