"""Gradient functions chosen by name: ``tf.RegisterGradient`` and
``Graph.gradient_override_map`` (TF1's ``ops.RegisterGradient`` and the graph's
override map).

``RegisterGradient("Name")`` files a gradient function ``fn(op, *output_grads) ->
[input_grad, ...]`` under a name. Inside ``with graph.gradient_override_map({"Square":
"Name"})``, every op of type ``Square`` the graph creates gets the string attr
``_gradient_op_type = "Name"`` (as in TF1, where it also travels in the ``GraphDef``),
and the gradient pass (``autodiff/gradients.py``) differentiates such an op with the
function filed under that name. An op without the attr uses its own type's gradient:
the one its op record holds, or one registered under the type's name (for a type whose
record has none).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

from . import registry

GRADIENT_OP_TYPE_ATTR = "_gradient_op_type"

_GRADIENTS: dict[str, Any] = {}  # a function, or NOT_DIFFERENTIABLE


class RegisterGradient:
    """A decorator filing a gradient function under ``op_type`` (``tf.RegisterGradient``).

    Example::

        @tf.RegisterGradient("ClipGrad")
        def _clip_grad(op, grad):
            return [tf.clip_by_value(grad, -1.0, 1.0)]

        with tf.get_default_graph().gradient_override_map({"Identity": "ClipGrad"}):
            y = tf.identity(x)

    Raises:
        TypeError: ``op_type`` is not a string.
        KeyError: a gradient is already registered under that name (as TF1).
    """

    def __init__(self, op_type: str) -> None:
        if not isinstance(op_type, str):
            raise TypeError("op_type must be a string")
        self._op_type = op_type

    def __call__(self, f: Callable) -> Callable:
        name = self._op_type
        own = _own_gradient(name)
        if name in _GRADIENTS or own is not None:
            raise KeyError(f"Registering two gradient with name '{name}'!")
        _GRADIENTS[name] = f
        return f


def _own_gradient(op_type: str) -> Any:
    """The gradient in ``op_type``'s op record, or None (no such type, or none there)."""
    try:
        return registry.lookup(op_type).grad
    except KeyError:
        return None


def no_gradient(op_type: str) -> None:
    """Files ``op_type`` as not differentiable (``tf.no_gradient``, TF1's
    ``tf.NotDifferentiable``/``tf.NoGradient``): the gradient pass sends nothing through
    ops of that type to their inputs, as for ``Shape`` or ``ArgMax``.

    Example::

        tf.no_gradient("MyLookup")

    Raises:
        TypeError: ``op_type`` is not a string.
        KeyError: a gradient is already registered under that name (as TF1).
    """
    if not isinstance(op_type, str):
        raise TypeError("op_type must be a string")
    if op_type in _GRADIENTS or _own_gradient(op_type) is not None:
        raise KeyError(f"Registering two gradient with name '{op_type}'!")
    _GRADIENTS[op_type] = registry.NOT_DIFFERENTIABLE


# TF1's other two spellings of ``no_gradient``.
NotDifferentiable = no_gradient
NoGradient = no_gradient


def gradient_function(name: str) -> Any:
    """The gradient function filed under ``name``: a ``RegisterGradient`` one, else the
    op record of type ``name`` (which may be ``NOT_DIFFERENTIABLE`` or ``None``).

    Raises:
        LookupError: nothing is registered under ``name`` (TF1's message).
    """
    fn = _GRADIENTS.get(name)
    if fn is not None:
        return fn
    try:
        return registry.lookup(name).grad
    except KeyError:
        raise LookupError(f"gradient registry has no entry for: {name}") from None


class GradientOverrides:
    """``Graph.gradient_override_map`` (mixed into ``Graph``)."""

    # Replaced, never mutated, by ``gradient_override_map``: the class default is shared.
    _gradient_override_map: dict[str, str] = {}
    outer_graph: Any = None

    @contextlib.contextmanager
    def gradient_override_map(self, op_type_map: dict[str, str]) -> Iterator[None]:
        """Within the block, ops of the mapped types use the gradient registered
        (``tf.RegisterGradient``) under the name they map to.

        Raises:
            TypeError: ``op_type_map`` is not a dict of strings to strings.
        """
        if not isinstance(op_type_map, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in op_type_map.items()
        ):
            raise TypeError("op_type_map must be a dictionary mapping strings to strings")
        saved = self._gradient_override_map
        self._gradient_override_map = {**saved, **op_type_map}
        try:
            yield
        finally:
            self._gradient_override_map = saved

    def with_gradient_override(self, op_type: str, attrs: dict) -> dict:
        """``attrs`` of a new op of ``op_type``, with ``_gradient_op_type`` when an
        enclosing ``gradient_override_map`` (of this graph or one it is a body of)
        maps the type."""
        graph: Any = self
        while graph is not None:
            mapped = graph._gradient_override_map.get(op_type)
            if mapped is not None:
                return {**attrs, GRADIENT_OP_TYPE_ATTR: mapped.encode()}
            graph = graph.outer_graph
        return attrs
