"""The kernels of the elementwise arithmetic records that are more than a namespace ufunc
(``arith`` registers them): ``SquaredDifference``; the divisions, which fail on an integer
zero divisor as TF1's do where numpy gives 0 (``FloorDiv FloorMod TruncateDiv TruncateMod
DivNoNan``); ``Rsqrt``; ``Sigmoid`` and ``Erf``, which use ``scipy.special`` when it is
installed (complex sigmoids use ``exp``); and the two ``scipy.special`` helpers the
special-function modules share (``special_module``, ``keep_dtype``).

Every kernel factory takes ``(ctx, attrs)`` and works through ``ctx.xp``, so CuPy works.
"""

from __future__ import annotations

import math as _pymath
from collections.abc import Callable
from typing import Any

from ...framework import errors


# --- scipy helpers --------------------------------------------------------------------
def special_module(xp: Any) -> Any:
    """``scipy.special`` for numpy (``cupyx.scipy.special`` for cupy), or ``None``."""
    try:
        if getattr(xp, "__name__", "").startswith("cupy"):
            import cupyx.scipy.special as special
        else:
            import scipy.special as special
    except ImportError:
        return None
    return special


def keep_dtype(fn: Callable, xp: Any) -> Callable:
    """Wraps ``fn`` so its result has the dtype of its input (scipy widens float16)."""

    def run(x: Any) -> Any:
        out = fn(x)
        return out if out.dtype == x.dtype else xp.asarray(out, dtype=x.dtype)

    return run


def squared_difference_kernel(ctx: Any, attrs: dict) -> Any:
    xp = ctx.xp

    def squared_difference(x: Any, y: Any) -> Any:
        d = xp.subtract(x, y)
        # Complex: |x - y|^2 (TF's ``(x - y) * conj(x - y)``), with a zero imaginary part.
        return d * xp.conj(d) if d.dtype.kind == "c" else xp.square(d)

    return squared_difference


def refuse_integer_zero(xp: Any, y: Any) -> None:
    """TF1 fails an integer division by zero, where numpy gives 0 (with a warning that
    steps silence); floating-point division keeps its IEEE inf and nan."""
    if y.dtype.kind in "iu" and not xp.all(y):
        raise errors.InvalidArgumentError(None, None, "Integer division by zero")


def dividing_kernel(ufunc_name: str) -> Callable[[Any, dict], Any]:
    """Kernel factory: the namespace's ufunc, refusing an integer division by zero."""

    def factory(ctx: Any, attrs: dict) -> Any:
        xp = ctx.xp
        fn = getattr(xp, ufunc_name)

        def divide(x: Any, y: Any) -> Any:
            refuse_integer_zero(xp, y)
            return fn(x, y)

        return divide

    factory.__name__ = f"_{ufunc_name}_kernel"
    return factory


def truncate_div_kernel(ctx: Any, attrs: dict) -> Any:
    xp = ctx.xp

    def truncate_div(x: Any, y: Any) -> Any:
        refuse_integer_zero(xp, y)
        if x.dtype.kind not in "iu":
            return xp.trunc(xp.true_divide(x, y))
        # Exact for integers: floor, plus one where the quotient is negative and inexact.
        q = xp.floor_divide(x, y)
        return xp.where((xp.remainder(x, y) != 0) & ((x < 0) != (y < 0)), q + 1, q)

    return truncate_div


def div_no_nan_kernel(ctx: Any, attrs: dict) -> Any:
    xp = ctx.xp

    def div_no_nan(x: Any, y: Any) -> Any:
        zero = y == 0
        quotient = xp.true_divide(x, xp.where(zero, 1, y))
        return xp.where(zero, 0, quotient)

    return div_no_nan


def rsqrt_kernel(ctx: Any, attrs: dict) -> Any:
    xp = ctx.xp
    return lambda x: xp.reciprocal(xp.sqrt(x))


def sigmoid_kernel(ctx: Any, attrs: dict) -> Any:
    xp = ctx.xp
    special = special_module(xp)
    expit = None if special is None else keep_dtype(special.expit, xp)

    def sigmoid(x: Any) -> Any:
        if x.dtype.kind == "c":  # scipy's expit is real only; TF takes complex too
            return 1 / (1 + xp.exp(-x))
        if expit is not None:
            return expit(x)
        # exp of -|x| never overflows; both branches are accurate in relative terms.
        e = xp.exp(-xp.abs(x))
        return xp.where(x >= 0, 1 / (1 + e), e / (1 + e))

    return sigmoid


def erf_kernel(ctx: Any, attrs: dict) -> Any:
    xp = ctx.xp
    special = special_module(xp)
    if special is not None:
        return keep_dtype(special.erf, xp)
    erf_object = xp.frompyfunc(_pymath.erf, 1, 1)  # without scipy: exact but slow
    return lambda x: xp.asarray(erf_object(x), dtype=x.dtype)
