"""Ordering: ``TopKV2`` (the ``k`` largest entries of the last axis and where they are),
``InTopKV2`` (is the target among the ``k`` best predictions), and ``sort``/``argsort``
built on ``top_k`` as TF1 builds them.

``TopKV2``'s gradient scatters each value's gradient back to the position it came from
(``unsorted_segment_sum`` over the flattened input, whose gradient is a gather again).
Ties go to the lower index, as in TF: the kernel sorts stably.
"""

from __future__ import annotations

from collections import namedtuple
from typing import Any

from ...framework import dtypes, registry
from ...framework.graph import Operation, Tensor, convert_to_tensor
from ...framework.tensor_shape import TensorShape
from ...framework.tensor_util import constant_value
from .. import array as array_ops
from ..array.indexing import unsorted_segment_sum
from ..array.reorder import range_ as range_op
from ..array.shape_helpers import int_tensor
from ..build import apply_op, apply_op_n
from ..control.group import identity
from ..rules import is_int_or_float
from .arith import negative

TopKV2 = namedtuple("TopKV2", ["values", "indices"])  # TF1 returns this namedtuple


def _infer_top_k(op: Operation) -> list:
    x, k = op.inputs
    if not is_int_or_float(x.dtype):
        raise TypeError(f"top_k needs integer or floating-point inputs, got {x.dtype.name}")
    if x.shape.rank == 0:
        raise ValueError("Shape must be at least rank 1 but is rank 0: top_k takes a vector")
    known_k = constant_value(k)
    if known_k is not None and int(known_k) < 0:
        raise ValueError(f"Need k >= 0, got {int(known_k)}")
    if x.shape.rank is None:
        return [(x.dtype, TensorShape(None)), (dtypes.int32, TensorShape(None))]
    dims = x.shape.as_list()
    last = dims[-1]
    if known_k is not None and last is not None and int(known_k) > last:
        raise ValueError(f"input must have at least k={int(known_k)} columns, has {last}")
    dims[-1] = None if known_k is None else int(known_k)
    return [(x.dtype, TensorShape(dims)), (dtypes.int32, TensorShape(dims))]


def _top_k_kernel(ctx: Any, attrs: dict) -> Any:
    xp = ctx.xp

    def top_k(x: Any, k: Any) -> tuple:
        k = int(k)
        # The stable order of -x puts the larger values first and, among equal values,
        # the lower index first (TF's rule). Unsigned or bool inputs are not allowed.
        order = xp.argsort(-x, axis=-1, kind="stable")[..., :k]
        return xp.take_along_axis(x, order, axis=-1), order.astype(xp.int32)

    return top_k


def _top_k_grad(op: Operation, grad: Tensor, _indices_grad: Tensor | None) -> list:
    x, indices = op.inputs[0], op.outputs[1]
    shape = array_ops.shape(x)
    n = shape[-1]
    rows = array_ops.size(x) // n
    k = array_ops.shape(indices)[-1]
    offsets = array_ops.reshape(range_op(rows) * n, [-1, 1])
    flat = array_ops.reshape(array_ops.reshape(indices, array_ops.stack([rows, k])) + offsets, [-1])
    values = array_ops.reshape(grad, [-1])
    scattered = unsorted_segment_sum(values, flat, rows * n)
    return [array_ops.reshape(scattered, shape), None]


registry.register(registry.OpDef("TopKV2", _infer_top_k, _top_k_kernel, _top_k_grad))


def top_k(input: Any, k: Any = 1, sorted: bool = True, name: str | None = None) -> TopKV2:
    """The ``k`` largest entries of the last axis (``values``, in decreasing order) and
    their positions (``indices``, int32); equal values keep their order.

    Raises:
        ValueError: ``k`` is negative or larger than the last dimension (when known).
    """
    x = convert_to_tensor(input)
    op = apply_op_n("TopKV2", [x, int_tensor(k)], {"sorted": bool(sorted)}, name=name)
    return TopKV2(*op.outputs)


def _infer_in_top_k(op: Operation) -> list:
    predictions, targets, _k = op.inputs
    if predictions.shape.rank not in (None, 2):
        raise ValueError(f"predictions must be a matrix, got shape {predictions.shape}")
    if targets.shape.rank not in (None, 1):
        raise ValueError(f"targets must be a vector, got shape {targets.shape}")
    rows = predictions.shape.as_list()[0] if predictions.shape.rank else None
    return [(dtypes.bool, TensorShape([rows]))]


def _in_top_k_kernel(ctx: Any, attrs: dict) -> Any:
    xp = ctx.xp

    def in_top_k(predictions: Any, targets: Any, k: Any) -> Any:
        rows = xp.arange(predictions.shape[0])
        valid = (targets >= 0) & (targets < predictions.shape[1])
        target_values = predictions[rows, xp.clip(targets, 0, predictions.shape[1] - 1)]
        # Ties at the boundary count as in the top k (TF's rule): count strictly larger.
        larger = (predictions > target_values[:, None]).sum(axis=1)
        return valid & xp.isfinite(target_values) & (larger < int(k))

    return in_top_k


registry.register(
    registry.OpDef("InTopKV2", _infer_in_top_k, _in_top_k_kernel, registry.NOT_DIFFERENTIABLE)
)


def in_top_k(predictions: Any, targets: Any, k: Any, name: str | None = None) -> Tensor:
    """Whether ``targets[i]`` is among the ``k`` largest of ``predictions[i]`` (classes
    tied at the boundary count as in; a non-finite prediction never does)."""
    return apply_op(
        "InTopKV2",
        [
            convert_to_tensor(predictions, dtype=dtypes.float32),
            convert_to_tensor(targets),
            int_tensor(k),
        ],
        name=name,
    )


def _along_last(x: Tensor, axis: int, fn: Any) -> Tensor:
    """``fn`` applied along ``axis`` by moving it last and back."""
    rank = x.shape.rank
    if rank is None:
        raise ValueError("sort/argsort need an input of known rank")
    axis = axis % rank if rank else 0
    if axis == rank - 1:
        return fn(x)
    perm = list(range(rank))
    perm[axis], perm[-1] = perm[-1], perm[axis]
    return array_ops.transpose(fn(array_ops.transpose(x, perm)), perm)


def _check_direction(direction: str) -> bool:
    if direction not in ("ASCENDING", "DESCENDING"):
        raise ValueError(f"direction must be 'ASCENDING' or 'DESCENDING', got {direction!r}")
    return direction == "DESCENDING"


def sort(
    values: Any, axis: int = -1, direction: str = "ASCENDING", name: str | None = None
) -> Tensor:
    """``values`` sorted along ``axis`` (TF's ``sort``: ``top_k`` of all entries)."""
    descending = _check_direction(direction)
    x = convert_to_tensor(values)

    def last(v: Tensor) -> Tensor:
        n = array_ops.shape(v)[-1]
        if descending:
            return top_k(v, n).values
        return negative(top_k(negative(v), n).values)

    return identity(_along_last(x, axis, last), name=name)


def argsort(
    values: Any,
    axis: int = -1,
    direction: str = "ASCENDING",
    stable: bool = False,
    name: str | None = None,
) -> Tensor:
    """The int32 positions that sort ``values`` along ``axis`` (equal values keep their
    order, so the result is stable either way)."""
    descending = _check_direction(direction)
    x = convert_to_tensor(values)

    def last(v: Tensor) -> Tensor:
        n = array_ops.shape(v)[-1]
        return top_k(v if descending else negative(v), n).indices

    return identity(_along_last(x, axis, last), name=name)
