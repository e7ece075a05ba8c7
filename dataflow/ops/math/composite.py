"""Math builders with no op record of their own, and the ``Tensor`` operator overloads.

STYLE habit 2: a small closed set of primitives, the rest composed. Each builder here
adds ordinary ops from ``arith``, ``compare`` and ``reduce`` to the
graph, so it needs no kernel and no gradient rule:

* division with TF1's Python semantics: ``truediv``/``divide`` (``x / y``; 8- and
  16-bit integers are cast to float32 first, 32- and 64-bit ones to float64) and
  ``div`` (floor division for integers, ``RealDiv`` for floats); ``scalar_mul``;
* ``clip_by_value``: ``maximum(minimum(t, hi), lo)``, so the gradient flows where ``t``
  is inside the range (ties included);
* ``reduce_logsumexp`` (the maximum is subtracted first, under ``stop_gradient``, so
  ``exp`` cannot overflow), ``reduce_variance``, ``reduce_std``, ``count_nonzero``;
* the ``Tensor`` operator overloads (``x + 1``, ``-x``, ``x < y``, ``a & b``, ...),
  registered with ``register_operator``: ``x / y`` is ``truediv``, ``x ^ y`` is
  ``logical_xor``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ...framework import dtypes
from ...framework.graph import Tensor, convert_to_tensor
from ...framework.operation import register_operator
from ...framework.scopes import name_scope
from ..array.shapes import zeros_like
from ..build import apply_op, convert_inputs
from ..cast import cast
from ..control.group import stop_gradient
from ..rules import is_float
from .arith import (
    abs,
    add,
    exp,
    floordiv,
    floormod,
    log,
    maximum,
    minimum,
    multiply,
    negative,
    pow,
    sqrt,
    square,
    subtract,
)
from .compare import (
    greater,
    greater_equal,
    is_finite,
    less,
    less_equal,
    logical_and,
    logical_not,
    logical_or,
    logical_xor,
    not_equal,
    select,
)
from .reduce import axis_tensor, pick, reduce_max, reduce_mean, reduce_sum


# --- division with Python semantics ------------------------------------------------
def _same_dtype_pair(x: Any, y: Any, what: str) -> tuple[Tensor, Tensor]:
    x, y = convert_inputs([x, y])
    if x.dtype != y.dtype:
        raise TypeError(
            f"{what}: x and y must have the same dtype, got {x.dtype.name} != {y.dtype.name}"
        )
    return x, y


_TRUEDIV_TARGET = {
    dtypes.int8: dtypes.float32,
    dtypes.int16: dtypes.float32,
    dtypes.uint8: dtypes.float32,
    dtypes.int32: dtypes.float64,
    dtypes.int64: dtypes.float64,
}


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


# --- composite reductions -----------------------------------------------------------
def reduce_logsumexp(
    input_tensor: Any,
    axis: Any = None,
    keepdims: Any = None,
    name: str | None = None,
    reduction_indices: Any = None,
    keep_dims: Any = None,
) -> Tensor:
    """Computes ``log(sum(exp(input_tensor)))`` along ``axis``, without overflow.

    The maximum is subtracted before ``exp`` (and treated as a constant for the
    gradient, which is the softmax of the input). Arguments as in ``reduce_sum``.
    """
    axis = pick(axis, reduction_indices, "axis", "reduction_indices")
    keepdims = bool(pick(keepdims, keep_dims, "keepdims", "keep_dims"))
    with name_scope(name, "ReduceLogSumExp", [input_tensor]) as scope:
        x = convert_to_tensor(input_tensor)
        axes = axis_tensor(axis)
        raw_max = reduce_max(x, axes, keepdims=True)
        shift = stop_gradient(select(is_finite(raw_max), raw_max, zeros_like(raw_max)))
        result = log(reduce_sum(exp(subtract(x, shift)), axes, keepdims=keepdims))
        if not keepdims:  # drop the kept length-1 dims of the shift
            shift = reduce_sum(shift, axes)
        return add(result, shift, name=scope)


def reduce_variance(
    input_tensor: Any, axis: Any = None, keepdims: bool = False, name: str | None = None
) -> Tensor:
    """Computes the (biased) variance of elements along ``axis`` (floating-point)."""
    with name_scope(name, "reduce_variance", [input_tensor]) as scope:
        x = convert_to_tensor(input_tensor)
        if not is_float(x.dtype):
            raise TypeError(f"reduce_variance needs a floating-point input, got {x.dtype.name}")
        axes = axis_tensor(axis)
        means = reduce_mean(x, axes, keepdims=True)
        return reduce_mean(square(subtract(x, means)), axes, keepdims=keepdims, name=scope)


def reduce_std(
    input_tensor: Any, axis: Any = None, keepdims: bool = False, name: str | None = None
) -> Tensor:
    """Computes the (biased) standard deviation of elements along ``axis``."""
    with name_scope(name, "reduce_std", [input_tensor]) as scope:
        return sqrt(reduce_variance(input_tensor, axis, keepdims), name=scope)


def count_nonzero(
    input_tensor: Any = None,
    axis: Any = None,
    keepdims: Any = None,
    dtype: Any = dtypes.int64,
    name: str | None = None,
    reduction_indices: Any = None,
    keep_dims: Any = None,
    input: Any = None,
) -> Tensor:
    """Counts the nonzero elements along ``axis`` (as ``dtype``, default int64)."""
    input_tensor = pick(input_tensor, input, "input_tensor", "input")
    axis = pick(axis, reduction_indices, "axis", "reduction_indices")
    keepdims = bool(pick(keepdims, keep_dims, "keepdims", "keep_dims"))
    with name_scope(name, "count_nonzero", [input_tensor]):
        x = convert_to_tensor(input_tensor)
        nonzero = not_equal(x, False if x.dtype.is_bool else 0)
        counts = reduce_sum(cast(nonzero, dtypes.int64), axis, keepdims=keepdims)
        return cast(counts, dtype)


# --- clip_by_value ---------------------------------------------------------------------
def clip_by_value(
    t: Any, clip_value_min: Any, clip_value_max: Any, name: str | None = None
) -> Tensor:
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
        raise ValueError(
            f"clip_by_value: the clip values change the shape of t from "
            f"{t.shape} to {clipped.shape}"
        )


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

del _name, _fn, _op_name
