"""Comparisons, logical ops, selection and casts, and the helpers every elementwise op
of the math family is registered with (TF1's ``math_ops``, the non-arithmetic part).

Each op type is one record: shape/dtype rule, kernel (through ``ctx.xp``) and gradient
rule side by side. This module holds:

* comparisons, logical ops and float classification (``Less LessEqual Greater
  GreaterEqual Equal NotEqual LogicalAnd LogicalOr LogicalNot IsNan IsInf IsFinite``):
  bool outputs, not differentiable, foldable; ``Equal``/``NotEqual`` take strings too
  (numpy's object comparison of the bytes); ``logical_xor`` is a composite;
* ``Select`` (three-argument ``where``; a rank-1 condition against higher-rank
  branches selects whole rows, TF1's rule) and ``Where`` (the int64 coordinates of the
  true elements);

It sits at the bottom of the math family: the arithmetic gradients (``arith``) and
the reduction gradients (``reduce``) are built from ``Select``, the comparisons and
``Cast`` (in ``cast.py``, below the array family too), and nothing here needs
arithmetic, so those modules import this one and not the other way round.

The shared helpers: ``check_rule(check, what)`` is the elementwise shape/dtype rule
(inputs share one dtype accepted by ``check``, no promotion as in TF1, shapes broadcast
as in numpy); ``ufunc_kernel(name)`` is a kernel factory returning ``ctx.xp.<name>`` itself,
so the executor calls the ufunc with no wrapper.
"""

from __future__ import annotations

import builtins
import operator
from collections.abc import Callable
from typing import Any

import numpy as np

from ...framework import dtypes, registry
from ...framework.graph import Operation, Tensor, convert_to_tensor
from ...framework.tensor_shape import TensorShape
from ..array.shapes import zeros_like
from ..build import apply_op, convert_inputs
from ..rules import broadcast, is_bool, is_float, is_int_or_float, require_same_dtype


# --- shared helpers --------------------------------------------------------------------
def check_rule(
    check: Callable[[dtypes.DType], bool] | None, what: str, out_dtype: dtypes.DType | None = None
) -> Callable[[Operation], list]:
    """Elementwise rule: inputs share a dtype accepted by ``check``; numpy broadcasting."""

    def rule(op: Operation) -> list:
        dtype = require_same_dtype(op)
        if check is not None and not check(dtype):
            raise TypeError(
                f"'{op.type}' needs {what} inputs, got {dtype.name} for '{op.inputs[0].name}'"
            )
        shape = op.inputs[0].shape if len(op.inputs) == 1 else broadcast(op)
        return [(out_dtype or dtype, shape)]

    return rule


def ufunc_kernel(name: str) -> Callable[[Any, dict], Any]:
    """Kernel factory returning the namespace's ufunc itself (no per-call wrapper)."""

    def factory(ctx: Any, attrs: dict) -> Any:
        return getattr(ctx.xp, name)

    factory.__name__ = f"_{name}_kernel"
    return factory


def operator_kernel(fn: Callable) -> Callable[[Any, dict], Any]:
    """Kernel factory returning a Python operator (``operator.mul``) in place of its ufunc.

    On arrays ``a * b`` is ``multiply(a, b)``; on the numpy scalars a scalar loss is
    built from, the operator takes numpy's scalar fast path (0.06 us, where calling the
    ufunc costs 0.9 us). Operators are part of every array namespace (cupy's too).
    """

    def factory(ctx: Any, attrs: dict) -> Any:
        return fn

    factory.__name__ = f"_{fn.__name__}_kernel"
    return factory


NUMERIC = (is_int_or_float, "integer or floating-point")
FLOAT = (is_float, "floating-point")
# The ops TF1 keeps real (``Floor Ceil Erf IsNan ...``) refuse complex tensors.
REAL_FLOAT = (lambda d: d.is_floating, "real floating-point")
NOT_DIFF = registry.NOT_DIFFERENTIABLE


# --- comparisons, logical ops, float classification ------------------------------------
def _is_comparable(d: dtypes.DType) -> bool:
    return is_int_or_float(d) or d.is_bool


def _is_equatable(d: dtypes.DType) -> bool:
    """``Equal``/``NotEqual`` also compare complex numbers and strings (bytes,
    elementwise), as TF's do."""
    return _is_comparable(d) or d.is_complex or d == dtypes.string


def _equality_kernel(name: str, compare: Callable[[Any, Any], Any]) -> Callable[[Any, dict], Any]:
    """``ufunc_kernel(name)``, but strings, which stay in host memory on every device
    (cupy has no string arrays), are compared on the host (``compare``: the array's own
    operator) and the flags moved to the device."""
    plain = ufunc_kernel(name)

    def factory(ctx: Any, attrs: dict) -> Any:
        ufunc, xp = plain(ctx, attrs), ctx.xp
        if xp is np:
            return ufunc

        def equality(x: Any, y: Any) -> Any:
            if getattr(getattr(x, "dtype", None), "kind", "") == "O":
                return xp.asarray(compare(x, y))
            return ufunc(x, y)

        return equality

    factory.__name__ = f"_{name}_kernel"
    return factory


_COMPARE_ON_HOST = {"Equal": operator.eq, "NotEqual": operator.ne}

for _type, _ufunc_name, _dtypes in [
    ("Less", "less", NUMERIC),
    ("LessEqual", "less_equal", NUMERIC),
    ("Greater", "greater", NUMERIC),
    ("GreaterEqual", "greater_equal", NUMERIC),
    ("Equal", "equal", (_is_equatable, "numeric, complex, bool or string")),
    ("NotEqual", "not_equal", (_is_equatable, "numeric, complex, bool or string")),
    ("LogicalAnd", "logical_and", (is_bool, "bool")),
    ("LogicalOr", "logical_or", (is_bool, "bool")),
    ("LogicalNot", "logical_not", (is_bool, "bool")),
    ("IsNan", "isnan", REAL_FLOAT),
    ("IsInf", "isinf", REAL_FLOAT),
    ("IsFinite", "isfinite", REAL_FLOAT),
]:
    registry.register(
        registry.OpDef(
            _type,
            check_rule(*_dtypes, out_dtype=dtypes.bool),
            _equality_kernel(_ufunc_name, _COMPARE_ON_HOST[_type])
            if _type in _COMPARE_ON_HOST
            else ufunc_kernel(_ufunc_name),
            NOT_DIFF,
            foldable=True,
        )
    )


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
        raise TypeError(
            f"Input 'e' of 'Select' has dtype {y.dtype.name}, which does not "
            f"match dtype {x.dtype.name} of input 't'"
        )
    if op.attrs["rowwise"]:
        out = x.shape.merge_with(y.shape) if x.shape.is_compatible_with(y.shape) else None
        if (
            out is None
            or out.rank is None
            or out.rank < 1
            or not out[:1].is_compatible_with(c.shape)
        ):
            raise ValueError(
                f"A rank-1 condition selects rows: its length must equal the "
                f"first dimension of x and y, which must have one shape; got "
                f"{c.shape}, {x.shape}, {y.shape}"
            )
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
    return [None, select(c, grad, zeros, rowwise), select(c, zeros, grad, rowwise)]


registry.register(
    registry.OpDef("Select", _infer_select, _select_kernel, _select_grad, foldable=True)
)


def select(
    condition: Tensor, x: Tensor, y: Tensor, rowwise: bool = False, name: str | None = None
) -> Tensor:
    return apply_op("Select", [condition, x, y], {"rowwise": rowwise}, name=name)


def _infer_where(op: Operation) -> list:
    rank = op.inputs[0].shape.rank
    return [(dtypes.int64, TensorShape([None, rank]))]


def _where_kernel(ctx: Any, attrs: dict) -> Any:
    xp = ctx.xp
    return lambda c: xp.asarray(xp.argwhere(c), dtype=xp.int64)


registry.register(registry.OpDef("Where", _infer_where, _where_kernel, NOT_DIFF))


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
    return select(c, x, y, rowwise, name=name)


def where_v2(condition: Any, x: Any = None, y: Any = None, name: str | None = None) -> Tensor:
    """Like ``where``, but ``condition``, ``x`` and ``y`` always broadcast (numpy)."""
    if x is None and y is None:
        return apply_op("Where", [condition], name=name)
    if x is None or y is None:
        raise ValueError("x and y must both be non-None or both be None.")
    c, x, y = _select_inputs(condition, x, y)
    return select(c, x, y, False, name=name)


del _type, _ufunc_name, _dtypes
