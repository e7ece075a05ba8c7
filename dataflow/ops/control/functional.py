"""Functional control flow, the approach and the pieces ``control/cond.py`` (``If``, ``cond``,
``case``) and ``control/while_loop.py`` (``While``) share: nested structures and shapes.

The approach (TF2's functional ``If``/``While``, not TF1's Switch/Merge frames):

* **Bodies are sub-graphs.** ``cond`` traces each branch function, and ``while_loop``
  its ``cond`` and ``body``, into a ``SubGraph`` (``framework/subgraph.py``). Outer
  tensors used inside are *captured*: they become extra inputs of the op running the
  sub-graph, after its explicit arguments. The runtime compiles a ``SubGraph`` attr to
  a plan of its own; a kernel gets a callable ``run(values) -> values`` for it from
  ``ctx.subgraph``. So an ``If`` runs only the taken branch (side effects such as an
  ``assign_add`` in the other branch never happen) and a ``While`` runs its compiled
  cond and body in a Python loop on the device: one kernel call per loop, never one
  Dask task per iteration.
* **Op layout.** ``If``: inputs ``[pred, *captures]``; outputs ``[*user outputs,
  *then records, *else records]``. ``While``: inputs ``[*loop vars, (max_iterations),
  *captures]``; outputs ``[*final loop vars, iteration count, *per-iteration history of
  each loop var, *per-iteration history of each record]``. Index attrs map each
  sub-graph's inputs to the op's inputs, because the two sub-graphs of an op capture
  different subsets.
* **Variables.** A variable the body only reads is read once *before* the op runs and
  passed by value, so the op does not take the handle and can run on
  a worker while the variable lives on a parameter server; its gradient flows through
  that read. A variable the body writes stays captured as a handle (the op then runs
  on the variable's device).
* **Records** are the outputs of the *side-effecting* ops of a body (stateful ops other
  than placeholders, handles and variable reads: assignments, random draws, stateful
  ``py_func``s, nested stateful ``If``/``While``), and reads of variables the body
  writes, that the body's outputs depend on. The forward op emits them so that a
  gradient never re-runs a side effect and sees each iteration's values.
* **Gradients recompute.** The gradient of a body is a new sub-graph that *copies* the
  body's pure ops from its inputs (``recompute``), takes the recorded values in place
  of its side-effecting ops (a ``Replay`` op stands for one that has a gradient, so the
  gradient rule of the original op still applies), then calls ``gradients`` on the
  copy. ``If``'s gradient is an ``If`` over the two gradient sub-graphs (a branch gives
  zeros for the inputs only the other branch uses). ``While``'s gradient is a ``While``
  running ``count`` iterations in reverse: iteration ``j`` reads the loop variables of
  forward iteration ``count - 1 - j`` from the history (``LoopHistoryGet``), recomputes
  the body and pulls the loop variables' gradient back one step, summing the gradients
  of captured tensors (weights) in accumulators. Everything is built from ordinary ops,
  so gradients of gradients work the same way (a second derivative of a loop is a loop
  over the first derivative's loop).

Worked example: ``while_loop(lambda i, x: i < 3, lambda i, x: (i + 1, tanh(W @ x)),
(0, x0))`` is one ``While`` op with inputs ``[i0, x0, W]``; running it stacks ``x`` at the
start of each of the 3 iterations into a ``[3, ...]`` history output. Its gradient is a
``While`` of 3 iterations whose body reads ``x_{2-j}`` from that history, recomputes
``tanh(W @ x)`` and returns ``(g_x J_x, acc_W + g_x J_W)``.

The body transformations (records, recomputation, ``Replay``, hoisting reads) live in
``control/bodies.py``.

Costs and limits: the forward loop keeps each iteration's loop variables only when the
step reads its history (a gradient does: the compiler passes ``_outputs_read``), as one
stacked copy at the end; ``back_prop=False`` never records. A loop
variable whose shape changes between iterations (a shape invariant less specific than
its initial shape) is not recorded and cannot be differentiated. A second derivative
through ``LoopHistoryGet`` builds a dense ``[count, ...]`` gradient per iteration
(quadratic in ``count``). TensorArrays are not supported.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..._util import nest
from ...framework.graph import Operation, Tensor
from ...framework.subgraph import SubGraph
from ...framework.tensor_shape import TensorShape


# --- structures and shapes ---------------------------------------------------------------
def canonical_structure(value: Any) -> Any:
    """``value`` with every dict's keys sorted (as TF's nest does), so two branches
    returning the same keys in a different order flatten alike."""
    if isinstance(value, Mapping):
        items = sorted(value.items(), key=lambda kv: kv[0])
        return {k: canonical_structure(v) for k, v in items}
    if nest.is_namedtuple(value):
        return type(value)(*[canonical_structure(v) for v in value])
    if isinstance(value, (list, tuple)):
        return type(value)(canonical_structure(v) for v in value)
    return value


def structure_of(value: Any) -> Any:
    """A comparable description of a nesting (container types, keys, leaf slots)."""
    if isinstance(value, Mapping):
        return ("dict", tuple((k, structure_of(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, tuple(structure_of(v) for v in value))
    return "leaf" if value is not None else "None"


def common_shape(a: TensorShape, b: TensorShape) -> TensorShape:
    """The most specific shape compatible with both ``a`` and ``b``."""
    if a.rank is None or b.rank is None or a.rank != b.rank:
        return TensorShape(None)
    dims = zip(a.as_list(), b.as_list(), strict=True)
    return TensorShape([x if x == y else None for x, y in dims])


def at_least_as_specific(shape: TensorShape, invariant: TensorShape) -> bool:
    """Every dim ``invariant`` knows, ``shape`` knows and agrees with."""
    if invariant.rank is None:
        return True
    if shape.rank != invariant.rank:
        return False
    dims = zip(shape.as_list(), invariant.as_list(), strict=True)
    return all(i is None or s == i for s, i in dims)


def shape_text(shape: TensorShape) -> str:
    dims = shape.as_tuple()
    if dims is None:
        return "<unknown>"
    return (
        "("
        + ", ".join("?" if d is None else str(d) for d in dims)
        + ("," if len(dims) == 1 else "")
        + ")"
    )


def resource_value_spec(placeholder: Tensor) -> Tensor | None:
    """A tensor with the dtype/shape of the variable behind a captured handle: a read of
    it inside the body (looking through nested ``If``/``While`` sub-graphs)."""
    stack = [placeholder]
    seen: set[Tensor] = set()
    while stack:
        t = stack.pop()
        if t in seen:
            continue
        seen.add(t)
        for consumer in t.consumers():
            if consumer.type == "ReadVariableOp":
                return consumer.outputs[0]
            for pos, inp in enumerate(consumer.inputs):
                if inp is t:
                    stack.extend(_inner_placeholders(consumer, pos))
    return None


def _inner_placeholders(op: Operation, pos: int) -> list[Tensor]:
    """The placeholders of ``op``'s sub-graphs fed by its input ``pos``."""
    found: list[Tensor] = []
    if op.type in ("If", "StatelessIf") and pos > 0:
        for key, idx_key in (("then_branch", "then_inputs"), ("else_branch", "else_inputs")):
            sub = op.attrs[key]
            pairs = zip(sub.all_inputs, op.attrs[idx_key], strict=True)
            found.extend(p for p, i in pairs if i == pos - 1)
    elif op.type in ("While", "StatelessWhile"):
        k = op.attrs["num_loop_vars"]
        start = k + (1 if op.attrs["has_max"] else 0)
        if pos < k:
            for key in ("cond", "body"):
                found.append(op.attrs[key].inputs[pos])
        elif pos >= start:
            for key, idx_key in (("cond", "cond_inputs"), ("body", "body_inputs")):
                sub = op.attrs[key]
                caps = sub.all_inputs[k:]
                pairs = zip(caps, op.attrs[idx_key], strict=True)
                found.extend(p for p, i in pairs if i == pos - start)
    return found


def union_inputs(
    args: Sequence[Tensor], subs: Sequence[SubGraph]
) -> tuple[list[Tensor], list[tuple[int, ...]]]:
    """The op's inputs (``args`` then every distinct capture) and, per sub-graph, the
    index of the op input feeding each of its ``all_inputs`` (its own arguments are the
    first ``len(sub.inputs)`` of ``args``)."""
    inputs = list(args)
    position: dict[Tensor, int] = {}
    maps = []
    for sub in subs:
        idx = list(range(len(sub.inputs)))
        for outer in sub.captured:
            if outer not in position:
                position[outer] = len(inputs)
                inputs.append(outer)
            idx.append(position[outer])
        maps.append(tuple(idx))
    return inputs, maps
