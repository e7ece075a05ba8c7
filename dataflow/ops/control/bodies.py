"""Transforming the bodies of control-flow ops (``framework.SubGraph``s).

``control/functional.py`` builds ``If``/``While`` ops from traced bodies; this module holds
what their construction and gradients do *to* a body:

* ``record_tensors``: which values a gradient must take from the forward run instead
  of recomputing: the outputs of side-effecting ops (assignments, random draws,
  stateful ``py_func``s, nested stateful control flow) and reads of variables the body
  itself writes.
* ``recompute``: copies a body's ops into the current graph from new inputs, taking
  recorded values in place of recorded ops. A recorded op with a gradient becomes a
  ``Replay`` op: it outputs the recorded values, and its gradient rule is the original
  op's, applied to a view (``_OpView``) with the recomputed inputs.
* ``hoist_reads``: a variable a body only reads is read once before the op runs and
  passed in by value, so the op need not sit on the variable's device.

Example: for a body ``y = x * random_uniform([3])``, ``record_tensors([y])`` is the
random draw ``r``; ``recompute([y], {x: x2}, {r: r2})`` adds ``y2 = x2 * r2``, whose
gradient with respect to ``x2`` is the recorded ``r2``.
"""

from __future__ import annotations

import itertools
import weakref
from collections.abc import Sequence
from typing import Any, cast

import numpy as np

from ...framework import dtypes, registry
from ...framework.graph import Operation, Tensor, convert_to_tensor, get_default_graph
from ...framework.subgraph import SubGraph, seal, trace
from .. import array as array_ops
from ..constant import constant

# Stateful ops that are safe to run again when a gradient recomputes a body.
_RECOMPUTABLE = frozenset({"Placeholder", "VarHandleOp", "ReadVariableOp", "VarIsInitializedOp"})


def differentiable(t: Tensor) -> bool:
    # Variants are tensor lists (TensorArray flows), whose gradients are lists.
    return t.dtype.is_floating or t.dtype.is_complex or t.dtype in (dtypes.resource, dtypes.variant)


# --- side effects, records and recomputation ----------------------------------------------
def has_side_effects(op: Operation) -> bool:
    """A stateful op a gradient must not run again (see the module docstring)."""
    if op.type in _RECOMPUTABLE or not registry.lookup(op.type).stateful:
        return False
    # Ops making handles (queues, readers) are idempotent lookups.
    return not any(t.dtype == dtypes.resource for t in op.outputs)


def graph_has_side_effects(sub: SubGraph) -> bool:
    return any(has_side_effects(op) for op in sub.graph.get_operations())


_READS = frozenset({"ReadVariableOp", "VarIsInitializedOp"})


def _written_handles(graph: Any) -> set[Tensor]:
    """Variable handles of ``graph`` that some op in it may write (any consumer other
    than a read). Reads of those must be recorded, not repeated, by a gradient."""
    return {
        t
        for op in graph.get_operations()
        for t in op.outputs
        if t.dtype == dtypes.resource and any(c.type not in _READS for c in t.consumers())
    }


def _record_ops(outputs: Sequence[Tensor]) -> list[Operation]:
    """The ops whose values a gradient must not recompute (see the module docstring):
    side-effecting ops, and reads of variables written in the same body, that
    ``outputs`` depend on through data edges."""
    seen: set[Operation] = set()
    stack = [t.op for t in outputs if isinstance(t, Tensor)]
    if not stack:
        return []
    written = _written_handles(stack[0].graph)
    found = []
    while stack:
        op = stack.pop()
        if op in seen:
            continue
        seen.add(op)
        if op.outputs and (
            has_side_effects(op) or (op.type == "ReadVariableOp" and op.inputs[0] in written)
        ):
            found.append(op)
        stack.extend(t.op for t in op.inputs if t.op not in seen)
    return sorted(found, key=lambda o: o._id)


def record_tensors(outputs: Sequence[Tensor]) -> list[Tensor]:
    return [t for op in _record_ops(outputs) for t in op.outputs]


def _replayable(op: Operation) -> bool:
    """A recorded op whose gradient matters (a ``py_func`` with ``grad=``, a read)."""
    grad = registry.lookup(op.type).grad
    return (
        grad is not None
        and grad is not registry.NOT_DIFFERENTIABLE
        and any(differentiable(t) for t in op.inputs)
    )


_REPLAYED: weakref.WeakValueDictionary[int, Operation] = weakref.WeakValueDictionary()
_replay_tokens = itertools.count(1)


def recompute(
    targets: Sequence[Tensor], mapping: dict[Tensor, Tensor], records: dict[Tensor, Tensor]
) -> list[Tensor]:
    """Copies into the default graph the ops of a body that compute ``targets``.

    ``mapping`` sends the body's input placeholders to tensors of the default graph;
    ``records`` sends the outputs of its recorded ops (``_record_ops``) to their
    recorded values. Other ops are copied with the same type and attrs (their shape
    rules run again); recorded ops are not run again: their outputs are the recorded
    values, through a ``Replay`` op when a gradient must flow through them. Control
    inputs between copied ops are kept; those on ops that are not copied are dropped
    (they ran in the forward pass). Walks iteratively and copies in creation order.
    """
    mapping = dict(mapping)

    def recorded(op: Operation) -> bool:
        return bool(op.outputs) and all(t in records for t in op.outputs)

    needed: set[Operation] = set()
    stack = [t.op for t in targets if t not in mapping]
    while stack:
        op = stack.pop()
        if op in needed:
            continue
        needed.add(op)
        if recorded(op):
            if not _replayable(op):
                continue
        elif has_side_effects(op) or op.type == "Placeholder":
            raise ValueError(
                f"internal: the value of {op.name} ({op.type}) in a body was not recorded"
            )
        stack.extend(t.op for t in op.inputs if t not in mapping and t.op not in needed)
    graph = get_default_graph()
    copies: dict[Operation, Operation] = {}
    for op in sorted(needed, key=lambda o: o._id):
        if recorded(op):
            values = [records[t] for t in op.outputs]
            if _replayable(op):
                token = next(_replay_tokens)
                _REPLAYED[token] = op
                inputs = [mapping[t] for t in op.inputs]
                replay = graph.create_op(
                    "Replay",
                    inputs + values,
                    {"token": token, "num_inputs": len(inputs)},
                    name=f"{op.type}_replay",
                )
                values = list(replay.outputs)
            for t, new in zip(op.outputs, values, strict=True):
                mapping[t] = new
            continue
        controls = [copies[c] for c in op.control_inputs if c in copies]
        new_op = graph.create_op(
            op.type,
            [mapping[t] for t in op.inputs],
            dict(op.attrs),
            name=op.type,
            control_inputs=controls,
        )
        copies[op] = new_op
        for t, new in zip(op.outputs, new_op.outputs, strict=True):
            mapping[t] = new
    return [mapping[t] for t in targets]


def hoist_reads(
    sub: SubGraph, control_outputs: Sequence[Operation] = ()
) -> tuple[SubGraph, list[Operation]]:
    """Reads a variable the body only reads *before* the op runs, and passes the value.

    A body that reads a captured variable would otherwise take its handle as an input,
    and the placer keeps every user of a handle on the variable's device: a loop over a
    parameter-server variable would have to run on the parameter server. Passing the
    value instead (one read per step, as the body cannot change it) lets the op run
    anywhere, and its gradient flows to the variable through the outer read. Variables
    the body writes stay captured as handles. Returns a re-traced copy of ``sub`` (and
    its control outputs) when something was hoisted, else ``sub`` itself.
    """
    graph = sub.graph
    hoist: dict[Tensor, Tensor] = {}
    for outer, inner in graph.captures:
        consumers = inner.consumers()
        if (
            outer.dtype == dtypes.resource
            and consumers
            and all(c.type == "ReadVariableOp" for c in consumers)
        ):
            hoist[inner] = outer
    if not hoist:
        return sub, list(control_outputs)
    outer_graph = graph.outer_graph
    assert outer_graph is not None  # a body with captures has an outer graph
    values: dict[Tensor, Tensor] = {}
    for inner, handle in hoist.items():
        read_op = inner.consumers()[0]
        with outer_graph.colocate_with(handle.op):
            value = outer_graph.create_op(
                "ReadVariableOp",
                [handle],
                dict(read_op.attrs),
                name=f"{handle.op.name}/Read/hoisted",
            ).outputs[0]
        for consumer in inner.consumers():
            values[consumer.outputs[0]] = value
    ops = graph.get_operations()
    specs = [(t.dtype, t.shape) for t in sub.inputs]
    new_controls: list[Operation] = []

    def copy_all(*args: Tensor) -> list[Tensor]:
        new_graph = get_default_graph()
        mapping: dict[Tensor, Tensor] = dict(zip(sub.inputs, args, strict=True))
        for outer, inner in graph.captures:
            if inner not in hoist:
                mapping[inner] = convert_to_tensor(outer)
        mapping.update((t, convert_to_tensor(v)) for t, v in values.items())
        copies: dict[Operation, Operation] = {}
        for op in ops:
            if op.type == "Placeholder" or all(t in mapping for t in op.outputs) and op.outputs:
                continue
            controls = [copies[c] for c in op.control_inputs if c in copies]
            new_op = new_graph.create_op(
                op.type,
                [mapping[t] for t in op.inputs],
                dict(op.attrs),
                name=op.name,
                control_inputs=controls,
            )
            copies[op] = new_op
            mapping.update(zip(op.outputs, new_op.outputs, strict=True))
        new_controls.extend(copies[c] for c in control_outputs)
        new_graph.outer_control_inputs.extend(graph.outer_control_inputs)
        # Read before the control outputs are sealed in: the outputs are all tensors.
        return [mapping[cast(Tensor, t)] for t in sub.outputs]

    new_sub, outputs = trace(copy_all, specs, sub.name)
    return seal(new_sub, outputs), new_controls


class _OpView:
    """What a gradient rule sees for a replayed op: the original op's type and attrs,
    with the recomputed inputs and the recorded outputs of the ``Replay`` op."""

    def __init__(self, original: Operation, replay: Operation):
        k = replay.attrs["num_inputs"]
        self.original = original
        self.type = original.type
        self.attrs = original.attrs
        self.name = replay.name
        self.inputs = replay.inputs[:k]
        self.outputs = replay.outputs
        self.graph = replay.graph
        self.device = replay.device
        self.control_inputs = ()
        self.traceback = original.traceback
        self._id = replay._id

    def get_attr(self, name: str) -> Any:
        return self.attrs[name]

    def describe(self) -> str:
        return self.original.describe()


def _infer_replay(op: Operation) -> list:
    k = op.attrs["num_inputs"]
    return [(t.dtype, t.shape) for t in op.inputs[k:]]


def _replay_kernel(ctx: Any, attrs: dict) -> Any:
    k = attrs["num_inputs"]

    def replay(*args: Any) -> Any:
        recorded = args[k:]
        return recorded[0] if len(recorded) == 1 else tuple(recorded)

    return replay


def _replay_grad(op: Operation, *grads: Tensor) -> list:
    original = _REPLAYED.get(op.attrs["token"])
    if original is None:
        raise LookupError(f"The op replayed by {op.name} no longer exists")
    rule = registry.lookup(original.type).grad
    if rule is None or rule is registry.NOT_DIFFERENTIABLE:
        raise TypeError(f"op type {original.type} replayed by {op.name} has no gradient rule")
    in_grads = list(rule(_OpView(original, op), *grads))
    return in_grads + [None] * (len(op.inputs) - op.attrs["num_inputs"])


registry.register(registry.OpDef("Replay", _infer_replay, _replay_kernel, _replay_grad))


def zeros_for(t: Tensor, like: Tensor | None = None) -> Tensor:
    """Zeros with the value-shape of ``t`` (for a variable handle: of its value)."""
    if t.dtype != dtypes.resource:
        return array_ops.zeros_like(t)
    if like is not None and like.shape.is_fully_defined():
        return constant(np.zeros(like.shape.as_list(), like.dtype.as_numpy_dtype))
    if like is None:
        raise ValueError(f"internal: no value spec for the handle {t.name}")
    read = get_default_graph().create_op(
        "ReadVariableOp", [t], {"dtype": like.dtype, "shape": like.shape}
    )
    return array_ops.zeros_like(read.outputs[0])
