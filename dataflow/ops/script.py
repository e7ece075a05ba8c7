"""Python functions as ops: ``py_func`` / ``numpy_function`` and ``autograd_op``.

A ``PyFunc`` op (``PyFuncStateless`` when ``stateful=False``) holds the Python callable
in its attrs; its kernel hands it the input arrays as numpy arrays (copied to the host
from a GPU), checks that what it returns has the dtypes of ``Tout`` and, on a GPU,
copies the results back. The callable travels inside compiled plans, so it must pickle
with ``cloudpickle`` (lambdas and closures do) when the Dask runtime ships plans to
workers. An exception in it fails the step with ``InvalidArgumentError`` naming the op
(``StopIteration`` becomes ``OutOfRangeError``, as in TF), and so does a result of
another dtype (TF1 converts nothing: a Python float is float64, refused for float32);
the wrappers this module builds itself (``autograd_op``, numpy gradients) cast theirs.
Output shapes are unknown statically unless the caller sets them (``Tensor.set_shape``).

Gradients: without ``grad=`` a ``py_func`` is not differentiable (``gradients`` gives
``None`` through it, as TF1's). ``grad=`` gives it one: either a graph gradient
function ``grad(op, *output_grads) -> [input_grad or None, ...]`` built from ops
(recognized by its first parameter being named ``op``), or a numpy function
``grad(*inputs, *output_grads) -> one array per input`` that runs as another
``py_func``. The callable is kept, for as long as the graph lives, in a table keyed by
a token stored in the attrs (a gradient is only needed while building, never inside a
plan, so it need not pickle).

``autograd_op(func)`` makes ``func`` (written with ``autograd.numpy``) an op whose
gradient is the vector-Jacobian product computed by the ``autograd`` package; that
gradient op is itself an ``autograd_op``, so second derivatives work.
"""

from __future__ import annotations

import functools
import inspect
import itertools
import re
import traceback
import weakref
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..framework import dtypes, errors, registry
from ..framework.graph import Operation, Tensor, convert_to_tensor, get_default_graph
from ..framework.tensor_shape import TensorShape
from . import array as array_ops

# Gradient functions by token, per root graph (they live as long as the graph does).
_GRADS: weakref.WeakKeyDictionary[Any, dict[int, Callable]] = weakref.WeakKeyDictionary()
_grad_tokens = itertools.count(1)


def _root(graph: Any) -> Any:
    """The outermost graph: ops copied into cond/while bodies still find their gradient."""
    while graph.outer_graph is not None:
        graph = graph.outer_graph
    return graph


def _infer_py_func(op: Operation) -> list:
    return [(dt, TensorShape(None)) for dt in op.attrs["Tout"]]


def _py_func_kernel(ctx: Any, attrs: dict) -> Any:
    func, op_name = attrs["func"], ctx.op_name
    out_dtypes = [t.as_numpy_dtype for t in attrs["Tout"]]
    as_list = attrs["as_list"]
    # ``py_func``'s results must have the declared dtypes, as in TF1; the wrappers
    # built here (``autograd_op``, numpy gradients) cast theirs to dtypes they chose.
    cast = attrs.get("cast", False)
    xp = ctx.xp
    on_host = xp is np
    n = len(out_dtypes)

    def py_func(*args: Any) -> Any:
        if not on_host:
            args = tuple(a.get() for a in args)
        try:
            result = func(*args)
        except errors.OpError:
            raise
        except StopIteration as exc:
            raise errors.OutOfRangeError(
                None, op_name, f"StopIteration in py_func '{op_name}': {exc}"
            ) from None
        except Exception as exc:
            text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
            raise errors.InvalidArgumentError(
                None, op_name, f"{type(exc).__name__}: {exc} (in py_func '{op_name}')\n{text}"
            ) from None
        if n == 0:
            return None
        if as_list:
            if not isinstance(result, (list, tuple)) or len(result) != n:
                got = len(result) if isinstance(result, (list, tuple)) else 1
                raise errors.InvalidArgumentError(
                    None,
                    op_name,
                    f"py_func '{op_name}' returned {got} value(s), but Tout lists {n}",
                )
        else:
            result = (result,)
        try:
            outs = [
                np.asarray(r, dtype=dt if cast or np.dtype(dt).kind in "OSU" else None)
                for r, dt in zip(result, out_dtypes, strict=True)
            ]
        except (TypeError, ValueError) as exc:
            raise errors.InvalidArgumentError(
                None,
                op_name,
                f"py_func '{op_name}' returned a value not convertible to Tout: {exc}",
            ) from None
        for i, (o, dt) in enumerate(zip(outs, out_dtypes)):
            if o.dtype != dt:
                raise errors.InvalidArgumentError(
                    None,
                    op_name,
                    f"{i}-th value returned by py_func '{op_name}' is "
                    f"{o.dtype}, but expects {np.dtype(dt)} (Tout); convert it with "
                    f"astype, e.g. np.asarray(value, np.{np.dtype(dt)})",
                )
        if not on_host:
            outs = [xp.asarray(o) for o in outs]
        return outs[0] if n == 1 else tuple(outs)

    return py_func


def _py_func_grad(op: Operation, *grads: Tensor) -> list:
    fn = _GRADS.get(_root(op.graph), {}).get(op.attrs.get("grad_token") or 0)
    if fn is None:
        # TF1 registers PyFunc as not differentiable: nothing flows (give it grad=, or
        # use autograd_op, for a gradient).
        return [None] * len(op.inputs)
    return list(fn(op, *grads))


for _type, _stateful in (("PyFunc", True), ("PyFuncStateless", False)):
    registry.register(
        registry.OpDef(
            _type,
            _infer_py_func,
            _py_func_kernel,
            _py_func_grad,
            stateful=_stateful,
            gpu_kernel=False,  # calls Python on host arrays
        )
    )


def _is_graph_gradient(grad: Callable) -> bool:
    try:
        params = list(inspect.signature(grad).parameters)
    except (TypeError, ValueError):
        return False
    return bool(params) and params[0] == "op"


def _numpy_gradient(grad: Callable) -> Callable:
    """A graph gradient function running the numpy gradient ``grad`` as a py_func."""

    def graph_grad(op: Operation, *grads: Tensor) -> list:
        inputs = list(op.inputs)
        gs = [
            array_ops.zeros_like(o) if g is None else g
            for o, g in zip(op.outputs, grads, strict=True)
        ]
        k = len(inputs)

        def run(*args: Any) -> list:
            result = grad(*args)
            result = list(result) if isinstance(result, (list, tuple)) else [result]
            if len(result) != k:
                raise ValueError(
                    f"the gradient function of py_func returned {len(result)} values for {k} inputs"
                )
            pairs = zip(args, result, strict=False)  # args also hold the output grads
            return [np.zeros_like(x) if r is None else r for x, r in pairs]

        outs = _py_func(
            run,
            inputs + gs,
            [t.dtype for t in inputs],
            stateful=False,
            name=f"{op.name.rsplit('/', 1)[-1]}_grad",
            cast=True,
        )
        for o, t in zip(outs, inputs, strict=True):
            o.set_shape(t.shape)
        return [
            o if t.dtype.is_floating or t.dtype.is_complex else None
            for o, t in zip(outs, inputs, strict=True)
        ]

    return graph_grad


def py_func(
    func: Callable,
    inp: Any,
    Tout: Any,
    stateful: bool = True,
    name: str | None = None,
    grad: Callable | None = None,
) -> Any:
    """Wraps the numpy function ``func`` as an op.

    Args:
        func: called with one numpy array per input (read-only: do not modify them);
            returns an array (or a list of arrays when ``Tout`` is a list).
        inp: a list of tensors (or one tensor).
        Tout: a dtype, or a list of dtypes (one per output; ``[]`` for none).
        stateful: whether ``func`` has side effects (stateless ones may be pruned like
            pure ops; gradients recompute them).
        name: the op's name.
        grad: optional gradient: ``grad(op, *output_grads)`` building ops, or a numpy
            ``grad(*inputs, *output_grads)`` returning one array per input.

    Returns:
        A tensor, or a list of tensors when ``Tout`` is a list (the op itself when it
        has no outputs). Static shapes are unknown.

    Raises (at run time):
        errors.InvalidArgumentError: ``func`` raised, or returned a value whose dtype is
            not its ``Tout`` (a Python float is float64: TF1 refuses it for float32);
            the message names the op.
    """
    return _py_func(func, inp, Tout, stateful, name, grad)


def _py_func(
    func: Callable,
    inp: Any,
    Tout: Any,
    stateful: bool = True,
    name: str | None = None,
    grad: Callable | None = None,
    cast: bool = False,
) -> Any:
    """``py_func``; ``cast=True`` converts the results to ``Tout`` instead of refusing
    other dtypes (for the wrappers of this module, whose ``Tout`` is their own choice)."""
    if not callable(func):
        raise TypeError(f"py_func needs a callable, got {func!r}")
    as_list = isinstance(Tout, (list, tuple))
    touts = tuple(dtypes.as_dtype(t) for t in (Tout if as_list else [Tout]))
    inputs = list(inp) if isinstance(inp, (list, tuple)) else [inp]
    tensors = [convert_to_tensor(x) for x in inputs]
    attrs: dict[str, Any] = {"func": func, "Tout": touts, "as_list": as_list}
    if cast:
        attrs["cast"] = True
    if grad is not None:
        if not callable(grad):
            raise TypeError(f"py_func's grad must be callable, got {grad!r}")
        token = next(_grad_tokens)
        _GRADS.setdefault(_root(get_default_graph()), {})[token] = (
            grad if _is_graph_gradient(grad) else _numpy_gradient(grad)
        )
        attrs["grad_token"] = token
    op = get_default_graph().create_op(
        "PyFunc" if stateful else "PyFuncStateless", tensors, attrs, name=name
    )
    if not touts:
        return op
    return list(op.outputs) if as_list else op.outputs[0]


def numpy_function(
    func: Callable,
    inp: Any,
    Tout: Any,
    stateful: bool = True,
    name: str | None = None,
) -> Any:
    """``tf.numpy_function``: ``py_func`` without a gradient."""
    return py_func(func, inp, Tout, stateful=stateful, name=name)


# --- autograd_op --------------------------------------------------------------------------
def _autograd_gradient(func: Callable, multi: bool) -> Callable:
    """The graph gradient of an ``autograd_op``: another ``autograd_op`` computing the
    vector-Jacobian product of ``func`` with ``autograd``."""

    def graph_grad(op: Operation, *grads: Tensor) -> list:
        inputs = list(op.inputs)
        diff = [i for i, t in enumerate(inputs) if t.dtype.is_floating]
        if not diff:
            return [None] * len(inputs)
        gs = [
            array_ops.zeros_like(o) if g is None else g
            for o, g in zip(op.outputs, grads, strict=True)
        ]
        k = len(inputs)

        def vjp(*args: Any) -> list:
            import autograd
            import autograd.numpy as anp

            xs, cot = args[:k], args[k:]

            def inner(*dx: Any) -> Any:
                full = list(xs)
                for i, v in zip(diff, dx, strict=True):
                    full[i] = v
                out = func(*full)
                outs = list(out) if multi else [out]
                total = 0.0
                for o, g in zip(outs, cot, strict=True):
                    total = total + anp.sum(o * g)
                return total

            result = autograd.grad(inner, argnum=tuple(range(len(diff))))(*[xs[i] for i in diff])
            return list(result)

        name = f"{op.name.rsplit('/', 1)[-1]}_vjp"
        outs = _autograd_call(vjp, inputs + gs, [inputs[i].dtype for i in diff], True, name)
        result: list[Tensor | None] = [None] * k
        for o, i in zip(outs, diff, strict=True):
            o.set_shape(inputs[i].shape)
            result[i] = o
        return result

    return graph_grad


def _autograd_call(
    func: Callable,
    inputs: Sequence[Any],
    Tout: Any,
    multi: bool,
    name: str | None,
) -> Any:
    return _py_func(
        func,
        list(inputs),
        Tout,
        stateful=False,
        name=name,
        grad=_autograd_gradient(func, multi),
        cast=True,
    )


def _op_name(func: Callable) -> str:
    text = re.sub(r"[^A-Za-z0-9_.]", "_", getattr(func, "__name__", "")).strip("_")
    return text if text and text[0].isalnum() else "AutogradOp"


def autograd_op(
    func: Callable | None = None,
    *,
    Tout: Any = None,
    name: str | None = None,
) -> Any:
    """Decorator: a numpy function written with ``autograd.numpy`` becomes an op builder.

    Calling the decorated function with tensors adds an op running ``func`` on their
    values; its gradient (any order) is computed by the ``autograd`` package.

    Args:
        func: the function (``@autograd_op``), or ``None`` for ``@autograd_op(Tout=...)``.
        Tout: output dtype, or a list of dtypes when ``func`` returns a tuple/list
            (default: the dtype of the first floating point input, else float32).
        name: the op's name (default: the function's name).

    Example:
        >>> @tf.autograd_op  # doctest: +SKIP
        ... def softplus(x):
        ...     return anp.logaddexp(0.0, x)
    """
    if func is None:
        return lambda f: autograd_op(f, Tout=Tout, name=name)

    @functools.wraps(func)
    def build(*args: Any) -> Any:
        tensors = [convert_to_tensor(a) for a in args]
        tout = Tout
        if tout is None:
            tout = next((t.dtype for t in tensors if t.dtype.is_floating), dtypes.float32)
        multi = isinstance(tout, (list, tuple))
        return _autograd_call(func, tensors, tout, multi, name or _op_name(func))

    return build


# --- py_function --------------------------------------------------------------------------
class EagerValue(np.ndarray):
    """An input of a ``py_function``'s Python function: a numpy array that also answers
    ``.numpy()`` (a plain array), as the EagerTensors TF1's ``py_function`` passes do."""

    def numpy(self) -> np.ndarray:
        """The value as a plain numpy array."""
        return np.asarray(self).view(np.ndarray)


def _eager_call(func: Callable) -> Callable:
    """``func`` called with ``EagerValue`` arguments; results answering ``.numpy()``
    (``EagerValue``s, or anything of that shape) are unwrapped before conversion."""

    def call(*args: Any) -> Any:
        result = func(*[np.asarray(a).view(EagerValue) for a in args])

        def unwrap(value: Any) -> Any:
            return value.numpy() if hasattr(value, "numpy") else value

        if isinstance(result, (list, tuple)):
            return type(result)(unwrap(r) for r in result)
        return unwrap(result)

    return call


def py_function(
    func: Callable | None = None, inp: Any = None, Tout: Any = None, name: str | None = None
) -> Any:
    """``tf.py_function`` in a graph: ``func`` runs in Python when the op runs, called
    with one ``EagerValue`` per input (a numpy array with ``.numpy()``, standing for
    TF's EagerTensors) and returning values convertible to ``Tout`` (tensors' values,
    arrays or Python numbers; a Python float becomes float32 when ``Tout`` says so, as
    TF's conversion does). Always stateful. Unlike TF's, it has no gradient here (no
    tape records ``func``'s arithmetic): ``gradients`` through it raises
    ``LookupError`` rather than giving a wrong ``None``.

    Returns:
        A tensor, a list of tensors when ``Tout`` is a list, or the op when ``Tout`` is
        ``[]``.
    """
    if func is None or not callable(func):
        raise TypeError(f"py_function needs a callable func, got {func!r}")
    if Tout is None:
        raise TypeError("py_function needs Tout")
    return _py_func(
        _eager_call(func), [] if inp is None else inp, Tout, True, name, _no_tape, cast=True
    )


def _no_tape(op: Operation, *grads: Tensor) -> list:
    raise LookupError(
        f"No gradient defined for py_function op {op.name}: its Python function is not "
        "recorded on a tape here; wrap it in tf.stop_gradient if none should flow."
    )
