"""``gradients(ys, xs)``: symbolic reverse mode, adding gradient ops to the same graph.

The approach (TF's ``_GradientsHelper``, autograd's backward pass):

1. *Relevant ops*: those on a path from some ``x`` to some ``y``. Backward reachability
   from ``ys`` (through data inputs, stopping at ``stop_gradients``) intersected with
   forward reachability from ``xs`` (one sweep in creation order, since an op is always
   created after its inputs).
2. *Seed*: each ``y`` gets ``grad_ys`` or ones.
3. *Backward sweep* in reverse creation order. For each relevant op with at least one
   output gradient: sum each output's contributions (``AddN`` for fan-out), fill zeros
   for outputs that got none, and call the op type's registered gradient rule inside a
   ``gradients/<op>_grad`` name scope, colocated with the forward op. The rule returns
   one entry per input (``None`` where nothing flows).
4. *Stops*: the op producing a tensor of ``stop_gradients`` passes no gradient to its
   inputs (any of its outputs stopped stops all: TF1's rule), but the stopped tensor
   itself collects its gradient like any other, so ``gradients(y, [x, s],
   stop_gradients=[s])`` gives ``s`` its gradient and ``x`` only what bypasses ``s``.
5. *Bookkeeping done once, here, not in rules*: the rule's output count is checked;
   several ``IndexedSlices`` (a gather's rows) reaching one tensor are concatenated,
   densified when mixed with dense gradients or handed to an op other than a
   variable read;
   each input gradient whose static shape differs from (or is not known to equal) its
   input's is reduced with one ``SumToShape`` (undoing broadcasting); gradients for
   integer/bool inputs are dropped; op types registered ``NOT_DIFFERENTIABLE`` pass
   nothing; an op type with no gradient at all is a ``LookupError`` naming it and
   where it was built.

State kept: ``pending[tensor] -> [contributions]``. Invariant: when an op is visited,
every consumer of its outputs that lies on a path to ``ys`` has been visited (reverse
creation order is a reverse topological order).

Because gradient ops are ordinary ops with gradients of their own, ``gradients`` of a
gradient works (Hessian-vector products, second derivatives).

Example: y = x * x: the Mul rule returns [g * x, g * x]; both flow to x and are summed
with AddN, giving 2 * x.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from typing import Any

import numpy as np

from .._util.toposort import reachable
from ..framework import dtypes, gradient_override, registry
from ..framework.graph import Operation, Tensor, convert_to_tensor, get_default_graph
from ..framework.indexed_slices import IndexedSlices
from ..ops import array
from ..ops import math as math_ops
from ..ops.constant import constant
from ..ops.math.reduce import shape_root
from .options import UnconnectedGradients, as_unconnected_gradients, check_aggregation_method


def _as_list(value: Any) -> list:
    if value is None:
        return []
    return list(value) if isinstance(value, (list, tuple)) else [value]


def _as_x(x: Any) -> Tensor:
    """Variables differentiate through their handle (every read passes grads to it)."""
    handle = getattr(x, "handle", None)
    if handle is not None and not isinstance(x, Tensor):
        return handle
    return convert_to_tensor(x)


def _differentiable(t: Tensor) -> bool:
    # A ``variant`` carries a tensor list (``TensorArray``), whose gradient is a list of
    # element gradients; dataset variants have no gradient rule and stop nothing here.
    return t.dtype.is_floating or t.dtype.is_complex or t.dtype in _HANDLE_DTYPES


# Dtypes whose gradient is not an array of the input's shape (no broadcasting to undo).
_HANDLE_DTYPES = (dtypes.resource, dtypes.variant)


def gradients(
    ys: Any,
    xs: Any,
    grad_ys: Any = None,
    name: str = "gradients",
    colocate_gradients_with_ops: bool = True,
    gate_gradients: bool = False,
    aggregation_method: Any = None,
    stop_gradients: Any = None,
    unconnected_gradients: str | UnconnectedGradients = "none",
) -> list[Any]:
    """Symbolic derivatives of ``sum(ys)`` with respect to each of ``xs``.

    Args:
        ys: a tensor or list of tensors to differentiate.
        xs: a tensor, variable, or list of them.
        grad_ys: optional upstream gradients, one per ``y`` (default: ones).
        name: name scope of the gradient ops.
        stop_gradients: tensors treated as constants: nothing flows through them to
            what they were computed from, but each still gets its own gradient when it
            is one of ``xs`` (TF1's semantics).
        aggregation_method: a ``tf.AggregationMethod`` (all give the same sum here).
        unconnected_gradients: ``'none'`` (return ``None`` for an ``x`` that ``ys`` do
            not depend on) or ``'zero'``, or a ``tf.UnconnectedGradients``.

    Returns:
        One tensor (or ``None``) per ``x``, with the shape of ``x``; for a variable
        reached only through gathers along axis 0 (``embedding_lookup``), an
        ``IndexedSlices`` of the gathered rows, as in TF1.

    Raises:
        LookupError: an op on the path has no registered gradient.
        ValueError: ``grad_ys`` has the wrong length or shape; an unknown
            ``aggregation_method`` or ``unconnected_gradients``.
    """
    check_aggregation_method(aggregation_method)
    unconnected = as_unconnected_gradients(unconnected_gradients)
    graph = get_default_graph()
    ys = [convert_to_tensor(y) for y in _as_list(ys)]
    xs_list = [_as_x(x) for x in _as_list(xs)]
    grad_ys_list = _as_list(grad_ys)
    if grad_ys_list and len(grad_ys_list) != len(ys):
        raise ValueError(f"Passed {len(grad_ys_list)} grad_ys for {len(ys)} ys")
    # As in TF1, a stopped tensor still gets its own gradient (it may be one of ``xs``);
    # what stops is the op producing it, which passes nothing to any of its inputs.
    stop_ops = {convert_to_tensor(t).op for t in _as_list(stop_gradients)}

    with graph.name_scope(name):
        relevant = _relevant_ops(ys, xs_list, stop_ops)
        pending: dict[Tensor, list[Tensor | IndexedSlices]] = {}
        for i, y in enumerate(ys):
            g = grad_ys_list[i] if grad_ys_list and grad_ys_list[i] is not None else None
            if g is None:
                with graph.colocate_with(y.op):
                    if y.shape.is_fully_defined() and y.shape.num_elements() <= 1024:
                        # Usually a scalar loss: a constant, folded into the plan.
                        g = constant(
                            np.ones(y.shape.as_list(), y.dtype.as_numpy_dtype),
                            dtype=y.dtype,
                            name=f"grad_ys_{i}",
                        )
                    else:
                        g = array.ones_like(y, name=f"grad_ys_{i}")
            else:
                g = convert_to_tensor(g, dtype=y.dtype)
                if not y.shape.is_compatible_with(g.shape):
                    raise ValueError(
                        f"grad_ys[{i}] has shape {g.shape}, which does not "
                        f"match the shape {y.shape} of ys[{i}] ('{y.name}')"
                    )
            pending.setdefault(y, []).append(g)

        x_set = set(xs_list)
        for op in sorted(relevant, key=lambda o: o._id, reverse=True):
            if op in stop_ops:
                continue
            out_grads = [_aggregate(pending.get(t), t) for t in op.outputs]
            if all(g is None for g in out_grads):
                continue
            grad_fn = _gradient_of(op)
            if grad_fn is registry.NOT_DIFFERENTIABLE:
                continue
            if op.type not in _SLICES_PASS_THROUGH and any(
                isinstance(g, IndexedSlices) for g in out_grads
            ):
                with (
                    graph.name_scope(f"{op.name}_grad"),
                    _colocate(graph, op, colocate_gradients_with_ops),
                ):
                    out_grads = [_dense(g) for g in out_grads]
            if grad_fn is None:
                raise LookupError(
                    f"No gradient defined for operation {op.describe()}. "
                    f"Op type '{op.type}' is not differentiable yet; wrap it "
                    "in tf.stop_gradient if no gradient should flow."
                )
            with (
                graph.name_scope(f"{op.name}_grad"),
                _colocate(graph, op, colocate_gradients_with_ops),
            ):
                for i, (t, g) in enumerate(zip(op.outputs, out_grads)):
                    if g is None and _differentiable(t):
                        out_grads[i] = array.zeros_like(t)
                in_grads = _as_list(grad_fn(op, *out_grads))
            if len(in_grads) != len(op.inputs):
                raise ValueError(
                    f"Gradient rule of op type '{op.type}' returned "
                    f"{len(in_grads)} gradients for {len(op.inputs)} inputs "
                    f"(op {op.describe()})"
                )
            for t, g in zip(op.inputs, in_grads):
                if g is None or not _differentiable(t):
                    continue
                if t.op not in relevant and t not in x_set:
                    continue
                if isinstance(g, IndexedSlices):
                    # Rows of ``t`` (a gather's gradient): no broadcasting to undo.
                    _check_dtype(op, t, g.values)
                else:
                    g = convert_to_tensor(g)
                    if t.dtype not in _HANDLE_DTYPES:
                        g = _match_shape(graph, op, t, g)
                pending.setdefault(t, []).append(g)

        results: list[Any] = []  # Tensor, IndexedSlices or None
        for x in xs_list:
            g = _aggregate(pending.get(x), x)
            if g is None and unconnected is UnconnectedGradients.ZERO:
                g = array.zeros_like(x) if x.dtype != dtypes.resource else None
            results.append(g)
    return results


def _gradient_of(op: Operation) -> Any:
    """TF1's ``get_gradient_function``: the gradient named by the op's
    ``_gradient_op_type`` attr (``Graph.gradient_override_map``), else its type's."""
    name = op.attrs.get(gradient_override.GRADIENT_OP_TYPE_ATTR, op.type)
    if isinstance(name, bytes):  # as a GraphDef carries it
        name = name.decode()
    try:
        return gradient_override.gradient_function(name)
    except LookupError as exc:
        raise LookupError(f"{exc} (the gradient of op {op.describe()})") from None


def _colocate(graph: Any, op: Operation, enabled: bool) -> Any:
    if not enabled:
        return contextlib.nullcontext()
    return graph.colocate_with(op)


def _aggregate(
    contributions: Sequence[Tensor | IndexedSlices] | None, t: Tensor
) -> Tensor | IndexedSlices | None:
    """The sum of a tensor's gradient contributions: ``AddN`` of dense ones; several
    ``IndexedSlices`` concatenated (TF's ``_AggregateIndexedSlicesGradients``: rows
    may repeat, which means they add up); a mix densified first."""
    if not contributions:
        return None
    if len(contributions) == 1:
        return contributions[0]
    if all(isinstance(g, IndexedSlices) for g in contributions):
        slices = [g for g in contributions if isinstance(g, IndexedSlices)]
        indices = [g.indices for g in slices]
        if len({i.dtype for i in indices}) > 1:
            indices = [math_ops.cast(i, dtypes.int64) for i in indices]
        with get_default_graph().name_scope(f"{t.op.name}_{t.value_index}_concat"):
            return IndexedSlices(
                array.concat([g.values for g in slices], 0),
                array.concat(indices, 0),
                slices[0].dense_shape,
            )
    dense = [_dense(g) for g in contributions]
    return math_ops.add_n(dense, name=f"{t.op.name}_{t.value_index}_AddN")


# Op types whose gradient rule passes an ``IndexedSlices`` on as it is (a variable read
# hands its gather's rows to the variable); any other op gets it densified first.
_SLICES_PASS_THROUGH = frozenset({"ReadVariableOp"})


def _dense(g: Any) -> Any:
    return convert_to_tensor(g) if isinstance(g, IndexedSlices) else g


def _check_dtype(op: Operation, t: Tensor, g: Tensor) -> None:
    if g.dtype != t.dtype and t.dtype.is_floating:
        raise TypeError(
            f"Gradient rule of '{op.type}' produced dtype {g.dtype.name} for "
            f"input '{t.name}' of dtype {t.dtype.name}"
        )


def _match_shape(graph: Any, op: Operation, t: Tensor, g: Tensor) -> Tensor:
    """Reduces a broadcast gradient to the shape of its input (once, for all rules)."""
    _check_dtype(op, t, g)
    if t.shape.is_fully_defined() and g.shape.is_fully_defined() and t.shape == g.shape:
        return g
    if t.shape.is_fully_defined() and g.shape.is_fully_defined():
        return array.sum_to_shape(g, t.shape.as_list())
    roots: dict[Tensor, Tensor] = {}
    root = shape_root(t, roots)
    if shape_root(g, roots) is root:
        return g  # the same run-time shape by construction: nothing was broadcast
    # Sizes known only at run time: one op that is a no-op unless broadcasting happened.
    # Its ``like`` input is ``t``'s shape root, so an elementwise ``t`` stays read by its
    # forward consumer alone (and can fuse with it, runtime/compile/fusion.py).
    return array.sum_like(g, root)


def _relevant_ops(ys: list[Tensor], xs: list[Tensor], stop_ops: set[Operation]) -> set[Operation]:
    """Ops on some path x -> y (through data edges, not through the inputs of the ops
    producing stopped tensors)."""
    backward = reachable(
        [y.op for y in ys], lambda op: [] if op in stop_ops else [t.op for t in op.inputs]
    )
    forward_tensors: set[Tensor] = set(xs)
    relevant: set[Operation] = set()
    for op in sorted(backward, key=lambda o: o._id):
        if any(t in forward_tensors for t in op.inputs):
            relevant.add(op)
            forward_tensors.update(op.outputs)
    return relevant
