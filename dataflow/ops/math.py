"""Elementwise math, reductions, and their gradients (TF1's ``math_ops``).

Each op type is one record: shape/dtype rule, numpy kernel (through ``ctx.xp``) and
gradient rule side by side. The families, in file order:

* binary arithmetic (``AddV2 Sub Mul RealDiv DivNoNan FloorDiv FloorMod Pow Maximum
  Minimum SquaredDifference``) and unary math (``Neg Abs Sign Square Sqrt Rsqrt Exp
  Expm1 Log Log1p Sin Cos Tan Tanh Sigmoid Erf Floor Ceil Round Reciprocal``);
* comparisons, logical ops and float classification (``Less ... LogicalAnd ...
  IsFinite``);
* ``Select`` (three-argument ``where``), ``Where`` (indices of true elements), ``Cast``;
* reductions (``Sum Mean Max Min Prod All Any``), ``ArgMax``/``ArgMin``, ``Cumsum``,
  and ``BroadcastReduced``, the adjoint of a reduction that their gradients share;
* composites over those primitives (``truediv``, ``clip_by_value``,
  ``reduce_logsumexp``, ``reduce_variance``, ``logical_xor``, ...), which have no kernel
  or gradient of their own;
* the ``Tensor`` operator overloads (``x + 1``, ``-x``, ``x < y``, ``a & b``, ...).

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

from __future__ import annotations

import builtins
import math as _pymath
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..framework import dtypes, registry
from ..framework.graph import Operation, Tensor, convert_to_tensor, register_operator
from ..framework.scopes import name_scope
from ..framework.tensor_shape import TensorShape
from ..framework.tensor_util import constant_shape, constant_value
from .array import ones_like, zeros_like
from .array import shape as _shape_op
from .build import apply_op, convert_inputs
from .constant import constant
from .control import stop_gradient
from .rules import broadcast, is_bool, is_float, is_int_or_float, require_same_dtype

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
    add = ctx.xp.add

    def add_n(first: Any, *rest: Any) -> Any:
        out = first
        for x in rest:
            out = add(out, x)
        return out

    return add_n


def _add_n_grad(op: Operation, grad: Tensor) -> list:
    return [grad] * len(op.inputs)


registry.register(registry.OpDef("AddN", _infer_add_n, _add_n_kernel, _add_n_grad,
                                 foldable=True))


def add_n(inputs: Sequence[Any], name: str | None = None) -> Tensor:
    """Sums a list of tensors of one shape and dtype."""
    inputs = list(inputs)
    if not inputs:
        raise ValueError("add_n needs at least one input")
    if len(inputs) == 1 and name is None:
        return apply_op("Identity", inputs)
    return apply_op("AddN", inputs, name=name)


# --- shared helpers --------------------------------------------------------------------
def _check_rule(check: Callable[[dtypes.DType], bool] | None, what: str,
                out_dtype: dtypes.DType | None = None) -> Callable[[Operation], list]:
    """Elementwise rule: inputs share a dtype accepted by ``check``; numpy broadcasting."""

    def rule(op: Operation) -> list:
        dtype = require_same_dtype(op)
        if check is not None and not check(dtype):
            raise TypeError(f"'{op.type}' needs {what} inputs, got {dtype.name} for "
                            f"'{op.inputs[0].name}'")
        shape = op.inputs[0].shape if len(op.inputs) == 1 else broadcast(op)
        return [(out_dtype or dtype, shape)]

    return rule


def _ufunc(name: str) -> Callable[[Any, dict], Any]:
    """Kernel factory returning the namespace's ufunc itself (no per-call wrapper)."""

    def factory(ctx: Any, attrs: dict) -> Any:
        return getattr(ctx.xp, name)

    factory.__name__ = f"_{name}_kernel"
    return factory


def _register(op_type: str, infer: Callable, kernel: Callable, grad: Any,
              foldable: bool = False) -> None:
    registry.register(registry.OpDef(op_type, infer, kernel, grad, foldable=foldable))


def _special_module(xp: Any) -> Any:
    """``scipy.special`` for numpy (``cupyx.scipy.special`` for cupy), or ``None``."""
    try:
        if getattr(xp, "__name__", "").startswith("cupy"):
            import cupyx.scipy.special as special  # noqa: PLC0415
        else:
            import scipy.special as special  # noqa: PLC0415
    except ImportError:
        return None
    return special


def _keep_dtype(fn: Callable, xp: Any) -> Callable:
    """Wraps ``fn`` so its result has the dtype of its input (scipy widens float16)."""

    def run(x: Any) -> Any:
        out = fn(x)
        return out if out.dtype == x.dtype else xp.asarray(out, dtype=x.dtype)

    return run


# --- binary arithmetic -----------------------------------------------------------------
def _add_grad(op: Operation, grad: Tensor) -> list:
    return [grad, grad]


def _sub_grad(op: Operation, grad: Tensor) -> list:
    return [grad, negative(grad)]


def _mul_grad(op: Operation, grad: Tensor) -> list:
    x, y = op.inputs
    return [multiply(grad, y), multiply(x, grad)]


def _real_div_grad(op: Operation, grad: Tensor) -> list:
    x, y = op.inputs
    return [realdiv(grad, y), multiply(grad, realdiv(realdiv(negative(x), y), y))]


def _div_no_nan_grad(op: Operation, grad: Tensor) -> list:
    x, y = op.inputs
    return [div_no_nan(grad, y), multiply(grad, div_no_nan(div_no_nan(negative(x), y), y))]


def _floor_mod_grad(op: Operation, grad: Tensor) -> list:
    # x mod y = x - floor(x / y) * y, with floor(x / y) piecewise constant.
    x, y = op.inputs
    return [grad, multiply(grad, negative(floordiv(x, y)))]


def _pow_grad(op: Operation, grad: Tensor) -> list:
    x, y = op.inputs
    z = op.outputs[0]
    gx = multiply(grad, multiply(y, pow(x, subtract(y, 1))))
    # d(x^y)/dy = x^y log(x), taken as 0 where x <= 0 (as TF does).
    positive = greater(x, 0)
    safe_x = _select(positive, x, ones_like(x))
    log_x = _select(positive, log(safe_x), zeros_like(x))
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
    return [_select(x_wins, grad, zeros), _select(x_wins, zeros, grad)]


def _squared_difference_grad(op: Operation, grad: Tensor) -> list:
    x, y = op.inputs
    gx = multiply(multiply(grad, 2), subtract(x, y))
    return [gx, negative(gx)]


def _squared_difference_kernel(ctx: Any, attrs: dict) -> Any:
    xp = ctx.xp
    return lambda x, y: xp.square(xp.subtract(x, y))


def _div_no_nan_kernel(ctx: Any, attrs: dict) -> Any:
    xp = ctx.xp

    def div_no_nan(x: Any, y: Any) -> Any:
        zero = y == 0
        quotient = xp.true_divide(x, xp.where(zero, 1, y))
        return xp.where(zero, 0, quotient)

    return div_no_nan


_NUMERIC = (is_int_or_float, "integer or floating-point")
_FLOAT = (is_float, "floating-point")

for _type, _kernel, _grad, _dtypes, _fold in [
    ("AddV2", _ufunc("add"), _add_grad, _NUMERIC, True),
    ("Sub", _ufunc("subtract"), _sub_grad, _NUMERIC, True),
    ("Mul", _ufunc("multiply"), _mul_grad, _NUMERIC, True),
    ("RealDiv", _ufunc("true_divide"), _real_div_grad, _FLOAT, False),
    ("DivNoNan", _div_no_nan_kernel, _div_no_nan_grad, _FLOAT, False),
    ("FloorDiv", _ufunc("floor_divide"), registry.NOT_DIFFERENTIABLE, _NUMERIC, True),
    ("FloorMod", _ufunc("mod"), _floor_mod_grad, _NUMERIC, True),
    ("Pow", _ufunc("power"), _pow_grad, _NUMERIC, False),
    ("Maximum", _ufunc("maximum"), _maximum_grad, _NUMERIC, True),
    ("Minimum", _ufunc("minimum"), _minimum_grad, _NUMERIC, True),
    ("SquaredDifference", _squared_difference_kernel, _squared_difference_grad, _NUMERIC,
     False),
]:
    _register(_type, _check_rule(*_dtypes), _kernel, _grad, foldable=_fold)


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
    """Returns ``floor(x / y)`` elementwise (Python's ``//`` semantics)."""
    return apply_op("FloorDiv", [x, y], name=name or "floordiv")


def floormod(x: Any, y: Any, name: str | None = None) -> Tensor:
    """Returns ``x - floor(x / y) * y`` (Python's ``%``: the sign of ``y``)."""
    return apply_op("FloorMod", [x, y], name=name)


mod = floormod


def pow(x: Any, y: Any, name: str | None = None) -> Tensor:  # noqa: A001 - TF1 name
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


def _same_dtype_pair(x: Any, y: Any, what: str) -> tuple[Tensor, Tensor]:
    x, y = convert_inputs([x, y])
    if x.dtype != y.dtype:
        raise TypeError(f"{what}: x and y must have the same dtype, got {x.dtype.name} != "
                        f"{y.dtype.name}")
    return x, y


_TRUEDIV_TARGET = {dtypes.int8: dtypes.float32, dtypes.int16: dtypes.float32,
                   dtypes.uint8: dtypes.float32, dtypes.int32: dtypes.float64,
                   dtypes.int64: dtypes.float64}


def truediv(x: Any, y: Any, name: str | None = None) -> Tensor:
    """Divides ``x`` by ``y`` with Python 3 semantics (``x / y``).

    Integer inputs are cast first: 8- and 16-bit integers to float32, 32- and 64-bit
    integers to float64 (as TF1 does).

    Raises:
        TypeError: ``x`` and ``y`` have different dtypes, or are bool.
    """
    with name_scope(name, "truediv", [x, y]) as scope:
        x, y = _same_dtype_pair(x, y, "truediv")
        target = _TRUEDIV_TARGET.get(x.dtype)
        if target is not None:
            x, y = cast(x, target), cast(y, target)
        elif not is_float(x.dtype):
            raise TypeError(f"Invalid dtype {x.dtype.name} in __truediv__")
        return apply_op("RealDiv", [x, y], name=scope)


def divide(x: Any, y: Any, name: str | None = None) -> Tensor:
    """Computes Python style division of ``x`` by ``y`` (``truediv``)."""
    return truediv(x, y, name=name)


def div(x: Any, y: Any, name: str | None = None) -> Tensor:
    """Divides with Python 2 semantics: floor division for integers, else ``x / y``.

    (Deprecated in TF1 in favour of ``truediv`` / ``floordiv``.)
    """
    with name_scope(name, "div", [x, y]) as scope:
        x, y = _same_dtype_pair(x, y, "div")
        if is_float(x.dtype):
            return apply_op("RealDiv", [x, y], name=scope)
        return apply_op("FloorDiv", [x, y], name=scope)


def scalar_mul(scalar: Any, x: Any, name: str | None = None) -> Tensor:
    """Multiplies the tensor ``x`` by a scalar.

    Raises:
        ValueError: ``scalar`` is not a 0-D value.
    """
    if isinstance(scalar, Tensor):
        rank = scalar.shape.rank
    else:
        rank = np.ndim(scalar)
    if rank is not None and rank != 0:
        raise ValueError(f"Only scalar multiply works, got shape {np.shape(scalar)}")
    x = convert_to_tensor(x)
    return apply_op("Mul", [scalar, x], name=name, dtype_hint=x.dtype)


# --- unary math ------------------------------------------------------------------------
def _neg_grad(op: Operation, grad: Tensor) -> list:
    return [negative(grad)]


def _abs_grad(op: Operation, grad: Tensor) -> list:
    return [multiply(grad, sign(op.inputs[0]))]


def _sign_grad(op: Operation, grad: Tensor) -> list:
    return [zeros_like(op.inputs[0])]


def _square_grad(op: Operation, grad: Tensor) -> list:
    return [multiply(grad, multiply(op.inputs[0], 2))]


def _sqrt_grad(op: Operation, grad: Tensor) -> list:
    return [realdiv(multiply(grad, 0.5), op.outputs[0])]


def _rsqrt_grad(op: Operation, grad: Tensor) -> list:
    y = op.outputs[0]
    return [multiply(multiply(grad, -0.5), multiply(y, square(y)))]


def _exp_grad(op: Operation, grad: Tensor) -> list:
    return [multiply(grad, op.outputs[0])]


def _expm1_grad(op: Operation, grad: Tensor) -> list:
    return [multiply(grad, exp(op.inputs[0]))]


def _log_grad(op: Operation, grad: Tensor) -> list:
    return [multiply(grad, reciprocal(op.inputs[0]))]


def _log1p_grad(op: Operation, grad: Tensor) -> list:
    return [multiply(grad, reciprocal(add(op.inputs[0], 1)))]


def _sin_grad(op: Operation, grad: Tensor) -> list:
    return [multiply(grad, cos(op.inputs[0]))]


def _cos_grad(op: Operation, grad: Tensor) -> list:
    return [negative(multiply(grad, sin(op.inputs[0])))]


def _tan_grad(op: Operation, grad: Tensor) -> list:
    return [multiply(grad, square(reciprocal(cos(op.inputs[0]))))]


def _tanh_grad(op: Operation, grad: Tensor) -> list:
    y = op.outputs[0]
    return [multiply(grad, subtract(1, square(y)))]


def _sigmoid_grad(op: Operation, grad: Tensor) -> list:
    y = op.outputs[0]
    return [multiply(grad, multiply(y, subtract(1, y)))]


def _erf_grad(op: Operation, grad: Tensor) -> list:
    x = op.inputs[0]
    return [multiply(grad, multiply(exp(negative(square(x))), 2 / _pymath.sqrt(_pymath.pi)))]


def _reciprocal_grad(op: Operation, grad: Tensor) -> list:
    return [negative(multiply(grad, square(op.outputs[0])))]


def _rsqrt_kernel(ctx: Any, attrs: dict) -> Any:
    xp = ctx.xp
    return lambda x: xp.reciprocal(xp.sqrt(x))


def _sigmoid_kernel(ctx: Any, attrs: dict) -> Any:
    xp = ctx.xp
    special = _special_module(xp)
    if special is not None:
        return _keep_dtype(special.expit, xp)

    def sigmoid(x: Any) -> Any:
        # exp of -|x| never overflows; both branches are accurate in relative terms.
        e = xp.exp(-xp.abs(x))
        return xp.where(x >= 0, 1 / (1 + e), e / (1 + e))

    return sigmoid


def _erf_kernel(ctx: Any, attrs: dict) -> Any:
    xp = ctx.xp
    special = _special_module(xp)
    if special is not None:
        return _keep_dtype(special.erf, xp)
    erf_object = xp.frompyfunc(_pymath.erf, 1, 1)  # without scipy: exact but slow
    return lambda x: xp.asarray(erf_object(x), dtype=x.dtype)


_NOT_DIFF = registry.NOT_DIFFERENTIABLE
for _type, _kernel, _grad, _dtypes, _fold in [
    ("Neg", _ufunc("negative"), _neg_grad, _NUMERIC, True),
    ("Abs", _ufunc("abs"), _abs_grad, _NUMERIC, True),
    ("Sign", _ufunc("sign"), _sign_grad, _NUMERIC, True),
    ("Square", _ufunc("square"), _square_grad, _NUMERIC, True),
    ("Sqrt", _ufunc("sqrt"), _sqrt_grad, _FLOAT, False),
    ("Rsqrt", _rsqrt_kernel, _rsqrt_grad, _FLOAT, False),
    ("Exp", _ufunc("exp"), _exp_grad, _FLOAT, False),
    ("Expm1", _ufunc("expm1"), _expm1_grad, _FLOAT, False),
    ("Log", _ufunc("log"), _log_grad, _FLOAT, False),
    ("Log1p", _ufunc("log1p"), _log1p_grad, _FLOAT, False),
    ("Sin", _ufunc("sin"), _sin_grad, _FLOAT, False),
    ("Cos", _ufunc("cos"), _cos_grad, _FLOAT, False),
    ("Tan", _ufunc("tan"), _tan_grad, _FLOAT, False),
    ("Tanh", _ufunc("tanh"), _tanh_grad, _FLOAT, False),
    ("Sigmoid", _sigmoid_kernel, _sigmoid_grad, _FLOAT, False),
    ("Erf", _erf_kernel, _erf_grad, _FLOAT, False),
    ("Floor", _ufunc("floor"), _NOT_DIFF, _FLOAT, True),
    ("Ceil", _ufunc("ceil"), _NOT_DIFF, _FLOAT, True),
    ("Round", _ufunc("round"), _NOT_DIFF, _NUMERIC, True),
    ("Reciprocal", _ufunc("reciprocal"), _reciprocal_grad, _FLOAT, False),
]:
    _register(_type, _check_rule(*_dtypes), _kernel, _grad, foldable=_fold)


def negative(x: Any, name: str | None = None) -> Tensor:
    """Returns ``-x`` elementwise."""
    return apply_op("Neg", [x], name=name)


def abs(x: Any, name: str | None = None) -> Tensor:  # noqa: A001 - TF1 name
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


def round(x: Any, name: str | None = None) -> Tensor:  # noqa: A001 - TF1 name
    """Rounds half to even (banker's rounding), as TF does."""
    return apply_op("Round", [x], name=name)


def reciprocal(x: Any, name: str | None = None) -> Tensor:
    """Returns ``1 / x`` elementwise."""
    return apply_op("Reciprocal", [x], name=name)


# --- comparisons, logical ops, float classification ------------------------------------
def _is_comparable(d: dtypes.DType) -> bool:
    return is_int_or_float(d) or d.is_bool


for _type, _ufunc_name, _dtypes in [
    ("Less", "less", _NUMERIC),
    ("LessEqual", "less_equal", _NUMERIC),
    ("Greater", "greater", _NUMERIC),
    ("GreaterEqual", "greater_equal", _NUMERIC),
    ("Equal", "equal", (_is_comparable, "numeric or bool")),
    ("NotEqual", "not_equal", (_is_comparable, "numeric or bool")),
    ("LogicalAnd", "logical_and", (is_bool, "bool")),
    ("LogicalOr", "logical_or", (is_bool, "bool")),
    ("LogicalNot", "logical_not", (is_bool, "bool")),
    ("IsNan", "isnan", _FLOAT),
    ("IsInf", "isinf", _FLOAT),
    ("IsFinite", "isfinite", _FLOAT),
]:
    _register(_type, _check_rule(*_dtypes, out_dtype=dtypes.bool), _ufunc(_ufunc_name),
              _NOT_DIFF, foldable=True)


def less(x: Any, y: Any, name: str | None = None) -> Tensor:
    """Returns the truth value of ``x < y`` elementwise (bool)."""
    return apply_op("Less", [x, y], name=name)


def less_equal(x: Any, y: Any, name: str | None = None) -> Tensor:
    """Returns the truth value of ``x <= y`` elementwise (bool)."""
    return apply_op("LessEqual", [x, y], name=name)


def greater(x: Any, y: Any, name: str | None = None) -> Tensor:
    """Returns the truth value of ``x > y`` elementwise (bool)."""
    return apply_op("Greater", [x, y], name=name)


def greater_equal(x: Any, y: Any, name: str | None = None) -> Tensor:
    """Returns the truth value of ``x >= y`` elementwise (bool)."""
    return apply_op("GreaterEqual", [x, y], name=name)


def equal(x: Any, y: Any, name: str | None = None) -> Tensor:
    """Returns the truth value of ``x == y`` elementwise (bool)."""
    return apply_op("Equal", [x, y], name=name)


def not_equal(x: Any, y: Any, name: str | None = None) -> Tensor:
    """Returns the truth value of ``x != y`` elementwise (bool)."""
    return apply_op("NotEqual", [x, y], name=name)


def logical_and(x: Any, y: Any, name: str | None = None) -> Tensor:
    """Returns ``x AND y`` elementwise for bool tensors."""
    return apply_op("LogicalAnd", [x, y], name=name)


def logical_or(x: Any, y: Any, name: str | None = None) -> Tensor:
    """Returns ``x OR y`` elementwise for bool tensors."""
    return apply_op("LogicalOr", [x, y], name=name)


def logical_not(x: Any, name: str | None = None) -> Tensor:
    """Returns ``NOT x`` elementwise for a bool tensor."""
    return apply_op("LogicalNot", [x], name=name)


def logical_xor(x: Any, y: Any, name: str = "LogicalXor") -> Tensor:
    """Returns ``x XOR y`` elementwise for bool tensors (a composite, as in TF)."""
    return logical_and(logical_or(x, y), logical_not(logical_and(x, y)), name=name)


def is_nan(x: Any, name: str | None = None) -> Tensor:
    """Returns which elements of ``x`` are NaN."""
    return apply_op("IsNan", [x], name=name)


def is_inf(x: Any, name: str | None = None) -> Tensor:
    """Returns which elements of ``x`` are +inf or -inf."""
    return apply_op("IsInf", [x], name=name)


def is_finite(x: Any, name: str | None = None) -> Tensor:
    """Returns which elements of ``x`` are finite (not inf, not NaN)."""
    return apply_op("IsFinite", [x], name=name)


# --- Select / Where -------------------------------------------------------------------
def _infer_select(op: Operation) -> list:
    c, x, y = op.inputs
    if not c.dtype.is_bool:
        raise TypeError(f"The condition of 'Select' must be bool, got {c.dtype.name}")
    if x.dtype != y.dtype:
        raise TypeError(f"Input 'e' of 'Select' has dtype {y.dtype.name}, which does not "
                        f"match dtype {x.dtype.name} of input 't'")
    if op.attrs["rowwise"]:
        out = x.shape.merge_with(y.shape) if x.shape.is_compatible_with(y.shape) else None
        if out is None or out.rank is None or out.rank < 1 or not TensorShape(
                out.as_tuple()[:1]).is_compatible_with(c.shape):
            raise ValueError(f"A rank-1 condition selects rows: its length must equal the "
                             f"first dimension of x and y, which must have one shape; got "
                             f"{c.shape}, {x.shape}, {y.shape}")
        return [(x.dtype, out)]
    return [(x.dtype, broadcast(op))]


def _select_kernel(ctx: Any, attrs: dict) -> Any:
    xp = ctx.xp
    if not attrs["rowwise"]:
        return xp.where

    def select_rows(c: Any, x: Any, y: Any) -> Any:
        rank = builtins.max(x.ndim, y.ndim)
        return xp.where(c.reshape(c.shape + (1,) * (rank - 1)), x, y)

    return select_rows


def _select_grad(op: Operation, grad: Tensor) -> list:
    c = op.inputs[0]
    zeros = zeros_like(grad)
    rowwise = op.attrs["rowwise"]
    return [None, _select(c, grad, zeros, rowwise), _select(c, zeros, grad, rowwise)]


_register("Select", _infer_select, _select_kernel, _select_grad, foldable=True)


def _select(condition: Tensor, x: Tensor, y: Tensor, rowwise: bool = False,
            name: str | None = None) -> Tensor:
    return apply_op("Select", [condition, x, y], {"rowwise": rowwise}, name=name)


def _infer_where(op: Operation) -> list:
    rank = op.inputs[0].shape.rank
    return [(dtypes.int64, TensorShape([None, rank]))]


def _where_kernel(ctx: Any, attrs: dict) -> Any:
    xp = ctx.xp
    return lambda c: xp.asarray(xp.argwhere(c), dtype=xp.int64)


_register("Where", _infer_where, _where_kernel, _NOT_DIFF)


def _select_inputs(condition: Any, x: Any, y: Any) -> tuple[Tensor, Tensor, Tensor]:
    # Python numbers in x/y take the dtype of the other branch, not the condition's.
    x, y = convert_inputs([x, y])
    return convert_to_tensor(condition), x, y


def where(condition: Any, x: Any = None, y: Any = None, name: str | None = None) -> Tensor:
    """TF1's ``where``: elementwise selection, or the coordinates of true elements.

    With ``x`` and ``y``, returns elements of ``x`` where ``condition`` is true and of
    ``y`` elsewhere. A rank-1 ``condition`` with higher-rank ``x``/``y`` selects whole
    rows (TF1's rule); otherwise the three broadcast with numpy rules.

    Without ``x`` and ``y``, returns the int64 coordinates of the true (nonzero)
    elements of ``condition``, of shape ``[num_true, rank(condition)]``.

    Raises:
        ValueError: exactly one of ``x`` and ``y`` is given, or shapes do not fit.
        TypeError: ``x`` and ``y`` have different dtypes.
    """
    if x is None and y is None:
        return apply_op("Where", [condition], name=name)
    if x is None or y is None:
        raise ValueError("x and y must both be non-None or both be None.")
    c, x, y = _select_inputs(condition, x, y)
    ranks = [t.shape.rank for t in (x, y)]
    rowwise = c.shape.rank == 1 and all(r is not None and r > 1 for r in ranks)
    return _select(c, x, y, rowwise, name=name)


def where_v2(condition: Any, x: Any = None, y: Any = None, name: str | None = None) -> Tensor:
    """Like ``where``, but ``condition``, ``x`` and ``y`` always broadcast (numpy)."""
    if x is None and y is None:
        return apply_op("Where", [condition], name=name)
    if x is None or y is None:
        raise ValueError("x and y must both be non-None or both be None.")
    c, x, y = _select_inputs(condition, x, y)
    return _select(c, x, y, False, name=name)


# --- Cast ------------------------------------------------------------------------------
def _infer_cast(op: Operation) -> list:
    return [(op.attrs["DstT"], op.inputs[0].shape)]


def _cast_kernel(ctx: Any, attrs: dict) -> Any:
    xp = ctx.xp
    src, dst = attrs.get("SrcT"), attrs["DstT"]
    np_dst = dst.as_numpy_dtype
    if dst.is_complex or (src is not None and not src.is_complex):
        return lambda x: x.astype(np_dst)
    # From complex (or an unrecorded source dtype): keep the real part, as TF does.
    return lambda x: (xp.real(x) if x.dtype.kind == "c" else x).astype(np_dst)


def _cast_grad(op: Operation, grad: Tensor) -> list:
    src = op.inputs[0].dtype
    if is_float(src) and is_float(op.outputs[0].dtype):
        return [cast(grad, src)]
    return [None]


_register("Cast", _infer_cast, _cast_kernel, _cast_grad, foldable=True)


def cast(x: Any, dtype: Any, name: str | None = None) -> Tensor:
    """Casts ``x`` to ``dtype``. Returns ``x`` itself when it already has that dtype.

    Floats cast to integers truncate toward zero; nonzero values cast to bool are True;
    complex values cast to a real dtype keep their real part.
    """
    dst = dtypes.as_dtype(dtype)
    x = convert_to_tensor(x)
    if x.dtype == dst:
        return x
    return apply_op("Cast", [x], {"SrcT": x.dtype, "DstT": dst}, name=name)


def to_float(x: Any, name: str = "ToFloat") -> Tensor:
    """Casts ``x`` to float32 (deprecated in TF1: use ``cast``)."""
    return cast(x, dtypes.float32, name=name)


def to_double(x: Any, name: str = "ToDouble") -> Tensor:
    """Casts ``x`` to float64 (deprecated in TF1: use ``cast``)."""
    return cast(x, dtypes.float64, name=name)


def to_int32(x: Any, name: str = "ToInt32") -> Tensor:
    """Casts ``x`` to int32 (deprecated in TF1: use ``cast``)."""
    return cast(x, dtypes.int32, name=name)


def to_int64(x: Any, name: str = "ToInt64") -> Tensor:
    """Casts ``x`` to int64 (deprecated in TF1: use ``cast``)."""
    return cast(x, dtypes.int64, name=name)


# --- reductions ------------------------------------------------------------------------
class _AxesReader:
    """Turns an axes array into a tuple of ints, remembering the last array seen.

    Constant axes arrive as the same bound object on every step, so the conversion
    runs once per plan. (One tuple assignment keeps this safe between threads.)
    """

    __slots__ = ("_last",)

    def __init__(self) -> None:
        self._last: tuple[Any, Any] = (None, None)

    def __call__(self, axes: Any) -> Any:
        if axes is None:
            return None
        last = self._last
        if last[0] is axes:
            return last[1]
        value = tuple(int(a) for a in axes.reshape(-1).tolist())
        self._last = (axes, value)
        return value

    def scalar(self, axis: Any) -> int:
        return self(axis)[0]


def _reduced_shape(op: Operation, axes_input: int = 1) -> TensorShape:
    """Static output shape of a reduction with optional axes at ``axes_input``."""
    x = op.inputs[0]
    keep = op.attrs["keep_dims"]
    rank = x.shape.rank
    if len(op.inputs) > axes_input:
        value = constant_value(op.inputs[axes_input])
        if value is None:
            if keep and rank is not None:
                return TensorShape([None] * rank)
            return TensorShape(None)
        axes = [int(a) for a in np.reshape(value, [-1])]
    else:
        axes = None if rank is None else list(range(rank))
    if rank is None:
        return TensorShape(None)
    for a in axes:
        if not -rank <= a < rank:
            raise ValueError(f"Invalid reduction dimension {a} for input with {rank} "
                             "dimensions")
    reduced = {a % rank for a in axes}
    dims = x.shape.as_tuple()
    if keep:
        return TensorShape([1 if i in reduced else d for i, d in enumerate(dims)])
    return TensorShape([d for i, d in enumerate(dims) if i not in reduced])


def _check_axes(op: Operation, index: int = 1) -> None:
    if len(op.inputs) > index:
        axes = op.inputs[index]
        if axes.dtype not in (dtypes.int32, dtypes.int64):
            raise TypeError(f"The axis of '{op.type}' must be int32 or int64, got "
                            f"{axes.dtype.name}")
        if axes.shape.rank is not None and axes.shape.rank > 1:
            raise ValueError(f"The axis of '{op.type}' must be a scalar or a vector, got "
                             f"shape {axes.shape}")


def _reduction_rule(check: Callable[[dtypes.DType], bool], what: str) -> Callable:
    def rule(op: Operation) -> list:
        x = op.inputs[0]
        if not check(x.dtype):
            raise TypeError(f"'{op.type}' needs {what} inputs, got {x.dtype.name} for "
                            f"'{x.name}'")
        _check_axes(op)
        return [(x.dtype, _reduced_shape(op))]

    return rule


def _reduction_kernel(fn_name: str, pass_dtype: bool = False) -> Callable:
    """Factory for ``xp.<fn_name>(x, axis, keepdims)`` reductions."""

    def factory(ctx: Any, attrs: dict) -> Any:
        fn = getattr(ctx.xp, fn_name)
        keep = attrs["keep_dims"]
        read = _AxesReader()
        if pass_dtype:  # numpy widens int32 sums/products to int64 otherwise
            return lambda x, axes=None: fn(x, axis=read(axes), keepdims=keep, dtype=x.dtype)
        return lambda x, axes=None: fn(x, axis=read(axes), keepdims=keep)

    factory.__name__ = f"_{fn_name}_kernel"
    return factory


def _mean_kernel(ctx: Any, attrs: dict) -> Any:
    xp = ctx.xp
    keep = attrs["keep_dims"]
    read = _AxesReader()

    def mean(x: Any, axes: Any = None) -> Any:
        axis = read(axes)
        if x.dtype.kind in "fc":
            return xp.mean(x, axis=axis, keepdims=keep)
        # Integer mean: the sum divided by the count, truncated toward zero (as TF).
        total = xp.sum(x, axis=axis, keepdims=keep, dtype=x.dtype)
        count = builtins.max(x.size // builtins.max(total.size, 1), 1)
        quotient = total // count
        return quotient + ((total % count != 0) & (total < 0)).astype(x.dtype)

    return mean


def _shape_tensor(x: Tensor) -> Tensor:
    """``shape(x)``: a constant when the static shape is fully known."""
    if x.shape.is_fully_defined():
        return constant(x.shape.as_list(), dtype=dtypes.int32)
    return _shape_op(x)


def _unreduce(grad: Tensor, op: Operation) -> Tensor:
    """``grad`` (shaped like the reduction ``op``'s output) broadcast to its input."""
    x = op.inputs[0]
    inputs = [grad, _shape_tensor(x)] + list(op.inputs[1:2])
    return apply_op("BroadcastReduced", inputs,
                    {"keep_dims": op.attrs["keep_dims"], "shape_hint": x.shape})


def _reduction_axes(op: Operation) -> Tensor | None:
    return op.inputs[1] if len(op.inputs) > 1 else None


def _with_axes(op: Operation, grad: Tensor) -> list:
    """``[grad]`` plus ``None`` for the axes input, if the reduction has one."""
    return [grad] + [None] * (len(op.inputs) - 1)


def _sum_grad(op: Operation, grad: Tensor) -> list:
    return _with_axes(op, _unreduce(grad, op))


def _mean_grad(op: Operation, grad: Tensor) -> list:
    x, y = op.inputs[0], op.outputs[0]
    if x.shape.is_fully_defined() and y.shape.is_fully_defined():
        count: Any = x.shape.num_elements() // builtins.max(y.shape.num_elements(), 1)
    else:
        sizes = [reduce_prod(_shape_op(t)) for t in (x, y)]
        count = cast(floordiv(sizes[0], maximum(sizes[1], 1)), grad.dtype)
    return _with_axes(op, _unreduce(realdiv(grad, count), op))


def _min_or_max_grad(op: Operation, grad: Tensor) -> list:
    """The gradient is shared equally among the elements equal to the extremum."""
    x, y = op.inputs[0], op.outputs[0]
    axes = _reduction_axes(op)
    keep = op.attrs["keep_dims"]
    hits = cast(equal(_unreduce(y, op), x), grad.dtype)
    count = _unreduce(reduce_sum(hits, axes, keepdims=keep), op)
    return _with_axes(op, multiply(realdiv(hits, count), _unreduce(grad, op)))


def _prod_grad(op: Operation, grad: Tensor) -> list:
    """d prod(x) / dx_i = prod of the others, handling zeros.

    With no zero in a reduced group it is ``p / x_i``; with one zero, the product of the
    nonzero elements at that zero and 0 elsewhere; with more, 0 everywhere.
    """
    x = op.inputs[0]
    axes = _reduction_axes(op)
    keep = op.attrs["keep_dims"]
    is_zero = equal(x, 0)
    zeros = zeros_like(x)
    safe_x = _select(is_zero, ones_like(x), x)
    zero_count = _unreduce(reduce_sum(cast(is_zero, x.dtype), axes, keepdims=keep), op)
    nonzero_prod = _unreduce(reduce_prod(safe_x, axes, keepdims=keep), op)
    others = _select(equal(zero_count, 0), realdiv(nonzero_prod, safe_x),
                     _select(logical_and(equal(zero_count, 1), is_zero), nonzero_prod,
                             zeros))
    return _with_axes(op, multiply(_unreduce(grad, op), others))


_NUMERIC_REDUCE = (is_int_or_float, "integer or floating-point")
for _type, _kernel, _grad, _dtypes, _fold in [
    ("Sum", _reduction_kernel("sum", pass_dtype=True), _sum_grad, _NUMERIC_REDUCE, True),
    ("Mean", _mean_kernel, _mean_grad, _NUMERIC_REDUCE, False),
    ("Prod", _reduction_kernel("prod", pass_dtype=True), _prod_grad, _NUMERIC_REDUCE, True),
    ("Max", _reduction_kernel("max"), _min_or_max_grad, _NUMERIC_REDUCE, True),
    ("Min", _reduction_kernel("min"), _min_or_max_grad, _NUMERIC_REDUCE, True),
    ("All", _reduction_kernel("all"), _NOT_DIFF, (is_bool, "bool"), True),
    ("Any", _reduction_kernel("any"), _NOT_DIFF, (is_bool, "bool"), True),
]:
    _register(_type, _reduction_rule(*_dtypes), _kernel, _grad, foldable=_fold)


def _infer_broadcast_reduced(op: Operation) -> list:
    target = constant_shape(op.inputs[1])
    hint = op.attrs["shape_hint"]
    shape = hint if target is None else TensorShape(target).merge_with(hint)
    return [(op.inputs[0].dtype, shape)]


def _broadcast_reduced_kernel(ctx: Any, attrs: dict) -> Any:
    xp = ctx.xp
    keep = attrs["keep_dims"]
    read_axes, read_shape = _AxesReader(), _AxesReader()

    def broadcast_reduced(grad: Any, shape: Any, axes: Any = None) -> Any:
        target = read_shape(shape)
        if axes is not None and not keep:
            kept = list(target)
            for a in read_axes(axes):
                kept[a] = 1
            grad = grad.reshape(kept)
        # Materialize: a broadcast view would alias ``grad`` and be read-only.
        return xp.array(xp.broadcast_to(grad, target))

    return broadcast_reduced


def _broadcast_reduced_grad(op: Operation, grad: Tensor) -> list:
    axes = op.inputs[2] if len(op.inputs) > 2 else None
    return [reduce_sum(grad, axes, keepdims=op.attrs["keep_dims"])] + \
        [None] * (len(op.inputs) - 1)


# The adjoint of a reduction (like XLA's broadcast_in_dim): re-inserts the reduced
# dimensions (unless the reduction kept them) and broadcasts to the input's shape.
_register("BroadcastReduced", _infer_broadcast_reduced, _broadcast_reduced_kernel,
          _broadcast_reduced_grad)


def _pick(new: Any, old: Any, new_name: str, old_name: str) -> Any:
    if old is not None:
        if new is not None:
            raise ValueError(f"Cannot specify both '{new_name}' and '{old_name}'.")
        return old
    return new


def _axis_tensor(axis: Any) -> Tensor | None:
    if axis is None or isinstance(axis, Tensor):
        return axis
    value = np.asarray(axis)
    if value.size == 0:
        return constant(np.zeros(value.shape, np.int32))
    if value.dtype.kind not in "iu":
        return convert_to_tensor(axis)  # e.g. a Variable; the shape rule checks its dtype
    # Python ints give int32 (as in TF1); an int64 numpy value stays int64.
    is_int64 = isinstance(axis, (np.ndarray, np.generic)) and value.dtype == np.int64
    return constant(value, dtype=dtypes.int64 if is_int64 else dtypes.int32)


def _reduce(op_type: str, input_tensor: Any, axis: Any, keepdims: Any, name: str | None,
            reduction_indices: Any, keep_dims: Any) -> Tensor:
    axis = _pick(axis, reduction_indices, "axis", "reduction_indices")
    keepdims = bool(_pick(keepdims, keep_dims, "keepdims", "keep_dims"))
    x = convert_to_tensor(input_tensor)
    axes = _axis_tensor(axis)
    inputs = [x] if axes is None else [x, axes]
    return apply_op(op_type, inputs, {"keep_dims": keepdims}, name=name)


_REDUCE_DOC = """Computes the {what} of elements across dimensions of a tensor.

    Reduces ``input_tensor`` along ``axis``: each reduced dimension is removed unless
    ``keepdims`` is true, in which case it is kept with length 1. With ``axis=None``
    all dimensions are reduced.

    Args:
        input_tensor: the tensor to reduce ({dtypes}).
        axis: an int, a list of ints (negative counts from the end), ``None``, or an
            int32/int64 tensor. A tensor whose value is unknown while building gives
            an output of unknown shape.
        keepdims: keep reduced dimensions with length 1.
        name: optional op name.
        reduction_indices: the deprecated name of ``axis``.
        keep_dims: the deprecated name of ``keepdims``.

    Raises:
        ValueError: an axis is out of range, or both spellings of an argument are given.
        TypeError: the input dtype is not supported.
    """


def reduce_sum(input_tensor: Any, axis: Any = None, keepdims: Any = None,
               name: str | None = None, reduction_indices: Any = None,
               keep_dims: Any = None) -> Tensor:
    return _reduce("Sum", input_tensor, axis, keepdims, name, reduction_indices, keep_dims)


def reduce_mean(input_tensor: Any, axis: Any = None, keepdims: Any = None,
                name: str | None = None, reduction_indices: Any = None,
                keep_dims: Any = None) -> Tensor:
    return _reduce("Mean", input_tensor, axis, keepdims, name, reduction_indices, keep_dims)


def reduce_max(input_tensor: Any, axis: Any = None, keepdims: Any = None,
               name: str | None = None, reduction_indices: Any = None,
               keep_dims: Any = None) -> Tensor:
    return _reduce("Max", input_tensor, axis, keepdims, name, reduction_indices, keep_dims)


def reduce_min(input_tensor: Any, axis: Any = None, keepdims: Any = None,
               name: str | None = None, reduction_indices: Any = None,
               keep_dims: Any = None) -> Tensor:
    return _reduce("Min", input_tensor, axis, keepdims, name, reduction_indices, keep_dims)


def reduce_prod(input_tensor: Any, axis: Any = None, keepdims: Any = None,
                name: str | None = None, reduction_indices: Any = None,
                keep_dims: Any = None) -> Tensor:
    return _reduce("Prod", input_tensor, axis, keepdims, name, reduction_indices, keep_dims)


def reduce_all(input_tensor: Any, axis: Any = None, keepdims: Any = None,
               name: str | None = None, reduction_indices: Any = None,
               keep_dims: Any = None) -> Tensor:
    return _reduce("All", input_tensor, axis, keepdims, name, reduction_indices, keep_dims)


def reduce_any(input_tensor: Any, axis: Any = None, keepdims: Any = None,
               name: str | None = None, reduction_indices: Any = None,
               keep_dims: Any = None) -> Tensor:
    return _reduce("Any", input_tensor, axis, keepdims, name, reduction_indices, keep_dims)


for _fn, _what, _dtypes_doc in [
    (reduce_sum, "sum", "integer or floating-point"),
    (reduce_mean, "mean", "integer or floating-point; integer means truncate"),
    (reduce_max, "maximum", "integer or floating-point"),
    (reduce_min, "minimum", "integer or floating-point"),
    (reduce_prod, "product", "integer or floating-point"),
    (reduce_all, "logical and", "bool"),
    (reduce_any, "logical or", "bool"),
]:
    _fn.__doc__ = _REDUCE_DOC.format(what=_what, dtypes=_dtypes_doc)


def reduce_logsumexp(input_tensor: Any, axis: Any = None, keepdims: Any = None,
                     name: str | None = None, reduction_indices: Any = None,
                     keep_dims: Any = None) -> Tensor:
    """Computes ``log(sum(exp(input_tensor)))`` along ``axis``, without overflow.

    The maximum is subtracted before ``exp`` (and treated as a constant for the
    gradient, which is the softmax of the input). Arguments as in ``reduce_sum``.
    """
    axis = _pick(axis, reduction_indices, "axis", "reduction_indices")
    keepdims = bool(_pick(keepdims, keep_dims, "keepdims", "keep_dims"))
    with name_scope(name, "ReduceLogSumExp", [input_tensor]) as scope:
        x = convert_to_tensor(input_tensor)
        axes = _axis_tensor(axis)
        raw_max = reduce_max(x, axes, keepdims=True)
        shift = stop_gradient(_select(is_finite(raw_max), raw_max, zeros_like(raw_max)))
        result = log(reduce_sum(exp(subtract(x, shift)), axes, keepdims=keepdims))
        if not keepdims:  # drop the kept length-1 dims of the shift
            shift = reduce_sum(shift, axes)
        return add(result, shift, name=scope)


def reduce_variance(input_tensor: Any, axis: Any = None, keepdims: bool = False,
                    name: str | None = None) -> Tensor:
    """Computes the (biased) variance of elements along ``axis`` (floating-point)."""
    with name_scope(name, "reduce_variance", [input_tensor]) as scope:
        x = convert_to_tensor(input_tensor)
        if not is_float(x.dtype):
            raise TypeError(f"reduce_variance needs a floating-point input, got "
                            f"{x.dtype.name}")
        axes = _axis_tensor(axis)
        means = reduce_mean(x, axes, keepdims=True)
        return reduce_mean(square(subtract(x, means)), axes, keepdims=keepdims, name=scope)


def reduce_std(input_tensor: Any, axis: Any = None, keepdims: bool = False,
               name: str | None = None) -> Tensor:
    """Computes the (biased) standard deviation of elements along ``axis``."""
    with name_scope(name, "reduce_std", [input_tensor]) as scope:
        return sqrt(reduce_variance(input_tensor, axis, keepdims), name=scope)


def count_nonzero(input_tensor: Any = None, axis: Any = None, keepdims: Any = None,
                  dtype: Any = dtypes.int64, name: str | None = None,
                  reduction_indices: Any = None, keep_dims: Any = None,
                  input: Any = None) -> Tensor:  # noqa: A002 - TF1 alias
    """Counts the nonzero elements along ``axis`` (as ``dtype``, default int64)."""
    input_tensor = _pick(input_tensor, input, "input_tensor", "input")
    axis = _pick(axis, reduction_indices, "axis", "reduction_indices")
    keepdims = bool(_pick(keepdims, keep_dims, "keepdims", "keep_dims"))
    with name_scope(name, "count_nonzero", [input_tensor]):
        x = convert_to_tensor(input_tensor)
        nonzero = not_equal(x, False if x.dtype.is_bool else 0)
        counts = reduce_sum(cast(nonzero, dtypes.int64), axis, keepdims=keepdims)
        return cast(counts, dtype)


# --- ArgMax / ArgMin --------------------------------------------------------------------
def _infer_arg_reduce(op: Operation) -> list:
    x, dim = op.inputs
    if not is_int_or_float(x.dtype):
        raise TypeError(f"'{op.type}' needs integer or floating-point inputs, got "
                        f"{x.dtype.name}")
    _check_axes(op)
    if dim.shape.rank not in (None, 0) and dim.shape.as_tuple() != (1,):
        raise ValueError(f"The dimension of '{op.type}' must be a scalar, got {dim.shape}")
    out = op.attrs["output_type"]
    rank = x.shape.rank
    value = constant_value(dim)
    if rank is None:
        return [(out, TensorShape(None))]
    if value is None:
        return [(out, TensorShape([None] * builtins.max(rank - 1, 0)))]
    axis = int(np.reshape(value, [-1])[0])
    if not -rank <= axis < builtins.max(rank, 1) or rank == 0:
        raise ValueError(f"Expected dimension in the range [{-rank}, {rank}), but got "
                         f"{axis}")
    dims = list(x.shape.as_tuple())
    del dims[axis]
    return [(out, TensorShape(dims))]


def _arg_reduce_kernel(fn_name: str) -> Callable:
    def factory(ctx: Any, attrs: dict) -> Any:
        fn = getattr(ctx.xp, fn_name)
        out = attrs["output_type"].as_numpy_dtype
        read = _AxesReader()
        return lambda x, dim: fn(x, axis=read.scalar(dim)).astype(out)

    return factory


_register("ArgMax", _infer_arg_reduce, _arg_reduce_kernel("argmax"), _NOT_DIFF)
_register("ArgMin", _infer_arg_reduce, _arg_reduce_kernel("argmin"), _NOT_DIFF)


def _arg_reduce(op_type: str, input: Any, axis: Any, name: str | None, dimension: Any,  # noqa: A002
                output_type: Any) -> Tensor:
    axis = _pick(axis, dimension, "axis", "dimension")
    if axis is None:
        axis = 0
    out = dtypes.as_dtype(output_type)
    if out not in (dtypes.int32, dtypes.int64):
        raise TypeError(f"output_type of {op_type} must be int32 or int64, got {out.name}")
    return apply_op(op_type, [convert_to_tensor(input), _axis_tensor(axis)],
                    {"output_type": out}, name=name)


def argmax(input: Any, axis: Any = None, name: str | None = None,  # noqa: A002 - TF1 name
           dimension: Any = None, output_type: Any = dtypes.int64) -> Tensor:
    """Returns the index of the largest value along ``axis`` (default 0).

    Ties give the smallest index. ``dimension`` is the deprecated name of ``axis``.
    """
    return _arg_reduce("ArgMax", input, axis, name, dimension, output_type)


def argmin(input: Any, axis: Any = None, name: str | None = None,  # noqa: A002 - TF1 name
           dimension: Any = None, output_type: Any = dtypes.int64) -> Tensor:
    """Returns the index of the smallest value along ``axis`` (default 0)."""
    return _arg_reduce("ArgMin", input, axis, name, dimension, output_type)


# --- Cumsum ----------------------------------------------------------------------------
def _infer_cumsum(op: Operation) -> list:
    x = op.inputs[0]
    if not is_int_or_float(x.dtype):
        raise TypeError(f"'Cumsum' needs integer or floating-point inputs, got "
                        f"{x.dtype.name}")
    _check_axes(op)
    value = constant_value(op.inputs[1])
    rank = x.shape.rank
    if value is not None and rank is not None:
        axis = int(np.reshape(value, [-1])[0])
        if not -rank <= axis < rank:
            raise ValueError(f"Expected axis in the range [{-rank}, {rank}), got {axis}")
    return [(x.dtype, x.shape)]


def _cumsum_kernel(ctx: Any, attrs: dict) -> Any:
    xp = ctx.xp
    exclusive, reverse = attrs["exclusive"], attrs["reverse"]
    read = _AxesReader()

    def cumsum(x: Any, axis: Any) -> Any:
        a = read.scalar(axis)
        if reverse:
            x = xp.flip(x, a)
        out = xp.cumsum(x, axis=a, dtype=x.dtype)
        if exclusive:
            out = xp.roll(out, 1, axis=a)
            index = [slice(None)] * out.ndim
            index[a] = 0
            out[tuple(index)] = 0
        return xp.flip(out, a) if reverse else out

    return cumsum


def _cumsum_grad(op: Operation, grad: Tensor) -> list:
    return [cumsum(grad, op.inputs[1], exclusive=op.attrs["exclusive"],
                   reverse=not op.attrs["reverse"]), None]


_register("Cumsum", _infer_cumsum, _cumsum_kernel, _cumsum_grad)


def cumsum(x: Any, axis: Any = 0, exclusive: bool = False, reverse: bool = False,
           name: str | None = None) -> Tensor:
    """Cumulative sum along ``axis``.

    ``exclusive`` leaves each element out of its own sum (the first is 0); ``reverse``
    sums from the end.
    """
    return apply_op("Cumsum", [convert_to_tensor(x), _axis_tensor(axis)],
                    {"exclusive": bool(exclusive), "reverse": bool(reverse)}, name=name)


# --- clip_by_value ---------------------------------------------------------------------
def clip_by_value(t: Any, clip_value_min: Any, clip_value_max: Any,
                  name: str | None = None) -> Tensor:
    """Clips ``t`` to ``[clip_value_min, clip_value_max]`` elementwise.

    A composite of ``minimum`` and ``maximum``: the gradient flows where ``t`` is
    inside the range (ties included).

    Raises:
        ValueError: the clip values would broadcast ``t`` to a larger shape.
    """
    with name_scope(name, "clip_by_value", [t, clip_value_min, clip_value_max]) as scope:
        t = convert_to_tensor(t)
        t_min = minimum(t, clip_value_max)
        _check_not_broadcast(t, t_min)
        t_max = maximum(t_min, clip_value_min, name=scope)
        _check_not_broadcast(t, t_max)
        return t_max


def _check_not_broadcast(t: Tensor, clipped: Tensor) -> None:
    if not t.shape.is_compatible_with(clipped.shape):
        raise ValueError(f"clip_by_value: the clip values change the shape of t from "
                         f"{t.shape} to {clipped.shape}")


# --- Tensor operator overloads ---------------------------------------------------------
def _binary_operator(fn: Callable, op_name: str) -> Callable:
    def operator(x: Any, y: Any) -> Tensor:
        return fn(x, y, name=op_name)

    operator.__name__ = op_name
    return operator


for _name, _fn, _op_name in [
    ("add", add, "add"),
    ("sub", subtract, "sub"),
    ("mul", multiply, "mul"),
    ("truediv", truediv, "truediv"),
    ("floordiv", floordiv, "floordiv"),
    ("mod", floormod, "mod"),
    ("pow", pow, "pow"),
    ("lt", less, "Less"),
    ("le", less_equal, "LessEqual"),
    ("gt", greater, "Greater"),
    ("ge", greater_equal, "GreaterEqual"),
    ("and", logical_and, "LogicalAnd"),
    ("or", logical_or, "LogicalOr"),
    ("xor", logical_xor, "LogicalXor"),
]:
    register_operator(_name, _binary_operator(_fn, _op_name))
register_operator("neg", negative)
register_operator("abs", abs)
register_operator("invert", logical_not)

del _type, _kernel, _grad, _dtypes, _fold, _ufunc_name, _name, _fn, _op_name, _what, \
    _dtypes_doc
