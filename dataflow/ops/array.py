"""Array ops: shapes, slicing, joining, broadcasting, and their gradients.

(So far the ops the gradient pass needs: ``ZerosLike``, ``OnesLike``, ``SumToShape``,
``Shape``, ``BroadcastTo``.)
"""

from __future__ import annotations

from typing import Any

from ..framework import dtypes, registry
from ..framework.graph import Operation, Tensor
from ..framework.tensor_shape import TensorShape, broadcast_shapes
from ..framework.tensor_util import constant_shape
from .build import apply_op
from .constant import constant
from .rules import same_as_input


def _zeros_like_kernel(ctx: Any, attrs: dict) -> Any:
    return ctx.xp.zeros_like


def _ones_like_kernel(ctx: Any, attrs: dict) -> Any:
    return ctx.xp.ones_like


registry.register(registry.OpDef("ZerosLike", same_as_input, _zeros_like_kernel,
                                 registry.NOT_DIFFERENTIABLE, foldable=True))
registry.register(registry.OpDef("OnesLike", same_as_input, _ones_like_kernel,
                                 registry.NOT_DIFFERENTIABLE, foldable=True))


def zeros_like(tensor: Any, dtype: Any = None, name: str | None = None,
               optimize: bool = True) -> Tensor:
    """A tensor of zeros with the shape (and dtype, unless given) of ``tensor``."""
    out = apply_op("ZerosLike", [tensor], name=name)
    return out if dtype is None or out.dtype == dtypes.as_dtype(dtype) else \
        apply_op("Cast", [out], {"DstT": dtypes.as_dtype(dtype)})


def ones_like(tensor: Any, dtype: Any = None, name: str | None = None,
              optimize: bool = True) -> Tensor:
    """A tensor of ones with the shape (and dtype, unless given) of ``tensor``."""
    out = apply_op("OnesLike", [tensor], name=name)
    return out if dtype is None or out.dtype == dtypes.as_dtype(dtype) else \
        apply_op("Cast", [out], {"DstT": dtypes.as_dtype(dtype)})


# --- Shape -----------------------------------------------------------------------------
def _infer_shape(op: Operation) -> list:
    rank = op.inputs[0].shape.rank
    return [(op.attrs["out_type"], TensorShape([rank]))]


def _shape_kernel(ctx: Any, attrs: dict) -> Any:
    xp, dtype = ctx.xp, attrs["out_type"].as_numpy_dtype
    return lambda x: xp.asarray(x.shape, dtype=dtype)


registry.register(registry.OpDef("Shape", _infer_shape, _shape_kernel,
                                 registry.NOT_DIFFERENTIABLE, foldable=True))


def shape(input: Any, name: str | None = None, out_type: Any = dtypes.int32) -> Tensor:  # noqa: A002
    """The shape of ``input`` as a 1-D integer tensor."""
    return apply_op("Shape", [input], {"out_type": dtypes.as_dtype(out_type)}, name)


# --- SumToShape / BroadcastTo: the pair that undoes and does broadcasting ---------------
def _infer_sum_to_shape(op: Operation) -> list:
    target = constant_shape(op.inputs[1])
    if target is None:
        rank = op.inputs[1].shape.as_tuple()[0] if op.inputs[1].shape.rank else None
        return [(op.inputs[0].dtype, TensorShape(None if rank is None else [None] * rank))]
    return [(op.inputs[0].dtype, TensorShape(target))]


def _sum_to_shape_kernel(ctx: Any, attrs: dict) -> Any:
    xp = ctx.xp

    def sum_to_shape(x: Any, shape: Any) -> Any:
        target = tuple(int(d) for d in shape)
        if x.shape == target:
            return x
        lead = x.ndim - len(target)
        axes = tuple(range(lead)) + tuple(
            lead + i for i, d in enumerate(target) if d == 1 and x.shape[lead + i] != 1)
        return xp.sum(x, axis=axes, keepdims=False).reshape(target) if axes else \
            x.reshape(target)

    return sum_to_shape


def _sum_to_shape_grad(op: Operation, grad: Tensor) -> list:
    return [broadcast_to(grad, shape(op.inputs[0])), None]


registry.register(registry.OpDef("SumToShape", _infer_sum_to_shape, _sum_to_shape_kernel,
                                 _sum_to_shape_grad, foldable=True))


def sum_to_shape(x: Any, target_shape: Any, name: str | None = None) -> Tensor:
    """Sums ``x`` over the dimensions numpy broadcasting added to reach its shape from
    ``target_shape`` (the adjoint of ``broadcast_to``)."""
    return apply_op("SumToShape", [x, target_shape], name=name)


def _infer_broadcast_to(op: Operation) -> list:
    target = constant_shape(op.inputs[1])
    x = op.inputs[0]
    if target is None:
        rank = op.inputs[1].shape.as_tuple()[0] if op.inputs[1].shape.rank else None
        return [(x.dtype, TensorShape(None if rank is None else [None] * rank))]
    out = broadcast_shapes(x.shape, TensorShape(target))
    if out.rank != len(target) or not out.is_compatible_with(TensorShape(target)):
        raise ValueError(f"cannot broadcast shape {x.shape} to {target}")
    return [(x.dtype, TensorShape(target))]


def _broadcast_to_kernel(ctx: Any, attrs: dict) -> Any:
    xp = ctx.xp
    # Materialize: a broadcast view would alias its input and be read-only.
    return lambda x, shape: xp.array(xp.broadcast_to(x, tuple(int(d) for d in shape)))


def _broadcast_to_grad(op: Operation, grad: Tensor) -> list:
    return [sum_to_shape(grad, shape(op.inputs[0])), None]


registry.register(registry.OpDef("BroadcastTo", _infer_broadcast_to, _broadcast_to_kernel,
                                 _broadcast_to_grad, foldable=True))


def broadcast_to(input: Any, shape: Any, name: str | None = None) -> Tensor:  # noqa: A002
    """Broadcasts ``input`` to ``shape`` (numpy rules)."""
    return apply_op("BroadcastTo", [input, _as_int_tensor(shape)], name=name)


def _as_int_tensor(value: Any) -> Any:
    if isinstance(value, (list, tuple)) and all(isinstance(v, int) for v in value):
        return constant(list(value), dtype=dtypes.int32)
    return value
