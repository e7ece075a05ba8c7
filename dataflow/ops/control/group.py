"""Grouping and ordering: ``no_op``, ``group``, ``tuple``, ``identity``, ``identity_n``,
``stop_gradient``, ``with_dependencies``.

(Functional ``cond``/``while_loop`` live in ``control/functional.py``.)
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from typing import Any

from ...framework import registry
from ...framework.graph import Operation, Tensor, convert_to_tensor, get_default_graph
from ...framework.indexed_slices import IndexedSlices
from ..build import apply_op, apply_op_n
from ..constant import identity_kernel_factory
from ..rules import same_as_input


def _infer_none(op: Operation) -> list:
    return []


def _noop_kernel(ctx: Any, attrs: dict) -> Any:
    return _noop


def _noop() -> None:
    return None


def _identity_grad(op: Operation, grad: Tensor) -> list:
    return [grad]


registry.register(
    registry.OpDef(
        "NoOp",
        _infer_none,
        _noop_kernel,
        registry.NOT_DIFFERENTIABLE,
        plumbing=True,
        grouping=True,
    )
)
registry.register(
    registry.OpDef(
        "Identity",
        same_as_input,
        identity_kernel_factory,
        _identity_grad,
        foldable=True,
        plumbing=True,
    )
)
registry.register(
    registry.OpDef(
        "StopGradient",
        same_as_input,
        identity_kernel_factory,
        registry.NOT_DIFFERENTIABLE,
        foldable=True,
    )
)


def no_op(name: str | None = None) -> Operation:
    """An op that does nothing; useful as a control-dependency anchor."""
    return get_default_graph().create_op("NoOp", [], {}, name=name)


def identity(input: Any, name: str | None = None) -> Tensor:
    """Returns a tensor with the same value as ``input``."""
    return apply_op("Identity", [input], name=name)


def _infer_identity_n(op: Operation) -> list:
    if not op.inputs:
        raise ValueError("IdentityN needs at least one input")
    return [(t.dtype, t.shape) for t in op.inputs]


def _identity_n_kernel(ctx: Any, attrs: dict) -> Any:
    return _identity_n


def _identity_n(*values: Any) -> Any:
    return values if len(values) != 1 else values[0]


def _identity_n_grad(op: Operation, *grads: Tensor) -> list:
    return list(grads)


# One op forwarding several tensors: its gradient sees all of their gradients at once,
# which is what ``custom_gradient`` (autodiff/custom_gradient.py) overrides it for.
registry.register(
    registry.OpDef(
        "IdentityN",
        _infer_identity_n,
        _identity_n_kernel,
        _identity_n_grad,
        foldable=True,
    )
)


def identity_n(input: Sequence[Any], name: str | None = None) -> list[Tensor]:
    """Tensors with the same values as each of ``input`` (one op for all of them)."""
    tensors = [convert_to_tensor(t) for t in input]
    return list(apply_op_n("IdentityN", tensors, name=name).outputs)


def stop_gradient(input: Any, name: str | None = None) -> Tensor:
    """The value of ``input``, through which no gradient flows."""
    return apply_op("StopGradient", [input], name=name)


def _as_op(x: Any) -> Operation:
    if isinstance(x, Operation):
        return x
    if isinstance(x, Tensor):
        return x.op
    element = getattr(x, "_as_graph_element", None)
    if element is not None:
        return _as_op(element())
    raise TypeError(f"Expected an Operation or Tensor, got {x!r}")


def group(*inputs: Any, name: str | None = None) -> Operation:
    """An op that runs all ``inputs`` (ops or tensors) and has no output."""
    graph = get_default_graph()
    flat: list[Any] = []
    for x in inputs:
        flat.extend(x if isinstance(x, (list, builtins.tuple)) else [x])
    deps = [_as_op(x) for x in flat]
    # TF1 names the op after a name scope (default "group_deps"): "group_deps_1", ...
    with graph.name_scope(name or "group_deps") as scope, graph.control_dependencies(deps):
        return no_op(name=scope)


def tuple(
    tensors: Sequence[Any],
    name: str | None = None,
    control_inputs: Sequence[Any] | None = None,
) -> list:
    """Tensors (or ``IndexedSlices``) equal to ``tensors`` that are only available once
    all of them (and ``control_inputs``) are computed."""
    graph = get_default_graph()
    with graph.name_scope(name or "tuple"):
        parts = [
            p
            for t in tensors
            if t is not None
            for p in ([t.values, t.indices] if isinstance(t, IndexedSlices) else [t])
        ]
        gate = group(*parts, *(control_inputs or []))
        with graph.control_dependencies([gate]):
            return [_gated(t) for t in tensors]


def _gated(t: Any) -> Any:
    if t is None:
        return None
    if isinstance(t, IndexedSlices):  # its parts, gated (TF1's tuple does the same)
        return IndexedSlices(identity(t.values), identity(t.indices), t.dense_shape)
    return identity(t)


def with_dependencies(
    dependencies: Sequence[Any], output_tensor: Any, name: str | None = None
) -> Tensor:
    """``output_tensor``, computed only after ``dependencies``."""
    graph = get_default_graph()
    with graph.control_dependencies(dependencies):
        return identity(convert_to_tensor(output_tensor), name=name)
