"""Functional control flow: ``cond``, ``case`` and ``while_loop``, and their gradients.

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
``bodies.py``.

Costs and limits: the forward loop keeps each iteration's loop variables only when the
step reads its history (a gradient does: the compiler passes ``_outputs_read``), as one
stacked copy at the end; ``back_prop=False`` never records. A loop
variable whose shape changes between iterations (a shape invariant less specific than
its initial shape) is not recorded and cannot be differentiated. A second derivative
through ``LoopHistoryGet`` builds a dense ``[count, ...]`` gradient per iteration
(quadratic in ``count``). TensorArrays are not supported.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, cast

import numpy as np

from .._util import nest
from ..framework import dtypes, errors, registry
from ..framework.graph import Operation, Tensor, convert_to_tensor, get_default_graph
from ..framework.subgraph import SubGraph, seal, trace
from ..framework.tensor_shape import TensorShape, as_shape, scalar
from . import array as array_ops
from . import math as math_ops
from .bodies import (
    differentiable,
    graph_has_side_effects,
    hoist_reads,
    recompute,
    record_tensors,
    zeros_for,
)
from .constant import constant


# --- structures and shapes ---------------------------------------------------------------
def _canonical(value: Any) -> Any:
    """``value`` with every dict's keys sorted (as TF's nest does), so two branches
    returning the same keys in a different order flatten alike."""
    if isinstance(value, Mapping):
        items = sorted(value.items(), key=lambda kv: kv[0])
        return {k: _canonical(v) for k, v in items}
    if nest.is_namedtuple(value):
        return type(value)(*[_canonical(v) for v in value])
    if isinstance(value, (list, tuple)):
        return type(value)(_canonical(v) for v in value)
    return value


def _structure(value: Any) -> Any:
    """A comparable description of a nesting (container types, keys, leaf slots)."""
    if isinstance(value, Mapping):
        return ("dict", tuple((k, _structure(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, tuple(_structure(v) for v in value))
    return "leaf" if value is not None else "None"


def _common_shape(a: TensorShape, b: TensorShape) -> TensorShape:
    """The most specific shape compatible with both ``a`` and ``b``."""
    if a.rank is None or b.rank is None or a.rank != b.rank:
        return TensorShape(None)
    dims = zip(a.as_list(), b.as_list(), strict=True)
    return TensorShape([x if x == y else None for x, y in dims])


def _at_least_as_specific(shape: TensorShape, invariant: TensorShape) -> bool:
    """Every dim ``invariant`` knows, ``shape`` knows and agrees with."""
    if invariant.rank is None:
        return True
    if shape.rank != invariant.rank:
        return False
    dims = zip(shape.as_list(), invariant.as_list(), strict=True)
    return all(i is None or s == i for s, i in dims)


def _shape_str(shape: TensorShape) -> str:
    dims = shape.as_tuple()
    if dims is None:
        return "<unknown>"
    return (
        "("
        + ", ".join("?" if d is None else str(d) for d in dims)
        + ("," if len(dims) == 1 else "")
        + ")"
    )


def _resource_value_spec(placeholder: Tensor) -> Tensor | None:
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


# --- If ----------------------------------------------------------------------------------
def _infer_if(op: Operation) -> list:
    attrs = op.attrs
    pred = op.inputs[0]
    if pred.dtype != dtypes.bool:
        raise TypeError(f"pred must be a bool tensor, got {pred.dtype.name}")
    if not pred.shape.is_compatible_with(scalar()):
        raise ValueError(f"pred must be a scalar, got shape {pred.shape}")
    n = attrs["num_outputs"]
    then, other = attrs["then_branch"], attrs["else_branch"]
    specs = [
        (t.dtype, _common_shape(t.shape, e.shape))
        for t, e in zip(then.outputs[:n], other.outputs[:n], strict=True)
    ]
    for t in (
        then.outputs[n : n + attrs["then_records"]] + other.outputs[n : n + attrs["else_records"]]
    ):
        specs.append((t.dtype, t.shape if t.shape.is_fully_defined() else TensorShape(None)))
    return specs


def _filler(xp: Any, t: Any) -> Any:
    dtype, dims = t
    return xp.zeros(dims if dims is not None else (), dtype=dtype)


def _if_kernel(ctx: Any, attrs: dict) -> Any:
    xp = ctx.xp
    then_run = ctx.subgraph(attrs["then_branch"])
    else_run = ctx.subgraph(attrs["else_branch"])
    then_idx, else_idx = attrs["then_inputs"], attrs["else_inputs"]
    n, a, b = attrs["num_outputs"], attrs["then_records"], attrs["else_records"]
    # Values for the records of the branch not taken (never read by a gradient).
    then_fill = tuple(_filler(xp, s) for s in attrs["record_fill"][a:])
    else_fill = tuple(_filler(xp, s) for s in attrs["record_fill"][:a])
    total = n + a + b

    def run_if(pred: Any, *args: Any) -> Any:
        if pred:
            outs = then_run([args[i] for i in then_idx])
            result = tuple(outs[: n + a]) + then_fill
        else:
            outs = else_run([args[i] for i in else_idx])
            result = tuple(outs[:n]) + else_fill + tuple(outs[n : n + b])
        if total == 1:
            return result[0]
        return result if total else None

    return run_if


def _if_grad(op: Any, *grads: Tensor) -> list:
    attrs = op.attrs
    n, a, b = attrs["num_outputs"], attrs["then_records"], attrs["else_records"]
    fwd_in = list(op.inputs[1:])
    out_idx = [i for i in range(n) if grads[i] is not None and differentiable(op.outputs[i])]
    if not out_idx:
        return [None] * len(op.inputs)
    g_in = [grads[i] for i in out_idx]
    then, other = attrs["then_branch"], attrs["else_branch"]
    then_recs = then.outputs[n : n + a]
    else_recs = other.outputs[n : n + b]
    rec_outputs = list(op.outputs[n : n + a + b])
    specs = (
        [(t.dtype, t.shape) for t in fwd_in]
        + [(t.dtype, t.shape) for t in then_recs + else_recs]
        + [(g.dtype, g.shape) for g in g_in]
    )
    diff_in = [k for k, t in enumerate(fwd_in) if differentiable(t)]
    nf = len(fwd_in)

    def grad_fn(sub: SubGraph, idx: Sequence[int], recs: list[Tensor], offset: int) -> Callable:
        def fn(*args: Tensor) -> dict[int, Tensor]:
            from ..autodiff.gradients import gradients

            fwd_args = args[:nf]
            rec_args = args[nf : nf + a + b]
            g_args = args[nf + a + b :]
            mapping = {p: fwd_args[i] for p, i in zip(sub.all_inputs, idx, strict=True)}
            record_map = {t: rec_args[offset + j] for j, t in enumerate(recs)}
            # The first outputs of an If branch are tensors (control outputs come last).
            ys = recompute([cast(Tensor, sub.outputs[i]) for i in out_idx], mapping, record_map)
            used = set(idx)
            wrt = [k for k in diff_in if k in used]
            result = gradients(ys, [fwd_args[k] for k in wrt], grad_ys=list(g_args))
            return {k: g for k, g in zip(wrt, result, strict=True) if g is not None}

        return fn

    with get_default_graph().name_scope("If_grad"):
        then_sub, then_g = trace(
            grad_fn(then, attrs["then_inputs"], then_recs, 0), specs, "then_grad"
        )
        else_sub, else_g = trace(
            grad_fn(other, attrs["else_inputs"], else_recs, a), specs, "else_grad"
        )
        keys = sorted(set(then_g) | set(else_g))
        then_out: list[Tensor] = []
        else_out: list[Tensor] = []
        for k in keys:
            for sub, mine, theirs, out in (
                (then_sub, then_g, else_g, then_out),
                (else_sub, else_g, then_g, else_out),
            ):
                g = mine.get(k)
                if g is None:
                    with sub.graph.as_default():
                        g = zeros_for(sub.inputs[k], theirs[k])
                out.append(g)
        seal(then_sub, then_out)
        seal(else_sub, else_out)
        args = fwd_in + rec_outputs + g_in
        outs = _make_if(op.inputs[0], args, then_sub, else_sub, len(keys), None)
    by_input = dict(zip(keys, outs, strict=True))
    return [None] + [by_input.get(k) for k in range(nf)]


for _type, _stateful in (("If", True), ("StatelessIf", False)):
    registry.register(registry.OpDef(_type, _infer_if, _if_kernel, _if_grad, stateful=_stateful))


def _union_inputs(
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


def _make_if(
    pred: Tensor,
    args: Sequence[Tensor],
    then_sub: SubGraph,
    else_sub: SubGraph,
    num_outputs: int,
    name: str | None,
    control_outputs: tuple[list[Operation], list[Operation]] = ([], []),
) -> list[Any]:
    """Creates the ``If`` op running ``then_sub``/``else_sub`` (each taking ``args``
    first, then its captures); returns its first ``num_outputs`` outputs (tensors), or
    ``[op]`` when there are none."""
    graph = get_default_graph()
    then_sub, then_ctrl = hoist_reads(then_sub, control_outputs[0])
    else_sub, else_ctrl = hoist_reads(else_sub, control_outputs[1])
    # The branches were sealed with tensors only; their control outputs are added here.
    then_results = cast(list[Tensor], then_sub.outputs[:num_outputs])
    else_results = cast(list[Tensor], else_sub.outputs[:num_outputs])
    then_recs = record_tensors(then_results)
    else_recs = record_tensors(else_results)
    seal(then_sub, [*then_results, *then_recs, *then_ctrl])
    seal(else_sub, [*else_results, *else_recs, *else_ctrl])
    inputs, (then_idx, else_idx) = _union_inputs(args, [then_sub, else_sub])
    fill = tuple(
        (t.dtype.as_numpy_dtype, t.shape.as_tuple() if t.shape.is_fully_defined() else None)
        for t in then_recs + else_recs
    )
    stateful = graph_has_side_effects(then_sub) or graph_has_side_effects(else_sub)
    attrs = {
        "then_branch": then_sub,
        "else_branch": else_sub,
        "then_inputs": then_idx,
        "else_inputs": else_idx,
        "num_outputs": num_outputs,
        "then_records": len(then_recs),
        "else_records": len(else_recs),
        "record_fill": fill,
    }
    controls = list(
        dict.fromkeys(then_sub.graph.outer_control_inputs + else_sub.graph.outer_control_inputs)
    )
    op = graph.create_op(
        "If" if stateful else "StatelessIf",
        [pred] + inputs,
        attrs,
        name=name,
        control_inputs=controls,
    )
    if num_outputs == 0:
        return [op]
    return list(op.outputs[:num_outputs])


def _branch_outputs(result: Any, strict: bool, which: str) -> tuple[Any, list[Any]]:
    """Converts a branch's return value to tensors inside its sub-graph; returns the
    (canonical) structure and its flat leaves (tensors, ops or None)."""
    if (
        not strict
        and isinstance(result, (list, tuple))
        and not nest.is_namedtuple(result)
        and len(result) == 1
    ):
        result = result[0]
    result = _canonical(result)
    leaves: list[Tensor | Operation | None] = []
    for leaf in nest.flatten(result):
        if leaf is None or isinstance(leaf, Operation):
            leaves.append(leaf)
            continue
        try:
            leaves.append(convert_to_tensor(leaf))
        except (TypeError, ValueError) as exc:
            raise TypeError(
                f"{which} returned {leaf!r}, which is not convertible to a tensor: {exc}"
            ) from None
    return result, leaves


def cond(
    pred: Any,
    true_fn: Callable[[], Any] | None = None,
    false_fn: Callable[[], Any] | None = None,
    strict: bool = False,
    name: str | None = None,
    fn1: Any = None,
    fn2: Any = None,
) -> Any:
    """Returns ``true_fn()`` if ``pred`` is true else ``false_fn()``.

    Both functions are traced into sub-graphs of one ``If`` op; only the taken one runs
    when a step runs it, so side effects (e.g. ``assign_add``) in the other never happen.
    Tensors of the enclosing graph used inside become inputs of the op.

    Args:
        pred: a scalar bool tensor (a Python bool is refused, as in TF1).
        true_fn: a callable of no arguments returning a tensor or a (nested) list, tuple
            or dict of tensors (operations and ``None`` leaves are allowed too).
        false_fn: the same for the false case; its result must have the same structure
            and dtypes as ``true_fn``'s.
        strict: keep singleton lists/tuples instead of unpacking them.
        name: name of the op (default ``cond``).

    Returns:
        The structure ``true_fn`` returns, with tensors whose static shapes are the most
        specific shapes both branches agree on (operations become the ``If`` op).

    Raises:
        TypeError: ``pred`` is a Python bool, a function is not callable, a branch
            returns a non-tensor, or the branches return different structures or
            dtypes.
        ValueError: ``pred`` is not a scalar.

    Example:
        >>> y = tf.cond(x < 0., lambda: -x, lambda: x)  # doctest: +SKIP
    """
    true_fn = true_fn if true_fn is not None else fn1
    false_fn = false_fn if false_fn is not None else fn2
    if isinstance(pred, bool):
        raise TypeError("'pred' must not be a Python bool.")
    if not callable(true_fn):
        raise TypeError("'true_fn' must be callable.")
    if not callable(false_fn):
        raise TypeError("'false_fn' must be callable.")
    graph = get_default_graph()
    with graph.name_scope(name or "cond") as scope:
        pred = convert_to_tensor(pred)
        if pred.dtype != dtypes.bool:
            raise TypeError(f"'pred' must be a bool tensor, got {pred.dtype.name} ('{pred.name}')")
        if not pred.shape.is_compatible_with(scalar()):
            raise ValueError(f"'pred' must be a scalar, got shape {pred.shape} ('{pred.name}')")
        branches = []
        for fn, which in ((true_fn, "true_fn"), (false_fn, "false_fn")):
            sub, raw = trace(fn, [], which)
            with sub.graph.as_default():
                structure, leaves = _branch_outputs(raw, strict, f"'{which}'")
            branches.append((sub, structure, leaves))
        (then_sub, t_struct, t_leaves), (else_sub, e_struct, e_leaves) = branches
        # TypeError for every mismatch, as tensorflow.compat.v1's cond (TF 1.15 raised
        # ValueError for some of them).
        if _structure(t_struct) != _structure(e_struct):
            raise TypeError(
                "'true_fn' and 'false_fn' must have the same nested structure of return "
                f"values: 'true_fn' returned {t_struct!r} and 'false_fn' returned "
                f"{e_struct!r}."
            )
        for t, e in zip(t_leaves, e_leaves, strict=True):
            if isinstance(t, Operation) != isinstance(e, Operation):
                raise TypeError(
                    "'true_fn' and 'false_fn' must both return an operation "
                    f"or both a tensor at the same place, got {t!r} and {e!r}"
                )
            if isinstance(t, Tensor) and t.dtype != e.dtype:
                raise TypeError(
                    "Outputs of 'true_fn' and 'false_fn' must have the same type(s). "
                    f"Received {t.dtype.name} from 'true_fn' and {e.dtype.name} from "
                    "'false_fn'."
                )
        seal(then_sub, [t for t in t_leaves if isinstance(t, Tensor)])
        seal(else_sub, [e for e in e_leaves if isinstance(e, Tensor)])
        n = len(then_sub.outputs)
        outs = _make_if(
            pred,
            [],
            then_sub,
            else_sub,
            n,
            scope,
            (
                [t for t in t_leaves if isinstance(t, Operation)],
                [e for e in e_leaves if isinstance(e, Operation)],
            ),
        )
    if_op = outs[0].op if n else outs[0]
    it = iter(outs if n else [])
    flat = [
        None if leaf is None else (if_op if isinstance(leaf, Operation) else next(it))
        for leaf in t_leaves
    ]
    return nest.pack_sequence_as(t_struct, flat)


def case(
    pred_fn_pairs: Any,
    default: Callable[[], Any] | None = None,
    exclusive: bool = False,
    strict: bool = False,
    name: str = "case",
) -> Any:
    """Runs the function of the first pair whose predicate is true (else ``default``).

    Built as nested ``cond``s, so only the selected function runs.

    Args:
        pred_fn_pairs: a list of ``(pred, fn)`` pairs, or a dict ``{pred: fn}`` (ordered
            by the predicates' names, as TF1 does).
        default: a callable giving the result when no predicate is true. When ``None``,
            the last pair's function is the default, and running it while its own
            predicate is false raises ``InvalidArgumentError``.
        exclusive: also assert (at run time) that at most one predicate is true.
        strict: passed on to ``cond``.
        name: name scope of the ops.

    Raises:
        TypeError: ``pred_fn_pairs`` is malformed or a function is not callable.
        ValueError: ``pred_fn_pairs`` is empty.
    """
    from .debugging import Assert

    if not isinstance(pred_fn_pairs, (list, tuple, dict)):
        raise TypeError(
            f"'pred_fn_pairs' must be a list, tuple, or dict. Received: {type(pred_fn_pairs)}"
        )
    if isinstance(pred_fn_pairs, dict):
        pairs = sorted(pred_fn_pairs.items(), key=lambda item: item[0].name)
    else:
        pairs = list(pred_fn_pairs)
    if not pairs:
        raise ValueError("'pred_fn_pairs' must not be empty.")
    for pair in pairs:
        if not isinstance(pair, tuple) or len(pair) != 2:
            raise TypeError(f"Each entry in 'pred_fn_pairs' must be a 2-tuple. Received {pair}.")
        pred, fn = pair
        if not isinstance(pred, Tensor) or pred.dtype != dtypes.bool:
            raise TypeError(f"pred must be a bool Tensor, got: {pred!r}")
        if not callable(fn):
            raise TypeError(f"fn for pred {pred.name} must be callable.")
    if default is not None and not callable(default):
        raise TypeError("'default' must be callable.")
    preds = [p for p, _ in pairs]
    fns = [f for _, f in pairs]
    with get_default_graph().name_scope(name):
        if default is None:
            last_pred, last_fn = preds.pop(), fns.pop()
            names = ", ".join(p.name for p in preds + [last_pred])

            def default(last_pred: Tensor = last_pred, last_fn: Callable = last_fn) -> Any:
                Assert(
                    last_pred,
                    [f"None of the conditions evaluated as True. Conditions: ({names}), Values:"]
                    + preds
                    + [last_pred],
                    summarize=len(preds) + 1,
                )
                return last_fn()

        fn = default
        for pred, action in reversed(list(zip(preds, fns, strict=True))):
            fn = _bind_cond(pred, action, fn, strict)
        if exclusive and len(pairs) > 1:
            check = _assert_at_most_one(list(p for p, _ in pairs))
            with get_default_graph().control_dependencies([check]):
                return fn()
        return fn()


def _bind_cond(pred: Tensor, true_fn: Callable, false_fn: Callable, strict: bool) -> Callable:
    return lambda: cond(pred, true_fn, false_fn, strict=strict)


def _assert_at_most_one(preds: list[Tensor]) -> Operation:
    """An ``Assert`` that at most one of ``preds`` is true (``case(exclusive=True)``)."""
    from .debugging import Assert

    graph = get_default_graph()
    op = graph.create_op("AtMostOneTrue", preds, {})
    names = ", ".join(p.name for p in preds)
    return Assert(
        op.outputs[0],
        [f"Input error: exclusive=True: more than 1 conditions ({names}) evaluated as True:"]
        + preds,
        summarize=len(preds),
    )


def _infer_at_most_one(op: Operation) -> list:
    return [(dtypes.bool, scalar())]


def _at_most_one_kernel(ctx: Any, attrs: dict) -> Any:
    xp = ctx.xp
    return lambda *preds: xp.asarray(sum(bool(p) for p in preds) <= 1)


registry.register(
    registry.OpDef(
        "AtMostOneTrue", _infer_at_most_one, _at_most_one_kernel, registry.NOT_DIFFERENTIABLE
    )
)


# --- While -------------------------------------------------------------------------------
def _infer_while(op: Operation) -> list:
    attrs = op.attrs
    k = attrs["num_loop_vars"]
    invariants = attrs["shape_invariants"]
    specs = [(t.dtype, inv) for t, inv in zip(op.inputs[:k], invariants, strict=True)]
    specs.append((dtypes.int32, scalar()))
    if attrs["back_prop"]:
        specs.extend(
            (t.dtype, TensorShape([None]).concatenate(inv))
            for t, inv in zip(op.inputs[:k], invariants, strict=True)
        )
        body = attrs["body"]
        specs.extend(
            (t.dtype, TensorShape([None]).concatenate(t.shape))
            for t in body.outputs[k : k + attrs["num_records"]]
        )
    return specs


def _stack(xp: Any, values: list[Any], empty: tuple[Any, Any]) -> Any:
    """The per-iteration values stacked on a new leading axis; a zero-length array when
    there are none or their shapes differ (a gradient reading it then fails clearly)."""
    dtype, dims = empty
    if values:
        first = values[0].shape
        if all(v.shape == first for v in values):
            return xp.stack(values)
    return xp.zeros((0,) + tuple(d or 0 for d in dims) if dims is not None else (0,), dtype=dtype)


def _while_kernel(ctx: Any, attrs: dict) -> Any:
    xp = ctx.xp
    op_name = ctx.op_name
    cond_run = ctx.subgraph(attrs["cond"])
    body_run = ctx.subgraph(attrs["body"])
    k, m = attrs["num_loop_vars"], attrs["num_records"]
    has_max = attrs["has_max"]
    cond_idx, body_idx = attrs["cond_inputs"], attrs["body_inputs"]
    # Record history only when this plan reads it (a gradient does).
    read = attrs.get("_outputs_read") or ()
    record = attrs["back_prop"] and (not read or any(read[k + 1 :]))
    recorded_vars = attrs["recorded"]
    empties = attrs["history_specs"]
    checks = attrs["shape_checks"]  # per loop var: dims to verify at run time, or None
    int32 = np.int32
    attrs_back_prop = attrs["back_prop"]

    def check(values: list[Any], n: int) -> None:
        for i, dims in enumerate(checks):
            if dims is None:
                continue
            shape = values[i].shape
            if len(shape) != len(dims) or any(
                d is not None and d != s for d, s in zip(dims, shape, strict=True)
            ):
                raise errors.InvalidArgumentError(
                    None,
                    op_name,
                    f"while_loop '{op_name}': loop variable {i} has shape {tuple(shape)} "
                    f"after {n} iteration(s), which is not compatible with its shape "
                    f"invariant {dims}",
                )

    def run_while(*args: Any) -> tuple:
        values = list(args[:k])
        rest = args[k:]
        limit = max(int(rest[0]), 0) if has_max else -1  # -1: no limit
        caps = rest[1:] if has_max else rest
        cond_caps = [caps[i] for i in cond_idx]
        body_caps = [caps[i] for i in body_idx]
        history: list[list[Any]] = []
        n = 0
        while n != limit and cond_run(values + cond_caps)[0]:
            outs = body_run(values + body_caps)
            if record:
                history.append(values + list(outs[k : k + m]))
            values = list(outs[:k])
            n += 1
            if checks:
                check(values, n)
        result = values + [xp.asarray(n, dtype=int32)]
        if attrs_back_prop:
            for j in range(k + m):
                if not record or (j < k and not recorded_vars[j]):
                    result.append(_stack(xp, [], empties[j]))
                else:
                    result.append(_stack(xp, [h[j] for h in history], empties[j]))
        return tuple(result)

    return run_while


def _is_zero_fill(g: Tensor | None, t: Tensor) -> bool:
    """The gradient pass fills outputs nobody differentiated with ``zeros_like``."""
    return g is None or (g.op.type == "ZerosLike" and g.op.inputs[0] is t)


def _while_grad(op: Any, *grads: Tensor) -> list:
    attrs = op.attrs
    k, m = attrs["num_loop_vars"], attrs["num_records"]
    if not attrs["back_prop"]:
        return [None] * len(op.inputs)
    body = attrs["body"]
    start = k + (1 if attrs["has_max"] else 0)
    caps = list(op.inputs[start:])
    body_caps = [caps[i] for i in attrs["body_inputs"]]
    body_cap_phs = body.all_inputs[k:]
    count = op.outputs[k]
    histories = list(op.outputs[k + 1 : 2 * k + 1])
    rec_histories = list(op.outputs[2 * k + 1 : 2 * k + 1 + m])
    final_g = list(grads[:k])
    hist_g = [
        None if _is_zero_fill(g, h) else g
        for g, h in zip(grads[k + 1 : 2 * k + 1], histories, strict=True)
    ]
    diff_vars = [i for i in range(k) if differentiable(op.inputs[i])]
    if not diff_vars or all(final_g[i] is None and hist_g[i] is None for i in diff_vars):
        return [None] * len(op.inputs)
    for i in range(k):
        if not attrs["recorded"][i]:
            raise ValueError(
                f"Cannot differentiate while_loop '{op.name}': loop variable {i} "
                f"('{op.inputs[i].name}') changes shape between iterations (shape "
                f"invariant {attrs['shape_invariants'][i]}, initial shape "
                f"{op.inputs[i].shape}), so its values are not recorded."
            )
    diff_caps = [c for c, t in enumerate(body_caps) if differentiable(t)]
    cap_specs: dict[int, Tensor | None] = {}
    for c in diff_caps:
        cap_specs[c] = (
            _resource_value_spec(body_cap_phs[c])
            if body_caps[c].dtype == dtypes.resource
            else body_caps[c]
        )
    diff_caps = [c for c in diff_caps if cap_specs[c] is not None]
    body_records = body.outputs[k : k + m]
    nv = len(diff_vars)
    connected: dict[int, bool] = {}

    def grad_body(j: Tensor, *carried: Tensor) -> list[Tensor]:
        from ..autodiff.gradients import gradients

        graph = get_default_graph()
        g_x, accs = carried[:nv], carried[nv:]
        xs = [loop_history_get(h, count, j) for h in histories]
        recs = [loop_history_get(h, count, j) for h in rec_histories]
        inner_caps = [convert_to_tensor(c) for c in body_caps]
        mapping = dict(zip(body.inputs, xs, strict=True))
        mapping.update(zip(body_cap_phs, inner_caps, strict=True))
        ys = recompute(
            [body.outputs[i] for i in diff_vars],
            mapping,
            dict(zip(body_records, recs, strict=True)),
        )
        wrt = [xs[i] for i in diff_vars] + [inner_caps[c] for c in diff_caps]
        result = gradients(ys, wrt, grad_ys=list(g_x))
        new_g: list[Tensor] = []
        for pos, i in enumerate(diff_vars):
            r, h = result[pos], hist_g[i]
            g = r if r is not None else array_ops.zeros_like(xs[i])
            if h is not None:
                g = math_ops.add_n([g, loop_history_get(h, count, j)])
            new_g.append(g)
        new_acc: list[Tensor] = []
        for pos, c in enumerate(diff_caps):
            g_cap = result[nv + pos]
            connected[c] = g_cap is not None
            new_acc.append(accs[pos] if g_cap is None else math_ops.add_n([accs[pos], g_cap]))
        with graph.name_scope(None):
            one = constant(1, dtype=dtypes.int32)
        return [math_ops.add_n([j, one])] + new_g + new_acc

    graph = get_default_graph()
    with graph.name_scope("While_grad"):
        init_g = [
            final_g[i] if final_g[i] is not None else array_ops.zeros_like(op.outputs[i])
            for i in diff_vars
        ]
        init_acc = [zeros_for(body_caps[c], cap_specs[c]) for c in diff_caps]
        j0 = constant(0, dtype=dtypes.int32)
        loop_vars = [j0] + init_g + init_acc
        outs = _make_while(
            lambda *args: constant(True),
            grad_body,
            loop_vars,
            [t.shape for t in loop_vars],
            count,
            True,
            None,
        )
    result: list[Tensor | None] = [None] * len(op.inputs)
    for pos, i in enumerate(diff_vars):
        result[i] = outs[1 + pos]
    for pos, c in enumerate(diff_caps):
        if connected.get(c):
            result[start + attrs["body_inputs"][c]] = outs[1 + nv + pos]
    return result


for _type, _stateful in (("While", True), ("StatelessWhile", False)):
    registry.register(
        registry.OpDef(_type, _infer_while, _while_kernel, _while_grad, stateful=_stateful)
    )


# --- reading the loop history (the gradient loop's only special ops) ---------------------
def _infer_history_get(op: Operation) -> list:
    stack = op.inputs[0]
    shape = stack.shape
    return [(stack.dtype, TensorShape(None) if shape.rank is None else shape[1:])]


def _history_index(op_name: str, stack: Any, count: Any, j: Any) -> int:
    i = int(count) - 1 - int(j)
    if not 0 <= i < stack.shape[0]:
        raise errors.InvalidArgumentError(
            None,
            op_name,
            f"while_loop gradient: iteration {i} of the forward loop was not recorded "
            f"(the history holds {stack.shape[0]} of {int(count)} iterations; loop "
            "variables or stateful values whose shape changes between iterations cannot be "
            "differentiated)",
        )
    return i


def _history_get_kernel(ctx: Any, attrs: dict) -> Any:
    op_name = ctx.op_name
    return lambda stack, count, j: stack[_history_index(op_name, stack, count, j)]


def _history_get_grad(op: Operation, grad: Tensor) -> list:
    stack, count, j = op.inputs
    return [
        get_default_graph().create_op("LoopHistoryGetGrad", [stack, grad, count, j], {}).outputs[0],
        None,
        None,
    ]


def _infer_history_get_grad(op: Operation) -> list:
    return [(op.inputs[0].dtype, op.inputs[0].shape)]


def _history_get_grad_kernel(ctx: Any, attrs: dict) -> Any:
    xp, op_name = ctx.xp, ctx.op_name

    def scatter(stack: Any, grad: Any, count: Any, j: Any) -> Any:
        out = xp.zeros_like(stack)
        out[_history_index(op_name, stack, count, j)] = grad
        return out

    return scatter


def _history_get_grad_grad(op: Operation, grad: Tensor) -> list:
    _, _, count, j = op.inputs
    return [None, loop_history_get(grad, count, j), None, None]


registry.register(
    registry.OpDef("LoopHistoryGet", _infer_history_get, _history_get_kernel, _history_get_grad)
)
registry.register(
    registry.OpDef(
        "LoopHistoryGetGrad",
        _infer_history_get_grad,
        _history_get_grad_kernel,
        _history_get_grad_grad,
    )
)


def loop_history_get(history: Tensor, count: Tensor, j: Tensor) -> Tensor:
    """``history[count - 1 - j]``: forward iteration ``count - 1 - j``'s value."""
    return get_default_graph().create_op("LoopHistoryGet", [history, count, j], {}).outputs[0]


def _make_while(
    cond_fn: Callable,
    body_fn: Callable,
    loop_vars: Sequence[Tensor],
    invariants: Sequence[TensorShape],
    maximum_iterations: Tensor | None,
    back_prop: bool,
    name: str | None,
    names: Sequence[str] | None = None,
) -> list[Tensor]:
    """Creates a ``While`` op over flat ``loop_vars``; ``cond_fn``/``body_fn`` take and
    (for the body) return flat lists. Returns the final loop variables."""
    graph = get_default_graph()
    k = len(loop_vars)
    names = names or [t.name for t in loop_vars]
    specs = [(t.dtype, inv) for t, inv in zip(loop_vars, invariants, strict=True)]
    cond_sub, c = trace(cond_fn, specs, "cond")
    with cond_sub.graph.as_default():
        c = convert_to_tensor(c)
    if c.dtype != dtypes.bool or not c.shape.is_compatible_with(scalar()):
        raise TypeError(f"while_loop's cond must return a scalar bool tensor, got {c!r}")
    cond_sub, _ = hoist_reads(seal(cond_sub, [c]))
    body_sub, outs = trace(body_fn, specs, "body")
    with body_sub.graph.as_default():
        outs = [convert_to_tensor(o) for o in outs]
    if len(outs) != k:
        raise ValueError(f"while_loop's body returned {len(outs)} tensors for {k} loop variables")
    checks = []
    for t, o, inv, nm in zip(loop_vars, outs, invariants, names, strict=True):
        if o.dtype != t.dtype:
            raise TypeError(
                f"Loop variable '{nm}' enters the loop with type {t.dtype.name}, "
                f"but has type {o.dtype.name} after one iteration."
            )
        if not inv.is_compatible_with(o.shape):
            raise ValueError(
                f"Input tensor '{nm}' enters the loop with shape {_shape_str(t.shape)}, but "
                f"has shape {_shape_str(o.shape)} after one iteration. To allow the shape "
                "to vary across iterations, use the `shape_invariants` argument of "
                "tf.while_loop to specify a less-specific shape."
            )
        checks.append(None if _at_least_as_specific(o.shape, inv) else inv.as_tuple())
    body_sub, _ = hoist_reads(seal(body_sub, outs))
    outs = list(body_sub.outputs)
    records = record_tensors(outs) if back_prop else []
    seal(body_sub, outs + records)
    args = list(loop_vars) + ([maximum_iterations] if maximum_iterations is not None else [])
    inputs, (cond_idx, body_idx) = _union_inputs(args, [cond_sub, body_sub])
    n_args = len(args)

    def cap_index(idx: tuple[int, ...]) -> tuple[int, ...]:
        # Positions among the captures, for each sub-graph capture (after the k args).
        return tuple(i - n_args for i in idx[k:])

    recorded = tuple(
        inv == t.shape or (inv.rank is None and t.shape.rank is None)
        for t, inv in zip(loop_vars, invariants, strict=True)
    )
    history_specs = tuple(
        (t.dtype.as_numpy_dtype, inv.as_tuple())
        for t, inv in zip(loop_vars, invariants, strict=True)
    )
    history_specs += tuple((r.dtype.as_numpy_dtype, r.shape.as_tuple()) for r in records)
    stateful = graph_has_side_effects(cond_sub) or graph_has_side_effects(body_sub)
    attrs = {
        "cond": cond_sub,
        "body": body_sub,
        "num_loop_vars": k,
        "has_max": maximum_iterations is not None,
        "cond_inputs": cap_index(cond_idx),
        "body_inputs": cap_index(body_idx),
        "shape_invariants": tuple(invariants),
        "back_prop": bool(back_prop),
        "num_records": len(records),
        "recorded": recorded,
        "history_specs": history_specs,
        "shape_checks": tuple(checks) if any(x is not None for x in checks) else (),
    }
    controls = list(
        dict.fromkeys(cond_sub.graph.outer_control_inputs + body_sub.graph.outer_control_inputs)
    )
    op = graph.create_op(
        "While" if stateful else "StatelessWhile", inputs, attrs, name=name, control_inputs=controls
    )
    return list(op.outputs[:k])


def while_loop(
    cond: Callable,
    body: Callable,
    loop_vars: Any,
    shape_invariants: Any = None,
    parallel_iterations: int = 10,
    back_prop: bool = True,
    swap_memory: bool = False,
    maximum_iterations: Any = None,
    name: str | None = None,
    return_same_structure: bool = False,
) -> Any:
    """Repeats ``body`` while ``cond`` is true.

    One ``While`` op runs the compiled ``cond`` and ``body`` in a loop on its device.

    Args:
        cond: a callable of the loop variables returning a scalar bool tensor.
        body: a callable of the loop variables returning new values in the same
            structure (a single tensor may be returned for one loop variable).
        loop_vars: a tensor, or a (nested) list/tuple/namedtuple/dict of tensors.
        shape_invariants: the shapes each loop variable may take, in the structure of
            ``loop_vars`` (default: each initial value's static shape). A variable whose
            shape changes needs a less specific invariant.
        parallel_iterations, swap_memory: accepted for TF1 compatibility (iterations run
            one after another in this runtime).
        back_prop: record what the gradient needs; ``False`` makes the loop
            non-differentiable (gradients through it are ``None``).
        maximum_iterations: optional int tensor or number bounding the iterations.
        name: name of the op (default ``while``).
        return_same_structure: always return the structure of ``loop_vars`` (otherwise a
            single loop variable is returned unwrapped, as in TF1).

    Returns:
        The final loop variables, in the structure of ``loop_vars``.

    Raises:
        TypeError: ``cond``/``body`` not callable, or a loop variable changes dtype.
        ValueError: the body returns another structure, or a loop variable's shape
            leaves its invariant (the message names it).
    """
    if not callable(cond):
        raise TypeError("cond must be callable.")
    if not callable(body):
        raise TypeError("body must be callable.")
    if parallel_iterations < 1:
        raise TypeError("parallel_iterations must be a positive integer.")
    graph = get_default_graph()
    wrapped = not nest.is_nested(loop_vars) or isinstance(loop_vars, Mapping)
    structure = _canonical([loop_vars] if wrapped else loop_vars)
    with graph.name_scope(name or "while") as scope:
        flat = [convert_to_tensor(v) for v in nest.flatten(structure)]
        if not flat:
            raise ValueError("No loop variables provided")
        if shape_invariants is None:
            invariants = [t.shape for t in flat]
        else:
            invariants = _flatten_invariants(
                structure, [shape_invariants] if wrapped else shape_invariants
            )
            for t, inv in zip(flat, invariants, strict=True):
                if not inv.is_compatible_with(t.shape):
                    raise ValueError(
                        f"The shape invariant specified for {t.name} is not compatible with "
                        "the initial shape of the loop variable. It enters the loop with "
                        f"shape {_shape_str(t.shape)}, but the specified shape invariant is "
                        f"{_shape_str(inv)}."
                    )
        limit = None
        if maximum_iterations is not None:
            limit = (
                convert_to_tensor(maximum_iterations, dtype=dtypes.int32)
                if not isinstance(maximum_iterations, Tensor)
                else maximum_iterations
            )
            if not limit.dtype.is_integer or not limit.shape.is_compatible_with(scalar()):
                raise ValueError(
                    f"maximum_iterations must be a scalar integer tensor, got {limit!r}"
                )
        names = [t.name for t in flat]

        def call(fn: Callable, args: Sequence[Tensor]) -> Any:
            packed = nest.pack_sequence_as(structure, list(args))
            return fn(*packed)

        def cond_fn(*args: Tensor) -> Any:
            return call(cond, args)

        def body_fn(*args: Tensor) -> list[Tensor]:
            result = call(body, args)
            if wrapped:
                single = isinstance(result, list) or (type(result) is tuple)
                result = list(result) if single and len(result) == 1 else [result]
            elif not isinstance(result, (list, tuple)):
                result = [result]
            result = _canonical(list(result))
            if _structure(result) != _structure(list(structure)):
                raise ValueError(
                    "The body of while_loop must return the structure of its loop_vars: "
                    f"loop_vars are {list(structure)!r}, the body returned {result!r}."
                )
            return [o for o in nest.flatten(result)]

        outs = _make_while(cond_fn, body_fn, flat, invariants, limit, back_prop, scope, names)
    packed = nest.pack_sequence_as(structure, outs)
    if wrapped or (len(outs) == 1 and not return_same_structure):
        return packed[0]
    return packed


def _flatten_invariants(structure: Any, invariants: Any) -> list[TensorShape]:
    """The shape invariants, one per leaf of the loop variables' ``structure`` (walked in
    parallel, so a leaf's invariant may itself be a list of dims)."""
    out: list[TensorShape] = []

    def walk(s: Any, inv: Any) -> None:
        # Recursion follows the user's loop-variable nesting, shallow by nature.
        if isinstance(s, Mapping):
            if not isinstance(inv, Mapping) or set(inv) != set(s):
                raise ValueError(
                    f"shape_invariants {inv!r} do not match the structure of "
                    f"the loop variables {s!r}"
                )
            for key in s:
                walk(s[key], inv[key])
        elif isinstance(s, (list, tuple)):
            if not isinstance(inv, (list, tuple)) or len(inv) != len(s):
                raise ValueError(
                    f"shape_invariants {inv!r} do not match the structure of "
                    f"the loop variables {s!r}"
                )
            for a, b in zip(s, inv, strict=True):
                walk(a, b)
        else:
            out.append(TensorShape(None) if inv is None else as_shape(inv))

    walk(structure, invariants)
    return out
