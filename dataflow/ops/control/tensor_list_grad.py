"""The gradient side of tensor lists (``ops/control/tensor_list.py`` explains the values).

A list's gradient is a list of its length whose ``None`` entries are zeros. Here:
``TensorListZerosLike`` (all ``None``: what ``zeros_like`` of a list makes) and
``TensorListAddN`` (entry-by-entry sums: what ``add_n`` of lists makes, when a list
feeds several ops), and the four ops the gradient rules use, each taking the forward
value as a ``like`` input for lengths and shapes: ``TensorListGatherLike`` (elements
as a dense array, zeros where ``None``), ``TensorListScatterLike`` (a dense array into
a fresh list of ``like``'s length), ``TensorListClear`` (entries set to ``None``: what
a write overwrote passes nothing back) and ``TensorListConcatLike`` (``concat`` with
zero blocks, the gradient of ``split``).
"""

from __future__ import annotations

from typing import Any

from ...framework import dtypes, registry
from ...framework.graph import Operation, Tensor
from ...framework.tensor_shape import scalar
from ..build import apply_op

_NOT_DIFFERENTIABLE = registry.NOT_DIFFERENTIABLE


def padded(items: tuple, length: int) -> tuple:
    """``items`` with unwritten entries appended up to ``length``."""
    return items + (None,) * (length - len(items)) if len(items) < length else items


def list_spec() -> list:
    """The output spec of an op making a list: one scalar ``variant``."""
    return [(dtypes.variant, scalar())]


def require_list(t: Tensor, op_type: str) -> None:
    if t.dtype != dtypes.variant:
        raise TypeError(f"{op_type} expects a TensorArray flow (variant), got {t.dtype.name}")


def _infer_same_list(op: Operation) -> list:
    for t in op.inputs:
        require_list(t, op.type)
    return list_spec()


def _zeros_like_kernel(ctx: Any, attrs: dict) -> Any:
    return lambda items: (None,) * len(items)


def _add_n_kernel(ctx: Any, attrs: dict) -> Any:
    def add_n(*lists: tuple) -> tuple:
        length = max(len(items) for items in lists)
        out: list = [None] * length
        for items in lists:
            for i, value in enumerate(items):
                if value is not None:
                    out[i] = value if out[i] is None else out[i] + value
        return tuple(out)

    return add_n


def _add_n_grad(op: Operation, grad: Tensor) -> list:
    return [grad] * len(op.inputs)


def _infer_gather_like(op: Operation) -> list:
    require_list(op.inputs[0], "TensorListGatherLike")
    like = op.inputs[2]
    return [(like.dtype, like.shape)]


def _gather_like_kernel(ctx: Any, attrs: dict) -> Any:
    xp = ctx.xp

    def gather_like(items: tuple, indices: Any, like: Any) -> Any:
        if indices.ndim == 0:
            value = items[int(indices)] if int(indices) < len(items) else None
            return xp.zeros_like(like) if value is None else value
        out = xp.zeros_like(like)
        for row, i in enumerate(indices.tolist()):
            if i < len(items) and items[i] is not None:
                out[row] = items[i]
        return out

    return gather_like


def _gather_like_grad(op: Operation, grad: Tensor) -> list:
    items, indices, _ = op.inputs
    return [scatter_like(grad, indices, items), None, None]


def _scatter_like_kernel(ctx: Any, attrs: dict) -> Any:
    def scatter_like(values: Any, indices: Any, like: tuple) -> tuple:
        out: list = [None] * len(like)
        pairs = [(int(indices), values)] if indices.ndim == 0 else zip(indices.tolist(), values)
        for i, value in pairs:
            # A repeated index (a gather reading one element twice) sums its gradients.
            out[i] = value if out[i] is None else out[i] + value
        return tuple(out)

    return scatter_like


def _infer_scatter_like(op: Operation) -> list:
    require_list(op.inputs[2], "TensorListScatterLike")
    return list_spec()


def _scatter_like_grad(op: Operation, grad: Tensor) -> list:
    values, indices, _ = op.inputs
    return [gather_like(grad, indices, values), None, None]


def _infer_clear(op: Operation) -> list:
    require_list(op.inputs[0], "TensorListClear")
    require_list(op.inputs[2], "TensorListClear")
    return list_spec()


def _clear_kernel(ctx: Any, attrs: dict) -> Any:
    def clear(items: tuple, indices: Any, like: tuple) -> tuple:
        out = list(padded(items, len(like))[: len(like)])
        for i in [int(indices)] if indices.ndim == 0 else indices.tolist():
            if i < len(out):
                out[i] = None
        return tuple(out)

    return clear


def _clear_grad(op: Operation, grad: Tensor) -> list:
    items, indices, _ = op.inputs
    return [clear(grad, indices, items), None, None]


def _infer_concat_like(op: Operation) -> list:
    require_list(op.inputs[0], "TensorListConcatLike")
    like = op.inputs[1]
    return [(like.dtype, like.shape)]


def _concat_like_kernel(ctx: Any, attrs: dict) -> Any:
    xp = ctx.xp

    def concat_like(items: tuple, like: Any, lengths: Any) -> Any:
        out = xp.zeros_like(like)
        start = 0
        for i, n in enumerate(int(n) for n in lengths.tolist()):
            if i < len(items) and items[i] is not None:
                out[start : start + n] = items[i]
            start += n
        return out

    return concat_like


def _concat_like_grad(op: Operation, grad: Tensor) -> list:
    _, _, lengths = op.inputs
    return [apply_op("TensorListSplit", [grad, lengths]), None, None]


for _opdef in (
    registry.OpDef(
        "TensorListZerosLike", _infer_same_list, _zeros_like_kernel, _NOT_DIFFERENTIABLE
    ),
    registry.OpDef("TensorListAddN", _infer_same_list, _add_n_kernel, _add_n_grad),
    registry.OpDef(
        "TensorListGatherLike", _infer_gather_like, _gather_like_kernel, _gather_like_grad
    ),
    registry.OpDef(
        "TensorListScatterLike", _infer_scatter_like, _scatter_like_kernel, _scatter_like_grad
    ),
    registry.OpDef("TensorListClear", _infer_clear, _clear_kernel, _clear_grad),
    registry.OpDef(
        "TensorListConcatLike", _infer_concat_like, _concat_like_kernel, _concat_like_grad
    ),
):
    registry.register(_opdef)


def gather_like(items: Tensor, indices: Any, like: Tensor) -> Tensor:
    """``items[indices]`` as a dense array shaped like ``like`` (zeros where unwritten)."""
    return apply_op("TensorListGatherLike", [items, indices, like])


def scatter_like(values: Tensor, indices: Any, like: Tensor) -> Tensor:
    """A list of ``like``'s length holding ``values`` at ``indices`` (summed when repeated)."""
    return apply_op("TensorListScatterLike", [values, indices, like])


def clear(items: Tensor, indices: Any, like: Tensor) -> Tensor:
    """``items`` cut to ``like``'s length with the entries at ``indices`` unwritten."""
    return apply_op("TensorListClear", [items, indices, like])
