"""One record per op case, and the checks every case goes through.

An op's test facts are one ``OpSpec``: how to build it (``build(tf, *inputs)``, written
against a module ``tf`` so that the same builder serves ``dataflow`` and
``tensorflow.compat.v1``), a reference nobody here wrote (an ``autograd.numpy``
function of the inputs), the inputs, and how far to differentiate. A table of specs
then drives four checks, each one function here:

* ``check_forward_and_gradients``: the value against the reference, and (``grad`` 1 or
  2) gradients against ``autograd`` and finite differences (``grad_check``);
* ``check_static_shape``: the static shape inferred at build time agrees with the
  value's, both with the inputs' shapes known and with only their ranks known;
* ``check_tf_parity``: values, dtypes, static shapes and gradients equal TF1's for the
  same program and inputs (the caller imports TensorFlow and passes it in);
* ``op_types_built``: which registered op types a spec's forward and gradient graphs
  contain, so that a table can prove it covers every pure op type of the registry.

A third-party op package can keep its own table of ``OpSpec`` rows and run the same
checks on it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

import dataflow

from . import grad_check
from .tf_parity import run_in_fresh_graph


@dataclass(frozen=True)
class OpSpec:
    """One case of one op (or a few ops that only make sense together)."""

    name: str
    build: Callable[..., Any]  # build(tf, *inputs) -> a tensor or a list of tensors
    reference: Callable[..., Any]  # autograd.numpy (or numpy) function of the inputs
    args: tuple[Any, ...]
    grad: int = 2  # 0: forward only; 1: first-order gradients; 2: and second order
    wrt: tuple[int, ...] | None = None  # differentiated inputs (default: the float ones)
    rtol: float = 1e-6
    atol: float = 1e-8
    tf_parity: bool = True  # TF1 has the same op with the same semantics
    tf_gradients: bool = True  # and a gradient for it
    tf_rtol: float = 1e-6
    tf_atol: float = 1e-8
    unknown_dims: bool = True  # builds with only the inputs' ranks known
    # Per input, ``sampler(rng, shape)``: inputs of any shape, for families whose tests
    # sweep shapes (broadcasting); ``args`` is one draw.
    samplers: tuple[Callable[..., Any], ...] = ()
    tags: frozenset[str] = field(default_factory=frozenset)

    def builder(self, tf: Any) -> Callable[..., Any]:
        """``build`` bound to one library's module."""
        return functools.partial(self.build, tf)


def call(path: str, *extra: Any, **kwargs: Any) -> Callable[..., Any]:
    """A builder calling the function at ``path`` (``"nn.relu"``) of whichever module
    it is given: ``call("nn.relu")(tf, x) == tf.nn.relu(x)``; ``extra`` positional
    arguments follow the inputs."""

    def build(tf: Any, *inputs: Any) -> Any:
        fn = functools.reduce(getattr, path.split("."), tf)
        return fn(*inputs, *extra, **kwargs)

    build.__qualname__ = f"call({path!r})"
    return build


def squared(build: Callable[..., Any], reference: Callable[..., Any]) -> tuple[Callable, Callable]:
    """``build`` and ``reference`` followed by squaring: for an op linear in its input,
    the second-order check then differentiates through its gradient ops (the second
    derivative of a linear op alone is zero whatever the gradient ops do)."""

    def build2(tf: Any, *inputs: Any) -> Any:
        y = build(tf, *inputs)
        return y * y

    def reference2(*args: Any) -> Any:
        y = reference(*args)
        return y * y

    return build2, reference2


def check_forward_and_gradients(spec: OpSpec, seed: int = 0) -> None:
    """The value (and static shape) against the reference; gradients to ``spec.grad``."""
    build = spec.builder(dataflow)
    if spec.grad == 0:
        grad_check.check_forward(build, spec.reference, spec.args, spec.rtol, spec.atol)
        return
    grad_check.check_op(
        build,
        spec.reference,
        spec.args,
        wrt=spec.wrt,
        order=spec.grad,
        rtol=spec.rtol,
        atol=spec.atol,
        seed=seed,
    )


def check_static_shape(spec: OpSpec) -> None:
    """Build-time shapes agree with run-time values, inputs fully known or rank only."""
    for known in (True, False) if spec.unknown_dims else (True,):
        graph = dataflow.Graph()
        with graph.as_default():
            phs = [
                dataflow.placeholder(
                    np.asarray(a).dtype, np.shape(a) if known else [None] * np.ndim(a)
                )
                for a in spec.args
            ]
            outs = _as_list(spec.build(dataflow, *phs))
            with dataflow.Session(graph=graph) as sess:
                values = sess.run(outs, dict(zip(phs, spec.args)))
        for k, (out, value) in enumerate(zip(outs, values, strict=True)):
            where = f"{spec.name}: output {k} ({'known' if known else 'rank-only'} inputs)"
            assert out.shape.is_compatible_with(np.shape(value)), (
                f"{where}: static shape {out.shape} but the value's is {np.shape(value)}"
            )
            assert out.dtype.as_numpy_dtype == np.asarray(value).dtype, (
                f"{where}: static dtype {out.dtype} but the value's is {np.asarray(value).dtype}"
            )


def check_tf_parity(spec: OpSpec, tf1: Any, seed: int = 0) -> None:
    """Same values, dtypes and static shapes as TF1, and (``grad`` > 0) the same
    vector-Jacobian products along one random cotangent."""
    rng = np.random.default_rng(seed)
    compare_gradients = spec.grad > 0 and spec.tf_gradients
    # One cotangent per float output, shaped like the reference's values (a static shape
    # may have unknown dimensions: boolean_mask).
    cotangents = [
        rng.standard_normal(np.shape(value))
        for value in _as_list(spec.reference(*spec.args))
        if np.asarray(value).dtype.kind in "fc"
    ]
    shapes: list[list] = []  # each library's static output shapes

    def program(tf: Any) -> tuple[Any, dict]:
        phs = [tf.placeholder(np.asarray(a).dtype, np.shape(a)) for a in spec.args]
        outs = _as_list(spec.build(tf, *phs))
        shapes.append([_static_shape(o) for o in outs])
        fetches = {"outs": outs}
        if compare_gradients:
            wrt = _differentiated(spec)
            float_outs = [o for o in outs if o.dtype.is_floating or o.dtype.is_complex]
            grad_ys = [tf.constant(u, dtype=o.dtype) for u, o in zip(cotangents, float_outs)]
            grads = tf.gradients(float_outs, [phs[i] for i in wrt], grad_ys=grad_ys)
            # Densified: a gather's gradient is IndexedSlices in both libraries.
            fetches["grads"] = [
                tf.zeros_like(phs[i]) if g is None else tf.convert_to_tensor(g)
                for g, i in zip(grads, wrt)
            ]
        return fetches, dict(zip(phs, spec.args))

    ours = run_in_fresh_graph(dataflow, program)
    theirs = run_in_fresh_graph(tf1, program)
    assert shapes[0] == shapes[1], f"{spec.name}: static shapes {shapes[0]} != TF's {shapes[1]}"
    for what in ("outs", "grads") if compare_gradients else ("outs",):
        for k, (a, b) in enumerate(zip(ours[what], theirs[what], strict=True)):
            a, b = np.asarray(a), np.asarray(b)
            where = f"{spec.name}: {what} {k}"
            assert a.shape == b.shape, f"{where}: shape {a.shape} != TF's {b.shape}"
            assert a.dtype == b.dtype, f"{where}: dtype {a.dtype} != TF's {b.dtype}"
            if a.dtype.kind in "fc":
                np.testing.assert_allclose(
                    a, b, rtol=spec.tf_rtol, atol=spec.tf_atol, err_msg=where
                )
            else:
                np.testing.assert_array_equal(a, b, err_msg=where)


def op_types_built(spec: OpSpec) -> set[str]:
    """The op types of ``spec``'s forward graph and, if it is differentiated, of the
    gradient graph too (gradient kernels such as ``ReluGrad`` are ops of their own),
    with the fused types that compiling the graph may make of a producer and consumer
    pair (``Square`` into ``Sum`` runs as ``SumOfSquares``), chains of them included."""
    from ..framework import registry

    graph = dataflow.Graph()
    with graph.as_default():
        phs = [dataflow.placeholder(np.asarray(a).dtype, np.shape(a)) for a in spec.args]
        outs = _as_list(spec.build(dataflow, *phs))
        if spec.grad > 0:
            wrt = [phs[i] for i in _differentiated(spec)]
            float_outs = [o for o in outs if o.dtype.is_floating or o.dtype.is_complex]
            first = dataflow.gradients(float_outs, wrt)
            if spec.grad > 1:
                connected = [g for g in first if g is not None]
                dataflow.gradients([dataflow.reduce_sum(g * g) for g in connected], wrt)
    ops = _operations_with_bodies(graph)
    # Fusions take a consumer's first input; they chain (a fused producer fuses on).
    made: dict[Any, str] = {}
    for op in sorted(ops, key=lambda o: o._id):
        if op.inputs:
            producer = op.inputs[0].op
            for producer_type in (made.get(producer), producer.type):
                fused = registry.fusion_of(producer_type, op.type) if producer_type else None
                if fused is not None:
                    made[op] = fused
                    break
    return {op.type for op in ops} | set(made.values())


def _operations_with_bodies(graph: Any) -> list:
    """The graph's ops and those of every sub-graph (``cond`` branches, loop bodies and
    their gradients) that its ops run."""
    from ..framework.subgraph import SubGraph

    ops, stack = [], [graph]
    while stack:
        for op in stack.pop().get_operations():
            ops.append(op)
            stack.extend(v.graph for v in op.attrs.values() if isinstance(v, SubGraph))
    return ops


def _differentiated(spec: OpSpec) -> list[int]:
    if spec.wrt is not None:
        return list(spec.wrt)
    return [i for i, a in enumerate(spec.args) if np.asarray(a).dtype.kind in "fc"]


def _static_shape(tensor: Any) -> list | None:
    return tensor.shape.as_list() if tensor.shape.ndims is not None else None


def _as_list(x: Any) -> list:
    return list(x) if isinstance(x, (list, tuple)) else [x]


def ids(specs: Sequence[OpSpec]) -> list[str]:
    """Test ids for ``pytest.mark.parametrize`` over a table."""
    return [s.name for s in specs]
