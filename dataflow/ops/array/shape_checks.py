"""Shapes checked or combined: ``ensure_shape`` (``EnsureShape``),
``broadcast_dynamic_shape`` (``BroadcastArgs``), ``broadcast_static_shape``, and
``is_tensor``.

``EnsureShape`` passes its input through, its static shape merged with the shape
asked for, and fails the step with ``InvalidArgumentError`` when the value's shape does
not fit (TF1's run-time check); its gradient is the upstream gradient.
``BroadcastArgs`` computes numpy's broadcast of two shape vectors; it folds at build
time when both are known.
"""

from __future__ import annotations

from typing import Any

from ...framework import dtypes, errors, registry
from ...framework.graph import Operation, Tensor, convert_to_tensor, is_tensor_like
from ...framework.sparse_tensor import SparseTensor
from ...framework.tensor_shape import TensorShape, as_shape, broadcast_shapes
from ..build import apply_op


def _infer_ensure(op: Operation) -> list:
    x = op.inputs[0]
    wanted = TensorShape(op.attrs["shape"])
    if not x.shape.is_compatible_with(wanted):
        raise ValueError(f"Shapes {x.shape} and {wanted} are incompatible")
    return [(x.dtype, x.shape.merge_with(wanted))]


def _ensure_kernel(ctx: Any, attrs: dict) -> Any:
    wanted = TensorShape(attrs["shape"])

    def ensure(x: Any) -> Any:
        if not wanted.is_compatible_with(TensorShape(list(x.shape))):
            raise errors.InvalidArgumentError(
                None,
                None,
                f"Shape of tensor {list(x.shape)} is not compatible with expected shape {wanted}.",
            )
        return x

    return ensure


registry.register(
    registry.OpDef("EnsureShape", _infer_ensure, _ensure_kernel, lambda op, grad: [grad])
)


def ensure_shape(x: Any, shape: Any, name: str | None = None) -> Tensor:
    """``x`` unchanged, its static shape merged with ``shape`` and its shape checked
    against ``shape`` when the step runs (``tf.ensure_shape``; ``None`` dimensions match
    anything).

    Raises:
        ValueError: ``x``'s static shape is not compatible with ``shape``.
        InvalidArgumentError: (when the step runs) the value's shape does not fit.
    """
    shape = as_shape(shape)
    dims = None if shape.rank is None else shape.as_list()
    return apply_op("EnsureShape", [x], {"shape": dims}, name=name)


def _infer_broadcast_args(op: Operation) -> list:
    s0, s1 = op.inputs
    if s0.dtype != s1.dtype or s0.dtype not in (dtypes.int32, dtypes.int64):
        raise TypeError(
            f"BroadcastArgs: shapes must both be int32 or int64, got {s0.dtype.name}, "
            f"{s1.dtype.name}"
        )
    for s in (s0, s1):
        if s.shape.rank not in (None, 1):
            raise ValueError(f"BroadcastArgs: a shape must be a vector, got rank {s.shape.rank}")
    n0, n1 = (s.shape.as_list()[0] if s.shape.rank == 1 else None for s in (s0, s1))
    length = max(n0, n1) if n0 is not None and n1 is not None else None
    return [(s0.dtype, TensorShape([length]))]


def _broadcast_args_kernel(ctx: Any, attrs: dict) -> Any:
    xp = ctx.xp

    def broadcast_args(s0: Any, s1: Any) -> Any:
        a, b = ([int(v) for v in s.tolist()] for s in (s0, s1))
        width = max(len(a), len(b))
        a, b = [1] * (width - len(a)) + a, [1] * (width - len(b)) + b
        if any(x != y and 1 not in (x, y) for x, y in zip(a, b, strict=True)):
            raise errors.InvalidArgumentError(None, None, f"Incompatible shapes: {a} vs. {b}")
        out = [y if x == 1 else x for x, y in zip(a, b, strict=True)]
        return xp.asarray(out, dtype=s0.dtype)

    return broadcast_args


registry.register(
    registry.OpDef(
        "BroadcastArgs",
        _infer_broadcast_args,
        _broadcast_args_kernel,
        registry.NOT_DIFFERENTIABLE,
        foldable=True,
        gpu_kernel=False,
    )
)


def broadcast_dynamic_shape(shape_x: Any, shape_y: Any, name: str | None = None) -> Tensor:
    """The shape, as a vector, that tensors of shapes ``shape_x`` and ``shape_y``
    (int32 or int64 vectors) broadcast to (``tf.broadcast_dynamic_shape``).

    Raises:
        TypeError: shapes of different or non-integer dtypes.
        InvalidArgumentError: (when the step runs) shapes that do not broadcast.
    """
    sx = convert_to_tensor(shape_x, name="shape_x")
    sy = convert_to_tensor(shape_y, dtype=sx.dtype, name="shape_y")
    return apply_op("BroadcastArgs", [sx, sy], name=name)


def broadcast_static_shape(shape_x: Any, shape_y: Any) -> TensorShape:
    """The ``TensorShape`` two static shapes broadcast to (``tf.broadcast_static_shape``).

    Raises:
        ValueError: the shapes are incompatible.
    """
    x, y = as_shape(shape_x), as_shape(shape_y)
    try:
        return broadcast_shapes(x, y)
    except ValueError:
        raise ValueError(f"Incompatible shapes for broadcasting: {x} and {y}") from None


def is_tensor(x: Any) -> bool:
    """Whether ``x`` is a graph tensor or tensor-like (``Tensor``, ``SparseTensor``,
    ``Variable``, ...): ``tf.is_tensor``."""
    return is_tensor_like(x) or hasattr(x, "_as_graph_element") or isinstance(x, SparseTensor)
