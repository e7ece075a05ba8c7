"""The functional ``If`` op, ``cond`` and ``case``, and the If gradient.

The approach (sub-graph bodies, records, recomputing gradients) is described in
``control/functional.py``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, cast

from ..._util import nest
from ...framework import dtypes, registry
from ...framework.graph import Operation, Tensor, convert_to_tensor, get_default_graph
from ...framework.subgraph import SubGraph, seal, trace
from ...framework.tensor_shape import TensorShape, scalar
from .bodies import (
    differentiable,
    graph_has_side_effects,
    hoist_reads,
    recompute,
    record_tensors,
    zeros_for,
)
from .functional import canonical_structure, common_shape, structure_of, union_inputs
from .tensor_array import TensorArray, build_ta_with_new_flow


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
        (t.dtype, common_shape(t.shape, e.shape))
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
            from ...autodiff.gradients import gradients

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
    inputs, (then_idx, else_idx) = union_inputs(args, [then_sub, else_sub])
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
    result = canonical_structure(result)
    leaves: list[Tensor | Operation | None] = []
    for leaf in nest.flatten(result):
        if leaf is None or isinstance(leaf, Operation):
            leaves.append(leaf)
            continue
        if isinstance(leaf, TensorArray):  # travels as its flow (rebuilt by ``cond``)
            leaves.append(leaf.flow)
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
        if structure_of(t_struct) != structure_of(e_struct):
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
    # A TensorArray returned by the branches comes back as an array over the If's flow.
    templates = nest.flatten(t_struct)
    flat = [
        build_ta_with_new_flow(template, cast(Tensor, value))
        if isinstance(template, TensorArray)
        else value
        for template, value in zip(templates, flat, strict=True)
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
    from ..debug.debugging import Assert

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
    from ..debug.debugging import Assert

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
