"""What the operators share besides their base class: the dtype and static-dimension
checks of constructors and methods, the rules that combine ``is_*`` hints of operators
made from operators, and ``matmul`` with ``LinearOperator``'s adjoint flags."""

from __future__ import annotations

from typing import Any

from ....framework import dtypes
from ....framework.graph import Tensor
from ....framework.tensor_shape import Dimension
from ..products import matmul as dense_matmul

FLOAT_OR_COMPLEX = (
    dtypes.float16,
    dtypes.float32,
    dtypes.float64,
    dtypes.complex64,
    dtypes.complex128,
)


def check_dtype(tensor: Tensor, allowed: tuple, what: str) -> None:
    """Raises ``TypeError`` when ``tensor``'s dtype is not one of ``allowed``."""
    if tensor.dtype.base_dtype not in allowed:
        raise TypeError(
            f"Argument {what} must have dtype in {[d.name for d in allowed]}. "
            f"Found: {tensor.dtype.name}"
        )


def real_dtype_of(dtype: dtypes.DType) -> dtypes.DType:
    """The real dtype of a complex ``dtype`` (``dtype`` itself when real)."""
    return {dtypes.complex64: dtypes.float32, dtypes.complex128: dtypes.float64}.get(
        dtype.base_dtype, dtype.base_dtype
    )


def combine_hints(what: str, relation: str, op_hint: bool | None, user_hint: bool | None) -> Any:
    """The hint of an operator that shares ``op_hint`` (adjoint, inverse): the user's
    must agree when both are set."""
    if op_hint is not None and user_hint is not None and op_hint != user_hint:
        raise ValueError(
            f"An operator and its {relation} must have the same {what} hint; "
            f"got {op_hint} and {user_hint}"
        )
    return op_hint if op_hint is not None else user_hint


def all_true_hint(hints: list, user_hint: bool | None, message: str) -> bool | None:
    """``True`` when every part's hint is ``True`` (the user's hint may not say
    ``False`` then), else the user's hint."""
    if hints and all(h is True for h in hints):
        if user_hint is False:
            raise ValueError(message)
        return True
    return user_hint


def static_dim(dim: Dimension | int | None) -> int | None:
    """A dimension's int value, or ``None`` when unknown."""
    return dim.value if isinstance(dim, Dimension) else dim


def require_compatible(dim_a: Any, dim_b: Any, what: str) -> None:
    """Raises ``ValueError`` when two static dimensions are known and differ."""
    a, b = static_dim(dim_a), static_dim(dim_b)
    if a is not None and b is not None and a != b:
        raise ValueError(f"{what}: dimensions {a} and {b} are not compatible")


def dense_matmul_of(
    matrix: Tensor, x: Tensor, adjoint: bool = False, adjoint_arg: bool = False
) -> Tensor:
    """``matrix @ x`` with the adjoint flags of ``LinearOperator.matmul``."""
    return dense_matmul(matrix, x, adjoint_a=adjoint, adjoint_b=adjoint_arg)
