"""Builders of ``tf.math``'s long tail with no record of their own: ``reciprocal_no_nan``,
``lbeta``, ``log_sigmoid``, ``polyval``, ``is_non_decreasing``,
``is_strictly_increasing``, ``zero_fraction``, ``reduce_euclidean_norm``, ``erfcinv``,
``accumulate_n``, ``approx_max_k``/``approx_min_k``.

Each is a composite of the family's primitives in a name scope (gradients come from the
pass). ``approx_max_k`` is exact here (TF's is approximate only on TPUs).
``polyval`` is Horner's rule, one multiply-add per coefficient.
"""

from __future__ import annotations

import math as _pymath
from collections.abc import Sequence
from typing import Any

from ...framework import dtypes
from ...framework.graph import Tensor
from ...framework.scopes import name_scope
from .. import array as array_ops
from ..build import convert_inputs
from ..cast import cast
from ..constant import constant
from .arith import (
    abs,
    add,
    add_n,
    div_no_nan,
    exp,
    log1p,
    maximum,
    multiply,
    negative,
    sqrt,
    square,
    subtract,
)
from .compare import equal, greater, greater_equal
from .ordering import top_k
from .reduce import reduce_all, reduce_mean, reduce_sum
from .special import lgamma
from .special_functions import ndtri


def reciprocal_no_nan(x: Any, name: str | None = None) -> Tensor:
    """``1 / x``, and 0 where ``x == 0``."""
    with name_scope(name, "reciprocal_no_nan", [x]):
        t = convert_inputs([x])[0]
        return div_no_nan(constant(1, dtype=t.dtype), t)


def lbeta(x: Any, name: str | None = None) -> Tensor:
    """``log |B(x)|`` over the last axis: ``sum(lgamma(x)) - lgamma(sum(x))``."""
    with name_scope(name, "lbeta", [x]):
        t = convert_inputs([x])[0]
        return subtract(reduce_sum(lgamma(t), -1), lgamma(reduce_sum(t, -1)))


def log_sigmoid(x: Any, name: str | None = None) -> Tensor:
    """``log(1 / (1 + exp(-x)))``, as ``-softplus(-x)`` written to not overflow."""
    with name_scope(name, "LogSigmoid", [x]):
        t = convert_inputs([x])[0]
        softplus_neg = add(log1p(exp(negative(abs(t)))), maximum(negative(t), 0))
        return negative(softplus_neg)


def polyval(coeffs: Sequence[Any], x: Any, name: str | None = None) -> Tensor:
    """``coeffs[0] x^(n-1) + ... + coeffs[n-1]`` elementwise, by Horner's rule.

    Raises:
        ValueError: ``coeffs`` is not a list or tuple (as TF1).
    """
    if not isinstance(coeffs, (list, tuple)):
        raise ValueError(f"Argument coeffs must be list type found {type(coeffs)}.")
    with name_scope(name, "polyval", [*coeffs, x]):
        t = convert_inputs([x])[0]
        if not coeffs:
            return array_ops.zeros_like(t)
        cs = convert_inputs(list(coeffs), t.dtype)
        value = cs[0]
        for c in cs[1:]:
            value = add(c, multiply(value, t))
        return value


def _flat_differences(x: Any) -> Tensor:
    t = convert_inputs([x])[0]
    if not t.dtype.is_numeric:
        raise TypeError(f"Expected x to be numeric, got {t.dtype.name}")
    flat = array_ops.reshape(t, [-1])
    return subtract(flat[1:], flat[:-1])


def is_non_decreasing(x: Any, name: str | None = None) -> Tensor:
    """Whether ``x``'s elements, in row-major order, never decrease (True when fewer
    than two)."""
    with name_scope(name, "is_non_decreasing", [x]):
        diff = _flat_differences(x)
        return reduce_all(greater_equal(diff, array_ops.zeros_like(diff)))


def is_strictly_increasing(x: Any, name: str | None = None) -> Tensor:
    """Whether ``x``'s elements, in row-major order, strictly increase."""
    with name_scope(name, "is_strictly_increasing", [x]):
        diff = _flat_differences(x)
        return reduce_all(greater(diff, array_ops.zeros_like(diff)))


def zero_fraction(value: Any, name: str | None = None) -> Tensor:
    """The fraction of ``value``'s elements that are zero, as a float32 scalar."""
    with name_scope(name, "zero_fraction", [value]):
        t = convert_inputs([value])[0]
        zero = equal(t, array_ops.zeros_like(t))
        return reduce_mean(cast(zero, dtypes.float32))


def reduce_euclidean_norm(
    input_tensor: Any, axis: Any = None, keepdims: bool = False, name: str | None = None
) -> Tensor:
    """``sqrt(sum(|x|^2))`` over ``axis``, in ``input_tensor``'s dtype (integers are
    truncated, as TF's ``EuclideanNorm``)."""
    with name_scope(name, "EuclideanNorm", [input_tensor]):
        t = convert_inputs([input_tensor])[0]
        if t.dtype.is_integer:
            wide = cast(t, dtypes.float64)
            norm = sqrt(reduce_sum(square(wide), axis=axis, keepdims=keepdims))
            return cast(norm, t.dtype)
        if t.dtype.is_complex:
            from .complex_parts import complex

            moduli = square(abs(t))
            root = sqrt(reduce_sum(moduli, axis=axis, keepdims=keepdims))
            return complex(root, array_ops.zeros_like(root))
        return sqrt(reduce_sum(square(t), axis=axis, keepdims=keepdims))


def erfcinv(x: Any, name: str | None = None) -> Tensor:
    """The inverse of ``erfc`` on ``(0, 2)``: ``-ndtri(x / 2) / sqrt(2)``."""
    with name_scope(name, "erfcinv", [x]):
        t = convert_inputs([x])[0]
        return multiply(ndtri(multiply(t, 0.5)), -1.0 / _pymath.sqrt(2.0))


def accumulate_n(
    inputs: Sequence[Any], shape: Any = None, tensor_dtype: Any = None, name: str | None = None
) -> Tensor:
    """The elementwise sum of ``inputs`` (``add_n``; TF's accumulating kernel is a
    memory optimization with the same result).

    Raises:
        ValueError: ``inputs`` is empty or not a list of tensors of one shape.
        TypeError: an input is not of ``tensor_dtype``.
    """
    if not isinstance(inputs, (list, tuple)) or not inputs:
        raise ValueError(
            "inputs must be a list of at least one Tensor with the same dtype and shape"
        )
    tensors = convert_inputs(list(inputs))
    if tensor_dtype is not None:
        want = dtypes.as_dtype(tensor_dtype)
        for t in tensors:
            if t.dtype != want:
                raise TypeError(f"tensor_dtype is {want.name}, but input is of type {t.dtype.name}")
    first = tensors[0].shape
    for t in tensors[1:]:
        if not t.shape.is_compatible_with(first):
            raise ValueError(
                "inputs must be a list of at least one Tensor with the same dtype and shape"
            )
    return add_n(tensors, name=name)


def _top_k_along(operand: Any, k: int, dimension: int, negate: bool) -> tuple[Tensor, Tensor]:
    t = convert_inputs([operand])[0]
    rank = t.shape.ndims
    if rank is None:
        raise ValueError("approx_max_k needs the operand's rank")
    dim = dimension % rank
    perm = [*[d for d in range(rank) if d != dim], dim]
    moved = array_ops.transpose(t, perm) if dim != rank - 1 else t
    values, indices = top_k(negative(moved) if negate else moved, k)
    if negate:
        values = negative(values)
    if dim != rank - 1:
        back = [perm.index(d) for d in range(rank)]
        values, indices = array_ops.transpose(values, back), array_ops.transpose(indices, back)
    return values, indices


def approx_max_k(
    operand: Any,
    k: int,
    reduction_dimension: int = -1,
    recall_target: float = 0.95,
    reduction_input_size_override: int = -1,
    aggregate_to_topk: bool = True,
    name: str | None = None,
) -> tuple[Tensor, Tensor]:
    """The ``k`` largest values along ``reduction_dimension`` and their int32 indices
    (exact: ``recall_target`` and the TPU options do not change the result here)."""
    with name_scope(name, "ApproxTopK", [operand]):
        return _top_k_along(operand, k, reduction_dimension, negate=False)


def approx_min_k(
    operand: Any,
    k: int,
    reduction_dimension: int = -1,
    recall_target: float = 0.95,
    reduction_input_size_override: int = -1,
    aggregate_to_topk: bool = True,
    name: str | None = None,
) -> tuple[Tensor, Tensor]:
    """The ``k`` smallest values along ``reduction_dimension`` and their int32 indices
    (exact, as ``approx_max_k``)."""
    with name_scope(name, "ApproxTopK", [operand]):
        return _top_k_along(operand, k, reduction_dimension, negate=True)
