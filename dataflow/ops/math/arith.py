"""Elementwise arithmetic: ``AddN`` and the binary and unary math primitives, with their
gradients (TF1's ``math_ops``, the arithmetic part).

Each op type is one record: shape/dtype rule, kernel (through ``ctx.xp``; most kernels
are the namespace's ufunc itself, see ``compare.ufunc_kernel``) and gradient rule side by
side. In file order:

* ``AddN``, the sum of a list of tensors of one shape (the gradient pass sums fan-out
  with it);
* binary arithmetic (``AddV2 Sub Mul RealDiv DivNoNan FloorDiv FloorMod TruncateDiv
  TruncateMod Pow Maximum Minimum SquaredDifference``); the integer divisions fail on a
  zero divisor as TF1's do (numpy would give 0);
* unary math (``Neg Abs Sign Square Sqrt Rsqrt Exp Expm1 Log Log1p Sin Cos Tan Tanh
  Sigmoid Erf Floor Ceil Round Reciprocal``).

The kernels that are more than a ufunc (the divisions, ``Sigmoid``, ``Erf``, ...) are
in ``elementwise_kernels``, below this module.

Binary and unary ops share one module because their gradient rules are built from each
other (``Sub``'s from ``Neg``, ``Exp``'s from ``Mul``, ``Pow``'s from ``Log``); the
comparisons, ``Select`` and ``Cast`` these rules also use come from ``compare``.
Builders over these primitives with no record of their own (``truediv``, ``div``,
``clip_by_value``, the ``Tensor`` operators) are in ``composite``.

Dtype rules follow TF1: the inputs of an n-ary op must share one dtype (a mismatch is a
``TypeError`` at build time); Python numbers take the dtype of the tensor inputs
(``apply_op``'s hint). ``AddV2 Sub Mul RealDiv DivNoNan Pow SquaredDifference Neg
Square`` and the floating-point unary ops take complex64/complex128 as TF1's do. Gradient
rules return full-shape gradients: the gradient pass undoes broadcasting once
(``SumToShape``), so ``Add``'s rule is ``[grad, grad]``; for complex inputs they follow
TF's convention (``grad * conj(f'(z))``, see ``conj_if_complex``).
"""

from __future__ import annotations

import math as _pymath
import operator
from collections.abc import Callable, Sequence
from typing import Any

from ...framework import dtypes, registry
from ...framework.graph import Operation, Tensor
from ..array.shapes import ones_like, zeros_like
from ..build import apply_op
from ..rules import broadcast, is_float, is_int_or_float, require_same_dtype, with_arity
from .compare import (
    FLOAT,
    NOT_DIFF,
    NUMERIC,
    REAL_FLOAT,
    check_rule,
    greater,
    greater_equal,
    less_equal,
    not_equal,
    operator_kernel,
    select,
    ufunc_kernel,
)
from .elementwise_kernels import (
    div_no_nan_kernel,
    dividing_kernel,
    erf_kernel,
    rsqrt_kernel,
    squared_difference_kernel,
    truncate_div_kernel,
)
from .elementwise_kernels import keep_dtype as keep_dtype
from .elementwise_kernels import sigmoid_kernel as sigmoid_kernel
from .elementwise_kernels import special_module as special_module

# --- AddN ------------------------------------------------------------------------------


def _infer_add_n(op: Operation) -> list:
    dtype = require_same_dtype(op)
    shape = op.inputs[0].shape
    for t in op.inputs[1:]:
        if not shape.is_compatible_with(t.shape):
            raise ValueError(f"AddN inputs must all have one shape, got {shape} and {t.shape}")
        shape = shape.merge_with(t.shape)
    broadcast(op)
    return [(dtype, shape)]


def _add_n_kernel(ctx: Any, attrs: dict) -> Any:
    add = operator.add  # numpy's scalar fast path on scalars; ``xp.add`` on arrays

    def add_n(first: Any, *rest: Any) -> Any:
        out = first
        for x in rest:
            out = add(out, x)
        return out

    return add_n


def _add_n_grad(op: Operation, grad: Tensor) -> list:
    return [grad] * len(op.inputs)


registry.register(registry.OpDef("AddN", _infer_add_n, _add_n_kernel, _add_n_grad, foldable=True))


def add_n(inputs: Sequence[Any], name: str | None = None) -> Tensor:
    """Sums a list of tensors of one shape and dtype."""
    inputs = list(inputs)
    if not inputs:
        raise ValueError("add_n needs at least one input")
    if len(inputs) == 1 and name is None:
        return apply_op("Identity", inputs)
    if any(getattr(t, "dtype", None) == dtypes.variant for t in inputs):
        # Gradients of tensor lists add entry by entry (ops/control/tensor_list.py).
        return apply_op("TensorListAddN", inputs, name=name)
    return apply_op("AddN", inputs, name=name)


# --- complex inputs --------------------------------------------------------------------
# TF1's ``+ - * / ** Neg Square`` take complex64 and complex128 too; the comparisons,
# ``Maximum``/``Minimum`` and the integer-style divisions do not.
NUMBER = (
    lambda d: is_int_or_float(d) or is_float(d),
    "integer, floating-point or complex",
)


def conj_if_complex(t: Tensor) -> Tensor:
    """``conj(t)`` for a complex tensor, ``t`` itself otherwise.

    TF's gradient of a real loss ``L`` with respect to a complex ``z`` is ``dL/d(Re z) +
    i dL/d(Im z)``; for a holomorphic ``f`` that makes ``f``'s rule ``grad * conj(f'(z))``,
    so every rule below conjugates the derivative it multiplies ``grad`` by. ``Conj``'s
    record is ``complex_parts``'s (above this module: the op is looked up by type when a
    gradient is built, after the whole family is registered).
    """
    return apply_op("Conj", [t]) if t.dtype.is_complex else t


def times_conj(grad: Tensor, derivative: Tensor) -> Tensor:
    """``grad * conj(derivative)``: the chain rule of an elementwise op, complex too."""
    return multiply(grad, conj_if_complex(derivative))


# --- binary arithmetic -----------------------------------------------------------------
def _add_grad(op: Operation, grad: Tensor) -> list:
    return [grad, grad]


def _sub_grad(op: Operation, grad: Tensor) -> list:
    return [grad, negative(grad)]


def _mul_grad(op: Operation, grad: Tensor) -> list:
    x, y = op.inputs
    return [times_conj(grad, y), multiply(conj_if_complex(x), grad)]


def _real_div_grad(op: Operation, grad: Tensor) -> list:
    x, y = (conj_if_complex(t) for t in op.inputs)
    return [realdiv(grad, y), multiply(grad, realdiv(realdiv(negative(x), y), y))]


def _div_no_nan_grad(op: Operation, grad: Tensor) -> list:
    x, y = (conj_if_complex(t) for t in op.inputs)
    return [div_no_nan(grad, y), multiply(grad, div_no_nan(div_no_nan(negative(x), y), y))]


def _floor_mod_grad(op: Operation, grad: Tensor) -> list:
    # x mod y = x - floor(x / y) * y, with floor(x / y) piecewise constant.
    x, y = op.inputs
    return [grad, multiply(grad, negative(floordiv(x, y)))]


def _pow_grad(op: Operation, grad: Tensor) -> list:
    x, y = (conj_if_complex(t) for t in op.inputs)
    z = conj_if_complex(op.outputs[0])
    gx = multiply(grad, multiply(y, pow(x, subtract(y, 1))))
    # d(x^y)/dy = x^y log(x), taken as 0 where x <= 0 (as TF does; where x == 0 for
    # complex x, whose log is defined off the origin).
    positive = not_equal(x, 0) if x.dtype.is_complex else greater(x, 0)
    safe_x = select(positive, x, ones_like(x))
    log_x = select(positive, log(safe_x), zeros_like(x))
    gy = multiply(grad, multiply(z, log_x))
    return [gx, gy]


def _maximum_grad(op: Operation, grad: Tensor) -> list:
    x, y = op.inputs
    return _min_max_grad(greater_equal(x, y), grad)


def _minimum_grad(op: Operation, grad: Tensor) -> list:
    x, y = op.inputs
    return _min_max_grad(less_equal(x, y), grad)


def _min_max_grad(x_wins: Tensor, grad: Tensor) -> list:
    """Ties go to ``x``, as in TF."""
    zeros = zeros_like(grad)
    return [select(x_wins, grad, zeros), select(x_wins, zeros, grad)]


def _squared_difference_grad(op: Operation, grad: Tensor) -> list:
    x, y = op.inputs
    gx = multiply(multiply(grad, 2), subtract(x, y))
    return [gx, negative(gx)]


def _truncate_mod_grad(op: Operation, grad: Tensor) -> list:
    # x tmod y = x - trunc(x / y) * y, with trunc(x / y) piecewise constant.
    x, y = op.inputs
    return [grad, multiply(grad, negative(truncatediv(x, y)))]


# (type, kernel, gradient, accepted dtypes, foldable)
_BINARY: list[tuple[str, Callable, Any, tuple, bool]] = [
    ("AddV2", operator_kernel(operator.add), _add_grad, NUMBER, True),
    ("Sub", operator_kernel(operator.sub), _sub_grad, NUMBER, True),
    ("Mul", operator_kernel(operator.mul), _mul_grad, NUMBER, True),
    ("RealDiv", ufunc_kernel("true_divide"), _real_div_grad, FLOAT, False),
    ("DivNoNan", div_no_nan_kernel, _div_no_nan_grad, FLOAT, False),
    ("FloorDiv", dividing_kernel("floor_divide"), registry.NOT_DIFFERENTIABLE, NUMERIC, True),
    ("FloorMod", dividing_kernel("mod"), _floor_mod_grad, NUMERIC, True),
    ("TruncateDiv", truncate_div_kernel, registry.NOT_DIFFERENTIABLE, NUMERIC, True),
    ("TruncateMod", dividing_kernel("fmod"), _truncate_mod_grad, NUMERIC, True),
    ("Pow", ufunc_kernel("power"), _pow_grad, NUMBER, False),
    ("Maximum", ufunc_kernel("maximum"), _maximum_grad, NUMERIC, True),
    ("Minimum", ufunc_kernel("minimum"), _minimum_grad, NUMERIC, True),
    ("SquaredDifference", squared_difference_kernel, _squared_difference_grad, NUMBER, False),
]
# The ops whose kernel is one numpy ufunc of inputs and output of one dtype (by op type),
# so that a large output can be written into a kept array (``OpDef.ufunc``).
_UFUNCS = {
    "AddV2": "add",
    "Sub": "subtract",
    "Mul": "multiply",
    "RealDiv": "true_divide",
    "Maximum": "maximum",
    "Minimum": "minimum",
    "Neg": "negative",
    "Abs": "absolute",
    "Square": "square",
    "Sqrt": "sqrt",
    "Exp": "exp",
    "Log": "log",
    "Tanh": "tanh",
}
for _type, _kernel, _grad, _dtypes, _fold in _BINARY:
    _rule = with_arity(check_rule(*_dtypes), 2)
    registry.register(
        registry.OpDef(_type, _rule, _kernel, _grad, foldable=_fold, ufunc=_UFUNCS.get(_type))
    )
# Elementwise two-input ops: their output has the broadcast shape of their inputs.
BINARY_ELEMENTWISE = frozenset(entry[0] for entry in _BINARY)


def add(x: Any, y: Any, name: str | None = None) -> Tensor:
    """Returns ``x + y`` elementwise, with numpy broadcasting.

    Args:
        x: a tensor (or value convertible to one) of a numeric dtype.
        y: a tensor of the same dtype as ``x`` (Python numbers take ``x``'s dtype).
        name: optional op name.

    Raises:
        TypeError: ``x`` and ``y`` have different dtypes.
        ValueError: the shapes do not broadcast.
    """
    return apply_op("AddV2", [x, y], name=name or "Add")


def subtract(x: Any, y: Any, name: str | None = None) -> Tensor:
    """Returns ``x - y`` elementwise, with numpy broadcasting."""
    return apply_op("Sub", [x, y], name=name)


def multiply(x: Any, y: Any, name: str | None = None) -> Tensor:
    """Returns ``x * y`` elementwise, with numpy broadcasting."""
    return apply_op("Mul", [x, y], name=name)


def realdiv(x: Any, y: Any, name: str | None = None) -> Tensor:
    """Returns ``x / y`` for floating-point tensors (no integer conversion)."""
    return apply_op("RealDiv", [x, y], name=name)


def div_no_nan(x: Any, y: Any, name: str | None = None) -> Tensor:
    """Returns ``x / y``, or 0 where ``y`` is 0 (even when ``x`` is 0, inf or nan)."""
    return apply_op("DivNoNan", [x, y], name=name or "div_no_nan")


def floordiv(x: Any, y: Any, name: str | None = None) -> Tensor:
    """Returns ``floor(x / y)`` elementwise (Python's ``//`` semantics).

    Raises (at run time):
        errors.InvalidArgumentError: an integer ``y`` holds a zero.
    """
    return apply_op("FloorDiv", [x, y], name=name or "floordiv")


def floormod(x: Any, y: Any, name: str | None = None) -> Tensor:
    """Returns ``x - floor(x / y) * y`` (Python's ``%``: the sign of ``y``).

    Raises (at run time):
        errors.InvalidArgumentError: an integer ``y`` holds a zero.
    """
    return apply_op("FloorMod", [x, y], name=name)


mod = floormod


def truncatediv(x: Any, y: Any, name: str | None = None) -> Tensor:
    """Returns ``x / y`` rounded toward zero (C's integer division).

    Raises (at run time):
        errors.InvalidArgumentError: an integer ``y`` holds a zero.
    """
    return apply_op("TruncateDiv", [x, y], name=name)


def truncatemod(x: Any, y: Any, name: str | None = None) -> Tensor:
    """Returns ``x - truncatediv(x, y) * y`` (C's ``%`` and ``fmod``: the sign of ``x``).

    Raises (at run time):
        errors.InvalidArgumentError: an integer ``y`` holds a zero.
    """
    return apply_op("TruncateMod", [x, y], name=name)


def pow(x: Any, y: Any, name: str | None = None) -> Tensor:
    """Returns ``x ** y`` elementwise, with numpy broadcasting."""
    return apply_op("Pow", [x, y], name=name)


def maximum(x: Any, y: Any, name: str | None = None) -> Tensor:
    """Returns the elementwise maximum (gradient ties go to ``x``)."""
    return apply_op("Maximum", [x, y], name=name)


def minimum(x: Any, y: Any, name: str | None = None) -> Tensor:
    """Returns the elementwise minimum (gradient ties go to ``x``)."""
    return apply_op("Minimum", [x, y], name=name)


def squared_difference(x: Any, y: Any, name: str | None = None) -> Tensor:
    """Returns ``(x - y) * (x - y)`` elementwise."""
    return apply_op("SquaredDifference", [x, y], name=name)


# --- unary math ------------------------------------------------------------------------
def _neg_grad(op: Operation, grad: Tensor) -> list:
    return [negative(grad)]


def _abs_grad(op: Operation, grad: Tensor) -> list:
    return [multiply(grad, sign(op.inputs[0]))]


def _sign_grad(op: Operation, grad: Tensor) -> list:
    return [zeros_like(op.inputs[0])]


def _square_grad(op: Operation, grad: Tensor) -> list:
    return [times_conj(grad, multiply(op.inputs[0], 2))]


def _sqrt_grad(op: Operation, grad: Tensor) -> list:
    return [realdiv(multiply(grad, 0.5), conj_if_complex(op.outputs[0]))]


def _rsqrt_grad(op: Operation, grad: Tensor) -> list:
    y = op.outputs[0]
    return [times_conj(multiply(grad, -0.5), multiply(y, square(y)))]


def _exp_grad(op: Operation, grad: Tensor) -> list:
    return [times_conj(grad, op.outputs[0])]


def _expm1_grad(op: Operation, grad: Tensor) -> list:
    return [times_conj(grad, exp(op.inputs[0]))]


def _log_grad(op: Operation, grad: Tensor) -> list:
    return [times_conj(grad, reciprocal(op.inputs[0]))]


def _log1p_grad(op: Operation, grad: Tensor) -> list:
    return [times_conj(grad, reciprocal(add(op.inputs[0], 1)))]


def _sin_grad(op: Operation, grad: Tensor) -> list:
    return [times_conj(grad, cos(op.inputs[0]))]


def _cos_grad(op: Operation, grad: Tensor) -> list:
    return [negative(times_conj(grad, sin(op.inputs[0])))]


def _tan_grad(op: Operation, grad: Tensor) -> list:
    return [times_conj(grad, square(reciprocal(cos(op.inputs[0]))))]


def _tanh_grad(op: Operation, grad: Tensor) -> list:
    y = op.outputs[0]
    return [times_conj(grad, subtract(1, square(y)))]


def _sigmoid_grad(op: Operation, grad: Tensor) -> list:
    y = op.outputs[0]
    return [times_conj(grad, multiply(y, subtract(1, y)))]


def _erf_grad(op: Operation, grad: Tensor) -> list:
    x = op.inputs[0]
    return [multiply(grad, multiply(exp(negative(square(x))), 2 / _pymath.sqrt(_pymath.pi)))]


def _reciprocal_grad(op: Operation, grad: Tensor) -> list:
    return [negative(times_conj(grad, square(op.outputs[0])))]


# (type, kernel, gradient, accepted dtypes, foldable)
_UNARY: list[tuple[str, Callable, Any, tuple, bool]] = [
    ("Neg", operator_kernel(operator.neg), _neg_grad, NUMBER, True),
    ("Abs", ufunc_kernel("abs"), _abs_grad, NUMERIC, True),
    ("Sign", ufunc_kernel("sign"), _sign_grad, NUMERIC, True),
    ("Square", ufunc_kernel("square"), _square_grad, NUMBER, True),
    ("Sqrt", ufunc_kernel("sqrt"), _sqrt_grad, FLOAT, False),
    ("Rsqrt", rsqrt_kernel, _rsqrt_grad, FLOAT, False),
    ("Exp", ufunc_kernel("exp"), _exp_grad, FLOAT, False),
    ("Expm1", ufunc_kernel("expm1"), _expm1_grad, FLOAT, False),
    ("Log", ufunc_kernel("log"), _log_grad, FLOAT, False),
    ("Log1p", ufunc_kernel("log1p"), _log1p_grad, FLOAT, False),
    ("Sin", ufunc_kernel("sin"), _sin_grad, FLOAT, False),
    ("Cos", ufunc_kernel("cos"), _cos_grad, FLOAT, False),
    ("Tan", ufunc_kernel("tan"), _tan_grad, FLOAT, False),
    ("Tanh", ufunc_kernel("tanh"), _tanh_grad, FLOAT, False),
    ("Sigmoid", sigmoid_kernel, _sigmoid_grad, FLOAT, False),
    ("Erf", erf_kernel, _erf_grad, REAL_FLOAT, False),
    ("Floor", ufunc_kernel("floor"), NOT_DIFF, REAL_FLOAT, True),
    ("Ceil", ufunc_kernel("ceil"), NOT_DIFF, REAL_FLOAT, True),
    ("Round", ufunc_kernel("round"), NOT_DIFF, NUMERIC, True),
    ("Reciprocal", ufunc_kernel("reciprocal"), _reciprocal_grad, FLOAT, False),
]
for _type, _kernel, _grad, _dtypes, _fold in _UNARY:
    _rule = with_arity(check_rule(*_dtypes), 1)
    registry.register(
        registry.OpDef(_type, _rule, _kernel, _grad, foldable=_fold, ufunc=_UFUNCS.get(_type))
    )
# Elementwise one-input ops: their output has their input's shape.
UNARY_ELEMENTWISE = frozenset(entry[0] for entry in _UNARY)


def negative(x: Any, name: str | None = None) -> Tensor:
    """Returns ``-x`` elementwise."""
    return apply_op("Neg", [x], name=name)


def abs(x: Any, name: str | None = None) -> Tensor:
    """Returns ``|x|`` elementwise."""
    return apply_op("Abs", [x], name=name)


def sign(x: Any, name: str | None = None) -> Tensor:
    """Returns -1, 0 or 1 by the sign of ``x`` (its gradient is zero)."""
    return apply_op("Sign", [x], name=name)


def square(x: Any, name: str | None = None) -> Tensor:
    """Returns ``x * x`` elementwise."""
    return apply_op("Square", [x], name=name)


def sqrt(x: Any, name: str | None = None) -> Tensor:
    """Returns the square root of ``x`` elementwise (floating-point ``x``)."""
    return apply_op("Sqrt", [x], name=name)


def rsqrt(x: Any, name: str | None = None) -> Tensor:
    """Returns ``1 / sqrt(x)`` elementwise."""
    return apply_op("Rsqrt", [x], name=name)


def exp(x: Any, name: str | None = None) -> Tensor:
    """Returns ``e ** x`` elementwise."""
    return apply_op("Exp", [x], name=name)


def expm1(x: Any, name: str | None = None) -> Tensor:
    """Returns ``exp(x) - 1`` elementwise, accurate for small ``x``."""
    return apply_op("Expm1", [x], name=name)


def log(x: Any, name: str | None = None) -> Tensor:
    """Returns the natural logarithm of ``x`` elementwise."""
    return apply_op("Log", [x], name=name)


def log1p(x: Any, name: str | None = None) -> Tensor:
    """Returns ``log(1 + x)`` elementwise, accurate for small ``x``."""
    return apply_op("Log1p", [x], name=name)


def sin(x: Any, name: str | None = None) -> Tensor:
    """Returns ``sin(x)`` elementwise."""
    return apply_op("Sin", [x], name=name)


def cos(x: Any, name: str | None = None) -> Tensor:
    """Returns ``cos(x)`` elementwise."""
    return apply_op("Cos", [x], name=name)


def tan(x: Any, name: str | None = None) -> Tensor:
    """Returns ``tan(x)`` elementwise."""
    return apply_op("Tan", [x], name=name)


def tanh(x: Any, name: str | None = None) -> Tensor:
    """Returns the hyperbolic tangent of ``x`` elementwise."""
    return apply_op("Tanh", [x], name=name)


def sigmoid(x: Any, name: str | None = None) -> Tensor:
    """Returns ``1 / (1 + exp(-x))`` elementwise, computed without overflow."""
    return apply_op("Sigmoid", [x], name=name)


def erf(x: Any, name: str | None = None) -> Tensor:
    """Returns the Gauss error function of ``x`` elementwise."""
    return apply_op("Erf", [x], name=name)


def floor(x: Any, name: str | None = None) -> Tensor:
    """Returns the largest integer not greater than ``x`` (same float dtype)."""
    return apply_op("Floor", [x], name=name)


def ceil(x: Any, name: str | None = None) -> Tensor:
    """Returns the smallest integer not less than ``x`` (same float dtype)."""
    return apply_op("Ceil", [x], name=name)


def round(x: Any, name: str | None = None) -> Tensor:
    """Rounds half to even (banker's rounding), as TF does."""
    return apply_op("Round", [x], name=name)


def reciprocal(x: Any, name: str | None = None) -> Tensor:
    """Returns ``1 / x`` elementwise."""
    return apply_op("Reciprocal", [x], name=name)


del _type, _kernel, _grad, _dtypes, _fold
