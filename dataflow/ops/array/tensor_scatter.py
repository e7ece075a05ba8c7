"""``TensorScatterUpdate``/``Add``/``Sub``/``Max``/``Min``: a copy of a tensor with
``updates`` written into it at ``indices`` (``tf.tensor_scatter_nd_*``).

``indices[..., :k]`` names slices of ``tensor``'s first ``k`` dimensions and ``updates``
has shape ``indices.shape[:-1] + tensor.shape[k:]``, as for ``ScatterNd``. The kernel
copies ``tensor`` once and combines ``updates`` into the copy with numpy's unbuffered
``ufunc.at``, so duplicate indices all take part (they add up, or the extreme wins);
``update`` with duplicates keeps the last write (TF leaves the order unspecified).

Gradients are TF's: ``Update`` passes ``grad`` through except at the written slices,
which go to ``updates``; ``Add``/``Sub`` pass ``grad`` to ``tensor`` and gather it (or
its negation) for ``updates``; ``Max``/``Min`` split ``grad`` among the elements equal to
the output, as TF's ``_TensorScatterMinOrMaxGrad`` does.
"""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from ...framework import errors, registry
from ...framework.graph import Operation, Tensor, convert_to_tensor
from ...framework.tensor_shape import TensorShape
from ..build import apply_op
from ..cast import cast
from .indexing import gather_nd, scatter_nd
from .shape_helpers import int_tensor, require_index_dtype, shape_of
from .shapes import zeros_like

# op type -> (the ufunc combining updates into the copy, or None for a plain write)
_COMBINE = {
    "TensorScatterUpdate": None,
    "TensorScatterAdd": "add",
    "TensorScatterSub": "subtract",
    "TensorScatterMax": "maximum",
    "TensorScatterMin": "minimum",
}


def _infer(op: Operation) -> list:
    tensor, indices, updates = op.inputs
    require_index_dtype(indices, "indices", op.type)
    if updates.dtype != tensor.dtype:
        raise TypeError(
            f"updates of '{op.type}' must have the dtype of tensor "
            f"({tensor.dtype.name}), got {updates.dtype.name}"
        )
    tdims, idims = tensor.shape.as_tuple(), indices.shape.as_tuple()
    if idims is not None and not idims:
        raise ValueError(f"indices of '{op.type}' must be at least 1-D, got a scalar")
    if tdims is not None and idims is not None and idims[-1] is not None:
        k = idims[-1]
        if k > len(tdims):
            raise ValueError(
                f"indices.shape[-1] of '{op.type}' must be <= the rank of tensor, but "
                f"saw indices shape {indices.shape} and tensor shape {tensor.shape}"
            )
        want = TensorShape(list(idims[:-1]) + list(tdims[k:]))
        if not want.is_compatible_with(updates.shape):
            raise ValueError(
                f"updates of '{op.type}' must have shape indices.shape[:-1] + "
                f"tensor.shape[indices.shape[-1]:] = {want}, got {updates.shape}"
            )
    return [(tensor.dtype, tensor.shape)]


def _kernel(op_type: str) -> Any:
    combine = _COMBINE[op_type]

    def factory(ctx: Any, attrs: dict) -> Any:
        return _scatter_fn(ctx.xp, op_type, combine)

    return factory


def _scatter_fn(xp: Any, op_type: str, combine: str | None) -> Any:
    def tensor_scatter(tensor: Any, indices: Any, updates: Any) -> Any:
        k = indices.shape[-1]
        want = tuple(indices.shape[:-1]) + tuple(tensor.shape[k:])
        if k > tensor.ndim or tuple(updates.shape) != want:
            raise errors.InvalidArgumentError(
                None,
                None,
                f"{op_type}: updates of shape {tuple(updates.shape)} do not match "
                f"indices.shape[:-1] + tensor.shape[indices.shape[-1]:] = {want}",
            )
        limits = xp.asarray(list(tensor.shape[:k]), dtype=indices.dtype)
        bad = (indices < 0) | (indices >= limits)
        if indices.size and bool(bad.any()):
            row = builtins.int(xp.argmax(bad.reshape(-1, k).any(axis=1)))
            raise errors.InvalidArgumentError(
                None,
                None,
                f"{op_type}: indices[{row}] = {indices.reshape(-1, k)[row].tolist()} "
                f"does not index into shape {list(tensor.shape)}",
            )
        out = xp.array(tensor, copy=True)
        where = builtins.tuple(indices[..., i] for i in builtins.range(k))
        if combine is None:
            out[where] = updates
        else:
            getattr(xp, combine).at(out, where, updates)
        return out

    return tensor_scatter


def _update_grad(op: Operation, grad: Tensor) -> list:
    indices, updates = op.inputs[1], op.inputs[2]
    kept = tensor_scatter_nd_update(grad, indices, zeros_like(updates))
    return [kept, None, gather_nd(grad, indices)]


def _add_grad(op: Operation, grad: Tensor) -> list:
    return [grad, None, gather_nd(grad, op.inputs[1])]


def _sub_grad(op: Operation, grad: Tensor) -> list:
    return [grad, None, -gather_nd(grad, op.inputs[1])]


def _extreme_grad(op: Operation, grad: Tensor) -> list:
    from ..math.compare import equal  # math builds on this family

    tensor, indices, updates = op.inputs
    output = op.outputs[0]
    x_hits = cast(equal(tensor, output), grad.dtype)
    y_hits = cast(equal(updates, gather_nd(output, indices)), grad.dtype)
    hits = x_hits + scatter_nd(indices, y_hits, shape_of(tensor, indices.dtype))
    return [grad * x_hits / hits, None, gather_nd(grad / hits, indices) * y_hits]


for _type, _grad in (
    ("TensorScatterUpdate", _update_grad),
    ("TensorScatterAdd", _add_grad),
    ("TensorScatterSub", _sub_grad),
    ("TensorScatterMax", _extreme_grad),
    ("TensorScatterMin", _extreme_grad),
):
    registry.register(registry.OpDef(_type, _infer, _kernel(_type), _grad, foldable=True))


def _build(op_type: str, tensor: Any, indices: Any, updates: Any, name: str | None) -> Tensor:
    tensor = convert_to_tensor(tensor)
    # Floating-point indices stay floating point, for the rule to refuse (TF's TypeError).
    floating = not isinstance(indices, Tensor) and np.asarray(indices).dtype.kind in "fc"
    index = convert_to_tensor(indices) if floating else int_tensor(indices)
    return apply_op(
        op_type, [tensor, index, convert_to_tensor(updates, dtype=tensor.dtype)], name=name
    )


def tensor_scatter_nd_update(
    tensor: Any, indices: Any, updates: Any, name: str | None = None
) -> Tensor:
    """A copy of ``tensor`` with the slices at ``indices`` replaced by ``updates``.

    Args:
        tensor: the tensor to copy.
        indices: integer ``[..., k]``: each row names a slice of ``tensor``'s first
            ``k`` dimensions.
        updates: ``indices.shape[:-1] + tensor.shape[k:]``, of ``tensor``'s dtype.
        name: the op's name.

    Raises:
        ValueError: shapes that do not fit, at build time.
        InvalidArgumentError: an index outside ``tensor``, when the step runs.
    """
    return _build("TensorScatterUpdate", tensor, indices, updates, name)


def tensor_scatter_nd_add(
    tensor: Any, indices: Any, updates: Any, name: str | None = None
) -> Tensor:
    """A copy of ``tensor`` with ``updates`` added at ``indices`` (duplicates add up);
    arguments as for ``tensor_scatter_nd_update``."""
    return _build("TensorScatterAdd", tensor, indices, updates, name)


def tensor_scatter_nd_sub(
    tensor: Any, indices: Any, updates: Any, name: str | None = None
) -> Tensor:
    """A copy of ``tensor`` with ``updates`` subtracted at ``indices``; arguments as for
    ``tensor_scatter_nd_update``."""
    return _build("TensorScatterSub", tensor, indices, updates, name)


def tensor_scatter_nd_max(
    tensor: Any, indices: Any, updates: Any, name: str | None = None
) -> Tensor:
    """A copy of ``tensor`` holding ``maximum(tensor[i], updates)`` at ``indices``;
    arguments as for ``tensor_scatter_nd_update``."""
    return _build("TensorScatterMax", tensor, indices, updates, name)


def tensor_scatter_nd_min(
    tensor: Any, indices: Any, updates: Any, name: str | None = None
) -> Tensor:
    """A copy of ``tensor`` holding ``minimum(tensor[i], updates)`` at ``indices``;
    arguments as for ``tensor_scatter_nd_update``."""
    return _build("TensorScatterMin", tensor, indices, updates, name)
