"""Padding: ``Pad``/``PadV2`` (constant fill), ``MirrorPad`` (REFLECT and SYMMETRIC) and its
gradient ``MirrorPadGrad``, and the ``tf.pad`` builder; each gradient is the adjoint
slice or fold of the padded border.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...framework import registry
from ...framework.graph import (
    Operation,
    Tensor,
    convert_to_tensor,
)
from ...framework.tensor_shape import TensorShape
from ..build import apply_op
from .shape_helpers import (
    int_tensor,
    partial_value,
    require_index_dtype,
    require_rank,
    shape_of,
)


# --- Pad / PadV2 / MirrorPad / MirrorPadGrad ---------------------------------------------
def _padded_dims(op: Operation, sign: int) -> list | None:
    """Output dims of padding (``sign=1``) or un-padding (``sign=-1``) input 0."""
    x, paddings_t = op.inputs[0], op.inputs[1]
    require_index_dtype(paddings_t, "paddings", op.type)
    dims = x.shape.as_tuple()
    pshape = paddings_t.shape.as_tuple()
    if pshape is not None and (
        len(pshape) != 2
        or pshape[1] not in (None, 2)
        or (dims is not None and pshape[0] not in (None, len(dims)))
    ):
        rank_ = "?" if dims is None else len(dims)
        raise ValueError(f"paddings must be a matrix of shape [{rank_}, 2], got {paddings_t.shape}")
    pads = partial_value(paddings_t)
    if dims is None:
        return None if pads is None else [None] * pads.shape[0]
    if pads is None:
        return [None] * len(dims)
    out: list[Any] = []
    mode = op.attrs.get("mode", "CONSTANT")
    for i, (d, (before, after)) in enumerate(zip(dims, pads.tolist(), strict=True)):
        for p in (before, after):
            if p is not None and p < 0:
                raise ValueError(f"paddings must be non-negative, got {p} for dimension {i}")
            limit = (
                None
                if d is None or sign < 0
                else d - 1
                if mode == "REFLECT"
                else d
                if mode == "SYMMETRIC"
                else None
            )
            if p is not None and limit is not None and p > limit:
                raise ValueError(
                    f"paddings of dimension {i} must be no greater than "
                    f"{limit} in {mode} mode (the dimension has size {d}), "
                    f"got {p}"
                )
        if d is None or before is None or after is None:
            out.append(None)
        else:
            out.append(d + sign * (before + after))
    return out


def _infer_pad(op: Operation) -> list:
    x = op.inputs[0]
    if op.type == "PadV2":
        require_rank(op.inputs[2], (0,), "constant_values", "PadV2")
        if op.inputs[2].dtype != x.dtype:
            raise TypeError(
                f"constant_values of dtype {op.inputs[2].dtype.name} do not "
                f"match the input's dtype {x.dtype.name}"
            )
    return [(x.dtype, TensorShape(_padded_dims(op, 1)))]


def _pad_kernel(ctx: Any, attrs: dict) -> Any:
    pad_ = ctx.xp.pad
    return lambda x, paddings, value=0: pad_(
        x, paddings.tolist(), mode="constant", constant_values=value
    )


def _pad_grad(op: Operation, grad: Tensor) -> list:
    x, paddings = op.inputs[0], op.inputs[1]
    begin = paddings[:, 0]
    # The Slice op by its type: its builder (slicing.slice_) differentiates into
    # ``pad``, so the two modules would import each other. begin and size already
    # share the paddings' integer dtype, which is all the builder would add.
    dx = apply_op("Slice", [grad, begin, shape_of(x, paddings.dtype)])
    return [dx, None] + [None] * (len(op.inputs) - 2)


registry.register(registry.OpDef("Pad", _infer_pad, _pad_kernel, _pad_grad, foldable=True))
registry.register(registry.OpDef("PadV2", _infer_pad, _pad_kernel, _pad_grad, foldable=True))


def _mirror_pad_kernel(ctx: Any, attrs: dict) -> Any:
    pad_, mode = ctx.xp.pad, attrs["mode"].lower()
    return lambda x, paddings: pad_(x, paddings.tolist(), mode=mode)


def _mirror_pad_grad(op: Operation, grad: Tensor) -> list:
    dx = apply_op("MirrorPadGrad", [grad, op.inputs[1]], {"mode": op.attrs["mode"]})
    return [dx, None]


registry.register(
    registry.OpDef("MirrorPad", _infer_pad, _mirror_pad_kernel, _mirror_pad_grad, foldable=True)
)


def _infer_mirror_pad_grad(op: Operation) -> list:
    return [(op.inputs[0].dtype, TensorShape(_padded_dims(op, -1)))]


def _mirror_pad_grad_kernel(ctx: Any, attrs: dict) -> Any:
    xp = ctx.xp
    edge = 1 if attrs["mode"] == "REFLECT" else 0  # REFLECT mirrors around the edge

    def mirror_pad_grad(dy: Any, paddings: Any) -> Any:
        # Fold each padded border back onto the cells it copied, one axis at a time.
        out = dy
        for axis, (before, after) in enumerate(paddings.tolist()):
            if not before and not after:
                continue
            moved = xp.moveaxis(out, axis, 0)
            n = moved.shape[0] - before - after
            core = moved[before : before + n].copy()
            if before:
                core[edge : edge + before] += moved[:before][::-1]
            if after:
                core[n - edge - after : n - edge] += moved[before + n :][::-1]
            out = xp.moveaxis(core, 0, axis)
        return out

    return mirror_pad_grad


def _mirror_pad_grad_grad(op: Operation, grad: Tensor) -> list:
    ddy = apply_op("MirrorPad", [grad, op.inputs[1]], {"mode": op.attrs["mode"]})
    return [ddy, None]


registry.register(
    registry.OpDef(
        "MirrorPadGrad",
        _infer_mirror_pad_grad,
        _mirror_pad_grad_kernel,
        _mirror_pad_grad_grad,
        foldable=True,
    )
)


def pad(
    tensor: Any,
    paddings: Any,
    mode: str = "CONSTANT",
    name: str | None = None,
    constant_values: Any = 0,
) -> Tensor:
    """Pads ``tensor``: ``paddings[i] = [before, after]`` elements around dimension ``i``.

    Args:
        tensor: the tensor to pad.
        paddings: an int ``[rank, 2]`` matrix.
        mode: ``"CONSTANT"`` (with ``constant_values``), ``"REFLECT"`` (mirror without
            the edge; pads must be smaller than the dimension) or ``"SYMMETRIC"``
            (mirror with the edge; pads at most the dimension). Case-insensitive.
        name: the op name.
        constant_values: the scalar to pad with in ``"CONSTANT"`` mode.
    """
    tensor = convert_to_tensor(tensor)
    paddings_t = int_tensor(paddings)
    mode = str(mode).upper()
    if mode == "CONSTANT":
        if not isinstance(constant_values, Tensor) and np.all(np.asarray(constant_values) == 0):
            return apply_op("Pad", [tensor, paddings_t], name=name)
        value = convert_to_tensor(constant_values, dtype=tensor.dtype)
        return apply_op("PadV2", [tensor, paddings_t, value], name=name)
    if mode not in ("REFLECT", "SYMMETRIC"):
        raise ValueError(f"Unknown padding mode: {mode}")
    return apply_op("MirrorPad", [tensor, paddings_t], {"mode": mode}, name=name)
