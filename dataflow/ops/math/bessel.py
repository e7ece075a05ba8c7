"""Bessel functions (TF's ``BesselI0 BesselI0e BesselI1 BesselI1e BesselJ0 BesselJ1
BesselK0 BesselK0e BesselK1 BesselK1e BesselY0 BesselY1``): ``scipy.special``'s ufuncs
(``cupyx.scipy.special``'s on cupy) in the input's dtype, one row of ``_UNARY`` each.

The ``e`` variants are exponentially scaled (``i0e(x) = exp(-|x|) I0(x)``,
``k0e(x) = exp(x) K0(x)``), finite where the plain ones overflow. Gradients are TF's,
from graph ops (second order works): ``I0' = I1``, ``J0' = -J1``, ``K0' = -K1``,
``Y0' = -Y1``; the order-one derivatives ``f1' = f0 - f1 / x`` (``I1' = I0 - I1/x``,
``K1' = -K0 - K1/x``), taken as ``1/2`` at ``x = 0`` for ``I1``/``I1e``/``J1`` as TF
does; and the scaled ones by the product rule.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...framework import errors, registry
from ...framework.graph import Operation, Tensor
from ..array.shapes import ones_like
from ..build import apply_op
from ..rules import with_arity
from .arith import (
    add,
    multiply,
    negative,
    realdiv,
    reciprocal,
    sign,
    special_module,
    subtract,
)
from .compare import check_rule, equal, select

_REAL = (lambda d: d.is_floating, "floating-point")


def special_kernel(op_type: str, fn_name: str) -> Callable[[Any, dict], Any]:
    """Kernel factory for the ufunc ``scipy.special.<fn_name>`` (``cupyx``'s on cupy),
    cast back to the inputs' dtype; ``UnimplementedError`` where the namespace has no
    such function."""

    def factory(ctx: Any, attrs: dict) -> Any:
        xp = ctx.xp
        special = special_module(xp)
        fn = getattr(special, fn_name, None) if special is not None else None
        if fn is None:
            raise errors.UnimplementedError(
                None, None, f"'{op_type}' needs scipy.special.{fn_name} on this device"
            )
        asarray = xp.asarray

        def run(*xs: Any) -> Any:
            # scipy widens float16 (and answers numpy arrays to a stand-in namespace).
            out = fn(*xs)
            return out if out.dtype == xs[0].dtype else asarray(out, dtype=xs[0].dtype)

        return run

    factory.__name__ = f"_{fn_name}_kernel"
    return factory


def _at_zero_half(x: Tensor, value: Callable[[Tensor], Tensor]) -> Tensor:
    """``value(x)`` with ``x = 0`` replaced by 1 inside and the result by ``1/2`` there."""
    zero = equal(x, 0)
    ones = ones_like(x)
    safe = select(zero, ones, x)
    return select(zero, multiply(ones, 0.5), value(safe))


def _i0_grad(op: Operation, grad: Tensor) -> list:
    return [multiply(grad, bessel_i1(op.inputs[0]))]


def _i0e_grad(op: Operation, grad: Tensor) -> list:
    x, y = op.inputs[0], op.outputs[0]
    return [multiply(grad, subtract(bessel_i1e(x), multiply(sign(x), y)))]


def _i1_grad(op: Operation, grad: Tensor) -> list:
    x = op.inputs[0]
    slope = _at_zero_half(x, lambda s: subtract(bessel_i0(s), realdiv(bessel_i1(s), s)))
    return [multiply(grad, slope)]


def _i1e_grad(op: Operation, grad: Tensor) -> list:
    x = op.inputs[0]

    def slope(s: Tensor) -> Tensor:
        return subtract(bessel_i0e(s), multiply(bessel_i1e(s), add(sign(s), reciprocal(s))))

    return [multiply(grad, _at_zero_half(x, slope))]


def _j0_grad(op: Operation, grad: Tensor) -> list:
    return [negative(multiply(grad, bessel_j1(op.inputs[0])))]


def _j1_grad(op: Operation, grad: Tensor) -> list:
    x = op.inputs[0]
    slope = _at_zero_half(x, lambda s: subtract(bessel_j0(s), realdiv(bessel_j1(s), s)))
    return [multiply(grad, slope)]


def _k0_grad(op: Operation, grad: Tensor) -> list:
    return [negative(multiply(grad, bessel_k1(op.inputs[0])))]


def _k0e_grad(op: Operation, grad: Tensor) -> list:
    x, y = op.inputs[0], op.outputs[0]
    return [multiply(grad, subtract(y, bessel_k1e(x)))]


def _k1_grad(op: Operation, grad: Tensor) -> list:
    x, y = op.inputs[0], op.outputs[0]
    return [negative(multiply(grad, add(bessel_k0(x), realdiv(y, x))))]


def _k1e_grad(op: Operation, grad: Tensor) -> list:
    x, y = op.inputs[0], op.outputs[0]
    slope = subtract(multiply(y, subtract(1.0, reciprocal(x))), bessel_k0e(x))
    return [multiply(grad, slope)]


def _y0_grad(op: Operation, grad: Tensor) -> list:
    return [negative(multiply(grad, bessel_y1(op.inputs[0])))]


def _y1_grad(op: Operation, grad: Tensor) -> list:
    x, y = op.inputs[0], op.outputs[0]
    return [multiply(grad, subtract(bessel_y0(x), realdiv(y, x)))]


# (type, scipy.special name, gradient)
_UNARY: list[tuple[str, str, Any]] = [
    ("BesselI0", "i0", _i0_grad),
    ("BesselI0e", "i0e", _i0e_grad),
    ("BesselI1", "i1", _i1_grad),
    ("BesselI1e", "i1e", _i1e_grad),
    ("BesselJ0", "j0", _j0_grad),
    ("BesselJ1", "j1", _j1_grad),
    ("BesselK0", "k0", _k0_grad),
    ("BesselK0e", "k0e", _k0e_grad),
    ("BesselK1", "k1", _k1_grad),
    ("BesselK1e", "k1e", _k1e_grad),
    ("BesselY0", "y0", _y0_grad),
    ("BesselY1", "y1", _y1_grad),
]
for _type, _fn, _grad in _UNARY:
    _rule = with_arity(check_rule(*_REAL), 1)
    registry.register(registry.OpDef(_type, _rule, special_kernel(_type, _fn), _grad))


def bessel_i0(x: Any, name: str | None = None) -> Tensor:
    """The modified Bessel function of the first kind of order 0, ``I0(x)``."""
    return apply_op("BesselI0", [x], name=name)


def bessel_i0e(x: Any, name: str | None = None) -> Tensor:
    """``exp(-|x|) I0(x)``, finite for large ``|x|``."""
    return apply_op("BesselI0e", [x], name=name)


def bessel_i1(x: Any, name: str | None = None) -> Tensor:
    """The modified Bessel function of the first kind of order 1, ``I1(x)``."""
    return apply_op("BesselI1", [x], name=name)


def bessel_i1e(x: Any, name: str | None = None) -> Tensor:
    """``exp(-|x|) I1(x)``, finite for large ``|x|``."""
    return apply_op("BesselI1e", [x], name=name)


def bessel_j0(x: Any, name: str | None = None) -> Tensor:
    """The Bessel function of the first kind of order 0, ``J0(x)``."""
    return apply_op("BesselJ0", [x], name=name)


def bessel_j1(x: Any, name: str | None = None) -> Tensor:
    """The Bessel function of the first kind of order 1, ``J1(x)``."""
    return apply_op("BesselJ1", [x], name=name)


def bessel_k0(x: Any, name: str | None = None) -> Tensor:
    """The modified Bessel function of the second kind of order 0, ``K0(x)`` (``x > 0``)."""
    return apply_op("BesselK0", [x], name=name)


def bessel_k0e(x: Any, name: str | None = None) -> Tensor:
    """``exp(x) K0(x)``."""
    return apply_op("BesselK0e", [x], name=name)


def bessel_k1(x: Any, name: str | None = None) -> Tensor:
    """The modified Bessel function of the second kind of order 1, ``K1(x)`` (``x > 0``)."""
    return apply_op("BesselK1", [x], name=name)


def bessel_k1e(x: Any, name: str | None = None) -> Tensor:
    """``exp(x) K1(x)``."""
    return apply_op("BesselK1e", [x], name=name)


def bessel_y0(x: Any, name: str | None = None) -> Tensor:
    """The Bessel function of the second kind of order 0, ``Y0(x)`` (``x > 0``)."""
    return apply_op("BesselY0", [x], name=name)


def bessel_y1(x: Any, name: str | None = None) -> Tensor:
    """The Bessel function of the second kind of order 1, ``Y1(x)`` (``x > 0``)."""
    return apply_op("BesselY1", [x], name=name)
