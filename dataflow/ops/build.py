"""Helpers every op family uses to add ops to the default graph.

``apply_op`` converts inputs to tensors, creates the op in the current graph (which
runs the type's shape rule) and returns its outputs. The shape/dtype rules shared by
many op types (same-as-input, numpy broadcasting, reductions) live in ``rules.py``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..framework.graph import Operation, Tensor, convert_to_tensor, get_default_graph


def apply_op(
    op_type: str,
    inputs: Sequence[Any],
    attrs: dict | None = None,
    name: str | None = None,
    dtype_hint: Any = None,
) -> Tensor:
    """Creates an op with one output and returns that output."""
    # ``apply_op_n``'s two lines, not a call to it: see ``operation.user_frame``.
    graph = get_default_graph()
    tensors = convert_inputs(inputs, dtype_hint)
    return graph.create_op(op_type, tensors, attrs or {}, name=name).outputs[0]


def apply_op_n(
    op_type: str,
    inputs: Sequence[Any],
    attrs: dict | None = None,
    name: str | None = None,
    dtype_hint: Any = None,
) -> Operation:
    """Creates an op and returns the ``Operation`` (for several or no outputs)."""
    graph = get_default_graph()
    tensors = convert_inputs(inputs, dtype_hint)
    return graph.create_op(op_type, tensors, attrs or {}, name=name)


def convert_inputs(inputs: Sequence[Any], dtype_hint: Any = None) -> list[Tensor]:
    """Converts inputs to tensors; plain numbers take the dtype of the tensor inputs
    (so ``x * 2`` with float32 ``x`` makes a float32 constant, as in TF1)."""
    if dtype_hint is None:
        for value in inputs:
            if isinstance(value, Tensor):
                dtype_hint = value.dtype  # a captured copy has the same dtype
                break
            if hasattr(value, "_as_graph_element"):
                dtype_hint = convert_to_tensor(value).dtype
                break
    graph = get_default_graph()
    out = []
    for value in inputs:
        if isinstance(value, Tensor):
            # A tensor of the default graph is itself (the check ``convert_to_tensor``
            # starts with, done here without the call: every op input passes here).
            out.append(value if value.graph is graph else convert_to_tensor(value))
        else:
            out.append(convert_to_tensor(value, preferred_dtype=dtype_hint))
    return out
