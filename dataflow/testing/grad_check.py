"""Checking an op's forward value and gradients against references nobody here wrote.

``check_op(build, reference, args)`` builds ``build(*placeholders)`` in a fresh graph
and checks, in float64:

* forward: the session's value equals ``reference(*args)`` (an ``autograd.numpy``
  function, which is also plain numpy);
* first order: the graph's vector-Jacobian product along a random cotangent ``u``
  equals ``autograd``'s, and its directional derivative along a random tangent ``v``
  equals central finite differences of the forward pass;
* second order (``order=2``): the gradient of ``<vjp(u), w>`` (a gradient of a
  gradient, built with ``gradients`` twice) equals ``autograd``'s.

``wrt`` selects which arguments are differentiated (default: every float argument).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np


def _session_run(graph: Any, fetches: Any, feeds: dict) -> Any:
    from ..runtime.config import ConfigProto
    from ..runtime.session import Session

    with Session(graph=graph, config=ConfigProto(debug=True)) as sess:
        return sess.run(fetches, feeds)


def check_forward(
    build: Callable,
    reference: Callable,
    args: Sequence[Any],
    rtol: float = 1e-10,
    atol: float = 1e-12,
    dtypes: Sequence[Any] | None = None,
) -> Any:
    """Checks ``build``'s value (and static shape and dtype) against ``reference``."""
    from ..framework.graph import Graph
    from ..ops.constant import placeholder

    graph = Graph()
    with graph.as_default():
        phs = [
            placeholder((dtypes[i] if dtypes else np.asarray(a).dtype), np.shape(a))
            for i, a in enumerate(args)
        ]
        out = build(*phs)
    got = _session_run(graph, out, dict(zip(phs, args)))
    want = reference(*args)
    _assert_close(got, want, rtol, atol, "forward")
    for o, w in zip(_as_list(out), _as_list(want)):
        assert o.shape.is_compatible_with(np.shape(w)), (
            f"static shape {o.shape} does not match the value's {np.shape(w)}"
        )
    return got


def check_op(
    build: Callable,
    reference: Callable,
    args: Sequence[Any],
    wrt: Sequence[int] | None = None,
    order: int = 2,
    rtol: float = 1e-6,
    atol: float = 1e-8,
    eps: float = 1e-6,
    seed: int = 0,
) -> None:
    """Checks forward, first and (optionally) second order gradients; see module doc."""
    import autograd
    import autograd.numpy as anp

    from ..autodiff.gradients import gradients
    from ..framework.graph import Graph
    from ..ops.constant import constant, placeholder
    from ..ops.math import add_n

    rng = np.random.default_rng(seed)
    args = [np.asarray(a) for a in args]
    if wrt is None:
        wrt = [i for i, a in enumerate(args) if a.dtype.kind == "f"]
    want = np.asarray(reference(*args))
    u = rng.standard_normal(want.shape)
    ws = [rng.standard_normal(args[i].shape) for i in wrt]

    graph = Graph()
    with graph.as_default():
        phs = [placeholder(a.dtype, a.shape) for a in args]
        out = build(*phs)
        xs = [phs[i] for i in wrt]
        grads = gradients(out, xs, grad_ys=constant(u, dtype=out.dtype))
        fetch = {"out": out, "grads": grads}
        if order >= 2:
            inner = add_n([_reduce_dot(g, w) for g, w in zip(grads, ws) if g is not None])
            fetch["grads2"] = gradients(inner, xs, unconnected_gradients="zero")
    got = _session_run(graph, fetch, dict(zip(phs, args)))
    _assert_close(got["out"], want, 1e-10, 1e-12, "forward")
    assert out.shape.is_compatible_with(want.shape), (
        f"static shape {out.shape} does not match the value's {want.shape}"
    )

    def scalar_vjp(*diff_args: Any) -> Any:
        full = list(args)
        for i, a in zip(wrt, diff_args):
            full[i] = a
        return anp.sum(reference(*full) * u)

    diff_args = [args[i] for i in wrt]
    ag = (
        autograd.grad(lambda *a: scalar_vjp(*a), argnum=list(range(len(wrt))))(*diff_args)
        if len(wrt) > 1
        else [autograd.grad(scalar_vjp)(*diff_args)]
    )
    for k, (g, a) in enumerate(zip(got["grads"], ag)):
        g = np.zeros_like(a) if g is None else g
        _assert_close(g, a, rtol, atol, f"gradient of input {wrt[k]} vs autograd")

    # Finite differences along a random tangent, through our own forward pass.
    vs = [rng.standard_normal(args[i].shape) for i in wrt]
    plus, minus = list(args), list(args)
    for i, v in zip(wrt, vs):
        plus[i] = args[i] + eps * v
        minus[i] = args[i] - eps * v
    fd = (np.sum(reference(*plus) * u) - np.sum(reference(*minus) * u)) / (2 * eps)
    ours = sum(np.sum((np.zeros_like(v) if g is None else g) * v) for g, v in zip(got["grads"], vs))
    assert abs(fd - ours) <= 1e-4 * max(1.0, abs(fd)), (
        f"directional derivative {ours} != finite differences {fd}"
    )

    if order >= 2:

        def inner_fn(*diff_args: Any) -> Any:
            g = (
                autograd.grad(scalar_vjp, argnum=list(range(len(wrt))))(*diff_args)
                if len(wrt) > 1
                else [autograd.grad(scalar_vjp)(*diff_args)]
            )
            return sum(anp.sum(gi * w) for gi, w in zip(g, ws))

        ag2 = (
            autograd.grad(inner_fn, argnum=list(range(len(wrt))))(*diff_args)
            if len(wrt) > 1
            else [autograd.grad(inner_fn)(*diff_args)]
        )
        for k, (g, a) in enumerate(zip(got["grads2"], ag2)):
            g = np.zeros_like(a) if g is None else g
            _assert_close(
                g, a, rtol * 10, atol * 10, f"second-order gradient of input {wrt[k]} vs autograd"
            )


def _reduce_dot(g: Any, w: np.ndarray) -> Any:
    from ..ops import math as math_ops
    from ..ops.constant import constant

    return math_ops.reduce_sum(g * constant(w, dtype=g.dtype))


def _as_list(x: Any) -> list:
    return list(x) if isinstance(x, (list, tuple)) else [x]


def _assert_close(got: Any, want: Any, rtol: float, atol: float, what: str) -> None:
    for g, w in zip(_as_list(got), _as_list(want)):
        g, w = np.asarray(g), np.asarray(w)
        assert g.shape == w.shape, f"{what}: shape {g.shape} != expected {w.shape}"
        if g.dtype.kind in "fc" or w.dtype.kind in "fc":
            np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, err_msg=what)
        else:
            np.testing.assert_array_equal(g, w, err_msg=what)
