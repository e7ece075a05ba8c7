"""``tf.custom_gradient`` in graph mode: a function that returns its outputs and the
function computing its inputs' gradients.

The approach is TF1's. ``f(*xs)`` builds its outputs ``ys`` as usual and returns
``(ys, grad_fn)``. The decorated call then passes ``ys``, ``xs`` and any variables
``ys`` were computed from through one ``IdentityN`` op, built under a
``gradient_override_map`` that names a gradient registered for this call alone
(``CustomGradient-<n>``), and returns ``IdentityN``'s copies of ``ys``. The gradient
pass reaches that op first: its gradient is ``grad_fn`` of the gradients of ``ys``,
handed to the ``xs`` (and variables) and nothing to the ``ys`` it copied, so the ops
inside ``f`` are never differentiated.

A function that reads variables (other than its arguments) must give ``grad_fn`` a
keyword argument ``variables``; it is then called as ``grad_fn(*dys,
variables=[...])`` and returns ``(input_grads, variable_grads)``, one per variable.
"""

from __future__ import annotations

import functools
import inspect
import itertools
from collections.abc import Callable
from typing import Any

from .._util import nest
from .._util.toposort import reachable
from ..framework.gradient_override import RegisterGradient
from ..framework.graph import Operation, Tensor, convert_to_tensor, get_default_graph
from ..ops.control.group import identity_n
from ..ops.state.variables import GraphKeys
from .gradients import gradients

_CALLS = itertools.count(1)


def custom_gradient(f: Callable) -> Callable:
    """Decorates ``f(*xs) -> (ys, grad_fn)`` so that the gradient of its outputs is
    ``grad_fn(*dys)`` (one gradient per ``x``) instead of the one of the ops ``f``
    built.

    Example::

        @tf.custom_gradient
        def log1pexp(x):
            e = tf.exp(x)
            def grad(dy):
                return dy * (1 - 1 / (1 + e))
            return tf.log(1 + e), grad

    Raises:
        ValueError: the decorated function is called with keyword arguments (graph
            mode takes positional tensors only, as TF1), or ``grad_fn`` returns the
            wrong number of gradients.
        TypeError: ``f`` reads variables and ``grad_fn`` takes no ``variables``.
    """

    @functools.wraps(f)
    def decorated(*args: Any, **kwargs: Any) -> Any:
        if kwargs:
            raise ValueError(
                "The custom_gradient decorator currently supports keywords "
                "arguments only when eager execution is enabled."
            )
        return _graph_mode(f, [convert_to_tensor(x) for x in args])

    return decorated


def _graph_mode(f: Callable, args: list[Tensor]) -> Any:
    result, grad_fn = f(*args)
    flat_result = [convert_to_tensor(y) for y in nest.flatten(result)]
    variables = _variables_read(flat_result, args)
    spec = inspect.getfullargspec(grad_fn)
    takes_variables = "variables" in spec.args or "variables" in spec.kwonlyargs or spec.varkw
    if variables and not takes_variables:
        raise TypeError(
            "@tf.custom_gradient grad_fn must accept keyword argument 'variables', "
            f"since function uses variables: {[v.name for v in variables]}"
        )
    n_results = len(flat_result)

    def internal_grad_fn(op: Operation, *result_grads: Tensor) -> list:
        dys = list(result_grads[:n_results])
        if variables:
            input_grads, variable_grads = grad_fn(*dys, variables=variables)
            if len(variable_grads) != len(variables):
                raise ValueError(
                    "Must return gradient for each variable from @custom_gradient grad_fn."
                )
        else:
            input_grads, variable_grads = grad_fn(*dys), []
        flat_grads = nest.flatten(input_grads)
        if len(flat_grads) != len(args):
            raise ValueError(
                f"custom_gradient function expected to return {len(args)} gradients "
                f"but returned {len(flat_grads)} instead."
            )
        return [None] * n_results + flat_grads + list(variable_grads)

    name = f"CustomGradient-{next(_CALLS)}"
    RegisterGradient(name)(internal_grad_fn)
    with get_default_graph().gradient_override_map({"IdentityN": name}):
        outputs = identity_n(flat_result + args + [convert_to_tensor(v) for v in variables])
    return nest.pack_sequence_as(result, outputs[:n_results])


def _variables_read(outputs: list[Tensor], args: list[Tensor]) -> list:
    """The graph's variables whose handle ``outputs`` depend on other than through
    ``args``, sorted by name (TF1's ``_get_dependent_variables``)."""
    graph = get_default_graph()
    stop = set(args)
    ops = reachable(
        [t.op for t in outputs if t not in stop],
        lambda op: [t.op for t in op.inputs if t not in stop],
    )
    found = {}
    for key in (GraphKeys.GLOBAL_VARIABLES, GraphKeys.LOCAL_VARIABLES):
        for v in graph.get_collection(key):
            handle = getattr(v, "handle", None)
            if handle is not None and handle.op in ops:
                found[v.name] = v
    return [found[k] for k in sorted(found)]


def grad_pass_through(f: Callable) -> Callable:
    """``f`` with the identity as its gradient (``tf.grad_pass_through``): the wrapped
    call returns ``f(*xs)``, and the gradient reaching its outputs passes unchanged to
    its inputs (one output per input), as a straight-through estimator; variables ``f``
    reads get none.

    Example::

        z = tf.grad_pass_through(tf.round)(x)   # round's value, the identity's gradient
    """

    @custom_gradient
    def passed(*args: Any, **kwargs: Any) -> Any:
        def grad(*dys: Any, variables: Any = None) -> Any:
            if variables is not None:
                return list(dys), [None] * len(variables)
            return list(dys)

        return f(*args, **kwargs), grad

    return passed


def recompute_grad(f: Callable) -> Callable:
    """``f`` whose gradient rebuilds its forward ops (``tf.recompute_grad``): the
    values and gradients are ``f``'s, but its activations need not be kept from the
    forward pass to the backward one; the gradient computes ``f`` again once the
    gradients of its outputs are ready (control dependencies on them), and
    differentiates that copy. Variables ``f`` reads get their gradients too.
    """

    @custom_gradient
    def recomputed(*args: Any) -> Any:
        def grad(*dys: Any, variables: Any = None) -> Any:
            graph = get_default_graph()
            with graph.control_dependencies([d for d in dys if isinstance(d, Tensor)]):
                xs = [identity_n([convert_to_tensor(a)])[0] for a in args]
                again = nest.flatten(f(*xs))
            wrt = xs + list(variables or [])
            grads = gradients(again, wrt, grad_ys=list(dys))
            if variables is not None:
                return grads[: len(xs)], grads[len(xs) :]
            return grads

        return f(*args), grad

    return recomputed
