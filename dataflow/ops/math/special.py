"""Inverse trigonometric, hyperbolic and special functions (TF1's ``Asin Acos Atan Atan2
Sinh Cosh Asinh Acosh Atanh Rint Lgamma Digamma Polygamma Erfc``), with their gradients.

Each op type is one row of ``_UNARY`` (or ``_BINARY``): kernel, gradient rule, accepted
dtypes and whether it folds at build time; the rows are registered as ``arith``'s are,
with ``compare.check_rule`` as the shape/dtype rule. The trigonometric kernels are the
array namespace's ufuncs (``ctx.xp.arcsin``); ``Lgamma``, ``Digamma`` and ``Erfc`` are
``scipy.special``'s ufuncs (``cupyx.scipy.special``'s on cupy), cast back to the input's
dtype, and so is ``Polygamma``'s function.
Gradient rules are built from graph ops, so second derivatives work: ``Digamma``'s is
``Polygamma(1, x)``, and ``Polygamma(n, x)``'s is ``Polygamma(n + 1, x)`` (none flows to
``n``, as in TF1). ``Rint``, like ``Floor``, has no gradient.

This family has a module of its own (not rows of ``arith``'s table) to keep ``arith``
under the module size limit; it imports ``arith``'s builders for its gradient rules.
"""

from __future__ import annotations

import math as _pymath
from collections.abc import Callable
from typing import Any

from ...framework import errors, registry
from ...framework.graph import Operation, Tensor
from ..array.shapes import ones_like
from ..build import apply_op
from ..rules import with_arity
from .arith import (
    add,
    exp,
    keep_dtype,
    multiply,
    negative,
    realdiv,
    rsqrt,
    special_module,
    square,
    subtract,
)
from .compare import FLOAT, NOT_DIFF, check_rule, ufunc_kernel


# --- kernels ---------------------------------------------------------------------------
def _special_kernel(op_type: str, fn_name: str) -> Callable[[Any, dict], Any]:
    """Kernel factory for ``scipy.special.<fn_name>`` (``cupyx``'s on cupy)."""

    def factory(ctx: Any, attrs: dict) -> Any:
        xp = ctx.xp
        special = special_module(xp)
        if special is None:
            raise errors.UnimplementedError(
                None, None, f"'{op_type}' needs scipy.special (cupyx.scipy.special on cupy)"
            )
        if fn_name != "polygamma":
            return keep_dtype(getattr(special, fn_name), xp)

        def polygamma(n: Any, x: Any) -> Any:
            # scipy's polygamma is Python over numpy ufuncs, not a ufunc, so on arrays
            # that are not numpy's (the strict stand-in) it answers a numpy array:
            # xp.asarray takes it back (a no-op on numpy, and on cupy, whose
            # cupyx.scipy.special.polygamma answers a cupy array).
            return xp.asarray(special.polygamma(n, x), dtype=x.dtype)

        return polygamma

    factory.__name__ = f"_{fn_name}_kernel"
    return factory


# --- gradients -------------------------------------------------------------------------
def _asin_grad(op: Operation, grad: Tensor) -> list:
    return [multiply(grad, rsqrt(subtract(1, square(op.inputs[0]))))]


def _acos_grad(op: Operation, grad: Tensor) -> list:
    return [negative(multiply(grad, rsqrt(subtract(1, square(op.inputs[0])))))]


def _atan_grad(op: Operation, grad: Tensor) -> list:
    return [realdiv(grad, add(1, square(op.inputs[0])))]


def _atan2_grad(op: Operation, grad: Tensor) -> list:
    y, x = op.inputs
    scale = realdiv(grad, add(square(x), square(y)))
    return [multiply(scale, x), negative(multiply(scale, y))]


def _sinh_grad(op: Operation, grad: Tensor) -> list:
    return [multiply(grad, cosh(op.inputs[0]))]


def _cosh_grad(op: Operation, grad: Tensor) -> list:
    return [multiply(grad, sinh(op.inputs[0]))]


def _asinh_grad(op: Operation, grad: Tensor) -> list:
    return [realdiv(grad, cosh(op.outputs[0]))]


def _acosh_grad(op: Operation, grad: Tensor) -> list:
    return [realdiv(grad, sinh(op.outputs[0]))]


def _atanh_grad(op: Operation, grad: Tensor) -> list:
    return [realdiv(grad, subtract(1, square(op.inputs[0])))]


def _lgamma_grad(op: Operation, grad: Tensor) -> list:
    return [multiply(grad, digamma(op.inputs[0]))]


def _digamma_grad(op: Operation, grad: Tensor) -> list:
    x = op.inputs[0]
    return [multiply(grad, polygamma(ones_like(x), x))]


def _polygamma_grad(op: Operation, grad: Tensor) -> list:
    n, x = op.inputs
    return [None, multiply(grad, polygamma(add(n, 1), x))]


def _erfc_grad(op: Operation, grad: Tensor) -> list:
    x = op.inputs[0]
    return [multiply(grad, multiply(exp(negative(square(x))), -2 / _pymath.sqrt(_pymath.pi)))]


# (type, kernel, gradient, accepted dtypes, foldable)
_UNARY: list[tuple[str, Callable, Any, tuple, bool]] = [
    ("Asin", ufunc_kernel("arcsin"), _asin_grad, FLOAT, False),
    ("Acos", ufunc_kernel("arccos"), _acos_grad, FLOAT, False),
    ("Atan", ufunc_kernel("arctan"), _atan_grad, FLOAT, False),
    ("Sinh", ufunc_kernel("sinh"), _sinh_grad, FLOAT, False),
    ("Cosh", ufunc_kernel("cosh"), _cosh_grad, FLOAT, False),
    ("Asinh", ufunc_kernel("arcsinh"), _asinh_grad, FLOAT, False),
    ("Acosh", ufunc_kernel("arccosh"), _acosh_grad, FLOAT, False),
    ("Atanh", ufunc_kernel("arctanh"), _atanh_grad, FLOAT, False),
    ("Rint", ufunc_kernel("rint"), NOT_DIFF, FLOAT, True),
    ("Lgamma", _special_kernel("Lgamma", "gammaln"), _lgamma_grad, FLOAT, False),
    ("Digamma", _special_kernel("Digamma", "digamma"), _digamma_grad, FLOAT, False),
    ("Erfc", _special_kernel("Erfc", "erfc"), _erfc_grad, FLOAT, False),
]
_BINARY: list[tuple[str, Callable, Any, tuple, bool]] = [
    ("Atan2", ufunc_kernel("arctan2"), _atan2_grad, FLOAT, False),
    ("Polygamma", _special_kernel("Polygamma", "polygamma"), _polygamma_grad, FLOAT, False),
]
for _arity, _table in ((1, _UNARY), (2, _BINARY)):
    for _type, _kernel, _grad, _dtypes, _fold in _table:
        _rule = with_arity(check_rule(*_dtypes), _arity)
        registry.register(registry.OpDef(_type, _rule, _kernel, _grad, foldable=_fold))


# --- builders --------------------------------------------------------------------------
def asin(x: Any, name: str | None = None) -> Tensor:
    """Returns the arcsine of ``x`` elementwise (``x`` in [-1, 1], else NaN)."""
    return apply_op("Asin", [x], name=name)


def acos(x: Any, name: str | None = None) -> Tensor:
    """Returns the arccosine of ``x`` elementwise (``x`` in [-1, 1], else NaN)."""
    return apply_op("Acos", [x], name=name)


def atan(x: Any, name: str | None = None) -> Tensor:
    """Returns the arctangent of ``x`` elementwise."""
    return apply_op("Atan", [x], name=name)


def atan2(y: Any, x: Any, name: str | None = None) -> Tensor:
    """Returns the angle of the point ``(x, y)`` elementwise, ``arctan(y / x)`` in the
    quadrant of its signs, with numpy broadcasting.

    Args:
        y: a floating-point tensor.
        x: a tensor of ``y``'s dtype.
        name: a name for the op.
    """
    return apply_op("Atan2", [y, x], name=name)


def sinh(x: Any, name: str | None = None) -> Tensor:
    """Returns the hyperbolic sine of ``x`` elementwise."""
    return apply_op("Sinh", [x], name=name)


def cosh(x: Any, name: str | None = None) -> Tensor:
    """Returns the hyperbolic cosine of ``x`` elementwise."""
    return apply_op("Cosh", [x], name=name)


def asinh(x: Any, name: str | None = None) -> Tensor:
    """Returns the inverse hyperbolic sine of ``x`` elementwise."""
    return apply_op("Asinh", [x], name=name)


def acosh(x: Any, name: str | None = None) -> Tensor:
    """Returns the inverse hyperbolic cosine of ``x`` elementwise (``x >= 1``, else NaN)."""
    return apply_op("Acosh", [x], name=name)


def atanh(x: Any, name: str | None = None) -> Tensor:
    """Returns the inverse hyperbolic tangent of ``x`` elementwise (``|x| < 1``)."""
    return apply_op("Atanh", [x], name=name)


def rint(x: Any, name: str | None = None) -> Tensor:
    """Returns ``x`` rounded to the nearest integer, halves to even (no gradient)."""
    return apply_op("Rint", [x], name=name)


def lgamma(x: Any, name: str | None = None) -> Tensor:
    """Returns ``log(|Gamma(x)|)`` elementwise."""
    return apply_op("Lgamma", [x], name=name)


def digamma(x: Any, name: str | None = None) -> Tensor:
    """Returns the digamma function ``d/dx lgamma(x)`` elementwise."""
    return apply_op("Digamma", [x], name=name)


def polygamma(a: Any, x: Any, name: str | None = None) -> Tensor:
    """Returns the polygamma function, the ``a``-th derivative of ``digamma``, at ``x``.

    Args:
        a: a floating-point tensor of non-negative whole numbers (no gradient flows to it).
        x: a tensor of ``a``'s dtype.
        name: a name for the op.
    """
    return apply_op("Polygamma", [a, x], name=name)


def erfc(x: Any, name: str | None = None) -> Tensor:
    """Returns the complementary error function ``1 - erf(x)`` elementwise, accurate where
    ``erf(x)`` is close to 1."""
    return apply_op("Erfc", [x], name=name)
