"""``ArgMax``/``ArgMin`` (the index of the extreme along an axis), ``Cumsum`` and
``Cumprod`` (running sums and products): the axis ops of the math family that do not
reduce to one value per slice.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable
from typing import Any

import numpy as np

from ...framework import dtypes, registry
from ...framework.graph import Operation, Tensor, convert_to_tensor
from ...framework.tensor_shape import TensorShape
from ...framework.tensor_util import constant_value
from ..build import apply_op
from ..rules import is_int_or_float
from .compare import NOT_DIFF
from .reduce import AxesReader, axis_tensor, check_axes, pick


# --- ArgMax / ArgMin --------------------------------------------------------------------
def _infer_arg_reduce(op: Operation) -> list:
    x, dim = op.inputs
    if not is_int_or_float(x.dtype):
        raise TypeError(f"'{op.type}' needs integer or floating-point inputs, got {x.dtype.name}")
    check_axes(op)
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
        raise ValueError(f"Expected dimension in the range [{-rank}, {rank}), but got {axis}")
    dims = x.shape.as_list()
    del dims[axis]
    return [(out, TensorShape(dims))]


def _arg_reduce_kernel(fn_name: str) -> Callable:
    def factory(ctx: Any, attrs: dict) -> Any:
        fn = getattr(ctx.xp, fn_name)
        out = attrs["output_type"].as_numpy_dtype
        read = AxesReader()
        return lambda x, dim: fn(x, axis=read.scalar(dim)).astype(out)

    return factory


registry.register(
    registry.OpDef("ArgMax", _infer_arg_reduce, _arg_reduce_kernel("argmax"), NOT_DIFF)
)
registry.register(
    registry.OpDef("ArgMin", _infer_arg_reduce, _arg_reduce_kernel("argmin"), NOT_DIFF)
)


def _arg_reduce(
    op_type: str,
    input: Any,
    axis: Any,
    name: str | None,
    dimension: Any,
    output_type: Any,
) -> Tensor:
    axis = pick(axis, dimension, "axis", "dimension")
    if axis is None:
        axis = 0
    out = dtypes.as_dtype(output_type)
    if out not in (dtypes.int32, dtypes.int64):
        raise TypeError(f"output_type of {op_type} must be int32 or int64, got {out.name}")
    return apply_op(
        op_type, [convert_to_tensor(input), axis_tensor(axis)], {"output_type": out}, name=name
    )


def argmax(
    input: Any,
    axis: Any = None,
    name: str | None = None,
    dimension: Any = None,
    output_type: Any = dtypes.int64,
) -> Tensor:
    """Returns the index of the largest value along ``axis`` (default 0).

    Ties give the smallest index. ``dimension`` is the deprecated name of ``axis``.
    """
    return _arg_reduce("ArgMax", input, axis, name, dimension, output_type)


def argmin(
    input: Any,
    axis: Any = None,
    name: str | None = None,
    dimension: Any = None,
    output_type: Any = dtypes.int64,
) -> Tensor:
    """Returns the index of the smallest value along ``axis`` (default 0)."""
    return _arg_reduce("ArgMin", input, axis, name, dimension, output_type)


# --- Cumsum ----------------------------------------------------------------------------
def infer_cumulative(op: Operation) -> list:
    x = op.inputs[0]
    if not is_int_or_float(x.dtype):
        raise TypeError(f"'{op.type}' needs integer or floating-point inputs, got {x.dtype.name}")
    check_axes(op)
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
    running, first = (xp.cumprod, 1) if attrs.get("product") else (xp.cumsum, 0)
    read = AxesReader()

    def cumulate(x: Any, axis: Any) -> Any:
        a = read.scalar(axis)
        if reverse:
            x = xp.flip(x, a)
        out = running(x, axis=a, dtype=x.dtype)
        if exclusive:  # shifted by one: each element left out of its own sum/product
            out = xp.roll(out, 1, axis=a)
            index: list[Any] = [slice(None)] * out.ndim
            index[a] = 0
            out[tuple(index)] = first
        return xp.flip(out, a) if reverse else out

    return cumulate


def _cumsum_grad(op: Operation, grad: Tensor) -> list:
    return [
        cumsum(
            grad, op.inputs[1], exclusive=op.attrs["exclusive"], reverse=not op.attrs["reverse"]
        ),
        None,
    ]


registry.register(registry.OpDef("Cumsum", infer_cumulative, _cumsum_kernel, _cumsum_grad))


def _cumprod_grad(op: Operation, grad: Tensor) -> list:
    # TF's rule (exact where x has no zeros): d/dx_i of the running products.
    x, axis = op.inputs
    exclusive, reverse = op.attrs["exclusive"], op.attrs["reverse"]
    products = cumprod(x, axis, exclusive=exclusive, reverse=reverse)
    return [cumsum(products * grad, axis, exclusive=exclusive, reverse=not reverse) / x, None]


registry.register(registry.OpDef("Cumprod", infer_cumulative, _cumsum_kernel, _cumprod_grad))


def cumsum(
    x: Any, axis: Any = 0, exclusive: bool = False, reverse: bool = False, name: str | None = None
) -> Tensor:
    """Cumulative sum along ``axis``.

    ``exclusive`` leaves each element out of its own sum (the first is 0); ``reverse``
    sums from the end.
    """
    return apply_op(
        "Cumsum",
        [convert_to_tensor(x), axis_tensor(axis)],
        {"exclusive": bool(exclusive), "reverse": bool(reverse)},
        name=name,
    )


def cumprod(
    x: Any, axis: Any = 0, exclusive: bool = False, reverse: bool = False, name: str | None = None
) -> Tensor:
    """Cumulative product along ``axis`` (``exclusive``: each element left out, the
    first is 1; ``reverse``: from the end)."""
    return apply_op(
        "Cumprod",
        [convert_to_tensor(x), axis_tensor(axis)],
        {"exclusive": bool(exclusive), "reverse": bool(reverse), "product": True},
        name=name,
    )
