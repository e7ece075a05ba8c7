"""More special functions and guarded products (TF's ``Igamma Igammac IgammaGradA
Betainc Zeta Erfinv Ndtri Dawsn Expint FresnelCos FresnelSin Spence Xlogy Xdivy Xlog1py
MulNoNan NextAfter CumulativeLogsumexp``), with their gradients.

Kernels are ``scipy.special``'s ufuncs (``cupyx.scipy.special``'s on cupy) in the
inputs' dtype, through ``bessel.special_kernel``, or ``xp`` expressions with ``where``
guards: ``xlogy(0, y) = 0`` whatever ``y`` (NaN included), ``mul_no_nan(x, 0) = 0``
whatever ``x``.

Gradients are TF's, from graph ops: ``d igamma(a, x)/dx = exp(-x + (a - 1) log x -
lgamma(a))``; ``d/da`` is ``IgammaGradA``, which TF computes by a series and this module
by a fourth-order central difference of ``gammainc`` in float64 (step ``1e-3 max(1,
a)``: truncation near ``1e-12``), itself without a gradient as in TF. ``betainc`` has a
gradient for ``x`` only and ``zeta`` for ``q`` only (TF has none for the others);
``nextafter`` has none.
"""

from __future__ import annotations

import math as _pymath
from collections.abc import Callable
from typing import Any

import numpy as np

from ...framework import errors, registry
from ...framework.graph import Operation, Tensor, convert_to_tensor
from ..array.shapes import ones_like, zeros_like
from ..build import apply_op
from ..rules import with_arity
from .argmax_cumsum import infer_cumulative
from .arith import (
    abs,
    add,
    exp,
    log,
    multiply,
    negative,
    realdiv,
    special_module,
    square,
    subtract,
)
from .bessel import special_kernel
from .compare import NOT_DIFF, check_rule, equal, greater, less, not_equal, select
from .reduce import AxesReader, axis_tensor
from .special import lgamma

_REAL = (lambda d: d.is_floating, "floating-point")
_FLOAT = (lambda d: d.is_floating or d.is_complex, "floating-point or complex")


# --- kernels ---------------------------------------------------------------------------
def _igamma_grad_a_kernel(ctx: Any, attrs: dict) -> Any:
    xp = ctx.xp
    special = special_module(xp)
    if special is None:
        raise errors.UnimplementedError(None, None, "'IgammaGradA' needs scipy.special")
    gammainc = special.gammainc

    def grad_a(a: Any, x: Any) -> Any:
        a64, x64 = a.astype(xp.float64), x.astype(xp.float64)
        h = 1e-3 * xp.maximum(1.0, xp.abs(a64))
        h = xp.minimum(h, 0.25 * a64)  # stay inside a > 0
        near = gammainc(a64 + h, x64) - gammainc(a64 - h, x64)
        far = gammainc(a64 + 2 * h, x64) - gammainc(a64 - 2 * h, x64)
        return ((8 * near - far) / (12 * h)).astype(a.dtype)

    return grad_a


def _xlogy_kernel(kind: str) -> Callable[[Any, dict], Any]:
    def factory(ctx: Any, attrs: dict) -> Any:
        xp = ctx.xp
        inner = {"xlogy": xp.log, "xlog1py": xp.log1p}.get(kind)

        def run(x: Any, y: Any) -> Any:
            zero = x == 0
            if inner is None:  # xdivy
                value = x / xp.where(zero, 1, y)
            else:
                value = x * inner(xp.where(zero, 1, y))
            return xp.where(zero, xp.zeros_like(value), value).astype(x.dtype, copy=False)

        return run

    factory.__name__ = f"_{kind}_kernel"
    return factory


def _fresnel_kernel(part: int) -> Callable[[Any, dict], Any]:
    """``scipy.special.fresnel``'s sine (``part`` 0) or cosine (1) integral."""

    def factory(ctx: Any, attrs: dict) -> Any:
        xp = ctx.xp
        special = special_module(xp)
        if special is None or not hasattr(special, "fresnel"):
            raise errors.UnimplementedError(None, None, "Fresnel integrals need scipy.special")
        fresnel = special.fresnel
        return lambda x: xp.asarray(fresnel(x)[part]).astype(x.dtype, copy=False)

    factory.__name__ = f"_fresnel_{part}_kernel"
    return factory


def _mul_no_nan_kernel(ctx: Any, attrs: dict) -> Any:
    xp = ctx.xp

    def run(x: Any, y: Any) -> Any:
        product = x * y
        return xp.where(y == 0, xp.zeros_like(product), product)

    return run


def _nextafter_kernel(ctx: Any, attrs: dict) -> Any:
    return ctx.xp.nextafter


# --- gradients -------------------------------------------------------------------------
def _igamma_partial_x(a: Tensor, x: Tensor) -> Tensor:
    return exp(subtract(multiply(subtract(a, 1.0), log(x)), add(x, lgamma(a))))


def _igamma_grad(op: Operation, grad: Tensor) -> list:
    a, x = op.inputs
    return [multiply(grad, igamma_grad_a(a, x)), multiply(grad, _igamma_partial_x(a, x))]


def _igammac_grad(op: Operation, grad: Tensor) -> list:
    a, x = op.inputs
    return [
        negative(multiply(grad, igamma_grad_a(a, x))),
        negative(multiply(grad, _igamma_partial_x(a, x))),
    ]


def _betainc_grad(op: Operation, grad: Tensor) -> list:
    a, b, x = op.inputs
    # x^(a-1) (1-x)^(b-1) / B(a, b), in logs.
    log_beta = subtract(add(lgamma(a), lgamma(b)), lgamma(add(a, b)))
    log_density = subtract(
        add(xlogy(subtract(a, 1.0), x), xlog1py(subtract(b, 1.0), negative(x))), log_beta
    )
    return [None, None, multiply(grad, exp(log_density))]


def _zeta_grad(op: Operation, grad: Tensor) -> list:
    x, q = op.inputs
    return [None, multiply(grad, negative(multiply(x, zeta(add(x, 1.0), q))))]


def _erfinv_grad(op: Operation, grad: Tensor) -> list:
    y = op.outputs[0]
    return [multiply(grad, multiply(exp(square(y)), _pymath.sqrt(_pymath.pi) / 2))]


def _ndtri_grad(op: Operation, grad: Tensor) -> list:
    y = op.outputs[0]
    return [multiply(grad, multiply(exp(multiply(square(y), 0.5)), _pymath.sqrt(2 * _pymath.pi)))]


def _dawsn_grad(op: Operation, grad: Tensor) -> list:
    x, y = op.inputs[0], op.outputs[0]
    return [multiply(grad, subtract(1.0, multiply(multiply(x, y), 2.0)))]


def _expint_grad(op: Operation, grad: Tensor) -> list:
    x = op.inputs[0]
    return [multiply(grad, realdiv(exp(x), x))]


def _fresnel_cos_grad(op: Operation, grad: Tensor) -> list:
    from .arith import cos

    x = op.inputs[0]
    return [multiply(grad, cos(multiply(square(x), _pymath.pi / 2)))]


def _fresnel_sin_grad(op: Operation, grad: Tensor) -> list:
    from .arith import sin

    x = op.inputs[0]
    return [multiply(grad, sin(multiply(square(x), _pymath.pi / 2)))]


def _spence_grad(op: Operation, grad: Tensor) -> list:
    x = op.inputs[0]
    one = equal(x, 1.0)
    safe = select(one, multiply(ones_like(x), 2.0), x)
    slope = realdiv(log(safe), subtract(1.0, safe))
    return [multiply(grad, select(one, negative(ones_like(x)), slope))]


def _not_zero(x: Tensor) -> Tensor:
    from ..cast import cast

    return cast(not_equal(x, zeros_like(x)), x.dtype)


def _xlogy_grad(op: Operation, grad: Tensor) -> list:
    x, y = op.inputs
    return [multiply(grad, xlogy(_not_zero(x), y)), multiply(grad, xdivy(x, y))]


def _xdivy_grad(op: Operation, grad: Tensor) -> list:
    x, y = op.inputs
    return [
        multiply(grad, xdivy(_not_zero(x), y)),
        multiply(grad, xdivy(negative(x), square(y))),
    ]


def _xlog1py_grad(op: Operation, grad: Tensor) -> list:
    x, y = op.inputs
    return [multiply(grad, xlog1py(_not_zero(x), y)), multiply(grad, xdivy(x, add(y, 1.0)))]


def _mul_no_nan_grad(op: Operation, grad: Tensor) -> list:
    x, y = op.inputs
    return [mul_no_nan(grad, y), mul_no_nan(x, grad)]


# (type, kernel, gradient, accepted dtypes, arity)
_OPS: list[tuple[str, Callable, Any, tuple, int]] = [
    ("Igamma", special_kernel("Igamma", "gammainc"), _igamma_grad, _REAL, 2),
    ("Igammac", special_kernel("Igammac", "gammaincc"), _igammac_grad, _REAL, 2),
    ("IgammaGradA", _igamma_grad_a_kernel, None, _REAL, 2),
    ("Betainc", special_kernel("Betainc", "betainc"), _betainc_grad, _REAL, 3),
    ("Zeta", special_kernel("Zeta", "zeta"), _zeta_grad, _REAL, 2),
    ("Erfinv", special_kernel("Erfinv", "erfinv"), _erfinv_grad, _REAL, 1),
    ("Ndtri", special_kernel("Ndtri", "ndtri"), _ndtri_grad, _REAL, 1),
    ("Dawsn", special_kernel("Dawsn", "dawsn"), _dawsn_grad, _REAL, 1),
    ("Expint", special_kernel("Expint", "expi"), _expint_grad, _REAL, 1),
    ("FresnelCos", _fresnel_kernel(1), _fresnel_cos_grad, _REAL, 1),
    ("FresnelSin", _fresnel_kernel(0), _fresnel_sin_grad, _REAL, 1),
    ("Spence", special_kernel("Spence", "spence"), _spence_grad, _REAL, 1),
    ("Xlogy", _xlogy_kernel("xlogy"), _xlogy_grad, _FLOAT, 2),
    ("Xdivy", _xlogy_kernel("xdivy"), _xdivy_grad, _FLOAT, 2),
    ("Xlog1py", _xlogy_kernel("xlog1py"), _xlog1py_grad, _FLOAT, 2),
    ("MulNoNan", _mul_no_nan_kernel, _mul_no_nan_grad, _FLOAT, 2),
    ("NextAfter", _nextafter_kernel, NOT_DIFF, _REAL, 2),
]
for _type, _kernel, _grad, _dtypes, _arity in _OPS:
    _rule = with_arity(check_rule(*_dtypes), _arity)
    registry.register(registry.OpDef(_type, _rule, _kernel, _grad))


# --- CumulativeLogsumexp ------------------------------------------------------------------
def _infer_cumulative_logsumexp(op: Operation) -> list:
    x = op.inputs[0]
    if not x.dtype.is_floating:
        raise TypeError(f"'{op.type}' needs floating-point inputs, got {x.dtype.name}")
    return infer_cumulative(op)


def _cumulative_logsumexp_kernel(ctx: Any, attrs: dict) -> Any:
    # A Hillis-Steele scan in the log domain: after the pass with stride s, entry i
    # holds logaddexp over (i - 2s, i]; log2(n) vectorized passes, exact where a
    # shifted cumsum of exp would underflow.
    xp = ctx.xp
    exclusive, reverse = attrs["exclusive"], attrs["reverse"]
    read = AxesReader()

    def scan(x: Any, axis: Any) -> Any:
        a = read.scalar(axis)
        out = xp.moveaxis(xp.flip(x, a) if reverse else x, a, 0).copy()
        n, stride = out.shape[0], 1
        while stride < n:
            out[stride:] = xp.logaddexp(out[stride:], out[:-stride])
            stride *= 2
        if exclusive and n:
            out = xp.concatenate([xp.full_like(out[:1], -xp.inf), out[:-1]])
        out = xp.moveaxis(out, 0, a)
        return xp.flip(out, a) if reverse else out

    return scan


def _cumulative_logsumexp_grad(op: Operation, grad: Tensor) -> list:
    # TF's rule in the log domain: d out_j / d x_i = exp(x_i - out_j) for the j whose
    # sums include i; the positive and negative parts of the gradient are scanned apart.
    x, axis = op.inputs
    out = op.outputs[0]
    exclusive, reverse = op.attrs["exclusive"], op.attrs["reverse"]
    # The lowest finite value stands for log(0): -inf would make inf - inf inside the
    # second derivative.
    minus_inf = multiply(ones_like(grad), float(np.finfo(grad.dtype.as_numpy_dtype).min))
    positive = greater(grad, zeros_like(grad))
    negative_part = less(grad, zeros_like(grad))
    safe = select(equal(grad, zeros_like(grad)), ones_like(grad), abs(grad))
    log_pos = select(positive, log(safe), minus_inf)
    log_neg = select(negative_part, log(safe), minus_inf)
    back = {"exclusive": exclusive, "reverse": not reverse}
    pos = exp(add(cumulative_logsumexp(subtract(log_pos, out), axis, **back), x))
    neg = exp(add(cumulative_logsumexp(subtract(log_neg, out), axis, **back), x))
    return [subtract(pos, neg), None]


registry.register(
    registry.OpDef(
        "CumulativeLogsumexp",
        _infer_cumulative_logsumexp,
        _cumulative_logsumexp_kernel,
        _cumulative_logsumexp_grad,
    )
)


def cumulative_logsumexp(
    x: Any, axis: Any = 0, exclusive: bool = False, reverse: bool = False, name: str | None = None
) -> Tensor:
    """``log(cumsum(exp(x)))`` along ``axis``, computed in the log domain (no overflow or
    underflow); ``exclusive``: each element left out of its own sum (the first is
    ``-inf``); ``reverse``: from the end."""
    return apply_op(
        "CumulativeLogsumexp",
        [convert_to_tensor(x), axis_tensor(axis)],
        {"exclusive": bool(exclusive), "reverse": bool(reverse)},
        name=name,
    )


# --- builders --------------------------------------------------------------------------
def igamma(a: Any, x: Any, name: str | None = None) -> Tensor:
    """The regularized lower incomplete gamma function ``P(a, x)``."""
    return apply_op("Igamma", [a, x], name=name)


def igammac(a: Any, x: Any, name: str | None = None) -> Tensor:
    """The regularized upper incomplete gamma function ``Q(a, x) = 1 - P(a, x)``."""
    return apply_op("Igammac", [a, x], name=name)


def igamma_grad_a(a: Any, x: Any, name: str | None = None) -> Tensor:
    """``d P(a, x) / d a`` (the gradient of ``igamma`` for ``a``)."""
    return apply_op("IgammaGradA", [a, x], name=name)


def betainc(a: Any, b: Any, x: Any, name: str | None = None) -> Tensor:
    """The regularized incomplete beta function ``I_x(a, b)``."""
    return apply_op("Betainc", [a, b, x], name=name)


def zeta(x: Any, q: Any, name: str | None = None) -> Tensor:
    """The Hurwitz zeta function ``sum_n (n + q)^-x``."""
    return apply_op("Zeta", [x, q], name=name)


def erfinv(x: Any, name: str | None = None) -> Tensor:
    """The inverse of ``erf`` on ``(-1, 1)``."""
    return apply_op("Erfinv", [x], name=name)


def ndtri(x: Any, name: str | None = None) -> Tensor:
    """The inverse of the standard normal distribution function on ``(0, 1)``."""
    return apply_op("Ndtri", [x], name=name)


def dawsn(x: Any, name: str | None = None) -> Tensor:
    """Dawson's integral ``exp(-x^2) int_0^x exp(t^2) dt``."""
    return apply_op("Dawsn", [x], name=name)


def expint(x: Any, name: str | None = None) -> Tensor:
    """The exponential integral ``Ei(x)``."""
    return apply_op("Expint", [x], name=name)


def fresnel_cos(x: Any, name: str | None = None) -> Tensor:
    """The Fresnel cosine integral ``int_0^x cos(pi t^2 / 2) dt``."""
    return apply_op("FresnelCos", [x], name=name)


def fresnel_sin(x: Any, name: str | None = None) -> Tensor:
    """The Fresnel sine integral ``int_0^x sin(pi t^2 / 2) dt``."""
    return apply_op("FresnelSin", [x], name=name)


def spence(x: Any, name: str | None = None) -> Tensor:
    """Spence's integral ``int_1^x log(t) / (1 - t) dt`` (``x >= 0``)."""
    return apply_op("Spence", [x], name=name)


def xlogy(x: Any, y: Any, name: str | None = None) -> Tensor:
    """``x * log(y)``, and 0 where ``x == 0`` (whatever ``y``)."""
    return apply_op("Xlogy", [x, y], name=name)


def xdivy(x: Any, y: Any, name: str | None = None) -> Tensor:
    """``x / y``, and 0 where ``x == 0`` (whatever ``y``)."""
    return apply_op("Xdivy", [x, y], name=name)


def xlog1py(x: Any, y: Any, name: str | None = None) -> Tensor:
    """``x * log1p(y)``, and 0 where ``x == 0`` (whatever ``y``)."""
    return apply_op("Xlog1py", [x, y], name=name)


def mul_no_nan(x: Any, y: Any, name: str | None = None) -> Tensor:
    """``x * y``, and 0 where ``y == 0`` even if ``x`` is infinite or NaN."""
    return apply_op("MulNoNan", [x, y], name=name)


def nextafter(x1: Any, x2: Any, name: str | None = None) -> Tensor:
    """The next representable value after ``x1`` towards ``x2`` (no gradient)."""
    return apply_op("NextAfter", [x1, x2], name=name)
