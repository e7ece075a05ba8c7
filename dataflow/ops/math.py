"""Elementwise math, reductions and their gradients.

(Only the ops the gradient pass itself needs are here so far: ``AddN``.)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..framework import registry
from ..framework.graph import Operation, Tensor
from .build import apply_op
from .rules import broadcast, require_same_dtype


def _infer_add_n(op: Operation) -> list:
    dtype = require_same_dtype(op)
    shape = op.inputs[0].shape
    for t in op.inputs[1:]:
        if not shape.is_compatible_with(t.shape):
            raise ValueError(f"AddN inputs must all have one shape, got {shape} and {t.shape}")
        shape = shape.merge_with(t.shape)
    broadcast(op)
    return [(dtype, shape)]


def _add_n_kernel(ctx: Any, attrs: dict) -> Any:
    add = ctx.xp.add

    def add_n(first: Any, *rest: Any) -> Any:
        out = first
        for x in rest:
            out = add(out, x)
        return out

    return add_n


def _add_n_grad(op: Operation, grad: Tensor) -> list:
    return [grad] * len(op.inputs)


registry.register(registry.OpDef("AddN", _infer_add_n, _add_n_kernel, _add_n_grad,
                                 foldable=True))


def add_n(inputs: Sequence[Any], name: str | None = None) -> Tensor:
    """Sums a list of tensors of one shape and dtype."""
    inputs = list(inputs)
    if not inputs:
        raise ValueError("add_n needs at least one input")
    if len(inputs) == 1 and name is None:
        return apply_op("Identity", inputs)
    return apply_op("AddN", inputs, name=name)
