"""The functional ``While`` op and ``while_loop``, with the loop-history ops its gradient reads.

The approach (sub-graph bodies, records, recomputing gradients) is described in
``control/functional.py``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from ..._util import nest
from ...framework import dtypes, errors, registry
from ...framework.graph import Operation, Tensor, convert_to_tensor, get_default_graph
from ...framework.subgraph import seal, trace
from ...framework.tensor_shape import TensorShape, as_shape, scalar
from .. import array as array_ops
from .. import math as math_ops
from ..constant import constant
from .bodies import (
    differentiable,
    graph_has_side_effects,
    hoist_reads,
    recompute,
    record_tensors,
    zeros_for,
)
from .functional import (
    at_least_as_specific,
    canonical_structure,
    resource_value_spec,
    shape_text,
    structure_of,
    union_inputs,
)
from .tensor_array import TensorArray, build_ta_with_new_flow


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
    if dtype is None:  # a tensor list (variant): its history is a tuple of references
        return tuple(values)
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
    return g is None or (g.op.type in ("ZerosLike", "TensorListZerosLike") and g.op.inputs[0] is t)


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
            resource_value_spec(body_cap_phs[c])
            if body_caps[c].dtype == dtypes.resource
            else body_caps[c]
        )
    diff_caps = [c for c in diff_caps if cap_specs[c] is not None]
    body_records = body.outputs[k : k + m]
    nv = len(diff_vars)
    connected: dict[int, bool] = {}

    def grad_body(j: Tensor, *carried: Tensor) -> list[Tensor]:
        from ...autodiff.gradients import gradients

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
    if not 0 <= i < len(stack):
        raise errors.InvalidArgumentError(
            None,
            op_name,
            f"while_loop gradient: iteration {i} of the forward loop was not recorded "
            f"(the history holds {len(stack)} of {int(count)} iterations; loop "
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
        i = _history_index(op_name, stack, count, j)
        if isinstance(stack, tuple):  # a tensor list's history: unwritten lists elsewhere
            return tuple(grad if n == i else (None,) * len(h) for n, h in enumerate(stack))
        out = xp.zeros_like(stack)
        out[i] = grad
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
                f"Input tensor '{nm}' enters the loop with shape {shape_text(t.shape)}, but "
                f"has shape {shape_text(o.shape)} after one iteration. To allow the shape "
                "to vary across iterations, use the `shape_invariants` argument of "
                "tf.while_loop to specify a less-specific shape."
            )
        checks.append(None if at_least_as_specific(o.shape, inv) else inv.as_tuple())
    body_sub, _ = hoist_reads(seal(body_sub, outs))
    outs = list(body_sub.outputs)
    records = record_tensors(outs) if back_prop else []
    seal(body_sub, outs + records)
    args = list(loop_vars) + ([maximum_iterations] if maximum_iterations is not None else [])
    inputs, (cond_idx, body_idx) = union_inputs(args, [cond_sub, body_sub])
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
        loop_vars: a tensor, or a (nested) list/tuple/namedtuple/dict of tensors and
            ``TensorArray``s (an array travels as its flow; its shape invariant is
            ignored, as in TF1).
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
    structure = canonical_structure([loop_vars] if wrapped else loop_vars)
    # A TensorArray travels as its flow; the arrays rebuild it around each new flow.
    arrays = {i: v for i, v in enumerate(nest.flatten(structure)) if isinstance(v, TensorArray)}
    with graph.name_scope(name or "while") as scope:
        flat = [_as_loop_tensor(v) for v in nest.flatten(structure)]
        if not flat:
            raise ValueError("No loop variables provided")
        if shape_invariants is None:
            invariants = [t.shape for t in flat]
        else:
            invariants = _flatten_invariants(
                structure, [shape_invariants] if wrapped else shape_invariants
            )
            # A TensorArray's flow is a scalar whatever invariant names the array's elements.
            invariants = [scalar() if i in arrays else inv for i, inv in enumerate(invariants)]
            for t, inv in zip(flat, invariants, strict=True):
                if not inv.is_compatible_with(t.shape):
                    raise ValueError(
                        f"The shape invariant specified for {t.name} is not compatible with "
                        "the initial shape of the loop variable. It enters the loop with "
                        f"shape {shape_text(t.shape)}, but the specified shape invariant is "
                        f"{shape_text(inv)}."
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
            packed = nest.pack_sequence_as(structure, _with_arrays(arrays, args))
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
            result = canonical_structure(list(result))
            if structure_of(result) != structure_of(list(structure)):
                raise ValueError(
                    "The body of while_loop must return the structure of its loop_vars: "
                    f"loop_vars are {list(structure)!r}, the body returned {result!r}."
                )
            return [_as_loop_tensor(o) for o in nest.flatten(result)]

        outs = _make_while(cond_fn, body_fn, flat, invariants, limit, back_prop, scope, names)
    packed = nest.pack_sequence_as(structure, _with_arrays(arrays, outs))
    if wrapped or (len(outs) == 1 and not return_same_structure):
        return packed[0]
    return packed


def _as_loop_tensor(value: Any) -> Tensor:
    return value.flow if isinstance(value, TensorArray) else convert_to_tensor(value)


def _with_arrays(arrays: Mapping[int, TensorArray], flat: Sequence[Tensor]) -> list:
    """``flat`` with each TensorArray's position rebuilt as an array over that flow."""
    return [build_ta_with_new_flow(arrays[i], t) if i in arrays else t for i, t in enumerate(flat)]


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
