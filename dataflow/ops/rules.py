"""Shape and dtype rules shared by many op types.

Each rule takes the ``Operation`` being created and returns ``[(dtype, shape), ...]``,
raising ``ValueError``/``TypeError`` with what was wrong (the graph adds the op name).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..framework import dtypes
from ..framework.tensor_shape import TensorShape, broadcast_shapes


def same_as_input(op: Any) -> list:
    """One output with the dtype and shape of input 0."""
    t = op.inputs[0]
    return [(t.dtype, t.shape)]


def require_same_dtype(op: Any) -> dtypes.DType:
    """All inputs share one dtype; returns it."""
    first = op.inputs[0].dtype
    for t in op.inputs[1:]:
        if t.dtype != first:
            raise TypeError(
                f"Input '{t.name}' of '{op.type}' has dtype {t.dtype.name}, "
                f"which does not match dtype {first.name} of "
                f"'{op.inputs[0].name}'"
            )
    return first


def require_float(op: Any, *tensors: Any) -> dtypes.DType:
    """``tensors`` (inputs of ``op``) are floating point and share one dtype; returns it."""
    dtype = tensors[0].dtype
    for t in tensors:
        if not t.dtype.is_floating:
            raise TypeError(
                f"'{op.type}' needs floating point inputs, got {t.dtype.name} for '{t.name}'"
            )
        if t.dtype != dtype:
            raise TypeError(
                f"'{op.type}' inputs must share one dtype, got {dtype.name} and {t.dtype.name}"
            )
    return dtype


def require_dtype(op: Any, check: Callable[[dtypes.DType], bool], what: str) -> None:
    for t in op.inputs:
        if not check(t.dtype):
            raise TypeError(f"'{op.type}' needs {what} inputs, got {t.dtype.name} for '{t.name}'")


def broadcast(op: Any) -> TensorShape:
    try:
        return broadcast_shapes(*(t.shape for t in op.inputs))
    except ValueError:
        raise ValueError(
            "Dimensions must be equal or 1 to broadcast, but the shapes are "
            + " and ".join(str(t.shape) for t in op.inputs)
        ) from None


def is_float(d: dtypes.DType) -> bool:
    return d.is_floating or d.is_complex


def is_numeric(d: dtypes.DType) -> bool:
    return d.is_numeric


def is_int_or_float(d: dtypes.DType) -> bool:
    return d.is_floating or d.is_integer


def is_bool(d: dtypes.DType) -> bool:
    return d.is_bool


def normalize_axis(axis: int, rank: int, op_type: str) -> int:
    if not -rank <= axis < max(rank, 1):
        raise ValueError(f"axis {axis} is out of range for a tensor of rank {rank} in '{op_type}'")
    return axis % rank if rank else 0


def with_arity(rule: Callable[[Any], list], arity: int) -> Callable[[Any], list]:
    """``rule`` refusing an op built with another number of inputs than ``arity`` (a
    ``GraphDef`` can say anything: TF1 checks a ``NodeDef``'s inputs against its op's)."""

    def checked(op: Any) -> list:
        if len(op.inputs) != arity:
            raise ValueError(f"'{op.type}' takes {arity} inputs, got {len(op.inputs)}")
        return rule(op)

    return checked
